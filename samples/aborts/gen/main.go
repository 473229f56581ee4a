// Command gen writes the samples of samples/aborts/ (who closed a stream,
// and when each message arrived) and the two tables between the markers in
// samples/aborts/README.md.
//
//	go run ./samples/aborts/gen
//
// Every exchange is declared next to the traffic that makes it, with its
// expected result and columns stated by hand (never computed by package
// classify or correlate). The output is deterministic: run it twice and
// nothing changes. Before writing, it checks that every expectation points
// at a record or entry that carries a request with that method and id.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mcptrace/samples/internal/gentab"
	"mcptrace/schema"
)

func main() {
	dir, err := gentab.Dir("aborts")
	if err != nil {
		gentab.Fail(err)
	}
	s := &samples{}
	wireAborts(s)
	wireSorted(s)
	devtoolsHAR(s)
	mitmproxyHAR(s)
	recorderHAR(s)
	if err := s.check(); err != nil {
		gentab.Fail(err)
	}
	if err := s.write(dir); err != nil {
		gentab.Fail(err)
	}
}

// ---------------------------------------------------------------------------
// Expectations and output.

// want is one exchange's expected result, stated by hand; cols are the
// columns the columns table states for it (column name to DuckDB text).
type want struct {
	outcome, layer string
	posts          int
	statuses       string
	origin         string
	cols           [][2]string
}

type expectation struct {
	file   string // relative to samples/
	line   int
	method string
	id     string
	want   want
}

type file struct {
	name  string   // relative to samples/
	lines []string // wire log lines; nil for a HAR
	har   []obj    // HAR entries
	doc   func(entries []obj) obj
	// requests maps a line (entry) to the "method id" pairs of the
	// requests it carries, for the self-check.
	requests map[int][]string
}

type samples struct {
	files []*file
	exps  []expectation
}

func (s *samples) file(name string) *file {
	f := &file{name: name, requests: map[int][]string{}}
	s.files = append(s.files, f)
	return f
}

func (s *samples) expect(f *file, line int, method, id string, w want) {
	s.exps = append(s.exps, expectation{f.name, line, method, id, w})
}

// wire appends one record and returns its 1-based line number.
func (f *file) wire(r schema.WireRecord) int {
	f.lines = append(f.lines, gentab.Wire(r))
	n := len(f.lines)
	if r.HTTP != nil && r.HTTP.Request.Body != nil {
		f.note(n, *r.HTTP.Request.Body)
	}
	return n
}

// entry appends one HAR entry and returns its 1-based index.
func (f *file) entry(e obj, body string) int {
	f.har = append(f.har, e)
	n := len(f.har)
	f.note(n, body)
	return n
}

func (f *file) note(n int, body string) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" && len(m.ID) > 0 {
		f.requests[n] = append(f.requests[n], m.Method+" "+string(m.ID))
	}
}

func (s *samples) check() error {
	byName := map[string]*file{}
	for _, f := range s.files {
		byName[f.name] = f
	}
	seen := map[string]bool{}
	for _, e := range s.exps {
		f := byName[e.file]
		if f == nil {
			return fmt.Errorf("expectation for unknown file %s", e.file)
		}
		found := false
		for _, r := range f.requests[e.line] {
			found = found || r == e.method+" "+e.id
		}
		if !found {
			return fmt.Errorf("%s:%d carries no %s id %s (it carries %v)", e.file, e.line, e.method, e.id, f.requests[e.line])
		}
		k := fmt.Sprint(e.file, e.line, e.method, e.id)
		if seen[k] {
			return fmt.Errorf("%s:%d %s id %s declared twice", e.file, e.line, e.method, e.id)
		}
		seen[k] = true
	}
	// Every request written is declared: the README lists every exchange.
	for _, f := range s.files {
		for line, reqs := range f.requests {
			for _, r := range reqs {
				mid := strings.SplitN(r, " ", 2)
				if !seen[fmt.Sprint(f.name, line, mid[0], mid[1])] {
					return fmt.Errorf("%s:%d: %s has no expectation", f.name, line, r)
				}
			}
		}
	}
	return nil
}

func (s *samples) write(dir string) error {
	root := filepath.Dir(dir)
	for _, f := range s.files {
		var b bytes.Buffer
		if f.lines != nil {
			b.Write(gentab.NDJSON(f.lines))
		} else {
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(f.doc(f.har)); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(f.name)), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return gentab.FillREADME(filepath.Join(dir, "README.md"),
		gentab.Block{Name: "expectations", Table: s.expectationsTable()},
		gentab.Block{Name: "columns", Table: s.columnsTable()})
}

func (s *samples) expectationsTable() string {
	rows := make([]gentab.Expectation, len(s.exps))
	for i, e := range s.exps {
		rows[i] = gentab.Expectation{File: e.file, Line: e.line, Side: "client", Method: e.method, ID: e.id,
			Outcome: e.want.outcome, Layer: e.want.layer, Posts: e.want.posts, Statuses: e.want.statuses, Origin: e.want.origin}
	}
	return gentab.ExpectationsTable(rows)
}

func (s *samples) columnsTable() string {
	rows := make([]gentab.Columns, len(s.exps))
	for i, e := range s.exps {
		rows[i] = gentab.Columns{File: e.file, Line: e.line, Method: e.method, ID: e.id, Cols: e.want.cols}
	}
	return gentab.ColumnsTable(rows)
}

// cols states late_response, cancelled, stream_end and transport_failure.
func cols(late, cancelled bool, streamEnd, failure string) [][2]string {
	return [][2]string{{"late_response", strconv.FormatBool(late)}, {"cancelled", strconv.FormatBool(cancelled)},
		{"stream_end", streamEnd}, {"transport_failure", failure}}
}

var (
	success = want{outcome: "SUCCESS", layer: "application", posts: 1, statuses: "[200]"}
)

// ---------------------------------------------------------------------------
// JSON-RPC bodies.

func request(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func notification(method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

func cancelled(id int, reason string) string {
	return notification("notifications/cancelled", fmt.Sprintf(`{"requestId":%d,"reason":%q}`, id, reason))
}

func progress(token any, n, total int, msg string) string {
	t, _ := json.Marshal(token)
	return notification("notifications/progress", fmt.Sprintf(`{"progressToken":%s,"progress":%d,"total":%d,"message":%q}`, t, n, total, msg))
}

func textResult(id int, text string, isError bool) string {
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}],"isError":%v}}`, id, t, isError)
}

func initResult(id int, version, name, ver string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":%q,"version":%q}}}`, id, version, name, ver)
}

func initRequest(version, name, ver string) string {
	return request(0, "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":%q,"version":%q}}`, version, name, ver))
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("event: message\ndata: ")
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return b.String()
}

func str(s string) *string { return &s }

// ---------------------------------------------------------------------------
// Times.

type clock struct{ t0 time.Time }

func at(s string) clock {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		gentab.Fail(err)
	}
	return clock{t}
}

// ms is the time ms milliseconds after t0.
func (c clock) ms(ms int) time.Time { return c.t0.Add(time.Duration(ms) * time.Millisecond) }

// ---------------------------------------------------------------------------
// Wire logs.

type wireConv struct {
	f       *file
	c       clock
	session string
	conn    string
	version string
}

func (w *wireConv) rec(startMS, endMS int, body string, resp *schema.WireResponse, reqHeaders map[string]any) int {
	h := map[string]any{"content-type": "application/json", "accept": "application/json, text/event-stream",
		"mcp-protocol-version": w.version}
	if w.session != "" && !strings.Contains(body, `"initialize"`) {
		h["mcp-session-id"] = w.session
	}
	for k, v := range reqHeaders {
		h[k] = v
	}
	return w.f.wire(schema.WireRecord{Time: gentab.Stamp(w.c.ms(startMS)), EndTime: gentab.Stamp(w.c.ms(endMS)), Side: schema.SideClient,
		Transport: schema.TransportStreamableHTTP, Client: &schema.Implementation{Name: "acme-agent", Version: "3.2.0"},
		Server: &schema.Implementation{Name: "acme-export", Version: "1.4.0"}, Connection: w.conn, SessionID: w.session,
		ProtocolVersion: w.version,
		HTTP:            &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: "https://mcp.acme.example/mcp", Headers: h, Body: &body}, Response: resp}})
}

func (w *wireConv) json(startMS, endMS int, body, resp string) int {
	return w.rec(startMS, endMS, body, &schema.WireResponse{Status: 200, ContentType: "application/json",
		Headers: map[string]any{"content-type": "application/json"}, Body: &resp}, nil)
}

func (w *wireConv) accepted(startMS, endMS int, body string) int {
	return w.rec(startMS, endMS, body, &schema.WireResponse{Status: 202, Body: str("")}, nil)
}

// stream logs a POST answered with an event stream of events, ended as
// end says; eventMS, when given, are the events' times (event_times).
func (w *wireConv) stream(startMS, endMS int, body string, end string, events []string, eventMS []int) int {
	text := sse(events...)
	resp := &schema.WireResponse{Status: 200, ContentType: "text/event-stream",
		Headers: map[string]any{"content-type": "text/event-stream", "cache-control": "no-cache"}, Body: &text, StreamEnd: end}
	for _, ms := range eventMS {
		resp.EventTimes = append(resp.EventTimes, str(gentab.Stamp(w.c.ms(ms))))
	}
	return w.rec(startMS, endMS, body, resp, nil)
}

func (w *wireConv) init(startMS int, version string) int {
	return w.json(startMS, startMS+180, initRequest(version, "acme-agent", "3.2.0"), initResult(0, version, "acme-export", "1.4.0"))
}

// wireAborts: client.ndjson, as the client's logger writes it, each record
// when its transaction completes.
func wireAborts(s *samples) {
	f := s.file("aborts/client.ndjson")
	call := func(id int, quarter string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"export_report","arguments":{"quarter":%q},"_meta":{"progressToken":%d}}`, quarter, id))
	}
	// Session 5e1f0a21: who closed the stream.
	a := &wireConv{f: f, c: at("2026-06-16T09:14:00.000Z"), session: "5e1f0a21", conn: "agent-run-31", version: "2025-11-25"}
	s.expect(f, a.init(0, "2025-11-25"), "initialize", "0", success)
	a.accepted(200, 214, notification("notifications/initialized", ""))
	// The user presses Stop: the agent aborts the fetch (the stream ends
	// client_closed), then sends the cancel.
	l := a.stream(1000, 4200, call(1, "2026-Q3"), schema.StreamClientClosed,
		[]string{progress(1, 120, 900, "rendering charts"), progress(1, 310, 900, "rendering tables")}, []int{1950, 3900})
	a.accepted(4203, 4241, cancelled(1, "AbortError: This operation was aborted"))
	s.expect(f, l, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(false, true, "client_closed", "null")})
	// The user runs the same export again (an application retry of the
	// cancelled call). The gateway resets the stream; the agent then
	// cancels rather than resuming: the cut stays the root cause.
	l = a.stream(10000, 13450, call(2, "2026-Q3"), schema.StreamReset,
		[]string{progress(2, 80, 900, "rendering charts")}, []int{10800})
	a.accepted(13460, 13497, cancelled(2, "stream reset by the gateway"))
	s.expect(f, l, "tools/call", "2", want{outcome: "STREAM_INCOMPLETE", layer: "transport", posts: 1, statuses: "[200]", origin: "application",
		cols: cols(false, true, "reset", "null")})
	// This time the cancel goes out first and the stream is closed just
	// after; the logger spells the end closed_by_client. The cancel's
	// record completes first, so it is written first.
	a.accepted(20500, 20531, cancelled(3, "AbortError: This operation was aborted"))
	l = a.stream(19000, 20540, call(3, "2026-Q2"), "closed_by_client",
		[]string{progress(3, 40, 900, "rendering charts")}, []int{19700})
	s.expect(f, l, "tools/call", "3", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(false, true, "client_closed", "null")})

	// Session 7c2d9e40: the client cancels and keeps the stream open; the
	// server answers on it a moment later.
	b := &wireConv{f: f, c: at("2026-06-16T09:20:00.000Z"), session: "7c2d9e40", conn: "agent-run-32", version: "2025-11-25"}
	s.expect(f, b.init(0, "2025-11-25"), "initialize", "0", success)
	b.accepted(200, 211, notification("notifications/initialized", ""))
	sync := func(id int, args string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"sync_catalog","arguments":%s,"_meta":{"progressToken":%d}}`, args, id))
	}
	// The SDK's 2 s timeout fires: cancel at +3.0 s; the server's answer,
	// an isError "context canceled" text, arrives on the stream at +3.35 s.
	// The cancel's record completes first and is written first.
	b.accepted(3000, 3021, cancelled(1, "Error: MCP error -32001: Request timed out"))
	l = b.stream(1000, 3360, sync(1, `{"source":"erp"}`), schema.StreamComplete,
		[]string{progress(1, 1, 4, "fetching"), textResult(1, "sync_catalog failed: context canceled", true)}, []int{1700, 3350})
	s.expect(f, l, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(true, true, "complete", "null")})
	// The same with a real result, and no event_times: the result, the
	// stream's last event, is dated at end_ts (after the cancel).
	b.accepted(8000, 8019, cancelled(2, "Error: MCP error -32001: Request timed out"))
	l = b.stream(5000, 8640, sync(2, `{"source":"erp","full":true}`), schema.StreamComplete,
		[]string{progress(2, 3, 4, "writing"), textResult(2, "catalog synced: 1204 items", false)}, nil)
	s.expect(f, l, "tools/call", "2", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(true, true, "complete", "null")})
	l = b.json(9000, 9040, request(3, "tools/call", `{"name":"catalog_status","arguments":{}}`), textResult(3, "last sync: 1204 items", false))
	s.expect(f, l, "tools/call", "3", want{outcome: "TOOL_SUCCESS", layer: "application", posts: 1, statuses: "[200]",
		cols: cols(false, false, "null", "null")})
}

// wireSorted: sorted.ndjson, the logs of two workers of one agent merged
// and sorted by ts (jq -s 'sort_by(.ts)[]'): a POST's stream record now
// comes before the cancel sent while it was open.
func wireSorted(s *samples) {
	f := s.file("aborts/sorted.ndjson")
	w := &wireConv{f: f, c: at("2026-06-16T10:02:00.000Z"), session: "b3a81f5c", conn: "agent-run-40", version: "2025-06-18"}
	s.expect(f, w.init(0, "2025-06-18"), "initialize", "0", success)
	w.accepted(160, 172, notification("notifications/initialized", ""))
	rebuild := func(id int, args string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"rebuild_index","arguments":%s,"_meta":{"progressToken":%d}}`, args, id))
	}
	// Cancelled at +4.0 s; the real result still arrives at +5.35 s.
	l := w.stream(1000, 5400, rebuild(1, `{}`), schema.StreamComplete,
		[]string{progress(1, 20000, 48112, "indexing"), textResult(1, "index rebuilt: 48112 documents", false)}, []int{2000, 5350})
	s.expect(f, l, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(true, true, "complete", "null")})
	// A request sent while the stream was open, before the cancel.
	l = w.json(2500, 2530, request(2, "tools/list", ""), `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"rebuild_index","inputSchema":{"type":"object"}}]}}`)
	s.expect(f, l, "tools/list", "2", success)
	w.accepted(4000, 4022, cancelled(1, "user pressed stop"))
	// The answer arrives at +11.55 s; the user presses Stop at +11.9 s and
	// the agent sends the cancel anyway: it crossed the answer and does not
	// count.
	l = w.stream(10000, 11600, rebuild(3, `{"shard":"eu"}`), schema.StreamComplete,
		[]string{progress(3, 9000, 17020, "indexing"), textResult(3, "index rebuilt: 17020 documents", false)}, []int{10700, 11550})
	s.expect(f, l, "tools/call", "3", want{outcome: "TOOL_SUCCESS", layer: "application", posts: 1, statuses: "[200]",
		cols: cols(false, false, "complete", "null")})
	w.accepted(11900, 11921, cancelled(3, "user pressed stop"))
}

// ---------------------------------------------------------------------------
// HAR.

// obj is a JSON object whose keys keep the order given.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p.v); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimRight(v.Bytes(), "\n"))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func headers(pairs ...string) []obj {
	out := []obj{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, obj{{"name", pairs[i]}, {"value", pairs[i+1]}})
	}
	return out
}

func harTime(t time.Time, layout string) string { return t.UTC().Format(layout) }

// --- Chrome DevTools ---------------------------------------------------

const (
	chromeLayout = "2006-01-02T15:04:05.000Z"
	chromeUA     = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	consoleSess  = "3b9e2d7a-51c4-4f0e-9d2a-7c1e8b6f0a93"
)

type devtools struct {
	f *file
	c clock
}

// post writes one fetch POST of the console to the MCP server.
func (d *devtools) post(startMS int, total float64, body string, status int, statusText, mime string, respHeaders []obj, text *string, errText any, timings obj) int {
	reqHeaders := headers(":authority", "mcp.acme.test", ":method", "POST", ":path", "/mcp", ":scheme", "https",
		"accept", "application/json, text/event-stream", "content-type", "application/json")
	if !strings.Contains(body, `"initialize"`) {
		reqHeaders = append(reqHeaders, headers("mcp-protocol-version", "2025-11-25", "mcp-session-id", consoleSess)...)
	}
	reqHeaders = append(reqHeaders, headers("origin", "https://console.acme.test", "user-agent", chromeUA)...)
	content := obj{{"size", 0}, {"mimeType", mime}}
	if text != nil {
		content = obj{{"size", len(*text)}, {"mimeType", mime}, {"text", *text}}
	}
	e := obj{
		{"_initiator", obj{{"type", "script"}}},
		{"_priority", "High"},
		{"_resourceType", "fetch"},
		{"cache", obj{}},
		{"connection", "61402"},
		{"pageref", "page_1"},
		{"request", obj{{"method", "POST"}, {"url", "https://mcp.acme.test/mcp"}, {"httpVersion", "http/2.0"}, {"headers", reqHeaders},
			{"queryString", []obj{}}, {"cookies", []obj{}}, {"headersSize", -1}, {"bodySize", len(body)},
			{"postData", obj{{"mimeType", "application/json"}, {"text", body}}}}},
		{"response", obj{{"status", status}, {"statusText", statusText}, {"httpVersion", "http/2.0"}, {"headers", respHeaders},
			{"cookies", []obj{}}, {"content", content}, {"redirectURL", ""}, {"headersSize", -1}, {"bodySize", -1},
			{"_transferSize", 212}, {"_error", errText}, {"_fetchedViaServiceWorker", false}}},
		{"serverIPAddress", "203.0.113.24"},
		{"startedDateTime", harTime(d.c.ms(startMS), chromeLayout)},
		{"time", total},
		{"timings", timings},
	}
	return d.f.entry(e, body)
}

func chromeTimings(wait, receive float64) obj {
	return obj{{"blocked", 0.38}, {"dns", -1}, {"ssl", -1}, {"connect", -1}, {"send", 0.09}, {"wait", wait}, {"receive", receive}, {"_blocked_queueing", 0.27}}
}

func chromeRespHeaders(ct string) []obj {
	return headers("access-control-allow-origin", "https://console.acme.test", "access-control-expose-headers", "mcp-session-id",
		"cache-control", "no-cache", "content-type", ct, "date", "Tue, 16 Jun 2026 11:30:00 GMT")
}

func devtoolsHAR(s *samples) {
	f := s.file("aborts/devtools.har")
	d := &devtools{f: f, c: at("2026-06-16T11:30:00.000Z")}
	f.doc = func(entries []obj) obj {
		return obj{{"log", obj{{"version", "1.2"}, {"creator", obj{{"name", "WebInspector"}, {"version", "537.36"}}},
			{"pages", []obj{{{"startedDateTime", harTime(d.c.ms(-900), chromeLayout)}, {"id", "page_1"}, {"title", "https://console.acme.test/reports"},
				{"pageTimings", obj{{"onContentLoad", 412.6}, {"onLoad", 530.1}}}}}},
			{"entries", entries}}}}
	}
	initText := initResult(0, "2025-11-25", "acme-reports", "5.1.0")
	n := d.post(0, 61.2, initRequest("2025-11-25", "acme-web-console", "0.9.4"), 200, "", "application/json",
		append(chromeRespHeaders("application/json"), headers("mcp-session-id", consoleSess)...), &initText, nil, chromeTimings(59.8, 0.9))
	s.expect(f, n, "initialize", "0", success)
	d.post(70, 12.4, notification("notifications/initialized", ""), 202, "", "x-unknown", chromeRespHeaders("text/plain"), nil, nil, chromeTimings(11.7, 0.2))
	report := func(id int, quarter string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"generate_report","arguments":{"quarter":%q},"_meta":{"progressToken":%d}}`, quarter, id))
	}
	// The user clicks Stop: the page aborts the fetch (net::ERR_ABORTED on
	// a stream whose headers had come), and the SDK sends the cancel.
	partial := sse(progress(1, 2, 12, "querying ledgers"))
	n = d.post(2000, 3201.7, report(1, "2026-Q3"), 200, "", "text/event-stream", chromeRespHeaders("text/event-stream"), &partial,
		"net::ERR_ABORTED", chromeTimings(88.3, 3112.9))
	d.post(5203, 18.1, cancelled(1, "AbortError: signal is aborted without reason"), 202, "", "x-unknown", chromeRespHeaders("text/plain"), nil, nil, chromeTimings(17.5, 0.2))
	s.expect(f, n, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(false, true, "client_closed", "null")})
	// The load balancer cuts the stream at its idle timeout
	// (net::ERR_INCOMPLETE_CHUNKED_ENCODING); the page then cancels.
	partial = sse(progress(2, 1, 12, "querying ledgers"))
	n = d.post(10000, 60012.4, report(2, "2026-Q2"), 200, "", "text/event-stream", chromeRespHeaders("text/event-stream"), &partial,
		"net::ERR_INCOMPLETE_CHUNKED_ENCODING", chromeTimings(91.2, 59920.8))
	d.post(70020, 16.9, cancelled(2, "AbortError: signal is aborted without reason"), 202, "", "x-unknown", chromeRespHeaders("text/plain"), nil, nil, chromeTimings(16.3, 0.2))
	s.expect(f, n, "tools/call", "2", want{outcome: "STREAM_INCOMPLETE", layer: "transport", posts: 1, statuses: "[200]",
		cols: cols(false, true, "reset", "null")})
	// The gateway answers 503 and the connection closes before the body
	// is complete: the 503 came.
	cut := `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"upstream unava`
	n = d.post(80000, 34.6, request(3, "tools/call", `{"name":"list_reports","arguments":{"year":2026}}`), 503, "", "application/json",
		append(chromeRespHeaders("application/json"), headers("retry-after", "5")...), &cut, "net::ERR_CONNECTION_CLOSED", chromeTimings(33.1, 0.8))
	s.expect(f, n, "tools/call", "3", want{outcome: "HTTP_ERROR", layer: "transport", posts: 1, statuses: "[503]",
		cols: cols(false, false, "null", "null")})
	// A JSON answer the page aborts mid-body (the user left the view),
	// with the cancel: the client's own doing.
	n = d.post(90000, 1804.2, request(4, "tools/call", `{"name":"get_report","arguments":{"id":"r-2291"}}`), 200, "", "application/json",
		chromeRespHeaders("application/json"), str(""), "net::ERR_ABORTED", chromeTimings(1790.4, 13.1))
	d.post(91805, 15.2, cancelled(4, "AbortError: signal is aborted without reason"), 202, "", "x-unknown", chromeRespHeaders("text/plain"), nil, nil, chromeTimings(14.6, 0.2))
	s.expect(f, n, "tools/call", "4", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(false, true, "null", "client_abort")})
}

// --- mitmproxy save.har ------------------------------------------------

const mitmSess = "9a4c2e7b1f3d4a8e"

type mitm struct {
	f *file
	c clock
}

func (m *mitm) post(startMS int, total float64, body string, status int, statusText string, respHeaders []obj, mime string, text *string, errText string, wait, receive float64) int {
	reqHeaders := headers("Host", "127.0.0.1:4100", "Accept", "application/json, text/event-stream", "Accept-Encoding", "gzip, deflate",
		"Connection", "keep-alive", "User-Agent", "acme-agent/3.0.2 python-httpx/0.28.1", "Content-Type", "application/json",
		"mcp-protocol-version", "2025-06-18")
	if !strings.Contains(body, `"initialize"`) {
		reqHeaders = append(reqHeaders, headers("Mcp-Session-Id", mitmSess)...)
	}
	reqHeaders = append(reqHeaders, headers("Content-Length", strconv.Itoa(len(body)))...)
	content, size := obj{}, 0
	if text != nil {
		content, size = obj{{"size", len(*text)}, {"compression", 0}, {"mimeType", mime}, {"text", *text}}, len(*text)
	}
	resp := obj{{"status", status}, {"statusText", statusText}, {"httpVersion", "HTTP/1.1"}, {"cookies", []obj{}}, {"headers", respHeaders},
		{"content", content}, {"redirectURL", ""}, {"headersSize", 180}, {"bodySize", size}}
	if errText != "" {
		resp = append(resp, kv{"_error", errText})
	}
	e := obj{
		{"startedDateTime", m.c.ms(startMS).UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"},
		{"time", total},
		{"request", obj{{"method", "POST"}, {"url", "http://127.0.0.1:4100/mcp"}, {"httpVersion", "HTTP/1.1"}, {"cookies", []obj{}},
			{"headers", reqHeaders}, {"queryString", []obj{}}, {"headersSize", 330}, {"bodySize", len(body)},
			{"postData", obj{{"mimeType", "application/json"}, {"text", body}, {"params", []obj{}}}}}},
		{"response", resp},
		{"cache", obj{}},
		{"timings", obj{{"connect", -1}, {"ssl", -1}, {"send", 0.11}, {"receive", receive}, {"wait", wait}}},
		{"serverIPAddress", "127.0.0.1"},
	}
	return m.f.entry(e, body)
}

func mitmHeaders(ct string) []obj {
	return headers("content-type", ct, "cache-control", "no-cache", "date", "Tue, 16 Jun 2026 13:05:00 GMT", "server", "uvicorn")
}

func mitmproxyHAR(s *samples) {
	f := s.file("aborts/mitmproxy.har")
	m := &mitm{f: f, c: at("2026-06-16T13:05:00.000Z")}
	f.doc = func(entries []obj) obj {
		return obj{{"log", obj{{"version", "1.2"}, {"creator", obj{{"name", "mitmproxy exporthar"}, {"version", "0.1"}, {"comment", "mitmproxy version 12.1.1"}}},
			{"pages", []obj{}}, {"entries", entries}}}}
	}
	initText := initResult(0, "2025-06-18", "ledger-server", "2.0.3")
	n := m.post(0, 48.7, initRequest("2025-06-18", "acme-agent", "3.0.2"), 200, "OK",
		append(mitmHeaders("application/json"), headers("mcp-session-id", mitmSess)...), "application/json", &initText, "", 47.9, 0.8)
	s.expect(f, n, "initialize", "0", success)
	m.post(60, 4.1, notification("notifications/initialized", ""), 202, "Accepted", mitmHeaders("application/json"), "application/json", str(""), "", 4.0, 0.1)
	reconcile := func(id int, account string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"reconcile","arguments":{"account":%q},"_meta":{"progressToken":"rc-%d"}}`, account, id))
	}
	// The agent closes the stream when the user cancels ("Client
	// disconnected." in mitmproxy) and sends the cancel.
	partial := sse(progress("rc-1", 140, 2200, "matching entries"))
	n = m.post(1000, 2540.3, reconcile(1, "ACME-EU-04"), 200, "OK", mitmHeaders("text/event-stream"), "text/event-stream", &partial,
		"Client disconnected.", 12.6, 2527.6)
	m.post(3545, 5.2, cancelled(1, "cancelled by user"), 202, "Accepted", mitmHeaders("application/json"), "application/json", str(""), "", 5.1, 0.1)
	s.expect(f, n, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(false, true, "client_closed", "null")})
	// The server's worker dies after sending a 503's headers: "Server
	// disconnected." with the status: HTTP_ERROR [503].
	html := "<html><head><title>503 Service Unavail"
	n = m.post(8000, 21.4, reconcile(2, "ACME-US-11"), 503, "Service Unavailable", mitmHeaders("text/html"), "text/html", &html,
		"Server disconnected.", 21.0, 0.3)
	s.expect(f, n, "tools/call", "2", want{outcome: "HTTP_ERROR", layer: "transport", posts: 1, statuses: "[503]",
		cols: cols(false, false, "null", "null")})
	// The agent tries the same call again (an application retry after the
	// 503); the server's worker dies mid-stream and the agent cancels
	// afterwards: the cut stays the root cause.
	partial = sse(progress("rc-3", 900, 2200, "matching entries"))
	n = m.post(12000, 4410.8, reconcile(3, "ACME-US-11"), 200, "OK", mitmHeaders("text/event-stream"), "text/event-stream", &partial,
		"Server disconnected.", 11.9, 4398.5)
	m.post(16420, 4.8, cancelled(3, "cancelled by user"), 202, "Accepted", mitmHeaders("application/json"), "application/json", str(""), "", 4.7, 0.1)
	s.expect(f, n, "tools/call", "3", want{outcome: "STREAM_INCOMPLETE", layer: "transport", posts: 1, statuses: "[200]", origin: "application",
		cols: cols(false, true, "reset", "null")})
}

// --- a CDP-based recorder with _eventSourceMessages -----------------------

const studioSess = "e07f3b19-8c2d-4b6a-a5e1-2d9c4f7a1b08"

type recorder struct {
	f *file
	c clock
}

// sseMsg is one event of a stream and when it arrived (ms after t0).
type sseMsg struct {
	ms   int
	data string
}

// post writes one entry; msgs, when given, become _eventSourceMessages
// (time in seconds since the Unix epoch, as CDP's timestamps and Chrome's
// _webSocketMessages are written).
func (r *recorder) post(startMS int, total float64, body, mime, text string, msgs []sseMsg, timings obj) int {
	reqHeaders := headers("accept", "application/json, text/event-stream", "content-type", "application/json")
	if !strings.Contains(body, `"initialize"`) {
		reqHeaders = append(reqHeaders, headers("mcp-protocol-version", "2025-11-25", "mcp-session-id", studioSess)...)
	}
	status := 200
	if strings.HasPrefix(body, `{"jsonrpc":"2.0","method"`) {
		status = 202
	}
	e := obj{
		{"startedDateTime", harTime(r.c.ms(startMS), "2006-01-02T15:04:05.000Z")},
		{"time", total},
		{"request", obj{{"method", "POST"}, {"url", "https://search.acme.test/mcp"}, {"httpVersion", "h2"}, {"headers", reqHeaders},
			{"queryString", []obj{}}, {"cookies", []obj{}}, {"headersSize", -1}, {"bodySize", len(body)},
			{"postData", obj{{"mimeType", "application/json"}, {"text", body}}}}},
		{"response", obj{{"status", status}, {"statusText", ""}, {"httpVersion", "h2"}, {"headers", headers("content-type", mime)},
			{"cookies", []obj{}}, {"content", obj{{"size", len(text)}, {"mimeType", mime}, {"text", text}}}, {"redirectURL", ""},
			{"headersSize", -1}, {"bodySize", len(text)}}},
		{"cache", obj{}},
		{"timings", timings},
		{"_resourceType", "fetch"},
	}
	if msgs != nil {
		var out []obj
		for _, m := range msgs {
			sec := float64(r.c.ms(m.ms).UnixMicro()) / 1e6
			out = append(out, obj{{"time", json.Number(strconv.FormatFloat(sec, 'f', 6, 64))}, {"eventName", "message"}, {"eventId", ""}, {"data", m.data}})
		}
		e = append(e, kv{"_eventSourceMessages", out})
	}
	return r.f.entry(e, body)
}

func recTimings(wait, receive float64) obj {
	return obj{{"blocked", 0.6}, {"dns", 0}, {"connect", 0}, {"ssl", 0}, {"send", 0.2}, {"wait", wait}, {"receive", receive}}
}

func recorderHAR(s *samples) {
	f := s.file("aborts/recorder.har")
	r := &recorder{f: f, c: at("2026-06-16T15:40:00.000Z")}
	f.doc = func(entries []obj) obj {
		return obj{{"log", obj{{"version", "1.2"}, {"creator", obj{{"name", "acme-cdp-recorder"}, {"version", "0.6.2"},
			{"comment", "HAR built from Chrome DevTools Protocol Network events; event streams from Network.eventSourceMessageReceived"}}},
			{"entries", entries}}}}
	}
	n := r.post(0, 74.2, initRequest("2025-11-25", "acme-studio", "0.4.0"), "application/json",
		initResult(0, "2025-11-25", "acme-search", "2.7.0"), nil, recTimings(72.9, 0.5))
	s.expect(f, n, "initialize", "0", success)
	r.post(90, 10.3, notification("notifications/initialized", ""), "text/plain", "", nil, recTimings(9.4, 0.1))
	reindex := func(id int, index string) string {
		return request(id, "tools/call", fmt.Sprintf(`{"name":"reindex","arguments":{"index":%q},"_meta":{"progressToken":%d}}`, index, id))
	}
	// Cancelled at +2.0 s (the studio's own timeout); the server answers
	// at +2.35 s with an isError "context canceled" text on the open
	// stream. The entry, sorted by start, comes before the cancel's.
	p1, r1 := progress(1, 30, 100, "reading"), textResult(1, "reindex aborted: context canceled", true)
	n = r.post(1000, 2362.5, reindex(1, "products"), "text/event-stream", sse(p1, r1),
		[]sseMsg{{1400, p1}, {3350, r1}}, recTimings(60.1, 2301.6))
	r.post(3000, 14.6, cancelled(1, "Request timed out"), "text/plain", "", nil, recTimings(13.8, 0.1))
	s.expect(f, n, "tools/call", "1", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(true, true, "null", "null")})
	// Answered at +1.2 s; the cancel at +1.5 s crossed the answer and does
	// not count.
	p2, r2 := progress(2, 80, 100, "reading"), textResult(2, "reindexed docs: 3120 pages", false)
	n = r.post(10000, 1210.4, reindex(2, "docs"), "text/event-stream", sse(p2, r2),
		[]sseMsg{{10600, p2}, {11200, r2}}, recTimings(55.2, 1154.4))
	r.post(11500, 12.9, cancelled(2, "Request timed out"), "text/plain", "", nil, recTimings(12.1, 0.1))
	s.expect(f, n, "tools/call", "2", want{outcome: "TOOL_SUCCESS", layer: "application", posts: 1, statuses: "[200]",
		cols: cols(false, false, "null", "null")})
	// Only the progress event was recorded with its time; the result, the
	// stream's last event, is dated at the entry's end (+3.0 s), after the
	// cancel at +2.5 s.
	p3, r3 := progress(3, 10, 100, "reading"), textResult(3, "reindexed wiki: 880 pages", false)
	n = r.post(20000, 3000.0, reindex(3, "wiki"), "text/event-stream", sse(p3, r3),
		[]sseMsg{{20500, p3}}, recTimings(48.7, 2950.5))
	r.post(22500, 13.3, cancelled(3, "Request timed out"), "text/plain", "", nil, recTimings(12.5, 0.1))
	s.expect(f, n, "tools/call", "3", want{outcome: "CANCELLED", layer: "interaction", posts: 1, statuses: "[200]",
		cols: cols(true, true, "null", "null")})
}
