package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptrace/wirelog"
)

// The two SDKs behind one small interface each, so that a scenario names its
// client and server and the same steps run against either.

type sdk string

const (
	goSDK sdk = "go-sdk"
	mcpGo sdk = "mcp-go"
)

// era is the protocol generation a scenario runs in: legacy is the newest
// session-based version (2025-11-25, initialize handshake, Mcp-Session-Id),
// modern is 2026-07-28 (no handshake, no sessions, server/discover).
type era string

const (
	legacy era = "2025-11-25"
	modern era = "2026-07-28"
)

// ---- servers ----

// serverConfig says how a scenario's server is set up.
type serverConfig struct {
	stateless   bool // go-sdk StreamableHTTPOptions.Stateless; mcp-go stateless session manager
	eventStore  bool // resumable streams (an in-memory event store)
	jsonResults bool // go-sdk JSONResponse: application/json instead of event streams
}

// backend is an SDK server behind the wirelog middleware on a loopback
// listener.
type backend struct {
	t       *testing.T
	kind    sdk
	srv     *httptest.Server
	logMu   sync.Mutex
	log     bytes.Buffer
	logged  chan struct{} // closed and replaced on every line
	release chan struct{} // closing it lets the "slow" tool finish

	// charges counts the runs of the non-idempotent "charge" tool.
	charges atomic.Int32
	// cancelled counts tool handlers that saw their context end.
	cancelled atomic.Int32
	// slowStarted is signalled when the "slow" tool starts running.
	slowStarted chan struct{}
	// proceed, once closed, lets a "progress" call with wait set answer
	// after its progress events.
	proceed     chan struct{}
	proceedOnce sync.Once

	// gone receives the body of every request whose client went away while
	// it was handled (see watch).
	gone chan string

	// forget drops every session the server knows (expired sessions).
	forget func()
}

// logWriter collects the server's wire log and signals every line.
type logWriter struct{ b *backend }

func (w logWriter) Write(p []byte) (int, error) {
	w.b.logMu.Lock()
	defer w.b.logMu.Unlock()
	n, err := w.b.log.Write(p)
	close(w.b.logged)
	w.b.logged = make(chan struct{})
	return n, err
}

// waitLogged blocks until a line of the server's wire log contains every
// one of subs (the server's record of a transaction is written when the
// server is done with it).
func (b *backend) waitLogged(what string, subs ...string) bool {
	if b.loggedWithin(20*time.Second, subs...) {
		return true
	}
	b.t.Errorf("server log: waited 20s for %s", what)
	return false
}

// loggedWithin waits up to d for a server-log line holding every one of
// subs, and reports whether one came; unlike waitLogged, not finding one is
// no error.
func (b *backend) loggedWithin(d time.Duration, subs ...string) bool {
	deadline := time.After(d)
	for {
		b.logMu.Lock()
		for _, line := range bytes.Split(b.log.Bytes(), []byte("\n")) {
			all := len(line) > 0
			for _, s := range subs {
				all = all && bytes.Contains(line, []byte(s))
			}
			if all {
				b.logMu.Unlock()
				return true
			}
		}
		ch := b.logged
		b.logMu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

func (b *backend) serverLog() []byte {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	return append([]byte(nil), b.log.Bytes()...)
}

const (
	hiddenFailureText = "Error: upstream inventory service returned HTTP 502 Bad Gateway"
	toolFailureText   = "Error: quota exceeded for project acme-42"
)

func newBackend(t *testing.T, kind sdk, cfg serverConfig, scenario string) *backend {
	b := &backend{t: t, kind: kind, release: make(chan struct{}), slowStarted: make(chan struct{}, 16), proceed: make(chan struct{}), logged: make(chan struct{}), gone: make(chan string, 64)}
	var h http.Handler
	switch kind {
	case goSDK:
		h = b.goSDKServer(cfg)
	case mcpGo:
		h = b.mcpGoServer(cfg)
	}
	b.srv = httptest.NewUnstartedServer(wirelog.Handler(b.watch(h), logWriter{b}, &wirelog.Options{
		Server:   &wirelog.Implementation{Name: "interop-" + string(kind) + "-server", Version: sdkVersion[kind]},
		Scenario: scenario,
		OnError:  func(err error) { t.Errorf("server wire log: %v", err) },
	}))
	b.srv.Start()
	return b
}

var sdkVersion = map[sdk]string{goSDK: "1.8.0", mcpGo: "1.2.1"}

// URL is the server's MCP endpoint.
func (b *backend) URL() string { return b.srv.URL + "/mcp" }

// watch signals on gone, with the request's body, every request whose
// client went away (its context ended) while the SDK's handler still ran:
// the moment the server knows its client is gone.
func (b *backend) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		finished := make(chan struct{})
		go func() {
			select {
			case <-r.Context().Done():
				select {
				case b.gone <- string(body):
				default:
				}
			case <-finished:
			}
		}()
		next.ServeHTTP(w, r)
		close(finished)
	})
}

// waitGone blocks until the server has seen the client of a request whose
// body contains sub go away.
func (b *backend) waitGone(sub string) {
	b.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case body := <-b.gone:
			if strings.Contains(body, sub) {
				return
			}
		case <-deadline:
			b.t.Errorf("the server never saw the client of %s go away", sub)
			return
		}
	}
}

// letProceed lets waiting "progress" calls answer.
func (b *backend) letProceed() { b.proceedOnce.Do(func() { close(b.proceed) }) }

// stop lets every tool finish and waits for every handler to return.
func (b *backend) stop() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
	b.letProceed()
	b.srv.Close()
}

type echoIn struct {
	Text string `json:"text,omitempty"`
}

type countIn struct {
	Count int `json:"count" jsonschema:"how many items"`
}

type progressIn struct {
	Steps int  `json:"steps,omitempty"`
	Wait  bool `json:"wait,omitempty"` // answer only once the harness lets it (letProceed)
}

func (b *backend) goSDKServer(cfg serverConfig) http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "interop-go-sdk-server", Version: "1.8.0"}, nil)
	yes := true
	no := false
	gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "echoes its text", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "fail", Description: "always fails", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			return nil, nil, errors.New(toolFailureText) // the SDK turns it into isError: true
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "hidden", Description: "fails but says it succeeded", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: hiddenFailureText}}}, nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "count", Description: "takes an integer", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in countIn) (*gosdk.CallToolResult, any, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprint(in.Count)}}}, nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "charge", Description: "charges a card: neither read-only nor idempotent",
		Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: &yes, OpenWorldHint: &no}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in countIn) (*gosdk.CallToolResult, any, error) {
			n := b.charges.Add(1)
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf("charge %d done", n)}}}, nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "slow", Description: "waits until released or cancelled", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			b.slowStarted <- struct{}{}
			select {
			case <-b.release:
				return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "finished"}}}, nil, nil
			case <-ctx.Done():
				b.cancelled.Add(1)
				// Answer once the server's log holds the cancel's record, as a
				// server that takes a moment to wind down does: the order of
				// the two records is then the same in every run.
				b.loggedWithin(2*time.Second, "notifications/cancelled")
				return nil, nil, ctx.Err()
			}
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "progress", Description: "reports progress, then answers", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in progressIn) (*gosdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if tok != nil {
					if err := req.Session.NotifyProgress(ctx, &gosdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps)}); err != nil {
						return nil, nil, err
					}
				}
			}
			if in.Wait {
				<-b.proceed // the session's context outlives a cut stream: wait for the harness
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf("%d steps", in.Steps)}}}, nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: "poll", Description: "closes its event stream first and answers on the resumed one (SEP-1699 polling)", Annotations: &gosdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(gosdk.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "polled"}}}, nil, nil
		})
	opts := &gosdk.StreamableHTTPOptions{Stateless: cfg.stateless, JSONResponse: cfg.jsonResults}
	if cfg.eventStore {
		opts.EventStore = gosdk.NewMemoryEventStore(nil)
	}
	b.forget = func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, opts)
}

// forgetfulManager is mcp-go's stateful session manager that can forget
// every session it issued (the server lost them: a restart, an expiry).
type forgetfulManager struct {
	mcpgoserver.InsecureStatefulSessionIdManager
	mu  sync.Mutex
	ids []string
}

func (m *forgetfulManager) Generate() string {
	id := m.InsecureStatefulSessionIdManager.Generate()
	m.mu.Lock()
	m.ids = append(m.ids, id)
	m.mu.Unlock()
	return id
}

func (m *forgetfulManager) forgetAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.ids {
		m.Terminate(id)
	}
}

func (b *backend) mcpGoServer(cfg serverConfig) http.Handler {
	s := mcpgoserver.NewMCPServer("interop-mcp-go-server", "1.2.1", mcpgoserver.WithToolCapabilities(false))
	text := func(s string) *mcpgo.CallToolResult { return mcpgo.NewToolResultText(s) }
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("echoes its text"), mcpgo.WithString("text"),
		mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithIdempotentHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return text("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithDescription("always fails"), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError(toolFailureText), nil
		})
	s.AddTool(mcpgo.NewTool("hidden", mcpgo.WithDescription("fails but says it succeeded"), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return text(hiddenFailureText), nil
		})
	s.AddTool(mcpgo.NewTool("count", mcpgo.WithDescription("takes an integer"), mcpgo.WithNumber("count", mcpgo.Required()), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			n, err := req.RequireFloat("count")
			if err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			return text(fmt.Sprint(int(n))), nil
		})
	s.AddTool(mcpgo.NewTool("charge", mcpgo.WithDescription("charges a card: neither read-only nor idempotent"), mcpgo.WithNumber("count"),
		mcpgo.WithReadOnlyHintAnnotation(false), mcpgo.WithIdempotentHintAnnotation(false), mcpgo.WithDestructiveHintAnnotation(true), mcpgo.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			n := b.charges.Add(1)
			return text(fmt.Sprintf("charge %d done", n)), nil
		})
	s.AddTool(mcpgo.NewTool("slow", mcpgo.WithDescription("waits until released or cancelled"), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			b.slowStarted <- struct{}{}
			select {
			case <-b.release:
				return text("finished"), nil
			case <-ctx.Done():
				b.cancelled.Add(1)
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcpgo.NewTool("progress", mcpgo.WithDescription("reports progress, then answers"), mcpgo.WithNumber("steps"), mcpgo.WithBoolean("wait"), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			steps := int(req.GetFloat("steps", 0))
			var tok any
			if req.Params.Meta != nil {
				tok = req.Params.Meta.ProgressToken
			}
			srv := mcpgoserver.ServerFromContext(ctx)
			for i := 1; i <= steps; i++ {
				if tok != nil {
					if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": tok, "progress": i, "total": steps}); err != nil {
						return nil, err
					}
				}
			}
			if req.GetBool("wait", false) {
				// mcp-go runs the tool in the request's context: a client
				// gone is as good as the harness's go-ahead.
				select {
				case <-b.proceed:
				case <-ctx.Done():
				}
			}
			return text(fmt.Sprintf("%d steps", steps)), nil
		})
	var opts []mcpgoserver.StreamableHTTPOption
	if cfg.stateless {
		opts = append(opts, mcpgoserver.WithStateLess(true))
		b.forget = func() {}
	} else {
		m := &forgetfulManager{}
		opts = append(opts, mcpgoserver.WithSessionIdManager(m))
		b.forget = m.forgetAll
	}
	if cfg.eventStore {
		opts = append(opts, mcpgoserver.WithEventStore(mcpgoserver.NewInMemoryEventStore()))
	}
	return mcpgoserver.NewStreamableHTTPServer(s, opts...)
}

// ---- clients ----

// result is what an SDK call returned, reduced to what labels come from.
type result struct {
	isError bool
	text    string
	err     error
}

// client is one SDK client instance (one connection, one session).
type client interface {
	connect(ctx context.Context) error
	listTools(ctx context.Context) error
	listPrompts(ctx context.Context) error
	call(ctx context.Context, tool string, args map[string]any, progress bool) result
	version() string // the protocol version negotiated
	close() error
}

func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
}

func newClient(kind sdk, e era, url string) client {
	switch kind {
	case goSDK:
		return &goSDKClient{era: e, url: url}
	default:
		return &mcpGoClient{era: e, url: url}
	}
}

type goSDKClient struct {
	era  era
	url  string
	hc   *http.Client
	sess *gosdk.ClientSession
	// auto lets the SDK choose its version (2026-07-28 through
	// server/discover, falling back to initialize) instead of the era's.
	auto bool
	// noGET sets DisableStandaloneSSE: no standalone GET stream.
	noGET bool
}

func (c *goSDKClient) connect(ctx context.Context) error {
	c.hc = httpClient()
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "interop-go-sdk-client", Version: "1.8.0"}, nil)
	tr := &gosdk.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.hc, MaxRetries: 2, DisableStandaloneSSE: c.noGET}
	opts := &gosdk.ClientSessionOptions{ProtocolVersion: string(c.era)}
	if c.auto {
		opts = nil
	}
	s, err := cl.Connect(ctx, tr, opts)
	if err != nil {
		return err
	}
	c.sess = s
	return nil
}

func (c *goSDKClient) listTools(ctx context.Context) error {
	_, err := c.sess.ListTools(ctx, nil)
	return err
}

func (c *goSDKClient) listPrompts(ctx context.Context) error {
	_, err := c.sess.ListPrompts(ctx, nil)
	return err
}

func (c *goSDKClient) call(ctx context.Context, tool string, args map[string]any, progress bool) result {
	p := &gosdk.CallToolParams{Name: tool, Arguments: args}
	if progress {
		p.SetProgressToken("progress-1")
	}
	res, err := c.sess.CallTool(ctx, p)
	if err != nil {
		return result{err: err}
	}
	return result{isError: res.IsError, text: contentText(res.Content)}
}

func contentText(cs []gosdk.Content) string {
	var b strings.Builder
	for _, c := range cs {
		if t, ok := c.(*gosdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func (c *goSDKClient) version() string {
	if r := c.sess.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

func (c *goSDKClient) close() error {
	if c.sess == nil {
		return nil
	}
	err := c.sess.Close()
	c.hc.CloseIdleConnections()
	return err
}

type mcpGoClient struct {
	era era
	url string
	hc  *http.Client
	c   *mcpgoclient.Client
}

func (c *mcpGoClient) connect(ctx context.Context) error {
	c.hc = httpClient()
	tr, err := mcpgotransport.NewStreamableHTTP(c.url, mcpgotransport.WithHTTPBasicClient(c.hc),
		mcpgotransport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	var opts []mcpgoclient.ClientOption
	if c.era == legacy {
		opts = append(opts, mcpgoclient.WithProtocolVersion(string(legacy)))
	}
	c.c = mcpgoclient.NewClient(tr, opts...)
	if err := c.c.Start(ctx); err != nil {
		return err
	}
	_, err = c.c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "interop-mcp-go-client", Version: "1.2.1"},
	}})
	return err
}

// reinitialize runs the handshake again on the same client (a new session
// after the old one ended).
func (c *mcpGoClient) reinitialize(ctx context.Context) error {
	_, err := c.c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "interop-mcp-go-client", Version: "1.2.1"},
	}})
	return err
}

func (c *mcpGoClient) listTools(ctx context.Context) error {
	_, err := c.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	return err
}

func (c *mcpGoClient) listPrompts(ctx context.Context) error {
	_, err := c.c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
	return err
}

func (c *mcpGoClient) call(ctx context.Context, tool string, args map[string]any, progress bool) result {
	req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: tool, Arguments: args}}
	if progress {
		req.Params.Meta = &mcpgo.Meta{ProgressToken: "progress-1"}
	}
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return result{err: err}
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(mcpgo.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return result{isError: res.IsError, text: b.String()}
}

func (c *mcpGoClient) version() string { return c.c.ProtocolVersion() }

func (c *mcpGoClient) close() error {
	if c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.hc.CloseIdleConnections()
	return err
}

// ---- what an SDK returned ----

var (
	gosdkErrSessionMissing    = gosdk.ErrSessionMissing
	mcpgoErrSessionTerminated = mcpgotransport.ErrSessionTerminated
)

// rpcCode is the JSON-RPC error code an SDK call returned, if it returned one.
func rpcCode(err error) (int64, bool) {
	var ge *jsonrpc.Error
	if errors.As(err, &ge) {
		return ge.Code, true
	}
	// mcp-go turns a JSON-RPC error into one of its sentinel errors.
	for code, sentinel := range map[int64]error{
		mcpgo.PARSE_ERROR: mcpgo.ErrParseError, mcpgo.INVALID_REQUEST: mcpgo.ErrInvalidRequest,
		mcpgo.METHOD_NOT_FOUND: mcpgo.ErrMethodNotFound, mcpgo.INVALID_PARAMS: mcpgo.ErrInvalidParams,
		mcpgo.INTERNAL_ERROR: mcpgo.ErrInternalError, mcpgo.RESOURCE_NOT_FOUND: mcpgo.ErrResourceNotFound,
	} {
		if errors.Is(err, sentinel) {
			return code, true
		}
	}
	return 0, false
}

// describe renders an SDK result for failure messages.
func (r result) String() string {
	if r.err != nil {
		code, ok := rpcCode(r.err)
		if ok {
			return fmt.Sprintf("error %T code %d: %v", r.err, code, r.err)
		}
		return fmt.Sprintf("error %T: %v", r.err, r.err)
	}
	return fmt.Sprintf("isError=%v %q", r.isError, r.text)
}
