// Package wirelog records the HTTP traffic of a Go MCP server as an mcptrace
// wire log (version 1, schema/README.md): a net/http middleware that writes
// one NDJSON line per HTTP transaction, as the server saw it, for ingest to
// classify.
//
//	f, _ := os.OpenFile("server.ndjson", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
//	mcpHandler := mcp.NewStreamableHTTPHandler(getServer, nil) // any http.Handler
//	http.Handle("/mcp", wirelog.Handler(mcpHandler, f, &wirelog.Options{
//		Server: &wirelog.Implementation{Name: "inventory", Version: "1.4.0"},
//	}))
//
// # What a line holds
//
// Every line is a schema.WireRecord with side "server": ts (when the request
// reached the handler) and end_ts (when the handler returned, that is when
// the response, or the event stream, ended), the request's method, full URL,
// headers and body, and the response's status, headers, Content-Type and
// body. A text/event-stream body is the raw stream text exactly as the
// handler wrote it, and stream_end says how the stream ended:
//
//	complete       the handler returned with the client still connected
//	client_closed  the client went away first (the request's context was
//	               cancelled while the handler ran): in 2026-07-28, a
//	               cancellation
//	reset          writing to the client failed, or the handler aborted
//	               (panicked) after the status was sent
//
// session_id is the Mcp-Session-Id request header, or, for the request that
// created the session (initialize), the one the response assigned;
// protocol_version is the MCP-Protocol-Version request header. connection is
// left out unless Options.Connection gives one: without a session
// (2026-07-28, stateless servers) ingest groups a server's records by it,
// and nothing the server sees names a client instance (an HTTP client spreads
// its requests over pooled TCP connections, so RemoteAddr is not one). Give
// it something that is, such as the authenticated principal; otherwise ingest
// tells sessionless client instances apart by their own traffic.
//
// A handler that writes no response gets the 200 with an empty body that
// net/http sends for it, unless the client had gone away by then: that is a
// failure of kind "client_abort" (nothing was sent). A handler that panics
// before writing a status is
// recorded as a failure of kind "reset" (the client sees the connection
// close), and the panic goes on to net/http as before.
//
// # Streaming and concurrency
//
// The wrapper passes every write through at once and implements http.Flusher
// (and Unwrap, for http.ResponseController), so event streams reach the
// client as the handler flushes them. The line of a transaction is written
// when it ends, in a single Write to w under a mutex: concurrent requests
// never interleave their lines, and a long stream's line comes after the
// lines of requests that ended while it was open. An error writing the log
// never affects the response; it goes to Options.OnError.
//
// # Limits and secrets
//
// At most Options.MaxBody bytes (DefaultMaxBody, 1 MiB, when 0) of each body
// are kept. A body that is longer is left out of the record (a body that is
// absent means "not recorded", so ingest judges that exchange UNKNOWN rather
// than misreading a piece of it) and the record's labels say so:
// "wirelog.request_body_cut" or "wirelog.response_body_cut" with the body's
// size in bytes (a request body's as far as the handler read it). The request body is read (up to the limit) before the
// handler runs, so it is recorded whole even when the handler rejects the
// request without reading it; the handler still reads every byte.
//
// The values of the headers in Options.DropHeaders (by default
// Authorization, Proxy-Authorization, Cookie and Set-Cookie) are never
// written: the header appears with the value "[dropped]", so the log shows
// that a credential was sent without holding it. ingest redacts what it
// reads and never writes headers or bodies to its dataset, but a wire log is
// a file that people copy: keep tokens out of it at the source. Bodies are
// written as they are; tool arguments and results can carry personal data.
//
// The package depends only on the standard library (and mcptrace/schema,
// which does too).
package wirelog
