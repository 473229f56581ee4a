// Package traffic writes synthetic, deterministic MCP traffic logs of a
// requested size, for benchmarks: wire logs of the client's or the server's
// side, DevTools HAR documents and Claude Desktop logs. The traffic is ours,
// made up; it is not a capture. The same Options (Seed included) give
// byte-identical output; Write returns Stats with the outcome each exchange
// was made to have, which is what ingest finds in it.
//
// # The traffic
//
// About Options.Sessions (default 400) MCP sessions are open at once,
// interleaved record by record in time order: when one ends another starts.
// Each session runs initialize (with notifications/initialized, a 202), then
// tools/list, then on average 60 requests (exponentially distributed, at
// most 1,500): tools/call 86%, resources/read 5% and prompts/get 3% where
// the server has them, ping 4%, tools/list again 2%. About 40% of the
// sessions open a standalone GET stream after initialize. Most sessions
// (80%) end with a DELETE (closing the GET stream first); the others just
// stop. Between requests a session waits 40 ms plus an exponential 1.5 s;
// answers take 12 ms to 0.9 s (0.25 to 7 s for slow tools), so timestamps
// advance a few milliseconds per record and a 1 GB log covers about half
// an hour (36 minutes for seed 1). Options.Days cuts the traffic into equal slices on successive
// days instead.
//
// Seven clients (claude-code, Visual Studio Code, cursor-vscode, openai-mcp,
// goose, Cline, a Go agent; the HAR's is a web console in Chrome) talk to
// five servers: a TypeScript filesystem server, a Go GitHub server, a
// TypeScript web search server, a Python (FastMCP) Postgres server and a
// TypeScript CRM, each with its tools, argument shapes, results and error
// texts. Arguments and results are text of realistic length (tens of bytes
// to tens of kilobytes): source files in Go (tabs),
// Python and TypeScript, SQL, Markdown with tables and code fences,
// directory listings and trees, GitHub API JSON inside text, search
// results, EXPLAIN plans, log excerpts; with quotes, newlines, CRLF, tabs,
// Windows paths, non-ASCII letters and signs, e-mail addresses (in
// lookup_customer, send_email, list_tickets and issue bodies). Each
// encoder's escapes are kept: JSON.stringify's for TypeScript, Python's
// ensure_ascii \uXXXX (with surrogate pairs) for the Postgres server and the
// Python client, Go's HTML-safe \u003c for the Go server, the Go client and
// the server-side wire log. Two thirds of the sessions send
// "authorization: Bearer" (a JWT-looking token, or ghp_ for GitHub), 15% an
// x-api-key, HAR sessions mostly a cookie too.
//
// What happens to a tools/call, per thousand calls (the Stats outcome in
// parentheses, for the client's view):
//
//	478  answered as JSON                                        (TOOL_SUCCESS)
//	330  answered on an event stream, with 1-5 notifications/progress
//	     first when the client sent a progressToken              (TOOL_SUCCESS)
//	 85  isError true with the tool's own message, JSON or stream (TOOL_ERROR)
//	 35  JSON-RPC error: -32602 (55%, the SDK's validation text), -32603
//	     (30%), -32001 "Request timed out" (15%)                 (JSONRPC_ERROR)
//	 20  429 with Retry-After from the server's own limiter, sent again by
//	     the SDK with the same id (trigger sdk) after waiting: 2 attempts,
//	     or 3 (15%); 4.5% of these give up                       (TOOL_SUCCESS, else HTTP_ERROR)
//	 20  the same with 503 from the gateway in front of the server
//	  4  500 with a JSON-RPC error body                          (HTTP_ERROR)
//	 10  no response: reset 50%, timeout (30 s) 30%, connection_refused 20%  (NO_RESPONSE)
//	 10  event stream cut after 0 to all of its progress events,
//	     stream_end reset (70%) or timeout (30%, after 60 s)     (STREAM_INCOMPLETE)
//	  5  a person interrupts a call: notifications/cancelled (a 202), then
//	     the client closes the stream (client_closed) or aborts the fetch
//	     (client_abort)                                          (CANCELLED)
//	  3  the session has expired: 404, then the client initializes again
//	     and repeats the call                                    (HTTP_ERROR)
//
// (cancelling clients only: for the others those 5 are answered as JSON.)
// One success in a hundred carries the tool's error text with isError
// false, as many servers report failures (TOOL_SUCCESS, which ingest marks
// suspect_hidden_error when the text gives it away).
// After NO_RESPONSE and STREAM_INCOMPLETE the application repeats the same
// call under a new id 60% of the time, after a 429 or 503 that gave up 40%.
// resources/read fails with -32002 10% of the time and prompts/get with
// -32602 5% (JSONRPC_ERROR); everything else is SUCCESS. Over a 1 GB log
// that comes to about 70% TOOL_SUCCESS, 17% SUCCESS, 7% TOOL_ERROR, 3%
// JSONRPC_ERROR and 0.2-0.9% each of HTTP_ERROR, NO_RESPONSE,
// STREAM_INCOMPLETE and CANCELLED.
//
// # Sides
//
// Side "server" writes the same traffic (the same Seed draws the same
// sessions, calls and texts) as the server's wirelog middleware logs it:
// the server's clock (ahead by 30-430 ms, plus network delays), its
// internal URL, canonical header names in sorted order with Authorization
// "[dropped]", Go's escapes, no event times. What the server never saw is
// not there: the gateway's 503s (so a retried call has fewer attempts), a
// refused connection. Where the client lost the answer the server logged
// it: after a reset or a client timeout the server answered
// (TOOL_SUCCESS); of cut streams half were cut on the server's side too
// (STREAM_INCOMPLETE), half were written whole (TOOL_SUCCESS). Stats then
// count the server's exchanges and verdicts. Options.Exchanges counts the
// client's exchanges, so the two logs of one Seed and Exchanges hold the
// same traffic and merge (sides both); with Bytes the server's log, whose
// records are a little smaller, goes a little further.
//
// # Formats
//
// "wire" is the mcptrace wire log (schema/README.md), a record per HTTP
// transaction written when it ends (so in end_ts order), event streams as
// raw SSE text with event ids from some servers, a priming event in
// 2025-11-25, CRLF line ends from the Python server, event_times on the
// client's side.
//
// "har" is a HAR 1.2 document as Chrome DevTools exports it with sensitive
// data (see harRenderer). A stream cut before its first byte has an empty
// content.text, which DevTools also writes for a stream it did not keep:
// ingest reports UNKNOWN for it, and Stats count UNKNOWN.
//
// "claude" is a Claude Desktop mcp-server-NAME.log of one stdio server (see
// claude.go): its starts one after another, lifecycle lines, the
// Node-inspect launch block, stderr, one to three calls at a time, Claude's
// 60 s timeout with a cancel (CANCELLED, sometimes with a late answer),
// crashes with a call in flight (NO_RESPONSE), and long answers cut by
// "[N chars truncated]" (UNKNOWN: nothing that survives says how they
// ended). Sessions does not apply.
//
// # Shapes
//
// Shape "open-conversations" writes Conversations sessions that never end
// (for memory per open conversation), "long-sse" one tools/call answered on
// a stream of Events progress notifications (for memory per stream; the
// record is streamed out, never held: 1,000,000 events make a line of about
// 220 MB, which ingest reads only with -max-line above that). See Options.
//
// # Speed
//
// Records are built with append-style formatting into reused buffers and
// written through a bufio.Writer; the only state is the open sessions and
// the records still in flight (about 20 MB of memory for normal traffic).
// A 1 GB client wire log (about 360,000 records of 3.0 KB) takes 4 to 6 s
// of CPU, 180 to 300 MB/s on one core; the server side, HAR and Claude
// logs are of the same order (BenchmarkWrite).
package traffic
