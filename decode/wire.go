package decode

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// Quarantine reason codes. They are stable: users filter on them.
const (
	ReasonInvalidUTF8   = "invalid_utf8"
	ReasonTooDeep       = "nesting_too_deep"
	ReasonNotJSON       = "not_json"
	ReasonNotObject     = "not_an_object"
	ReasonNotWireRecord = "not_a_wire_record"
	ReasonUnsupported   = "unsupported_version"
	ReasonMissingField  = "missing_field"
	ReasonBadValue      = "bad_value"
	ReasonLineTooLong   = "line_too_long"
	ReasonReadError     = "read_error"
	// ReasonDocumentTooLarge: a document (or a line without a newline) ran
	// past the document limit (ingest -max-document); the rest of the input
	// was not read.
	ReasonDocumentTooLarge = "document_too_large"
)

// LineError says why a line could not be decoded.
type LineError struct {
	Reason string // one of the Reason constants
	Detail string // what exactly, for a person
}

func (e *LineError) Error() string { return e.Reason + ": " + e.Detail }

func lineErr(reason, format string, args ...any) *LineError {
	return &LineError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// IsBlank reports whether a line holds only white space; blank lines are
// skipped (and counted) rather than quarantined.
func IsBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// WireLine decodes one line of the mcptrace wire log, in one pass (a
// WireDecoder from a pool).
func WireLine(line []byte, pos schema.Position) (schema.Observation, error) {
	d := wirePool.Get().(*WireDecoder)
	o, err := d.Line(line, pos)
	wirePool.Put(d)
	if err != nil {
		return schema.Observation{}, err
	}
	return *o, nil
}

// wireLineGJSON decodes a line member by member with gjson: the general
// way, which the one pass (WireDecoder) leaves every line to that it does
// not settle itself, and which says why a line is quarantined.
func wireLineGJSON(line []byte, pos schema.Position, lim Limits) (schema.Observation, error) {
	var obs schema.Observation
	if !utf8.Valid(line) {
		off := 0
		for off < len(line) {
			r, n := utf8.DecodeRune(line[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return obs, lineErr(ReasonInvalidUTF8, "invalid UTF-8 at byte %d", off)
	}
	if depthExceeds(line, MaxDepth()) {
		return obs, lineErr(ReasonTooDeep, "%s", depthDetail("JSON"))
	}
	if !gjson.ValidBytes(line) {
		return obs, lineErr(ReasonNotJSON, "not valid JSON (truncated or corrupt line)")
	}
	r := gjson.ParseBytes(line)
	if !r.IsObject() {
		return obs, lineErr(ReasonNotObject, "a wire record is a JSON object, found %s", r.Type)
	}
	var f struct {
		format, ts, endTS, side, transport, client, server, conn, session, version, http, stdio, trigger, scenario gjson.Result
	}
	r.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "mcptrace":
			f.format = v
		case "ts":
			f.ts = v
		case "end_ts":
			f.endTS = v
		case "side":
			f.side = v
		case "transport":
			f.transport = v
		case "client":
			f.client = v
		case "server":
			f.server = v
		case "connection":
			f.conn = v
		case "session_id":
			f.session = v
		case "protocol_version":
			f.version = v
		case "http":
			f.http = v
		case "stdio":
			f.stdio = v
		case "trigger":
			f.trigger = v
		case "scenario":
			f.scenario = v
		}
		return true
	})
	if !f.format.Exists() {
		return obs, lineErr(ReasonNotWireRecord, `no "mcptrace" marker: not an mcptrace wire log line`)
	}
	if f.format.String() != schema.WireFormat {
		return obs, lineErr(ReasonUnsupported, "mcptrace format %q is not supported (want %q)", f.format.String(), schema.WireFormat)
	}
	obs.Pos = pos
	obs.Format = string(FormatWire)
	var err error
	if obs.Time, err = parseTime(f.ts, "ts", true); err != nil {
		return obs, err
	}
	if obs.EndTime, err = parseTime(f.endTS, "end_ts", false); err != nil {
		return obs, err
	}
	switch s := f.side.String(); s {
	case "client", "server":
		obs.Side = schema.Side(s)
	case "":
		return obs, lineErr(ReasonMissingField, `"side" is required (client or server)`)
	default:
		return obs, lineErr(ReasonBadValue, `"side" must be client or server, not %q`, clipStr(s))
	}
	obs.ClientName, obs.ClientVersion = f.client.Get("name").String(), f.client.Get("version").String()
	obs.ServerName, obs.ServerVersion = f.server.Get("name").String(), f.server.Get("version").String()
	obs.Connection = f.conn.String()
	obs.SessionID = f.session.String()
	obs.ProtocolVersion = f.version.String()
	switch t := f.trigger.String(); t {
	case "", schema.TriggerSDK, schema.TriggerApplication, schema.TriggerManual:
		obs.Trigger = t
	default:
		return obs, lineErr(ReasonBadValue, `"trigger" must be sdk, application or manual, not %q`, clipStr(t))
	}
	obs.Scenario = f.scenario.String()
	switch t := f.transport.String(); t {
	case "streamable-http", "http+sse", "stdio":
		obs.Transport = schema.Transport(t)
	case "":
		if f.stdio.Exists() {
			obs.Transport = schema.TransportStdio
		} else {
			obs.Transport = schema.TransportStreamableHTTP
		}
	default:
		return obs, lineErr(ReasonBadValue, `"transport" must be streamable-http, http+sse or stdio, not %q`, clipStr(t))
	}
	switch {
	case f.http.Exists() && f.stdio.Exists():
		return obs, lineErr(ReasonBadValue, `a record has "http" or "stdio", not both`)
	case f.http.IsObject():
		err := decodeHTTP(&obs, f.http, lim)
		ownStrings(&obs)
		return obs, err
	case f.stdio.IsObject():
		err := decodeStdio(&obs, f.stdio)
		ownStrings(&obs)
		return obs, err
	}
	return obs, lineErr(ReasonMissingField, `a record needs an "http" or a "stdio" object`)
}

// ownStrings gives the observation's text fields memory of their own: gjson
// hands out pieces of one string holding the whole line, and a correlator
// that keeps a conversation's session id or URL would otherwise keep every
// line of it (found by the bench's heap profile).
func ownStrings(o *schema.Observation) {
	for _, p := range []*string{&o.ClientName, &o.ClientVersion, &o.ServerName, &o.ServerVersion, &o.Connection,
		&o.SessionID, &o.ProtocolVersion, &o.Trigger, &o.Scenario, &o.Stdio} {
		*p = strings.Clone(*p)
	}
	if h := o.HTTP; h != nil {
		for _, p := range []*string{&h.Method, &h.URL, &h.LastEventID, &h.ContentType, &h.StreamEnd, &h.Failure,
			&h.FailureMessage, &h.RetryAfter, &h.RespSessionID, &h.StreamLastEventID} {
			*p = strings.Clone(*p)
		}
	}
}

// clipStr bounds a bad value quoted in a quarantine detail. The bound is
// generous on purpose: details are masked after this, and a secret cut short
// here could fall below what its detector recognises; the redaction policy
// shortens details afterwards.
func clipStr(s string) string {
	if len(s) > 4096 {
		return strings.ToValidUTF8(s[:4096], "") + "…"
	}
	return s
}

func parseTime(v gjson.Result, name string, required bool) (time.Time, error) {
	if !v.Exists() || v.Type == gjson.Null {
		if required {
			return time.Time{}, lineErr(ReasonMissingField, "%q (RFC 3339 time) is required", name)
		}
		return time.Time{}, nil
	}
	if v.Type != gjson.String {
		return time.Time{}, lineErr(ReasonBadValue, "%q must be an RFC 3339 string", name)
	}
	t, err := time.Parse(time.RFC3339Nano, v.Str)
	if err != nil {
		return time.Time{}, lineErr(ReasonBadValue, "%q is not an RFC 3339 time: %q", name, clipStr(v.Str))
	}
	return t.UTC(), nil
}

func decodeStdio(obs *schema.Observation, s gjson.Result) error {
	dir := s.Get("direction").String()
	switch dir {
	case schema.DirClientToServer, schema.DirServerToClient, schema.DirStderr:
	case "":
		return lineErr(ReasonMissingField, `"stdio.direction" is required (c2s, s2c or stderr)`)
	default:
		return lineErr(ReasonBadValue, `"stdio.direction" must be c2s, s2c or stderr, not %q`, clipStr(dir))
	}
	obs.Stdio = dir
	line := s.Get("line")
	if !line.Exists() {
		return lineErr(ReasonMissingField, `"stdio.line" is required`)
	}
	if dir != schema.DirStderr {
		obs.Messages = AppendMessages(obs.Messages, []byte(line.String()), schema.InStdio, 0)
		stampAt(obs.Messages, obs.Time)
	}
	return nil
}

func decodeHTTP(obs *schema.Observation, h gjson.Result, lim Limits) error {
	req := h.Get("request")
	if !req.IsObject() {
		return lineErr(ReasonMissingField, `"http.request" is required`)
	}
	p := HTTPParts{Method: req.Get("method").String(), URL: req.Get("url").String(), ReqHeaders: headersOf(req.Get("headers"))}
	if p.Method == "" {
		return lineErr(ReasonMissingField, `"http.request.method" is required`)
	}
	if body := req.Get("body"); body.Type == gjson.String {
		p.ReqBody = &body.Str
	}
	resp, fail := h.Get("response"), h.Get("failure")
	switch {
	case resp.IsObject() && fail.Exists():
		return lineErr(ReasonBadValue, `"http" has "response" or "failure", not both`)
	case resp.IsObject():
		st := resp.Get("status")
		if st.Type != gjson.Number || st.Int() < 100 || st.Int() > 999 {
			return lineErr(ReasonBadValue, `"http.response.status" must be an HTTP status number`)
		}
		p.Responded, p.Status = true, int(st.Int())
		p.RespHeaders = headersOf(resp.Get("headers"))
		p.ContentType = resp.Get("content_type").String()
		p.StreamEnd = resp.Get("stream_end").String()
		switch p.StreamEnd {
		case "", schema.StreamComplete, schema.StreamReset, schema.StreamTimeout, schema.StreamClientClosed:
		case streamClosedByClient:
			p.StreamEnd = schema.StreamClientClosed // the spelling of issue 10, accepted as an alias
		default:
			return lineErr(ReasonBadValue, `"http.response.stream_end" must be complete, reset, timeout or client_closed, not %q`, clipStr(p.StreamEnd))
		}
		if body := resp.Get("body"); body.Type == gjson.String {
			p.RespBody = &body.Str
		}
		times, err := eventTimes(resp.Get("event_times"))
		if err != nil {
			return err
		}
		p.EventTimes = times
	case fail.IsObject():
		p.Failure = fail.Get("kind").String()
		switch p.Failure {
		case schema.FailureConnectionRefused, schema.FailureReset, schema.FailureTimeout, schema.FailureClientAbort:
		case "":
			return lineErr(ReasonMissingField, `"http.failure.kind" is required`)
		default:
			return lineErr(ReasonBadValue, `"http.failure.kind" must be connection_refused, reset, timeout or client_abort, not %q`, clipStr(p.Failure))
		}
		p.FailureMessage = fail.Get("message").String()
	default:
		return lineErr(ReasonMissingField, `"http" needs a "response" or a "failure"`)
	}
	p.Limits = lim
	return BuildHTTP(obs, &p)
}

// headersOf reads a wire-log header object: values are strings or arrays of
// strings.
func headersOf(h gjson.Result) []Header {
	var out []Header
	h.ForEach(func(k, v gjson.Result) bool {
		if v.IsArray() {
			v.ForEach(func(_, x gjson.Result) bool {
				out = append(out, Header{Name: k.Str, Value: x.String()})
				return true
			})
		} else {
			out = append(out, Header{Name: k.Str, Value: v.String()})
		}
		return true
	})
	return out
}

// sessionFromURL reads the legacy HTTP+SSE session query parameter
// (sessionId in the TypeScript SDK, session_id in the Python SDK).
func sessionFromURL(raw string) string {
	if raw == "" || !strings.Contains(raw, "ession") {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	q := u.Query()
	if s := q.Get("sessionId"); s != "" {
		return s
	}
	return q.Get("session_id")
}

// streamClosedByClient is accepted for stream_end as another spelling of
// client_closed; writers write client_closed.
const streamClosedByClient = "closed_by_client"

// maxEventTimes bounds how many event times a record may give (far more
// than any stream a logger keeps in one record).
const maxEventTimes = 100000

// eventTimes reads response.event_times: one RFC 3339 time (or null, for
// unknown) per dispatched event of the stream, in order. Absent: none.
func eventTimes(v gjson.Result) ([]time.Time, error) {
	if !v.Exists() || v.Type == gjson.Null {
		return nil, nil
	}
	if !v.IsArray() {
		return nil, lineErr(ReasonBadValue, `"http.response.event_times" must be an array of RFC 3339 times`)
	}
	var out []time.Time
	var err error
	v.ForEach(func(_, x gjson.Result) bool {
		if len(out) == maxEventTimes {
			return false // the rest stay unknown
		}
		var t time.Time
		if x.Type != gjson.Null {
			if t, err = parseTime(x, "http.response.event_times", false); err != nil {
				return false
			}
		}
		out = append(out, t)
		return true
	})
	if err != nil {
		return nil, lineErr(ReasonBadValue, "event %d: %s", len(out)+1, err.(*LineError).Detail)
	}
	return out, nil
}
