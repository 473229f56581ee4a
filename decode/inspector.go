package decode

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// MCP Inspector v2 exports (log-formats.md §3). The web client's Export
// buttons write JSON.stringify(entries, null, 2): a pretty-printed JSON array.
//
// History (the "Protocol" panel; also the Logs panel, whose entries are the
// notifications/message subset): MessageEntry {id, timestamp, direction:
// request|response|notification, origin?, message, response?, duration?,
// clientError?}. The Inspector already paired each response with its
// request, so a request entry is one Paired observation holding the request
// and, when it came, the response. An entry that is a response on its own (its
// request was cleared or rotated out of the 1,000-entry log) is also an
// observation, holding only the response; the correlator counts it as stray.
//
// Network: FetchRequestEntry {id, timestamp, method, url, requestHeaders,
// requestBody?, responseStatus?, responseStatusText?, responseHeaders?,
// responseBody?, duration?, error?, category: auth|transport}: one HTTP
// transaction each, read through BuildHTTP.
//
// Both are the Inspector's own (client) view. Neither says the transport;
// streamable-http is assumed, except that a network entry whose URL carries
// the legacy sessionId query parameter is HTTP+SSE. Entry positions (Line)
// are 1-based indexes into the array.

func init() {
	register(FormatInspectorHistory, 30, sniffInspectorHistory, decodeInspectorHistory)
	register(FormatInspectorNetwork, 30, sniffInspectorNetwork, decodeInspectorNetwork)
}

// sniffInspectorHistory: a JSON array whose first element has "direction"
// and "message".
func sniffInspectorHistory(head []byte) bool {
	keys := jscanFirstElementKeys(head)
	return keys["direction"] && keys["message"]
}

// sniffInspectorNetwork: a JSON array whose first element has "url" and
// "requestHeaders" or "category".
func sniffInspectorNetwork(head []byte) bool {
	keys := jscanFirstElementKeys(head)
	return keys["url"] && (keys["requestHeaders"] || keys["category"])
}

func decodeInspectorHistory(source string, r io.Reader, e Emitter) error {
	return inspDecodeArray(source, r, e, "history", inspHistoryEntry)
}

func decodeInspectorNetwork(source string, r io.Reader, e Emitter) error {
	return inspDecodeArray(source, r, e, "network", inspNetworkEntry)
}

// inspDecodeArray splits the exported array into entries, checks each is
// usable JSON, and hands it on. A cut-off export loses only its last entry.
func inspDecodeArray(source string, r io.Reader, e Emitter, kind string, entry func(pos schema.Position, v gjson.Result, e Emitter)) error {
	data, err := readDocument(source, r, e, "the Inspector "+kind+" export")
	if err != nil {
		return err
	}
	data = trimBOM(data)
	stop := stopFunc(e)
	stopped := false
	jscanArray(data, func(idx int, raw []byte, bad string) bool {
		if stop() {
			stopped = true
			return false
		}
		pos := schema.Position{Source: source, Line: int64(idx)}
		switch {
		case bad != "":
			e.Quarantine(pos, ReasonNotJSON, fmt.Sprintf("Inspector %s export: %s", kind, bad), raw)
		case !utf8.Valid(raw):
			e.Quarantine(pos, ReasonInvalidUTF8, fmt.Sprintf("Inspector %s entry %d is not valid UTF-8", kind, idx), raw)
		case depthExceeds(raw, MaxDepth()):
			e.Quarantine(pos, ReasonTooDeep, depthDetail(fmt.Sprintf("Inspector %s entry %d", kind, idx)), raw)
		case !validJSON(raw):
			e.Quarantine(pos, ReasonNotJSON, fmt.Sprintf("Inspector %s entry %d is not valid JSON", kind, idx), raw)
		default:
			v := gjson.ParseBytes(raw)
			if !v.IsObject() {
				e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("Inspector %s entry %d is a JSON %s, not an object", kind, idx, jscanKind(v)), raw)
				return true
			}
			entry(pos, v, e)
		}
		return true
	})
	if stopped {
		return ErrStopped
	}
	return nil
}

// inspTime reads an entry's timestamp: the ISO string JSON.stringify writes
// for a Date, or epoch milliseconds.
func inspTime(v gjson.Result) (time.Time, *LineError) {
	switch v.Type {
	case gjson.String:
		t, err := time.Parse(time.RFC3339Nano, v.Str)
		if err != nil {
			return time.Time{}, lineErr(ReasonBadValue, `"timestamp" is not an ISO 8601 time: %q`, clipStr(v.Str))
		}
		return t.UTC(), nil
	case gjson.Number:
		return time.UnixMilli(v.Int()).UTC(), nil
	case gjson.Null:
	default:
		if v.Exists() {
			return time.Time{}, lineErr(ReasonBadValue, `"timestamp" must be a time string`)
		}
	}
	return time.Time{}, lineErr(ReasonMissingField, `"timestamp" is required`)
}

// inspEnd is the start plus a duration in milliseconds, when one is given.
func inspEnd(start time.Time, d gjson.Result) time.Time {
	if d.Type != gjson.Number || d.Float() < 0 || start.IsZero() {
		return time.Time{}
	}
	return start.Add(time.Duration(d.Float() * float64(time.Millisecond)))
}

func inspHistoryEntry(pos schema.Position, v gjson.Result, e Emitter) {
	dir, msg := v.Get("direction"), v.Get("message")
	switch dir.String() {
	case "request", "response", "notification":
	case "":
		e.Quarantine(pos, ReasonMissingField, `history entry has no "direction"`, []byte(v.Raw))
		return
	default:
		e.Quarantine(pos, ReasonBadValue, fmt.Sprintf(`history "direction" must be request, response or notification, not %q`, clipStr(dir.String())), []byte(v.Raw))
		return
	}
	if !msg.Exists() || msg.Type == gjson.Null {
		e.Quarantine(pos, ReasonMissingField, `history entry has no "message"`, []byte(v.Raw))
		return
	}
	if !msg.IsObject() {
		e.Quarantine(pos, ReasonBadValue, fmt.Sprintf(`history "message" must be a JSON-RPC object, found a %s`, jscanKind(msg)), []byte(v.Raw))
		return
	}
	t, lerr := inspTime(v.Get("timestamp"))
	if lerr != nil {
		e.Quarantine(pos, lerr.Reason, "history entry: "+lerr.Detail, []byte(v.Raw))
		return
	}
	o := &schema.Observation{
		Pos:       pos,
		Format:    string(FormatInspectorHistory),
		Side:      schema.SideClient,
		Transport: schema.TransportStreamableHTTP,
		Time:      t,
		EndTime:   inspEnd(t, v.Get("duration")),
		Paired:    true,
	}
	o.Messages = AppendMessages(o.Messages, []byte(msg.Raw), schema.InRecord, 0)
	resp := v.Get("response")
	hasResp := resp.Exists() && resp.Type != gjson.Null
	if hasResp {
		o.Messages = AppendMessages(o.Messages, []byte(resp.Raw), schema.InRecord, 0)
	}
	if msg.Get("method").String() == "initialize" {
		if ci := msg.Get("params.clientInfo"); ci.IsObject() {
			o.ClientName, o.ClientVersion = ci.Get("name").String(), ci.Get("version").String()
		}
	}
	if ce := v.Get("clientError"); ce.Type == gjson.String && strings.TrimSpace(ce.Str) != "" && dir.Str == "request" {
		if hasResp {
			// The client rejected a response that came (the Inspector's
			// meaning of clientError): the response decides the outcome; the
			// rejection is kept as the log's statement.
			o.Reported = &schema.Reported{Message: ce.Str}
		} else {
			o.Reported = &schema.Reported{Failed: true, Message: ce.Str}
			if inspIsTimeout(ce.Str) {
				o.Reported.ErrorType = "timeout"
			}
		}
	}
	e.Observation(o)
}

// inspIsTimeout: the SDK's request timeout (McpError -32001 "Request timed
// out") or any text that says the request timed out.
func inspIsTimeout(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "-32001") || strings.Contains(l, "timed out") || strings.Contains(l, "timeout")
}

func inspNetworkEntry(pos schema.Position, v gjson.Result, e Emitter) {
	method, url := v.Get("method").String(), v.Get("url").String()
	if method == "" || url == "" {
		e.Quarantine(pos, ReasonMissingField, `network entry needs "method" and "url"`, []byte(v.Raw))
		return
	}
	p := HTTPParts{Method: method, URL: url, ReqHeaders: inspHeaders(v.Get("requestHeaders"))}
	if b := v.Get("requestBody"); b.Type == gjson.String {
		p.ReqBody = &b.Str
	}
	if v.Get("category").String() == "auth" && !inspIsJSONRPCPost(&p) {
		// OAuth discovery, registration and token requests: not MCP traffic.
		e.Skip(pos, "auth")
		return
	}
	t, lerr := inspTime(v.Get("timestamp"))
	if lerr != nil {
		e.Quarantine(pos, lerr.Reason, "network entry: "+lerr.Detail, []byte(v.Raw))
		return
	}
	st := v.Get("responseStatus")
	errText := strings.TrimSpace(v.Get("error").String())
	switch {
	case st.Type == gjson.Number && st.Int() >= 100 && st.Int() <= 999:
		p.Responded, p.Status = true, int(st.Int())
		p.RespHeaders = inspHeaders(v.Get("responseHeaders"))
		if b := v.Get("responseBody"); b.Type == gjson.String {
			p.RespBody = &b.Str
		}
	case errText != "":
		p.Failure, p.FailureMessage = FailureKind(errText), errText
	default:
		e.Quarantine(pos, ReasonMissingField, `network entry has neither an HTTP "responseStatus" nor an "error"`, []byte(v.Raw))
		return
	}
	o := &schema.Observation{
		Pos:       pos,
		Format:    string(FormatInspectorNetwork),
		Side:      schema.SideClient,
		Transport: schema.TransportStreamableHTTP,
		Time:      t,
		EndTime:   inspEnd(t, v.Get("duration")),
	}
	if sessionFromURL(url) != "" {
		o.Transport = schema.TransportHTTPSSE
	}
	p.Limits = LimitsOf(e)
	if err := BuildHTTP(o, &p); err != nil {
		le := err.(*LineError)
		e.Quarantine(pos, le.Reason, "network entry: "+le.Detail, []byte(v.Raw))
		return
	}
	e.Observation(o)
}

// inspIsJSONRPCPost: a POST whose body is JSON-RPC (an MCP message, even when
// the Inspector filed it under auth).
func inspIsJSONRPCPost(p *HTTPParts) bool {
	if !strings.EqualFold(p.Method, "POST") || p.ReqBody == nil {
		return false
	}
	b := strings.TrimSpace(*p.ReqBody)
	return (strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[")) && strings.Contains(b, `"jsonrpc"`)
}

// inspHeaders reads the Inspector's header record (name → value, names as
// fetch's Headers gives them, lower case); an array of {name, value} is
// accepted too.
func inspHeaders(h gjson.Result) []Header {
	var out []Header
	switch {
	case h.IsObject():
		h.ForEach(func(k, v gjson.Result) bool {
			out = append(out, Header{Name: k.Str, Value: v.String()})
			return true
		})
	case h.IsArray():
		h.ForEach(func(_, x gjson.Result) bool {
			if n := x.Get("name"); n.Exists() {
				out = append(out, Header{Name: n.String(), Value: x.Get("value").String()})
			}
			return true
		})
	}
	return out
}

// --- small JSON scanners shared by the Inspector, OTLP and stdio JSONL
// decoders. They tolerate input cut anywhere (a sniff head) and never
// recurse.

// jscanKind names the JSON type of a value for a person.
func jscanKind(v gjson.Result) string {
	switch {
	case v.IsObject():
		return "object"
	case v.IsArray():
		return "array"
	case v.Type == gjson.String:
		return "string"
	case v.Type == gjson.Number:
		return "number"
	case v.Type == gjson.True, v.Type == gjson.False:
		return "boolean"
	}
	return "null"
}

// jscanKeys returns the member names of the object at the start of b (after
// white space and a byte order mark), as far as b goes.
func jscanKeys(b []byte) map[string]bool {
	b = trimBOM(b)
	keys := map[string]bool{}
	scanObject(b, skipWS(b, 0), func(k string, _ []byte, _ bool) bool {
		keys[k] = true
		return true
	})
	return keys
}

// jscanFirstElementKeys returns the member names of the first element of the
// JSON array at the start of b, when that element is an object.
func jscanFirstElementKeys(b []byte) map[string]bool {
	b = trimBOM(b)
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil
	}
	return jscanKeys(b[skipWS(b, i+1):])
}

// jscanArray calls fn with each element of the top-level JSON array in data
// (idx 1-based) until fn returns false. An element the input cuts short, or text where the array
// is broken, comes with bad set to what is wrong.
func jscanArray(data []byte, fn func(idx int, raw []byte, bad string) bool) {
	i := skipWS(data, 0)
	if i >= len(data) {
		return
	}
	if data[i] != '[' {
		fn(1, clip(data[i:]), "not a JSON array (an Inspector export is an array of entries)")
		return
	}
	i++
	idx := 0
	for {
		i = skipWS(data, i)
		if i >= len(data) {
			fn(idx+1, nil, "the export ends before its closing ']' (file cut short)")
			return
		}
		switch data[i] {
		case ']':
			if rest := bytes.TrimSpace(data[i+1:]); len(rest) > 0 {
				fn(idx+1, clip(rest), "text after the closing ']'")
			}
			return
		case ',':
			i++
			continue
		}
		idx++
		end, whole := skipValue(data, i)
		if !whole {
			fn(idx, clip(data[i:]), fmt.Sprintf("entry %d is cut short (the file ends inside it)", idx))
			return
		}
		if end == i { // a stray delimiter: skip it
			if !fn(idx, data[i:i+1], fmt.Sprintf("entry %d: unexpected %q", idx, data[i])) {
				return
			}
			i++
			continue
		}
		if !fn(idx, data[i:end], "") {
			return
		}
		i = end
	}
}
