// Command gen writes the sample wire logs under samples/ and the tables
// between the markers in samples/README.md.
//
//	go run ./samples/internal/gen
//
// Every exchange is declared next to the traffic that makes it, with its
// expected result stated by hand (never computed by package classify). The
// output is deterministic: run it twice and nothing changes.
//
// The generator checks itself before writing: every record must marshal to a
// line that carries the wire marker, every expectation must point at a line
// that carries a request with that method and id, and the notification counts
// stated by hand must equal a plain tally of the notifications written.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"mcptrace/samples/internal/gentab"
	"mcptrace/schema"
)

func main() {
	root, err := gentab.Dir()
	if err != nil {
		gentab.Fail(err)
	}
	s := &samples{}
	seed(s)
	cakewalk(s)
	rules(s)
	hostile(s)
	if err := s.check(); err != nil {
		gentab.Fail(err)
	}
	if err := s.write(root); err != nil {
		gentab.Fail(err)
	}
}

// ---------------------------------------------------------------------------
// Files, expectations, output.

const (
	client = string(schema.SideClient)
	server = string(schema.SideServer)
)

// sampleFile is one .ndjson file being built.
type sampleFile struct {
	name  string   // relative to samples/
	lines []string // without the newline
	// notes is the hand-stated count of notifications per method in the file.
	notes map[string]int
	// bad lists the lines that must be quarantined.
	bad []quarantined
}

type quarantined struct {
	line   int
	reason string
	what   string
}

// exchange is one row of the expectations table.
type exchange struct {
	file   string
	line   int
	side   string
	method string
	id     string // JSON text of the id
	want   want
}

// want is an expected result, stated by hand.
type want struct {
	outcome  string
	posts    int
	statuses []int
	origin   string // retry_origin; "" is written as none
}

type samples struct {
	files     []*sampleFile
	exchanges []exchange
}

func (s *samples) file(name string, notes map[string]int) *sampleFile {
	f := &sampleFile{name: name, notes: notes}
	s.files = append(s.files, f)
	return f
}

// expect declares one exchange: the request first carried by line of f.
func (s *samples) expect(f *sampleFile, side string, line int, method, id string, w want) {
	s.exchanges = append(s.exchanges, exchange{file: f.name, line: line, side: side, method: method, id: id, want: w})
}

// add appends one wire record and returns its 1-based line number.
func (f *sampleFile) add(r schema.WireRecord) int {
	r.Format = schema.WireFormat
	return f.raw(js(r))
}

// raw appends a line as is (hostile input) and returns its line number.
func (f *sampleFile) raw(line string) int {
	f.lines = append(f.lines, line)
	return len(f.lines)
}

func (s *samples) write(root string) error {
	for _, f := range s.files {
		path := filepath.Join(root, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, gentab.NDJSON(f.lines), 0o644); err != nil {
			return err
		}
	}
	return gentab.FillREADME(filepath.Join(root, "README.md"),
		gentab.Block{Name: "expectations", Table: s.expectationsTable()},
		gentab.Block{Name: "notifications", Table: s.notificationsTable()},
		gentab.Block{Name: "quarantine", Table: s.quarantineTable()})
}

func (s *samples) expectationsTable() string {
	order := map[string]int{}
	for i, f := range s.files {
		order[f.name] = i
	}
	rows := append([]exchange(nil), s.exchanges...)
	sort.SliceStable(rows, func(i, j int) bool {
		if a, b := order[rows[i].file], order[rows[j].file]; a != b {
			return a < b
		}
		return rows[i].line < rows[j].line
	})
	table := make([]gentab.Expectation, len(rows))
	for i, e := range rows {
		table[i] = gentab.Expectation{File: e.file, Line: e.line, Side: e.side, Method: e.method, ID: e.id,
			Outcome: e.want.outcome, Layer: gentab.Layer(e.want.outcome), Posts: e.want.posts,
			Statuses: gentab.Statuses(e.want.statuses), Origin: e.want.origin}
	}
	return gentab.ExpectationsTable(table)
}

func (s *samples) notificationsTable() string {
	var b strings.Builder
	b.WriteString("| file | method | count |\n| --- | --- | --- |\n")
	for _, f := range s.files {
		if len(f.notes) == 0 {
			fmt.Fprintf(&b, "| %s | (none) | 0 |\n", f.name)
			continue
		}
		methods := make([]string, 0, len(f.notes))
		for m := range f.notes {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			fmt.Fprintf(&b, "| %s | %s | %d |\n", f.name, m, f.notes[m])
		}
	}
	return b.String()
}

func (s *samples) quarantineTable() string {
	var b strings.Builder
	b.WriteString("| file | line | reason | what the line is |\n| --- | --- | --- | --- |\n")
	for _, f := range s.files {
		for _, q := range f.bad {
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", f.name, q.line, q.reason, q.what)
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Self-checks. They read back what was written; they judge nothing.

func (s *samples) check() error {
	byName := map[string]*sampleFile{}
	for _, f := range s.files {
		byName[f.name] = f
		bad := map[int]bool{}
		for _, q := range f.bad {
			bad[q.line] = true
		}
		tally := map[string]int{}
		for i, l := range f.lines {
			if bad[i+1] || l == "" {
				continue
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				return fmt.Errorf("%s:%d: %v", f.name, i+1, err)
			}
			if rec["mcptrace"] != schema.WireFormat {
				return fmt.Errorf("%s:%d: no wire marker", f.name, i+1)
			}
			for _, m := range messages(l) {
				if id, ok := m["id"]; (!ok || id == nil) && m["method"] != nil {
					tally[m["method"].(string)]++
				}
			}
		}
		if fmt.Sprint(tally) != fmt.Sprint(nonNil(f.notes)) {
			return fmt.Errorf("%s: notifications stated %v, written %v", f.name, f.notes, tally)
		}
	}
	for _, e := range s.exchanges {
		f := byName[e.file]
		if e.line < 1 || e.line > len(f.lines) {
			return fmt.Errorf("%s:%d: no such line", e.file, e.line)
		}
		if gentab.Layer(e.want.outcome) == "" {
			return fmt.Errorf("%s:%d: unknown outcome %s", e.file, e.line, e.want.outcome)
		}
		found := false
		for _, m := range requestSide(f.lines[e.line-1]) {
			if m["method"] == e.method && m["id"] != nil && js(m["id"]) == e.id {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s:%d: no %s request with id %s", e.file, e.line, e.method, e.id)
		}
		if e.want.posts != len(e.want.statuses) {
			return fmt.Errorf("%s:%d: post_count %d but %d statuses", e.file, e.line, e.want.posts, len(e.want.statuses))
		}
	}
	return nil
}

func nonNil(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// requestSide returns the JSON-RPC messages of a record's request body, or of
// a client-to-server stdio frame.
func requestSide(line string) []map[string]any {
	var rec schema.WireRecord
	if json.Unmarshal([]byte(line), &rec) != nil {
		return nil
	}
	switch {
	case rec.HTTP != nil && rec.HTTP.Request.Body != nil:
		return decodeJSON(*rec.HTTP.Request.Body)
	case rec.Stdio != nil && rec.Stdio.Direction == schema.DirClientToServer:
		return decodeJSON(rec.Stdio.Line)
	}
	return nil
}

// messages returns every JSON-RPC message a record carries: request body,
// response body (or the data of each SSE event), stdio frame.
func messages(line string) []map[string]any {
	var rec schema.WireRecord
	if json.Unmarshal([]byte(line), &rec) != nil {
		return nil
	}
	var out []map[string]any
	if rec.Stdio != nil && rec.Stdio.Direction != schema.DirStderr {
		out = append(out, decodeJSON(rec.Stdio.Line)...)
	}
	if rec.HTTP == nil {
		return out
	}
	if b := rec.HTTP.Request.Body; b != nil {
		out = append(out, decodeJSON(*b)...)
	}
	r := rec.HTTP.Response
	if r == nil || r.Body == nil {
		return out
	}
	if r.ContentType != "text/event-stream" {
		return append(out, decodeJSON(*r.Body)...)
	}
	for _, l := range strings.Split(*r.Body, "\n") {
		if data, ok := strings.CutPrefix(l, "data: "); ok {
			out = append(out, decodeJSON(data)...)
		}
	}
	return out
}

// decodeJSON returns the object, or the objects of an array; nothing for
// anything else.
func decodeJSON(text string) []map[string]any {
	var one map[string]any
	if json.Unmarshal([]byte(text), &one) == nil {
		return []map[string]any{one}
	}
	var many []map[string]any
	if json.Unmarshal([]byte(text), &many) == nil {
		return many
	}
	return nil
}

// ---------------------------------------------------------------------------
// JSON building: objects keep the key order they are written in, as real
// SDKs' output does.

// obj builds a JSON object from key, value pairs, arr a JSON array, js
// marshals compactly without HTML escaping (package gentab).
var (
	obj = gentab.Obj
	arr = gentab.Arr
	js  = gentab.JS
)

func ptr(s string) *string { return &s }

// Messages.

func request(id any, method string, params json.RawMessage) json.RawMessage {
	if params == nil {
		return obj("jsonrpc", "2.0", "id", id, "method", method)
	}
	return obj("jsonrpc", "2.0", "id", id, "method", method, "params", params)
}

func notification(method string, params json.RawMessage) json.RawMessage {
	if params == nil {
		return obj("jsonrpc", "2.0", "method", method)
	}
	return obj("jsonrpc", "2.0", "method", method, "params", params)
}

func result(id any, res json.RawMessage) json.RawMessage {
	return obj("jsonrpc", "2.0", "id", id, "result", res)
}

func rpcError(id any, code any, message string) json.RawMessage {
	return obj("jsonrpc", "2.0", "id", id, "error", obj("code", code, "message", message))
}

// text is a content array of one text block.
func text(s string) json.RawMessage { return arr(obj("type", "text", "text", s)) }

// sse renders messages as a text/event-stream body.
func sse(msgs ...json.RawMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("event: message\ndata: ")
		b.Write(m)
		b.WriteString("\n\n")
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Traffic: one conversation seen by a client log and, optionally, a server
// log.

var stamp = gentab.Stamp

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// resp is what came back for one HTTP request.
type resp struct {
	status    int
	ctype     string         // Content-Type; "" when the response had none
	headers   map[string]any // other response headers, as the server wrote them
	body      *string        // nil: not recorded
	streamEnd string
	failure   *schema.WireFailure
}

type conv struct {
	s        *samples
	cf, sf   *sampleFile       // sf nil: only a client log
	tmpl     schema.WireRecord // fields both sides share
	cconn    string            // client-side connection
	sconn    string            // server-side connection
	scenario string            // server side only
	// lowerServer: the server logged header names in lower case (Node);
	// otherwise as written here (Kestrel).
	lowerServer bool
	now         time.Time
}

// txn is one HTTP transaction.
type txn struct {
	method  string // HTTP method; POST when empty
	url     string
	headers map[string]any // request headers, as the client wrote them
	body    string         // request body; "" for none
	resp    resp
	dur     time.Duration // from sending the request to the end of the response
	trigger string        // client side only
	at      time.Time     // start; the conversation clock when zero
	session string        // session_id of the record
}

// do writes the transaction to the client log and the server log, and
// returns the line numbers (0 for a log that does not hold it).
func (c *conv) do(t txn) (cl, sl int) {
	start := t.at
	if start.IsZero() {
		start = c.now
	}
	end := start.Add(t.dur)
	if t.at.IsZero() {
		c.now = end.Add(ms(4))
	}
	method := t.method
	if method == "" {
		method = "POST"
	}
	var reqBody *string
	if t.body != "" {
		reqBody = ptr(t.body)
	}

	rec := c.tmpl
	rec.Time, rec.EndTime = stamp(start), stamp(end)
	rec.Side = schema.SideClient
	rec.Connection = c.cconn
	rec.SessionID = t.session
	rec.Trigger = t.trigger
	rec.HTTP = &schema.WireHTTP{Request: schema.WireRequest{Method: method, URL: t.url, Headers: headerMap(t.headers, true), Body: reqBody}}
	if t.resp.failure != nil {
		rec.HTTP.Failure = t.resp.failure
	} else {
		rec.HTTP.Response = wireResponse(t.resp, true)
	}
	cl = c.cf.add(rec)

	if c.sf == nil || t.resp.failure != nil {
		return cl, 0
	}
	srv := c.tmpl
	srv.Time, srv.EndTime = stamp(start.Add(ms(1))), stamp(end.Add(-ms(1)))
	srv.Side = schema.SideServer
	srv.Connection = c.sconn
	srv.SessionID = t.session
	srv.Scenario = c.scenario
	h := map[string]any{"Host": hostOf(t.url)}
	if t.body != "" {
		h["Content-Length"] = strconv.Itoa(len(t.body))
	}
	for k, v := range t.headers {
		h[k] = v
	}
	srv.HTTP = &schema.WireHTTP{
		Request:  schema.WireRequest{Method: method, URL: t.url, Headers: headerMap(h, c.lowerServer), Body: reqBody},
		Response: wireResponse(t.resp, c.lowerServer),
	}
	return cl, c.sf.add(srv)
}

// wireResponse renders r; lower: header names in lower case.
func wireResponse(r resp, lower bool) *schema.WireResponse {
	h := map[string]any{}
	for k, v := range r.headers {
		h[k] = v
	}
	if r.ctype != "" {
		h["Content-Type"] = r.ctype
	}
	return &schema.WireResponse{Status: r.status, Headers: headerMap(h, lower), ContentType: r.ctype, Body: r.body, StreamEnd: r.streamEnd}
}

func headerMap(h map[string]any, lower bool) map[string]any {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]any, len(h))
	for k, v := range h {
		if lower {
			k = strings.ToLower(k)
		}
		out[k] = v
	}
	return out
}

func hostOf(url string) string {
	rest := url[strings.Index(url, "//")+2:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// expect declares the same expected result on both sides.
func (c *conv) expect(cl, sl int, method, id string, w want) {
	if cl > 0 {
		c.s.expect(c.cf, client, cl, method, id, w)
	}
	if sl > 0 {
		c.s.expect(c.sf, server, sl, method, id, w)
	}
}

// frame writes one stdio frame to the client log.
func (c *conv) frame(dir, line string, after time.Duration) int {
	c.now = c.now.Add(after)
	rec := c.tmpl
	rec.Time = stamp(c.now)
	rec.Side = schema.SideClient
	rec.Connection = c.cconn
	rec.Stdio = &schema.WireStdio{Direction: dir, Line: line}
	return c.cf.add(rec)
}

// Expected results.

func ok(outcome string) want { return want{outcome: outcome, posts: 1, statuses: []int{200}} }

func got(outcome string, statuses ...int) want {
	return want{outcome: outcome, posts: len(statuses), statuses: statuses}
}

func (w want) from(origin string) want { w.origin = origin; return w }

// ---------------------------------------------------------------------------
// samples/seed: the eleven synthetic cases of the seed article.

func seed(s *samples) {
	cf := s.file("seed/client.ndjson", nil)
	sf := s.file("seed/server.ndjson", nil)

	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"synthetic","arguments":{}}}`
	const good = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	const rpcErr = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`
	const toolErr = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`

	type reply struct {
		status int
		body   string
	}
	cases := []struct {
		name    string
		label   string
		port    int
		replies []reply
		want    want
	}{
		{"seed-01-baseline", "baseline", 40261, []reply{{200, good}}, ok("TOOL_SUCCESS")},
		{"seed-02-explicit-503-then-200", "explicit_http_503_then_200", 43517, []reply{
			{503, `{"note":"synthetic outage"}`}, {200, good}}, want{}}, // declared per side below
		{"seed-03-jsonrpc-error", "jsonrpc_error", 36089, []reply{{200, rpcErr}}, ok("JSONRPC_ERROR")},
		{"seed-04-tool-iserror", "tool_isError", 45203, []reply{{200, toolErr}}, ok("TOOL_ERROR")},
		{"seed-05-transport-precedence", "transport_precedence", 39941, []reply{{500, good}}, got("HTTP_ERROR", 500)},
		{"seed-06-malformed-json", "malformed_json", 41377, []reply{{200, `{unclosed`}}, ok("MALFORMED_JSON")},
		{"seed-07-conflicting-envelope", "conflicting_envelope", 34651, []reply{{200,
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false},"error":{"code":-32602,"message":"synthetic invalid params"}}`}},
			ok("INVALID_ENVELOPE")},
		{"seed-08-wrong-response-id", "wrong_response_id", 42809, []reply{{200,
			`{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`}},
			ok("INVALID_ENVELOPE")},
		{"seed-09-input-required", "input_required", 37723, []reply{{200,
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`}},
			ok("INPUT_REQUIRED")},
		{"seed-10-legacy-resulttype-absent", "legacy_resultType_absent", 44087, []reply{{200,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`}},
			ok("TOOL_SUCCESS")},
		{"seed-11-invalid-tool-result", "invalid_tool_result", 35519, []reply{{200,
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":"not-an-array","isError":false}}`}},
			ok("INVALID_TOOL_RESULT")},
	}

	now := time.Date(2026, 10, 17, 9, 14, 3, 118_000_000, time.UTC)
	for _, k := range cases {
		c := &conv{s: s, cf: cf, sf: sf, cconn: k.name, sconn: k.name, lowerServer: true, now: now,
			tmpl: schema.WireRecord{Transport: schema.TransportStreamableHTTP, ProtocolVersion: "2026-07-28",
				Labels: map[string]string{"seed_case": k.label}}}
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", k.port)
		var lines [][2]int
		for i, r := range k.replies {
			trigger := ""
			if i > 0 {
				trigger = schema.TriggerApplication // the test sent it, not an SDK
			}
			cl, sl := c.do(txn{url: url, body: call, trigger: trigger, dur: ms(3 + i),
				headers: map[string]any{"content-type": "application/json", "accept": "application/json", "user-agent": "node"},
				resp: resp{status: r.status, ctype: "application/json", body: ptr(r.body),
					headers: map[string]any{"Connection": "keep-alive", "Keep-Alive": "timeout=5", "Content-Length": strconv.Itoa(len(r.body))}}})
			lines = append(lines, [2]int{cl, sl})
		}
		if len(k.replies) == 1 {
			c.expect(lines[0][0], lines[0][1], "tools/call", "1", k.want)
		} else {
			// Case 2. The client log says the test sent the second POST:
			// two exchanges. The server log cannot tell: one exchange with
			// two attempts.
			s.expect(cf, client, lines[0][0], "tools/call", "1", got("HTTP_ERROR", 503))
			s.expect(cf, client, lines[1][0], "tools/call", "1", ok("TOOL_SUCCESS").from("application"))
			s.expect(sf, server, lines[0][1], "tools/call", "1", got("TOOL_SUCCESS", 503, 200).from("sdk"))
		}
		now = c.now.Add(ms(37))
	}
}

// ---------------------------------------------------------------------------
// samples/cakewalk: the six default scenarios of Cakewalk MCP Test Kitchen,
// as its server puts them on the wire.

const (
	ckURL   = "http://localhost:5080/mcp"
	ckPAT   = "Bearer ck_pat_EXAMPLE_0000_not_a_real_token"
	v2026   = "2026-07-28"
	v2025   = "2025-11-25"
	runTool = "run_configured_test_scenario"
	ckMode  = "stateless" // CK runs the SDK stateless: the only transport mode
)

var (
	ckServer   = &schema.Implementation{Name: "McpTestServer", Version: "1.0.0"}
	tsClient   = &schema.Implementation{Name: "cakewalk-ts-test-client", Version: "0.4.0"}
	agent      = &schema.Implementation{Name: "example-agent", Version: "1.2.0"}
	ckSecurity = map[string]any{
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Content-Security-Policy": "frame-ancestors 'none'",
		"Referrer-Policy":         "no-referrer",
		"Server":                  "Kestrel",
	}
)

// ckRun is one client run against Cakewalk: one client connection, one
// scenario session on the server.
type ckRun struct {
	*conv
	version string
	caps    json.RawMessage // client capabilities
	nextID  int
}

func newRun(s *samples, cf, sf *sampleFile, now time.Time, version, scenario, cconn, session string) *ckRun {
	impl := tsClient
	caps := obj("elicitation", obj("form", obj()))
	if version == v2025 {
		impl = agent
		caps = obj()
		if scenario == "elicitation.approval" {
			caps = obj("elicitation", obj())
		}
	}
	return &ckRun{
		conv: &conv{s: s, cf: cf, sf: sf, cconn: cconn, sconn: "ck-session-" + session, scenario: scenario, now: now,
			tmpl: schema.WireRecord{Transport: schema.TransportStreamableHTTP, Client: impl, Server: ckServer, ProtocolVersion: version}},
		version: version,
		caps:    caps,
	}
}

func (r *ckRun) id() int { id := r.nextID; r.nextID++; return id }

// meta is the 2026-07-28 per-request _meta.
func (r *ckRun) meta() json.RawMessage {
	return obj("io.modelcontextprotocol/protocolVersion", v2026,
		"io.modelcontextprotocol/clientCapabilities", r.caps,
		"io.modelcontextprotocol/clientInfo", obj("name", tsClient.Name, "version", tsClient.Version))
}

// params builds request params from key, value pairs, adding _meta on
// 2026-07-28 (after the arguments, before MRTR fields).
func (r *ckRun) params(kv []any, mrtr ...any) json.RawMessage {
	if r.version == v2026 {
		kv = append(kv, "_meta", r.meta())
	}
	return obj(append(kv, mrtr...)...)
}

func (r *ckRun) headers(method, name string, extra map[string]any) map[string]any {
	h := map[string]any{
		"Accept":        "application/json, text/event-stream",
		"Content-Type":  "application/json",
		"Authorization": ckPAT,
	}
	if r.version == v2026 {
		h["User-Agent"] = "node"
		h["MCP-Protocol-Version"] = v2026
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
	} else {
		h["User-Agent"] = "example-agent/1.2.0"
		if method != "initialize" {
			h["MCP-Protocol-Version"] = v2025
		}
	}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// send POSTs one message and returns the line numbers of both sides.
func (r *ckRun) send(msg json.RawMessage, method, name string, extra map[string]any, rs resp, dur time.Duration) (int, int) {
	return r.do(txn{url: ckURL, headers: r.headers(method, name, extra), body: string(msg), resp: rs, dur: dur})
}

// complete adds resultType "complete" on 2026-07-28, as the SDK does.
func (r *ckRun) complete(kv ...any) json.RawMessage {
	if r.version == v2026 {
		kv = append(kv, "resultType", "complete")
	}
	return obj(kv...)
}

// SDK output: 200 text/event-stream.
func sdkStream(msgs ...json.RawMessage) resp {
	h := map[string]any{"Cache-Control": "no-cache,no-store", "Content-Encoding": "identity", "X-Accel-Buffering": "no"}
	for k, v := range ckSecurity {
		h[k] = v
	}
	return resp{status: 200, ctype: "text/event-stream", headers: h, body: ptr(sse(msgs...)), streamEnd: schema.StreamComplete}
}

// A body written by the scenario wire layer: 200 application/json.
func ckBody(body json.RawMessage) resp {
	h := map[string]any{"Content-Length": strconv.Itoa(len(body))}
	for k, v := range ckSecurity {
		h[k] = v
	}
	return resp{status: 200, ctype: "application/json", headers: h, body: ptr(string(body))}
}

// A status with no body and no Content-Type: a scenario's injected status, or
// the SDK's 202 to a notification.
func ckStatus(status int) resp {
	h := map[string]any{"Content-Length": "0"}
	for k, v := range ckSecurity {
		h[k] = v
	}
	return resp{status: status, headers: h, body: ptr("")}
}

// An SDK rejection: a JSON-RPC error with a 4xx status.
func sdkReject(status int, body json.RawMessage) resp {
	rs := ckBody(body)
	rs.status = status
	rs.ctype = "application/json; charset=utf-8"
	return rs
}

// begin opens the conversation: server/discover and tools/list on
// 2026-07-28, initialize, notifications/initialized and tools/list on
// 2025-11-25. All succeed.
func (r *ckRun) begin(tools json.RawMessage) {
	if r.version == v2026 {
		r.discover(sdkStream)
	} else {
		id := r.id()
		cl, sl := r.send(r.initialize(id), "initialize", "", nil, sdkStream(r.initResult(id)), ms(41))
		r.expect(cl, sl, "initialize", strconv.Itoa(id), ok("SUCCESS"))
		r.initialized()
	}
	r.listTools(tools)
}

func (r *ckRun) discover(answer func(...json.RawMessage) resp) (int, int) {
	id := r.id()
	res := obj("supportedVersions", arr(v2026, v2025, "2025-06-18", "2025-03-26", "2024-11-05"),
		"capabilities", obj("tools", obj(), "resources", obj(), "prompts", obj()),
		"_meta", obj("io.modelcontextprotocol/serverInfo", obj("name", ckServer.Name, "version", ckServer.Version)),
		"resultType", "complete")
	cl, sl := r.send(request(id, "server/discover", r.params(nil)), "server/discover", "", nil, answer(result(id, res)), ms(38))
	r.expect(cl, sl, "server/discover", strconv.Itoa(id), ok("SUCCESS"))
	return cl, sl
}

func (r *ckRun) initialize(id int) json.RawMessage {
	return request(id, "initialize", obj("protocolVersion", v2025, "capabilities", r.caps,
		"clientInfo", obj("name", agent.Name, "version", agent.Version)))
}

func (r *ckRun) initResult(id int) json.RawMessage {
	return result(id, obj("protocolVersion", v2025,
		"capabilities", obj("tools", obj("listChanged", true), "resources", obj(), "prompts", obj()),
		"serverInfo", obj("name", ckServer.Name, "version", ckServer.Version)))
}

func (r *ckRun) initialized() {
	r.send(notification("notifications/initialized", nil), "notifications/initialized", "", nil, ckStatus(202), ms(6))
}

func (r *ckRun) listTools(tools json.RawMessage) {
	id := r.id()
	res := r.complete("tools", tools)
	if r.version == v2026 {
		res = obj("tools", tools, "ttlMs", 300000, "cacheScope", "private", "resultType", "complete")
	}
	cl, sl := r.send(request(id, "tools/list", r.params(nil)), "tools/list", "", nil, sdkStream(result(id, res)), ms(29))
	r.expect(cl, sl, "tools/list", strconv.Itoa(id), ok("SUCCESS"))
}

// call sends tools/call and declares its expected result.
func (r *ckRun) call(tool string, args json.RawMessage, mrtr []any, extra map[string]any,
	answer func(id int) resp, dur time.Duration, w want) {
	id := r.id()
	msg := request(id, "tools/call", r.params([]any{"name", tool, "arguments", args}, mrtr...))
	cl, sl := r.send(msg, "tools/call", tool, extra, answer(id), dur)
	r.expect(cl, sl, "tools/call", strconv.Itoa(id), w)
}

// The tool's text: one JSON object, as a string.
func toolText(kv ...any) json.RawMessage { return text(string(obj(kv...))) }

var runToolDef = obj("name", runTool,
	"inputSchema", obj("type", "object", "properties", obj("message", obj("type", "string",
		"description", "Optional label included in the response for debugging."))))

func cakewalk(s *samples) {
	cf := s.file("cakewalk/client.ndjson", map[string]int{"notifications/initialized": 4})
	sf := s.file("cakewalk/server.ndjson", map[string]int{"notifications/initialized": 4})
	day := time.Date(2026, 10, 20, 8, 0, 0, 0, time.UTC)
	at := func(h, m, sec, milli int) time.Time {
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + ms(milli))
	}
	baseTools := arr(runToolDef)
	none := obj()

	// baseline, 2026-07-28: the call succeeds.
	r := newRun(s, cf, sf, at(1, 2, 11, 204), v2026, "baseline", "ck-run-01-baseline-2026", "3f9a1c0e5b7d4e2a9c8b6d4f2e1a0b9c")
	r.begin(baseTools)
	r.call(runTool, obj("message", "hi"), nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "baseline", "invocation", 1, "delayMs", 0, "message", "hi"))))
	}, ms(57), ok("TOOL_SUCCESS"))

	// errors.http_status_sequence, 2025-11-25: the first POST (initialize)
	// gets 503 with no body; the SDK POSTs the same initialize again.
	r = newRun(s, cf, sf, at(1, 9, 40, 512), v2025, "errors.http_status_sequence", "ck-run-02-status-sequence-2025", "8d2e7f4a1c6b4b09a3e5f7c1d2b8a604")
	id := r.id()
	cl, sl := r.send(r.initialize(id), "initialize", "", nil, ckStatus(503), ms(12))
	r.now = r.now.Add(ms(1000)) // the SDK's back-off
	r.send(r.initialize(id), "initialize", "", nil, sdkStream(r.initResult(id)), ms(44))
	r.expect(cl, sl, "initialize", "0", got("SUCCESS", 503, 200).from("sdk"))
	r.initialized()
	r.listTools(baseTools)
	r.call(runTool, none, nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "errors.http_status_sequence", "invocation", 1))))
	}, ms(36), ok("TOOL_SUCCESS"))

	// errors.http_status_sequence, 2026-07-28: the first POST is
	// server/discover; it takes the 503 and the client gives up.
	r = newRun(s, cf, sf, at(1, 14, 2, 77), v2026, "errors.http_status_sequence", "ck-run-03-status-sequence-2026", "c41b9e2d7a3f45e8b0d6a1f9e3c5b782")
	id = r.id()
	cl, sl = r.send(request(id, "server/discover", r.params(nil)), "server/discover", "", nil, ckStatus(503), ms(11))
	r.expect(cl, sl, "server/discover", "0", got("HTTP_ERROR", 503))

	// errors.jsonrpc_error, 2026-07-28: the first tools/call gets the
	// injected JSON-RPC error; the second, the same call under a new id,
	// succeeds: an application retry (same method and arguments after a
	// failure), from either side's log.
	r = newRun(s, cf, sf, at(1, 20, 31, 940), v2026, "errors.jsonrpc_error", "ck-run-04-jsonrpc-error-2026", "5e0c3a8f9b1d4c7e8a2f6b0d4e9c1a35")
	r.begin(baseTools)
	r.call(runTool, none, nil, nil, func(id int) resp {
		return ckBody(rpcError(id, -32602, "Invalid params"))
	}, ms(9), ok("JSONRPC_ERROR"))
	r.call(runTool, none, nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "errors.jsonrpc_error", "invocation", 1))))
	}, ms(34), ok("TOOL_SUCCESS").from("application"))

	// errors.tool_error: isError true over SSE, on 2026-07-28 and on
	// 2025-11-25 (no resultType there).
	for i, v := range []string{v2026, v2025} {
		conn := []string{"ck-run-05-tool-error-2026", "ck-run-06-tool-error-2025"}[i]
		sess := []string{"a7d3f1e9c2b84a60b5e1d7c3f9a2e418", "e2b6c9a1f4d74e3b8c0a5f2d6b9e1c73"}[i]
		r = newRun(s, cf, sf, at(1, 27+4*i, 5, 330+211*i), v, "errors.tool_error", conn, sess)
		r.begin(baseTools)
		r.call(runTool, none, nil, nil, func(id int) resp {
			return sdkStream(result(id, r.complete("content",
				toolText("scenarioId", "errors.tool_error", "invocation", 1, "errorMessage", "Tool-side failure"), "isError", true)))
		}, ms(31), ok("TOOL_ERROR"))
	}

	// elicitation.approval, 2026-07-28: input_required, then the
	// continuation under a new id succeeds.
	r = newRun(s, cf, sf, at(1, 40, 18, 602), v2026, "elicitation.approval", "ck-run-07-elicitation-2026", "1b8f4d2c6e9a4f03a7c5e1b9d3f6a280")
	r.begin(baseTools)
	r.call(runTool, none, nil, nil, func(id int) resp {
		return sdkStream(result(id, obj("resultType", "input_required",
			"inputRequests", obj("elicitation", obj("method", "elicitation/create", "params", obj(
				"mode", "form",
				"message", "Approve running this MCP test scenario? Provide a short reason for the audit log.",
				"requestedSchema", obj("type", "object",
					"properties", obj("reason", obj("type", "string", "title", "Reason (recorded for audit)", "maxLength", 200)),
					"required", arr("reason"))))),
			"requestState", "awaiting-elicitation")))
	}, ms(27), ok("INPUT_REQUIRED"))
	r.now = r.now.Add(ms(6400)) // a person fills in the form
	r.call(runTool, none, []any{
		"inputResponses", obj("elicitation", obj("action", "accept", "content", obj("reason", "routine client check"))),
		"requestState", "awaiting-elicitation"}, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "elicitation.approval", "invocation", 2,
			"elicitationOutcome", "accepted", "approvalReason", "routine client check"))))
	}, ms(33), ok("TOOL_SUCCESS"))

	// elicitation.approval, 2025-11-25: no MRTR, so the tool reports
	// "unsupported" as a tool error.
	r = newRun(s, cf, sf, at(1, 46, 51, 15), v2025, "elicitation.approval", "ck-run-08-elicitation-2025", "9c5a2e7f1d3b4806b2f8e4a6c1d9b357")
	r.begin(baseTools)
	r.call(runTool, none, nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content",
			toolText("scenarioId", "elicitation.approval", "invocation", 1, "elicitationOutcome", "unsupported"), "isError", true)))
	}, ms(25), ok("TOOL_ERROR"))

	// compat.sdk_v2, 2026-07-28.
	compatTools := arr(runToolDef,
		obj("name", "simulate_ticket_close_mrtr", "inputSchema", obj("type", "object",
			"properties", obj("ticketId", obj("type", "integer"), "closeReason", obj("type", "string")),
			"required", arr("ticketId"))),
		obj("name", "show_negotiated_mcp_protocol", "inputSchema", obj("type", "object", "properties", obj())),
		obj("name", "verify_order_region_param_header", "inputSchema", obj("type", "object",
			"properties", obj("region", obj("type", "string", "x-mcp-header", "Region"), "orderId", obj("type", "string")),
			"required", arr("region", "orderId"))))
	r = newRun(s, cf, sf, at(1, 53, 7, 880), v2026, "compat.sdk_v2", "ck-run-09-compat-2026", "f0a4c8e2b6d14a9f8e3c7b1a5d9f2c60")
	r.begin(compatTools)
	prompt := "Close ticket '99'? Accept the default reason or provide your own."
	r.call("simulate_ticket_close_mrtr", obj("ticketId", 99), nil, nil, func(id int) resp {
		return sdkStream(result(id, obj("resultType", "input_required",
			"inputRequests", obj("closeReason", obj("method", "elicitation/create", "params", obj(
				"mode", "form", "message", prompt,
				"requestedSchema", obj("type", "object",
					"properties", obj("closeReason", obj("type", "string", "title", "Close reason", "default", "completed")),
					"required", arr("closeReason"))))),
			"requestState", "99")))
	}, ms(24), ok("INPUT_REQUIRED"))
	r.now = r.now.Add(ms(2150))
	r.call("simulate_ticket_close_mrtr", obj("ticketId", 99), []any{
		"inputResponses", obj("closeReason", obj("action", "accept", "content", obj("closeReason", "completed"))),
		"requestState", "99"}, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "compat.sdk_v2",
			"tool", "simulate_ticket_close_mrtr", "path", "mrtr", "ticketId", 99, "closeReason", "completed",
			"isMrtrSupported", true, "negotiatedProtocolVersion", v2026, "transportMode", ckMode,
			"compatCell", "2026-07-28/stateless/native", "message", "Closed ticket 99: completed"))))
	}, ms(30), ok("TOOL_SUCCESS"))
	r.call("show_negotiated_mcp_protocol", none, nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "compat.sdk_v2",
			"tool", "show_negotiated_mcp_protocol", "negotiatedProtocolVersion", v2026, "isMrtrSupported", true,
			"sessionId", nil, "headers", obj("MCP-Protocol-Version", v2026, "Mcp-Method", "tools/call",
				"Mcp-Name", "show_negotiated_mcp_protocol", "Mcp-Session-Id", nil)))))
	}, ms(22), ok("TOOL_SUCCESS"))
	// The header says eu-west, the arguments say us-east: the SDK rejects
	// the request before the tool runs. 2026-07-28 maps -32020 onto HTTP
	// 400, and the body carries the request's own id: the client delivers
	// it as the JSON-RPC error, so it is JSONRPC_ERROR with [400].
	r.call("verify_order_region_param_header", obj("region", "us-east", "orderId", "ORD-1042"), nil,
		map[string]any{"Mcp-Param-Region": "eu-west"}, func(id int) resp {
			return sdkReject(400, rpcError(id, -32020, "Header mismatch: Mcp-Param-Region does not match the request body"))
		}, ms(8), got("JSONRPC_ERROR", 400))

	// compat.sdk_v2, 2025-11-25: no reason given and no MRTR, so the
	// guidance path answers with a normal result.
	r = newRun(s, cf, sf, at(2, 1, 44, 256), v2025, "compat.sdk_v2", "ck-run-10-compat-2025", "2d7e1b5f9a3c4e68b4d0f8a2c6e1b937")
	r.begin(compatTools)
	r.call("simulate_ticket_close_mrtr", obj("ticketId", 7), nil, nil, func(id int) resp {
		return sdkStream(result(id, r.complete("content", toolText("scenarioId", "compat.sdk_v2",
			"tool", "simulate_ticket_close_mrtr", "path", "guidance", "ticketId", 7, "isMrtrSupported", false,
			"negotiatedProtocolVersion", v2025, "transportMode", ckMode, "compatCell", "2025-11-25/stateless/unsupported",
			"message", "Closing a ticket requires a reason. Resend with `closeReason`."))))
	}, ms(28), ok("TOOL_SUCCESS"))
}

// ---------------------------------------------------------------------------
// samples/rules: one conversation per extra rule, client logs only.

var (
	acme = &schema.Implementation{Name: "acme-assistant", Version: "3.1.0"}
	docs = &schema.Implementation{Name: "docs-search", Version: "0.9.2"}
)

func rules(s *samples) {
	f := s.file("rules/client.ndjson", map[string]int{
		"notifications/message":     1,
		"notifications/progress":    3,
		"notifications/initialized": 2,
	})
	now := time.Date(2026, 10, 21, 14, 30, 0, 0, time.UTC)
	next := func(conn, version string) *conv {
		c := &conv{s: s, cf: f, cconn: conn, now: now,
			tmpl: schema.WireRecord{Transport: schema.TransportStreamableHTTP, Client: acme, Server: docs, ProtocolVersion: version}}
		now = now.Add(time.Minute)
		return c
	}
	const url = "http://localhost:3000/mcp"
	// The 2026-07-28 _meta every request carries, after an optional
	// progressToken.
	metaKV := []any{"io.modelcontextprotocol/protocolVersion", v2026,
		"io.modelcontextprotocol/clientCapabilities", obj(),
		"io.modelcontextprotocol/clientInfo", obj("name", acme.Name, "version", acme.Version)}
	meta := obj(metaKV...)
	hdr := func(method, name string) map[string]any {
		h := map[string]any{"accept": "application/json, text/event-stream", "content-type": "application/json",
			"mcp-protocol-version": v2026, "mcp-method": method}
		if name != "" {
			h["mcp-name"] = name
		}
		return h
	}
	// search is a tools/call of search_docs; token "" sends no progressToken.
	search := func(id int, query, token string) json.RawMessage {
		m := meta
		if token != "" {
			m = obj(append([]any{"progressToken", token}, metaKV...)...)
		}
		return request(id, "tools/call", obj("name", "search_docs", "arguments", obj("query", query), "_meta", m))
	}
	stream := func(body string, end string) resp {
		return resp{status: 200, ctype: "text/event-stream", headers: map[string]any{"cache-control": "no-cache"}, body: ptr(body), streamEnd: end}
	}
	jsonResp := func(body json.RawMessage) resp {
		return resp{status: 200, ctype: "application/json", body: ptr(string(body))}
	}
	callTxn := func(c *conv, body json.RawMessage, rs resp, dur time.Duration) int {
		cl, _ := c.do(txn{url: url, headers: hdr("tools/call", "search_docs"), body: string(body), resp: rs, dur: dur})
		return cl
	}
	progress := func(token string, p, total int, msg string) json.RawMessage {
		return notification("notifications/progress", obj("progressToken", token, "progress", p, "total", total, "message", msg))
	}

	// An event stream whose final response is a JSON-RPC error.
	c := next("rules-01-sse-jsonrpc-error", v2026)
	l := callTxn(c, search(7, "rate limits", ""), stream(sse(
		notification("notifications/message", obj("level", "warning", "logger", "index", "data", "shard 3 unavailable, retrying")),
		rpcError(7, -32603, "Internal error: search index unavailable")), schema.StreamComplete), ms(1840))
	s.expect(f, client, l, "tools/call", "7", ok("JSONRPC_ERROR"))

	// Progress events, then the result.
	c = next("rules-02-sse-progress-then-result", v2026)
	l = callTxn(c, search(8, "pagination", "pt-8"), stream(sse(
		progress("pt-8", 1, 3, "searching"), progress("pt-8", 2, 3, "ranking"),
		result(8, obj("content", text("3 pages mention pagination"), "resultType", "complete"))), schema.StreamComplete), ms(2310))
	s.expect(f, client, l, "tools/call", "8", ok("TOOL_SUCCESS"))

	// The stream was cut after one progress event.
	c = next("rules-03-sse-reset", v2026)
	l = callTxn(c, search(9, "webhooks", "pt-9"), stream(sse(
		progress("pt-9", 1, 3, "searching")), schema.StreamReset), ms(5120))
	s.expect(f, client, l, "tools/call", "9", ok("STREAM_INCOMPLETE"))

	// 200 application/json, body not recorded.
	c = next("rules-04-body-not-recorded", v2026)
	c.tmpl.Labels = map[string]string{"body_capture": "off"}
	l, _ = c.do(txn{url: url, headers: hdr("tools/call", "search_docs"), body: string(search(1, "oauth", "")), dur: ms(212),
		resp: resp{status: 200, ctype: "application/json",
			headers: map[string]any{"content-length": "143", "via": []string{"1.1 edge-gw", "1.1 mesh-sidecar"}}}})
	s.expect(f, client, l, "tools/call", "1", ok("UNKNOWN"))

	// Connection refused: no response at all.
	c = next("rules-05-connection-refused", v2026)
	l = callTxn(c, search(1, "oauth", ""), resp{failure: &schema.WireFailure{Kind: schema.FailureConnectionRefused,
		Message: "connect ECONNREFUSED 127.0.0.1:3000"}}, ms(2))
	s.expect(f, client, l, "tools/call", "1", got("NO_RESPONSE", 0))

	// Response id "1" (a string) to request id 1.
	c = next("rules-06-string-id", v2026)
	l = callTxn(c, search(1, "retries", ""), jsonResp(obj("jsonrpc", "2.0", "id", "1",
		"result", obj("content", text("2 pages mention retries"), "resultType", "complete"))), ms(96))
	s.expect(f, client, l, "tools/call", "1", ok("INVALID_ENVELOPE"))

	// An error whose code is not an integer.
	c = next("rules-07-error-code-string", v2026)
	l = callTxn(c, search(1, "quotas", ""), jsonResp(rpcError(1, "oops", "something broke")), ms(41))
	s.expect(f, client, l, "tools/call", "1", ok("INVALID_ENVELOPE"))

	// isError is not a boolean.
	c = next("rules-08-iserror-string", v2026)
	l = callTxn(c, search(1, "quotas", ""), jsonResp(result(1, obj("content", text("quota exceeded"),
		"isError", "yes", "resultType", "complete"))), ms(58))
	s.expect(f, client, l, "tools/call", "1", ok("INVALID_TOOL_RESULT"))

	// An unknown resultType.
	c = next("rules-09-resulttype-partial", v2026)
	l = callTxn(c, search(1, "changelog", ""), jsonResp(result(1, obj("content", text("first 10 of 42 entries"),
		"resultType", "partial"))), ms(77))
	s.expect(f, client, l, "tools/call", "1", ok("INVALID_TOOL_RESULT"))

	// tools/list whose result has no tools array.
	c = next("rules-10-tools-list-without-tools", v2026)
	l, _ = c.do(txn{url: url, headers: hdr("tools/list", ""), body: string(request(1, "tools/list", obj("_meta", meta))), dur: ms(19),
		resp: jsonResp(result(1, obj("toolList", arr(obj("name", "search_docs")), "ttlMs", 60000, "cacheScope", "public", "resultType", "complete")))})
	s.expect(f, client, l, "tools/list", "1", ok("INVALID_RESULT"))

	// ping, 2025-11-25, string id, on a session.
	c = next("rules-11-ping", v2025)
	const sess = "9b2f4c1e7a3d4f60b8e5c2a1d0f9e8b7"
	l, _ = c.do(txn{url: url, session: sess, dur: ms(3), body: string(request("ping-1", "ping", nil)),
		headers: map[string]any{"accept": "application/json, text/event-stream", "content-type": "application/json",
			"mcp-protocol-version": v2025, "mcp-session-id": sess},
		resp: jsonResp(result("ping-1", obj()))})
	s.expect(f, client, l, "ping", `"ping-1"`, ok("SUCCESS"))

	legacySSE(s, f, next("rules-12-legacy-http-sse", "2024-11-05"))
	batch(s, f, next("rules-13-batch-2025-03-26", "2025-03-26"))
	stdio(s, f, next("rules-14-stdio", v2025))
}

// legacySSE is an HTTP+SSE (2024-11-05) conversation: responses come on the
// GET stream, whose record is written when the stream ends, after the POSTs.
func legacySSE(s *samples, f *sampleFile, c *conv) {
	weather := &schema.Implementation{Name: "weather-legacy", Version: "0.2.0"}
	c.tmpl.Server = weather
	c.tmpl.Transport = schema.TransportHTTPSSE
	const base = "http://localhost:3001"
	getStart := c.now
	c.now = c.now.Add(ms(15))
	post := func(msg json.RawMessage, dur time.Duration) int {
		l, _ := c.do(txn{url: base + "/messages?sessionId=abc", body: string(msg), dur: dur,
			headers: map[string]any{"content-type": "application/json"},
			resp:    resp{status: 202, body: ptr("Accepted")}})
		return l
	}
	getWeather := obj("name", "get_weather", "description", "Current weather for a city",
		"inputSchema", obj("type", "object", "properties", obj("city", obj("type", "string")), "required", arr("city")))
	l0 := post(request(0, "initialize", obj("protocolVersion", "2024-11-05", "capabilities", obj(),
		"clientInfo", obj("name", acme.Name, "version", acme.Version))), ms(3))
	post(notification("notifications/initialized", nil), ms(2))
	l1 := post(request(1, "tools/list", nil), ms(2))
	l2 := post(request(2, "tools/call", obj("name", "get_weather", "arguments", obj("city", "Turin"))), ms(2))
	c.now = c.now.Add(ms(900))
	body := "event: endpoint\ndata: /messages?sessionId=abc\n\n" + sse(
		result(0, obj("protocolVersion", "2024-11-05", "capabilities", obj("tools", obj()),
			"serverInfo", obj("name", weather.Name, "version", weather.Version))),
		result(1, obj("tools", arr(getWeather))),
		result(2, obj("content", text("Turin: 14°C, light rain"))))
	c.do(txn{method: "GET", url: base + "/sse", at: getStart, dur: c.now.Sub(getStart), session: "abc",
		headers: map[string]any{"accept": "text/event-stream"},
		resp: resp{status: 200, ctype: "text/event-stream", body: ptr(body), streamEnd: schema.StreamClientClosed,
			headers: map[string]any{"cache-control": "no-cache", "connection": "keep-alive"}}})
	s.expect(f, client, l0, "initialize", "0", got("SUCCESS", 202))
	s.expect(f, client, l1, "tools/list", "1", got("SUCCESS", 202))
	s.expect(f, client, l2, "tools/call", "2", got("TOOL_SUCCESS", 202))
}

// batch is a 2025-03-26 batch POST of two requests, answered by an array in
// the other order.
func batch(s *samples, f *sampleFile, c *conv) {
	c.tmpl.Server = &schema.Implementation{Name: "weather-server", Version: "1.4.0"}
	const sess = "4c7e2a90d1b34f6a8e0b5d9c3f1a2e64"
	body := arr(request(3, "resources/list", obj()), request(4, "tools/list", obj()))
	answer := arr(
		result(4, obj("tools", arr(obj("name", "get_weather", "inputSchema", obj("type", "object",
			"properties", obj("city", obj("type", "string")), "required", arr("city")))))),
		result(3, obj("resources", arr(obj("uri", "file:///data/cities.csv", "name", "cities.csv", "mimeType", "text/csv")))))
	l, _ := c.do(txn{url: "http://localhost:8931/mcp", session: sess, body: string(body), dur: ms(14),
		headers: map[string]any{"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-session-id": sess},
		resp:    resp{status: 200, ctype: "application/json", body: ptr(string(answer))}})
	s.expect(f, client, l, "resources/list", "3", ok("SUCCESS"))
	s.expect(f, client, l, "tools/list", "4", ok("SUCCESS"))
}

// stdio is a client's log of a stdio server: frames both ways and a line of
// the server's stderr.
func stdio(s *samples, f *sampleFile, c *conv) {
	notes := &schema.Implementation{Name: "notes-server", Version: "0.3.1"}
	c.tmpl.Server = notes
	c.tmpl.Transport = schema.TransportStdio
	l0 := c.frame(schema.DirClientToServer, string(request(0, "initialize", obj("protocolVersion", v2025, "capabilities", obj(),
		"clientInfo", obj("name", acme.Name, "version", acme.Version)))), 0)
	c.frame(schema.DirServerToClient, string(result(0, obj("protocolVersion", v2025, "capabilities", obj("tools", obj()),
		"serverInfo", obj("name", notes.Name, "version", notes.Version)))), ms(212))
	c.frame(schema.DirClientToServer, string(notification("notifications/initialized", nil)), ms(3))
	l1 := c.frame(schema.DirClientToServer, string(request(1, "tools/call", obj("name", "read_note",
		"arguments", obj("path", "missing.md")))), ms(1406))
	c.frame(schema.DirStderr, "[notes-server] warn: note not found: missing.md", ms(4))
	c.frame(schema.DirServerToClient, string(result(1, obj("content", text("Note not found: missing.md"), "isError", true))), ms(1))
	s.expect(f, client, l0, "initialize", "0", want{outcome: "SUCCESS"})
	s.expect(f, client, l1, "tools/call", "1", want{outcome: "TOOL_ERROR"})
}

// ---------------------------------------------------------------------------
// samples/hostile: lines that must be quarantined, between two good records.

func hostile(s *samples) {
	f := s.file("hostile/garbage.ndjson", nil)
	c := &conv{s: s, cf: f, cconn: "hostile-valid", now: time.Date(2026, 10, 22, 7, 45, 12, 400_000_000, time.UTC),
		tmpl: schema.WireRecord{Transport: schema.TransportStreamableHTTP, Client: acme, Server: docs, ProtocolVersion: v2026}}
	meta := obj("io.modelcontextprotocol/protocolVersion", v2026, "io.modelcontextprotocol/clientCapabilities", obj())
	hdr := map[string]any{"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": v2026}

	h := map[string]any{"mcp-method": "tools/list"}
	for k, v := range hdr {
		h[k] = v
	}
	first, _ := c.do(txn{url: "http://localhost:3000/mcp", headers: h, dur: ms(12),
		body: string(request(1, "tools/list", obj("_meta", meta))),
		resp: resp{status: 200, ctype: "application/json", body: ptr(string(result(1, obj("tools", arr(obj("name", "search_docs",
			"inputSchema", obj("type", "object"))), "ttlMs", 60000, "cacheScope", "public", "resultType", "complete"))))}})
	s.expect(f, client, first, "tools/list", "1", ok("SUCCESS"))

	bad := func(line, reason, what string) {
		n := f.raw(line)
		f.bad = append(f.bad, quarantined{n, reason, what})
	}
	bad("2026-10-22 07:45:13,002 INFO proxy: upstream connected", "not_json", "a plain log line, not JSON")
	bad(`{"mcptrace":"wire/1","ts":"2026-10-22T07:45:13.410Z","side":"client","transport":"streamable-http","http":{"request":{"method":"POST","url":"http://localhost:3000/m`,
		"not_json", "a wire record cut off in the middle (truncated JSON)")
	f.raw("") // an empty line: skipped, neither a record nor quarantined
	bad(`{"time":"2026-10-22T07:45:14.020Z","level":"info","msg":"tools/call completed","duration_ms":31}`,
		"not_a_wire_record", `valid JSON without the "mcptrace" marker`)
	bad(`{"mcptrace":"wire/1","ts":"2026-10-22T07:45:14.300Z","transport":"streamable-http","connection":"hostile-valid","http":{"request":{"method":"POST","url":"http://localhost:3000/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"}}}`,
		"missing_field", `a wire record without "side"`)

	c.now = c.now.Add(2 * time.Second)
	h = map[string]any{"mcp-method": "tools/call", "mcp-name": "search_docs"}
	for k, v := range hdr {
		h[k] = v
	}
	last, _ := c.do(txn{url: "http://localhost:3000/mcp", headers: h, dur: ms(88),
		body: string(request(2, "tools/call", obj("name", "search_docs", "arguments", obj("query", "errors"), "_meta", meta))),
		resp: resp{status: 200, ctype: "application/json", body: ptr(string(result(2, obj("content", text("4 pages mention errors"), "resultType", "complete"))))}})
	s.expect(f, client, last, "tools/call", "2", ok("TOOL_SUCCESS"))
}
