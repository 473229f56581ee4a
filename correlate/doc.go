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
// # Retries, duplicates and continuations
//
// Each client request is related to the latest earlier request of the same
// call (the same method, target and arguments; _meta, inputResponses and
// requestState left out):
//
//   - retry_origin sdk (retry_basis same_id): the same id POSTed again;
//     one exchange, post_count and http_statuses grow.
//   - application or manual (retry_of, retry_basis log_trigger): the log's
//     trigger hint says who sent a repeat of the same id.
//   - application (retry_basis same_call_after_failure, or
//     same_call_while_open): a new id for the same call after the earlier
//     one failed (any outcome but success, TOOL_SUCCESS and INPUT_REQUIRED,
//     including an error status or a cut stream it is still waiting on) or
//     before it finished, within 10 minutes; manual when the log's trigger
//     says a person sent it. In the client's next MCP session of the same
//     client log, within 10 minutes, after that session expired (404) and
//     the same client sent initialize again: retry_basis
//     same_call_next_session. Server logs are never linked across sessions:
//     they interleave many clients.
//   - unknown: the same stdio frame written twice (nothing says by whom).
//   - duplicate_of: the same call sent again within 50 ms while the first
//     was still unanswered, with no failure between (a client dispatching
//     every call twice); not a retry. Polling, where each call is answered
//     before the next, is neither.
//   - The same id with the same params after the earlier request succeeded
//     is id reuse (2026-07-28), not a retry.
//   - continues and mrtr_round: a request carrying inputResponses or
//     requestState after the same call was answered input_required (with
//     the same requestState when one was given) continues the MRTR chain;
//     it is not a retry. The rows of a chain are held until a round ends
//     it, and every row gets chain_outcome, the last round's outcome.
//
// A status sequence spread over two different calls (a tools/list takes the
// 503, a later tools/call the 200) is not a retry. A log that reports calls
// without their arguments (OTLP) does not link them at all.
//
// Retry safety: tools/list results teach each tool's annotations; a tool
// that is neither read-only nor idempotent (the specification's defaults
// when a hint is absent or the tool was never listed) sent again after an
// outcome that leaves its side effects uncertain (a 5xx, a connection lost
// after sending, a cut stream, no response) is flagged retry_unsafe. A
// Retry-After on the earlier attempt gives retry_after_s, and
// retry_after_respected says whether the repeat waited that long.
//
// # Sessions and cancellation
//
// A 404 on a request that carried a session id sets session_expired; its
// row waits until the log shows an initialize after it (reinitialized true)
// or ends (false). notifications/cancelled marks the request it names as
// cancelled, even when the cancel was logged first. A request cancelled with
// neither a response nor a transport failure is CANCELLED; a cancel after a
// cut stream keeps STREAM_INCOMPLETE (and sets cancelled); a response that
// arrives after the cancel keeps CANCELLED and sets late_response. In
// 2026-07-28 closing the response stream is the cancellation, and the call
// re-issued under a new id is an application retry of it.
//
// # Client and server views
//
// The Merger (merger.go; MergeViews is a Merger holding every row) merges
// the client-side and server-side rows of the same exchanges when a run
// holds logs of both sides: sides both,
// client_post_count, server_post_count, server_outcome,
// server_http_statuses and clock_skew_ms, matched on id, method and a hash
// of the params, within one session when both know it, after allowing for
// the skew between the two clocks. failed_hop says where a failure
// happened: none; tool (isError); server (the server sent the error status
// or the bad answer itself); network (the server answered but the client
// saw something else, or the server never saw a request the client sent);
// client (the client cancelled it, or logged a request no POST carried and
// the server never saw); unknown when one view cannot tell.
//
// # State and time
//
// A conversation ends a minute after a DELETE of its session that
// succeeded (records of streams still open are written when they end),
// after IdleTimeout without activity in its logs' event time (up to four
// times longer while a response is awaited on a stream), or at the end of
// input; its open exchanges are then judged on what the log holds and its
// state is dropped, so memory holds the open conversations, not the input.
// A held 404 row is released with reinitialized false once its log's time
// is IdleTimeout past it. An observation further behind the newest event
// time of its own log (side, format, source) than Lateness is still
// correlated and written, with late set.
//
// # Sharding, order keys and time
//
// Pairing and classification depend only on the observations of one
// conversation, in input order: a pipeline may spread conversations over
// correlators (NewShard), routing each observation by ShardKey (a stable
// hash of ConversationKey). Everything that crosses conversations of a log
// (a call repeated in the client's next session, whether an expired client
// re-initialized, holding the rows of expired sessions until then) is done
// by one Linker, over compact events the correlators emit beside the rows
// (Item): a client request started (ids, call hash, session, client name,
// time), its retry state changed (failed so far, uncertain, Retry-After),
// its conversation expired or named its client, a client sent initialize,
// a conversation closed. The Linker replays them in order, so it sees
// exactly what one correlator per log saw at each point.
//
// The wiring (drive_test.go is the reference; every arrow in input order):
//
//	sequencer: o.Seq = 1, 2, ...; clock.Stamp(o); shard[ShardKey(o) % n].Add(o)
//	every round: m := clock.Mark(last Seq); every shard: Advance(m)
//	at the end: m := clock.Mark(last Seq + 1); every shard: Finish(m) (a Seq of its own:
//	what the last Advance closed, keyed {last Seq, ...}, stays before what Finish closes)
//	merge the round's items of all shards by Key -> linker.Add; linker.Advance(m) (Finish(m))
//	linker's rows -> merger.Add; merger.Advance(m) (merger.Finish())
//
// Order keys (Key, order.go): an item emitted by Add(o) is keyed {o.Seq,
// 0, n}; one emitted by Advance(m) or Finish(m), when a conversation
// closes, {m.Seq, the conversation's first Seq, n}; n counts from 0 within
// that Add or that conversation's close. Keys are unique in a run and
// strictly increase along each correlator's output (Advance and Finish
// close conversations in the order of their first Seq, never in map
// order), so a k-way merge of the shards' outputs gives the same sequence
// whatever the number of shards, and so do the Linker's and the Merger's
// outputs. The Linker's rows keep their item's key, or take the releasing
// initialize's key ({m.Seq, MaxInt64, 0} when Advance or Finish releases
// them): non-decreasing. The Merger writes rows in arrival order, a merged
// pair at the client row's place.
//
// Time is the logs' own (event time), never the wall clock: the Clock, run
// by the sequencer, stamps every observation with the newest event time of
// its log before it (o.Watermark, on which late is judged) and makes the
// Marks (Seq, newest time over all logs, and the logs whose time moved)
// with which every correlator, the Linker and the Merger are advanced. Idle
// sweeps run per log when its time has moved a tenth of IdleTimeout since
// its last sweep, the same in every consumer of the same Marks. So rows do
// not depend on the number of shards; they depend on where the pipeline
// puts its Marks only through idle timeouts and held-row releases, which
// act at the first Mark after the limit.
//
// What is bounded by what: a correlator holds its open conversations; the
// Linker, per log, the latest request of 4,096 distinct calls, the latest
// initialize per client, the open requests' retry state, and the rows of
// expired sessions until an initialize of their client, IdleTimeout of
// their log's time, or Finish; the Merger, the rows that arrived within
// the last Window (plus an eighth: it decides in batches) of the Marks'
// newest time, and the pairing of conversations seen within twice Window.
// LowWater (each of the three) is the smallest Seq still needed to rebuild
// what is held (the first Seq of each open conversation, of each held
// row's conversation, and of each expired conversation a next session may
// still repeat): a commit point at or below the minimum replays correctly.
//
// The Merger's window counts event time after a row arrives: partners
// whose rows arrive further apart than Window in the stream are written
// single-sided. Client and server logs read one after the other, each
// longer than the window, therefore merge only with a wider window, or
// with Window 0 (every row held to the end, as MergeViews).
//
// New makes a correlator that does all of this in one goroutine (own
// Clock and Linker, advanced after every observation): the API pipelines
// used before sharding, kept for them and for tests.
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
