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
//  2. A response matched by id (type-sensitive: 1 is not "1") in the final
//     attempt's body, in its SSE stream, or on a GET or resumed stream of the
//     same conversation, is judged by rules 5 to 8.
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
// # retry_advice
//
// From the seed article's retry table: HTTP 429 respect_retry_after; 404 on a
// session reinitialize_session; 408, 5xx and NO_RESPONSE retry_if_idempotent;
// other 4xx investigate_compatibility (401 and 403: none, fix the
// credentials); -32602 fix_arguments; -32700, -32600, -32601, -32020..-32022
// and the invalid outcomes investigate_compatibility; -32042 provide_input;
// -32001 retry_if_idempotent; TOOL_ERROR inspect_tool_state; INPUT_REQUIRED
// provide_input; STREAM_INCOMPLETE retry_if_idempotent; success, CANCELLED and
// UNKNOWN none.
package classify
