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
// A client's log without a session id (2026-07-28 traffic, or a log that
// does not record one) may hold several client instances one after the
// other: a process that ends and starts again, its ids starting again. A
// new connection, where the log records connections, is a new conversation
// already (a call it repeats is linked across, see Retries). Within one conversation of a client's log without sessions, a
// new instance starts, for id matching, at a client request that is
//
//   - a handshake (initialize, server/discover) whose id does not carry on
//     the instance's sequence: any string id, or an integer id not above
//     every integer id the instance has sent (a client that falls back
//     from server/discover 0 to initialize 1 is still one instance), or
//   - an integer id lower than an id the instance sent in a request that
//     started before it (ids 0, 1, 2, 3, then 0 or 1 again: the sequence
//     started again; a long request whose record is written after later
//     ones does not count, its start is earlier), unless a request of the
//     instance with that id is still in flight (that is an id conflict,
//     below),
//
// and that is not the same request sent again: the same id and params as
// the instance's latest request of that id, which has not succeeded (an
// SDK's re-POST right after a failure keeps its meaning, below). Ids only
// match within their instance: the same id in a new instance is a new
// exchange, never an SDK retry, and never an id conflict with the previous
// instance's requests (they were abandoned with it). The call repeated by
// the new instance after the previous one's failed is an application
// retry (retry_basis same_call_next_instance); the new instance's handshake
// itself is not linked (it is what says the client started again).
// Ordinary 2026-07-28 id reuse (an id used again once its request
// finished, for another call) stays a new exchange that is no retry,
// whether or not it starts an instance. A client that recycles small ids
// while others are in flight (allowed in 2026-07-28) is read as starting
// instances: its repeats of failed calls get same_call_next_instance rather
// than same_call_after_failure, and nothing else changes. What the log
// cannot tell apart: a new instance whose first request repeats, with the
// same id and params, the previous instance's failed last request is read
// as the SDK's re-POST of it. Two instances that run at the same time in
// one log without connection ids are not told apart.
//
// Servers' logs and sessions are not divided: a session is one instance,
// and a server's log without sessions interleaves many clients, whose id
// sequences restart all the time.
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
//   - The server's side of a session before 2026-07-28, where an id is
//     never reused: the same id with the same method and params POSTed
//     again is another attempt of the same request even after the server
//     answered it (the client may never have got the answer: a proxy's
//     502, a connection lost on the way back, its own timeout), so the row
//     holds both attempts (post_count 2, http_statuses [200,200]; merged:
//     server_post_count and server_http_statuses), retry_origin sdk,
//     retry_basis same_id, and a tool so run twice ran twice. For that a
//     server row of a session waits, once answered, SameIDWindow (2
//     minutes, or -lateness when shorter) of its log's event time before
//     it is written (see "When an exchange is written"); a repeat
//     logged in the same log, started within it, joins the row and is
//     judged with it (on its last attempt). A repeat after the row was
//     written is a new row with retry_origin sdk, retry_basis same_id and
//     retry_of the first. The same id with other params in one session breaks the
//     protocol (the client's fault): it is a new exchange, flagged
//     id_conflict when the first was still open. 2026-07-28 servers, and
//     servers' logs without sessions, keep the general rules.
//   - id_conflict: a request that takes the id of a different request (other
//     params) of the same sender, in the same conversation and client
//     instance, while that one is open (both eras: in 2026-07-28 it is
//     exactly what the specification forbids, before it any reuse within
//     a session is). A request is open from its start until it was
//     answered, or while it is in flight (202, stdio without an answer
//     yet, before 2026-07-28 an event stream cut before its response,
//     which may resume); one whose last attempt failed is not, and may be
//     sent again. The same request sent again (same params: an SDK
//     re-POST, a frame written twice) is never a conflict. Records are
//     written when they end, so of the two the earlier may come second in
//     the log: the pair is found in either order and the row that comes
//     second is the one flagged (once per pair). Not checked in a server's
//     log without sessions or connections, where many clients' ids
//     collide.
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
//   - application (retry_basis same_call_next_instance): the same call under
//     a new id after it failed, or while it was open, in a later client
//     instance of the log (see Conversations), within 10 minutes: in the
//     same conversation, or in a later conversation of the client's log
//     without sessions (another connection) that began with a handshake
//     after the earlier one's latest request, from the same client and to
//     the same server (the logger's server name, else the URL). A later
//     connection that starts without a handshake, or that overlaps the
//     earlier one in time, is not linked: it may be another connection of
//     the same running client, or a separate run the log does not relate.
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
// retry_unsafe is about the decision to repeat (judged when the repeat is
// sent); duplicate_side_effect (below) is about what happened: the tool
// ran twice, or may have.
//
// # Sessions and cancellation
//
// A 404 on a request that carried a session id sets session_expired; its
// row waits until the log shows an initialize after it (reinitialized true)
// or ends (false). notifications/cancelled marks the request it names as
// cancelled, even when the cancel was logged first. A request cancelled with
// neither a response nor a transport failure is CANCELLED; a cancel after a
// stream the server or the network cut (stream_end reset, timeout, or not
// known) keeps STREAM_INCOMPLETE (and sets cancelled); a cancel after a
// stream the client closed itself (stream_end client_closed: the wire log's
// client_closed or closed_by_client, a HAR _error that is the client's own
// abort) is CANCELLED: the client let go, nothing broke. A response that
// arrives after the cancel keeps CANCELLED and sets late_response. In
// 2026-07-28 closing the response stream is the cancellation, and the call
// re-issued under a new id is an application retry of it.
//
// "After the cancel" is decided on the log's own times, not on the order of
// its records: the cancel was sent at its record's ts, and a response
// arrived at its event's time (the wire log's event_times, a HAR entry's
// _eventSourceMessages; else, for the last event of a POST's stream and for
// a JSON body, the record's end; a stdio frame at its line). A POST's stream
// is written when it ends, after the cancel sent meanwhile; a HAR sorted by
// start lists the stream first: either way the verdict is the same. A cancel
// sent after the response had arrived does not count (cancelled false, as
// for a finished request). Where the log dates only one of the two, or
// both at the same instant (logs keep milliseconds, and a programmatic
// cancel is answered within one), the order of the records decides, as
// before: a response on a later record than the cancel (a resumed or GET
// stream, or the request's own record when the cancel's was logged first,
// even before the request's) is late. So that a cancel
// logged after the stream's record is still seen, an answer on a POST's
// own event stream that came a second or more after its request (a client
// request other than initialize, before 2026-07-28) is written only once
// its log shows a record that started after the answer came (in its
// conversation, or in another conversation of the same log through the
// Marks; a live stream's quiet time counts, as for idle conversations), a
// cancel for it, or the end of its conversation: one record later in
// ordinary traffic. A quicker answer and a JSON body are written at once,
// so a cancel logged after their record is not seen as before them (a
// cancel logged before is).
//
// # Stuck sessions, broken resumption and side effects done twice
//
// session_stuck (with session_stuck_reason) marks a client request on an
// MCP session (before 2026-07-28, which has no sessions; initialize
// excepted) that cannot succeed because the session is gone:
//
//   - no_reinitialize: sent on the session at or after the end of a 404 on
//     it (the first 404 itself is the server doing it right: it is
//     session_expired, not stuck), with no initialize by the client in
//     between. The client should have sent a new initialize instead.
//   - dead_session_reused: the same, but the client's log shows an
//     initialize after the 404 and before this request: something in the
//     client kept the old session id.
//   - A request on the session that gets a JSON-RPC answer of its own
//     (its POST answered 2xx with a result or error carrying its id, not a
//     session error) is not stuck, and the session counts as alive again
//     (a load balancer that sent one request to a replica that did not
//     know the session). Dead and alive follow the order the requests
//     were sent, whenever their rows are judged.
//   - status_<code>_for_unknown_session: the server answered with a non-2xx
//     status other than 404 (the specification's signal, on which clients
//     re-initialize) whose text says the session is unknown, invalid,
//     expired or not found: the JSON-RPC error message of the body, or a
//     plain-text body. The texts are the real SDKs' and servers': TS1
//     "Session not found" (-32001), PY1 "Invalid or expired session ID",
//     the TypeScript example servers' "Bad Request: No valid session ID
//     provided" (400, -32000, id null; affine-mcp-server), "No active
//     session", "Unknown Mcp-Session-Id", TS1's "Server not initialized"
//     after a restart. A bare 400 ("Bad Request" or no text) also counts
//     when its conversation shows neither the session's initialize nor an
//     answer of its own to any request: a client that came back with a
//     session id saved before a restart (a session idle longer than
//     IdleTimeout starts a new conversation, which has seen neither). "Missing session ID" does not count: it says
//     the header did not arrive, another fault.
//   - jsonrpc_error_for_unknown_session: a 2xx carrying a JSON-RPC error
//     with such a text, when the error is not tied to the request's id (id
//     null or another: a transport-level rejection), or its code is -32600
//     or -32001, or the text names the MCP session ("session id",
//     "Mcp-Session-Id"); a tool's own "Browser session not found" with the
//     request's id and -32603 is not one. Also a 2xx -32600 "Invalid
//     Request" without words, not tied to the request's id (the zilla MCP
//     binding after its inactivity timeout): a well-formed request is no
//     invalid request, so what the server rejected is outside the body,
//     the session.
//
// A 401 for an unknown session (mcp-proxy with authentication) cannot be
// told from a real authentication failure, and is not flagged. The stuck
// reason that depends on another conversation (dead_session_reused) is
// judged by the Linker, on client logs only: a server's log interleaves
// clients.
//
// resume_problem marks a client request whose response stream (Streamable
// HTTP before 2026-07-28) was cut (stream_end reset or timeout) after the
// stream gave at least one SSE event id, while the request was still
// unanswered; the client should then reconnect with a GET carrying
// Last-Event-ID. The first GET on the conversation that starts after the
// cut is its reconnect:
//
//   - no_last_event_id: that GET carries no Last-Event-ID (the server
//     cannot know what to replay; typescript-sdk #2499 loses the id on the
//     second reconnect when the first resumed stream is cut before any
//     event). It stays set whatever comes later.
//   - not_replayed: the GET names an event id of the request's streams, and
//     the resumed stream ends (any way, any status) without the response,
//     and no later resumed stream brings it. A resumed stream that ends
//     without it leaves the request waiting for the next reconnect, whose
//     Last-Event-ID may be any event id its streams gave.
//   - A GET naming another stream's event is that stream's resumption, not
//     this one's. A new POST of the same id supersedes the reconnect. A
//     stream that gave no event id cannot be resumed: nothing is flagged.
//
// The verdict stays what the evidence supports: STREAM_INCOMPLETE when the
// response never came, the response's verdict when it did. A standalone
// GET stream that a client opens again after a cut, before its real
// resumption, is taken for the reconnect.
//
// duplicate_side_effect marks a tools/call of a tool that is neither
// read-only nor idempotent (tools/list annotations as for retry_unsafe,
// the specification's defaults when a hint is absent or the tool was never
// listed) that ran, or may have run, more than once for one logical call.
// An attempt may have run unless its evidence says it did not: a refused
// connection, a 1xx, 3xx or 4xx status (429, 401, 403, 400, 404: the tool
// never ran), or a JSON-RPC answer refusing it (-32700, -32600, -32601,
// -32602, -32002, -32020, -32021, -32022, -32042, an error not tied to the
// request's id, an unknown-session answer). A 2xx, a 5xx (the server may
// have failed part way), a lost connection, a timeout, a cut stream, a
// tool error (isError: the tool ran) and a request still in flight may
// have run. The flag is set:
//
//   - on the one row when two of its attempts (post_count 2 or more: the
//     same id POSTed again by an SDK or a proxy) may have run; on a
//     server's log that is the same request received twice in one session;
//   - on the later row of a retry (retry_of, in the conversation or in the
//     client's next session, through the Linker) or a duplicate dispatch
//     (duplicate_of) when the earlier request and the later one both may
//     have run.
//
// So a 429 or a 401 and then a retry is not a side effect done twice (the
// first did not run), nor is a repeat after a success (a new call). A
// tool error and a repeat is (it ran twice), while retry_unsafe is not set
// there (the outcome was certain). When client and server rows are merged,
// the server's own log saying it ran twice stands; a client's judgement
// from its own POSTs of one request gives way to the server's count when
// the server saw only one of them (a proxy answered the other); a
// judgement across two exchanges stays the client's.
//
// # Client and server views
//
// The Merger (merger.go; MergeViews is a Merger holding every row) merges
// the client-side and server-side rows of the same exchanges when a run
// holds logs of both sides: sides both,
// client_post_count, server_post_count, server_outcome,
// server_http_statuses and clock_skew_ms, matched on id, method and a hash
// of the params, within one session when both know it, after allowing for
// the skew between the two clocks. Rows pair one to one: when one server
// row could be the partner of several client rows of the same call and id
// (a new sessionless client instance repeating it, 2026-07-28), a client
// row that received a status the server sent, starting within a second of
// it after the skew, goes first (times logged to the millisecond, and a
// skew estimated from start times that hold each request's latency, do not
// tell such repeats apart); otherwise the nearest. failed_hop says where a failure
// happened: none; tool (isError); server (the server sent the error status
// or the bad answer itself); network (the server answered but the client
// saw something else, or the server never saw a request the client sent;
// also when the server answered a failure, isError, a JSON-RPC error or an
// error status, and the client was told the call succeeded: a gateway hid
// the failure on the way, and the row keeps the client's success with
// server_outcome saying what the server sent); client (the client
// cancelled it or abandoned it before it had an answer, or logged a
// request no POST carried and the server never saw; a client that closed
// the stream after reading a JSON-RPC error or a bad answer did not
// abandon it: the answer decides); unknown when one view cannot tell. A merged row
// keeps the client's verdict; when the client's log lacked the evidence
// (UNKNOWN) it takes the server's, with its suspect_hidden_error and
// suspect_reason.
//
// # State and time
//
// A conversation ends a minute after a DELETE of its session that
// succeeded (records of streams still open are written when they end),
// after IdleTimeout without activity in its logs' event time (up to four
// times longer while a response is awaited on a stream), or at the end of
// input; its open exchanges are then judged on what the log holds and its
// state is dropped, so memory holds the open conversations, not the input.
// While a conversation is open it keeps, of a request once judged and
// written, only what the requests after it are matched against (its ids,
// hashes, outcome, times and a few flags, in an 80-byte summary, history.go;
// never its exchange, row, body or messages), and only for its latest
// Correlator.History judged requests
// (DefaultHistory, 128; 16 times that in a conversation keyed by its
// file, which may interleave many clients) and, once it holds dozens,
// none started more than IdleTimeout before its logs' time; its open
// requests are always kept. An open request keeps its row as it will be
// written (with its arguments, copied once its record is done, so that it
// no longer holds the record's decoded bodies and messages), its attempts'
// statuses and failures, and no response body it has not paired. The text
// conversations repeat (URL, target, tool name, client and server) is
// shared among the conversations of a correlator through bounded tables
// (state.go). A
// request further back is forgotten as if
// never seen: the same id or call sent again is a new exchange (no
// same-id attempt, no retry_of), a late duplicate of its response waits
// like a response whose request has not come (stray at the end, unless a
// request of its id follows), a cancel naming it waits for a request of
// its id, and no id conflict is found with it.
// The windows of the rules (RetryWindow, NextSessionWindow, SameIDWindow,
// DuplicateWindow) are unchanged; only a conversation that sends more
// than History requests within one of them looks back less far.
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
// time), its retry state changed (failed so far, uncertain, ran or may
// have run, Retry-After), its conversation expired or named its client, a
// client sent initialize, a conversation closed; a row carries how many of
// its attempts may have run and, when it was sent on a session after its
// 404, when the 404 came. The Linker replays them in order, so it sees
// exactly what one correlator per log saw at each point.
//
// The wiring (drive_test.go is the reference; every arrow in input order):
//
//	sequencer: o.Seq = 1, 2, ...; clock.Stamp(o); shard[ShardKey(o) % n].Add(o)
//	           after an input's last observation (a file read to its end): clock.End(source)
//	every round: m := clock.Mark(last Seq); every shard: Advance(m)
//	at the end: m := clock.Mark(last Seq + 1); every shard: Finish(m) (a Seq of its own:
//	what the last Advance closed, keyed {last Seq, ...}, stays before what Finish closes)
//	merge the round's items of all shards by Key -> linker.Add; linker.Advance(m) (Finish(m))
//	linker's rows -> merger.Add; merger.Advance(m) (merger.Finish())
//
// Order keys (Key, order.go): an item emitted by Add(o) is keyed {o.Seq,
// 0, 0, n}; one emitted by Advance(m) or Finish(m), when a conversation
// closes or its held server rows are due, {m.Seq, a, the conversation's
// first Seq, n}, a counting the earlier Marks with the same Seq (a quiet
// stream's Marks, the final Mark after the last round's); n counts from 0
// within that Add or that conversation's part of that Mark. Keys are
// unique in a run and
// strictly increase along each correlator's output (Advance and Finish
// close conversations in the order of their first Seq, never in map
// order), so a k-way merge of the shards' outputs gives the same sequence
// whatever the number of shards, and so do the Linker's and the Merger's
// outputs. The Linker's rows keep their item's key, or take the releasing
// initialize's key ({m.Seq, a, MaxInt64, 0} when Advance or Finish
// releases them): non-decreasing. The Merger writes rows in arrival order, a merged
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
// What is bounded by what: a correlator holds its open conversations (with
// the server rows of the last SameIDWindow of their sessions, their open
// requests and their latest History judged ones); the
// Linker, per log, the latest request of 4,096 distinct calls, the latest
// initialize per client, the open requests' retry state, and the rows of
// expired sessions until an initialize of their client, IdleTimeout of
// their log's time, or Finish; the Merger, the rows that arrived within
// the last Window (plus an eighth: it decides in batches) of the Marks'
// newest time, and the pairing of conversations seen within twice Window.
// LowWater (each of the three) is the smallest Seq still needed to rebuild
// what is held (the first Seq of each open conversation, of each held
// row's conversation, of each expired conversation a next session may
// still repeat, and of each client conversation without sessions with a
// failed request that a next instance may still repeat, for 10 minutes of
// its log's time): a commit point at or below the minimum replays
// correctly.
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
// paired with it (an answer on its POST's own event stream a little later,
// see "Sessions and cancellation"); one whose last attempt failed stays open for a possible
// re-POST until its conversation ends (end of input for files). Everything
// still open then is judged on what the log holds (NO_RESPONSE, UNKNOWN, ...).
// A final row of a server's session before 2026-07-28 is written when no
// other attempt of its id can join it any more: at the first Mark after
// its log's time is past the wait (Correlator.SameIDHold: SameIDWindow, 2
// minutes, or -lateness when that is shorter; the pipeline makes it at
// most half its merge window), after its log's input ended
// (Clock.End), or after its log stood still, in input order, while the
// run's newest time went on by more than the wait and past it (a server
// stream with nothing more to say while the client's goes on, whose rows
// wait for it to merge), or
// when its conversation ends. A repeat joins when it started within the
// wait and the newest time of its log before its record (its watermark)
// is within it too, and the row is still held: that depends only on the
// log and never on the number of shards; on where the Marks fall only
// when the log stands still in the run's time for longer than the wait
// just before such a repeat (a partition consumed behind the others),
// where the row may be written first and the repeat becomes a row of its
// own with retry_of.
//
// # Columns filled here
//
// post_count and http_statuses (0 where no response came) count the POSTs of
// one exchange in order; started_at is the first attempt, ended_at the end of
// the observation that closed the exchange; latency_ms is the difference when
// a response was seen, and null when the log's clock puts the end before the
// start (the clock went back between two records of the exchange). exchange_id is a hash of the source, the line of the
// first request and the JSON-RPC id, so the same input gives the same ids.
package correlate
