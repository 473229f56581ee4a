// Package classify judges one exchange's evidence: which layer failed (HTTP
// transport, JSON-RPC protocol, interaction, or the tool itself), with what
// outcome, and what a client should do about it. It is pure: no I/O, no clock,
// no global state; the same Evidence always gives the same Verdict.
//
// # Vocabulary (a contract: users' queries rely on these names)
//
//	layer        outcomes
//	application  TOOL_SUCCESS, TOOL_ERROR (tools/call), SUCCESS (any other method)
//	interaction  INPUT_REQUIRED, CANCELLED
//	protocol     JSONRPC_ERROR, MALFORMED_JSON, INVALID_ENVELOPE,
//	             INVALID_TOOL_RESULT (tools/call), INVALID_RESULT (other methods)
//	transport    HTTP_ERROR, STREAM_INCOMPLETE, NO_RESPONSE
//	unknown      UNKNOWN
//
// # Rules, in the order they are applied
//
// The final attempt decides; earlier attempts only fill post_count and
// http_statuses.
//
//  1. Transport first. A final attempt that got no response (connection
//     refused, reset, timeout, client gave up) is NO_RESPONSE, or CANCELLED when
//     the client sent notifications/cancelled for the request, or, in
//     2026-07-28 where closing the stream is the cancellation, when the client
//     gave up. A non-2xx status is HTTP_ERROR whatever the body says (a
//     JSON-RPC error in the body is kept as error_code and error_message), also
//     when the connection was lost after the status line (a HAR entry with a
//     status and an _error: the status came). A 2xx whose body (not an event
//     stream) broke off after the status line is NO_RESPONSE with the failure
//     the log names; CANCELLED when the client aborted it itself (client_abort:
//     Chrome's net::ERR_ABORTED, mitmproxy's "Client disconnected.") and sent
//     notifications/cancelled for the request, or aborted it in 2026-07-28.
//     One exception to HTTP_ERROR: In 2026-07-28 (or a later dated version, such as
//     the one a request answered -32022 asks for) a 4xx whose body (JSON or
//     event stream) is a valid JSON-RPC error response carrying the
//     request's own id is JSONRPC_ERROR, layer protocol: http_statuses keeps the status,
//     retry_advice follows the code (-32602 fix_arguments; -32601 and
//     -32020..-32022 investigate_compatibility), error_type is the code. Why:
//     that version's spec maps protocol errors onto HTTP statuses (400 for
//     -32602, -32020 HeaderMismatch, -32021 MissingRequiredClientCapability,
//     -32022 UnsupportedProtocolVersion; 404 for -32601, "the JSON body
//     distinguishes it from a legacy 404"), and clients deliver such a
//     response to the application as the JSON-RPC error, not as an HTTP
//     failure (the TypeScript SDK v2 in the modern era; the Go SDK for any
//     non-2xx but 429 and 5xx). Everything else stays HTTP_ERROR: earlier
//     versions (their 404 is a session expiry, their 400 a transport
//     rejection), an unknown version, an error body with a null, absent or
//     other id (it answers no request), a body that is not a valid JSON-RPC
//     error, a 5xx, and 401, 403, 407, 408 and 429, whose meaning is HTTP's
//     own (authentication settled by the HTTP layer, timing, throttling
//     with Retry-After) and onto which the spec maps nothing. From 2026-07-28
//     on a 404 is never a session expiry: there are no sessions (and the
//     correlator writes no session_id).
//  2. A response matched by id (type-sensitive: 1 is not "1"; see "Ids" below)
//     in the final attempt's body, in its SSE stream, or on a GET or resumed
//     stream of the same conversation, is judged by rules 5 to 8.
//  3. Otherwise the final attempt's own body is judged: a body that is not
//     JSON (or an SSE event whose data is not JSON) is MALFORMED_JSON; a
//     response object with another id is INVALID_ENVELOPE; anything else that
//     is not a JSON-RPC message is INVALID_ENVELOPE.
//  4. Otherwise the evidence is missing: a body the log did not record is
//     UNKNOWN; a 2xx event stream that ended without the response is
//     STREAM_INCOMPLETE; a request answered 202, or never answered, is
//     NO_RESPONSE (CANCELLED after notifications/cancelled). A stream the
//     client closed itself (stream_end client_closed: a wire log's
//     client_closed, a HAR _error that is the client's abort) is CANCELLED in
//     2026-07-28, where the close is the cancellation, and in every version
//     when the client also sent notifications/cancelled for the request: the
//     client gave up, nothing broke. A stream cut by the server or the network
//     (reset, timeout, an end not known) stays STREAM_INCOMPLETE even when the
//     client cancelled afterwards: the cut is the root cause, the cancel its
//     consequence (the cancelled column still says the client cancelled).
//  5. Envelope: the response must be an object (an array only in 2025-03-26,
//     the one version with batches), with "jsonrpc":"2.0", the request's id,
//     and exactly one of result and error. An error response may carry a null
//     id (the server could not read the request's). Otherwise INVALID_ENVELOPE.
//  6. error must be an object with an integer code and a string message
//     (else INVALID_ENVELOPE); it is JSONRPC_ERROR, error_type the code as text.
//  7. result must be an object. resultType absent means "complete";
//     "input_required" is INPUT_REQUIRED (only on tools/call, prompts/get and
//     resources/read, and it must carry inputRequests or requestState); any
//     other value is invalid. Invalid results are INVALID_TOOL_RESULT for
//     tools/call and INVALID_RESULT for other methods.
//  8. tools/call: content must be an array; isError absent is false and a
//     non-boolean isError is invalid; structuredContent must be an object in
//     2025-06-18 and 2025-11-25 (any JSON value in 2026-07-28). isError true is
//     TOOL_ERROR (error_type "tool_error"), else TOOL_SUCCESS. Other methods
//     are checked for the fields their result requires (initialize:
//     protocolVersion, capabilities, serverInfo; tools/list: tools; and so on)
//     and are SUCCESS.
//
// A 202 with no body answers a notification or a response; it is never an
// exchange outcome (the correlator keeps notifications out of exchanges).
//
// A response that arrived after the client's notifications/cancelled
// (Evidence.LateResponse, which the correlator decides on the log's own
// times) makes the exchange CANCELLED whatever the response said (a real
// result, an isError "context canceled" text, an error); the reason names
// what the late response said.
//
// # Truncated and reported evidence
//
// A response the log cut short (Claude Desktop's "[N chars truncated]") is
// judged only on what survived the cut: an error code is JSONRPC_ERROR, an
// "isError": true is TOOL_ERROR, anything else UNKNOWN. An exchange that an
// already-correlated log reports without a response body (an OpenTelemetry
// span, an Inspector entry with clientError) is judged on what the log
// states: an HTTP status of 400 or more is HTTP_ERROR, error.type
// "tool_error" is TOOL_ERROR, a JSON-RPC code in error.type or
// rpc.response.status_code is JSONRPC_ERROR, "timeout" is NO_RESPONSE, a
// completed span without error is TOOL_SUCCESS or SUCCESS, and anything else
// is UNKNOWN. Without a body nothing can be found invalid, so
// INVALID_TOOL_RESULT and MALFORMED_JSON never come from a report.
//
// # Hidden failures
//
// Many servers return a failure as an ordinary result (isError false). A
// TOOL_SUCCESS whose content says the tool failed gets Verdict.Suspect and a
// SuspectReason (the suspect_hidden_error and suspect_reason columns). The
// outcome stays TOOL_SUCCESS, the protocol's verdict; the column adds what the
// server did not say. HiddenFailure reads the result's first text block, then
// structuredContent, and never echoes the text. What makes a result suspect:
//
//   - how the text starts: "Error: …", "ERROR #5002: …", "An error occurred",
//     "<a few words> error: …" (error_prefix); a Python traceback, a Go panic, a
//     Rust panic (traceback); an exception's name followed by ":" or "("
//     (exception); "Failed to", "Unable to", "Could not", "Cannot", "<subject>
//     failed: …" (failed_to); "HTTP 500", "404 Not Found", "Service
//     Unavailable" (http_status); "Invalid …", "Missing required …"
//     (invalid_input);
//   - in a short text (at most 600 bytes), a failure phrase in the first
//     clause of its first line, or right after a ": " (Go's "open x:
//     permission denied"): permission_denied, rate_limited, timeout,
//     network_error, not_found, or a 4xx/5xx status after "status code",
//     "returned" and the like (http_status);
//   - a JSON object (a JSON text of at most 16 KiB, or structuredContent)
//     that is an error envelope: "error" set, "success" or "ok" false, or
//     "status" "error", with at most two other keys carrying data
//     (error_field, status_field); or "errors" listed with no data, "status"
//     "failed" or a 4xx/5xx status, a lone "detail", or a lone "message" that
//     reads as a failure, when every key belongs to an envelope;
//   - an HTML page whose title is an error status, an XML <Error> document
//     (http_status, error_field).
//
// The guards. "error": null, false, "" or {} and "errors": [] are not set,
// and a numeric "error" is a count. A JSON object with more data than an
// envelope is a payload ({"job": …, "status": "failed"} reports a job), and
// JSON arrays are lists of results. A value that says there was none ("Error
// count: 0", "Error: none", "Standard error: 0.12") is not an error. Headings
// and metrics ("Error handling", "Error rate") are not error prefixes, a
// phrase in quotes names a message rather than saying it, and definitions
// (" is a ", " means ") are prose. A first line that starts like a log record
// (a timestamp, a syslog or klog header, a level followed by a date) or a file
// location (path:12:) is an excerpt the tool was asked for. A long text is
// judged only on how it starts, so a document that mentions an error later is
// not suspect.
//
// Measured on the corpus in testdata/hidden (423 ordinary outputs, 315
// failure texts, written by us from real servers' public behaviour; see its
// README): 0.47% false positives (2) and 97.78% recall, checked by
// TestHiddenFailureCorpus against the bounds 1% and 95%. About 2.5 µs per
// result, and a 256 KiB text costs one scan for the end of its string.
// # Ids and repeated keys
//
// Ids compare type-sensitively (SameID) and exactly (IDKey): a string id as
// written; a number by its exact decimal value, never as a float64. An
// integer however written is its digits: 1, 1.0, 1e0 and 10E-1 are one id
// (as JSON.parse, and so the TypeScript SDK, makes them), -0 is 0; other
// numbers compare by significant digits and exponent (1.5 = 1.50). Unlike
// JSON.parse nothing is rounded: 9007199254740992 and 9007199254740993, one
// float64, are two ids, as are long digit strings that differ in their last
// digit. The correlator looks ids up by the same key.
//
// A key repeated in one object resolves as JSON.parse resolves it: the last
// one wins, for every field that decides a verdict (jsonrpc, id, method,
// result, error, code, message, resultType, inputRequests, requestState,
// content, isError, structuredContent, the required result fields;
// params.name, params.requestId and the request's protocol version in the
// correlator). So {"isError":false,"isError":true} is TOOL_ERROR. Keys
// compare after unescaping ("is\u0045rror" is "isError"). A frame the log
// cut short is read with patterns; there the last surviving isError or
// code wins.
//
// Classify reads a response through the fields the decoder read in its one
// parse (schema.Message.RPC) and parses Raw only for a message without them
// (see schema.RPC): both ways feed the same rules (rpcread.go), and
// TestTypedFieldsJudgeAsRaw holds them to the same verdicts.
//
// # Error kinds
//
// error_kind says what kind of failure an exchange was, the same whichever
// SDK or version reported it: a validation failure is "validation" as a
// -32602, as the Go SDK's isError text (go-sdk PR #863 moved it there) and
// as FastMCP's; an unknown tool is "unknown_tool" as the Go SDK's -32602 and
// as the TypeScript SDK's isError text. It is null exactly when error_type
// is (TOOL_SUCCESS, SUCCESS, INPUT_REQUIRED, UNKNOWN without a reported
// failure). ErrorKind computes it from KindFacts; the vocabulary is fixed
// (ErrorKinds):
//
//	kind                  from
//	validation            -32602 (unless its text says unknown tool, not found or
//	                      version); isError or message text: Go SDK `validating
//	                      "arguments"` / "invalid params", TS "Input validation
//	                      error", pydantic "validation error", "missing required
//	                      argument", "additional properties"; mcp-go's argument
//	                      accessors as isError text (`argument "x" cannot be
//	                      converted to float64`, `argument "x" is not a string`,
//	                      `required argument "x" not found`) and "input schema
//	                      validation failed"; HTTP 422
//	unknown_tool          "Tool X not found" (TS1, also as isError "MCP error -32602:
//	                      Tool X not found"), "Unknown tool: x" (FastMCP), `unknown
//	                      tool "x"` (Go SDK), "tool 'x' not found" (mcp-go)
//	unknown_method        -32601; HTTP 501
//	not_found             -32002 (resource, up to 2025-11-25); "Resource/Prompt X not
//	                      found"; HTTP 404 (no session) and 410
//	auth                  HTTP 401, 403, 407; "unauthorized", "forbidden", "access
//	                      denied", "invalid token", "insufficient_scope", "HTTP 401"
//	rate_limit            HTTP 429; "rate limit", "too many requests", "quota
//	                      exceeded", "throttled"
//	timeout               transport failure or stream end "timeout"; HTTP 408, 504;
//	                      -32001 (TS and PY2 RequestTimeout, "Request timed out");
//	                      PY1's code 408; "timed out", "deadline exceeded"
//	cancelled             CANCELLED; a client_abort (NO_RESPONSE) or client-closed
//	                      stream; "context canceled", "request cancelled"
//	session               HTTP 404 on a session (before 2026-07-28); "Session not
//	                      found" (TS1 404/-32001, PY1 -32600), "Missing session ID",
//	                      "No valid session ID", "Server not initialized",
//	                      "Session terminated" (PY1's code 32600)
//	version               -32022; "Unsupported protocol version" (legacy initialize's
//	                      -32602, TS1 400/-32000)
//	header_mismatch       -32020; "header mismatch"
//	capability            -32021; "missing required client capability"
//	elicitation_required  -32042 (URL elicitation required, 2025-11-25)
//	parse                 -32700
//	invalid_request       -32600 (not a session); other HTTP 4xx (400, 405, 406, 409,
//	                      413, 415, ...) whose body says nothing more precise
//	internal              -32603; HTTP 500; "internal error"
//	unavailable           HTTP 502, 503 and other 5xx; "service unavailable", "bad
//	                      gateway", "upstream error", "overloaded"
//	network               transport failure connection_refused or reset; a reset
//	                      stream; "connection refused/reset/closed" (TS -32000
//	                      ConnectionClosed), "ECONNRESET", "socket hang up"
//	no_response           NO_RESPONSE or STREAM_INCOMPLETE with no failure stated (a
//	                      202 never answered, a stream ended without the response)
//	invalid_response      MALFORMED_JSON, INVALID_ENVELOPE, INVALID_TOOL_RESULT,
//	                      INVALID_RESULT
//	tool                  TOOL_ERROR whose text matches nothing above (also
//	                      FastMCP's "Error executing tool x: ..." wrapper)
//	other                 a JSON-RPC code or reported error.type not recognised
//
// How they combine: codes with one meaning decide alone (-32700, -32601,
// -32002, -32020..-32022, -32042); -32600 and -32602 let the text pick among
// the kinds listed above; other codes (-32603, -32000, -32001, vendor
// codes) take the text's kind when a pattern matches, else the code's
// default. An HTTP_ERROR is decided by its status for 401, 403, 407, 408,
// 429, 5xx and a 404 on a session, and otherwise by the body's code, then
// its text (a JSON-RPC error message, or the plain body: the Go SDK's "session
// not found"), then the status. A TOOL_ERROR whose text starts with TS1's
// "MCP error <code>:" is read as that code; otherwise its text decides,
// "tool" when nothing matches. The patterns are tried in the order of the
// table (unknown_tool, validation, session, version, header_mismatch,
// capability, auth, rate_limit, timeout, cancelled, not_found, unavailable,
// network, tool, internal) on the first 4096 bytes of the text.
//
// # OpenTelemetry names
//
// error_type follows OpenTelemetry error.type (the MCP conventions in
// semantic-conventions-genai, model/mcp): set if and only if the exchange
// failed, low-cardinality. rpc_response_status_code is
// rpc.response.status_code: the JSON-RPC error code as text whenever the
// judged response carried one, also one riding on an HTTP error and the late
// response of a CANCELLED exchange (null otherwise).
//
//	outcome            error_type
//	TOOL_SUCCESS, SUCCESS, INPUT_REQUIRED
//	                   null
//	JSONRPC_ERROR      the code as text ("-32602"), as the conventions say
//	TOOL_ERROR         "tool_error", as the conventions say
//	HTTP_ERROR         the HTTP status as text ("503"; the general convention's
//	                   own example is "500")
//	NO_RESPONSE        the transport failure: "timeout", "connection_refused",
//	                   "reset", "client_abort"; "_OTHER" when none is stated (a
//	                   202 never answered, no response in the log)
//	STREAM_INCOMPLETE  how the stream ended: "reset", "timeout", "client_abort"
//	                   (closed by the client before 2026-07-28); "_OTHER" when it
//	                   ended normally or the end is unknown
//	CANCELLED          "cancelled"
//	MALFORMED_JSON, INVALID_ENVELOPE, INVALID_TOOL_RESULT, INVALID_RESULT
//	                   the outcome in lower case ("invalid_envelope")
//	UNKNOWN            null; a failure a log reported without a body keeps the
//	                   error.type it states, "_OTHER" when it states none
//
// server_error is the server's view (mcp.server.status.attributes): the
// exchange failed (error_type set) and not by the caller's mistake. The
// conventions tell a server not to count -32700, -32600, -32601, -32602
// (also an unknown tool) and -32002; we also leave out a failure the server
// answered with a 4xx status (the HTTP conventions leave 4xx unset on server
// spans, and 2026-07-28 maps exactly the caller's protocol errors onto 4xx,
// so a 400/-32020 is not the server's error in either era) and the client's
// own cancellation or abort. A tool_error counts: the conventions exclude
// codes only, even when error_kind says the arguments were invalid; to leave
// those out too, filter on error_kind. A transport failure without a status
// (NO_RESPONSE, STREAM_INCOMPLETE) and an invalid response count.
//
// # retry_advice
//
// From the seed article's retry table: HTTP 429 respect_retry_after; 404 on a
// session (before 2026-07-28) reinitialize_session; 408, 5xx and NO_RESPONSE retry_if_idempotent;
// other 4xx investigate_compatibility (401 and 403: none, fix the
// credentials); -32602 fix_arguments; -32700, -32600, -32601, -32020..-32022
// and the invalid outcomes investigate_compatibility; -32042 provide_input;
// -32001 retry_if_idempotent; TOOL_ERROR inspect_tool_state; INPUT_REQUIRED
// provide_input; STREAM_INCOMPLETE retry_if_idempotent; success, CANCELLED and
// UNKNOWN none.
package classify
