package classify_test

import (
	"testing"

	"mcptrace/classify"
	"mcptrace/decode"
	"mcptrace/schema"
)

// Bodies from the seed article's eleven synthetic cases.
const (
	good       = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	rpcError   = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`
	toolError  = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`
	bothResErr = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false},"error":{"code":-32602,"message":"synthetic invalid params"}}`
	wrongID    = `{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	inputReq   = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`
	legacy     = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`
	notArray   = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":"not-an-array","isError":false}}`
)

var id1 = schema.ID{Type: schema.IDNumber, Text: "1"}

// post builds an attempt the way the decoder and correlator do: the body is
// parsed by package decode.
func post(status int, contentType, body string) classify.Attempt {
	at := classify.Attempt{Responded: true, Status: status, ContentType: contentType, BodyRecorded: true, BodyEmpty: body == ""}
	if contentType == "text/event-stream" {
		at.SSE, at.StreamEnd = true, schema.StreamComplete
		for i, e := range decode.ParseSSE(body, true) {
			at.Messages = decode.AppendMessages(at.Messages, []byte(e.Data), schema.InPostStream, i+1)
		}
	} else {
		at.Messages = decode.AppendMessages(nil, []byte(body), schema.InResponseBody, 0)
	}
	return at
}

func sse(events ...string) string {
	s := ""
	for _, e := range events {
		s += "event: message\ndata: " + e + "\n\n"
	}
	return s
}

func toolCall(attempts ...classify.Attempt) *classify.Evidence {
	return &classify.Evidence{Method: "tools/call", ProtocolVersion: "2026-07-28", ID: id1, Attempts: attempts}
}

func check(t *testing.T, name string, ev *classify.Evidence, outcome, layer string) classify.Verdict {
	t.Helper()
	v := classify.Classify(ev)
	if v.Outcome != outcome || v.Layer != layer {
		t.Errorf("%s: got %s/%s (%s), want %s/%s", name, v.Outcome, v.Layer, v.Reason, outcome, layer)
	}
	return v
}

func TestSeedCases(t *testing.T) {
	cases := []struct {
		name, outcome, layer string
		ev                   *classify.Evidence
	}{
		{"baseline", "TOOL_SUCCESS", "application", toolCall(post(200, "application/json", good))},
		{"503 first POST", "HTTP_ERROR", "transport", toolCall(post(503, "application/json", `{"note":"synthetic outage"}`))},
		{"explicit second POST 200", "TOOL_SUCCESS", "application", toolCall(post(200, "application/json", good))},
		{"jsonrpc_error", "JSONRPC_ERROR", "protocol", toolCall(post(200, "application/json", rpcError))},
		{"tool_isError", "TOOL_ERROR", "application", toolCall(post(200, "application/json", toolError))},
		{"transport_precedence", "HTTP_ERROR", "transport", toolCall(post(500, "application/json", good))},
		{"malformed_json", "MALFORMED_JSON", "protocol", toolCall(post(200, "application/json", "{unclosed"))},
		{"conflicting_envelope", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", bothResErr))},
		{"wrong_response_id", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", wrongID))},
		{"input_required", "INPUT_REQUIRED", "interaction", toolCall(post(200, "application/json", inputReq))},
		{"legacy_resultType_absent", "TOOL_SUCCESS", "application", toolCall(post(200, "application/json", legacy))},
		{"invalid_tool_result", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", notArray))},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		check(t, c.name, c.ev, c.outcome, c.layer)
		seen[c.outcome] = true
	}
	// The article observed all eight outcome values.
	if len(seen) != 8 {
		t.Errorf("seed cases cover %d outcomes, want 8", len(seen))
	}
}

func TestSeedDetails(t *testing.T) {
	v := check(t, "rpc", toolCall(post(200, "application/json", rpcError)), "JSONRPC_ERROR", "protocol")
	if v.ErrorCode == nil || *v.ErrorCode != -32602 || v.ErrorType != "-32602" || v.ErrorMessage != "synthetic invalid params" {
		t.Errorf("error detail: %+v", v)
	}
	if v.RetryAdvice != classify.AdviceFixArguments {
		t.Errorf("advice %s", v.RetryAdvice)
	}
	v = check(t, "503", toolCall(post(503, "", "")), "HTTP_ERROR", "transport")
	if v.ErrorType != "503" || v.RetryAdvice != classify.AdviceRetryIfIdempotent {
		t.Errorf("503: %+v", v)
	}
	v = check(t, "tool", toolCall(post(200, "application/json", toolError)), "TOOL_ERROR", "application")
	if v.ErrorType != "tool_error" || v.IsError == nil || !*v.IsError || v.RetryAdvice != classify.AdviceInspectToolState {
		t.Errorf("tool error: %+v", v)
	}
	v = check(t, "legacy", toolCall(post(200, "application/json", legacy)), "TOOL_SUCCESS", "application")
	if v.ResultType != "complete" || v.ErrorType != "" || v.RetryAdvice != classify.AdviceNone {
		t.Errorf("legacy: %+v", v)
	}
	v = check(t, "input", toolCall(post(200, "application/json", inputReq)), "INPUT_REQUIRED", "interaction")
	if v.RetryAdvice != classify.AdviceProvideInput || v.ResultType != "input_required" {
		t.Errorf("input: %+v", v)
	}
	// The final attempt decides: [503, 200] with the same id is a success.
	check(t, "retried", toolCall(post(503, "", ""), post(200, "application/json", good)), "TOOL_SUCCESS", "application")
	check(t, "retried then failed", toolCall(post(200, "application/json", good), post(502, "text/html", "<html>")), "HTTP_ERROR", "transport")
}

func TestRules(t *testing.T) {
	stream := func(end string, events ...string) classify.Attempt {
		at := post(200, "text/event-stream", sse(events...))
		at.StreamEnd = end
		return at
	}
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	notRecorded := classify.Attempt{Responded: true, Status: 200, ContentType: "application/json"}
	sseNotRecorded := classify.Attempt{Responded: true, Status: 200, ContentType: "text/event-stream", SSE: true}
	accepted := classify.Attempt{Responded: true, Status: 202, BodyRecorded: true, BodyEmpty: true}
	refused := classify.Attempt{Failure: schema.FailureConnectionRefused}
	abort := classify.Attempt{Failure: schema.FailureClientAbort}
	method := func(m, version, body string) *classify.Evidence {
		return &classify.Evidence{Method: m, ProtocolVersion: version, ID: id1, Attempts: []classify.Attempt{post(200, "application/json", body)}}
	}
	withVersion := func(ev *classify.Evidence, v string) *classify.Evidence { ev.ProtocolVersion = v; return ev }
	getStream := decode.AppendMessages(nil, []byte(legacy), schema.InGetStream, 3)
	cancelled := toolCall(refused)
	cancelled.Cancelled = true
	stdioStray := &classify.Evidence{Method: "tools/call", ID: id1, Stray: decode.AppendMessages(nil, []byte("Starting server..."), schema.InStdio, 0)}
	stdioResp := &classify.Evidence{Method: "tools/call", ID: id1, Response: &decode.AppendMessages(nil, []byte(toolError), schema.InStdio, 0)[0]}
	batchResp := `[{"jsonrpc":"2.0","id":2,"result":{"tools":[]}},{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]`

	cases := []struct {
		name, outcome, layer string
		ev                   *classify.Evidence
	}{
		// Streams.
		{"SSE final result", "TOOL_SUCCESS", "application", toolCall(stream("complete", progress, good))},
		{"SSE final error", "JSONRPC_ERROR", "protocol", toolCall(stream("complete", progress, rpcError))},
		{"SSE cut before the result", "STREAM_INCOMPLETE", "transport", toolCall(stream("reset", progress))},
		{"SSE ended complete without result", "STREAM_INCOMPLETE", "transport", toolCall(stream("complete", progress))},
		{"SSE closed by client in 2026", "CANCELLED", "interaction", toolCall(stream("client_closed", progress))},
		{"SSE closed by client in 2025", "STREAM_INCOMPLETE", "transport", withVersion(toolCall(stream("client_closed", progress)), "2025-11-25")},
		{"SSE event not JSON", "MALFORMED_JSON", "protocol", toolCall(stream("complete", "{oops"))},
		{"SSE body not recorded", "UNKNOWN", "unknown", toolCall(sseNotRecorded)},
		{"JSON body not recorded", "UNKNOWN", "unknown", toolCall(notRecorded)},
		// 202 and where responses arrive.
		{"202 with no response anywhere", "NO_RESPONSE", "transport", toolCall(accepted)},
		{"202 then response on the GET stream", "TOOL_SUCCESS", "application", &classify.Evidence{Method: "tools/call", ID: id1, Attempts: []classify.Attempt{accepted}, Response: &getStream[0]}},
		{"connection refused", "NO_RESPONSE", "transport", toolCall(refused)},
		{"client gave up, 2026", "CANCELLED", "interaction", toolCall(abort)},
		{"client gave up, 2025", "NO_RESPONSE", "transport", withVersion(toolCall(abort), "2025-06-18")},
		{"cancel notification, no response", "CANCELLED", "interaction", cancelled},
		{"empty 200 JSON body", "MALFORMED_JSON", "protocol", toolCall(post(200, "application/json", ""))},
		{"HTML 200", "MALFORMED_JSON", "protocol", toolCall(post(200, "text/html", "<html>oops</html>"))},
		// Envelope.
		{"id type mismatch", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":"1","result":{"content":[]}}`))},
		{"string id matches string id", "TOOL_SUCCESS", "application", &classify.Evidence{Method: "tools/call", ID: schema.ID{Type: schema.IDString, Text: "1"}, Attempts: []classify.Attempt{post(200, "application/json", `{"jsonrpc":"2.0","id":"1","result":{"content":[]}}`)}}},
		{"jsonrpc missing", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"id":1,"result":{"content":[]}}`))},
		{"jsonrpc 1.0", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"1.0","id":1,"result":{"content":[]}}`))},
		{"neither result nor error", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1}`))},
		{"not an object", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `"hello"`))},
		{"error code a string", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":"oops","message":"x"}}`))},
		{"error code fractional", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602.5,"message":"x"}}`))},
		{"error message missing", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}`))},
		{"error not an object", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":"bad"}`))},
		{"error with null id", "JSONRPC_ERROR", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))},
		{"result with null id", "INVALID_ENVELOPE", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":null,"result":{"content":[]}}`))},
		{"batch response in 2025-03-26", "TOOL_SUCCESS", "application", withVersion(toolCall(post(200, "application/json", batchResp)), "2025-03-26")},
		{"batch response in 2025-06-18", "INVALID_ENVELOPE", "protocol", withVersion(toolCall(post(200, "application/json", batchResp)), "2025-06-18")},
		// tools/call results.
		{"isError absent", "TOOL_SUCCESS", "application", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))},
		{"isError not boolean", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":"yes"}}`))},
		{"content missing", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"isError":false}}`))},
		{"result not an object", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":[1]}`))},
		{"unknown resultType", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"partial","content":[]}}`))},
		{"resultType not a string", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":1,"content":[]}}`))},
		{"input_required without requests or state", "INVALID_TOOL_RESULT", "protocol", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`))},
		{"input_required with state only", "INPUT_REQUIRED", "interaction", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`))},
		{"structuredContent array in 2025-06-18", "INVALID_TOOL_RESULT", "protocol", withVersion(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":[1,2]}}`)), "2025-06-18")},
		{"structuredContent array in 2026-07-28", "TOOL_SUCCESS", "application", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":[1,2]}}`))},
		// Other methods.
		{"tools/list", "SUCCESS", "application", method("tools/list", "2025-11-25", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
		{"tools/list without tools", "INVALID_RESULT", "protocol", method("tools/list", "2025-11-25", `{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{"initialize", "SUCCESS", "application", method("initialize", "", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)},
		{"initialize without serverInfo", "INVALID_RESULT", "protocol", method("initialize", "", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`)},
		{"ping", "SUCCESS", "application", method("ping", "2025-11-25", `{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{"ping result not an object", "INVALID_RESULT", "protocol", method("ping", "2025-11-25", `{"jsonrpc":"2.0","id":1,"result":true}`)},
		{"input_required on tools/list", "INVALID_RESULT", "protocol", method("tools/list", "2026-07-28", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`)},
		{"prompts/get input_required", "INPUT_REQUIRED", "interaction", method("prompts/get", "2026-07-28", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`)},
		{"method error", "JSONRPC_ERROR", "protocol", method("resources/read", "2025-11-25", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`)},
		// stdio.
		{"stdio response", "TOOL_ERROR", "application", stdioResp},
		{"stdio non-JSON frame", "MALFORMED_JSON", "protocol", stdioStray},
		{"stdio nothing", "NO_RESPONSE", "transport", &classify.Evidence{Method: "tools/call", ID: id1}},
	}
	for _, c := range cases {
		check(t, c.name, c.ev, c.outcome, c.layer)
	}
}

func TestHTTPErrorsAndAdvice(t *testing.T) {
	cases := []struct {
		name      string
		version   string
		at        classify.Attempt
		onSession bool
		advice    string
		code      int64
	}{
		{"429", "2026-07-28", post(429, "application/json", `{"error":"slow down"}`), false, classify.AdviceRespectRetryAfter, 0},
		{"404 on a session", "2025-11-25", post(404, "application/json", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`), true, classify.AdviceReinitializeSession, -32001},
		{"404 without session", "2025-11-25", post(404, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`), false, classify.AdviceInvestigateCompatibility, -32601},
		{"400 header mismatch, 2025", "2025-11-25", post(400, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`), false, classify.AdviceInvestigateCompatibility, -32020},
		{"400 invalid params, 2025", "2025-11-25", post(400, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`), false, classify.AdviceFixArguments, -32602},
		{"400 invalid params, null id, 2026", "2026-07-28", post(400, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}`), false, classify.AdviceFixArguments, -32602},
		{"401", "2026-07-28", post(401, "", ""), false, classify.AdviceNone, 0},
		{"502 html", "2026-07-28", post(502, "text/html", "<html>Bad gateway</html>"), false, classify.AdviceRetryIfIdempotent, 0},
	}
	for _, c := range cases {
		ev := toolCall(c.at)
		ev.ProtocolVersion = c.version
		ev.OnSession = c.onSession
		v := check(t, c.name, ev, "HTTP_ERROR", "transport")
		if v.RetryAdvice != c.advice {
			t.Errorf("%s: advice %s, want %s", c.name, v.RetryAdvice, c.advice)
		}
		if c.code != 0 && (v.ErrorCode == nil || *v.ErrorCode != c.code) {
			t.Errorf("%s: error code %v, want %d", c.name, v.ErrorCode, c.code)
		}
		if c.code == 0 && v.ErrorCode != nil {
			t.Errorf("%s: unexpected error code %d", c.name, *v.ErrorCode)
		}
	}
	v := check(t, "refused", toolCall(classify.Attempt{Failure: schema.FailureConnectionRefused}), "NO_RESPONSE", "transport")
	if v.RetryAdvice != classify.AdviceRetryIfIdempotent || v.ErrorType != "connection_refused" {
		t.Errorf("refused: %+v", v)
	}
	if a := classify.Classify(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"url"}}`))).RetryAdvice; a != classify.AdviceProvideInput {
		t.Errorf("-32042 advice %s", a)
	}
	if a := classify.Classify(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}`))).RetryAdvice; a != classify.AdviceNone {
		t.Errorf("-32603 advice %s", a)
	}
}

func TestLayerOfCoversEveryOutcome(t *testing.T) {
	for _, o := range classify.Outcomes {
		if l := classify.LayerOf(o); l == classify.LayerUnknown && o != classify.Unknown {
			t.Errorf("%s has no layer", o)
		}
	}
}

func TestSameID(t *testing.T) {
	n := func(s string) schema.ID { return schema.ID{Type: schema.IDNumber, Text: s} }
	s := func(x string) schema.ID { return schema.ID{Type: schema.IDString, Text: x} }
	if !classify.SameID(n("1"), n("1")) || !classify.SameID(n("1"), n("1.0")) || !classify.SameID(s("a"), s("a")) {
		t.Error("equal ids differ")
	}
	if classify.SameID(n("1"), s("1")) || classify.SameID(s("1"), n("1")) || classify.SameID(n("1"), n("2")) ||
		classify.SameID(schema.ID{Type: schema.IDNull}, schema.ID{Type: schema.IDNull}) {
		t.Error("different ids match")
	}
}

func TestTruncatedResponses(t *testing.T) {
	trunc := func(raw string) *classify.Evidence {
		m := schema.Message{Where: schema.InStdio, BatchIndex: -1, Kind: schema.MsgResponse, ID: id1, Raw: []byte(raw), Truncated: true}
		return &classify.Evidence{Method: "tools/call", ID: id1, Response: &m}
	}
	v := check(t, "error survived", trunc(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Call to a member function can() on null","data":{"trace":"#0 /var/www/app…[2051 chars truncated]...`), "JSONRPC_ERROR", "protocol")
	if v.ErrorCode == nil || *v.ErrorCode != -32603 || v.ErrorMessage != "Call to a member function can() on null" {
		t.Errorf("recovered error: %+v", v)
	}
	check(t, "isError survived", trunc(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Access denied…[118 chars truncated]...`), "TOOL_ERROR", "application")
	check(t, "isError false is not proof of success", trunc(`{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"type":"text","text":"…[9000 chars truncated]...`), "UNKNOWN", "unknown")
	check(t, "nothing survived", trunc(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","description":"Read…[11759 chars truncated]...`), "UNKNOWN", "unknown")
}

func TestReportedOutcomes(t *testing.T) {
	rep := func(method string, r schema.Reported) *classify.Evidence {
		return &classify.Evidence{Method: method, ID: id1, Reported: &r}
	}
	cases := []struct {
		name, outcome, layer string
		ev                   *classify.Evidence
	}{
		{"tool_error", "TOOL_ERROR", "application", rep("tools/call", schema.Reported{ErrorType: "tool_error", Failed: true})},
		{"code in error.type", "JSONRPC_ERROR", "protocol", rep("tools/call", schema.Reported{ErrorType: "-32602", Failed: true})},
		{"code in rpc.response.status_code", "JSONRPC_ERROR", "protocol", rep("tools/list", schema.Reported{ErrorType: "_OTHER", StatusCode: "-32601"})},
		{"http status", "HTTP_ERROR", "transport", rep("tools/call", schema.Reported{HTTPStatus: 503, ErrorType: "503"})},
		{"timeout", "NO_RESPONSE", "transport", rep("tools/call", schema.Reported{ErrorType: "timeout"})},
		{"ok tools/call", "TOOL_SUCCESS", "application", rep("tools/call", schema.Reported{OK: true})},
		{"ok tools/list", "SUCCESS", "application", rep("tools/list", schema.Reported{OK: true})},
		{"failed, no type", "UNKNOWN", "unknown", rep("tools/call", schema.Reported{Failed: true, Message: "Request timed out"})},
		{"other error.type", "UNKNOWN", "unknown", rep("tools/call", schema.Reported{ErrorType: "java.io.IOException"})},
		{"nothing said", "UNKNOWN", "unknown", rep("tools/call", schema.Reported{})},
	}
	for _, c := range cases {
		check(t, c.name, c.ev, c.outcome, c.layer)
	}
	v := classify.Classify(rep("tools/call", schema.Reported{HTTPStatus: 429}))
	if v.RetryAdvice != classify.AdviceRespectRetryAfter || v.ErrorType != "429" {
		t.Errorf("reported 429: %+v", v)
	}
	// A body, when there is one, wins over the report.
	ev := toolCall(post(200, "application/json", toolError))
	ev.Reported = &schema.Reported{OK: true}
	check(t, "body wins", ev, "TOOL_ERROR", "application")
}

func TestPendingAtExportIsUnknown(t *testing.T) {
	check(t, "pending", toolCall(classify.Attempt{Failure: schema.FailurePending}), "UNKNOWN", "unknown")
	ev := toolCall(classify.Attempt{Responded: true, Status: 202, BodyRecorded: true, BodyEmpty: true})
	ev.StreamNotRecorded = true
	check(t, "202, stream lost", ev, "UNKNOWN", "unknown")
}

func TestTruncatedStrayFrameIsUnknown(t *testing.T) {
	stray := schema.Message{Where: schema.InStdio, BatchIndex: -1, Kind: schema.MsgInvalidJSON, Raw: []byte(`{"jsonrpc":"2.0","res…[4000 chars truncated]`), Truncated: true}
	check(t, "truncated stray", &classify.Evidence{Method: "tools/call", ID: id1, Stray: []schema.Message{stray}}, "UNKNOWN", "unknown")
}

// TestClientAbortAndCancel: a stream or body the client let go of itself,
// with notifications/cancelled for the request, is CANCELLED in every
// version (issue 10, point 2); a stream or body cut by the server or the
// network keeps its root cause even after a cancel; a client close without
// a cancel is a cancellation only in 2026-07-28.
func TestClientAbortAndCancel(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	stream := func(end string) classify.Attempt {
		at := post(200, "text/event-stream", sse(progress))
		at.StreamEnd = end
		return at
	}
	cutJSON := func(failure string) classify.Attempt {
		return classify.Attempt{Responded: true, Status: 200, ContentType: "application/json", Failure: failure}
	}
	ev := func(version string, cancelled bool, at classify.Attempt) *classify.Evidence {
		return &classify.Evidence{Method: "tools/call", ProtocolVersion: version, ID: id1, Attempts: []classify.Attempt{at}, Cancelled: cancelled}
	}
	for _, tc := range []struct {
		name, version string
		cancelled     bool
		at            classify.Attempt
		outcome       string
	}{
		{"client closed + cancel, 2025-11-25", "2025-11-25", true, stream(schema.StreamClientClosed), classify.Cancelled},
		{"client closed + cancel, 2025-03-26", "2025-03-26", true, stream(schema.StreamClientClosed), classify.Cancelled},
		{"client closed + cancel, version unknown", "", true, stream(schema.StreamClientClosed), classify.Cancelled},
		{"client closed, no cancel, 2025-11-25", "2025-11-25", false, stream(schema.StreamClientClosed), classify.StreamIncomplete},
		{"client closed, no cancel, 2026-07-28", "2026-07-28", false, stream(schema.StreamClientClosed), classify.Cancelled},
		{"reset + cancel", "2025-11-25", true, stream(schema.StreamReset), classify.StreamIncomplete},
		{"timeout + cancel", "2025-11-25", true, stream(schema.StreamTimeout), classify.StreamIncomplete},
		{"end unknown + cancel", "2025-11-25", true, stream(""), classify.StreamIncomplete},
		{"200 JSON cut by reset", "2025-11-25", false, cutJSON(schema.FailureReset), classify.NoResponse},
		{"200 JSON cut by reset + cancel", "2025-11-25", true, cutJSON(schema.FailureReset), classify.NoResponse},
		{"200 JSON aborted by client + cancel", "2025-11-25", true, cutJSON(schema.FailureClientAbort), classify.Cancelled},
		{"200 JSON aborted by client, no cancel", "2025-11-25", false, cutJSON(schema.FailureClientAbort), classify.NoResponse},
		{"200 JSON aborted by client, 2026-07-28", "2026-07-28", false, cutJSON(schema.FailureClientAbort), classify.Cancelled},
	} {
		v := check(t, tc.name, ev(tc.version, tc.cancelled, tc.at), tc.outcome, classify.LayerOf(tc.outcome))
		if tc.outcome == classify.NoResponse && v.RetryAdvice != classify.AdviceRetryIfIdempotent {
			t.Errorf("%s: advice %s", tc.name, v.RetryAdvice)
		}
	}
	// A 503 whose body was cut is the 503.
	cut503 := post(503, "application/json", `{"jsonrpc":"2.0","id":1,"err`)
	v := check(t, "503 cut", ev("2025-11-25", true, cut503), classify.HTTPError, classify.LayerTransport)
	if v.ErrorType != "503" || v.RetryAdvice != classify.AdviceRetryIfIdempotent {
		t.Errorf("503 cut: %+v", v)
	}
	// A cut 200 body whose response came elsewhere is judged on it.
	resp := decode.AppendMessages(nil, []byte(legacy), schema.InResumedStream, 1)
	e := ev("2025-11-25", false, cutJSON(schema.FailureReset))
	e.Response = &resp[0]
	check(t, "cut body, response on a resumed stream", e, classify.ToolSuccess, classify.LayerApplication)
}

// TestLateAnswerAfterCancel: a response on the request's own open stream
// after the cancel is CANCELLED with the response kept as detail, whatever
// it said.
func TestLateAnswerAfterCancel(t *testing.T) {
	canceledText := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"context canceled"}],"isError":true}}`
	for _, body := range []string{canceledText, legacy, rpcError} {
		e := &classify.Evidence{Method: "tools/call", ProtocolVersion: "2025-11-25", ID: id1,
			Attempts: []classify.Attempt{post(200, "text/event-stream", sse(body))}, Cancelled: true, LateResponse: true}
		v := check(t, body, e, classify.Cancelled, classify.LayerInteraction)
		if v.RetryAdvice != classify.AdviceNone || v.Judged == nil {
			t.Errorf("%s: %+v", body, v)
		}
	}
	// Answered before the cancel (not late): the answer stands.
	e := &classify.Evidence{Method: "tools/call", ProtocolVersion: "2025-11-25", ID: id1,
		Attempts: []classify.Attempt{post(200, "text/event-stream", sse(canceledText))}, Cancelled: true}
	check(t, "answered before the cancel", e, classify.ToolError, classify.LayerApplication)
}
