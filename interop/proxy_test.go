package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The recording, fault-injecting reverse proxy. It sits between an SDK client
// and an SDK server on loopback, forwards every request, streams every
// response back as it arrives (event streams event by event), records each
// transaction as the client saw it (a HAR entry, a client-side wire-log
// line), and, when the scenario's rule says so, injects a fault between the
// two hops instead of forwarding faithfully.

// fault is what the proxy does to one HTTP request instead of forwarding it
// faithfully. The zero value forwards.
type fault struct {
	// status answers at once with this status (and header, body) without
	// forwarding: the server never sees the request.
	status int
	header map[string]string
	body   string
	// hold keeps the request, before forwarding it, until the channel is
	// closed or the client gives up (a delay past the client's deadline).
	hold <-chan struct{}
	// dropAfterStatus forwards the request, reads the server's whole
	// answer, sends its status line and headers to the client, then drops
	// the connection: the body never arrives. With status, the proxy's own
	// status line is sent, then the connection dropped.
	dropAfterStatus bool
	// cutAfter (> 0) forwards an event stream event by event and cuts it
	// after this many events carrying data: cutClean ends the body
	// normally (the server seems to have closed the stream), otherwise the
	// connection is dropped. The server's side of that request is closed
	// too, as a proxy that gives up on a stream does.
	cutAfter int
	cutClean bool
	// retryMs, with cutAfter, adds "retry: N" to the first forwarded event,
	// so that a client reconnects after N ms instead of its default
	// backoff (the server did not send one; the suite must stay fast).
	retryMs int
	// keepUpstream keeps reading the server's response after the client
	// went away (a buffering gateway): the server sees its stream complete.
	keepUpstream bool
	// rewrite replaces the response body the server sent (JSON responses).
	rewrite func(body []byte) []byte
}

// request is what a rule sees of an HTTP request.
type request struct {
	HTTPMethod  string
	RPCMethod   string // "" when the body is not a JSON-RPC request or notification
	ID          string // the raw JSON-RPC id, "" for notifications
	Tool        string // params.name of tools/call
	LastEventID string
	Session     string // Mcp-Session-Id
	Body        []byte
}

type rule func(r *request) *fault

// txn is one proxied HTTP transaction, as the client saw it.
type txn struct {
	n           int // order of arrival
	start, end  time.Time
	req         *request
	method, url string
	reqHeader   http.Header
	reqBody     []byte // nil: no body
	status      int    // 0: no status reached the client
	respHeader  http.Header
	respBody    bytes.Buffer
	sse         bool
	events      int    // events with data forwarded
	errText     string // why the transaction broke, as Chrome writes it (HAR _error)
	failure     string // wire failure kind, when no status was sent
	streamEnd   string // wire stream_end of an event stream
	injected    string // what the proxy did (tests assert on it)
	done        bool
}

type proxy struct {
	t        *testing.T
	upstream *url.URL
	rt       *http.Transport
	rule     rule
	srv      *httptest.Server

	mu      sync.Mutex
	txns    []*txn
	changed chan struct{} // closed and replaced on every change
	wg      sync.WaitGroup
}

func newProxy(t *testing.T, upstream string, r rule) *proxy {
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, upstream: u, rule: r, changed: make(chan struct{}),
		rt: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	p.srv = httptest.NewServer(p)
	return p
}

// URL is the MCP endpoint clients use.
func (p *proxy) URL() string { return p.srv.URL + p.upstream.Path }

// close waits for every transaction to end and stops the proxy.
func (p *proxy) close() {
	p.srv.Close()
	p.wg.Wait()
	p.rt.CloseIdleConnections()
}

func (p *proxy) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// waitFor blocks until a transaction satisfies ok (checked under the lock
// after every change), and returns it; after 20 s it fails the test and
// returns nil (it may run in a goroutine of the test's).
func (p *proxy) waitFor(what string, ok func(*txn) bool) *txn {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		p.mu.Lock()
		for _, x := range p.txns {
			if ok(x) {
				p.mu.Unlock()
				return x
			}
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			p.t.Errorf("proxy: waited 20s for %s", what)
			return nil
		}
	}
}

// snapshot returns the transactions in arrival order (all must be done).
func (p *proxy) snapshot() []*txn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*txn(nil), p.txns...)
}

func parseRequest(r *http.Request, body []byte) *request {
	q := &request{HTTPMethod: r.Method, LastEventID: r.Header.Get("Last-Event-ID"), Session: r.Header.Get("Mcp-Session-Id"), Body: body}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if len(body) > 0 && json.Unmarshal(body, &m) == nil {
		q.RPCMethod, q.ID = m.Method, string(m.ID)
		if m.Method == "tools/call" {
			q.Tool = m.Params.Name
		}
	}
	return q
}

var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Content-Length": true}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	x := &txn{start: time.Now(), method: r.Method, url: "http://" + r.Host + r.URL.RequestURI(), reqHeader: r.Header.Clone()}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			p.t.Errorf("proxy: reading a request body: %v", err)
		}
		x.reqBody = b
	}
	x.req = parseRequest(r, x.reqBody)
	p.mu.Lock()
	x.n = len(p.txns)
	p.txns = append(p.txns, x)
	p.notify()
	p.mu.Unlock()
	var f fault
	if p.rule != nil {
		if got := p.rule(x.req); got != nil {
			f = *got
		}
	}
	aborted := false
	defer func() {
		rec := recover()
		p.mu.Lock()
		if x.end.IsZero() {
			x.end = time.Now()
		}
		x.done = true
		p.notify()
		p.mu.Unlock()
		if rec != nil {
			panic(rec)
		}
		if aborted {
			panic(http.ErrAbortHandler)
		}
	}()
	aborted = p.serve(w, r, x, &f)
}

// serve handles one transaction; it reports whether the connection to the
// client must be dropped.
func (p *proxy) serve(w http.ResponseWriter, r *http.Request, x *txn, f *fault) (drop bool) {
	clientGone := func() {
		x.errText = "net::ERR_ABORTED"
		if x.status == 0 {
			x.failure = "client_abort"
		} else if x.sse {
			x.streamEnd = "client_closed"
		}
	}
	if f.hold != nil {
		x.injected = "held"
		select {
		case <-f.hold:
		case <-r.Context().Done():
			clientGone()
			return false
		}
	}
	if f.status != 0 {
		x.injected = fmt.Sprintf("status %d", f.status)
		for k, v := range f.header {
			w.Header().Set(k, v)
		}
		if !f.dropAfterStatus {
			p.endNow(x)
		}
		p.sendHeader(w, x, f.status)
		if f.dropAfterStatus {
			// The status line went out; the connection breaks before the body.
			x.injected += ", dropped after status"
			x.errText = "net::ERR_CONNECTION_RESET"
			return true
		}
		io.WriteString(w, f.body)
		x.respBody.WriteString(f.body)
		return false
	}

	ctx := r.Context()
	if f.keepUpstream {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancelUp := context.WithCancel(ctx)
	defer cancelUp()
	out, err := http.NewRequestWithContext(ctx, r.Method, p.upstream.Scheme+"://"+p.upstream.Host+r.URL.RequestURI(), bytes.NewReader(x.reqBody))
	if err != nil {
		p.t.Errorf("proxy: %v", err)
		return true
	}
	if x.reqBody == nil {
		out.Body = nil
	}
	for k, vs := range r.Header {
		if !hopByHop[k] {
			out.Header[k] = vs
		}
	}
	out.Host = p.upstream.Host // the servers' DNS-rebinding protection wants a loopback Host
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		if r.Context().Err() != nil {
			clientGone()
			return false
		}
		// The server could not be reached: a gateway answers 502.
		x.injected = "upstream failed"
		p.sendHeader(w, x, http.StatusBadGateway)
		return false
	}
	defer resp.Body.Close()
	if r.Context().Err() != nil {
		// The client went away while the server was still to answer (only
		// with keepUpstream does the proxy wait for it): read the server's
		// answer to its end, as a buffering gateway does, and drop it.
		clientGone()
		io.Copy(io.Discard, resp.Body)
		return false
	}
	for k, vs := range resp.Header {
		if !hopByHop[k] {
			w.Header()[k] = vs
		}
	}
	x.sse = strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
	if f.rewrite != nil && !x.sse {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			p.t.Errorf("proxy: reading a response to rewrite: %v", err)
		}
		body = f.rewrite(body)
		x.injected = "rewritten"
		p.endNow(x)
		p.sendHeader(w, x, resp.StatusCode)
		w.Write(body)
		x.respBody.Write(body)
		return false
	}
	if !x.sse && !f.dropAfterStatus {
		// A JSON (or empty) body is read whole, then sent with its status
		// in one go, the transaction's end taken just before: a client
		// that acts on the status alone (a 404, a 429) cannot be seen to
		// act before the transaction it reacts to has ended.
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			if r.Context().Err() != nil {
				clientGone()
				return false
			}
			x.errText = "net::ERR_CONNECTION_RESET"
			p.sendHeader(w, x, resp.StatusCode)
			return true
		}
		p.endNow(x)
		p.mu.Lock()
		x.respBody.Write(body)
		p.mu.Unlock()
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
		p.record(w, x, resp.StatusCode)
		return false
	}
	p.sendHeader(w, x, resp.StatusCode)
	if f.dropAfterStatus {
		// The server's whole answer is read (it finishes as if all went
		// well) and lost: the client gets the status line, then a reset.
		io.Copy(io.Discard, resp.Body)
		x.injected = "dropped after status"
		x.errText = "net::ERR_CONNECTION_RESET"
		if x.sse {
			x.streamEnd = "reset"
		}
		return true
	}
	if !x.sse {
		return false
	}
	// An event stream: forward it event by event.
	return p.stream(w, r, x, f, resp.Body, cancelUp, clientGone)
}

// sendHeader sends the status line and headers to the client at once.
func (p *proxy) sendHeader(w http.ResponseWriter, x *txn, status int) {
	p.record(w, x, status)
	w.WriteHeader(status)
	w.(http.Flusher).Flush()
}

// record notes the status and headers the client gets.
func (p *proxy) record(w http.ResponseWriter, x *txn, status int) {
	p.mu.Lock()
	x.status = status
	x.respHeader = w.Header().Clone()
	x.sse = x.sse || strings.HasPrefix(strings.ToLower(w.Header().Get("Content-Type")), "text/event-stream")
	p.notify()
	p.mu.Unlock()
}

// endNow takes the transaction's end time now, before its last bytes go out.
func (p *proxy) endNow(x *txn) {
	p.mu.Lock()
	x.end = time.Now()
	p.mu.Unlock()
}

func (p *proxy) stream(w http.ResponseWriter, r *http.Request, x *txn, f *fault, body io.Reader, cancelUp func(), clientGone func()) (drop bool) {
	buf := make([]byte, 32<<10)
	var pending []byte
	first := true
	for {
		n, err := body.Read(buf)
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.Index(pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			block := pending[:i+2]
			pending = pending[i+2:]
			if first && f.retryMs > 0 {
				block = append([]byte(fmt.Sprintf("retry: %d\n", f.retryMs)), block...)
			}
			first = false
			if r.Context().Err() != nil {
				clientGone()
				if f.keepUpstream {
					io.Copy(io.Discard, body)
				}
				return false
			}
			if _, werr := w.Write(block); werr != nil {
				clientGone()
				if f.keepUpstream {
					io.Copy(io.Discard, body)
				}
				return false
			}
			w.(http.Flusher).Flush()
			p.mu.Lock()
			x.respBody.Write(block)
			if bytes.Contains(block, []byte("data:")) {
				x.events++
			}
			p.notify()
			p.mu.Unlock()
			if f.cutAfter > 0 && x.events >= f.cutAfter {
				cancelUp() // the proxy gives up on the server's stream too
				if f.cutClean {
					x.injected = fmt.Sprintf("ended after %d events", x.events)
					x.streamEnd = "complete"
					return false
				}
				x.injected = fmt.Sprintf("cut after %d events", x.events)
				x.errText = "net::ERR_CONNECTION_RESET"
				x.streamEnd = "reset"
				return true
			}
		}
		if err != nil {
			if r.Context().Err() != nil && !f.keepUpstream {
				clientGone()
				return false
			}
			if len(pending) > 0 {
				w.Write(pending)
				x.respBody.Write(pending)
			}
			if errors.Is(err, io.EOF) {
				x.streamEnd = "complete"
				return false
			}
			x.errText = "net::ERR_CONNECTION_RESET"
			x.streamEnd = "reset"
			return true
		}
	}
}

// ---- what the proxy writes: HAR and a client-side wire log ----

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func harHeaders(h http.Header) []harHeader {
	out := []harHeader{}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, harHeader{Name: strings.ToLower(k), Value: v})
		}
	}
	return out
}

// writeHAR renders the transactions as Chrome DevTools exports them (HAR 1.2,
// entries in start order, bodies embedded, _error on the response of a
// transaction that broke).
func writeHAR(txns []*txn) ([]byte, error) {
	sorted := append([]*txn(nil), txns...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].start.Before(sorted[j].start) })
	entries := []map[string]any{}
	for _, x := range sorted {
		req := map[string]any{
			"method": x.method, "url": x.url, "httpVersion": "HTTP/1.1", "headers": harHeaders(x.reqHeader),
			"queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": len(x.reqBody),
		}
		if x.reqBody != nil {
			req["postData"] = map[string]any{"mimeType": x.reqHeader.Get("Content-Type"), "text": string(x.reqBody)}
		}
		resp := map[string]any{
			"status": x.status, "statusText": http.StatusText(x.status), "httpVersion": "HTTP/1.1", "cookies": []any{},
			"headers": harHeaders(x.respHeader), "redirectURL": "", "headersSize": -1, "bodySize": x.respBody.Len(),
			"_transferSize": x.respBody.Len(),
		}
		content := map[string]any{"size": x.respBody.Len(), "mimeType": "x-unknown"}
		if ct := x.respHeader.Get("Content-Type"); ct != "" {
			content["mimeType"] = ct
		}
		if x.status != 0 {
			content["text"] = x.respBody.String()
		} else {
			resp["statusText"] = ""
			resp["httpVersion"] = ""
		}
		resp["content"] = content
		if x.errText != "" {
			resp["_error"] = x.errText
		} else {
			resp["_error"] = nil
		}
		ms := float64(x.end.Sub(x.start).Microseconds()) / 1000
		entries = append(entries, map[string]any{
			"_resourceType":   "fetch",
			"startedDateTime": x.start.UTC().Format("2006-01-02T15:04:05.000Z"),
			"time":            ms,
			"request":         req,
			"response":        resp,
			"cache":           map[string]any{},
			"timings":         map[string]any{"blocked": -1, "dns": -1, "ssl": -1, "connect": -1, "send": 0, "wait": ms, "receive": 0},
		})
	}
	doc := map[string]any{"log": map[string]any{
		"version": "1.2",
		"creator": map[string]any{"name": "WebInspector", "version": "537.36"},
		"pages":   []any{},
		"entries": entries,
	}}
	return json.MarshalIndent(doc, "", "  ")
}
