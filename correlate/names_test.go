package correlate_test

import (
	"testing"

	"mcptrace/schema"
)

// TestDiagnosisColumnsFilled: the verdict's error kind and OpenTelemetry
// names reach the row, the tool text is the winning content's, and a
// 2026-07-28 row never has a session id.
func TestDiagnosisColumnsFilled(t *testing.T) {
	l := newLog(t)
	l.ver, l.sess = "2026-07-28", "legacy-header-the-server-ignores"
	l.post(req(1, "tools/call", `{"name":"a","name":"get_weather"}`), 200, "application/json",
		str(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first"}],"content":[{"type":"text","text":"Unknown tool: get_weather"}],"isError":true}}`))
	l.post(req(2, "tools/call", `{"name":"x"}`), 400, "application/json",
		str(`{"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"Header mismatch"}}`))
	l.post(req(3, "tools/call", `{"name":"x"}`), 503, "", str(""))
	got, _ := run(l)
	if len(got) != 3 {
		t.Fatalf("%d rows", len(got))
	}
	byID := map[string]*schema.Exchange{}
	for _, g := range got {
		byID[*g.JSONRPCID] = g
		if g.SessionID != nil {
			t.Errorf("id %s: session_id %q on 2026-07-28 traffic", *g.JSONRPCID, *g.SessionID)
		}
	}
	r := byID["1"]
	if r.Outcome != "TOOL_ERROR" || r.ToolName == nil || *r.ToolName != "get_weather" || r.ToolErrorText == nil || *r.ToolErrorText != "Unknown tool: get_weather" ||
		r.ErrorKind == nil || *r.ErrorKind != "unknown_tool" || r.RPCStatusCode != nil || !r.ServerError || *r.ErrorType != "tool_error" {
		t.Errorf("tool error row: %s %v %v %v %v %v", r.Outcome, r.ToolName, r.ToolErrorText, r.ErrorKind, r.RPCStatusCode, r.ServerError)
	}
	r = byID["2"]
	if r.Outcome != "JSONRPC_ERROR" || r.ErrorKind == nil || *r.ErrorKind != "header_mismatch" || r.RPCStatusCode == nil || *r.RPCStatusCode != "-32020" ||
		r.ServerError || len(r.HTTPStatuses) != 1 || r.HTTPStatuses[0] != 400 || r.RetryAdvice != "investigate_compatibility" {
		t.Errorf("mapped error row: %s %v %v %v %v %s", r.Outcome, r.ErrorKind, r.RPCStatusCode, r.ServerError, r.HTTPStatuses, r.RetryAdvice)
	}
	r = byID["3"]
	if r.Outcome != "HTTP_ERROR" || *r.ErrorType != "503" || *r.ErrorKind != "unavailable" || !r.ServerError || r.RPCStatusCode != nil {
		t.Errorf("503 row: %s %v %v %v", r.Outcome, r.ErrorType, r.ErrorKind, r.ServerError)
	}

	// Before 2026-07-28 the session id is kept.
	l = newLog(t)
	l.sess = "s-1"
	l.post(req(1, "tools/call", `{"name":"x"}`), 200, "application/json", str(ok(1)))
	got, _ = run(l)
	if len(got) != 1 || got[0].SessionID == nil || *got[0].SessionID != "s-1" || got[0].ErrorKind != nil || got[0].ErrorType != nil || got[0].ServerError {
		t.Errorf("2025-11-25 row: %+v", got[0])
	}
}

// TestIDsPairExactly: responses found by id (stdio, GET streams) pair as
// classify.SameID compares: 1.0 answers 1; 9007199254740992 does not answer
// 9007199254740993.
func TestIDsPairExactly(t *testing.T) {
	l := newLog(t)
	l.stdio("c2s", req(1, "tools/list", ""))
	l.stdio("s2c", `{"jsonrpc":"2.0","id":1.0,"result":{"tools":[]}}`)
	l.stdio("c2s", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list","params":{}}`)
	l.stdio("s2c", `{"jsonrpc":"2.0","id":9007199254740992,"result":{"tools":[]}}`)
	got, st := run(l)
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	for _, g := range got {
		switch *g.JSONRPCID {
		case "1":
			if g.Outcome != "SUCCESS" {
				t.Errorf("id 1 answered by 1.0: %s (%s)", g.Outcome, g.Reason)
			}
		case "9007199254740993":
			if g.Outcome != "NO_RESPONSE" {
				t.Errorf("id 9007199254740993 answered by 9007199254740992: %s", g.Outcome)
			}
		default:
			t.Errorf("row for id %s", *g.JSONRPCID)
		}
	}
	if st.Stray != 1 {
		t.Errorf("the unmatched response is stray: %+v", st)
	}
}

// TestCancelRequestIDLastWins: a notifications/cancelled whose requestId is
// repeated cancels the request the last one names.
func TestCancelRequestIDLastWins(t *testing.T) {
	l := newLog(t)
	l.stdio("c2s", req(1, "tools/call", `{"name":"slow"}`))
	l.stdio("c2s", req(2, "tools/call", `{"name":"slow"}`))
	l.stdio("c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`)
	l.stdio("s2c", ok(1))
	got, _ := run(l)
	for _, g := range got {
		want := map[string]string{"1": "TOOL_SUCCESS", "2": "CANCELLED"}[*g.JSONRPCID]
		if g.Outcome != want {
			t.Errorf("id %s: %s, want %s", *g.JSONRPCID, g.Outcome, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d rows", len(got))
	}
}
