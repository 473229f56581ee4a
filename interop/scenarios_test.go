package interop

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// The issue-10 rules implemented on other branches that some labels here
// need (see README.md, "Labels that need other branches").
const (
	rule1  = "rule 1 (2026-07-28 4xx with a JSON-RPC error body: JSONRPC_ERROR)"
	rule2  = "rule 2 (the client's own abort + cancel: CANCELLED)"
	rule3  = "rule 3 (late answer after a cancel: CANCELLED + late_response)"
	rule4  = "rule 4 (sessionless client instances)"
	rule5  = "rule 5 (suspect_hidden_error)"
	rule8  = "rule 8 (duplicate_side_effect)"
	rule9  = "rule 9 (error_kind)"
	rule11 = "rule 11a (HAR status + _error: HTTP_ERROR)"
)

// pend joins the rules a row needs.
func pend(rules ...string) string { return strings.Join(rules, ", ") }

// nth returns a rule that answers the requests ok selects with f, the
// first n times (n < 0: always), and forwards everything else.
func nth(n int, sel func(*request) bool, f *fault) func() rule {
	return func() rule {
		var mu sync.Mutex
		seen := 0
		return func(r *request) *fault {
			if !sel(r) {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			seen++
			if n >= 0 && seen > n {
				return nil
			}
			return f
		}
	}
}

func toolCall(name string) func(*request) bool {
	return func(r *request) bool { return r.RPCMethod == "tools/call" && r.Tool == name }
}

var echoArgs = map[string]any{"text": "hello"}

// basics: the same application against any pair, no fault: a success, a
// tool error, an unknown tool, arguments of the wrong type, progress on an
// event stream, and a failure the tool reports as a success.
func basics(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.listTools(cl)
	rows = append(rows, row{method: "tools/list", outcome: "SUCCESS"})

	h.ok(h.call(cl, "echo", echoArgs), "echo")
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("is_error", "false")})

	h.toolError(h.call(cl, "fail", nil), toolFailureText, "fail")
	rows = append(rows, row{method: "tools/call", tool: "fail", outcome: "TOOL_ERROR", cols: c("is_error", "true", "failed_hop", "tool")})

	// Both SDKs answer an unknown tool with JSON-RPC -32602; in 2026-07-28
	// the servers send it with HTTP 400 (the spec's status mapping), and both
	// clients still hand the application the JSON-RPC error.
	r := h.call(cl, "nope", nil)
	h.rpcError(r, -32602, "unknown tool")
	unknown := row{method: "tools/call", tool: "nope", outcome: "JSONRPC_ERROR", cols: c("error_code", "-32602", "failed_hop", "server", "error_kind", "unknown_tool"), pending: pend(rule9)}
	if h.sc.era == modern {
		unknown.cols["http_statuses"] = "[400]"
		unknown.pending = pend(rule1, rule9)
	}
	rows = append(rows, unknown)

	// Arguments of the wrong type: both SDKs answer with an isError result
	// (go-sdk validates against the input schema, mcp-go's handler fails).
	r = h.call(cl, "count", map[string]any{"count": "many"})
	h.toolError(r, "", "count with a string")
	rows = append(rows, row{method: "tools/call", tool: "count", outcome: "TOOL_ERROR", cols: c("is_error", "true", "failed_hop", "tool", "error_kind", "validation"), pending: pend(rule9)})

	// prompts/list: the go-sdk server answers an empty list, mcp-go (no
	// prompts registered) -32601, with HTTP 404 in 2026-07-28.
	ctx, cancel := context.WithTimeout(h.ctx, callTimeout)
	err := cl.listPrompts(ctx)
	cancel()
	if h.sc.server == goSDK {
		h.ok(result{err: err}, "prompts/list")
		rows = append(rows, row{method: "prompts/list", outcome: "SUCCESS"})
	} else {
		h.rpcError(result{err: err}, -32601, "prompts/list")
		pl := row{method: "prompts/list", outcome: "JSONRPC_ERROR", cols: c("error_code", "-32601", "failed_hop", "server", "error_kind", "unknown_method"), pending: pend(rule9)}
		if h.sc.era == modern {
			pl.cols["http_statuses"] = "[404]"
			pl.pending = pend(rule1, rule9)
		}
		rows = append(rows, pl)
	}

	r = h.call(cl, "progress", map[string]any{"steps": 2})
	h.ok(r, "progress")
	progress := row{method: "tools/call", tool: "progress", outcome: "TOOL_SUCCESS", cols: c("sse_events", "3", "response_where", "post_stream")}
	if h.sc.server == mcpGo {
		// mcp-go 1.2.1 sometimes drops a progress notification sent just
		// before the result (its forwarder takes it off the channel, then
		// finds the request done): the count varies, the verdict does not.
		progress.cols["sse_events"] = ""
	}
	rows = append(rows, progress)

	r = h.call(cl, "hidden", nil)
	h.ok(r, "hidden")
	if r.text != hiddenFailureText {
		h.t.Errorf("hidden: text %q", r.text)
	}
	rows = append(rows, row{method: "tools/call", tool: "hidden", outcome: "TOOL_SUCCESS", cols: c("suspect_hidden_error", "true"), pending: pend(rule5)})
	return rows
}

// retry503: the proxy answers the first two calls of echo 503 without
// forwarding them; the application calls again after each failure (the SDKs
// never re-POST on their own), so every attempt is a new request id.
func retry503(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	for i := 0; i < 3; i++ {
		r := h.call(cl, "echo", echoArgs)
		origin := "none"
		if i > 0 {
			origin = "application"
		}
		if i < 2 {
			h.failed(r, errText(map[sdk]string{goSDK: "Service Unavailable", mcpGo: "status 503"}[h.sc.client]), "an HTTP 503 error", "echo")
			rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "HTTP_ERROR",
				cols: c("http_statuses", "[503]", "retry_origin", origin, "sides", "client", "failed_hop", "network", "server_outcome", "null", "server_http_statuses", "[]", "server_post_count", "null")})
			continue
		}
		h.ok(r, "echo after two 503s")
		rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("retry_origin", origin, "retry_basis", "same_call_after_failure")})
	}
	return rows
}

// retryAfter429: the proxy answers the first call 429 with Retry-After: 1;
// the application waits that long and calls again.
func retryAfter429(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	r := h.call(cl, "echo", echoArgs)
	if h.sc.client == mcpGo {
		// mcp-go reads any JSON body of a non-2xx response as a JSON-RPC
		// response: the proxy's {"error":"rate limited"} reaches the
		// application as an internal error -32603. The wire says 429.
		h.rpcError(r, -32603, "echo answered 429 with a JSON body")
	} else {
		h.failed(r, errText("Too Many Requests"), "an HTTP 429 error", "echo")
	}
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "HTTP_ERROR",
		cols: c("http_statuses", "[429]", "sides", "client", "failed_hop", "network", "server_outcome", "null", "server_http_statuses", "[]", "server_post_count", "null",
			"error_kind", "rate_limit"), pending: pend(rule9)})
	time.Sleep(time.Second) // the application honours Retry-After: 1 (not a race: nothing waits on it)
	h.ok(h.call(cl, "echo", echoArgs), "echo after Retry-After")
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS",
		cols: c("retry_origin", "application", "retry_basis", "same_call_after_failure", "retry_after_s", "1.0", "retry_after_respected", "true")})
	return rows
}

// afterCut lets the waiting progress call answer once the proxy has cut or
// ended its stream and the server has seen its end of that stream close, so
// that the answer is written after the cut, never into the cut stream.
func (h *harness) afterCut() {
	go func() {
		h.px.waitFor("the proxy to cut the stream", func(x *txn) bool {
			return x.done && (strings.HasPrefix(x.injected, "cut") || strings.HasPrefix(x.injected, "ended"))
		})
		h.be.waitLogged("the server's record of the cut POST", `"method":"POST"`, `\"name\":\"progress\"`)
		h.be.letProceed()
	}()
}

// resumeGETs counts the GETs that carried Last-Event-ID through the proxy.
func (h *harness) resumeGETs() int {
	n := 0
	for _, x := range h.px.snapshot() {
		if x.method == "GET" && x.req.LastEventID != "" {
			n++
		}
	}
	return n
}

// cutResume: the proxy cuts (or ends) the call's event stream after two
// progress events; the server answers only after the cut, into its event
// store; the client resumes with a GET carrying Last-Event-ID and gets the
// answer replayed.
func cutResume(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.afterCut()
	r := h.call(cl, "progress", map[string]any{"steps": 2, "wait": true})
	h.ok(r, "progress over a cut, resumed stream")
	if n := h.resumeGETs(); n != 1 {
		h.t.Errorf("%d GETs with Last-Event-ID, want 1", n)
	}
	return append(rows, row{method: "tools/call", tool: "progress", outcome: "TOOL_SUCCESS", cols: c("response_where", "resumed_stream", "resume_problem", "null")})
}

// cutNoResume: the proxy drops the connection after two progress events;
// mcp-go does not resume a stream that broke (only one the server ended), so
// the call fails.
func cutNoResume(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.afterCut()
	r := h.call(cl, "progress", map[string]any{"steps": 2, "wait": true})
	h.failed(r, func(error) bool { return true }, "an error", "progress over a cut stream")
	if n := h.resumeGETs(); n != 0 {
		h.t.Errorf("%d GETs with Last-Event-ID, want none", n)
	}
	return append(rows, row{method: "tools/call", tool: "progress", outcome: "STREAM_INCOMPLETE",
		cols: c("stream_end", "reset", "failed_hop", "network", "server_outcome", "STREAM_INCOMPLETE", "resume_problem", "null")})
}

// serverPoll: the go-sdk server's tool closes its own event stream at once
// with retry: 10 (2025-11-25 polling, SEP-1699) and answers; the client
// reconnects with Last-Event-ID and the answer is replayed. No fault.
func serverPoll(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.ok(h.call(cl, "poll", nil), "poll")
	if n := h.resumeGETs(); n != 1 {
		h.t.Errorf("%d GETs with Last-Event-ID, want 1", n)
	}
	return append(rows, row{method: "tools/call", tool: "poll", outcome: "TOOL_SUCCESS", cols: c("response_where", "resumed_stream")})
}

// never is a hold that only the client's giving up ends.
var never = make(chan struct{})

// callFor calls a tool with a context that ends after d.
func (h *harness) callFor(cl client, d time.Duration, tool string, args map[string]any) result {
	ctx, cancel := context.WithTimeout(h.ctx, d)
	defer cancel()
	return cl.call(ctx, tool, args, false)
}

// waitCancelSent waits until a notifications/cancelled has gone through the
// proxy (go-sdk sends it asynchronously after the call returned).
func (h *harness) waitCancelSent() {
	h.px.waitFor("notifications/cancelled", func(x *txn) bool { return x.done && x.req.RPCMethod == "notifications/cancelled" })
}

func (h *harness) noCancelSent() {
	for _, x := range h.px.snapshot() {
		if x.req.RPCMethod == "notifications/cancelled" {
			h.t.Errorf("%s sent notifications/cancelled", h.sc.client)
		}
	}
}

// timeout: the proxy holds the call (the server never sees it) past the
// client's 150 ms deadline; the go-sdk client then sends
// notifications/cancelled, mcp-go (over HTTP) does not. The request never
// reached the server: the network's hop failed, the client only gave up.
func timeout(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	r := h.callFor(cl, 150*time.Millisecond, "echo", echoArgs)
	h.failed(r, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }, "context.DeadlineExceeded", "echo past its deadline")
	cancelled := "false"
	if h.sc.client == goSDK {
		h.waitCancelSent()
		cancelled = "true"
	} else {
		h.noCancelSent()
	}
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "CANCELLED",
		cols: c("cancelled", cancelled, "http_statuses", "[0]", "transport_failure", "client_abort", "sides", "client", "failed_hop", "network",
			"server_outcome", "null", "server_http_statuses", "[]", "server_post_count", "null")})
	if h.sc.era == modern {
		// The application calls again (a new id): in 2026-07-28 the closed
		// stream was the cancellation, the re-issue an application retry.
		h.ok(h.call(cl, "echo", echoArgs), "echo again")
		rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("retry_origin", "application", "retry_basis", "same_call_after_failure")})
	}
	return rows
}

// cancel: the application cancels a call while the tool runs (the server
// has it and has sent nothing yet).
func cancel(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	ctx, stop := context.WithCancel(h.ctx)
	done := make(chan result, 1)
	go func() { done <- cl.call(ctx, "slow", nil, false) }()
	select {
	case <-h.be.slowStarted:
	case <-time.After(callTimeout):
		h.t.Fatal("the slow tool never started")
	}
	stop()
	r := <-done
	h.failed(r, func(err error) bool { return errors.Is(err, context.Canceled) }, "context.Canceled", "slow, cancelled")
	// The tool is let go only once the server knows its client left, so
	// that its answer (if any) never goes into a stream still open.
	h.be.waitGone(`"name":"slow"`)
	w := row{method: "tools/call", tool: "slow", cols: c("http_statuses", "[0]", "transport_failure", "client_abort", "failed_hop", "client",
		"server_http_statuses", "[0]")}
	switch {
	case h.sc.client == goSDK:
		h.waitCancelSent()
		w.outcome = "CANCELLED"
		w.cols["cancelled"] = "true"
	case h.sc.era == modern:
		h.noCancelSent()
		w.outcome = "CANCELLED" // closing the stream is the cancellation
	default:
		// mcp-go sends no notifications/cancelled over HTTP: before
		// 2026-07-28 a disconnect is not a cancellation.
		h.noCancelSent()
		w.outcome = "NO_RESPONSE"
	}
	return append(rows, w)
}

// lateAnswer: a go-sdk client cancels a call (closing its POST and sending
// notifications/cancelled); the proxy keeps the server's stream open, as a
// buffering gateway does, so the server, whose tool stops on the cancel,
// answers on it after the cancel: an isError "context canceled" result.
// Recorded on the server's side.
func lateAnswer(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	ctx, stop := context.WithCancel(h.ctx)
	done := make(chan result, 1)
	go func() { done <- cl.call(ctx, "slow", nil, false) }()
	<-h.be.slowStarted
	stop()
	h.failed(<-done, func(err error) bool { return errors.Is(err, context.Canceled) }, "context.Canceled", "slow, cancelled")
	h.waitCancelSent()
	h.be.waitLogged("the server's answer after the cancel", `\"name\":\"slow\"`, "context canceled")
	if h.be.cancelled.Load() != 1 {
		h.t.Errorf("the tool saw %d cancellations, want 1", h.be.cancelled.Load())
	}
	return append(rows, row{method: "tools/call", tool: "slow", outcome: "CANCELLED",
		cols: c("cancelled", "true", "late_response", "true"), pending: pend(rule3)})
}

// expired: a call succeeds, then the server forgets every session; the
// next call is answered 404. With reinit the application starts again (go-sdk:
// a new client, whose session is broken for good after ErrSessionMissing;
// mcp-go: Initialize again on the same client) and repeats the call in its
// new session; without, it gives up.
func expired(reinit bool) func(h *harness) []row {
	return func(h *harness) []row {
		cl := h.connect()
		rows := h.handshake()
		h.ok(h.call(cl, "echo", echoArgs), "echo")
		rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS"})
		h.be.forget()
		r := h.call(cl, "echo", echoArgs)
		if h.sc.client == goSDK {
			h.failed(r, func(err error) bool { return errors.Is(err, gosdkErrSessionMissing) }, "mcp.ErrSessionMissing", "echo on a forgotten session")
		} else {
			h.failed(r, func(err error) bool { return errors.Is(err, mcpgoErrSessionTerminated) }, "transport.ErrSessionTerminated", "echo on a forgotten session")
		}
		gone := row{method: "tools/call", tool: "echo", outcome: "HTTP_ERROR", cols: c("http_statuses", "[404]", "session_expired", "true",
			"reinitialized", map[bool]string{true: "true", false: "false"}[reinit], "failed_hop", "server", "error_kind", "session"), pending: pend(rule9)}
		if !h.sc.capture.server() {
			gone.cols["failed_hop"] = "unknown" // the client's log alone cannot tell who sent the 404
		}
		rows = append(rows, gone)
		if !reinit {
			return rows
		}
		if h.sc.client == goSDK {
			cl = h.connect()
		} else {
			ctx, cancel := context.WithTimeout(h.ctx, callTimeout)
			if err := cl.(*mcpGoClient).reinitialize(ctx); err != nil {
				h.t.Fatalf("initialize again: %v", err)
			}
			cancel()
		}
		rows = append(rows, h.handshake()...)
		h.ok(h.call(cl, "echo", echoArgs), "echo in the new session")
		return append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("retry_origin", "application", "retry_basis", "same_call_next_session")})
	}
}

// dropped503: the proxy sends a 503 status line for the first call, then
// drops the connection before the body; the application calls again.
func dropped503(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.failed(h.call(cl, "echo", echoArgs), errText("Service Unavailable"), "an HTTP 503 error", "echo")
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "HTTP_ERROR",
		cols: c("http_statuses", "[503]", "sides", "client", "failed_hop", "network", "server_outcome", "null", "server_http_statuses", "[]", "server_post_count", "null",
			"transport_failure", ""), pending: pend(rule11)})
	h.ok(h.call(cl, "echo", echoArgs), "echo again")
	return append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("retry_origin", "application")})
}

// chargeTwice: the proxy forwards a call of the non-idempotent "charge"
// tool, the server runs it and answers, and the proxy drops the connection
// after the status line; the application, not knowing whether it ran, calls
// again: the card is charged twice.
func chargeTwice(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.listTools(cl) // the annotations: charge is neither read-only nor idempotent
	rows = append(rows, row{method: "tools/list", outcome: "SUCCESS"})
	h.failed(h.call(cl, "charge", map[string]any{"count": 1}), func(error) bool { return true }, "an error", "charge, answer lost")
	rows = append(rows, row{method: "tools/call", tool: "charge", outcome: "STREAM_INCOMPLETE",
		cols: c("stream_end", "reset", "failed_hop", "network", "server_outcome", "TOOL_SUCCESS")})
	h.ok(h.call(cl, "charge", map[string]any{"count": 1}), "charge again")
	if n := h.be.charges.Load(); n != 2 {
		h.t.Errorf("the server ran charge %d times, want 2", n)
	}
	return append(rows, row{method: "tools/call", tool: "charge", outcome: "TOOL_SUCCESS",
		cols: c("retry_origin", "application", "retry_unsafe", "true", "duplicate_side_effect", "true"), pending: pend(rule8)})
}

// newInstance: without sessions (2026-07-28), a first client instance gets
// a 503 and gives up; a second one (a new process: a new server/discover,
// ids starting again at 1) makes the same call, which now has the same id
// and the same params as the failed one.
func newInstance(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	h.failed(h.call(cl, "echo", echoArgs), errText("503"), "an HTTP 503 error", "echo")
	rows = append(rows, row{method: "tools/call", tool: "echo", outcome: "HTTP_ERROR",
		cols:    c("http_statuses", "[503]", "sides", "client", "failed_hop", "network", "server_outcome", "null", "server_http_statuses", "[]", "server_post_count", "null"),
		pending: pend(rule4)})
	cl.close()
	cl = h.connect()
	rows = append(rows, row{method: "server/discover", outcome: "SUCCESS"})
	h.ok(h.call(cl, "echo", echoArgs), "echo from the second instance")
	return append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS", cols: c("retry_origin", "application", "retry_basis", ""), pending: pend(rule4)})
}

// autoVersion: the go-sdk client asks for 2026-07-28 first (server/discover);
// a stateful go-sdk server answers with the versions it serves, all older,
// and the client falls back to initialize at 2025-11-25.
func autoVersion(h *harness) []row {
	cl := h.connect()
	if v := cl.version(); v != string(legacy) {
		h.t.Errorf("negotiated %q, want %s", v, legacy)
	}
	rows := []row{{method: "server/discover", outcome: "SUCCESS", cols: c("protocol_version", string(modern))}, {method: "initialize", outcome: "SUCCESS"}}
	h.ok(h.call(cl, "echo", echoArgs), "echo")
	return append(rows, row{method: "tools/call", tool: "echo", outcome: "TOOL_SUCCESS"})
}

// gatewayRewrite: a gateway between client and server rewrites the tool's
// isError: true into false; the client is told the call succeeded, with the
// error text as its result. The failure was hidden by the proxy, between
// the hops: failed_hop network.
func gatewayRewrite(h *harness) []row {
	cl := h.connect()
	rows := h.handshake()
	r := h.call(cl, "fail", nil)
	h.ok(r, "fail, rewritten by the gateway")
	if r.text != toolFailureText {
		h.t.Errorf("text %q", r.text)
	}
	return append(rows, row{method: "tools/call", tool: "fail", outcome: "TOOL_SUCCESS",
		cols: c("is_error", "false", "server_outcome", "TOOL_ERROR", "failed_hop", "network", "suspect_hidden_error", "true"), pending: pend(rule5)})
}

var scenarios = []*scenario{
	{name: "gosdk-gosdk-legacy-basics", client: goSDK, server: goSDK, era: legacy, capture: harServer,
		fault: "none", steps: basics},
	{name: "mcpgo-mcpgo-legacy-basics", client: mcpGo, server: mcpGo, era: legacy, capture: wireServer,
		fault: "none", steps: basics},
	{name: "gosdk-mcpgo-modern-basics", client: goSDK, server: mcpGo, era: modern, serverCfg: serverConfig{stateless: true}, capture: harServer,
		fault: "none", steps: basics},
	{name: "mcpgo-gosdk-modern-basics", client: mcpGo, server: goSDK, era: modern, serverCfg: serverConfig{stateless: true}, capture: wireServer,
		fault: "none", steps: basics},
	{name: "gosdk-gosdk-legacy-503-app-retry", client: goSDK, server: goSDK, era: legacy, capture: harServer,
		fault: "the proxy answers the first two calls 503 without forwarding them",
		rule:  nth(2, toolCall("echo"), &fault{status: 503, header: map[string]string{"Content-Type": "text/plain"}, body: "upstream unavailable\n"}),
		steps: retry503},
	{name: "mcpgo-gosdk-modern-503-app-retry", client: mcpGo, server: goSDK, era: modern, serverCfg: serverConfig{stateless: true}, capture: wireServer,
		fault: "the proxy answers the first two calls 503 without forwarding them",
		rule:  nth(2, toolCall("echo"), &fault{status: 503}),
		steps: retry503},
	{name: "mcpgo-mcpgo-legacy-429-retry-after", client: mcpGo, server: mcpGo, era: legacy, capture: harServer,
		fault: "the proxy answers the first call 429 with Retry-After: 1 without forwarding it",
		rule:  nth(1, toolCall("echo"), &fault{status: 429, header: map[string]string{"Retry-After": "1", "Content-Type": "application/json"}, body: `{"error":"rate limited"}`}),
		steps: retryAfter429},
	{name: "gosdk-mcpgo-modern-429-retry-after", client: goSDK, server: mcpGo, era: modern, serverCfg: serverConfig{stateless: true}, capture: harServer,
		fault: "the proxy answers the first call 429 with Retry-After: 1 without forwarding it",
		rule:  nth(1, toolCall("echo"), &fault{status: 429, header: map[string]string{"Retry-After": "1"}}),
		steps: retryAfter429},
	{name: "gosdk-gosdk-legacy-cut-resumed", client: goSDK, server: goSDK, era: legacy, serverCfg: serverConfig{eventStore: true}, capture: harServer,
		fault: "the proxy drops the connection after two progress events (announcing retry: 20); the server answers after the cut",
		rule:  nth(1, toolCall("progress"), &fault{cutAfter: 2, retryMs: 20}),
		steps: cutResume},
	{name: "gosdk-mcpgo-legacy-ended-resumed", client: goSDK, server: mcpGo, era: legacy, serverCfg: serverConfig{eventStore: true}, capture: wireServer,
		noStandaloneGET: true,
		fault:           "the proxy ends the event stream cleanly after two progress events (announcing retry: 20); the server answers after it; the client opens no standalone GET (mcp-go would send the progress there)",
		rule:            nth(1, toolCall("progress"), &fault{cutAfter: 2, cutClean: true, retryMs: 20}),
		steps:           cutResume},
	{name: "mcpgo-gosdk-legacy-cut-not-resumed", client: mcpGo, server: goSDK, era: legacy, serverCfg: serverConfig{eventStore: true}, capture: harServer,
		fault: "the proxy drops the connection after two progress events; the server answers after the cut",
		rule:  nth(1, toolCall("progress"), &fault{cutAfter: 2, retryMs: 20}),
		steps: cutNoResume},
	{name: "mcpgo-gosdk-legacy-server-polls", client: mcpGo, server: goSDK, era: legacy, serverCfg: serverConfig{eventStore: true}, capture: wireServer,
		fault: "none: the server closes its own stream with retry: 10 and answers on the resumed one",
		steps: serverPoll},
	{name: "gosdk-gosdk-legacy-timeout", client: goSDK, server: goSDK, era: legacy, capture: harServer,
		fault: "the proxy holds the call past the client's 150 ms deadline (the server never sees it)",
		rule:  nth(-1, toolCall("echo"), &fault{hold: never}),
		steps: timeout},
	{name: "mcpgo-mcpgo-modern-timeout-retry", client: mcpGo, server: mcpGo, era: modern, serverCfg: serverConfig{stateless: true}, capture: wireServer,
		fault: "the proxy holds the first call past the client's 150 ms deadline; the application calls again",
		rule:  nth(1, toolCall("echo"), &fault{hold: never}),
		steps: timeout},
	{name: "gosdk-gosdk-modern-cancel", client: goSDK, server: goSDK, era: modern, serverCfg: serverConfig{stateless: true}, capture: harServer,
		fault: "none: the application cancels the call while the tool runs",
		steps: cancel},
	{name: "mcpgo-mcpgo-legacy-cancel", client: mcpGo, server: mcpGo, era: legacy, capture: wireServer,
		fault: "none: the application cancels the call while the tool runs",
		steps: cancel},
	{name: "gosdk-gosdk-legacy-cancel-late-answer", client: goSDK, server: goSDK, era: legacy, capture: serverOnly,
		fault: "the application cancels the call while the tool runs; the proxy keeps the server's stream open, and the server answers on it after the cancel",
		rule:  nth(-1, toolCall("slow"), &fault{keepUpstream: true}),
		steps: lateAnswer},
	{name: "gosdk-gosdk-legacy-expired-reinit", client: goSDK, server: goSDK, era: legacy, capture: harServer,
		fault: "the server forgets every session (404); the application starts a new client and repeats the call",
		steps: expired(true)},
	{name: "mcpgo-mcpgo-legacy-expired-reinit", client: mcpGo, server: mcpGo, era: legacy, capture: wireServer,
		fault: "the server forgets every session (404); the application initializes again and repeats the call",
		steps: expired(true)},
	{name: "gosdk-mcpgo-legacy-expired-gives-up", client: goSDK, server: mcpGo, era: legacy, capture: harOnly,
		fault: "the server forgets every session (404); the application gives up",
		steps: expired(false)},
	{name: "gosdk-gosdk-legacy-503-dropped-after-status", client: goSDK, server: goSDK, era: legacy, capture: harServer,
		fault: "the proxy sends a 503 status line for the first call, then drops the connection; the application calls again",
		rule:  nth(1, toolCall("echo"), &fault{status: 503, dropAfterStatus: true}),
		steps: dropped503},
	{name: "mcpgo-gosdk-modern-charge-twice", client: mcpGo, server: goSDK, era: modern, serverCfg: serverConfig{stateless: true}, capture: wireServer,
		fault: "the server runs charge and answers; the proxy drops the connection after the status line; the application calls again",
		rule:  nth(1, toolCall("charge"), &fault{dropAfterStatus: true}),
		steps: chargeTwice},
	{name: "mcpgo-mcpgo-modern-new-instance", client: mcpGo, server: mcpGo, era: modern, serverCfg: serverConfig{stateless: true}, capture: harServer,
		fault: "the proxy answers the first instance's call 503; a second client instance makes the same call with the same id",
		rule:  nth(1, toolCall("echo"), &fault{status: 503}),
		steps: newInstance},
	{name: "gosdk-mcpgo-legacy-gateway-hides-error", client: goSDK, server: mcpGo, era: legacy, capture: harServer,
		fault: `the proxy rewrites the tool's "isError":true into "isError":false`,
		rule: nth(-1, toolCall("fail"), &fault{rewrite: func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"isError":true`), []byte(`"isError":false`))
		}}),
		steps: gatewayRewrite},
	{name: "gosdk-gosdk-auto-version", client: goSDK, server: goSDK, era: legacy, autoVersion: true, capture: wireServer,
		fault: "none: the client tries 2026-07-28 first",
		steps: autoVersion},
}

var (
	_ = context.Background
	_ = errors.New
	_ = time.Second
)
