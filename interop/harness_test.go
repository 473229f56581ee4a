package interop

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"

	"mcptrace/pipeline"
	"mcptrace/redact"
)

// capture says which logs a scenario writes: the client's view (by the
// proxy) as HAR or as a client-side wire log, and the server's wire log (by
// package wirelog), alone or together.
type capture string

const (
	harOnly     capture = "client HAR"
	wireOnly    capture = "client wire log"
	serverOnly  capture = "server wire log"
	harServer   capture = "client HAR + server wire log"
	wireServer  capture = "client wire log + server wire log"
	captureNone capture = ""
)

func (c capture) client() string {
	switch c {
	case harOnly, harServer:
		return "har"
	case wireOnly, wireServer:
		return "wire"
	}
	return ""
}

func (c capture) server() bool { return c == serverOnly || c == harServer || c == wireServer }

// harness is what a scenario's steps use.
type harness struct {
	t     *testing.T
	sc    *scenario
	be    *backend
	px    *proxy
	ctx   context.Context
	conns []client
}

// newClient starts a client instance of the scenario's client SDK through
// the proxy and connects it (the handshake of its era).
func (h *harness) connect() client {
	h.t.Helper()
	c := newClient(h.sc.client, h.sc.era, h.px.URL())
	if g, ok := c.(*goSDKClient); ok {
		g.auto, g.noGET = h.sc.autoVersion, h.sc.noStandaloneGET
	}
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if err := c.connect(ctx); err != nil {
		h.t.Fatalf("%s client: connect: %v", h.sc.client, err)
	}
	h.conns = append(h.conns, c)
	return c
}

// run executes one scenario: it starts the server and the proxy, runs the
// steps, closes everything and writes the captures into dir. It returns the
// rows the scenario expects.
func runScenario(t *testing.T, sc *scenario, dir string) []row {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	be := newBackend(t, sc.server, sc.serverCfg, sc.name)
	var r rule
	if sc.rule != nil {
		r = sc.rule()
	}
	px := newProxy(t, be.URL(), r)
	h := &harness{t: t, sc: sc, be: be, px: px, ctx: ctx}
	want := sc.steps(h)
	for _, c := range h.conns {
		c.close()
	}
	px.close()
	be.stop()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	txns := px.snapshot()
	if os.Getenv("INTEROP_DEBUG") != "" {
		for _, x := range txns {
			t.Logf("txn %d %s %s %q -> %d sse=%v err=%q injected=%q end=%s dur=%s", x.n, x.method, x.req.RPCMethod, x.req.Tool, x.status, x.sse, x.errText, x.injected, x.streamEnd, x.end.Sub(x.start))
		}
	}
	switch sc.capture.client() {
	case "har":
		b, err := writeHAR(txns)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "client.har"), b)
	case "wire":
		write(t, filepath.Join(dir, "client.ndjson"), writeClientWire(txns, sc.name+"-client", "interop-"+string(sc.client)+"-client"))
	}
	if sc.capture.server() {
		write(t, filepath.Join(dir, "server.ndjson"), be.serverLog())
	}
	return want
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---- ingest and read back ----

var testKey = func() *redact.Pseudonymizer {
	p, err := redact.NewPseudonymizer("k1", []byte("interop-suite-pseudonym-key-0001"))
	if err != nil {
		panic(err)
	}
	return p
}()

// ingestDir runs the pipeline over one scenario's captures (merging client
// and server views when both are there, as ingest does by default).
func ingestDir(t *testing.T, dir, out string) {
	t.Helper()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{dir}, OutDir: out, Pseudonyms: testKey, Workers: 1, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("ingest %s: %v", dir, err)
	}
	if sum.Quarantined != 0 || !sum.Balanced() {
		t.Fatalf("ingest %s: %d records quarantined (%v), balanced %v", dir, sum.Quarantined, sum.ByReason, sum.Balanced())
	}
}

// columns read back for every row, as DuckDB renders them
// (CAST(col AS VARCHAR), "null" for null).
var columns = []string{
	"method", "tool_name", "outcome", "layer", "sides", "format", "protocol_version", "post_count", "http_statuses",
	"error_code", "retry_origin", "retry_basis", "cancelled", "late_response", "session_expired", "reinitialized",
	"transport_failure", "stream_end", "response_where", "sse_events", "failed_hop", "client_post_count", "server_post_count",
	"server_outcome", "server_http_statuses", "retry_unsafe", "retry_after_s", "retry_after_respected", "is_error", "session_id",
	"error_kind", "suspect_hidden_error", "session_stuck", "resume_problem", "duplicate_side_effect", "id_conflict",
	"jsonrpc_id", "source", "source_line", "started_at",
}

type got map[string]string

// readRows reads every exchange of a dataset, in the order the requests were
// sent (started_at, then the line in the log).
func readRows(t *testing.T, db *sql.DB, out string) []got {
	t.Helper()
	sel := make([]string, len(columns))
	for i, c := range columns {
		sel[i] = fmt.Sprintf("coalesce(CAST(%s AS VARCHAR), 'null')", c)
	}
	q := fmt.Sprintf("SELECT %s FROM read_parquet('%s', union_by_name = true) ORDER BY started_at, source, source_line",
		strings.Join(sel, ", "), filepath.Join(out, "exchanges", "*", "*.parquet"))
	rs, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var rows []got
	for rs.Next() {
		vals := make([]string, len(columns))
		ptrs := make([]any, len(columns))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		g := got{}
		for i, c := range columns {
			g[c] = vals[i]
		}
		rows = append(rows, g)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func (g got) String() string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if g[k] == "null" || g[k] == "false" {
			continue
		}
		fmt.Fprintf(&b, "%s=%s ", k, g[k])
	}
	return b.String()
}

// ---- step helpers: run an SDK call and check what it returned ----

const callTimeout = 10 * time.Second

func (h *harness) call(cl client, tool string, args map[string]any) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, callTimeout)
	defer cancel()
	return cl.call(ctx, tool, args, tool == "progress")
}

func (h *harness) listTools(cl client) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, callTimeout)
	defer cancel()
	if err := cl.listTools(ctx); err != nil {
		h.t.Fatalf("tools/list: %v", err)
	}
}

// ok: the SDK returned a result without isError.
func (h *harness) ok(r result, what string) {
	h.t.Helper()
	if r.err != nil || r.isError {
		h.t.Errorf("%s: the SDK returned %v, want a successful result", what, r)
	}
}

// toolError: the SDK returned a result with isError set, whose text has sub.
func (h *harness) toolError(r result, sub, what string) {
	h.t.Helper()
	if r.err != nil || !r.isError || !strings.Contains(r.text, sub) {
		h.t.Errorf("%s: the SDK returned %v, want isError with %q", what, r, sub)
	}
}

// rpcError: the SDK returned a JSON-RPC error with this code.
func (h *harness) rpcError(r result, code int64, what string) {
	h.t.Helper()
	if got, ok := rpcCode(r.err); !ok || got != code {
		h.t.Errorf("%s: the SDK returned %v, want JSON-RPC error %d", what, r, code)
	}
}

// failed: the SDK returned an error (not a result) for which ok holds.
func (h *harness) failed(r result, ok func(error) bool, want, what string) {
	h.t.Helper()
	if r.err == nil || !ok(r.err) {
		h.t.Errorf("%s: the SDK returned %v, want %s", what, r, want)
	}
}

func errText(sub string) func(error) bool {
	return func(err error) bool { return strings.Contains(err.Error(), sub) }
}

// handshake is the rows one connect produces: server/discover in 2026-07-28,
// initialize before it (notifications/initialized is not an exchange).
func (h *harness) handshake() []row {
	if h.sc.era == modern {
		return []row{{method: "server/discover", outcome: "SUCCESS"}}
	}
	return []row{{method: "initialize", outcome: "SUCCESS"}}
}
