package classify_test

import (
	"strings"
	"testing"

	"mcptrace/classify"
	"mcptrace/decode"
	"mcptrace/schema"
)

func withVersion(ev *classify.Evidence, v string) *classify.Evidence {
	ev.ProtocolVersion = v
	return ev
}

// Rule 1: in 2026-07-28, a 4xx whose body is a JSON-RPC error with the
// request's own id is JSONRPC_ERROR; every other non-2xx stays HTTP_ERROR.
func TestMappedProtocolErrors2026(t *testing.T) {
	rpcErr := func(id, code, msg string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + code + `,"message":"` + msg + `"}}`
	}
	cases := []struct {
		name, version string
		status        int
		body          string
		outcome       string
		advice        string
	}{
		{"400 -32602 own id", "2026-07-28", 400, rpcErr("1", "-32602", "Missing _meta"), "JSONRPC_ERROR", classify.AdviceFixArguments},
		{"400 -32020 own id", "2026-07-28", 400, rpcErr("1", "-32020", "Header mismatch"), "JSONRPC_ERROR", classify.AdviceInvestigateCompatibility},
		{"400 -32021 own id", "2026-07-28", 400, rpcErr("1", "-32021", "Missing required client capability"), "JSONRPC_ERROR", classify.AdviceInvestigateCompatibility},
		{"400 -32022 own id", "2026-07-28", 400, rpcErr("1", "-32022", "Unsupported protocol version"), "JSONRPC_ERROR", classify.AdviceInvestigateCompatibility},
		{"404 -32601 own id", "2026-07-28", 404, rpcErr("1", "-32601", "Method not found"), "JSONRPC_ERROR", classify.AdviceInvestigateCompatibility},
		{"409 -32603 own id", "2026-07-28", 409, rpcErr("1", "-32603", "conflict"), "JSONRPC_ERROR", classify.AdviceNone},
		{"id written 1.0", "2026-07-28", 400, rpcErr("1.0", "-32602", "x"), "JSONRPC_ERROR", classify.AdviceFixArguments},
		{"a later version the server does not support", "2026-12-15", 400, rpcErr("1", "-32022", "Unsupported protocol version"), "JSONRPC_ERROR", classify.AdviceInvestigateCompatibility},
		{"not a dated version", "DRAFT-2026-v1", 400, rpcErr("1", "-32022", "Unsupported protocol version"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"2025-03-26", "2025-03-26", 400, rpcErr("1", "-32602", "x"), "HTTP_ERROR", classify.AdviceFixArguments},
		// Everything else stays HTTP_ERROR.
		{"2025-11-25", "2025-11-25", 400, rpcErr("1", "-32602", "x"), "HTTP_ERROR", classify.AdviceFixArguments},
		{"2025-11-25 404 -32601", "2025-11-25", 404, rpcErr("1", "-32601", "x"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"version unknown", "", 400, rpcErr("1", "-32602", "x"), "HTTP_ERROR", classify.AdviceFixArguments},
		{"null id", "2026-07-28", 400, rpcErr("null", "-32020", "x"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"no id", "2026-07-28", 400, `{"jsonrpc":"2.0","error":{"code":-32020,"message":"x"}}`, "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"other id", "2026-07-28", 400, rpcErr("2", "-32020", "x"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"string id for a number id", "2026-07-28", 400, rpcErr(`"1"`, "-32020", "x"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"non-JSON body", "2026-07-28", 400, "Bad Request", "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"result, not an error", "2026-07-28", 400, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"error code not an integer", "2026-07-28", 400, rpcErr("1", `"bad"`, "x"), "HTTP_ERROR", classify.AdviceInvestigateCompatibility},
		{"5xx", "2026-07-28", 500, rpcErr("1", "-32603", "x"), "HTTP_ERROR", classify.AdviceRetryIfIdempotent},
		{"429 keeps its HTTP meaning", "2026-07-28", 429, rpcErr("1", "-32000", "slow down"), "HTTP_ERROR", classify.AdviceRespectRetryAfter},
		{"401 keeps its HTTP meaning", "2026-07-28", 401, rpcErr("1", "-32000", "no token"), "HTTP_ERROR", classify.AdviceNone},
	}
	for _, c := range cases {
		ev := withVersion(toolCall(post(c.status, "application/json", c.body)), c.version)
		v := classify.Classify(ev)
		if v.Outcome != c.outcome || v.RetryAdvice != c.advice {
			t.Errorf("%s: %s / %s (%s), want %s / %s", c.name, v.Outcome, v.RetryAdvice, v.Reason, c.outcome, c.advice)
		}
		if c.outcome == "JSONRPC_ERROR" && (v.Layer != "protocol" || v.ErrorCode == nil || v.ErrorType != v.RPCStatusCode || !strings.Contains(v.Reason, "HTTP")) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
	// An event-stream 4xx carrying the error is the same rule.
	ev := toolCall(post(400, "text/event-stream", sse(rpcErr("1", "-32020", "Header mismatch"))))
	check(t, "SSE 400", ev, "JSONRPC_ERROR", "protocol")
	// A 2026-07-28 404 on a session header is not a session expiry: there
	// are no sessions.
	ev = toolCall(post(404, "text/plain", "not found"))
	ev.OnSession = true
	if v := check(t, "2026 404 with a session header", ev, "HTTP_ERROR", "transport"); v.RetryAdvice == classify.AdviceReinitializeSession || v.ErrorKind != "not_found" {
		t.Errorf("2026 404 on a session header: %s %s", v.RetryAdvice, v.ErrorKind)
	}
}

// TestErrorTypes checks error.type for every outcome, rpc_response_status_code
// and server_error.
func TestErrorTypes(t *testing.T) {
	stream := func(end string) classify.Attempt {
		at := post(200, "text/event-stream", sse(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
		at.StreamEnd = end
		return at
	}
	cancelled := toolCall(classify.Attempt{Failure: schema.FailureReset})
	cancelled.Cancelled = true
	late := toolCall(post(200, "application/json", rpcError))
	late.Cancelled, late.LateResponse = true, true
	accepted := classify.Attempt{Responded: true, Status: 202, BodyRecorded: true, BodyEmpty: true}
	rep := func(r schema.Reported) *classify.Evidence {
		return &classify.Evidence{Method: "tools/call", ID: id1, Reported: &r}
	}
	cases := []struct {
		name, outcome, errorType, rpcCode string
		server                            bool
		ev                                *classify.Evidence
	}{
		{"tool success", "TOOL_SUCCESS", "", "", false, toolCall(post(200, "application/json", good))},
		{"success", "SUCCESS", "", "", false, &classify.Evidence{Method: "tools/list", ID: id1, Attempts: []classify.Attempt{post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)}}},
		{"input required", "INPUT_REQUIRED", "", "", false, toolCall(post(200, "application/json", inputReq))},
		{"tool error counts on the server", "TOOL_ERROR", "tool_error", "", true, toolCall(post(200, "application/json", toolError))},
		{"-32602 is the caller's", "JSONRPC_ERROR", "-32602", "-32602", false, toolCall(post(200, "application/json", rpcError))},
		{"-32603 is the server's", "JSONRPC_ERROR", "-32603", "-32603", true, toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`))},
		{"-32700", "JSONRPC_ERROR", "-32700", "-32700", false, toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))},
		{"-32600", "JSONRPC_ERROR", "-32600", "-32600", false, toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}`))},
		{"-32601", "JSONRPC_ERROR", "-32601", "-32601", false, toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`))},
		{"-32002", "JSONRPC_ERROR", "-32002", "-32002", false, withVersion(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`)), "2025-11-25")},
		{"-32020 in HTTP 200 counts", "JSONRPC_ERROR", "-32020", "-32020", true, toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`))},
		{"-32020 mapped on 400 is the caller's", "JSONRPC_ERROR", "-32020", "-32020", false, toolCall(post(400, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`))},
		{"503", "HTTP_ERROR", "503", "", true, toolCall(post(503, "", ""))},
		{"500 with a code rides", "HTTP_ERROR", "500", "-32603", true, toolCall(post(500, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`))},
		{"404 with a code rides", "HTTP_ERROR", "404", "-32001", false, withVersion(toolCall(post(404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)), "2025-11-25")},
		{"429", "HTTP_ERROR", "429", "", false, toolCall(post(429, "", ""))},
		{"refused", "NO_RESPONSE", "connection_refused", "", true, toolCall(classify.Attempt{Failure: schema.FailureConnectionRefused})},
		{"reset", "NO_RESPONSE", "reset", "", true, toolCall(classify.Attempt{Failure: schema.FailureReset})},
		{"timeout", "NO_RESPONSE", "timeout", "", true, toolCall(classify.Attempt{Failure: schema.FailureTimeout})},
		{"client abort, 2025", "NO_RESPONSE", "client_abort", "", false, withVersion(toolCall(classify.Attempt{Failure: schema.FailureClientAbort}), "2025-11-25")},
		{"failure kind not stated", "NO_RESPONSE", "_OTHER", "", true, toolCall(classify.Attempt{})},
		{"202, never answered", "NO_RESPONSE", "_OTHER", "", true, toolCall(accepted)},
		{"stream reset", "STREAM_INCOMPLETE", "reset", "", true, toolCall(stream(schema.StreamReset))},
		{"stream timeout", "STREAM_INCOMPLETE", "timeout", "", true, toolCall(stream(schema.StreamTimeout))},
		{"stream closed by the client, 2025", "STREAM_INCOMPLETE", "client_abort", "", false, withVersion(toolCall(stream(schema.StreamClientClosed)), "2025-11-25")},
		{"stream ended without the response", "STREAM_INCOMPLETE", "_OTHER", "", true, toolCall(stream(schema.StreamComplete))},
		{"cancelled", "CANCELLED", "cancelled", "", false, cancelled},
		{"cancelled, late error kept", "CANCELLED", "cancelled", "-32602", false, late},
		{"malformed", "MALFORMED_JSON", "malformed_json", "", true, toolCall(post(200, "application/json", "{unclosed"))},
		{"envelope", "INVALID_ENVELOPE", "invalid_envelope", "", true, toolCall(post(200, "application/json", wrongID))},
		{"tool result", "INVALID_TOOL_RESULT", "invalid_tool_result", "", true, toolCall(post(200, "application/json", notArray))},
		{"result", "INVALID_RESULT", "invalid_result", "", true, &classify.Evidence{Method: "tools/list", ID: id1, Attempts: []classify.Attempt{post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`)}}},
		{"not recorded", "UNKNOWN", "", "", false, toolCall(classify.Attempt{Responded: true, Status: 200, ContentType: "application/json"})},
		{"reported failure, no type", "UNKNOWN", "_OTHER", "", true, rep(schema.Reported{Failed: true, Message: "Request timed out"})},
		{"reported type kept", "UNKNOWN", "java.io.IOException", "", true, rep(schema.Reported{ErrorType: "java.io.IOException"})},
		{"reported code", "JSONRPC_ERROR", "-32602", "-32602", false, rep(schema.Reported{ErrorType: "-32602", Failed: true})},
		{"reported 401", "HTTP_ERROR", "401", "", false, rep(schema.Reported{HTTPStatus: 401})},
		{"reported 500 with a code", "HTTP_ERROR", "500", "-32603", true, rep(schema.Reported{HTTPStatus: 500, StatusCode: "-32603"})},
		{"reported timeout", "NO_RESPONSE", "timeout", "", true, rep(schema.Reported{ErrorType: "timeout"})},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		v := classify.Classify(c.ev)
		seen[v.Outcome] = true
		if v.Outcome != c.outcome || v.ErrorType != c.errorType || v.RPCStatusCode != c.rpcCode || v.ServerError != c.server {
			t.Errorf("%s: %s error_type %q rpc %q server_error %v, want %s %q %q %v (%s)", c.name, v.Outcome, v.ErrorType,
				v.RPCStatusCode, v.ServerError, c.outcome, c.errorType, c.rpcCode, c.server, v.Reason)
		}
		if (v.ErrorType == "") != (v.ErrorKind == "") {
			t.Errorf("%s: error_type %q but error_kind %q: both are set exactly when the exchange failed", c.name, v.ErrorType, v.ErrorKind)
		}
	}
	for _, o := range classify.Outcomes {
		if !seen[o] {
			t.Errorf("no case for outcome %s", o)
		}
	}
}

// TestErrorKinds checks every kind through Classify, on the texts and codes
// real SDKs put on the wire, and that every kind of the vocabulary is
// reachable.
func TestErrorKinds(t *testing.T) {
	rpc := func(code, msg string) *classify.Evidence {
		return toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":`+code+`,"message":"`+msg+`"}}`))
	}
	tool := func(text string) *classify.Evidence {
		return toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+text+`"}],"isError":true}}`))
	}
	status := func(st int, version, body string, onSession bool) *classify.Evidence {
		ev := withVersion(toolCall(post(st, "application/json", body)), version)
		ev.OnSession = onSession
		return ev
	}
	stream := func(end string) *classify.Evidence {
		at := post(200, "text/event-stream", sse())
		at.StreamEnd = end
		return toolCall(at)
	}
	cancelled := toolCall(classify.Attempt{Failure: schema.FailureReset})
	cancelled.Cancelled = true
	cases := []struct {
		name, kind string
		ev         *classify.Evidence
	}{
		// Validation: the same failure as a protocol error and as a tool error.
		{"-32602", "validation", rpc("-32602", "Invalid params")},
		{"Go SDK isError (PR #863)", "validation", tool(`validating \"arguments\": validating root: required: missing properties: [\"city\"]`)},
		{"Go SDK unmarshal", "validation", tool(`invalid params: validating \"arguments\": unmarshaling arguments: json: cannot unmarshal number into Go value`)},
		{"TS1 isError", "validation", tool("MCP error -32602: Input validation error: Invalid arguments for tool get_weather: expected string")},
		{"FastMCP pydantic", "validation", tool("Error executing tool get_weather: 1 validation error for get_weatherArguments\\ncity\\n  Field required")},
		{"HTTP 422", "validation", status(422, "2025-11-25", "", false)},
		// mcp-go's argument accessors (RequireFloat, ...), returned by tools
		// as isError text, and its input schema validation.
		{"mcp-go RequireFloat", "validation", tool(`argument \"count\" cannot be converted to float64`)},
		{"mcp-go RequireString", "validation", tool(`argument \"text\" is not a string`)},
		{"mcp-go RequireInt", "validation", tool(`argument \"n\" is not an int`)},
		{"mcp-go required", "validation", tool(`required argument \"city\" not found`)},
		{"mcp-go slice item", "validation", tool(`item 2 in argument \"ids\" is not an int`)},
		{"mcp-go schema validation", "validation", tool(`input schema validation failed: at '/count': got string, want number`)},
		{"argument about a file is a tool error", "tool", tool(`argument \"path\" is not a directory`)},
		// Unknown tool.
		{"TS1 isError unknown tool", "unknown_tool", tool("MCP error -32602: Tool delete_everything not found")},
		{"PY1 FastMCP", "unknown_tool", tool("Unknown tool: delete_everything")},
		{"Go SDK -32602", "unknown_tool", rpc("-32602", `unknown tool \"delete_everything\"`)},
		{"mcp-go", "unknown_tool", rpc("-32602", "tool 'delete_everything' not found")},
		// Methods, resources, prompts.
		{"-32601", "unknown_method", rpc("-32601", "Method not found")},
		{"2026 404 -32601 with a null id", "unknown_method", status(404, "2026-07-28", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`, false)},
		{"HTTP 501", "unknown_method", status(501, "2025-11-25", "", false)},
		{"-32002", "not_found", rpc("-32002", "Resource not found")},
		{"2026 resource not found is -32602", "not_found", rpc("-32602", "Resource file:///x.txt not found")},
		{"TS1 unknown prompt", "not_found", rpc("-32602", "Prompt summarize not found")},
		{"404 without a session", "not_found", status(404, "2025-11-25", "", false)},
		// Auth, rate limits, timeouts.
		{"401", "auth", status(401, "2025-11-25", "", false)},
		{"403", "auth", status(403, "2026-07-28", "", false)},
		{"tool says 401", "auth", tool("Error: upstream API returned HTTP 401 Unauthorized")},
		{"429", "rate_limit", status(429, "2025-11-25", "", false)},
		{"rate limited tool", "rate_limit", tool("Rate limit exceeded, retry in 30s")},
		{"Tyk -32003", "rate_limit", rpc("-32003", "Rate limit exceeded")},
		{"TS -32001", "timeout", rpc("-32001", "Request timed out")},
		{"TS1 -32001 as isError text", "timeout", tool("MCP error -32001: Request timed out")},
		{"PY1 408", "timeout", rpc("408", "Timed out while waiting for response to ClientRequest. Waited 30.0 seconds.")},
		{"Go deadline", "timeout", tool("context deadline exceeded")},
		{"HTTP 504", "timeout", status(504, "2025-11-25", "", false)},
		{"HTTP 408", "timeout", status(408, "2025-11-25", "", false)},
		{"failure timeout", "timeout", toolCall(classify.Attempt{Failure: schema.FailureTimeout})},
		{"stream timeout", "timeout", stream(schema.StreamTimeout)},
		// Cancellation.
		{"CANCELLED", "cancelled", cancelled},
		{"2026 client abort", "cancelled", toolCall(classify.Attempt{Failure: schema.FailureClientAbort})},
		{"2025 client abort", "cancelled", withVersion(toolCall(classify.Attempt{Failure: schema.FailureClientAbort}), "2025-11-25")},
		{"Go context canceled", "cancelled", tool("context canceled")},
		// Sessions and versions.
		{"404 on a session", "session", status(404, "2025-11-25", "", true)},
		{"TS1 404 -32001 Session not found", "session", status(404, "2025-11-25", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, false)},
		{"PY1 400 Missing session ID", "session", status(400, "2025-11-25", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`, false)},
		{"TS1 400 not initialized", "session", status(400, "2025-11-25", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`, false)},
		{"Go SDK plain text 404", "session", status(404, "2025-11-25", "session not found", false)},
		{"PY1 32600 Session terminated", "session", rpc("32600", "Session terminated")},
		{"-32022", "version", rpc("-32022", "Unsupported protocol version")},
		{"2026 400 -32022", "version", status(400, "2026-07-28", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}`, false)},
		{"legacy initialize -32602", "version", rpc("-32602", "Unsupported protocol version")},
		{"TS1 400 -32000 version", "version", status(400, "2025-11-25", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version (supported versions: 2025-06-18)"},"id":null}`, false)},
		{"-32020", "header_mismatch", rpc("-32020", "Header mismatch")},
		{"-32021", "capability", rpc("-32021", "Missing required client capability")},
		{"-32042", "elicitation_required", rpc("-32042", "This request requires more information.")},
		// Protocol.
		{"-32700", "parse", rpc("-32700", "Parse error")},
		{"-32600", "invalid_request", rpc("-32600", "Invalid Request")},
		{"406", "invalid_request", status(406, "2025-11-25", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`, false)},
		{"415", "invalid_request", status(415, "2025-11-25", "", false)},
		// Server side.
		{"-32603", "internal", rpc("-32603", "Internal error")},
		{"500", "internal", status(500, "2025-11-25", "", false)},
		{"502", "unavailable", status(502, "2025-11-25", "<html>Bad gateway</html>", false)},
		{"503", "unavailable", status(503, "2025-11-25", "", false)},
		{"refused", "network", toolCall(classify.Attempt{Failure: schema.FailureConnectionRefused})},
		{"reset", "network", toolCall(classify.Attempt{Failure: schema.FailureReset})},
		{"stream reset", "network", stream(schema.StreamReset)},
		{"TS -32000 Connection closed", "network", rpc("-32000", "Connection closed")},
		{"202 never answered", "no_response", toolCall(classify.Attempt{Responded: true, Status: 202, BodyRecorded: true, BodyEmpty: true})},
		{"stream ended without the response", "no_response", stream(schema.StreamComplete)},
		{"malformed", "invalid_response", toolCall(post(200, "application/json", "{unclosed"))},
		{"invalid tool result", "invalid_response", toolCall(post(200, "application/json", notArray))},
		// Tool failures not otherwise recognised.
		{"plain tool failure", "tool", tool("Order ORD-1042 cannot be shipped to a PO box")},
		{"FastMCP wrapper", "tool", tool("Error executing tool get_weather: day is out of range for month")},
		{"FastMCP wrapper as -32603", "tool", rpc("-32603", "Error executing tool get_weather: day is out of range for month")},
		{"truncated tool error", "tool", &classify.Evidence{Method: "tools/call", ID: id1, Response: &schema.Message{Where: schema.InStdio, BatchIndex: -1, Kind: schema.MsgResponse, ID: id1, Truncated: true,
			Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Disk quota…[118 chars truncated]...`)}}},
		{"unrecognised code", "other", rpc("-32099", "something odd")},
		{"reported error.type", "other", &classify.Evidence{Method: "tools/call", ID: id1, Reported: &schema.Reported{ErrorType: "java.io.IOException"}}},
		// No kind on success or on evidence that settles nothing.
		{"success", "", toolCall(post(200, "application/json", good))},
		{"input required", "", toolCall(post(200, "application/json", inputReq))},
		{"unknown", "", toolCall(classify.Attempt{Failure: schema.FailurePending})},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		v := classify.Classify(c.ev)
		seen[v.ErrorKind] = true
		if v.ErrorKind != c.kind {
			t.Errorf("%s: error_kind %q, want %q (%s %s)", c.name, v.ErrorKind, c.kind, v.Outcome, v.Reason)
		}
	}
	for _, k := range classify.ErrorKinds {
		if !seen[k] {
			t.Errorf("no case gives error kind %s", k)
		}
	}
}

func TestErrorKindIsPure(t *testing.T) {
	code := int64(-32602)
	f := classify.KindFacts{Outcome: "JSONRPC_ERROR", ErrorType: "-32602", Code: &code, Text: "Tool x not found"}
	if a, b := classify.ErrorKind(f), classify.ErrorKind(f); a != b || a != "unknown_tool" {
		t.Errorf("ErrorKind: %q then %q", a, b)
	}
	// Long texts are read only so far: no pattern runs over megabytes.
	f = classify.KindFacts{Outcome: "TOOL_ERROR", ErrorType: "tool_error", Text: strings.Repeat("x", 1<<20) + " timed out"}
	if k := classify.ErrorKind(f); k != "tool" {
		t.Errorf("a pattern beyond the read limit matched: %s", k)
	}
}

// TestDuplicateKeysLastWins: every field that decides a verdict resolves a
// repeated key as JSON.parse does.
func TestDuplicateKeysLastWins(t *testing.T) {
	cases := []struct {
		name, body, outcome string
	}{
		{"isError false then true", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"isError":true}}`, "TOOL_ERROR"},
		{"isError true then false", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true,"isError":false}}`, "TOOL_SUCCESS"},
		{"id wrong then right", `{"jsonrpc":"2.0","id":99,"id":1,"result":{"content":[]}}`, "TOOL_SUCCESS"},
		{"id right then wrong", `{"jsonrpc":"2.0","id":1,"id":99,"result":{"content":[]}}`, "INVALID_ENVELOPE"},
		{"jsonrpc 1.0 then 2.0", `{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "TOOL_SUCCESS"},
		{"jsonrpc 2.0 then 1.0", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"result":{"content":[]}}`, "INVALID_ENVELOPE"},
		{"result: tool error then success", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true},"result":{"content":[]}}`, "TOOL_SUCCESS"},
		{"result: invalid then valid", `{"jsonrpc":"2.0","id":1,"result":{"content":"x"},"result":{"content":[]}}`, "TOOL_SUCCESS"},
		{"content invalid then valid", `{"jsonrpc":"2.0","id":1,"result":{"content":"x","content":[]}}`, "TOOL_SUCCESS"},
		{"content valid then invalid", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"content":"x"}}`, "INVALID_TOOL_RESULT"},
		{"resultType partial then complete", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"partial","resultType":"complete","content":[]}}`, "TOOL_SUCCESS"},
		{"resultType complete then input_required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resultType":"input_required","requestState":"s"}}`, "INPUT_REQUIRED"},
		{"code string then integer", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","code":-32602,"message":"m"}}`, "JSONRPC_ERROR"},
		{"code integer then string", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"code":"x","message":"m"}}`, "INVALID_ENVELOPE"},
		{"message missing then present", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":1,"message":"m"}}`, "JSONRPC_ERROR"},
		{"escaped key is the same key", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"is\u0045rror":true}}`, "TOOL_ERROR"},
	}
	for _, c := range cases {
		check(t, c.name, toolCall(post(200, "application/json", c.body)), c.outcome, classify.LayerOf(c.outcome))
	}
	// The code that wins is the one reported.
	v := classify.Classify(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"a","code":-32602,"message":"b"}}`)))
	if v.ErrorCode == nil || *v.ErrorCode != -32602 || v.ErrorMessage != "b" || v.ErrorType != "-32602" {
		t.Errorf("repeated code and message: %+v", v)
	}
	// On an HTTP error, and on a 2026-07-28 mapped error.
	v = classify.Classify(withVersion(toolCall(post(500, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"code":-32603,"message":"x"}}`)), "2025-11-25"))
	if v.ErrorCode == nil || *v.ErrorCode != -32603 {
		t.Errorf("HTTP error detail: %+v", v)
	}
	v = classify.Classify(toolCall(post(400, "application/json", `{"jsonrpc":"2.0","id":2,"id":1,"error":{"code":-32020,"message":"x"}}`)))
	if v.Outcome != "JSONRPC_ERROR" {
		t.Errorf("2026 mapped error with a repeated id: %s", v.Outcome)
	}
	// The isError text read for the kind is the winning content's.
	v = classify.Classify(toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"rate limit exceeded"}],"content":[{"type":"text","text":"Unknown tool: x"}],"isError":true}}`)))
	if v.ErrorKind != "unknown_tool" {
		t.Errorf("kind from the first content: %s", v.ErrorKind)
	}
	// A truncated frame: the last surviving isError wins.
	trunc := func(raw string) *classify.Evidence {
		m := schema.Message{Where: schema.InStdio, BatchIndex: -1, Kind: schema.MsgResponse, ID: id1, Raw: []byte(raw), Truncated: true}
		return &classify.Evidence{Method: "tools/call", ID: id1, Response: &m}
	}
	check(t, "truncated false then true", trunc(`{"jsonrpc":"2.0","id":1,"result":{"isError":false,"isError":true,"content":[{"type":"text","text":"…[9 chars truncated]...`), "TOOL_ERROR", "application")
	check(t, "truncated true then false", trunc(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"isError":false,"content":[{"type":"text","text":"…[9 chars truncated]...`), "UNKNOWN", "unknown")
}

// TestDecodeLastWins: decode reads a message's id and method as JSON.parse
// does, and the classifier agrees with it.
func TestDecodeLastWins(t *testing.T) {
	m := decode.AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","id":"a","method":"tools/call","params":{"name":"x","name":"y"}}`), schema.InResponseBody, 0)[0]
	if m.Kind != schema.MsgRequest || m.Method != "tools/call" || m.ID != (schema.ID{Type: schema.IDString, Text: "a"}) {
		t.Errorf("request: %+v", m)
	}
	other := decode.AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"y"}}`), schema.InResponseBody, 0)[0]
	if m.CallHash != other.CallHash {
		t.Error("the call hash reads the first of two names")
	}
	n := decode.AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":1,"method":"notifications/x"}`), schema.InResponseBody, 0)[0]
	if n.Kind != schema.MsgRequest || n.Method != "notifications/x" {
		t.Errorf("method: %+v", n)
	}
}

func TestIDsCompareExactly(t *testing.T) {
	n := func(s string) schema.ID { return schema.ID{Type: schema.IDNumber, Text: s} }
	s := func(x string) schema.ID { return schema.ID{Type: schema.IDString, Text: x} }
	same := [][2]schema.ID{
		{n("1"), n("1.0")}, {n("1"), n("1e0")}, {n("1"), n("1E0")}, {n("1"), n("10e-1")}, {n("1"), n("0.1e1")},
		{n("100"), n("1e2")}, {n("100"), n("1E+2")}, {n("0"), n("-0")}, {n("0"), n("0.000")}, {n("-5"), n("-5.0")},
		{n("1.5"), n("1.50")}, {n("1.5"), n("15e-1")},
		{n("9007199254740993"), n("9007199254740993")},
		{n("123456789012345678901234567890"), n("123456789012345678901234567890.0")},
		{n("1e400"), n("10e399")},
		{s("9007199254740993"), s("9007199254740993")},
	}
	for _, p := range same {
		if !classify.SameID(p[0], p[1]) || !classify.SameID(p[1], p[0]) {
			t.Errorf("%v and %v differ", p[0], p[1])
		}
	}
	differ := [][2]schema.ID{
		{n("9007199254740992"), n("9007199254740993")}, // equal as float64
		{n("18446744073709551616"), n("18446744073709551617")},
		{n("123456789012345678901234567890"), n("123456789012345678901234567891")},
		{n("1"), n("1.0000000000000000001")},
		{n("1e400"), n("1e401")},
		{n("1"), n("-1")},
		{s("1"), s("1.0")}, // strings compare as written
		{s("a"), s("A")},
		{n("1"), s("1")}, // type-sensitive
		{schema.ID{Type: schema.IDNull}, schema.ID{Type: schema.IDNull}},
		{n("01"), n("1")}, // not a JSON number: as written
		{n("1e"), n("1")},
	}
	for _, p := range differ {
		if classify.SameID(p[0], p[1]) || classify.SameID(p[1], p[0]) {
			t.Errorf("%v and %v match", p[0], p[1])
		}
	}
	if k := classify.IDKey(n("1e999999999")); len(k) > 32 {
		t.Errorf("a huge exponent is written out: %d characters", len(k))
	}
	for in, want := range map[string]string{"1": "1", "1.0": "1", "1e2": "100", "-0": "0", "1.5": "15e-1", "1e400": "1e400", "abc": "abc", "1.": "1."} {
		if got := classify.IDKey(n(in)); got != want {
			t.Errorf("IDKey(%s) = %s, want %s", in, got, want)
		}
	}
	// A response whose id differs from the request's only beyond 2^53 is
	// another request's.
	ev := &classify.Evidence{Method: "tools/call", ID: n("9007199254740993"),
		Attempts: []classify.Attempt{post(200, "application/json", `{"jsonrpc":"2.0","id":9007199254740992,"result":{"content":[]}}`)}}
	check(t, "big ids", ev, "INVALID_ENVELOPE", "protocol")
	ev.Attempts = []classify.Attempt{post(200, "application/json", `{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[]}}`)}
	check(t, "big ids, same", ev, "TOOL_SUCCESS", "application")
}

func TestStateless(t *testing.T) {
	for v, want := range map[string]bool{"2026-07-28": true, "2026-12-15": true, "2027-01-01": true, "2025-11-25": false,
		"2025-03-26": false, "2024-11-05": false, "": false, "DRAFT-2026-v1": false, "2026-07-2x": false, "2026/07/28": false} {
		if got := classify.Stateless(v); got != want {
			t.Errorf("Stateless(%q) = %v", v, got)
		}
	}
}
