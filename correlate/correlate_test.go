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

func byID(got []*schema.Exchange) map[string]*schema.Exchange {
	m := map[string]*schema.Exchange{}
	for _, g := range got {
		if g.JSONRPCID != nil {
			m[*g.JSONRPCID] = g
		}
	}
	return m
}

func TestApplicationRetriesAndDuplicates(t *testing.T) {
	l := newLog(t)
	call := func(id int) string {
		return req(id, "tools/call", `{"name":"create_ticket","arguments":{"title":"disk full"}}`)
	}
	l.post(call(1), 502, "text/html", str("<html>bad gateway</html>"))
	l.post(call(2), 200, "application/json", str(ok(2))) // same call, new id, after a failure
	l.post(req(3, "tools/call", `{"name":"create_ticket","arguments":{"title":"other"}}`), 200, "application/json", str(ok(3)))
	l.clock = l.clock.Add(-7 * time.Millisecond) // the next send is 3 ms after the previous one
	l.post(req(4, "tools/call", `{"name":"create_ticket","arguments":{"title":"other"}}`), 200, "application/json", str(ok(4)))
	l.clock = l.clock.Add(time.Minute)
	l.post(req(5, "tools/call", `{"name":"create_ticket","arguments":{"title":"other"}}`), 200, "application/json", str(ok(5)))
	l.post(call(6), 200, "application/json", str(`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"boom"}}`))
	add(l, schema.WireRecord{Trigger: schema.TriggerManual, HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(call(7))},
		Response: &schema.WireResponse{Status: 200, ContentType: "application/json", Body: str(ok(7))}}})
	got, _ := run(l)
	x := byID(got)
	if x["2"].RetryOrigin != "application" || *x["2"].RetryOf != x["1"].ExchangeID || *x["2"].RetryBasis != "same_call_after_failure" || !x["2"].RetryUnsafe {
		t.Errorf("retry after 502: %+v", x["2"])
	}
	if x["4"].DuplicateOf == nil || *x["4"].DuplicateOf != x["3"].ExchangeID || x["4"].RetryOrigin != "none" {
		t.Errorf("duplicate 3 ms apart: %+v", x["4"])
	}
	if x["5"].DuplicateOf != nil || x["5"].RetryOrigin != "none" {
		t.Errorf("the same call a minute after a success is a new call: %+v", x["5"])
	}
	if x["7"].RetryOrigin != "manual" || *x["7"].RetryOf != x["6"].ExchangeID || x["7"].RetryUnsafe {
		t.Errorf("manual retry after a JSON-RPC error (certain, so not unsafe): %+v", x["7"])
	}
	if x["1"].RetryOrigin != "none" || x["3"].RetryOrigin != "none" {
		t.Errorf("first sends are not retries")
	}
}

func TestRetrySafetyAndRetryAfter(t *testing.T) {
	l := newLog(t)
	list := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_weather","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
		`{"name":"charge_card","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}]}}`
	l.post(req(1, "tools/list", ""), 200, "application/json", &list)
	weather := req(2, "tools/call", `{"name":"get_weather","arguments":{"city":"Oslo"}}`)
	l.post(weather, 503, "", str(""))
	l.post(weather, 200, "application/json", str(ok(2))) // SDK re-POST of a read-only tool: safe
	charge := req(3, "tools/call", `{"name":"charge_card","arguments":{"amount":12}}`)
	l.fail(charge, schema.FailureTimeout)
	l.post(charge, 200, "application/json", str(ok(3))) // re-POST after a timeout: unsafe
	rec := schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(req(4, "tools/call", `{"name":"charge_card","arguments":{"amount":5}}`))},
		Response: &schema.WireResponse{Status: 429, Headers: map[string]any{"Retry-After": "2"}, Body: str("")}}}
	add(l, rec)
	l.post(req(5, "tools/call", `{"name":"charge_card","arguments":{"amount":5}}`), 200, "application/json", str(ok(5))) // 10 ms later
	l.clock = l.clock.Add(3 * time.Second)
	add(l, rec)
	l.clock = l.clock.Add(3 * time.Second)
	l.post(req(4, "tools/call", `{"name":"charge_card","arguments":{"amount":5}}`), 200, "application/json", str(ok(4)))
	got, _ := run(l)
	x := byID(got)
	if x["2"].RetryOrigin != "sdk" || x["2"].RetryUnsafe {
		t.Errorf("read-only re-POST: %+v", x["2"])
	}
	if x["3"].RetryOrigin != "sdk" || !x["3"].RetryUnsafe || *x["3"].RetryBasis != "same_id" {
		t.Errorf("charge re-POST after timeout: %+v", x["3"])
	}
	if x["5"].RetryAfterS == nil || *x["5"].RetryAfterS != 2 || *x["5"].RetryAfterOK || x["5"].RetryUnsafe {
		t.Errorf("retry 10 ms after Retry-After: 2 (a 429 is certain): %+v", x["5"])
	}
	if x["4"].RetryAfterS == nil || !*x["4"].RetryAfterOK {
		t.Errorf("re-POST 3 s after Retry-After: 2: %+v", x["4"])
	}
}

func TestMRTRChain(t *testing.T) {
	l := newLog(t)
	l.ver = "2026-07-28"
	ask := func(id int, state string) *string {
		return str(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","inputRequests":{"reason":{"method":"elicitation/create","params":{"message":"why?"}}},"requestState":%q}}`, id, state))
	}
	l.post(req(10, "tools/call", `{"name":"close_ticket","arguments":{"ticketId":99}}`), 200, "application/json", ask(10, "s1"))
	l.post(req(11, "tools/call", `{"name":"close_ticket","arguments":{"ticketId":99},"inputResponses":{"reason":{"action":"accept","content":{}}},"requestState":"s1"}`), 200, "application/json", ask(11, "s2"))
	l.post(req(12, "tools/call", `{"name":"close_ticket","arguments":{"ticketId":99},"inputResponses":{"reason":{"action":"accept","content":{"reason":"done"}}},"requestState":"s2"}`), 200, "application/json", str(ok(12)))
	// An unfinished chain at the end of the log keeps INPUT_REQUIRED.
	l.post(req(20, "tools/call", `{"name":"close_ticket","arguments":{"ticketId":7}}`), 200, "application/json", ask(20, "t1"))
	got, _ := run(l)
	x := byID(got)
	for i, id := range []string{"10", "11", "12"} {
		g := x[id]
		if g.ChainOutcome == nil || *g.ChainOutcome != "TOOL_SUCCESS" || g.MRTRRound == nil || *g.MRTRRound != int32(i+1) || g.RetryOrigin != "none" {
			t.Errorf("round %s: chain %v round %v retry %s", id, g.ChainOutcome, g.MRTRRound, g.RetryOrigin)
		}
	}
	if x["10"].Continues != nil || *x["11"].Continues != x["10"].ExchangeID || *x["12"].Continues != x["11"].ExchangeID {
		t.Error("continues links")
	}
	if x["10"].Outcome != "INPUT_REQUIRED" || x["12"].Outcome != "TOOL_SUCCESS" {
		t.Error("round outcomes")
	}
	if g := x["20"]; g.ChainOutcome == nil || *g.ChainOutcome != "INPUT_REQUIRED" || *g.MRTRRound != 1 {
		t.Errorf("open chain: %+v", g)
	}
}

func TestSessionExpiryLateResponseAndCancelledStreamRetry(t *testing.T) {
	l := newLog(t)
	l.sess = "s-old"
	l.post(req(1, "tools/list", ""), 404, "application/json", str(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`))
	l.sess = "s-2"
	l.post(req(2, "tools/call", `{"name":"slow"}`), 202, "", str(""))
	l.post(req(nil, "notifications/cancelled", `{"requestId":2}`), 202, "", str(""))
	l.get(*sse(ok(2)), "", schema.StreamComplete)
	// 2026-07-28: the client closes the stream (a cancellation) and
	// re-issues the call under a new id.
	l.sess, l.ver = "", "2026-07-28"
	l.conn = "c-2026"
	cut := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n\n"
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(req(3, "tools/call", `{"name":"search","arguments":{"q":"x"}}`))},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &cut, StreamEnd: schema.StreamClientClosed}}})
	l.post(req(4, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), 200, "application/json", str(ok(4)))
	got, _ := run(l)
	x := byID(got)
	if !x["1"].SessionExpired || x["1"].RetryAdvice != "reinitialize_session" {
		t.Errorf("404 on a session: %+v", x["1"])
	}
	if x["2"].Outcome != "CANCELLED" || !x["2"].LateResponse || !x["2"].Cancelled {
		t.Errorf("late response: %+v", x["2"])
	}
	if x["3"].Outcome != "CANCELLED" || x["4"].RetryOrigin != "application" || *x["4"].RetryOf != x["3"].ExchangeID {
		t.Errorf("2026 closed stream then re-issue: %s / %s", x["3"].Outcome, x["4"].RetryOrigin)
	}
}

func TestNextSessionRetryAndReinitialization(t *testing.T) {
	l := newLog(t)
	call := req(7, "tools/call", `{"name":"send_invoice","arguments":{"to":"acme"}}`)
	l.sess = "s-1"
	l.post(call, 404, "application/json", str(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`))
	// The client re-initializes (no session id yet) and repeats the call in its new session.
	l.sess = ""
	l.post(req(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), 200, "application/json",
		str(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	l.sess = "s-2"
	l.post(req(1, "tools/call", `{"name":"send_invoice","arguments":{"to":"acme"}}`), 200, "application/json", str(ok(1)))
	// A log where the session expires and the client never comes back.
	l2 := newLog(t)
	l2.sess = "s-9"
	l2.post(call, 404, "", str(""))
	got, _ := run(l)
	got2, _ := run(l2)
	x := byID(got)
	if !x["7"].SessionExpired || x["7"].Reinitialized == nil || !*x["7"].Reinitialized {
		t.Errorf("expired then re-initialized: %+v", x["7"])
	}
	if x["1"].RetryOrigin != "application" || *x["1"].RetryBasis != "same_call_next_session" || *x["1"].RetryOf != x["7"].ExchangeID {
		t.Errorf("retry in the next session: %+v", x["1"])
	}
	if len(got2) != 1 || got2[0].Reinitialized == nil || *got2[0].Reinitialized {
		t.Errorf("expired, never re-initialized: %+v", got2)
	}
}

func TestStdioRepeatOfTheSameFrameIsUnknownOrigin(t *testing.T) {
	l := newLog(t)
	call := req(3, "tools/call", `{"name":"a"}`)
	l.stdio("c2s", call)
	l.stdio("c2s", call)
	l.stdio("s2c", ok(3))
	got, _ := run(l)
	if len(got) != 1 || got[0].RetryOrigin != "unknown" || got[0].Outcome != "TOOL_SUCCESS" {
		t.Errorf("got %+v", got)
	}
}

func TestConversationsEnd(t *testing.T) {
	l := newLog(t)
	l.sess = "s-1"
	l.post(req(1, "tools/call", `{"name":"a"}`), 202, "", str("")) // answered on a stream later... or never
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "DELETE", URL: "http://h/mcp"}, Response: &schema.WireResponse{Status: 200, Body: str("")}}})
	l.get(*sse(ok(1)), "", schema.StreamComplete) // logged when the stream ended, after the DELETE: still pairs
	l.sess = "s-2"
	l.post(req(2, "tools/call", `{"name":"a"}`), 202, "", str(""))
	l.clock = l.clock.Add(2 * time.Hour) // idle far past the timeout
	l.sess = "s-3"
	l.post(req(3, "tools/call", `{"name":"b"}`), 200, "application/json", str(ok(3)))
	l.clock = l.clock.Add(-30 * time.Minute) // a record well behind the newest
	l.sess = "s-4"
	l.post(req(4, "tools/call", `{"name":"c"}`), 200, "application/json", str(ok(4)))

	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.IdleTimeout, c.Lateness = 10*time.Minute, 5*time.Minute
	open := 0
	for i, o := range l.obs {
		c.Add(o)
		if i == 4 { // after the 2-hour gap: s-1 ended on DELETE, s-2 on idle
			open = c.OpenConversations()
		}
	}
	beforeFlush := len(out)
	c.Flush()
	x := byID(out)
	if open != 1 || beforeFlush != 4 {
		t.Errorf("open conversations %d (want 1), rows before the end %d (want 4)", open, beforeFlush)
	}
	if x["1"].Outcome != "TOOL_SUCCESS" || x["2"].Outcome != "NO_RESPONSE" || c.Stats.StrayMessages != 0 {
		t.Errorf("ended conversations: %s %s, stray %d", x["1"].Outcome, x["2"].Outcome, c.Stats.StrayMessages)
	}
	if x["3"].Late || !x["4"].Late || c.Stats.Closed != 4 {
		t.Errorf("late flags %v %v, closed %d", x["3"].Late, x["4"].Late, c.Stats.Closed)
	}
}

func TestCancelAfterCutStreamKeepsTheRootCause(t *testing.T) {
	l := newLog(t)
	cut := "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n\n"
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(req(9, "tools/call", `{"name":"a"}`))},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &cut, StreamEnd: schema.StreamReset}}})
	l.post(req(nil, "notifications/cancelled", `{"requestId":9}`), 202, "", str(""))
	got, _ := run(l)
	if len(got) != 1 || got[0].Outcome != "STREAM_INCOMPLETE" || !got[0].Cancelled || got[0].LateResponse {
		t.Errorf("got %+v", got)
	}
}

func TestOrdinaryTrafficIsNotARetry(t *testing.T) {
	l := newLog(t)
	l.ver = "2026-07-28"
	// Polling: the same call every 30 ms, each answered before the next.
	for i := 0; i < 4; i++ {
		l.post(req(100+i, "tools/call", `{"name":"status","arguments":{}}`), 200, "application/json", str(ok(100+i)))
		l.clock = l.clock.Add(15 * time.Millisecond)
	}
	// 2026-07-28 id reuse: id 1 again, same call, after the first succeeded.
	l.post(req(1, "tools/call", `{"name":"ping_db","arguments":{}}`), 200, "application/json", str(ok(1)))
	l.post(req(1, "tools/call", `{"name":"ping_db","arguments":{}}`), 200, "application/json", str(ok(1)))
	// A failure, then the same call three hours later.
	l.post(req(7, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), 200, "application/json", str(`{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}`))
	l.clock = l.clock.Add(3 * time.Hour)
	l.post(req(8, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), 200, "application/json", str(ok(8)))
	got, _ := run(l)
	for _, g := range got {
		if g.RetryOrigin != "none" || g.DuplicateOf != nil {
			t.Errorf("id %s: retry %s duplicate_of %v", *g.JSONRPCID, g.RetryOrigin, g.DuplicateOf)
		}
	}
}

func TestSessionsOfDifferentClientsAreNotLinked(t *testing.T) {
	l := newLog(t)
	l.side = schema.SideServer
	init := func(name string) string {
		return req(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+name+`","version":"1"}}`)
	}
	initOK := str(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	l.sess = "alice"
	l.post(init("alice-agent"), 200, "application/json", initOK)
	l.post(req(1, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), 404, "", str(""))
	l.sess = "bob"
	l.post(init("bob-agent"), 200, "application/json", initOK)
	l.post(req(1, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), 200, "application/json", str(ok(1)))
	got, _ := run(l)
	for _, g := range got {
		if g.RetryOrigin != "none" || g.DuplicateOf != nil {
			t.Errorf("%s id %s: retry %s", g.Method, *g.JSONRPCID, g.RetryOrigin)
		}
	}
}

func TestChainAcrossConversationsAndPromptsAndDelete405(t *testing.T) {
	l := newLog(t)
	l.ver = "2026-07-28"
	ask := str(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`)
	l.sess = "A"
	l.post(req(1, "tools/call", `{"name":"close","arguments":{"t":1}}`), 200, "application/json", ask)
	l.sess = "B" // a continuation in another conversation does not join A's chain
	l.post(req(2, "tools/call", `{"name":"close","arguments":{"t":1},"requestState":"s"}`), 200, "application/json", str(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s2"}}`))
	l.sess = "C"
	l.post(req(3, "prompts/get", `{"name":"summary"}`), 503, "", str(""))
	l.post(req(3, "prompts/get", `{"name":"summary"}`), 200, "application/json", str(`{"jsonrpc":"2.0","id":3,"result":{"messages":[]}}`))
	l.post(req(4, "tools/call", `{"name":"slow"}`), 202, "", str(""))
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "DELETE"}, Response: &schema.WireResponse{Status: 405, Body: str("")}}})
	l.get(*sse(ok(4)), "", schema.StreamComplete)
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.IdleTimeout = time.Minute
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	x := byID(out)
	if len(out) != 4 || x["2"].Continues != nil || x["1"].ChainOutcome == nil {
		t.Fatalf("rows %d, continues %v", len(out), x["2"].Continues)
	}
	if x["3"].RetryOrigin != "sdk" || x["3"].RetryUnsafe {
		t.Errorf("prompts/get re-POST: %s unsafe %v", x["3"].RetryOrigin, x["3"].RetryUnsafe)
	}
	if x["4"].Outcome != "TOOL_SUCCESS" {
		t.Errorf("a DELETE answered 405 ended the conversation: %s", x["4"].Outcome)
	}
}

// TestLatencyNullWhenClockGoesBack: a same-id re-POST logged with an
// earlier clock than the first attempt (another host's clock, a clock step)
// gives the exchange no latency instead of a negative one; an ordinary
// exchange still has its latency.
func TestLatencyNullWhenClockGoesBack(t *testing.T) {
	l := newLog(t)
	call := req(7, "tools/call", `{"name":"get_weather","arguments":{"city":"Oslo"}}`)
	l.post(call, 503, "", str(""))
	l.clock = l.clock.Add(-time.Minute)
	l.post(call, 200, "application/json", str(ok(7)))
	l.post(req(8, "tools/list", ""), 200, "application/json", str(`{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}`))
	got, _ := run(l)
	x := byID(got)
	if x["7"] == nil || x["8"] == nil {
		t.Fatalf("rows: %+v", got)
	}
	if x["7"].PostCount != 2 || !x["7"].EndedAt.Before(x["7"].StartedAt) {
		t.Fatalf("the re-POST is not the same exchange, or its clock did not go back: %+v", x["7"])
	}
	if x["7"].LatencyMS != nil {
		t.Errorf("latency_ms %v for an exchange that ended before it started; want null", *x["7"].LatencyMS)
	}
	if x["8"].LatencyMS == nil || *x["8"].LatencyMS != 5 {
		t.Errorf("latency_ms of an ordinary exchange: %v, want 5", x["8"].LatencyMS)
	}
}
