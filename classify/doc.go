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
//     JSON-RPC error in the body is kept as error_code and error_message).
//  2. A response matched by id (type-sensitive: 1 is not "1") in the final
//     attempt's body, in its SSE stream, or on a GET or resumed stream of the
//     same conversation, is judged by rules 5 to 8.
//  3. Otherwise the final attempt's own body is judged: a body that is not
//     JSON (or an SSE event whose data is not JSON) is MALFORMED_JSON; a
//     response object with another id is INVALID_ENVELOPE; anything else that
//     is not a JSON-RPC message is INVALID_ENVELOPE.
//  4. Otherwise the evidence is missing: a body the log did not record is
//     UNKNOWN; a 2xx event stream that ended without the response is
//     STREAM_INCOMPLETE (CANCELLED in 2026-07-28 when the client closed it); a
//     request answered 202, or never answered, is NO_RESPONSE (CANCELLED after
//     notifications/cancelled).
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
