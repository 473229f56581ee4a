package decode

import (
	"bytes"
	"io"
	"sort"

	"mcptrace/schema"
)

// Format names a log format that ingest reads.
type Format string

// The formats. Each is decoded by one file in this package, which registers
// itself with register in an init function.
const (
	FormatWire             Format = "wire"              // mcptrace wire log v1 (NDJSON)
	FormatHAR              Format = "har"               // HAR 1.2 (mitmproxy, Chrome DevTools, Playwright)
	FormatClaudeDesktop    Format = "claude-desktop"    // Claude Desktop mcp-server-NAME.log / mcp.log
	FormatVSCode           Format = "vscode"            // VS Code "MCP: NAME" output channel
	FormatInspectorHistory Format = "inspector-history" // MCP Inspector v2 history export
	FormatInspectorNetwork Format = "inspector-network" // MCP Inspector v2 network export
	FormatOTLPTraces       Format = "otlp-traces"       // OTLP JSON traces (ExportTraceServiceRequest), one document or NDJSON
	FormatOTLPLogs         Format = "otlp-logs"         // OTLP JSON logs (ExportLogsServiceRequest), one document or NDJSON
	FormatStdioJSONL       Format = "stdio-jsonl"       // newline-delimited JSON-RPC with a direction per line (mcpsnoop and similar)
)

// Emitter receives what a decoder makes of its input, in log order. Every
// record a decoder reads (a line, a HAR entry, a span) must reach exactly one
// of its methods: that is how a run proves every input record is accounted
// for.
type Emitter interface {
	// Observation hands over one observation; the emitter owns it.
	Observation(o *schema.Observation)
	// Quarantine reports a record that could not be used: where, a reason
	// code (the Reason constants), what exactly, and the raw bytes (the
	// emitter masks and clips them; they are never written as given).
	Quarantine(pos schema.Position, reason, detail string, raw []byte)
	// Skip reports a record deliberately not used, with a short stable
	// reason such as "lifecycle" or "continuation".
	Skip(pos schema.Position, why string)
}

// FileDecoder decodes one whole input (already decompressed). Malformed
// content is quarantined record by record and decoding goes on. It returns
// nil at the end of the input, or:
//   - the reader's error when reading fails (a corrupt compressed stream,
//     say): what was decoded before stands, the caller quarantines the
//     failure where it happened;
//   - an error wrapping ErrLimit when a document or an endless line ran past
//     the document limit: already quarantined, the rest not read (the
//     caller must not drain the input);
//   - ErrStopped when the Emitter (a Stopper) reported a stop.
//
// An Emitter may also implement LineLimiter, DocumentLimiter and Stopper.
type FileDecoder func(source string, r io.Reader, e Emitter) error

type formatInfo struct {
	format   Format
	priority int // lower is tried first
	sniff    func(head []byte) bool
	decode   FileDecoder
}

var formats = map[Format]*formatInfo{}

// register adds a format. sniff sees the first bytes of the decompressed
// input (up to SniffBytes) and must not assume they end on a line boundary.
func register(f Format, priority int, sniff func(head []byte) bool, dec FileDecoder) {
	formats[f] = &formatInfo{format: f, priority: priority, sniff: sniff, decode: dec}
}

// SniffBytes is how much of an input Detect looks at.
const SniffBytes = 64 << 10

// Detect names the format of an input from its first bytes.
func Detect(head []byte) (Format, bool) {
	for _, fi := range sortedFormats() {
		if fi.sniff != nil && fi.sniff(head) {
			return fi.format, true
		}
	}
	return "", false
}

// DecoderFor returns the decoder of a format.
func DecoderFor(f Format) (FileDecoder, bool) {
	fi, ok := formats[f]
	if !ok {
		return nil, false
	}
	return fi.decode, true
}

// Formats lists the registered formats in detection order.
func Formats() []Format {
	var out []Format
	for _, fi := range sortedFormats() {
		out = append(out, fi.format)
	}
	return out
}

func sortedFormats() []*formatInfo {
	list := make([]*formatInfo, 0, len(formats))
	for _, fi := range formats {
		list = append(list, fi)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].priority != list[j].priority {
			return list[i].priority < list[j].priority
		}
		return list[i].format < list[j].format
	})
	return list
}

// trimBOM drops a UTF-8 byte order mark at the start of b.
func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// FirstLine returns the first non-blank line of head (possibly cut short at
// the end of head).
func FirstLine(head []byte) []byte {
	var first []byte
	headLines(head, func(line []byte) bool {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			first = line
			return false
		}
		return true
	})
	return first
}

// headLines calls fn with each line of a sniff head (a byte order mark
// dropped, the last line possibly cut short) until fn returns false.
func headLines(head []byte, fn func(line []byte) bool) {
	head = trimBOM(head)
	for len(head) > 0 {
		var line []byte
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			line, head = head, nil
		}
		if !fn(line) {
			return
		}
	}
}

func init() {
	register(FormatWire, 10, func(head []byte) bool {
		l := FirstLine(head)
		return len(l) > 0 && l[0] == '{' && bytes.Contains(l, []byte(`"mcptrace"`))
	}, decodeWireFile)
}

// decodeWireFile reads a wire log line by line. The pipeline normally splits
// wire logs into chunks decoded in parallel; this is the same decoding for a
// caller that has one reader.
func decodeWireFile(source string, r io.Reader, e Emitter) error {
	d := wirePool.Get().(*WireDecoder)
	defer wirePool.Put(d)
	lim := LimitsOf(e)
	return eachRecordLine(source, r, e, func(pos schema.Position, line []byte) {
		d.Limits = lim
		o, err := d.Line(line, pos)
		d.Limits = Limits{}
		if err != nil {
			le, _ := err.(*LineError)
			e.Quarantine(pos, le.Reason, le.Detail, line)
			return
		}
		e.Observation(o)
	})
}
