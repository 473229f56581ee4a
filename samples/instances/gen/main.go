// Command gen writes the wire logs of samples/instances/: a client's log
// (client.ndjson) and a server's log (server.ndjson) for the rules of who a
// request belongs to and when the same id is the same request (client
// instances without sessions, the server's view of an id POSTed again in
// a session, id conflicts). See ../README.md for what each part shows.
//
//	go run ./samples/instances/gen
//
// Run from the repository root. The output is deterministic. The
// expectations in the README are stated by hand, never computed here: this
// program only writes traffic, and checks that every line it writes is a
// wire record the decoder reads.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mcptrace/decode"
	"mcptrace/samples/internal/gentab"
	"mcptrace/schema"
)

var day = time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)

// at is a time of the day of the sample: minutes, seconds and milliseconds
// after 10:00.
func at(min, sec, msec int) time.Time {
	return day.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second + time.Duration(msec)*time.Millisecond)
}

var ts = gentab.Stamp

func s(v string) *string { return &v }

// peer is what one logger writes on each of its records.
type peer struct {
	side            schema.Side
	client, server  schema.Implementation
	conn, session   string
	version, url    string
	sessionOnHeader bool // the request carries Mcp-Session-Id (every request after initialize)
}

type logFile struct {
	name  string
	lines []string
}

func (f *logFile) add(r schema.WireRecord) { f.lines = append(f.lines, gentab.Wire(r)) }

func (p peer) base(start, end time.Time) schema.WireRecord {
	c, sv := p.client, p.server
	r := schema.WireRecord{Time: ts(start), Side: p.side, Transport: schema.TransportStreamableHTTP, Client: &c, Server: &sv,
		Connection: p.conn, SessionID: p.session, ProtocolVersion: p.version}
	if !end.IsZero() {
		r.EndTime = ts(end)
	}
	return r
}

// headers are the request headers an SDK sends with body: from
// 2025-06-18 MCP-Protocol-Version (not on initialize), in 2026-07-28 also
// Mcp-Method and Mcp-Name.
func (p peer) headers(body string) map[string]any {
	h := map[string]any{"content-type": "application/json", "accept": "application/json, text/event-stream"}
	if p.sessionOnHeader && p.session != "" {
		h["mcp-session-id"] = p.session
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(body), &m)
	if p.version != "" && m.Method != "initialize" {
		h["mcp-protocol-version"] = p.version
	}
	if p.version == "2026-07-28" && m.Method != "" {
		h["mcp-method"] = m.Method
		if m.Params.Name != "" {
			h["mcp-name"] = m.Params.Name
		}
	}
	return h
}

// post writes a POST carrying body, answered with status and a response
// body of content type ct (none when ct is empty), its stream ended as
// streamEnd says for event streams.
func (f *logFile) post(p peer, start, end time.Time, body string, status int, ct, resp string, respHeaders map[string]any, streamEnd string) {
	r := p.base(start, end)
	w := &schema.WireResponse{Status: status, ContentType: ct, Body: s(resp), Headers: respHeaders, StreamEnd: streamEnd}
	r.HTTP = &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: p.url, Headers: p.headers(body), Body: s(body)}, Response: w}
	f.add(r)
}

func (f *logFile) json(p peer, start, end time.Time, body string, status int, resp string) {
	ct := "application/json"
	if resp == "" {
		ct = ""
	}
	f.post(p, start, end, body, status, ct, resp, nil, "")
}

func (f *logFile) stream(p peer, start, end time.Time, body, streamEnd string, events ...string) {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("event: message\ndata: " + e + "\n\n")
	}
	f.post(p, start, end, body, 200, "text/event-stream", b.String(), nil, streamEnd)
}

// get writes the standalone GET event stream of a session, logged when it
// ended.
func (f *logFile) get(p peer, start, end time.Time, streamEnd string, events ...string) {
	var b bytes.Buffer
	for i, e := range events {
		fmt.Fprintf(&b, "id: %d\nevent: message\ndata: %s\n\n", i+1, e)
	}
	r := p.base(start, end)
	h := p.headers("")
	h["accept"] = "text/event-stream"
	delete(h, "content-type")
	r.HTTP = &schema.WireHTTP{Request: schema.WireRequest{Method: "GET", URL: p.url, Headers: h},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: s(b.String()), StreamEnd: streamEnd}}
	f.add(r)
}

func (f *logFile) frame(p peer, t time.Time, dir, line string) {
	r := p.base(t, time.Time{})
	r.Transport = schema.TransportStdio
	r.Stdio = &schema.WireStdio{Direction: dir, Line: line}
	f.add(r)
}

// JSON-RPC bodies, written as SDKs write them.

func request(id any, method, params string) string {
	idj, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idj, method, params)
}

func notification(method string) string { return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method) }

func result(id any, res string) string {
	idj, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, idj, res)
}

// meta2026 is the _meta every 2026-07-28 request carries.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"acme-agent","version":"4.2.0"}}`

func call2026(id any, tool, args string) string {
	return request(id, "tools/call", `{"name":"`+tool+`","arguments":`+args+`,`+meta2026+`}`)
}

func call(id any, tool, args string) string {
	return request(id, "tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
}

func text(id any, t string, complete bool) string {
	rt := ""
	if complete {
		rt = `"resultType":"complete",`
	}
	return result(id, `{`+rt+`"content":[{"type":"text","text":`+quote(t)+`}]}`)
}

func quote(v string) string { b, _ := json.Marshal(v); return string(b) }

func progress(token, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d,"total":100}}`, token, n)
}

func initialize(client schema.Implementation) string {
	return request(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client.Name+`","version":"`+client.Version+`"}}`)
}

func initialized(id int, server schema.Implementation, tools bool) string {
	caps := `{}`
	if tools {
		caps = `{"tools":{"listChanged":false}}`
	}
	return result(id, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"`+server.Name+`","version":"`+server.Version+`"}}`)
}

var (
	agent   = schema.Implementation{Name: "acme-agent", Version: "4.2.0"}
	files   = schema.Implementation{Name: "acme-files", Version: "1.4.0"}
	git     = schema.Implementation{Name: "git-tools", Version: "0.9.1"}
	search  = schema.Implementation{Name: "acme-search", Version: "3.0.2"}
	billing = schema.Implementation{Name: "acme-billing", Version: "2.4.1"}
	cli     = schema.Implementation{Name: "billing-cli", Version: "0.3.0"}
	ledger  = schema.Implementation{Name: "ledger-sync", Version: "1.0.3"}
	shop    = schema.Implementation{Name: "shop-assistant", Version: "2.1.0"}
)

const filesTools = `{"resultType":"complete","tools":[` +
	`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false}},` +
	`{"name":"read_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
	`{"name":"export_report","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
	`{"name":"search_files","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`

const billingTools = `{"tools":[` +
	`{"name":"charge_card","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false}},` +
	`{"name":"get_invoice","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
	`{"name":"get_balance","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
	`{"name":"export_ledger","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`

func discover(id int) string {
	return request(id, "server/discover", `{`+meta2026+`}`)
}

const discovered = `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{"listChanged":false}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"acme-files","version":"1.4.0"}}}`

func clientLog() *logFile {
	f := &logFile{name: "client.ndjson"}

	// 1-11: acme-agent against acme-files, 2026-07-28; the agent's runtime
	// logs neither a session (there is none) nor a connection. The process
	// exits twice and its supervisor starts it again.
	p := peer{side: schema.SideClient, client: agent, server: files, version: "2026-07-28", url: "https://files.acme.example/mcp"}
	write := call2026(2, "write_file", `{"path":"reports/q3.md","text":"# Q3\nRevenue up 4%."}`)
	f.json(p, at(0, 0, 0), at(0, 0, 45), discover(0), 200, result(0, discovered))
	f.json(p, at(0, 0, 100), at(0, 0, 160), request(1, "tools/list", `{`+meta2026+`}`), 200, result(1, filesTools))
	f.json(p, at(0, 0, 300), at(0, 0, 330), write, 503, "")
	// The process exits on the 503; the supervisor starts it again.
	f.json(p, at(0, 4, 0), at(0, 4, 41), discover(0), 200, result(0, discovered))
	f.json(p, at(0, 4, 90), at(0, 4, 150), request(1, "tools/list", `{`+meta2026+`}`), 200, result(1, filesTools))
	f.json(p, at(0, 4, 200), at(0, 4, 290), write, 200, text(2, "Wrote reports/q3.md (24 bytes)", true))
	f.stream(p, at(0, 5, 0), at(0, 9, 0), call2026(3, "export_report", `{"quarter":"Q3"}`), schema.StreamReset, progress(3, 40))
	// Started again, with the discovery cached from its last run: no
	// server/discover, ids from 0.
	f.stream(p, at(0, 30, 0), at(0, 36, 500), call2026(0, "export_report", `{"quarter":"Q3"}`), schema.StreamComplete,
		progress(0, 50), text(0, "Exported Q3 report: reports/q3.pdf", true))
	read := call2026(1, "read_file", `{"path":"reports/q3.md"}`)
	f.post(p, at(0, 37, 0), at(0, 37, 20), read, 502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>", nil, "")
	f.json(p, at(0, 37, 520), at(0, 37, 560), read, 200, text(1, "# Q3\nRevenue up 4%.", true))
	f.json(p, at(0, 38, 0), at(0, 38, 35), call2026(1, "read_file", `{"path":"reports/q2.md"}`), 200, text(1, "# Q2\nRevenue flat.", true))

	// 12-21: git-tools over stdio, 2025-11-25, one connection per server
	// process the agent starts.
	g := peer{side: schema.SideClient, client: agent, server: git, version: "2025-11-25", conn: "git-tools#1"}
	commit := call(1, "git_commit", `{"message":"Update Q3 report","paths":["reports/q3.md"]}`)
	f.frame(g, at(1, 0, 0), "c2s", initialize(agent))
	f.frame(g, at(1, 0, 120), "s2c", initialized(0, git, true))
	f.frame(g, at(1, 0, 125), "c2s", notification("notifications/initialized"))
	f.frame(g, at(1, 0, 400), "c2s", commit)
	f.frame(g, at(1, 0, 900), "stderr", "panic: runtime error: invalid memory address or nil pointer dereference")
	g.conn = "git-tools#2"
	f.frame(g, at(1, 3, 0), "c2s", initialize(agent))
	f.frame(g, at(1, 3, 110), "s2c", initialized(0, git, true))
	f.frame(g, at(1, 3, 115), "c2s", notification("notifications/initialized"))
	f.frame(g, at(1, 3, 300), "c2s", commit)
	f.frame(g, at(1, 3, 780), "s2c", text(1, "[main 4e1f2a9] Update Q3 report\n 1 file changed, 2 insertions(+)", false))

	// 22-24: two connections of one running agent to acme-files (a pool);
	// the second starts without a handshake.
	q := peer{side: schema.SideClient, client: agent, server: files, version: "2026-07-28", url: "https://files.acme.example/mcp", conn: "pool-1"}
	f.json(q, at(2, 0, 0), at(2, 0, 40), discover(0), 200, result(0, discovered))
	f.post(q, at(2, 0, 100), at(2, 0, 130), call2026(1, "search_files", `{"q":"overdue"}`), 502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>", nil, "")
	q.conn = "pool-2"
	f.json(q, at(2, 1, 0), at(2, 1, 70), call2026(2, "search_files", `{"q":"overdue"}`), 200, text(2, "2 files match", true))

	// 25-26: one id on two requests at once (connection run-q); the long
	// export's record is written when its stream ends, after the search's.
	r := peer{side: schema.SideClient, client: agent, server: files, version: "2026-07-28", url: "https://files.acme.example/mcp", conn: "run-q"}
	f.json(r, at(3, 1, 0), at(3, 1, 90), call2026(5, "search_files", `{"q":"invoice"}`), 200, text(5, "7 files match", true))
	f.stream(r, at(3, 0, 500), at(3, 9, 800), call2026(5, "export_report", `{"quarter":"Q4"}`), schema.StreamComplete,
		progress(5, 60), text(5, "Exported Q4 report: reports/q4.pdf", true))

	// 27-30: acme-search, 2025-11-25 session b41c07e2: a request answered
	// 202 whose id is taken by another request before its response comes
	// on the GET stream.
	a := peer{side: schema.SideClient, client: agent, server: search, version: "2025-11-25", url: "https://search.acme.example/mcp", session: "b41c07e2"}
	f.post(a, at(4, 0, 0), at(4, 0, 60), initialize(agent), 200, "application/json", initialized(0, search, true), map[string]any{"Mcp-Session-Id": "b41c07e2"}, "")
	a.sessionOnHeader = true
	f.json(a, at(4, 0, 200), at(4, 0, 230), call(1, "reindex", `{"scope":"all"}`), 202, "")
	f.json(a, at(4, 1, 0), at(4, 1, 80), call(1, "search", `{"q":"refund policy"}`), 200, text(1, "Refunds within 30 days", false))
	f.get(a, at(4, 0, 100), at(4, 20, 0), schema.StreamComplete, text(1, "Reindexed 18204 documents", false))

	// 31-35: acme-billing, 2025-11-25 session s-5d1e, also in the server's
	// log: the proxy loses the answer to charge_card and the SDK sends it
	// again.
	b := peer{side: schema.SideClient, client: agent, server: billing, version: "2025-11-25", url: "https://billing.acme.example/mcp", session: "s-5d1e"}
	f.post(b, at(5, 0, 0), at(5, 0, 70), initialize(agent), 200, "application/json", initialized(0, billing, true), map[string]any{"Mcp-Session-Id": "s-5d1e"}, "")
	b.sessionOnHeader = true
	f.post(b, at(5, 0, 100), at(5, 0, 110), notification("notifications/initialized"), 202, "", "", nil, "")
	f.json(b, at(5, 0, 200), at(5, 0, 260), request(1, "tools/list", `{}`), 200, result(1, billingTools))
	charge := call(2, "charge_card", `{"customer":"cus_0192","amount_eur":49}`)
	f.post(b, at(5, 2, 0), at(5, 2, 950), charge, 502, "text/html", "<html><body><h1>502 Bad Gateway</h1><p>upstream prematurely closed connection</p></body></html>", nil, "")
	f.json(b, at(5, 3, 950), at(5, 4, 520), charge, 200, text(2, "Charged 49 EUR (ch_3Q9xK2)", false))
	return f
}

func serverLog() *logFile {
	f := &logFile{name: "server.ndjson"}
	skew := 350 * time.Millisecond // the server's clock runs ahead of the agent's
	sk := func(t time.Time) time.Time { return t.Add(skew) }

	// 1-5: session s-5d1e, acme-agent (the client's lines 31-35).
	b := peer{side: schema.SideServer, client: agent, server: billing, version: "2025-11-25", url: "https://billing.acme.example/mcp", session: "s-5d1e"}
	f.post(b, sk(at(5, 0, 20)), sk(at(5, 0, 50)), initialize(agent), 200, "application/json", initialized(0, billing, true), map[string]any{"Mcp-Session-Id": "s-5d1e"}, "")
	b.sessionOnHeader = true
	f.post(b, sk(at(5, 0, 104)), sk(at(5, 0, 106)), notification("notifications/initialized"), 202, "", "", nil, "")
	f.json(b, sk(at(5, 0, 215)), sk(at(5, 0, 245)), request(1, "tools/list", `{}`), 200, result(1, billingTools))
	charge := call(2, "charge_card", `{"customer":"cus_0192","amount_eur":49}`)
	f.json(b, sk(at(5, 2, 30)), sk(at(5, 2, 880)), charge, 200, text(2, "Charged 49 EUR (ch_3Q9xK1)", false))
	f.json(b, sk(at(5, 3, 980)), sk(at(5, 4, 500)), charge, 200, text(2, "Charged 49 EUR (ch_3Q9xK2)", false))

	// 6-10: session s-9e03, billing-cli, a hand-rolled client that reuses
	// ids: 3 again after it finished, 4 again while it is open.
	c := peer{side: schema.SideServer, client: cli, server: billing, version: "2025-11-25", url: "https://billing.acme.example/mcp", session: "s-9e03"}
	f.post(c, at(6, 0, 0), at(6, 0, 30), initialize(cli), 200, "application/json", initialized(0, billing, true), map[string]any{"Mcp-Session-Id": "s-9e03"}, "")
	c.sessionOnHeader = true
	f.json(c, at(6, 1, 0), at(6, 1, 40), call(3, "get_invoice", `{"id":"INV-2291"}`), 200, text(3, "INV-2291: 120 EUR, paid", false))
	f.json(c, at(6, 2, 0), at(6, 2, 35), call(3, "get_balance", `{"customer":"cus_0192"}`), 200, text(3, "Balance: 0 EUR", false))
	f.stream(c, at(6, 10, 0), at(6, 11, 500), call(4, "export_ledger", `{"year":2025}`), schema.StreamComplete,
		progress(4, 80), text(4, "Ledger 2025: 1432 entries", false))
	f.json(c, at(6, 11, 0), at(6, 13, 0), call(4, "get_invoice", `{"id":"INV-2292"}`), 200, text(4, "INV-2292: 75 EUR, open", false))

	// 11-13: session s-77aa, ledger-sync, which replays its outbox when it
	// reconnects: the same id and params three and a half minutes later.
	d := peer{side: schema.SideServer, client: ledger, server: billing, version: "2025-11-25", url: "https://billing.acme.example/mcp", session: "s-77aa"}
	f.post(d, at(7, 0, 0), at(7, 0, 30), initialize(ledger), 200, "application/json", initialized(0, billing, true), map[string]any{"Mcp-Session-Id": "s-77aa"}, "")
	d.sessionOnHeader = true
	outbox := call(9, "charge_card", `{"customer":"cus_0555","amount_eur":15}`)
	f.json(d, at(7, 1, 0), at(7, 1, 700), outbox, 200, text(9, "Charged 15 EUR (ch_7Lm201)", false))
	f.json(d, at(10, 31, 0), at(10, 31, 650), outbox, 200, text(9, "Charged 15 EUR (ch_7Lm388)", false))

	// 14-15: shop-assistant, 2026-07-28, no session (the server logs the
	// connection): id 1 used again once the first finished.
	e := peer{side: schema.SideServer, client: shop, server: billing, version: "2026-07-28", url: "https://billing.acme.example/mcp", conn: "c-41"}
	price := request(1, "tools/call", `{"name":"get_invoice","arguments":{"id":"INV-2300"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	f.json(e, at(12, 0, 0), at(12, 0, 40), price, 200, text(1, "INV-2300: 18 EUR, open", true))
	f.json(e, at(12, 2, 0), at(12, 2, 45), price, 200, text(1, "INV-2300: 18 EUR, open", true))
	return f
}

func main() {
	dir := "samples/instances"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for _, f := range []*logFile{clientLog(), serverLog()} {
		for i, l := range f.lines {
			if _, err := decode.WireLine([]byte(l), schema.Position{Source: f.name, Line: int64(i + 1)}); err != nil {
				fmt.Fprintf(os.Stderr, "gen: %s:%d is not a wire record the decoder reads: %v\n", f.name, i+1, err)
				os.Exit(1)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), gentab.NDJSON(f.lines), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %v (run it from the repository root)\n", err)
			os.Exit(1)
		}
	}
}
