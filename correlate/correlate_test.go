package correlate_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// logb builds a client-side wire log, one record at a time, and feeds it
// through the real decoder, so the tests exercise what ingest does.
type logb struct {
	t     *testing.T
	side  schema.Side
	conn  string
	sess  string
	ver   string
	clock time.Time
	obs   []*schema.Observation
}

func newLog(t *testing.T) *logb {
	return &logb{t: t, side: schema.SideClient, conn: "c1", ver: "2025-11-25", clock: time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)}
}

func str(s string) *string { return &s }

func req(id any, method, params string) string {
	idj, _ := json.Marshal(id)
	if params == "" {
		params = "{}"
	}
	if id == nil {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idj, method, params)
}

func add(l *logb, rec schema.WireRecord) {
	l.t.Helper()
	rec.Format = schema.WireFormat
	l.clock = l.clock.Add(10 * time.Millisecond)
	rec.Time = l.clock.Format(time.RFC3339Nano)
	rec.EndTime = l.clock.Add(5 * time.Millisecond).Format(time.RFC3339Nano)
	if rec.Side == "" {
		rec.Side = l.side
	}
	if rec.Connection == "" {
		rec.Connection = l.conn
	}
	if rec.SessionID == "" {
		rec.SessionID = l.sess
	}
	if rec.ProtocolVersion == "" {
		rec.ProtocolVersion = l.ver
	}
	if rec.Transport == "" {
		rec.Transport = schema.TransportStreamableHTTP
		if rec.Stdio != nil {
			rec.Transport = schema.TransportStdio
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		l.t.Fatal(err)
	}
	o, err := decode.WireLine(b, schema.Position{Source: "test.ndjson", Line: int64(len(l.obs) + 1)})
	if err != nil {
		l.t.Fatalf("record %d: %v", len(l.obs)+1, err)
	}
	l.obs = append(l.obs, &o)
}

// post logs one POST with a response (status, content type, body).
func (l *logb) post(body string, status int, ct string, resp *string, trigger ...string) {
	l.t.Helper()
	r := schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: "http://127.0.0.1:8080/mcp", Body: str(body)},
		Response: &schema.WireResponse{Status: status, ContentType: ct, Body: resp}}}
	if ct == "text/event-stream" {
		r.HTTP.Response.StreamEnd = schema.StreamComplete
	}
	if len(trigger) > 0 {
		r.Trigger = trigger[0]
	}
	add(l, r)
}

func (l *logb) fail(body, kind string) {
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(body)}, Failure: &schema.WireFailure{Kind: kind}}})
}

func (l *logb) get(stream string, lastEventID string, end string) {
	h := map[string]any{}
	if lastEventID != "" {
		h["Last-Event-ID"] = lastEventID
	}
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "GET", URL: "http://127.0.0.1:8080/mcp", Headers: h},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: str(stream), StreamEnd: end}}})
}

func (l *logb) stdio(dir, line string) {
	add(l, schema.WireRecord{Stdio: &schema.WireStdio{Direction: dir, Line: line}})
}

func run(l *logb) ([]*schema.Exchange, correlate.Stats) {
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	return out, c.Stats
}

func sse(msgs ...string) *string {
	s := ""
	for _, m := range msgs {
		s += "event: message\ndata: " + m + "\n\n"
	}
	return &s
}

func ok(id any) string {
	idj, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, idj)
}

type want struct {
	method, outcome, retry string
	posts                  int32
	statuses               string
}

func expect(t *testing.T, got []*schema.Exchange, wants ...want) {
	t.Helper()
	if len(got) != len(wants) {
		for _, g := range got {
			t.Logf("got %s %s %s %v", g.Method, g.Outcome, g.Reason, g.HTTPStatuses)
		}
		t.Fatalf("got %d exchanges, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		st := fmt.Sprint(g.HTTPStatuses)
		if g.Method != w.method || g.Outcome != w.outcome || g.RetryOrigin != w.retry || g.PostCount != w.posts || st != w.statuses {
			t.Errorf("exchange %d: got %s %s retry=%s posts=%d %s (%s), want %+v", i, g.Method, g.Outcome, g.RetryOrigin, g.PostCount, st, g.Reason, w)
		}
	}
}

func TestPairingAndSDKRetry(t *testing.T) {
	l := newLog(t)
	call := req(1, "tools/call", `{"name":"search","arguments":{"q":"x"}}`)
	l.post(call, 503, "", str(""))
	l.post(call, 200, "text/event-stream", sse(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, ok(1),
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"done"}}`))
	l.post(req(nil, "notifications/initialized", ""), 202, "", nil)
	got, st := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "sdk", 2, "[503 200]"})
	g := got[0]
	if g.JSONRPCID == nil || *g.JSONRPCID != "1" || *g.JSONRPCIDType != "number" || g.ToolName == nil || *g.ToolName != "search" {
		t.Errorf("ids: %+v", g)
	}
	if g.SSEEvents == nil || *g.SSEEvents != 3 || g.StreamComplete == nil || !*g.StreamComplete || g.LatencyMS == nil || *g.LatencyMS != 15 {
		t.Errorf("stream columns: events=%v complete=%v latency=%v", g.SSEEvents, g.StreamComplete, g.LatencyMS)
	}
	if st.Notifications != 3 || st.Exchanges != 1 || st.Contributing != 2 || st.NotificationOnly != 1 {
		t.Errorf("stats: %+v", st)
	}
}

func TestStatusesSpreadOverTwoRequestsAreNotARetry(t *testing.T) {
	l := newLog(t)
	l.post(req(1, "tools/list", ""), 503, "", str(""))
	l.post(req(2, "tools/call", `{"name":"a"}`), 200, "application/json", str(ok(2)))
	got, _ := run(l)
	expect(t, got,
		want{"tools/call", "TOOL_SUCCESS", "none", 1, "[200]"},
		want{"tools/list", "HTTP_ERROR", "none", 1, "[503]"}) // open failures are judged at the end
}

func TestApplicationRetryIsANewExchange(t *testing.T) {
	l := newLog(t)
	call := req(1, "tools/call", `{"name":"synthetic","arguments":{}}`)
	l.post(call, 503, "application/json", str(`{"note":"outage"}`))
	l.post(call, 200, "application/json", str(ok(1)), schema.TriggerApplication)
	got, _ := run(l)
	if len(got) != 2 {
		t.Fatalf("got %d exchanges", len(got))
	}
	// The success finishes first; the failure is judged at the end.
	var first, second *schema.Exchange
	for _, g := range got {
		if g.Outcome == "HTTP_ERROR" {
			first = g
		} else {
			second = g
		}
	}
	if first == nil || second == nil || second.RetryOrigin != "application" || second.RetryOf == nil || *second.RetryOf != first.ExchangeID || first.RetryOrigin != "none" {
		t.Fatalf("retry link: first=%+v second=%+v", first, second)
	}
}

func TestIDReuseWithOtherParamsIsNotARetry(t *testing.T) {
	l := newLog(t)
	l.post(req(1, "tools/call", `{"name":"a"}`), 200, "application/json", str(ok(1)))
	l.post(req(1, "tools/call", `{"name":"b"}`), 200, "application/json", str(ok(1)))
	got, _ := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[200]"}, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[200]"})
	if got[0].ExchangeID == got[1].ExchangeID {
		t.Error("two exchanges share an id")
	}
}

func TestWrongAndMistypedIDs(t *testing.T) {
	l := newLog(t)
	l.post(req(1, "tools/call", `{"name":"a"}`), 200, "application/json", str(ok(99)))
	l.conn = "c2"
	l.post(req(1, "tools/call", `{"name":"a"}`), 200, "application/json", str(ok("1")))
	got, _ := run(l)
	expect(t, got, want{"tools/call", "INVALID_ENVELOPE", "none", 1, "[200]"}, want{"tools/call", "INVALID_ENVELOPE", "none", 1, "[200]"})
}

func TestResponseOnGetStream(t *testing.T) {
	// The POST is answered 202; the response arrives on the standalone GET
	// stream, whose record is written when the stream ends.
	l := newLog(t)
	l.sess = "sess-1"
	l.post(req("a-1", "tools/call", `{"name":"a"}`), 202, "", str("Accepted")) // the TypeScript SDK says so in plain text
	l.get(*sse(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, ok("a-1")), "", schema.StreamClientClosed)
	got, st := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[202]"})
	if got[0].ResponseWhere == nil || *got[0].ResponseWhere != "get_stream" || *got[0].JSONRPCIDType != "string" {
		t.Errorf("where: %v", got[0].ResponseWhere)
	}
	if st.Notifications != 1 || st.StrayMessages != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStreamRecordBeforeItsRequest(t *testing.T) {
	// A stream logged in one record that started before the POST.
	l := newLog(t)
	l.sess = "sess-2"
	l.get(*sse(ok(5)), "ev-3", schema.StreamComplete)
	l.post(req(5, "tools/call", `{"name":"a"}`), 202, "", str(""))
	got, st := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[202]"})
	if *got[0].ResponseWhere != "resumed_stream" || st.StrayMessages != 0 {
		t.Errorf("where %v stats %+v", *got[0].ResponseWhere, st)
	}
}

func TestStreamCutThenResumed(t *testing.T) {
	l := newLog(t)
	l.sess = "sess-3"
	cut := "id: e1\nretry: 500\ndata: \n\n"
	r := schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(req(7, "tools/call", `{"name":"a"}`))},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &cut, StreamEnd: schema.StreamReset}}}
	add(l, r)
	l.get("id: e2\ndata: "+ok(7)+"\n\n", "e1", schema.StreamComplete)
	l.conn, l.sess = "other", "sess-4"
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(req(8, "tools/call", `{"name":"a"}`))},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &cut, StreamEnd: schema.StreamReset}}})
	got, _ := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[200]"}, want{"tools/call", "STREAM_INCOMPLETE", "none", 1, "[200]"})
}

func TestBatch(t *testing.T) {
	l := newLog(t)
	l.ver = "2025-03-26"
	body := "[" + req(1, "tools/list", "") + "," + req(2, "tools/call", `{"name":"a"}`) + "," + req(nil, "notifications/progress", "") + "]"
	resp := `[{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`
	l.post(body, 200, "application/json", &resp)
	got, st := run(l)
	expect(t, got, want{"tools/list", "SUCCESS", "none", 1, "[200]"}, want{"tools/call", "TOOL_ERROR", "none", 1, "[200]"})
	if st.Notifications != 1 {
		t.Errorf("notifications %d", st.Notifications)
	}
}

func TestCancellation(t *testing.T) {
	l := newLog(t)
	l.fail(req(4, "tools/call", `{"name":"slow"}`), schema.FailureClientAbort)
	l.post(req(nil, "notifications/cancelled", `{"requestId":4,"reason":"timeout"}`), 202, "", str(""))
	got, _ := run(l)
	expect(t, got, want{"tools/call", "CANCELLED", "none", 1, "[0]"})
	if !got[0].Cancelled || got[0].TransportFail == nil || *got[0].TransportFail != "client_abort" {
		t.Errorf("cancel columns: %+v", got[0])
	}
}

func TestServerInitiatedRequest(t *testing.T) {
	l := newLog(t)
	elicit := `{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"ok?"}}`
	l.post(req(3, "tools/call", `{"name":"a"}`), 200, "text/event-stream", sse(elicit, ok(3)))
	l.post(`{"jsonrpc":"2.0","id":"srv-1","result":{"action":"accept","content":{}}}`, 202, "", str(""))
	got, _ := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[200]"}, want{"elicitation/create", "SUCCESS", "none", 0, "[]"})
	if got[1].Initiator != "server" {
		t.Errorf("initiator %s", got[1].Initiator)
	}
}

func TestStdio(t *testing.T) {
	l := newLog(t)
	l.stdio("c2s", req(0, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}}`))
	l.stdio("s2c", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fs","version":"2.0"}}}`)
	l.stdio("c2s", req(nil, "notifications/initialized", ""))
	l.stdio("stderr", "Secure MCP Filesystem Server running on stdio")
	l.stdio("c2s", req(1, "tools/call", `{"name":"read"}`))
	l.stdio("s2c", "Starting up, please wait")
	l.stdio("c2s", req(2, "tools/call", `{"name":"read"}`))
	l.stdio("s2c", `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`)
	got, st := run(l)
	expect(t, got,
		want{"initialize", "SUCCESS", "none", 0, "[]"},
		want{"tools/call", "TOOL_ERROR", "none", 0, "[]"},
		want{"tools/call", "MALFORMED_JSON", "none", 0, "[]"})
	if got[1].ServerName == nil || *got[1].ServerName != "fs" || got[1].ClientName == nil || *got[1].ClientName != "claude-ai" || *got[1].ProtocolVersion != "2025-11-25" {
		t.Errorf("identity: %+v", got[1])
	}
	if st.Stderr != 1 || st.Observations != 8 || st.Contributing+st.NotificationOnly+st.Stray+st.Stderr+st.Other != st.Observations {
		t.Errorf("stats %+v", st)
	}
}

func TestOrphanResponseIsCounted(t *testing.T) {
	l := newLog(t)
	l.stdio("s2c", `{"jsonrpc":"2.0","id":42,"result":{}}`)
	got, st := run(l)
	if len(got) != 0 || st.StrayMessages != 1 {
		t.Errorf("got %d exchanges, stats %+v", len(got), st)
	}
}

func TestExchangeIDsAreDeterministic(t *testing.T) {
	build := func() []*schema.Exchange {
		l := newLog(t)
		l.post(req(1, "tools/call", `{"name":"a"}`), 200, "application/json", str(ok(1)))
		l.post(req(2, "tools/call", `{"name":"a"}`), 500, "", str(""))
		got, _ := run(l)
		return got
	}
	a, b := build(), build()
	ids := map[string]bool{}
	for i := range a {
		ids[a[i].ExchangeID] = true
		found := false
		for j := range b {
			found = found || b[j].ExchangeID == a[i].ExchangeID
		}
		if !found {
			t.Errorf("exchange id %s not reproduced", a[i].ExchangeID)
		}
	}
	if len(ids) != 2 {
		t.Errorf("ids collide: %v", ids)
	}
}

func TestManyOpenExchangesAtFlush(t *testing.T) {
	l := newLog(t)
	for i := 0; i < 200; i++ {
		l.fail(req(i, "tools/call", `{"name":"a"}`), schema.FailureConnectionRefused)
		if i%3 == 0 {
			l.post(req(1000+i, "ping", ""), 200, "application/json", str(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, 1000+i)))
		}
	}
	got, st := run(l)
	counts := map[string]int{}
	for _, g := range got {
		counts[g.Outcome]++
	}
	if counts["NO_RESPONSE"] != 200 || counts["SUCCESS"] != 67 || st.Exchanges != 267 {
		t.Errorf("outcomes %v, stats %+v", counts, st)
	}
}

func TestBatchRejectedWhole(t *testing.T) {
	l := newLog(t)
	l.ver = "2025-11-25"
	body := "[" + req(1, "tools/list", "") + "," + req(2, "tools/call", `{"name":"a"}`) + "]"
	l.post(body, 200, "application/json", str(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Batches are not supported"}}`))
	l.conn = "c2"
	l.ver = "2025-03-26"
	resp := `[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}},{"jsonrpc":"2.0","id":9,"result":{}}]`
	l.post(body, 200, "application/json", &resp)
	got, st := run(l)
	expect(t, got,
		want{"tools/list", "JSONRPC_ERROR", "none", 1, "[200]"},
		want{"tools/call", "JSONRPC_ERROR", "none", 1, "[200]"},
		want{"tools/list", "SUCCESS", "none", 1, "[200]"},
		want{"tools/call", "NO_RESPONSE", "none", 1, "[200]"})
	if *got[0].ErrorCode != -32600 || st.StrayMessages != 1 {
		t.Errorf("error code %d, stray %d (the id-9 response answers no member)", *got[0].ErrorCode, st.StrayMessages)
	}
}

func TestStreamResponseGoesToTheLatestSend(t *testing.T) {
	l := newLog(t)
	l.sess = "s"
	call := req(7, "tools/call", `{"name":"a"}`)
	cut := "id: e1\ndata: \n\n"
	rec := func(trigger string) schema.WireRecord {
		return schema.WireRecord{Trigger: trigger, HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(call)},
			Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &cut, StreamEnd: schema.StreamReset}}}
	}
	add(l, rec(""))
	add(l, rec(schema.TriggerApplication))
	l.get(*sse(ok(7)), "", schema.StreamComplete)
	got, _ := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "application", 1, "[200]"}, want{"tools/call", "STREAM_INCOMPLETE", "none", 1, "[200]"})
}

func TestDuplicateResponseIsNotParked(t *testing.T) {
	l := newLog(t)
	l.sess = "s"
	l.post(req(1, "tools/call", `{"name":"a"}`), 202, "", str(""))
	l.get(*sse(ok(1), ok(1)), "", schema.StreamComplete) // replayed twice
	l.post(req(1, "tools/call", `{"name":"b"}`), 202, "", str(""))
	got, st := run(l)
	expect(t, got, want{"tools/call", "TOOL_SUCCESS", "none", 1, "[202]"}, want{"tools/call", "NO_RESPONSE", "none", 1, "[202]"})
	if st.StrayMessages != 1 {
		t.Errorf("stray %d", st.StrayMessages)
	}
}

func TestCancelLoggedBeforeItsRequest(t *testing.T) {
	l := newLog(t)
	l.post(req(nil, "notifications/cancelled", `{"requestId":4,"reason":"timeout"}`), 202, "", str(""))
	l.fail(req(4, "tools/call", `{"name":"slow"}`), schema.FailureClientAbort)
	got, _ := run(l)
	expect(t, got, want{"tools/call", "CANCELLED", "none", 1, "[0]"})
}

func TestObservationLabels(t *testing.T) {
	l := newLog(t)
	l.stdio("s2c", `{"jsonrpc":"2.0","id":42,"result":{}}`) // never answered anything
	l.stdio("s2c", `{"jsonrpc":"2.0","id":5,"result":{}}`)  // answers a request logged later
	l.stdio("c2s", req(5, "ping", ""))
	_, st := run(l)
	if st.Stray != 1 || st.Contributing != 2 || st.Parked != 0 || st.StrayMessages != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestPairedRecords(t *testing.T) {
	mk := func(line int64, msgs []string, rep *schema.Reported) *schema.Observation {
		o := &schema.Observation{Pos: schema.Position{Source: "inspector.json", Line: line}, Side: schema.SideClient, Transport: schema.TransportStreamableHTTP,
			Time: time.Date(2026, 5, 27, 10, 0, 0, 0, time.UTC), Paired: true, Reported: rep, Format: "inspector-history"}
		o.EndTime = o.Time.Add(12 * time.Millisecond)
		for _, m := range msgs {
			o.Messages = decode.AppendMessages(o.Messages, []byte(m), schema.InRecord, 0)
		}
		return o
	}
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.Add(mk(1, []string{req(3, "tools/call", `{"name":"add"}`), `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}`}, nil))
	c.Add(mk(2, []string{req(4, "tools/call", `{"name":"add"}`)}, &schema.Reported{ErrorType: "tool_error"}))
	c.Add(mk(3, []string{req(5, "tools/call", `{"name":"add"}`)}, nil))
	c.Add(mk(4, []string{req(nil, "notifications/message", "")}, nil))
	c.Flush()
	if len(out) != 3 || out[0].Outcome != "JSONRPC_ERROR" || out[1].Outcome != "TOOL_ERROR" || out[2].Outcome != "NO_RESPONSE" {
		for _, g := range out {
			t.Logf("%s %s", g.Outcome, g.Reason)
		}
		t.Fatalf("paired outcomes wrong")
	}
	if out[0].PostCount != 0 || len(out[0].HTTPStatuses) != 0 || out[0].LatencyMS == nil || *out[0].LatencyMS != 12 || out[0].Format != "inspector-history" {
		t.Errorf("paired columns: %+v", out[0])
	}
	if c.Stats.Notifications != 1 || c.Stats.NotificationOnly != 1 || c.Stats.Contributing != 3 {
		t.Errorf("stats %+v", c.Stats)
	}
}

func TestFrameThenHTTPStatusIsOneSend(t *testing.T) {
	// VS Code logs the frame it sends, then "Error 429 status sending
	// message": one send, not an SDK retry.
	l := newLog(t)
	call := req(6, "tools/call", `{"name":"search"}`)
	l.stdio("c2s", call)
	l.post(call, 429, "", str(`{"statusCode":429}`))
	got, _ := run(l)
	expect(t, got, want{"tools/call", "HTTP_ERROR", "none", 1, "[429]"})
	if got[0].Transport != "streamable-http" {
		t.Errorf("transport %s", got[0].Transport)
	}
}

func TestLostGetStreamMakes202Unknown(t *testing.T) {
	l := newLog(t)
	l.sess = "legacy"
	l.post(req(1, "tools/call", `{"name":"a"}`), 202, "", str("Accepted"))
	add(l, schema.WireRecord{Transport: schema.TransportHTTPSSE, HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "GET", URL: "http://h/sse"},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream"}}}) // body not recorded
	got, _ := run(l)
	expect(t, got, want{"tools/call", "UNKNOWN", "none", 1, "[202]"})
}

func TestPairedRecordWithoutEndHasNoLatency(t *testing.T) {
	o := &schema.Observation{Pos: schema.Position{Source: "logs.ndjson", Line: 1}, Side: schema.SideClient, Transport: schema.TransportStreamableHTTP,
		Time: time.Date(2026, 5, 27, 10, 0, 0, 0, time.UTC), Paired: true, Reported: &schema.Reported{OK: true}, Format: "otlp-logs"}
	o.Messages = decode.AppendMessages(nil, []byte(req(1, "tools/call", `{"name":"a"}`)), schema.InRecord, 0)
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.Add(o)
	c.Flush()
	if len(out) != 1 || out[0].Outcome != "TOOL_SUCCESS" || out[0].LatencyMS != nil {
		t.Fatalf("got %+v", out)
	}
}
