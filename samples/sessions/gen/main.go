// Command gen writes the wire logs of samples/sessions/ (stuck sessions,
// broken stream resumption, side effects done twice):
//
//	go run ./samples/sessions/gen
//
// Each record is written here by hand, scenario by scenario, with the wire
// behaviour of the servers and clients it imitates (see the README); the
// expected verdicts are stated by hand in samples/sessions/README.md, never
// computed by mcptrace. The output is deterministic. Every line is checked
// to carry the wire marker and to decode as JSON before anything is
// written, and the listing printed at the end (file, line, method, id) is
// what the README's tables point at.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mcptrace/samples/internal/gentab"
	"mcptrace/schema"
)

func main() {
	dir, err := gentab.Dir("sessions")
	if err != nil {
		gentab.Fail(err)
	}
	logs := []*wireLog{stuckClient(), unknownSessionClient(), unknownSessionServer(), resumeClient(), sideEffectsClient(), sideEffectsServer()}
	for _, l := range logs {
		if err := l.check(); err != nil {
			gentab.Fail(err)
		}
	}
	for _, l := range logs {
		if err := os.WriteFile(filepath.Join(dir, l.name), gentab.NDJSON(l.lines), 0o644); err != nil {
			gentab.Fail(err)
		}
		for _, e := range l.listing {
			fmt.Println(e)
		}
	}
}

// wireLog is one log file being written.
type wireLog struct {
	name    string
	side    schema.Side
	client  schema.Implementation
	server  schema.Implementation
	url     string
	version string
	lines   []string
	listing []string
}

// txn is one HTTP transaction as the log's side saw it.
type txn struct {
	at, end   time.Time
	session   string
	method    string          // HTTP method; POST when empty
	body      json.RawMessage // the request body; nil for a GET
	lastEvent string          // the Last-Event-ID request header
	status    int             // 0: no response (fail says why)
	ctype     string
	respHdr   map[string]any
	respBody  string
	streamEnd string
	fail      string
	server    *schema.Implementation // when the client talks to another server than the log's default
	url       string
}

func (l *wireLog) add(t txn) int {
	method := t.method
	if method == "" {
		method = "POST"
	}
	url := l.url
	if t.url != "" {
		url = t.url
	}
	hdr := map[string]any{"accept": "application/json, text/event-stream"}
	if method == "GET" {
		hdr["accept"] = "text/event-stream"
	} else {
		hdr["content-type"] = "application/json"
	}
	isInit := strings.Contains(string(t.body), `"method":"initialize"`)
	if t.session != "" && !isInit {
		hdr["mcp-session-id"] = t.session
	}
	if l.version != "2025-03-26" && !isInit {
		hdr["mcp-protocol-version"] = l.version
	}
	if t.lastEvent != "" {
		hdr["last-event-id"] = t.lastEvent
	}
	rec := schema.WireRecord{Time: stamp(t.at), EndTime: stamp(t.end), Side: l.side,
		Transport: schema.TransportStreamableHTTP, SessionID: t.session, ProtocolVersion: l.version,
		HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: method, URL: url, Headers: hdr}}}
	if l.client.Name != "" {
		c := l.client
		rec.Client = &c
	}
	srv := l.server
	if t.server != nil {
		srv = *t.server
	}
	if srv.Name != "" {
		rec.Server = &srv
	}
	if t.body != nil {
		b := string(t.body)
		rec.HTTP.Request.Body = &b
	}
	if t.status == 0 {
		rec.HTTP.Failure = &schema.WireFailure{Kind: t.fail}
	} else {
		body := t.respBody
		rec.HTTP.Response = &schema.WireResponse{Status: t.status, Headers: t.respHdr, ContentType: t.ctype, Body: &body, StreamEnd: t.streamEnd}
	}
	l.lines = append(l.lines, gentab.Wire(rec))
	n := len(l.lines)
	if m := gjsonLite(t.body); m.method != "" && m.id != "" {
		l.listing = append(l.listing, fmt.Sprintf("sessions/%s:%d %s %s", l.name, n, m.method, m.id))
	}
	return n
}

// check makes sure every line is a wire record that decodes.
func (l *wireLog) check() error {
	for i, line := range l.lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return fmt.Errorf("%s:%d: %v", l.name, i+1, err)
		}
		if m["mcptrace"] != schema.WireFormat {
			return fmt.Errorf("%s:%d: no wire marker", l.name, i+1)
		}
	}
	return nil
}

type msgInfo struct{ method, id string }

// gjsonLite reads the method and id of a request body, for the listing.
func gjsonLite(body json.RawMessage) msgInfo {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return msgInfo{}
	}
	return msgInfo{m.Method, string(m.ID)}
}

// JSON building (package gentab). Objects keep the order their keys are
// written in.
var (
	obj = gentab.Obj
	arr = gentab.Arr
)

func request(id any, method string, params json.RawMessage) json.RawMessage {
	return obj("jsonrpc", "2.0", "id", id, "method", method, "params", params)
}

func notification(method string) json.RawMessage { return obj("jsonrpc", "2.0", "method", method) }

func call(id any, tool string, args json.RawMessage) json.RawMessage {
	return request(id, "tools/call", obj("name", tool, "arguments", args))
}

// callP is a tools/call that asks for progress notifications.
func callP(id any, tool string, args json.RawMessage) json.RawMessage {
	return request(id, "tools/call", obj("name", tool, "arguments", args, "_meta", obj("progressToken", id)))
}

func result(id any, res json.RawMessage) json.RawMessage {
	return obj("jsonrpc", "2.0", "id", id, "result", res)
}

func rpcError(id any, code int, message string) json.RawMessage {
	return obj("jsonrpc", "2.0", "id", id, "error", obj("code", code, "message", message))
}

// nullIDError is a transport-level rejection: "id" null after the error,
// as the TypeScript SDK writes it.
func nullIDError(code int, message string) json.RawMessage {
	return obj("jsonrpc", "2.0", "error", obj("code", code, "message", message), "id", nil)
}

func textResult(id any, s string) json.RawMessage {
	return result(id, obj("content", arr(obj("type", "text", "text", s))))
}

func toolError(id any, s string) json.RawMessage {
	return result(id, obj("content", arr(obj("type", "text", "text", s)), "isError", true))
}

func progress(token any, p int) json.RawMessage {
	return obj("jsonrpc", "2.0", "method", "notifications/progress", "params", obj("progressToken", token, "progress", p, "total", 100))
}

// event is one SSE event: an id (optional) and data (empty for a priming
// event); retry is written when set.
type event struct {
	id    string
	retry int
	data  json.RawMessage
}

func stream(evs ...event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.id != "" {
			b.WriteString("id: " + e.id + "\n")
		}
		if e.retry > 0 {
			fmt.Fprintf(&b, "retry: %d\n", e.retry)
		}
		if e.data == nil {
			b.WriteString("data: \n\n")
			continue
		}
		b.WriteString("event: message\ndata: ")
		b.Write(e.data)
		b.WriteString("\n\n")
	}
	return b.String()
}

var stamp = gentab.Stamp

func at(hhmmss string, ms int) time.Time {
	t, err := time.Parse(time.RFC3339, "2026-11-12T"+hhmmss+"Z")
	if err != nil {
		panic(err)
	}
	return t.Add(time.Duration(ms) * time.Millisecond)
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

const jsonCT = "application/json"
const sseCT = "text/event-stream"

func initialize(l *wireLog, t time.Time, session string, srv *schema.Implementation, url string) {
	name := l.server
	if srv != nil {
		name = *srv
	}
	l.add(txn{at: t, end: t.Add(ms(42)), session: session, server: srv, url: url,
		body:   request(0, "initialize", obj("protocolVersion", l.version, "capabilities", obj(), "clientInfo", obj("name", l.client.Name, "version", l.client.Version))),
		status: 200, ctype: jsonCT, respHdr: map[string]any{"Mcp-Session-Id": session},
		respBody: string(result(0, obj("protocolVersion", l.version, "capabilities", obj("tools", obj()), "serverInfo", obj("name", name.Name, "version", name.Version))))})
	l.add(txn{at: t.Add(ms(60)), end: t.Add(ms(63)), session: session, server: srv, url: url, body: notification("notifications/initialized"), status: 202})
}

// ---------------------------------------------------------------------------
// stuck-client.ndjson: a client that carries on after its session's 404.

func stuckClient() *wireLog {
	l := &wireLog{name: "stuck-client.ndjson", side: schema.SideClient, client: schema.Implementation{Name: "desk-agent", Version: "0.9.2"},
		server: schema.Implementation{Name: "tickets-mcp", Version: "3.0.1"}, url: "https://tickets.example.net/mcp", version: "2025-06-18"}
	const s1, s2 = "5e55a001", "5e55b002"
	notFound := string(nullIDError(-32001, "Session not found"))
	create := obj("title", "VPN down in Oslo office", "priority", "high")
	initialize(l, at("10:00:00", 0), s1, nil, "")
	l.add(txn{at: at("10:00:01", 0), end: at("10:00:01", 180), session: s1, body: call(1, "list_tickets", obj("status", "open")),
		status: 200, ctype: jsonCT, respBody: string(textResult(1, "3 open tickets"))})
	// The server's idle reaper dropped the session; every later request
	// on it gets 404 "Session not found".
	l.add(txn{at: at("10:06:00", 0), end: at("10:06:00", 35), session: s1, body: call(2, "create_ticket", create),
		status: 404, ctype: jsonCT, respBody: notFound})
	l.add(txn{at: at("10:06:04", 0), end: at("10:06:04", 31), session: s1, body: call(3, "create_ticket", create),
		status: 404, ctype: jsonCT, respBody: notFound})
	l.add(txn{at: at("10:06:09", 0), end: at("10:06:09", 30), session: s1, body: call(4, "list_tickets", obj("status", "open")),
		status: 404, ctype: jsonCT, respBody: notFound})
	// A person restarts the connector: a new session, the call again.
	initialize(l, at("10:09:00", 0), s2, nil, "")
	l.add(txn{at: at("10:09:02", 0), end: at("10:09:02", 410), session: s2, body: call(1, "create_ticket", create),
		status: 200, ctype: jsonCT, respBody: string(textResult(1, "Created TCK-4412"))})
	// A background poller kept the old session id.
	l.add(txn{at: at("10:11:00", 0), end: at("10:11:00", 29), session: s1, body: call(5, "get_ticket", obj("id", "TCK-4412")),
		status: 404, ctype: jsonCT, respBody: notFound})
	return l
}

// ---------------------------------------------------------------------------
// unknown-session-client.ndjson: servers that answer an unknown session
// with something else than 404, and two answers that only look like it.

var (
	notesSrv   = schema.Implementation{Name: "notes-mcp", Version: "3.2.2"}
	gatewaySrv = schema.Implementation{Name: "events-gateway", Version: "2.4.0"}
	crmSrv     = schema.Implementation{Name: "crm-mcp", Version: "0.7.0"}
	filesSrv   = schema.Implementation{Name: "files-mcp", Version: "1.1.0"}
	browserSrv = schema.Implementation{Name: "browser-mcp", Version: "0.3.1"}
)

const (
	notesURL   = "https://notes.example.org/mcp"
	gatewayURL = "https://gw.example.org/mcp"
	crmURL     = "https://crm.example.org/mcp"
	filesURL   = "https://files.example.org/mcp"
	browserURL = "http://127.0.0.1:8931/mcp"
)

func unknownSessionClient() *wireLog {
	l := &wireLog{name: "unknown-session-client.ndjson", side: schema.SideClient, client: schema.Implementation{Name: "field-assistant", Version: "1.4.0"},
		url: notesURL, version: "2025-06-18"}
	noValid := string(nullIDError(-32000, "Bad Request: No valid session ID or not an initialize request"))
	// notes-mcp: its container restarted; sessions live in memory.
	initialize(l, at("11:00:00", 0), "aff1e301", &notesSrv, notesURL)
	l.add(txn{at: at("11:00:02", 0), end: at("11:00:02", 240), session: "aff1e301", server: &notesSrv, body: call(1, "search_notes", obj("q", "q4 roadmap")),
		status: 200, ctype: jsonCT, respBody: string(textResult(1, "2 notes match"))})
	l.add(txn{at: at("11:05:00", 0), end: at("11:05:00", 22), session: "aff1e301", server: &notesSrv, body: call(2, "search_notes", obj("q", "okr draft")),
		status: 400, ctype: jsonCT, respBody: noValid})
	l.add(txn{at: at("11:05:30", 0), end: at("11:05:30", 19), session: "aff1e301", server: &notesSrv,
		body:   call(3, "append_note", obj("note", "okr-2027", "text", "- ship offline mode")),
		status: 400, ctype: jsonCT, respBody: noValid})
	// events-gateway: an MCP binding that answers 200 with a bare
	// "Invalid Request" once its inactivity timeout dropped the session.
	initialize(l, at("11:06:00", 0), "z111a401", &gatewaySrv, gatewayURL)
	l.add(txn{at: at("11:06:01", 0), end: at("11:06:01", 95), session: "z111a401", server: &gatewaySrv, url: gatewayURL,
		body:   call(1, "publish_event", obj("topic", "orders", "key", "A-1")),
		status: 200, ctype: jsonCT, respBody: string(textResult(1, "published orders/A-1 at offset 8812"))})
	l.add(txn{at: at("11:08:30", 0), end: at("11:08:30", 12), session: "z111a401", server: &gatewaySrv, url: gatewayURL,
		body:   call(2, "publish_event", obj("topic", "orders", "key", "A-2")),
		status: 200, ctype: jsonCT, respBody: string(nullIDError(-32600, "Invalid Request"))})
	// crm-mcp: answers the request's own id with -32600.
	l.add(txn{at: at("11:09:00", 0), end: at("11:09:00", 15), session: "9c0ffee1", server: &crmSrv, url: crmURL,
		body:   call(8, "find_contact", obj("name", "Ada Lovelace")),
		status: 200, ctype: jsonCT, respBody: string(rpcError(8, -32600, "Invalid or expired session ID"))})
	// files-mcp: the client came back with a session id it had saved
	// before a restart; the log never saw that session start.
	l.add(txn{at: at("11:10:00", 0), end: at("11:10:00", 9), session: "0ld5e551", server: &filesSrv, url: filesURL,
		body:   call(1, "read_file", obj("path", "/srv/reports/2026-q3.txt")),
		status: 400, ctype: "text/plain; charset=utf-8", respBody: "Bad Request"})
	// browser-mcp: two answers that are not about the MCP session.
	initialize(l, at("11:11:00", 0), "b0a7c0de", &browserSrv, browserURL)
	l.add(txn{at: at("11:11:05", 0), end: at("11:11:05", 310), session: "b0a7c0de", server: &browserSrv, url: browserURL,
		body:   call(1, "click", obj("selector", "#checkout")),
		status: 200, ctype: jsonCT, respBody: string(rpcError(1, -32603, "Browser session not found: tab 3 was closed"))})
	l.add(txn{at: at("11:11:10", 0), end: at("11:11:10", 8), session: "b0a7c0de", server: &browserSrv, url: browserURL,
		body:   call(2, "open_page", obj("url", "https://shop.example.com/cart")),
		status: 400, ctype: jsonCT, respBody: string(nullIDError(-32000, "Bad Request: Unsupported protocol version: 2025-06-18"))})
	return l
}

// unknown-session-server.ndjson: notes-mcp's own log after its restart.
func unknownSessionServer() *wireLog {
	l := &wireLog{name: "unknown-session-server.ndjson", side: schema.SideServer, server: notesSrv, url: notesURL, version: "2025-06-18"}
	noValid := string(nullIDError(-32000, "Bad Request: No valid session ID or not an initialize request"))
	l.add(txn{at: at("11:05:00", 14), end: at("11:05:00", 16), session: "aff1e301", body: call(2, "search_notes", obj("q", "okr draft")),
		status: 400, ctype: jsonCT, respBody: noValid})
	l.add(txn{at: at("11:05:30", 13), end: at("11:05:30", 14), session: "aff1e301",
		body:   call(3, "append_note", obj("note", "okr-2027", "text", "- ship offline mode")),
		status: 400, ctype: jsonCT, respBody: noValid})
	return l
}

// ---------------------------------------------------------------------------
// resume-client.ndjson: streams cut while a report is built, and what the
// client did about it. Each run is its own session.

func resumeClient() *wireLog {
	l := &wireLog{name: "resume-client.ndjson", side: schema.SideClient, client: schema.Implementation{Name: "report-bot", Version: "5.0.1"},
		server: schema.Implementation{Name: "reports-mcp", Version: "2.2.0"}, url: "https://reports.example.com/mcp", version: "2025-11-25"}
	ping := ": ping\n\n"
	// A: the reconnect carries no Last-Event-ID.
	l.add(txn{at: at("12:00:00", 0), end: at("12:00:20", 0), session: "r35e00a1", body: callP(1, "build_report", obj("quarter", "Q3")),
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset,
		respBody: stream(event{id: "a-0", retry: 2000}, event{id: "a-1", data: progress(1, 30)})})
	l.add(txn{at: at("12:00:22", 0), end: at("12:01:22", 0), session: "r35e00a1", method: "GET",
		status: 200, ctype: sseCT, streamEnd: schema.StreamTimeout, respBody: ping})
	// B: typescript-sdk #2499. The first reconnect resumes with the id
	// it saw; that stream is cut before any event, and the second
	// reconnect forgets the id.
	l.add(txn{at: at("12:02:00", 0), end: at("12:02:15", 0), session: "r35e00b2", body: callP(1, "build_report", obj("quarter", "Q4")),
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset,
		respBody: stream(event{id: "b-0", retry: 1000}, event{id: "b-1", data: progress(1, 20)})})
	l.add(txn{at: at("12:02:16", 0), end: at("12:02:46", 0), session: "r35e00b2", method: "GET", lastEvent: "b-1",
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset, respBody: ""})
	l.add(txn{at: at("12:02:47", 500), end: at("12:03:47", 500), session: "r35e00b2", method: "GET",
		status: 200, ctype: sseCT, streamEnd: schema.StreamTimeout, respBody: ping})
	// C: the server keeps no events: both resumed streams end at once,
	// empty.
	l.add(txn{at: at("12:04:00", 0), end: at("12:04:08", 0), session: "r35e00c3", body: callP(1, "export_csv", obj("table", "invoices")),
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset,
		respBody: stream(event{id: "c-0", retry: 1000}, event{id: "c-1", data: progress(1, 55)})})
	l.add(txn{at: at("12:04:09", 0), end: at("12:04:09", 200), session: "r35e00c3", method: "GET", lastEvent: "c-1",
		status: 200, ctype: sseCT, streamEnd: schema.StreamComplete, respBody: ""})
	l.add(txn{at: at("12:04:11", 0), end: at("12:04:11", 150), session: "r35e00c3", method: "GET", lastEvent: "c-1",
		status: 200, ctype: sseCT, streamEnd: schema.StreamComplete, respBody: ""})
	// D: resumed and replayed.
	l.add(txn{at: at("12:06:00", 0), end: at("12:06:05", 0), session: "r35e00d4", body: callP(1, "export_csv", obj("table", "payments")),
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset,
		respBody: stream(event{id: "d-0", retry: 1000}, event{id: "d-1", data: progress(1, 70)})})
	l.add(txn{at: at("12:06:06", 0), end: at("12:06:09", 0), session: "r35e00d4", method: "GET", lastEvent: "d-1",
		status: 200, ctype: sseCT, streamEnd: schema.StreamComplete,
		respBody: stream(event{id: "d-2", data: textResult(1, "payments.csv: 18,204 rows")})})
	// E: a stream without event ids cannot be resumed: the GET that
	// follows is no failed resumption.
	l.add(txn{at: at("12:08:00", 0), end: at("12:08:04", 0), session: "r35e00e5", body: callP(1, "build_report", obj("quarter", "Q1")),
		status: 200, ctype: sseCT, streamEnd: schema.StreamReset, respBody: stream(event{data: progress(1, 10)})})
	l.add(txn{at: at("12:08:05", 0), end: at("12:09:05", 0), session: "r35e00e5", method: "GET",
		status: 200, ctype: sseCT, streamEnd: schema.StreamTimeout, respBody: ping})
	return l
}

// ---------------------------------------------------------------------------
// side-effects-client.ndjson and side-effects-server.ndjson: tools that
// charge cards and send mail, called again.

var paymentsSrv = schema.Implementation{Name: "payments-mcp", Version: "4.1.0"}

func toolsList(id int) json.RawMessage {
	return result(id, obj("tools", arr(
		obj("name", "charge_card", "inputSchema", obj("type", "object"), "annotations", obj("readOnlyHint", false, "destructiveHint", true, "idempotentHint", false)),
		obj("name", "refund_payment", "inputSchema", obj("type", "object"), "annotations", obj("destructiveHint", true, "idempotentHint", true)),
		obj("name", "get_balance", "inputSchema", obj("type", "object"), "annotations", obj("readOnlyHint", true)),
		obj("name", "send_receipt", "inputSchema", obj("type", "object")))))
}

func sideEffectsClient() *wireLog {
	l := &wireLog{name: "side-effects-client.ndjson", side: schema.SideClient, client: schema.Implementation{Name: "billing-agent", Version: "2.0.0"},
		server: paymentsSrv, url: "https://pay.example.com/mcp", version: "2025-06-18"}
	const s1, s2, s3 = "pay5e551", "pay5e552", "pay5e553"
	ok := func(id int, s string) string { return string(textResult(id, s)) }
	initialize(l, at("13:00:00", 0), s1, nil, "")
	l.add(txn{at: at("13:00:01", 0), end: at("13:00:01", 40), session: s1, body: request(1, "tools/list", obj()), status: 200, ctype: jsonCT, respBody: string(toolsList(1))})
	// A timeout, then the same id again: the card may be charged twice.
	c49 := obj("card", "tok_visa_4242", "amount_eur", 49)
	l.add(txn{at: at("13:00:05", 0), end: at("13:00:35", 0), session: s1, body: call(2, "charge_card", c49), fail: schema.FailureTimeout})
	l.add(txn{at: at("13:00:36", 0), end: at("13:00:36", 700), session: s1, body: call(2, "charge_card", c49), status: 200, ctype: jsonCT, respBody: ok(2, "Charged 49 EUR (ch_1001)")})
	// A 429, then the same id again: the first never ran.
	c15 := obj("card", "tok_visa_4242", "amount_eur", 15)
	l.add(txn{at: at("13:01:00", 0), end: at("13:01:00", 30), session: s1, body: call(3, "charge_card", c15), status: 429, ctype: jsonCT,
		respHdr: map[string]any{"Retry-After": "1"}, respBody: `{"error":"rate limited"}`})
	l.add(txn{at: at("13:01:01", 200), end: at("13:01:01", 800), session: s1, body: call(3, "charge_card", c15), status: 200, ctype: jsonCT, respBody: ok(3, "Charged 15 EUR (ch_1002)")})
	// A proxy's 502 after its upstream timed out, then the application
	// sends the call again under a new id.
	c80 := obj("card", "tok_mc_5454", "amount_eur", 80)
	l.add(txn{at: at("13:02:00", 0), end: at("13:02:30", 0), session: s1, body: call(4, "charge_card", c80), status: 502, ctype: "text/html",
		respBody: "<html><body><h1>502 Bad Gateway</h1></body></html>"})
	l.add(txn{at: at("13:02:32", 0), end: at("13:02:32", 600), session: s1, body: call(5, "charge_card", c80), status: 200, ctype: jsonCT, respBody: ok(5, "Charged 80 EUR (ch_1003)")})
	// Idempotent and read-only tools may run again.
	refund := obj("charge", "ch_0999")
	l.add(txn{at: at("13:03:00", 0), end: at("13:03:30", 0), session: s1, body: call(6, "refund_payment", refund), fail: schema.FailureTimeout})
	l.add(txn{at: at("13:03:31", 0), end: at("13:03:31", 400), session: s1, body: call(6, "refund_payment", refund), status: 200, ctype: jsonCT, respBody: ok(6, "Refunded ch_0999")})
	l.add(txn{at: at("13:04:00", 0), end: at("13:04:30", 0), session: s1, body: call(7, "get_balance", obj()), fail: schema.FailureTimeout})
	l.add(txn{at: at("13:04:31", 0), end: at("13:04:31", 90), session: s1, body: call(7, "get_balance", obj()), status: 200, ctype: jsonCT, respBody: ok(7, "Balance: 12,480.00 EUR")})
	// send_receipt has no annotations: not read-only, not idempotent. Its
	// tool error says it ran; the application sends it again.
	receipt := obj("charge", "ch_1003", "to", "ap@example.com")
	l.add(txn{at: at("13:05:00", 0), end: at("13:05:00", 900), session: s1, body: call(8, "send_receipt", receipt), status: 200, ctype: jsonCT,
		respBody: string(toolError(8, "SMTP relay timed out after the message was queued"))})
	l.add(txn{at: at("13:05:10", 0), end: at("13:05:10", 500), session: s1, body: call(9, "send_receipt", receipt), status: 200, ctype: jsonCT, respBody: ok(9, "Receipt sent to ap@example.com")})
	// A 401, a token refresh, the call again: the first never ran.
	c22 := obj("card", "tok_amex_0005", "amount_eur", 22)
	l.add(txn{at: at("13:06:00", 0), end: at("13:06:00", 20), session: s1, body: call(10, "charge_card", c22), status: 401, ctype: jsonCT,
		respHdr: map[string]any{"WWW-Authenticate": `Bearer error="invalid_token"`}, respBody: `{"error":"invalid_token"}`})
	l.add(txn{at: at("13:06:01", 0), end: at("13:06:01", 600), session: s1, body: call(11, "charge_card", c22), status: 200, ctype: jsonCT, respBody: ok(11, "Charged 22 EUR (ch_1004)")})
	// One call dispatched twice, 3 ms apart: both ran.
	c5 := obj("card", "tok_visa_4242", "amount_eur", 5)
	l.add(txn{at: at("13:07:00", 0), end: at("13:07:00", 500), session: s1, body: call(12, "charge_card", c5), status: 200, ctype: jsonCT, respBody: ok(12, "Charged 5 EUR (ch_1005)")})
	l.add(txn{at: at("13:07:00", 3), end: at("13:07:00", 510), session: s1, body: call(13, "charge_card", c5), status: 200, ctype: jsonCT, respBody: ok(13, "Charged 5 EUR (ch_1006)")})
	// The server restarts during a charge: the stream is cut, the session
	// is gone (404); the client initializes again and repeats the charge.
	c120 := obj("card", "tok_visa_4242", "amount_eur", 120)
	l.add(txn{at: at("13:08:00", 0), end: at("13:08:04", 0), session: s1, body: callP(14, "charge_card", c120), status: 200, ctype: sseCT,
		streamEnd: schema.StreamReset, respBody: stream(event{data: progress(14, 50)})})
	l.add(txn{at: at("13:08:06", 0), end: at("13:08:06", 30), session: s1, body: call(15, "get_balance", obj()), status: 404, ctype: jsonCT,
		respBody: string(nullIDError(-32001, "Session not found"))})
	initialize(l, at("13:08:07", 0), s2, nil, "")
	l.add(txn{at: at("13:08:08", 0), end: at("13:08:08", 40), session: s2, body: request(1, "tools/list", obj()), status: 200, ctype: jsonCT, respBody: string(toolsList(1))})
	l.add(txn{at: at("13:08:09", 0), end: at("13:08:09", 700), session: s2, body: call(2, "charge_card", c120), status: 200, ctype: jsonCT, respBody: ok(2, "Charged 120 EUR (ch_1007)")})
	// Through a proxy, logged on both sides (side-effects-server.ndjson).
	initialize(l, at("13:10:00", 0), s3, nil, "")
	l.add(txn{at: at("13:10:01", 0), end: at("13:10:01", 40), session: s3, body: request(1, "tools/list", obj()), status: 200, ctype: jsonCT, respBody: string(toolsList(1))})
	c35 := obj("card", "tok_visa_1881", "amount_eur", 35)
	l.add(txn{at: at("13:10:05", 0), end: at("13:10:05", 40), session: s3, body: call(2, "charge_card", c35), status: 503, ctype: "text/plain",
		respBody: "upstream connect error or disconnect/reset before headers. reset reason: connection failure"})
	l.add(txn{at: at("13:10:05", 300), end: at("13:10:05", 900), session: s3, body: call(2, "charge_card", c35), status: 200, ctype: jsonCT, respBody: ok(2, "Charged 35 EUR (ch_2001)")})
	c60 := obj("card", "tok_visa_1881", "amount_eur", 60)
	l.add(txn{at: at("13:10:10", 0), end: at("13:10:12", 400), session: s3, body: call(3, "charge_card", c60), status: 200, ctype: jsonCT, respBody: ok(3, "Charged 60 EUR (ch_2003)")})
	return l
}

// side-effects-server.ndjson: payments-mcp's log of session pay5e553; its
// clock runs 120 ms ahead of the client's.
func sideEffectsServer() *wireLog {
	l := &wireLog{name: "side-effects-server.ndjson", side: schema.SideServer, server: paymentsSrv, url: "https://pay.example.com/mcp", version: "2025-06-18"}
	l.client = schema.Implementation{Name: "billing-agent", Version: "2.0.0"}
	const s3 = "pay5e553"
	skew := ms(120)
	initialize(l, at("13:10:00", 0).Add(skew), s3, nil, "")
	l.add(txn{at: at("13:10:01", 10).Add(skew), end: at("13:10:01", 12).Add(skew), session: s3, body: request(1, "tools/list", obj()), status: 200, ctype: jsonCT, respBody: string(toolsList(1))})
	c35 := obj("card", "tok_visa_1881", "amount_eur", 35)
	l.add(txn{at: at("13:10:05", 320).Add(skew), end: at("13:10:05", 880).Add(skew), session: s3, body: call(2, "charge_card", c35), status: 200, ctype: jsonCT,
		respBody: string(textResult(2, "Charged 35 EUR (ch_2001)"))})
	// The proxy's upstream connection broke while the charge ran; the
	// proxy sent the request again.
	c60 := obj("card", "tok_visa_1881", "amount_eur", 60)
	l.add(txn{at: at("13:10:10", 20).Add(skew), end: at("13:10:11", 0).Add(skew), session: s3, body: call(3, "charge_card", c60), fail: schema.FailureReset})
	l.add(txn{at: at("13:10:11", 200).Add(skew), end: at("13:10:12", 380).Add(skew), session: s3, body: call(3, "charge_card", c60), status: 200, ctype: jsonCT,
		respBody: string(textResult(3, "Charged 60 EUR (ch_2003)"))})
	return l
}
