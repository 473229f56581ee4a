package decode

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// HAR 1.2 (HTTP Archive), as written by mitmproxy (savehar: the save.har
// command and the hardump option), Chrome DevTools (Network → Export HAR) and
// Playwright (recordHar). A HAR is one JSON document,
// {"log":{"version","creator","entries":[…]}}; every entry is one HTTP
// transaction seen by the client, and becomes one observation (Pos.Line is
// the 1-based entry index). The traps:
//
//   - Headers repeat and differ in case (HTTP/2 lower-cases them, Chrome adds
//     the :authority pseudo-headers); all are kept, in order.
//   - content.text may be base64 (encoding "base64"): mitmproxy does so when
//     a body is "mostly binary", which a JSON body full of non-ASCII text is.
//   - A response whose body the exporter did not keep has no text key, or
//     text null (mitmproxy streamed flows), or, for an event stream, an empty
//     text (a stream still open when DevTools exported). The body is then not
//     recorded, and the outcome downstream is UNKNOWN, never a success.
//   - No response at all is status 0 (mitmproxy, Chrome) or -1 (Playwright),
//     with the reason in response._error (mitmproxy, Chrome) or
//     response._failureText (Playwright); FailureKind names the kind.
//   - A status with an _error is a connection lost (or let go by the client)
//     after the status line: the status stands. An event stream ends as the
//     text says (client_closed for the client's own abort, net::ERR_ABORTED
//     or "Client disconnected."; timeout; reset for anything else); a 2xx
//     body that is not a stream is no usable answer and the attempt carries
//     the failure kind (reset when the text names none); any other status is
//     the answer, its body kept as far as it came.
//   - Times: a request was sent at startedDateTime; a JSON body arrived at
//     the entry's end (startedDateTime + time). A stream's events are dated
//     by _eventSourceMessages when the exporter wrote them (some CDP-based
//     recorders do; DevTools does not), else its last event at the entry's
//     end and the others at the start of the receive phase (timings).
//   - startedDateTime carries an offset (mitmproxy writes +00:00); times are
//     converted to UTC.
//   - Entries are in the order the exporter chose (start time for DevTools,
//     Playwright and mitmproxy's save.har, completion time for its hardump
//     option); they are emitted in file order and the correlator pairs
//     responses that come before their requests.
//   - A browser HAR also holds the page's own traffic (documents, scripts,
//     images, CORS preflights): entries that carry nothing of MCP are skipped
//     ("not_mcp").

func init() {
	register(FormatHAR, 30, sniffHAR, decodeHARFile)
}

// MaxHARBytes was the fixed size limit of a HAR or other single JSON
// document.
//
// Deprecated: the limit is the Emitter's document limit now (MaxDocument,
// DefaultMaxDocument, ingest -max-document); nothing reads this constant.
const MaxHARBytes = 1 << 30

// maxQuarantineRaw bounds the raw bytes handed over with a quarantined entry.
const maxQuarantineRaw = 64 << 10

// sniffHAR accepts a JSON object whose first key is "log", an object, with
// "entries" or "creator" in the head.
func sniffHAR(head []byte) bool {
	h := skipSpace(trimBOM(head))
	if len(h) == 0 || h[0] != '{' {
		return false
	}
	// "log" is usually the first key; a writer that puts other keys first
	// must show an entries array, and a wire log line is never a HAR.
	first := bytes.HasPrefix(skipSpace(h[1:]), []byte(`"log"`))
	loc := harLogKey.FindIndex(h)
	if loc == nil || (!first && bytes.Contains(h[:loc[0]], []byte(`"mcptrace"`))) {
		return false
	}
	h = h[loc[1]:]
	if first {
		return bytes.Contains(h, []byte(`"entries"`)) || bytes.Contains(h, []byte(`"creator"`))
	}
	return harEntriesKey.Match(h)
}

var (
	harLogKey     = regexp.MustCompile(`"log"\s*:\s*\{`)
	harEntriesKey = regexp.MustCompile(`"entries"\s*:\s*\[`)
)

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

func clipRaw(b []byte) []byte {
	if len(b) > maxQuarantineRaw {
		b = b[:maxQuarantineRaw]
	}
	return b
}

func clipRawStr(s string) []byte {
	if len(s) > maxQuarantineRaw {
		s = s[:maxQuarantineRaw]
	}
	return []byte(s)
}

type harDecoder struct {
	source string
	e      Emitter
	// legacy holds the session ids of 2024-11-05 HTTP+SSE traffic: the
	// sessionId of an endpoint event, or of a URL POSTed to and answered 202.
	legacy    map[string]bool
	legacyAny bool   // the file holds HTTP+SSE traffic
	lim       Limits // record limits (LimitsOf the run's Emitter)
}

// survey looks at an entry, before any is emitted, for evidence of the legacy
// HTTP+SSE transport: a GET stream announcing its POST endpoint, or POSTs to
// a ?sessionId= URL answered 202. It keeps nothing of ent (the first pass
// hands it an entry in the read buffer): session ids are cloned.
func (d *harDecoder) survey(ent gjson.Result) {
	req, resp := ent.Get("request"), ent.Get("response")
	method := strings.ToUpper(req.Get("method").String())
	switch method {
	case "GET":
		text := resp.Get("content.text")
		if text.Type != gjson.String || !strings.Contains(text.Raw, "endpoint") {
			return
		}
		body := text.Str
		if resp.Get("content.encoding").String() == "base64" {
			b, ok := decodeBase64(body)
			if !ok {
				return
			}
			body = string(b)
		}
		for _, ev := range ParseSSE(body, true) {
			if ev.Type == "endpoint" {
				d.legacyAny = true
				if sid := sessionFromURL(ev.Data); sid != "" {
					d.legacy[strings.Clone(sid)] = true
				}
			}
		}
	case "POST":
		if resp.Get("status").Int() != 202 {
			return
		}
		if sid := sessionFromURL(req.Get("url").String()); sid != "" {
			d.legacyAny = true
			d.legacy[strings.Clone(sid)] = true
		}
	}
}

// harFields are the parts of an entry the decoder uses.
type harFields struct {
	started, elapsed, request, response, errText, timings, sseMessages gjson.Result
}

func (d *harDecoder) entry(pos schema.Position, ent gjson.Result) {
	if !ent.IsObject() {
		d.e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("HAR entry %d is not an object (found %s)", pos.Line, ent.Type), clipRawStr(ent.Raw))
		return
	}
	var f harFields
	var entryErr, entryFail gjson.Result
	ent.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "startedDateTime":
			f.started = v
		case "time":
			f.elapsed = v
		case "request":
			f.request = v
		case "response":
			f.response = v
		case "_error":
			entryErr = v
		case "_failureText":
			entryFail = v
		case "timings":
			f.timings = v
		case "_eventSourceMessages":
			f.sseMessages = v
		}
		return true
	})
	bad := func(reason, format string, args ...any) {
		d.e.Quarantine(pos, reason, fmt.Sprintf("HAR entry %d: ", pos.Line)+fmt.Sprintf(format, args...), clipRawStr(ent.Raw))
	}
	if !f.request.IsObject() {
		bad(ReasonMissingField, `"request" object is required`)
		return
	}
	req := f.request
	mth := req.Get("method")
	if !mth.Exists() || mth.Str == "" {
		bad(ReasonMissingField, `"request.method" is required`)
		return
	}
	if mth.Type != gjson.String || !isToken(mth.Str) {
		bad(ReasonBadValue, `"request.method" is not an HTTP method: %s`, clipStr(mth.Raw))
		return
	}
	start, err := harTime(f.started)
	if err != nil {
		bad(err.Reason, "%s", err.Detail)
		return
	}
	p := HTTPParts{Method: mth.Str, URL: req.Get("url").String(), ReqHeaders: harHeaders(req.Get("headers"))}
	if pd := req.Get("postData"); pd.IsObject() {
		if t := pd.Get("text"); t.Type == gjson.String {
			body := t.Str
			if pd.Get("encoding").String() == "base64" {
				if b, ok := decodeBase64(body); ok {
					body = string(b)
				}
			}
			p.ReqBody = &body
		}
	}

	resp := f.response
	status := resp.Get("status")
	errText := firstText(resp.Get("_error"), resp.Get("_failureText"), entryErr, entryFail)
	switch {
	case !resp.IsObject() || !status.Exists() || status.Type == gjson.Null:
		// No response recorded at all.
	case status.Type != gjson.Number:
		bad(ReasonBadValue, `"response.status" must be a number, not %s`, clipStr(status.Raw))
		return
	case status.Int() <= 0:
		// 0 (mitmproxy, Chrome) or -1 (Playwright): no response.
	case status.Int() < 100 || status.Int() > 999:
		bad(ReasonBadValue, `"response.status" %s is not an HTTP status`, clipStr(status.Raw))
		return
	default:
		p.Responded, p.Status = true, int(status.Int())
	}

	if !harIsMCP(&p, resp) {
		d.e.Skip(pos, "not_mcp")
		return
	}

	if p.Responded {
		p.RespHeaders = harHeaders(resp.Get("headers"))
		content := resp.Get("content")
		if mt := content.Get("mimeType").String(); mt != "" && mt != "x-unknown" {
			p.ContentType = mt
		}
		ct := p.ContentType
		if ct == "" {
			ct = HeaderValue(p.RespHeaders, "Content-Type")
		}
		sse := mediaType(ct) == "text/event-stream"
		p.RespBody = harBody(content, resp, sse)
		if errText != "" {
			// The status line came, then the connection was lost (or the
			// client let go) before the body was complete: the status
			// stands.
			kind := FailureKind(errText)
			switch {
			case sse:
				// The stream broke: how says stream_end.
				p.StreamEnd = streamEndOf(kind)
			case p.Status >= 200 && p.Status <= 299:
				// A 2xx body that did not arrive whole is no usable
				// answer; the attempt carries why.
				p.RespBody = nil
				p.Failure = kind
				if kind == "" {
					p.Failure = schema.FailureReset
				}
				p.FailureMessage = fmt.Sprintf("%s (after HTTP %d)", errText, p.Status)
			}
			// Any other status is the answer whatever became of its body.
		}
		if sse && p.RespBody != nil {
			msgs := f.sseMessages
			if !msgs.IsArray() {
				msgs = resp.Get("_eventSourceMessages")
			}
			p.EventTimes = harEventTimes(*p.RespBody, p.StreamEnd, msgs)
		}
	} else if strings.TrimSpace(errText) == "" {
		// No status and no error: the request was still pending when the
		// HAR was exported. Its outcome is unknown, not a failure.
		p.Failure = schema.FailurePending
	} else {
		p.Failure, p.FailureMessage = FailureKind(errText), errText
	}

	o := &schema.Observation{
		Pos:       pos,
		Side:      schema.SideClient,
		Transport: schema.TransportStreamableHTTP,
		Time:      start,
		Format:    string(FormatHAR),
	}
	if ms := f.elapsed; ms.Type == gjson.Number && ms.Num >= 0 {
		o.EndTime = start.Add(time.Duration(ms.Num * float64(time.Millisecond)))
		p.ReceiveStart = harReceiveStart(start, o.EndTime, f.timings)
	}
	p.Limits = d.lim
	if err := BuildHTTP(o, &p); err != nil {
		le := err.(*LineError)
		d.e.Quarantine(pos, le.Reason, fmt.Sprintf("HAR entry %d: %s", pos.Line, le.Detail), clipRawStr(ent.Raw))
		return
	}
	if d.isLegacy(o, &p) {
		o.Transport = schema.TransportHTTPSSE
	}
	d.e.Observation(o)
}

// isLegacy reports whether an entry belongs to 2024-11-05 HTTP+SSE traffic.
func (d *harDecoder) isLegacy(o *schema.Observation, p *HTTPParts) bool {
	if !d.legacyAny {
		return false
	}
	if o.SessionID != "" && d.legacy[o.SessionID] {
		return true
	}
	// The GET stream of a legacy session whose body was not kept: no
	// endpoint event to read, but no Mcp-Session-Id either.
	return o.HTTP.Method == "GET" && o.HTTP.SSE && HeaderValue(p.ReqHeaders, "Mcp-Session-Id") == "" && o.HTTP.LastEventID == ""
}

// harIsMCP reports whether an entry carries anything of MCP: a JSON-RPC
// request body, an MCP header, a legacy session URL, an event stream, or a
// JSON-RPC response body.
func harIsMCP(p *HTTPParts, resp gjson.Result) bool {
	if p.ReqBody != nil && (strings.Contains(*p.ReqBody, `"jsonrpc"`) || strings.Contains(*p.ReqBody, `"method"`)) {
		return true
	}
	if HeaderValue(p.ReqHeaders, "Mcp-Session-Id") != "" || HeaderValue(p.ReqHeaders, "MCP-Protocol-Version") != "" {
		return true
	}
	if sessionFromURL(p.URL) != "" || strings.Contains(strings.ToLower(HeaderValue(p.ReqHeaders, "Accept")), "text/event-stream") {
		return true
	}
	if !resp.IsObject() {
		return false
	}
	var mcp bool
	resp.Get("headers").ForEach(func(_, h gjson.Result) bool {
		if strings.EqualFold(h.Get("name").String(), "Mcp-Session-Id") {
			mcp = true
		}
		return !mcp
	})
	if mcp {
		return true
	}
	if strings.HasPrefix(strings.ToLower(resp.Get("content.mimeType").String()), "text/event-stream") {
		return true
	}
	t := resp.Get("content.text")
	return t.Type == gjson.String && strings.Contains(t.Raw, "jsonrpc")
}

// harBody returns the response body as recorded, or nil when the exporter did
// not keep it.
func harBody(content, resp gjson.Result, sse bool) *string {
	t := content.Get("text")
	if t.Type != gjson.String {
		return nil // no text key (DevTools, Playwright "omit"/"attach"), or null (mitmproxy streamed)
	}
	body := t.Str
	if strings.EqualFold(content.Get("encoding").String(), "base64") {
		b, ok := decodeBase64(body)
		if !ok {
			return nil // corrupt: the body is not known
		}
		body = string(b)
	}
	if body == "" {
		if sse {
			// An event stream with no bytes is how exporters write a
			// stream whose body they did not keep (still open at export).
			return nil
		}
		if content.Get("size").Int() > 0 || resp.Get("bodySize").Int() > 0 {
			return nil // the exporter dropped a body it says had bytes
		}
	}
	return &body
}

func decodeBase64(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, true
	}
	if b, err := base64.RawStdEncoding.DecodeString(s); err == nil {
		return b, true
	}
	return nil, false
}

// harHeaders reads a HAR header list, [{"name","value"}], keeping repeats.
func harHeaders(h gjson.Result) []Header {
	var out []Header
	h.ForEach(func(_, x gjson.Result) bool {
		if x.IsObject() {
			if n := x.Get("name"); n.Type == gjson.String && n.Str != "" {
				out = append(out, Header{Name: n.Str, Value: x.Get("value").String()})
			}
		}
		return true
	})
	return out
}

// harTime parses startedDateTime: ISO 8601 with an offset, to UTC.
func harTime(v gjson.Result) (time.Time, *LineError) {
	if !v.Exists() || v.Type == gjson.Null || v.Str == "" {
		return time.Time{}, lineErr(ReasonMissingField, `"startedDateTime" is required`)
	}
	if v.Type != gjson.String {
		return time.Time{}, lineErr(ReasonBadValue, `"startedDateTime" must be an ISO 8601 string`)
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, v.Str); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, lineErr(ReasonBadValue, `"startedDateTime" is not an ISO 8601 time with an offset: %q`, clipStr(v.Str))
}

func firstText(vs ...gjson.Result) string {
	for _, v := range vs {
		if v.Type == gjson.String {
			if s := strings.TrimSpace(v.Str); s != "" {
				return s
			}
		}
	}
	return ""
}

func streamEndOf(failure string) string {
	switch failure {
	case schema.FailureClientAbort:
		return schema.StreamClientClosed
	case schema.FailureTimeout:
		return schema.StreamTimeout
	}
	return schema.StreamReset
}

// isToken reports whether s is an HTTP method token of letters (and the odd
// dash), short enough to be one.
func isToken(s string) bool {
	if len(s) == 0 || len(s) > 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// harReceiveStart is when the first byte of the response body came: the
// entry's start plus the phases before "receive" (blocked, dns, connect,
// send, wait; ssl is part of connect in HAR 1.2, and -1 means the phase did
// not apply). Zero when the timings do not say, or contradict the entry's
// total time.
func harReceiveStart(start, end time.Time, timings gjson.Result) time.Time {
	if !timings.IsObject() {
		return time.Time{}
	}
	wait := timings.Get("wait")
	if wait.Type != gjson.Number || wait.Num < 0 {
		return time.Time{}
	}
	ms := 0.0
	for _, k := range []string{"blocked", "dns", "connect", "send", "wait"} {
		if v := timings.Get(k); v.Type == gjson.Number && v.Num > 0 {
			ms += v.Num
		}
	}
	t := start.Add(time.Duration(ms * float64(time.Millisecond)))
	if t.After(end) {
		return time.Time{}
	}
	return t
}

// maxEventScan bounds how far ahead harEventTimes looks for the message of
// an event, so that a stream whose messages do not match its text stays
// linear.
const maxEventScan = 64

// harEventTimes dates the dispatched events of a stream body (ParseSSE
// order) from the entry's _eventSourceMessages, an array of
// {"time", "eventName", "eventId", "data"} that some exporters add (after
// Chrome's _webSocketMessages; DevTools itself writes none). Each event
// takes the time of the next message, in order, whose data is the same;
// an event without one stays unknown. A time is seconds since the Unix
// epoch (a number; one above 1e11 is read as milliseconds) or an RFC 3339
// string.
func harEventTimes(body, streamEnd string, msgs gjson.Result) []time.Time {
	if !msgs.IsArray() {
		return nil
	}
	type msg struct {
		data string
		at   time.Time
	}
	var ms []msg
	msgs.ForEach(func(_, m gjson.Result) bool {
		if m.IsObject() {
			ms = append(ms, msg{strings.TrimSuffix(m.Get("data").String(), "\n"), harMessageTime(m.Get("time"))})
		}
		return true
	})
	if len(ms) == 0 {
		return nil
	}
	events := ParseSSE(body, streamEnd == "" || streamEnd == schema.StreamComplete)
	out := make([]time.Time, len(events))
	next := 0
	for i, ev := range events {
		for k := next; k < len(ms) && k < next+maxEventScan; k++ {
			if ms[k].data == ev.Data {
				out[i], next = ms[k].at, k+1
				break
			}
		}
	}
	return out
}

func harMessageTime(v gjson.Result) time.Time {
	switch v.Type {
	case gjson.Number:
		if v.Num <= 0 || math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
			return time.Time{}
		}
		sec := v.Num
		if sec > 1e11 {
			sec /= 1000 // milliseconds
		}
		if sec > 1e11 {
			return time.Time{}
		}
		whole, frac := math.Modf(sec)
		return time.Unix(int64(whole), int64(frac*1e9)).UTC().Round(time.Microsecond)
	case gjson.String:
		if t, err := time.Parse(time.RFC3339Nano, v.Str); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
