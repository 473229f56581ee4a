// Command gen writes samples/protocol/client.ndjson, a client-side wire log
// of protocol edge cases (errors carried by mapped HTTP statuses, the error
// texts of real SDKs, repeated JSON keys, ids beyond 2^53), and the tables
// between the markers in samples/protocol/README.md.
//
//	go run ./samples/protocol/gen
//
// Bodies are written by hand as JSON text (a repeated key or a 19-digit id
// cannot come out of encoding/json), each next to the expected verdict and
// columns, stated by hand: nothing here is computed by package classify. The
// output is deterministic. Before writing, the generator checks that every
// body it wrote as JSON is valid JSON and that every expectation points at a
// line carrying a request with that method and id.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mcptrace/samples/internal/gentab"
	"mcptrace/schema"
)

func main() {
	dir, err := gentab.Dir("protocol")
	if err != nil {
		gentab.Fail(err)
	}
	g := &gen{now: time.Date(2026, 10, 22, 8, 0, 0, 0, time.UTC)}
	g.mappedStatuses()
	g.sdkErrorTexts()
	g.jsonEdges()
	if err := g.check(); err != nil {
		gentab.Fail(err)
	}
	if err := g.write(dir); err != nil {
		gentab.Fail(err)
	}
}

const file = "protocol/client.ndjson"

const (
	v2026 = "2026-07-28"
	v2025 = "2025-11-25"
)

var (
	assistant = &schema.Implementation{Name: "acme-assistant", Version: "3.2.0"}
	weatherGo = &schema.Implementation{Name: "weather-go", Version: "0.7.1"} // a Go SDK server
	notesTS   = &schema.Implementation{Name: "notes-ts", Version: "2.4.0"}   // a TypeScript SDK v1 McpServer
	ticketsPy = &schema.Implementation{Name: "tickets-py", Version: "1.9.3"} // a Python FastMCP server
	gateway   = &schema.Implementation{Name: "mcp-gateway", Version: "0.12.0"}
)

// exchange is one request of the log, with what it must be judged.
type exchange struct {
	line     int
	conn     string
	method   string
	id       string // the id as JSON text
	what     string
	outcome  string
	statuses []int
	cols     [][2]string // column, value (DuckDB text, "null" for null)
}

type gen struct {
	now       time.Time
	lines     []string
	exchanges []exchange
	bodies    []string // every JSON body written, checked before writing
}

// call is one POST of a request and what came back.
type call struct {
	conn, version, session string
	server                 *schema.Implementation
	method, id, tool       string
	body                   string         // the request body as sent
	reqHeaders             map[string]any // extra request headers
	status                 int            // 0: failure
	respHeaders            map[string]any // besides content-type
	contentType            string         // of the response
	resp                   string         // response body as received
	streamEnd              string         // for text/event-stream
	failure                string         // failure kind when status is 0
	took                   time.Duration  // request to end of response
}

// post writes the record of c and returns its line.
func (g *gen) post(c call) int {
	g.now = g.now.Add(7 * time.Second) // the log spans minutes: no conversation outlives -max-hold
	h := map[string]any{
		"accept":               "application/json, text/event-stream",
		"content-type":         "application/json",
		"mcp-protocol-version": c.version,
	}
	if c.version == v2026 || strings.HasPrefix(c.version, "2026-1") {
		h["mcp-method"] = c.method
		if c.tool != "" {
			h["mcp-name"] = c.tool
		}
	}
	if c.session != "" {
		h["mcp-session-id"] = c.session
	}
	for k, v := range c.reqHeaders {
		h[k] = v
	}
	body := c.body
	g.bodies = append(g.bodies, body)
	r := schema.WireRecord{Format: schema.WireFormat, Time: gentab.Stamp(g.now), EndTime: gentab.Stamp(g.now.Add(c.took)),
		Side: schema.SideClient, Transport: schema.TransportStreamableHTTP, Client: assistant, Server: c.server,
		Connection: c.conn, SessionID: c.session, ProtocolVersion: c.version,
		HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: "http://localhost:8931/mcp", Headers: h, Body: &body}}}
	if c.status == 0 {
		r.HTTP.Failure = &schema.WireFailure{Kind: c.failure, Message: failureText[c.failure]}
	} else {
		rh := map[string]any{}
		for k, v := range c.respHeaders {
			rh[k] = v
		}
		if c.contentType != "" {
			rh["content-type"] = c.contentType
		}
		resp := c.resp
		r.HTTP.Response = &schema.WireResponse{Status: c.status, Headers: rh, ContentType: c.contentType, Body: &resp, StreamEnd: c.streamEnd}
		if strings.HasPrefix(c.contentType, "application/json") {
			g.bodies = append(g.bodies, resp)
		}
	}
	g.lines = append(g.lines, gentab.JS(r))
	return len(g.lines)
}

var failureText = map[string]string{
	schema.FailureConnectionRefused: "connect ECONNREFUSED 127.0.0.1:8931",
	schema.FailureTimeout:           "The operation was aborted due to timeout",
}

func (g *gen) expect(c call, line int, what, outcome string, statuses []int, cols ...[2]string) {
	g.exchanges = append(g.exchanges, exchange{line: line, conn: c.conn, method: c.method, id: c.id, what: what,
		outcome: outcome, statuses: statuses, cols: cols})
}

func col(name, value string) [2]string { return [2]string{name, value} }

// failed states the columns every failure is checked for.
func failed(kind, errorType, rpcCode string, serverError bool, isError string) [][2]string {
	return [][2]string{col("error_kind", kind), col("error_type", errorType), col("rpc_response_status_code", rpcCode),
		col("server_error", strconv.FormatBool(serverError)), col("is_error", isError)}
}

// succeeded states them for a success.
func succeeded(isError string) [][2]string {
	return failed("null", "null", "null", false, isError)
}

// meta2026 is the _meta every 2026-07-28 request carries.
func meta2026(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"acme-assistant","version":"3.2.0"}}`
}

func toolCall(id, tool, args, version string) string {
	m := ""
	if version != v2025 {
		m = "," + meta2026(version)
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + m + `}}`
}

func rpcError(id, code, message, data string) string {
	d := ""
	if data != "" {
		d = `,"data":` + data
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + code + `,"message":` + strconv.Quote(message) + d + `}}`
}

func toolResult(id, text string, isError bool) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + strconv.Quote(text) + `}],"isError":` + strconv.FormatBool(isError) + `}}`
}

func complete(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":` + strconv.Quote(text) + `}],"isError":false}}`
}

// ---------------------------------------------------------------------------
// Rule 1: in 2026-07-28 a 4xx whose body is a JSON-RPC error with the
// request's own id is JSONRPC_ERROR; every other non-2xx is HTTP_ERROR.

func (g *gen) mappedStatuses() {
	jsonCT := "application/json"
	c := call{conn: "proto-01-2026-400-invalid-params", version: v2026, server: weatherGo, method: "tools/call", id: "1", tool: "get_forecast",
		body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_forecast","arguments":{"city":"Lyon","days":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"acme-assistant","version":"3.2.0"}}}}`,
		status: 400, contentType: jsonCT, took: 4 * time.Millisecond,
		resp: rpcError("1", "-32602", `missing required _meta field "io.modelcontextprotocol/clientCapabilities"`, "")}
	g.expect(c, g.post(c), "2026-07-28: the request lacks the required `_meta` client capabilities; the Go SDK answers 400 with -32602 and the request's id",
		"JSONRPC_ERROR", []int{400}, append(failed("validation", "-32602", "-32602", false, "null"), col("retry_advice", "fix_arguments"))...)

	c = call{conn: "proto-02-2026-400-header-mismatch", version: v2026, server: weatherGo, method: "tools/call", id: "2", tool: "get_weather",
		body:   toolCall("2", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 400, contentType: jsonCT, took: 3 * time.Millisecond,
		resp: rpcError("2", "-32020", `Header mismatch: Mcp-Name "get_weather" does not match params.name "get_forecast"`, "")}
	g.expect(c, g.post(c), "2026-07-28: the `Mcp-Name` header names another tool than the body; 400 with -32020 and the request's id",
		"JSONRPC_ERROR", []int{400}, append(failed("header_mismatch", "-32020", "-32020", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-03-2026-400-capability", version: v2026, server: weatherGo, method: "tools/call", id: "3", tool: "book_trip",
		body:   toolCall("3", "book_trip", `{"city":"Lyon","from":"2026-11-02"}`, v2026),
		status: 400, contentType: jsonCT, took: 3 * time.Millisecond,
		resp: rpcError("3", "-32021", "Missing required client capability", `{"requiredCapabilities":{"elicitation":{"form":{}}}}`)}
	g.expect(c, g.post(c), "2026-07-28: the tool needs form elicitation, which the client did not declare; 400 with -32021",
		"JSONRPC_ERROR", []int{400}, append(failed("capability", "-32021", "-32021", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-04-2026-400-unsupported-version", version: "2026-12-15", server: weatherGo, method: "tools/call", id: "4", tool: "get_forecast",
		body:   toolCall("4", "get_forecast", `{"city":"Lyon","days":3}`, "2026-12-15"),
		status: 400, contentType: jsonCT, took: 2 * time.Millisecond,
		resp: rpcError("4", "-32022", "Unsupported protocol version", `{"supported":["2026-07-28"],"requested":"2026-12-15"}`)}
	g.expect(c, g.post(c), "a client built from a later spec draft asks for a version after 2026-07-28 (`2026-12-15`, hypothetical); the server supports only 2026-07-28 and answers 400 with -32022",
		"JSONRPC_ERROR", []int{400}, append(failed("version", "-32022", "-32022", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-05-2026-404-method-not-found", version: v2026, server: weatherGo, method: "completion/complete", id: "5",
		body:   `{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"forecast"},"argument":{"name":"city","value":"Ly"},` + meta2026(v2026) + `}}`,
		status: 404, contentType: jsonCT, took: 2 * time.Millisecond,
		resp: rpcError("5", "-32601", "Method not found", "")}
	g.expect(c, g.post(c), "2026-07-28: the server does not implement `completion/complete`; 404 with -32601 (the JSON body tells it from a legacy 404)",
		"JSONRPC_ERROR", []int{404}, append(failed("unknown_method", "-32601", "-32601", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-06-2026-400-null-id", version: v2026, server: gateway, method: "tools/call", id: "6", tool: "get_weather",
		body:   toolCall("6", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 400, contentType: jsonCT, took: 1 * time.Millisecond,
		resp: rpcError("null", "-32020", "Header mismatch: Mcp-Name does not match the request body", "")}
	g.expect(c, g.post(c), "2026-07-28: a gateway rejects the header mismatch itself, before reading the id: `\"id\":null` answers no request, so HTTP_ERROR (the code rides along)",
		"HTTP_ERROR", []int{400}, append(failed("header_mismatch", "400", "-32020", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-07-2026-400-other-id", version: v2026, server: weatherGo, method: "tools/call", id: "7", tool: "get_forecast",
		body:   toolCall("7", "get_forecast", `{"city":"Lyon","days":"three"}`, v2026),
		status: 400, contentType: jsonCT, took: 3 * time.Millisecond,
		resp: rpcError(`"7"`, "-32602", `invalid params: days: got string, want integer`, "")}
	g.expect(c, g.post(c), "2026-07-28: 400 with -32602, but the server echoes the id as the string `\"7\"` for the number `7`: not the request's id, so HTTP_ERROR",
		"HTTP_ERROR", []int{400}, append(failed("validation", "400", "-32602", false, "null"), col("retry_advice", "fix_arguments"))...)

	c = call{conn: "proto-08-2026-400-html", version: v2026, server: gateway, method: "tools/call", id: "8", tool: "get_forecast",
		body:   toolCall("8", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 400, contentType: "text/html", respHeaders: map[string]any{"server": "nginx"}, took: 1 * time.Millisecond,
		resp: "<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"}
	g.expect(c, g.post(c), "2026-07-28: a reverse proxy answers 400 with its own HTML page: no JSON-RPC error, HTTP_ERROR",
		"HTTP_ERROR", []int{400}, append(failed("invalid_request", "400", "null", false, "null"), col("retry_advice", "investigate_compatibility"))...)

	c = call{conn: "proto-09-2026-500-own-id", version: v2026, server: weatherGo, method: "tools/call", id: "9", tool: "get_forecast",
		body:   toolCall("9", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 500, contentType: jsonCT, took: 41 * time.Millisecond,
		resp: rpcError("9", "-32603", "Internal error", "")}
	g.expect(c, g.post(c), "2026-07-28: 500 with -32603 and the request's id: a 5xx stays HTTP_ERROR, and counts as the server's error",
		"HTTP_ERROR", []int{500}, append(failed("internal", "500", "-32603", true, "null"), col("retry_advice", "retry_if_idempotent"))...)

	c = call{conn: "proto-10-2025-400-invalid-params", version: v2025, session: "c4f1e2a9-77b0-4d2e-9a51-3e6f0b8d2c14", server: ticketsPy, method: "tools/call", id: "10", tool: "create_ticket",
		body:   toolCall("10", "create_ticket", `{"title":"Printer on 3rd floor jams","priority":"urgent"}`, v2025),
		status: 400, contentType: jsonCT, took: 6 * time.Millisecond,
		resp: rpcError("10", "-32602", "Invalid params: priority must be one of low, normal, high", "")}
	g.expect(c, g.post(c), "2025-11-25: the same kind of 400 with -32602 and the request's id: before 2026-07-28 the transport layer wins, HTTP_ERROR",
		"HTTP_ERROR", []int{400}, append(failed("validation", "400", "-32602", false, "null"), col("retry_advice", "fix_arguments"))...)

	c = call{conn: "proto-11-2025-404-session", version: v2025, session: "6b0d4e1f-2c3a-4b59-8e7d-91a2f3c4d5e6", server: weatherGo, method: "tools/call", id: "11", tool: "get_forecast",
		body:   toolCall("11", "get_forecast", `{"city":"Lyon","days":3}`, v2025),
		status: 404, contentType: "text/plain; charset=utf-8", respHeaders: map[string]any{"x-content-type-options": "nosniff"}, took: 1 * time.Millisecond,
		resp: "session not found\n"}
	g.expect(c, g.post(c), "2025-11-25: the Go SDK's plain-text 404 on an expired session",
		"HTTP_ERROR", []int{404}, append(failed("session", "404", "null", false, "null"), col("retry_advice", "reinitialize_session"))...)

	c = call{conn: "proto-12-2026-stale-session-header", version: v2026, session: "d2c1b0a9-8f7e-4d6c-b5a4-93e2f1d0c8b7", server: weatherGo, method: "tools/call", id: "12", tool: "get_forecast",
		body:   toolCall("12", "get_forecast", `{"city":"Annecy","days":3}`, v2026),
		status: 200, contentType: jsonCT, took: 38 * time.Millisecond,
		resp: complete("12", "Annecy: 11°C, light rain; tomorrow 13°C, cloudy; Thursday 15°C, sunny")}
	g.expect(c, g.post(c), "2026-07-28 with an `Mcp-Session-Id` left over from an older session: the server ignores it, and `session_id` stays null",
		"TOOL_SUCCESS", []int{200}, append(succeeded("false"), col("session_id", "null"))...)
}

// ---------------------------------------------------------------------------
// error_kind: the texts and codes real SDKs put on the wire.

func (g *gen) sdkErrorTexts() {
	jsonCT := "application/json"
	sseCT := "text/event-stream"
	sse := func(msgs ...string) string {
		s := ""
		for _, m := range msgs {
			s += "event: message\ndata: " + m + "\n\n"
		}
		return s
	}
	c := call{conn: "proto-13-go-validation-iserror", version: v2025, session: "0f9e8d7c-6b5a-4938-a716-2534f1e0d9c8", server: weatherGo, method: "tools/call", id: "13", tool: "get_forecast",
		body:   toolCall("13", "get_forecast", `{"days":3}`, v2025),
		status: 200, contentType: jsonCT, took: 2 * time.Millisecond,
		resp: toolResult("13", `validating "arguments": validating root: required: missing properties: ["city"]`, true)}
	g.expect(c, g.post(c), "the Go SDK (since its PR #863) returns an argument validation failure as an `isError` result",
		"TOOL_ERROR", []int{200}, failed("validation", "tool_error", "null", true, "true")...)

	c = call{conn: "proto-14-ts-unknown-tool-iserror", version: v2025, session: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", server: notesTS, method: "tools/call", id: "14", tool: "archive_note",
		body:   toolCall("14", "archive_note", `{"noteId":"n-204"}`, v2025),
		status: 200, contentType: sseCT, streamEnd: schema.StreamComplete, took: 3 * time.Millisecond,
		resp: sse(toolResult("14", "MCP error -32602: Tool archive_note not found", true))}
	g.expect(c, g.post(c), "the TypeScript SDK v1 `McpServer` turns an unknown tool into an `isError` result reading \"MCP error -32602: Tool X not found\"",
		"TOOL_ERROR", []int{200}, failed("unknown_tool", "tool_error", "null", true, "true")...)

	c = call{conn: "proto-15-fastmcp-unknown-tool", version: v2025, session: "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a", server: ticketsPy, method: "tools/call", id: "15", tool: "close_ticket",
		body:   toolCall("15", "close_ticket", `{"ticketId":4417}`, v2025),
		status: 200, contentType: sseCT, streamEnd: schema.StreamComplete, took: 4 * time.Millisecond,
		resp: sse(toolResult("15", "Unknown tool: close_ticket", true))}
	g.expect(c, g.post(c), "Python FastMCP: \"Unknown tool: x\" as an `isError` result",
		"TOOL_ERROR", []int{200}, failed("unknown_tool", "tool_error", "null", true, "true")...)

	c = call{conn: "proto-16-fastmcp-tool-exception", version: v2025, session: "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a", server: ticketsPy, method: "tools/call", id: "16", tool: "create_ticket",
		body:   toolCall("16", "create_ticket", `{"title":"VPN drops every 10 minutes","priority":"high"}`, v2025),
		status: 200, contentType: sseCT, streamEnd: schema.StreamComplete, took: 5012 * time.Millisecond,
		resp: sse(toolResult("16", "Error executing tool create_ticket: database is locked", true))}
	g.expect(c, g.post(c), "Python FastMCP wraps the tool's own exception as \"Error executing tool x: ...\": a tool failure",
		"TOOL_ERROR", []int{200}, failed("tool", "tool_error", "null", true, "true")...)

	c = call{conn: "proto-17-go-unknown-tool-rpc", version: v2025, session: "0f9e8d7c-6b5a-4938-a716-2534f1e0d9c8", server: weatherGo, method: "tools/call", id: "17", tool: "get_radar",
		body:   toolCall("17", "get_radar", `{"city":"Lyon"}`, v2025),
		status: 200, contentType: jsonCT, took: 1 * time.Millisecond,
		resp: rpcError("17", "-32602", `unknown tool "get_radar"`, "")}
	g.expect(c, g.post(c), "the Go SDK answers an unknown tool with -32602 `unknown tool \"x\"`: the same kind as lines 14 and 15, and not the server's error",
		"JSONRPC_ERROR", []int{200}, failed("unknown_tool", "-32602", "-32602", false, "null")...)

	c = call{conn: "proto-18-gateway-request-timeout", version: v2025, session: "2e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b", server: gateway, method: "tools/call", id: "18", tool: "search_flights",
		body:   toolCall("18", "search_flights", `{"from":"LYS","to":"OSL","date":"2026-11-02"}`, v2025),
		status: 200, contentType: sseCT, streamEnd: schema.StreamComplete, took: 60004 * time.Millisecond,
		resp: sse(rpcError("18", "-32001", "Request timed out", `{"timeout":60000}`))}
	g.expect(c, g.post(c), "a TypeScript gateway relays its upstream client's local timeout (-32001 \"Request timed out\") as the response",
		"JSONRPC_ERROR", []int{200}, append(failed("timeout", "-32001", "-32001", true, "null"), col("retry_advice", "retry_if_idempotent"))...)

	c = call{conn: "proto-19-rate-limited", version: v2026, server: gateway, method: "tools/call", id: "19", tool: "get_forecast",
		body:   toolCall("19", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 429, contentType: jsonCT, respHeaders: map[string]any{"retry-after": "30"}, took: 1 * time.Millisecond,
		resp: `{"error":"too_many_requests","message":"Rate limit of 60 requests per minute exceeded"}`}
	g.expect(c, g.post(c), "a gateway's 429 with `Retry-After` and a JSON body of its own",
		"HTTP_ERROR", []int{429}, append(failed("rate_limit", "429", "null", false, "null"), col("retry_advice", "respect_retry_after"))...)

	c = call{conn: "proto-20-unauthorized", version: v2026, server: gateway, method: "tools/call", id: "20", tool: "get_forecast",
		body:   toolCall("20", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		status: 401, contentType: jsonCT, respHeaders: map[string]any{"www-authenticate": `Bearer resource_metadata="http://localhost:8931/.well-known/oauth-protected-resource", error="invalid_token"`}, took: 1 * time.Millisecond,
		resp: `{"error":"invalid_token","error_description":"The access token expired"}`}
	g.expect(c, g.post(c), "401 with an OAuth challenge: authentication, settled by the HTTP layer",
		"HTTP_ERROR", []int{401}, append(failed("auth", "401", "null", false, "null"), col("retry_advice", "none"))...)

	c = call{conn: "proto-21-stream-reset", version: v2026, server: weatherGo, method: "tools/call", id: "21", tool: "get_forecast",
		body:   `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_forecast","arguments":{"city":"Lyon","days":14},"_meta":{"progressToken":"pt-21","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"acme-assistant","version":"3.2.0"}}}}`,
		status: 200, contentType: sseCT, streamEnd: schema.StreamReset, took: 2210 * time.Millisecond,
		resp: sse(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pt-21","progress":1,"total":14,"message":"day 1"}}`)}
	g.expect(c, g.post(c), "the response stream is cut after one progress event",
		"STREAM_INCOMPLETE", []int{200}, failed("network", "reset", "null", true, "null")...)

	c = call{conn: "proto-22-connection-refused", version: v2026, server: weatherGo, method: "tools/call", id: "22", tool: "get_forecast",
		body:    toolCall("22", "get_forecast", `{"city":"Lyon","days":3}`, v2026),
		failure: schema.FailureConnectionRefused, took: 1 * time.Millisecond}
	g.expect(c, g.post(c), "the server is not listening",
		"NO_RESPONSE", []int{0}, failed("network", "connection_refused", "null", true, "null")...)

	c = call{conn: "proto-23-client-timeout", version: v2025, session: "2e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b", server: gateway, method: "tools/call", id: "23", tool: "search_flights",
		body:    toolCall("23", "search_flights", `{"from":"LYS","to":"OSL","date":"2026-11-03"}`, v2025),
		failure: schema.FailureTimeout, took: 30000 * time.Millisecond}
	g.expect(c, g.post(c), "no status within the client's 30 s",
		"NO_RESPONSE", []int{0}, failed("timeout", "timeout", "null", true, "null")...)
}

// ---------------------------------------------------------------------------
// JSON edge cases: repeated keys resolve as JSON.parse does (the last one
// wins); ids compare exactly.

func (g *gen) jsonEdges() {
	jsonCT := "application/json"
	c := call{conn: "proto-24-iserror-repeated", version: v2026, server: notesTS, method: "tools/call", id: "24", tool: "delete_note",
		body:   toolCall("24", "delete_note", `{"noteId":"n-311"}`, v2026),
		status: 200, contentType: jsonCT, took: 9 * time.Millisecond,
		resp: `{"jsonrpc":"2.0","id":24,"result":{"resultType":"complete","isError":false,"content":[{"type":"text","text":"Note n-311 is locked by another editor"}],"isError":true}}`}
	g.expect(c, g.post(c), "`\"isError\":false` and, later in the same object, `\"isError\":true`: JSON.parse keeps the last, a tool error",
		"TOOL_ERROR", []int{200}, failed("tool", "tool_error", "null", true, "true")...)

	c = call{conn: "proto-25-id-repeated", version: v2026, server: notesTS, method: "tools/call", id: "25", tool: "get_note",
		body:   toolCall("25", "get_note", `{"noteId":"n-312"}`, v2026),
		status: 200, contentType: jsonCT, took: 7 * time.Millisecond,
		resp: `{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete","content":[{"type":"text","text":"Shopping: milk, eggs, coffee"}]},"id":25}`}
	g.expect(c, g.post(c), "the response repeats `id`, 99 then 25: the last is the request's",
		"TOOL_SUCCESS", []int{200}, succeeded("false")...)

	c = call{conn: "proto-26-big-id-mismatch", version: v2026, server: notesTS, method: "tools/call", id: "9007199254740993", tool: "get_note",
		body:   toolCall("9007199254740993", "get_note", `{"noteId":"n-313"}`, v2026),
		status: 200, contentType: jsonCT, took: 6 * time.Millisecond,
		resp: complete("9007199254740992", "Groceries: bread")}
	g.expect(c, g.post(c), "request id 9007199254740993 answered with id 9007199254740992 (a server that parsed the id as a float64): one number as float64, two ids",
		"INVALID_ENVELOPE", []int{200}, failed("invalid_response", "invalid_envelope", "null", true, "null")...)

	c = call{conn: "proto-27-big-id", version: v2026, server: weatherGo, method: "tools/call", id: "9007199254740993", tool: "get_forecast",
		body:   toolCall("9007199254740993", "get_forecast", `{"city":"Oslo","days":1}`, v2026),
		status: 200, contentType: jsonCT, took: 35 * time.Millisecond,
		resp: complete("9007199254740993", "Oslo: 3°C, snow showers")}
	g.expect(c, g.post(c), "the same id beyond 2^53 echoed exactly",
		"TOOL_SUCCESS", []int{200}, succeeded("false")...)

	c = call{conn: "proto-28-id-written-as-decimal", version: v2026, server: gateway, method: "tools/call", id: "28", tool: "get_forecast",
		body:   toolCall("28", "get_forecast", `{"city":"Oslo","days":1}`, v2026),
		status: 200, contentType: jsonCT, took: 36 * time.Millisecond,
		resp: complete("28.0", "Oslo: 3°C, snow showers")}
	g.expect(c, g.post(c), "a gateway re-serialises the id 28 as `28.0`: the same integer, the same id (as JSON.parse makes it)",
		"TOOL_SUCCESS", []int{200}, succeeded("false")...)

	c = call{conn: "proto-29-jsonrpc-and-name-repeated", version: v2026, server: weatherGo, method: "tools/call", id: "29", tool: "get_forecast",
		body:   `{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo","days":1},"name":"get_forecast",` + meta2026(v2026) + `}}`,
		status: 200, contentType: jsonCT, took: 33 * time.Millisecond,
		resp: `{"jsonrpc":"1.0","jsonrpc":"2.0","id":29,"result":{"resultType":"complete","content":[{"type":"text","text":"Oslo: 3°C, snow showers"}]}}`}
	g.expect(c, g.post(c), "the request repeats `params.name` (get_weather, then get_forecast) and the response repeats `jsonrpc` (\"1.0\", then \"2.0\"): the last ones count",
		"TOOL_SUCCESS", []int{200}, append(succeeded("false"), col("tool_name", "get_forecast"))...)

	c = call{conn: "proto-30-error-code-repeated", version: v2026, server: weatherGo, method: "tools/call", id: "30", tool: "get_forecast",
		body:   toolCall("30", "get_forecast", `{"city":"Oslo","days":-1}`, v2026),
		status: 200, contentType: jsonCT, took: 2 * time.Millisecond,
		resp: `{"jsonrpc":"2.0","id":30,"error":{"code":-32603,"message":"Internal error","code":-32602,"message":"days must be at least 1"}}`}
	g.expect(c, g.post(c), "the error repeats `code` and `message`: -32602 \"days must be at least 1\" wins",
		"JSONRPC_ERROR", []int{200}, append(failed("validation", "-32602", "-32602", false, "null"), col("error_code", "-32602"))...)
}

// ---------------------------------------------------------------------------
// Checks and output.

func (g *gen) check() error {
	for _, b := range g.bodies {
		if !json.Valid([]byte(b)) {
			return fmt.Errorf("a body is not valid JSON: %s", b)
		}
	}
	seen := map[string]bool{}
	for _, e := range g.exchanges {
		if e.line < 1 || e.line > len(g.lines) {
			return fmt.Errorf("%s: line %d out of range", e.conn, e.line)
		}
		if seen[e.conn] {
			return fmt.Errorf("connection %s used twice", e.conn)
		}
		seen[e.conn] = true
		l := g.lines[e.line-1]
		var r schema.WireRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.HTTP == nil || r.HTTP.Request.Body == nil {
			return fmt.Errorf("line %d: not a wire record with a request body", e.line)
		}
		body := *r.HTTP.Request.Body
		if !strings.Contains(body, `"id":`+e.id+`,`) || !strings.Contains(body, `"method":"`+e.method+`"`) || r.Connection != e.conn {
			return fmt.Errorf("line %d does not carry %s id %s of %s", e.line, e.method, e.id, e.conn)
		}
	}
	return nil
}

func (g *gen) write(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "client.ndjson"), gentab.NDJSON(g.lines), 0o644); err != nil {
		return err
	}
	return gentab.FillREADME(filepath.Join(dir, "README.md"),
		gentab.Block{Name: "lines", Table: g.linesTable()},
		gentab.Block{Name: "expectations", Table: g.expectationsTable()},
		gentab.Block{Name: "columns", Table: g.columnsTable()})
}

func (g *gen) linesTable() string {
	var b strings.Builder
	b.WriteString("| line | connection | what it shows |\n| --- | --- | --- |\n")
	for _, e := range g.exchanges {
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", e.line, e.conn, e.what)
	}
	return b.String()
}

func (g *gen) expectationsTable() string {
	rows := make([]gentab.Expectation, len(g.exchanges))
	for i, e := range g.exchanges {
		rows[i] = gentab.Expectation{File: file, Line: e.line, Side: "client", Method: e.method, ID: e.id,
			Outcome: e.outcome, Layer: gentab.Layer(e.outcome), Posts: len(e.statuses), Statuses: gentab.Statuses(e.statuses)}
	}
	return gentab.ExpectationsTable(rows)
}

func (g *gen) columnsTable() string {
	rows := make([]gentab.Columns, len(g.exchanges))
	for i, e := range g.exchanges {
		rows[i] = gentab.Columns{File: file, Line: e.line, Method: e.method, ID: e.id, Cols: e.cols}
	}
	return gentab.ColumnsTable(rows)
}
