package decode

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// Claude Desktop writes one log per MCP server (mcp-server-NAME.log) and an
// aggregated mcp.log. Every entry starts with an ISO-8601 UTC timestamp:
//
//	2025-06-04T11:57:43.785Z [lunar] [info] Message from server: {...}   per-server file
//	2025-06-04T11:57:43.785Z [info] [lunar] Message from server: {...}   mcp.log: level first
//	2024-12-09T16:20:03.514Z [info] Connected to MCP server lunar!       old mcp.log: no server
//
// "Message from client: <json>" is a frame the client wrote to the server's
// stdin, "Message from server: <json>" one it read from its stdout; both are
// the client's view of a stdio server (remote servers reached through
// mcp-remote look the same). An entry may end with metadata in one of three
// styles, all still found in logs people paste: none; a JSON object such as
// {"context":"connection"}; Node's inspect, { metadata: undefined }.
//
// Lines are read as follows:
//
//   - A timestamped line is a new entry. Frames become observations with
//     Stdio c2s or s2c; "Initializing server..." and the other connection
//     messages are skipped as "lifecycle"; any other entry is skipped as
//     "log".
//   - An entry whose first line ends with "{" or "[" (the Node-inspect dump
//     of "Using MCP server command: ... with args and path: {", or an error
//     with multi-line metadata) is open. While it is open, lines without a
//     timestamp that are blank or indented are its continuation (skipped as
//     "continuation"), and a line starting with "}" or "]" is its last line.
//     Node's inspect indents everything between the first and last lines, so
//     any other line without a timestamp ends the entry.
//   - A line without a timestamp outside an open entry is the server's
//     stderr, which Claude Desktop copies into the same file (npx chatter,
//     "Secure MCP Filesystem Server running on stdio", tracebacks, mcp-remote's
//     "[11770] [Remote→Local] 1"). It becomes an observation with Stdio
//     "stderr" at the time of the last timestamped line; blank lines are
//     skipped as "blank".
//
// Each "Initializing server..." starts a new server process whose request ids
// restart at 0, so each start is a conversation of its own: Connection is
// "NAME#n", n counting the starts of that server in the file (0 before the
// first start).
//
// A frame cut by "[N chars truncated]" is one message with Truncated set,
// recovered by ScanTruncated (tolerant.go).

func init() {
	register(FormatClaudeDesktop, 40, sniffClaude, decodeClaudeFile)
}

var claudeLevels = map[string]bool{"trace": true, "debug": true, "info": true, "warn": true, "warning": true, "error": true, "fatal": true, "verbose": true}

// claudeLifecycle lists the beginnings of the connection messages Claude
// Desktop writes around the traffic.
var claudeLifecycle = []string{
	"Initializing server",
	"Using MCP server command",
	"Using built-in Node.js",
	"Server started and connected successfully",
	"Client transport closed",
	"Server transport closed",
	"Shutting down server",
	"Server disconnected",
	"Connected to MCP server",
}

const (
	claudeFromClient = "Message from client:"
	claudeFromServer = "Message from server:"
)

// claudeTimestamp reads the ISO-8601 timestamp that starts an entry and
// returns it with the index after the space that follows it.
func claudeTimestamp(line []byte) (time.Time, int, bool) {
	if len(line) < 21 || line[4] != '-' || line[7] != '-' || line[10] != 'T' {
		return time.Time{}, 0, false
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 20 || sp > 40 {
		return time.Time{}, 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(line[:sp]))
	if err != nil {
		return time.Time{}, 0, false
	}
	return t.UTC(), sp + 1, true
}

// readBracket reads "[content]" at b[i].
func readBracket(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return "", i, false
	}
	j := bytes.IndexByte(b[i:], ']')
	if j < 0 {
		return "", i, false
	}
	return string(b[i+1 : i+j]), i + j + 1, true
}

type claudeEntry struct {
	level, server string
	msg           []byte
}

// parseClaudeEntry reads the brackets after the timestamp: "[server]
// [level]" in a per-server file, "[level] [server]" or "[level]" in mcp.log.
func parseClaudeEntry(rest []byte) (claudeEntry, bool) {
	var ce claudeEntry
	b1, i, ok := readBracket(rest, 0)
	if !ok {
		return ce, false
	}
	var b2 string
	j := i
	ok2 := false
	if i+1 < len(rest) && rest[i] == ' ' && rest[i+1] == '[' {
		b2, j, ok2 = readBracket(rest, i+1)
	}
	switch {
	case claudeLevels[strings.ToLower(b1)]:
		ce.level = b1
		if ok2 {
			ce.server = b2
			i = j
		}
	case ok2 && claudeLevels[strings.ToLower(b2)]:
		ce.server, ce.level = b1, b2
		i = j
	default:
		return ce, false
	}
	if i < len(rest) && rest[i] == ' ' {
		i++
	}
	ce.msg = rest[i:]
	return ce, true
}

func isClaudeLifecycle(msg []byte) bool {
	for _, p := range claudeLifecycle {
		if bytes.HasPrefix(msg, []byte(p)) {
			return true
		}
	}
	return false
}

func sniffClaude(head []byte) bool {
	found := false
	headLines(head, func(line []byte) bool {
		_, k, ok := claudeTimestamp(line)
		if !ok {
			return true
		}
		// A frame, a lifecycle message, or the error Claude Desktop writes
		// when a server pollutes stdout, anywhere in the first 64 KiB: a log
		// may open with a long run of stderr.
		ce, ok := parseClaudeEntry(bytes.TrimRight(line[k:], "\r"))
		if ok && (bytes.HasPrefix(ce.msg, []byte(claudeFromClient)) || bytes.HasPrefix(ce.msg, []byte(claudeFromServer)) ||
			isClaudeLifecycle(ce.msg) || bytes.Contains(ce.msg, []byte("is not valid JSON"))) {
			found = true
		}
		return !found
	})
	return found
}

// opensEntry reports whether an entry's first line leaves a Node-inspect
// object open: its last non-blank byte is "{" or "[".
func opensEntry(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	return len(t) > 0 && (t[len(t)-1] == '{' || t[len(t)-1] == '[')
}

type claudeDecoder struct {
	source     string
	e          Emitter
	starts     map[string]int
	lastTS     time.Time
	lastServer string
	open       bool
	vt         versionTracker
}

func decodeClaudeFile(source string, r io.Reader, e Emitter) error {
	return decodeClaude(source, r, e, MaxLine(e))
}

func decodeClaude(source string, r io.Reader, e Emitter, maxLine int) error {
	d := &claudeDecoder{source: source, e: e, starts: map[string]int{}, vt: newVersionTracker()}
	opt := LineOptionsFor(e)
	opt.MaxLine = maxLine
	return eachLine(source, r, opt, func(pos schema.Position, l *Line) {
		if l.TooLong {
			if _, _, ok := claudeTimestamp(l.Head); ok {
				d.open = false
			}
			e.Quarantine(pos, l.Reason(), l.Detail, l.Head)
			return
		}
		d.line(pos, l.Text)
	})
}

func (d *claudeDecoder) conn(server string) string {
	if server == "" {
		return ""
	}
	return server + "#" + strconv.Itoa(d.starts[server])
}

func (d *claudeDecoder) line(pos schema.Position, line []byte) {
	ts, k, stamped := claudeTimestamp(line)
	if !stamped {
		d.unstamped(pos, line)
		return
	}
	d.lastTS = ts
	d.open = opensEntry(line)
	ce, ok := parseClaudeEntry(line[k:])
	if !ok {
		d.e.Quarantine(pos, ReasonBadValue, "a timestamped line without the [server] [level] (or [level] [server]) brackets of a Claude Desktop log entry", line)
		return
	}
	if ce.server != "" {
		d.lastServer = ce.server
	}
	switch {
	case bytes.HasPrefix(ce.msg, []byte(claudeFromClient)):
		d.frame(pos, ts, ce.server, schema.DirClientToServer, ce.msg[len(claudeFromClient):], line)
	case bytes.HasPrefix(ce.msg, []byte(claudeFromServer)):
		d.frame(pos, ts, ce.server, schema.DirServerToClient, ce.msg[len(claudeFromServer):], line)
	case isClaudeLifecycle(ce.msg):
		if bytes.HasPrefix(ce.msg, []byte("Initializing server")) {
			d.starts[ce.server]++
		}
		d.e.Skip(pos, "lifecycle")
	default:
		d.e.Skip(pos, "log")
	}
}

func (d *claudeDecoder) unstamped(pos schema.Position, line []byte) {
	if d.open {
		switch {
		case IsBlank(line) || line[0] == ' ' || line[0] == '\t':
			d.e.Skip(pos, "continuation")
			return
		case line[0] == '}' || line[0] == ']':
			d.open = false
			d.e.Skip(pos, "continuation")
			return
		}
		d.open = false // not Node-inspect output: the entry ended before
	}
	if IsBlank(line) {
		d.e.Skip(pos, "blank")
		return
	}
	d.e.Observation(&schema.Observation{Pos: pos, Side: schema.SideClient, Transport: schema.TransportStdio, Time: d.lastTS,
		ServerName: d.lastServer, Connection: d.conn(d.lastServer), Format: string(FormatClaudeDesktop), Stdio: schema.DirStderr,
		ProtocolVersion: d.vt.version(d.conn(d.lastServer))})
}

func (d *claudeDecoder) frame(pos schema.Position, ts time.Time, server, dir string, payload, line []byte) {
	body, truncated := claudeFrame(bytes.TrimSpace(payload))
	if len(body) == 0 {
		d.e.Quarantine(pos, ReasonMissingField, "a \"Message from …:\" entry without a JSON-RPC message", line)
		return
	}
	conn := d.conn(server)
	o := &schema.Observation{Pos: pos, Side: schema.SideClient, Transport: schema.TransportStdio, Time: ts,
		ServerName: server, Connection: conn, Format: string(FormatClaudeDesktop), Stdio: dir}
	switch {
	case truncated && !validJSON(body):
		o.Messages = []schema.Message{TruncatedMessage(body, schema.InStdio, 0)}
	case truncated:
		// The cut began and ended inside strings, so the text is still JSON,
		// but whatever lay between is gone: read it exactly, mark it cut.
		o.Messages = AppendMessages(nil, body, schema.InStdio, 0)
		for i := range o.Messages {
			o.Messages[i].Truncated = true
		}
	default:
		o.Messages = AppendMessages(nil, body, schema.InStdio, 0)
	}
	stampAt(o.Messages, ts) // the line's time: when the frame passed
	d.vt.observe(conn, dir, o)
	d.e.Observation(o)
}

// claudeFrame separates the JSON-RPC message of a frame entry from the
// metadata that may follow it, and says whether the log cut the message
// (it holds "[N chars truncated]"). A message that is JSON ends where its
// braces balance (strings skipped); what follows must be nothing or
// metadata. A cut message is usually not JSON: its metadata is recognised at
// the end of the line instead. When the cut began and ended inside strings
// the text is still JSON, but it is cut all the same (text that merely
// quotes the marker is taken as cut too: the safe side).
func claudeFrame(p []byte) (body []byte, truncated bool) {
	if len(p) == 0 {
		return nil, false
	}
	if p[0] == '{' || p[0] == '[' {
		if end, whole := skipValue(p, 0); whole {
			frame, rest := p[:end], bytes.TrimSpace(p[end:])
			if (len(rest) == 0 || rest[0] == '{') && validJSON(frame) {
				return frame, HasTruncationMarker(frame)
			}
		}
	}
	body = stripMetadata(p)
	return body, HasTruncationMarker(body)
}

// stripMetadata removes a trailing metadata suffix from a frame that is not
// valid JSON: Node-inspect "{ metadata: ... }", or a JSON object that is not
// a JSON-RPC message (such as {"context":"connection"}).
func stripMetadata(p []byte) []byte {
	if i := bytes.LastIndex(p, []byte(" { metadata:")); i >= 0 && inspectObjectToEnd(p[i+1:]) {
		return bytes.TrimSpace(p[:i])
	}
	j := len(p)
	for tries := 0; tries < 8 && len(p)-j < 8<<10; tries++ {
		i := bytes.LastIndex(p[:j], []byte(" {"))
		if i < 0 {
			break
		}
		rest := p[i+1:]
		if validJSON(rest) {
			r := gjson.ParseBytes(rest)
			if r.IsObject() && !r.Get("jsonrpc").Exists() && !r.Get("method").Exists() && !r.Get("id").Exists() {
				return bytes.TrimSpace(p[:i])
			}
		}
		j = i
	}
	return p
}

// inspectObjectToEnd reports whether b is one Node-inspect object that ends
// exactly at the end of b (strings in single or double quotes skipped).
func inspectObjectToEnd(b []byte) bool {
	b = bytes.TrimRight(b, " \t")
	depth := 0
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i == len(b)-1
			}
		}
	}
	return false
}

// versionTracker remembers, per connection, the protocol version the server
// chose in its initialize result, so later frames carry it.
type versionTracker struct {
	initID map[string]schema.ID
	ver    map[string]string
}

func newVersionTracker() versionTracker {
	return versionTracker{initID: map[string]schema.ID{}, ver: map[string]string{}}
}

func (v *versionTracker) version(conn string) string { return v.ver[conn] }

// observe notes an initialize request (client to server) or its result
// (server to client) and sets o.ProtocolVersion once the version is known.
func (v *versionTracker) observe(conn, dir string, o *schema.Observation) {
	for i := range o.Messages {
		m := &o.Messages[i]
		switch {
		case dir == schema.DirClientToServer && m.Kind == schema.MsgRequest && m.Method == "initialize":
			v.initID[conn] = m.ID
			delete(v.ver, conn)
		case dir == schema.DirServerToClient && m.Kind == schema.MsgResponse && !m.Truncated:
			if id, ok := v.initID[conn]; ok && id == m.ID {
				if pv := jsonobj.Path(gjson.ParseBytes(m.Raw), "result", "protocolVersion"); pv.Type == gjson.String {
					v.ver[conn] = pv.Str
				}
				delete(v.initID, conn)
			}
		}
	}
	o.ProtocolVersion = v.ver[conn]
}
