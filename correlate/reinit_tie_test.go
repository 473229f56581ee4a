package correlate_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"mcptrace/decode"
	"mcptrace/schema"
)

// A client that re-initializes as soon as it sees a 404, logged in
// milliseconds: the initialize starts in the millisecond the 404 ended, or,
// in a HAR (startedDateTime in milliseconds, time in microseconds), seems to
// start a fraction of a millisecond before it ended. It re-initialized
// (reinitialized true), and the call it repeats in the new session is an
// application retry of the one that got the 404.
func TestReinitializeInTheSameMillisecond(t *testing.T) {
	for _, endUS := range []int{3000, 3600} {
		t.Run(strconv.Itoa(endUS), func(t *testing.T) { reinitTie(t, endUS) })
	}
}

func reinitTie(t *testing.T, endUS int) {
	l := newLog(t)
	at := func(us int) string {
		return time.Date(2026, 10, 17, 10, 0, 0, us*int(time.Microsecond), time.UTC).Format(time.RFC3339Nano)
	}
	rec := func(start, end int, session, body string, status int, resp string, respSession string) {
		r := schema.WireRecord{Time: at(start * 1000), EndTime: at(end), SessionID: session, Client: &schema.Implementation{Name: "c"},
			HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: "http://127.0.0.1:8080/mcp", Body: str(body)},
				Response: &schema.WireResponse{Status: status, ContentType: "application/json", Body: str(resp)}}}
		if respSession != "" {
			r.HTTP.Response.Headers = map[string]any{"Mcp-Session-Id": respSession}
		}
		r.Format, r.Side, r.Connection, r.Transport, r.ProtocolVersion = schema.WireFormat, schema.SideClient, "c1", schema.TransportStreamableHTTP, "2025-11-25"
		addRaw(l, r)
	}
	init := func(id int) string {
		return req(id, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
	}
	initOK := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	}
	rec(0, 1000, "s1", init(1), 200, initOK(1), "s1")
	rec(2, endUS, "s1", req(2, "tools/call", `{"name":"echo"}`), 404, "Session terminated", "")
	rec(3, 4000, "s2", init(3), 200, initOK(3), "s2")
	rec(4, 5000, "s2", req(4, "tools/call", `{"name":"echo"}`), 200, `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`, "")
	got, _ := run(l)
	var gone, again *schema.Exchange
	for _, r := range got {
		if r.Method == "tools/call" && r.Outcome == "HTTP_ERROR" {
			gone = r
		}
		if r.Method == "tools/call" && r.Outcome == "TOOL_SUCCESS" {
			again = r
		}
	}
	if gone == nil || again == nil {
		t.Fatalf("rows %d", len(got))
	}
	if !gone.SessionExpired || gone.Reinitialized == nil || !*gone.Reinitialized {
		t.Errorf("the 404: session_expired %v reinitialized %v, want true true", gone.SessionExpired, gone.Reinitialized)
	}
	if again.RetryOrigin != "application" || again.RetryBasis == nil || *again.RetryBasis != "same_call_next_session" {
		t.Errorf("the repeat: retry_origin %s basis %v, want application same_call_next_session", again.RetryOrigin, again.RetryBasis)
	}
}

// addRaw logs a record with the times it carries.
func addRaw(l *logb, rec schema.WireRecord) {
	l.t.Helper()
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
