package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// OTLP JSON (log-formats.md §6, mcp-protocol.md §6): ExportTraceServiceRequest
// {"resourceSpans":[…]} and ExportLogsServiceRequest {"resourceLogs":[…]},
// either one document (possibly pretty-printed) or NDJSON with one request
// per line, as the Collector's file exporter and a Kafka otlp_json topic
// dump write them. One decoder reads both kinds, line by line or as a
// document; each record says which kind it came from in Format.
//
// Records. The record is the span or the log record, not the line: each one
// reaches the emitter once, and its Pos.Line is its 1-based ordinal in the
// file (spans and log records counted together, in order, across lines), so
// that two spans of one batch never share a position. What is wrong with a
// whole line (not JSON, not an export request) is one quarantine at that
// line's number; a line whose request holds no record is skipped
// ("empty_batch").
//
// A span or log record with mcp.method.name (or the older mcp.method) is an
// exchange the instrumentation already correlated: one Paired observation
// with Reported filled from the attributes, and a synthetic request message
// (method, id, and the tool or prompt name as params.name) so the correlator
// can open the exchange. Bodies are not in spans: no response message is
// made, so nothing here can show MALFORMED_JSON, INVALID_ENVELOPE or
// INVALID_TOOL_RESULT. Records without an MCP method are skipped
// ("not_mcp").
//
// jsonrpc.request.id is a string attribute whatever the id's JSON type: an
// id of only digits (no leading zero) is read as a number, anything else as
// a string. A request without an id attribute (the conventions omit it when
// the id is null) gets a null id; a method under notifications/ without one
// is a notification.

func init() {
	register(FormatOTLPTraces, 20, func(head []byte) bool { return otlpSniff(head, `"resourceSpans"`) }, decodeOTLP)
	register(FormatOTLPLogs, 20, func(head []byte) bool { return otlpSniff(head, `"resourceLogs"`) }, decodeOTLP)
}

// otlpSniff: the input starts (after white space) with an object whose first
// key is the given one.
func otlpSniff(head []byte, key string) bool {
	head = trimBOM(head)
	i := skipWS(head, 0)
	if i >= len(head) || head[i] != '{' {
		return false
	}
	i = skipWS(head, i+1)
	return bytes.HasPrefix(head[i:], []byte(key))
}

type otlpDecoder struct {
	source  string
	e       Emitter
	n       int64 // records so far
	stop    func() bool
	stopped bool // stop reported inside a request
}

func decodeOTLP(source string, r io.Reader, e Emitter) error {
	opt := LineOptionsFor(e)
	d := &otlpDecoder{source: source, e: e, stop: opt.Stop}
	lr := newLineReader(r, opt)
	const (
		undecided = iota
		ndjson
		document
	)
	mode := undecided
	var blanks []int64 // blank lines before the first request
	var doc []byte     // document mode: the whole input
	docCut := false
	var docBytes int64 // the document's size so far, cut lines included
	for {
		if d.stopped || d.stop() {
			return ErrStopped
		}
		line, tooLong, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		no := lr.LineNo()
		pos := schema.Position{Source: source, Line: no}
		if no == 1 {
			line = trimBOM(line)
		}
		switch mode {
		case document:
			// The document's size counts every line, kept or cut: a line
			// over the line limit stops the document growing in memory but
			// not the count, so an endless document ends at the limit.
			if docBytes == 0 {
				docBytes = int64(len(doc)) // what was taken in before the mode was known
			}
			docBytes += int64(len(line)) + 1
			if tooLong {
				docBytes += lr.TooLongSize()
			}
			if lr.Abandoned() || docBytes > opt.MaxDocument {
				// The document is never held past the limit.
				raw := doc
				if len(raw) == 0 {
					raw = lr.Head()
				}
				e.Quarantine(schema.Position{Source: source, Line: 1}, ReasonDocumentTooLarge, documentTooLarge("the OTLP JSON document", opt.MaxDocument), clip(raw))
				return fmt.Errorf("%w: the OTLP JSON document is larger than %d bytes", ErrLimit, opt.MaxDocument)
			}
			if tooLong {
				docCut = true
			} else if !docCut {
				doc = append(append(doc, line...), '\n')
			}
			continue
		case undecided:
			switch {
			case tooLong:
				mode = ndjson
			case IsBlank(line):
				blanks = append(blanks, no)
				continue
			case !validJSON(line):
				// Not a request on its own line: pretty-printed JSON, one
				// document or several (collector output through jq). Leading
				// blank lines belong to it.
				mode, blanks = document, nil
				doc = append(append(doc, line...), '\n')
				continue
			default:
				mode = ndjson
			}
			d.flushBlanks(blanks)
		}
		switch {
		case tooLong && lr.Abandoned():
			e.Quarantine(pos, ReasonDocumentTooLarge, lr.TooLongDetail(), lr.Head())
		case tooLong:
			e.Quarantine(pos, ReasonLineTooLong, lr.TooLongDetail(), lr.Head())
		case IsBlank(line):
			e.Skip(pos, "blank")
		default:
			d.request(line, no, fmt.Sprintf("NDJSON line %d", no))
		}
	}
	switch mode {
	case undecided:
		d.flushBlanks(blanks)
	case document:
		pos := schema.Position{Source: source, Line: 1}
		if docCut {
			e.Quarantine(pos, ReasonLineTooLong, fmt.Sprintf("the OTLP JSON document has a line longer than the %d-byte limit (raise -max-line)", MaxLine(e)), clip(doc))
			return nil
		}
		// One document, or several written one after another.
		rest := bytes.TrimSpace(doc)
		for k := 1; len(rest) > 0; k++ {
			end, whole := skipValue(rest, 0)
			if !whole || end <= 0 {
				end = len(rest) // a cut-off last document: quarantined whole
			}
			what := "the OTLP JSON document"
			if k > 1 || end < len(rest) {
				what = fmt.Sprintf("OTLP JSON document %d", k)
			}
			d.request(rest[:end], 1, what)
			if d.stopped || d.stop() {
				return ErrStopped
			}
			rest = bytes.TrimSpace(rest[end:])
		}
	}
	if d.stopped {
		return ErrStopped
	}
	return nil
}

func (d *otlpDecoder) flushBlanks(blanks []int64) {
	for _, no := range blanks {
		d.e.Skip(schema.Position{Source: d.source, Line: no}, "blank")
	}
}

// request decodes one Export*ServiceRequest (a line or the document).
func (d *otlpDecoder) request(raw []byte, lineNo int64, what string) {
	pos := schema.Position{Source: d.source, Line: lineNo}
	switch {
	case !utf8.Valid(raw):
		d.e.Quarantine(pos, ReasonInvalidUTF8, what+" is not valid UTF-8", raw)
		return
	case depthExceeds(raw, MaxDepth()):
		d.e.Quarantine(pos, ReasonTooDeep, depthDetail(what), raw)
		return
	case !validJSON(raw):
		d.e.Quarantine(pos, ReasonNotJSON, what+" is not valid JSON (truncated or corrupt)", raw)
		return
	}
	v := gjson.ParseBytes(raw)
	if !v.IsObject() {
		d.e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("%s is a JSON %s, not an OTLP export request", what, jscanKind(v)), raw)
		return
	}
	spans, logs := v.Get("resourceSpans"), v.Get("resourceLogs")
	if !spans.IsArray() && !logs.IsArray() {
		d.e.Quarantine(pos, ReasonMissingField, what+` has no "resourceSpans" or "resourceLogs" array`, raw)
		return
	}
	before := d.n
	spans.ForEach(func(_, rs gjson.Result) bool {
		res := otlpAttrs(rs.Get("resource.attributes"))
		otlpEachScope(rs, "scopeSpans", "instrumentationLibrarySpans", "spans", func(s gjson.Result) bool {
			if d.halt() {
				return false
			}
			d.n++
			d.span(res, s)
			return true
		})
		return !d.stopped
	})
	logs.ForEach(func(_, rl gjson.Result) bool {
		res := otlpAttrs(rl.Get("resource.attributes"))
		otlpEachScope(rl, "scopeLogs", "instrumentationLibraryLogs", "logRecords", func(s gjson.Result) bool {
			if d.halt() {
				return false
			}
			d.n++
			d.logRecord(res, s)
			return true
		})
		return !d.stopped
	})
	if d.n == before && !d.stopped {
		d.e.Skip(pos, "empty_batch")
	}
}

// halt checks the stop before a record; once it reports, every loop of the
// request ends.
func (d *otlpDecoder) halt() bool {
	if !d.stopped && d.stop() {
		d.stopped = true
	}
	return d.stopped
}

// otlpEachScope calls fn with each item of each scope until fn returns false.
func otlpEachScope(res gjson.Result, scopes, oldScopes, items string, fn func(gjson.Result) bool) {
	more := true
	for _, name := range []string{scopes, oldScopes} {
		res.Get(name).ForEach(func(_, sc gjson.Result) bool {
			sc.Get(items).ForEach(func(_, it gjson.Result) bool {
				more = fn(it)
				return more
			})
			return more
		})
		if !more {
			return
		}
	}
}

// otlpAttrMap holds one attribute list by key.
type otlpAttrMap map[string]gjson.Result

func otlpAttrs(list gjson.Result) otlpAttrMap {
	m := otlpAttrMap{}
	list.ForEach(func(_, kv gjson.Result) bool {
		if k := kv.Get("key"); k.Type == gjson.String {
			m[k.Str] = kv.Get("value")
		}
		return true
	})
	return m
}

// str returns the first of the keys that is set, as text: stringValue as is,
// intValue and doubleValue as written (64-bit integers come as strings),
// boolValue as true/false.
func (m otlpAttrMap) str(keys ...string) string {
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			continue
		}
		for _, f := range []string{"stringValue", "intValue", "doubleValue", "boolValue"} {
			x := v.Get(f)
			switch x.Type {
			case gjson.String:
				return x.Str
			case gjson.Number:
				return x.Raw
			case gjson.True, gjson.False:
				return x.Raw
			}
		}
	}
	return ""
}

// otlpLookup reads record attributes first, then the resource's.
type otlpLookup struct{ rec, res otlpAttrMap }

func (l otlpLookup) str(keys ...string) string {
	if s := l.rec.str(keys...); s != "" {
		return s
	}
	return l.res.str(keys...)
}

// otlpNanos reads a 64-bit nanosecond timestamp (a string, or a number).
func otlpNanos(v gjson.Result) time.Time {
	var n uint64
	switch v.Type {
	case gjson.String:
		n, _ = strconv.ParseUint(strings.TrimSpace(v.Str), 10, 64)
	case gjson.Number:
		var err error
		if n, err = strconv.ParseUint(v.Raw, 10, 64); err != nil && v.Float() > 0 {
			n = uint64(v.Float())
		}
	}
	if n == 0 || n > 1<<63-1 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// otlpEnum reads an enum written as a number or as its name
// ("SPAN_KIND_CLIENT", "STATUS_CODE_ERROR", "SEVERITY_NUMBER_ERROR").
func otlpEnum(v gjson.Result, names map[string]int64) int64 {
	switch v.Type {
	case gjson.Number:
		return v.Int()
	case gjson.String:
		if n, err := strconv.ParseInt(v.Str, 10, 64); err == nil {
			return n
		}
		return names[strings.ToUpper(v.Str)]
	}
	return 0
}

var (
	otlpKinds    = map[string]int64{"SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
	otlpStatuses = map[string]int64{"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
	otlpSeverity = map[string]int64{"SEVERITY_NUMBER_ERROR": 17, "SEVERITY_NUMBER_ERROR2": 18, "SEVERITY_NUMBER_ERROR3": 19, "SEVERITY_NUMBER_ERROR4": 20,
		"SEVERITY_NUMBER_FATAL": 21, "SEVERITY_NUMBER_FATAL2": 22, "SEVERITY_NUMBER_FATAL3": 23, "SEVERITY_NUMBER_FATAL4": 24,
		"SEVERITY_NUMBER_WARN": 13, "SEVERITY_NUMBER_INFO": 9, "SEVERITY_NUMBER_DEBUG": 5}
)

// otlpCommon fills what spans and log records share, or says the record is
// not MCP (method "").
func (d *otlpDecoder) otlpCommon(pos schema.Position, a otlpLookup, format Format) *schema.Observation {
	method := a.str("mcp.method.name", "mcp.method")
	if method == "" {
		return nil
	}
	o := &schema.Observation{Pos: pos, Format: string(format), Side: schema.SideClient, Paired: true}
	o.SessionID = a.str("mcp.session.id")
	o.ProtocolVersion = a.str("mcp.protocol.version")
	o.Transport = schema.TransportStreamableHTTP
	switch strings.ToLower(a.str("network.transport", "mcp.transport")) {
	case "pipe", "stdio":
		o.Transport = schema.TransportStdio
	case "sse":
		o.Transport = schema.TransportHTTPSSE
	}
	rep := &schema.Reported{
		Method:     method,
		ToolName:   a.str("gen_ai.tool.name", "mcp.tool.name"),
		ErrorType:  a.str("error.type", "mcp.error.type"),
		StatusCode: a.str("rpc.response.status_code", "rpc.jsonrpc.error_code"),
	}
	if hs, err := strconv.Atoi(a.str("http.response.status_code", "http.status_code")); err == nil && hs >= 100 && hs <= 999 {
		rep.HTTPStatus = hs
	}
	idText := a.str("jsonrpc.request.id", "mcp.request.id", "rpc.jsonrpc.request_id")
	switch {
	case idText != "" && otlpIsJSONInt(idText):
		rep.ID = schema.ID{Type: schema.IDNumber, Text: idText}
	case idText != "":
		rep.ID = schema.ID{Type: schema.IDString, Text: idText}
	case strings.HasPrefix(method, "notifications/"):
		rep.ID = schema.ID{Type: schema.IDAbsent}
	default:
		rep.ID = schema.ID{Type: schema.IDNull}
	}
	o.Reported = rep
	prompt := a.str("gen_ai.prompt.name", "mcp.prompt.name")
	o.Messages = AppendMessages(o.Messages, otlpSyntheticRequest(method, rep.ID, rep.ToolName, prompt, a.str("mcp.resource.uri")), schema.InRecord, 0)
	return o
}

// otlpIsJSONInt: digits only, optionally negative, no leading zero: text
// that is a valid JSON integer as it stands.
func otlpIsJSONInt(s string) bool {
	t := strings.TrimPrefix(s, "-")
	if t == "" || len(t) > 18 || (len(t) > 1 && t[0] == '0') {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// otlpSyntheticRequest builds the request message a span stands for:
// {"jsonrpc":"2.0","id":<id>,"method":"<method>","params":{"name":"<tool>"}}.
func otlpSyntheticRequest(method string, id schema.ID, tool, prompt, uri string) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0",`)
	switch id.Type {
	case schema.IDNumber:
		b.WriteString(`"id":` + id.Text + `,`)
	case schema.IDString:
		b.WriteString(`"id":` + q(id.Text) + `,`)
	case schema.IDNull:
		b.WriteString(`"id":null,`)
	}
	b.WriteString(`"method":` + q(method))
	name := tool
	if name == "" {
		name = prompt
	}
	switch {
	case name != "":
		b.WriteString(`,"params":{"name":` + q(name) + `}`)
	case uri != "":
		b.WriteString(`,"params":{"uri":` + q(uri) + `}`)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

func (d *otlpDecoder) span(res otlpAttrMap, s gjson.Result) {
	pos := schema.Position{Source: d.source, Line: d.n}
	if !s.IsObject() {
		d.e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("span %d is a JSON %s, not an object", d.n, jscanKind(s)), []byte(s.Raw))
		return
	}
	a := otlpLookup{rec: otlpAttrs(s.Get("attributes")), res: res}
	o := d.otlpCommon(pos, a, FormatOTLPTraces)
	if o == nil {
		d.e.Skip(pos, "not_mcp")
		return
	}
	o.Time, o.EndTime = otlpNanos(s.Get("startTimeUnixNano")), otlpNanos(s.Get("endTimeUnixNano"))
	name, version := a.res.str("service.name"), a.res.str("service.version")
	switch otlpEnum(s.Get("kind"), otlpKinds) {
	case 2: // SERVER
		o.Side = schema.SideServer
		o.ServerName, o.ServerVersion = name, version
	default: // CLIENT, or unspecified
		o.Side = schema.SideClient
		o.ClientName, o.ClientVersion = name, version
	}
	rep := o.Reported
	code := otlpEnum(s.Get("status.code"), otlpStatuses)
	rep.Message = s.Get("status.message").String()
	stated := rep.ErrorType != "" || rep.StatusCode != "" || rep.HTTPStatus >= 400
	rep.Failed = code == 2
	rep.OK = !stated && !rep.Failed && (code == 1 || (code == 0 && !o.EndTime.IsZero()))
	d.e.Observation(o)
}

func (d *otlpDecoder) logRecord(res otlpAttrMap, s gjson.Result) {
	pos := schema.Position{Source: d.source, Line: d.n}
	if !s.IsObject() {
		d.e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("log record %d is a JSON %s, not an object", d.n, jscanKind(s)), []byte(s.Raw))
		return
	}
	recAttrs := otlpAttrs(s.Get("attributes"))
	a := otlpLookup{rec: recAttrs, res: res}
	o := d.otlpCommon(pos, a, FormatOTLPLogs)
	if o == nil {
		d.e.Skip(pos, "not_mcp")
		return
	}
	if o.Time = otlpNanos(s.Get("timeUnixNano")); o.Time.IsZero() {
		o.Time = otlpNanos(s.Get("observedTimeUnixNano"))
	}
	// A log record has no kind: it is read as the client's view, named by
	// its resource's service.name.
	o.ClientName, o.ClientVersion = a.res.str("service.name"), a.res.str("service.version")
	rep := o.Reported
	sev := otlpEnum(s.Get("severityNumber"), otlpSeverity)
	if sev == 0 {
		switch strings.ToUpper(s.Get("severityText").String()) {
		case "ERROR", "FATAL", "CRITICAL":
			sev = 17
		}
	}
	stated := rep.ErrorType != "" || rep.StatusCode != "" || rep.HTTPStatus >= 400
	rep.Failed = sev >= 17 && !stated
	if stated || rep.Failed {
		if b := s.Get("body.stringValue"); b.Type == gjson.String {
			rep.Message = b.Str
		}
	}
	// A log record is one instant: it states a finished exchange only when
	// it carries something known at the end (an HTTP status or a duration).
	completed := rep.HTTPStatus > 0
	for k := range recAttrs {
		if strings.Contains(k, "duration") {
			completed = true
		}
	}
	rep.OK = !stated && !rep.Failed && completed
	d.e.Observation(o)
}
