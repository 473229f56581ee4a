package decode

// The wire decoder as it was before the one pass (gjson, member by member),
// copied for the differential tests: refWireLine is the reference the one
// pass is held to.

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

func refWireLine(line []byte, pos schema.Position) (schema.Observation, error) {
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
		return obs, lineErr(ReasonTooDeep, "JSON nests deeper than %d levels (-max-depth)", MaxDepth())
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
		err := refDecodeHTTP(&obs, f.http)
		ownStrings(&obs)
		return obs, err
	case f.stdio.IsObject():
		err := refDecodeStdio(&obs, f.stdio)
		ownStrings(&obs)
		return obs, err
	}
	return obs, lineErr(ReasonMissingField, `a record needs an "http" or a "stdio" object`)
}

func refDecodeStdio(obs *schema.Observation, s gjson.Result) error {
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
		obs.Messages = refAppendMessages(obs.Messages, []byte(line.String()), schema.InStdio, 0)
		stampAt(obs.Messages, obs.Time)
	}
	return nil
}

func refDecodeHTTP(obs *schema.Observation, h gjson.Result) error {
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
	refBuildHTTP(obs, &p)
	return nil
}

func refBuildHTTP(obs *schema.Observation, p *HTTPParts) {
	ev := &schema.HTTPEvidence{Method: strings.ToUpper(p.Method), URL: p.URL}
	obs.HTTP = ev
	ev.LastEventID = HeaderValue(p.ReqHeaders, "Last-Event-ID")
	if obs.SessionID == "" {
		obs.SessionID = HeaderValue(p.ReqHeaders, "Mcp-Session-Id")
	}
	if obs.ProtocolVersion == "" {
		obs.ProtocolVersion = HeaderValue(p.ReqHeaders, "MCP-Protocol-Version")
	}
	if p.ReqBody != nil {
		ev.RequestHasBody = true
		n := len(obs.Messages)
		obs.Messages = refAppendMessages(obs.Messages, []byte(*p.ReqBody), schema.InRequestBody, 0)
		stampAt(obs.Messages[n:], obs.Time)
	}
	if p.Responded {
		ev.Responded, ev.Status = true, p.Status
		ct := p.ContentType
		if ct == "" {
			ct = HeaderValue(p.RespHeaders, "Content-Type")
		}
		ev.ContentType = mediaType(ct)
		ev.RetryAfter = HeaderValue(p.RespHeaders, "Retry-After")
		ev.RespSessionID = HeaderValue(p.RespHeaders, "Mcp-Session-Id")
		ev.StreamEnd = p.StreamEnd
		ev.SSE = ev.ContentType == "text/event-stream"
		if p.RespBody != nil {
			body := *p.RespBody
			ev.BodyRecorded = true
			ev.BodyEmpty = strings.TrimSpace(body) == ""
			if ev.SSE {
				where := schema.InPostStream
				if ev.Method == "GET" {
					where = schema.InGetStream
					if ev.LastEventID != "" {
						where = schema.InResumedStream
					}
				}
				stream := refParseSSEStream(body, p.StreamEnd == "" || p.StreamEnd == schema.StreamComplete)
				events := stream.Events
				for i, e := range events {
					if e.Type == "endpoint" && obs.SessionID == "" {
						obs.SessionID = sessionFromURL(e.Data) // legacy HTTP+SSE
					}
					if e.Type != "" && e.Type != "message" {
						continue
					}
					ev.SSEEvents++
					n := len(obs.Messages)
					obs.Messages = refAppendMessages(obs.Messages, []byte(e.Data), where, i+1)
					stampAt(obs.Messages[n:], eventTime(obs, p, where, i, len(events)))
				}
				ev.StreamLastEventID = stream.LastEventID
			} else {
				n := len(obs.Messages)
				obs.Messages = refAppendMessages(obs.Messages, []byte(body), schema.InResponseBody, 0)
				stampAt(obs.Messages[n:], obs.EndTime) // the body is whole at the end
			}
		}
	}
	if !p.Responded || (!ev.SSE && p.Failure != "") {
		ev.Failure, ev.FailureMessage = p.Failure, p.FailureMessage
	}
	if obs.SessionID == "" {
		obs.SessionID = ev.RespSessionID
	}
	if obs.SessionID == "" {
		obs.SessionID = sessionFromURL(ev.URL)
	}
}

func refParseSSEStream(text string, complete bool) SSEStream {
	var (
		events []Event
		data   strings.Builder
		hasBuf bool
		typ    string
		lastID string // the last event ID buffer
		held   string // the last event ID string, set at each dispatch
	)
	dispatch := func() {
		held = lastID
		if hasBuf {
			d := data.String()
			d = strings.TrimSuffix(d, "\n")
			if d != "" {
				events = append(events, Event{Type: typ, ID: lastID, Data: d})
			}
		}
		data.Reset()
		hasBuf = false
		typ = ""
	}
	text = strings.TrimPrefix(text, "\ufeff")
	for len(text) > 0 {
		i := strings.IndexAny(text, "\r\n")
		var line string
		if i < 0 {
			// Unterminated last line.
			line, text = text, ""
			refProcessField(line, &data, &hasBuf, &typ, &lastID)
			break
		}
		line = text[:i]
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			text = text[i+2:]
		} else {
			text = text[i+1:]
		}
		if line == "" {
			dispatch()
			continue
		}
		refProcessField(line, &data, &hasBuf, &typ, &lastID)
	}
	if complete {
		dispatch()
	}
	// A copy, so that keeping the id does not keep the whole body.
	return SSEStream{Events: events, LastEventID: strings.Clone(held)}
}

func refProcessField(line string, data *strings.Builder, hasBuf *bool, typ, lastID *string) {
	if line[0] == ':' {
		return
	}
	field, value := line, ""
	if i := strings.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		value = strings.TrimPrefix(value, " ")
	}
	switch field {
	case "data":
		data.WriteString(value)
		data.WriteByte('\n')
		*hasBuf = true
	case "event":
		*typ = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			*lastID = value
		}
	}
}
