// Package correlate turns observations (HTTP transactions and stdio frames,
// already decoded into JSON-RPC messages) into exchanges: one JSON-RPC
// request, every HTTP attempt that carried it, and the response that answered
// it, wherever that response arrived. It then asks package classify for the
// verdict. This is the one place where the correlation rules live.
//
// # Conversations
//
// Pairing happens inside a conversation. Its key is the side that wrote the
// log plus, in order of preference: the MCP session id (the record's
// session_id, the Mcp-Session-Id request header, or the sessionId query
// parameter of legacy HTTP+SSE); else the record's connection id; else the
// source file. The key also holds the log format: two captures of one
// session in different formats (a HAR file and a wire log, say) are two
// views of the same traffic, not one conversation with every request sent
// twice. Client and server logs of the same traffic are different
// conversations until they are merged (a later stage).
//
// # Pairing
//
//   - A request is a message with a method and an id; a response is a message
//     with result or error and no method. Ids compare type-sensitively: 1 and
//     "1" never pair.
//   - Every message in a POST's response body or response stream is evidence of
//     that POST's attempt, whatever its id: a response with a wrong id there is
//     what makes an INVALID_ENVELOPE. A response on a standalone GET stream or
//     a resumed stream (GET with Last-Event-ID), or a stdio frame, is paired by
//     id with the newest open request of that id in the conversation (an
//     abandoned earlier send is less likely to be the one answered). A
//     response that arrives before its request (a stream logged in one record
//     that started earlier) waits, and pairs when the request appears; one
//     whose id matches only finished requests is a duplicate and is counted
//     as stray.
//   - A request POSTed again with the same id and the same method and params is
//     another attempt of the same exchange: post_count and http_statuses grow,
//     retry_origin is "sdk". When the log says the repeat was sent by the
//     application or by a person (trigger "application" or "manual"), it is a
//     new exchange instead, with retry_origin set to that trigger and retry_of
//     the earlier exchange. The same id with other params after the earlier
//     request finished is id reuse (allowed in 2026-07-28): a new exchange.
//   - A request body that is a JSON array (a 2025-03-26 batch) yields one
//     exchange per request in it; their responses are found inside the array
//     response, and a single error without an id (a server that rejects
//     batches) answers every member. Arrays of more than 1,000 elements are
//     not expanded (see package decode).
//   - Notifications are counted, never exchanges. notifications/cancelled marks
//     the request it names as cancelled, even when the cancel was logged
//     first (a long request's record is written when it ends).
//   - Requests the server sends to the client (sampling, elicitation, roots in
//     older versions) are exchanges too, with initiator "server" and no POST of
//     their own (post_count 0); their responses are the client's POSTs.
//   - Stdio frames pair the same way by id; post_count is 0 and http_statuses
//     empty. A frame from the server that is not JSON is attributed to the one
//     open request when exactly one is open, else counted as stray.
//
// # When an exchange is written
//
// An exchange is final when a response that is not a transport failure is
// paired with it; one whose last attempt failed stays open for a possible
// re-POST until its conversation ends (end of input for files). Everything
// still open then is judged on what the log holds (NO_RESPONSE, UNKNOWN, ...).
//
// # Columns filled here
//
// post_count and http_statuses (0 where no response came) count the POSTs of
// one exchange in order; started_at is the first attempt, ended_at the end of
// the observation that closed the exchange; latency_ms is the difference when
// a response was seen. exchange_id is a hash of the source, the line of the
// first request and the JSON-RPC id, so the same input gives the same ids.
package correlate
