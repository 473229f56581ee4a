package correlate_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// tlog builds wire logs whose records carry stated times (a record is
// written when it ends, so the tests can put a long request's record after
// later ones), decoded by the real decoder.
type tlog struct {
	t    *testing.T
	base time.Time
	obs  []*schema.Observation
	line map[string]int64
}

func newTLog(t *testing.T) *tlog {
	return &tlog{t: t, base: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), line: map[string]int64{}}
}

// side is one logger's view: the log file, its side, and what its records
// carry.
type side struct {
	l                            *tlog
	src                          string
	side                         schema.Side
	sess, conn, ver, server, url string
}

func (l *tlog) client(src, conn, ver string) *side {
	return &side{l: l, src: src, side: schema.SideClient, conn: conn, ver: ver, server: "acme-files", url: "https://files.acme.example/mcp"}
}

func (l *tlog) server(src, sess, ver string) *side {
	return &side{l: l, src: src, side: schema.SideServer, sess: sess, ver: ver, server: "acme-files", url: "https://files.acme.example/mcp"}
}

func (s *side) record(at, dur time.Duration, r schema.WireRecord) {
	s.l.t.Helper()
	r.Format = schema.WireFormat
	r.Time = s.l.base.Add(at).Format(time.RFC3339Nano)
	r.EndTime = s.l.base.Add(at + dur).Format(time.RFC3339Nano)
	r.Side, r.SessionID, r.Connection, r.ProtocolVersion = s.side, s.sess, s.conn, s.ver
	r.Client = &schema.Implementation{Name: "acme-agent", Version: "4.0.0"}
	if s.server != "" {
		r.Server = &schema.Implementation{Name: s.server, Version: "1.2.0"}
	}
	r.Transport = schema.TransportStreamableHTTP
	if r.Stdio != nil {
		r.Transport = schema.TransportStdio
	}
	b, err := json.Marshal(r)
	if err != nil {
		s.l.t.Fatal(err)
	}
	s.l.line[s.src]++
	o, err := decode.WireLine(b, schema.Position{Source: s.src, Line: s.l.line[s.src]})
	if err != nil {
		s.l.t.Fatalf("%s:%d: %v", s.src, s.l.line[s.src], err)
	}
	s.l.obs = append(s.l.obs, &o)
}

// post logs a POST of body answered status with a JSON body resp ("" for
// an empty body).
func (s *side) post(at, dur time.Duration, body string, status int, resp string) {
	s.l.t.Helper()
	w := &schema.WireResponse{Status: status, Body: str(resp)}
	if strings.HasPrefix(resp, "{") {
		w.ContentType = "application/json"
	}
	s.record(at, dur, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: s.url, Body: str(body)}, Response: w}})
}

// stream logs a POST answered with an event stream carrying msgs, ended as
// end says.
func (s *side) stream(at, dur time.Duration, body, end string, msgs ...string) {
	s.l.t.Helper()
	s.record(at, dur, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: s.url, Body: str(body)},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: sse(msgs...), StreamEnd: end}}})
}

func (s *side) frame(at time.Duration, dir, line string) {
	s.l.t.Helper()
	s.record(at, 0, schema.WireRecord{Stdio: &schema.WireStdio{Direction: dir, Line: line}})
}

// oneRun correlates the observations with one correlator (New).
func (l *tlog) run() []*schema.Exchange {
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.IdleTimeout, c.Lateness = sampleIdle, sampleLateness
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	return out
}

// byLine returns the row of the exchange that starts at source:line.
func byLine(t *testing.T, rows []*schema.Exchange, src string, line int64) *schema.Exchange {
	t.Helper()
	var found *schema.Exchange
	for _, r := range rows {
		if r.Source == src && r.SourceLine == line {
			if found != nil {
				t.Fatalf("%s:%d: two rows", src, line)
			}
			found = r
		}
	}
	if found == nil {
		for _, r := range rows {
			t.Logf("row %s:%d %s %s", r.Source, r.SourceLine, r.Method, r.Outcome)
		}
		t.Fatalf("%s:%d: no row", src, line)
	}
	return found
}

// ids states the id-matching columns of a row.
func ids(r *schema.Exchange) string {
	return fmt.Sprintf("%s %s posts=%d %v retry=%s/%s of=%s conflict=%v", r.Method, r.Outcome, r.PostCount, r.HTTPStatuses,
		r.RetryOrigin, optS(r.RetryBasis), optS(r.RetryOf), r.IDConflict)
}

func check(t *testing.T, rows []*schema.Exchange, src string, line int64, want string) *schema.Exchange {
	t.Helper()
	r := byLine(t, rows, src, line)
	if got := ids(r); got != want {
		t.Errorf("%s:%d: %s\n%20s want %s", src, line, got, "", want)
	}
	return r
}

const (
	v2026 = "2026-07-28"
	v2025 = "2025-11-25"
)

func discover(id int) string { return req(id, "server/discover", `{}`) }

func callOf(id any, tool, args string) string {
	return req(id, "tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
}

func okDiscover(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`, id)
}

const ms = time.Millisecond

// A client process that starts again (server/discover, ids from 0) in a
// log without sessions: its call with the id and params of the previous
// process's failed call is a new exchange, an application retry in the
// next instance, not an SDK re-POST of it (what it was before instances).
func TestNewInstanceByHandshakeIsNotAnSDKRetry(t *testing.T) {
	l := newTLog(t)
	c := l.client("agent.ndjson", "", v2026)
	x := callOf(1, "write_file", `{"path":"notes.txt","text":"hello"}`)
	c.post(0, 40*ms, discover(0), 200, okDiscover(0))
	c.post(100*ms, 30*ms, x, 503, "")
	c.post(20*time.Second, 40*ms, discover(0), 200, okDiscover(0)) // the process started again
	c.post(20*time.Second+100*ms, 60*ms, x, 200, ok(1))
	rows := l.run()
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	check(t, rows, "agent.ndjson", 1, "server/discover SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	first := check(t, rows, "agent.ndjson", 2, "tools/call HTTP_ERROR posts=1 [503] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 3, "server/discover SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 4, "tools/call TOOL_SUCCESS posts=1 [200] retry=application/same_call_next_instance of="+first.ExchangeID+" conflict=false")
}

// The id sequence starting again, without a handshake (ids 0-3, then 0):
// a new instance. A long request whose record comes after later ones
// (its id lower, its start earlier) does not start one: the SDK's re-POST
// after it still joins the earlier attempt.
func TestNewInstanceByIDRestart(t *testing.T) {
	l := newTLog(t)
	c := l.client("agent.ndjson", "", v2026)
	read := func(id int, p string) string { return callOf(id, "read_file", `{"path":"`+p+`"}`) }
	x := callOf(2, "write_file", `{"path":"b.txt","text":"x"}`)
	c.post(0, 20*ms, read(0, "a"), 200, ok(0))
	c.post(100*ms, 20*ms, read(1, "b"), 200, ok(1))
	c.post(200*ms, 20*ms, x, 502, "")
	c.post(300*ms, 20*ms, read(3, "c"), 200, ok(3))
	c.post(30*time.Second, 20*ms, read(0, "d"), 200, ok(0)) // 0 again: a new process
	c.post(30*time.Second+100*ms, 20*ms, read(1, "e"), 200, ok(1))
	c.post(30*time.Second+200*ms, 20*ms, x, 200, ok(2))
	rows := l.run()
	first := check(t, rows, "agent.ndjson", 3, "tools/call HTTP_ERROR posts=1 [502] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 7, "tools/call TOOL_SUCCESS posts=1 [200] retry=application/same_call_next_instance of="+first.ExchangeID+" conflict=false")
	for _, line := range []int64{5, 6} {
		check(t, rows, "agent.ndjson", line, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	}

	// The long request's record after later ones.
	l = newTLog(t)
	c = l.client("agent.ndjson", "", v2026)
	y := callOf(2, "write_file", `{"path":"b.txt","text":"y"}`)
	c.post(0, 20*ms, read(0, "a"), 200, ok(0))
	c.post(200*ms, 20*ms, y, 503, "")
	c.post(300*ms, 20*ms, read(3, "c"), 200, ok(3))
	c.stream(100*ms, 2*time.Second, read(1, "big"), schema.StreamComplete, ok(1)) // started before ids 2 and 3
	c.post(2500*ms, 20*ms, y, 200, ok(2))                                         // the SDK's re-POST of id 2
	rows = l.run()
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	check(t, rows, "agent.ndjson", 2, "tools/call TOOL_SUCCESS posts=2 [503 200] retry=sdk/same_id of=- conflict=false")
}

// The same id POSTed again with the same params right after it failed
// stays an SDK re-POST, also when other requests went out between (the id
// is then lower than the latest); ordinary 2026-07-28 reuse of a finished
// id for another call is a new exchange and no retry, whether the first
// succeeded or failed.
func TestSDKRePostAndOrdinaryReuseKeepTheirMeaning(t *testing.T) {
	l := newTLog(t)
	c := l.client("agent.ndjson", "run-1", v2026)
	x := callOf(1, "search", `{"q":"invoices"}`)
	c.post(0, 20*ms, x, 503, "")
	c.post(10*ms, 30*ms, callOf(2, "search", `{"q":"refunds"}`), 200, ok(2))
	c.post(1*time.Second, 30*ms, x, 200, ok(1))
	c.post(2*time.Second, 30*ms, callOf(1, "search", `{"q":"credit notes"}`), 200, ok(1))
	c.post(3*time.Second, 30*ms, callOf(3, "search", `{"q":"orders"}`), 502, "")
	c.post(4*time.Second, 30*ms, callOf(3, "search", `{"q":"returns"}`), 200, ok(3))
	rows := l.run()
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	check(t, rows, "agent.ndjson", 1, "tools/call TOOL_SUCCESS posts=2 [503 200] retry=sdk/same_id of=- conflict=false")
	check(t, rows, "agent.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 4, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 5, "tools/call HTTP_ERROR posts=1 [502] retry=none/- of=- conflict=false")
	check(t, rows, "agent.ndjson", 6, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
}

// A different request taking the id of one still open is flagged, on the
// row that comes second in the log, in either record order; a 202 in
// flight, a stdio request unanswered and a cut pre-2026 stream are open,
// a failed attempt is not; the same request again never conflicts; a new
// instance does not conflict with the previous one's requests; a
// server's log without sessions or connections is not checked.
func TestIDConflict(t *testing.T) {
	long := callOf(1, "export", `{"year":2025}`)
	short := callOf(1, "search", `{"q":"x"}`)
	for _, order := range []string{"start order", "end order"} {
		t.Run(order, func(t *testing.T) {
			l := newTLog(t)
			c := l.client("agent.ndjson", "run-1", v2026)
			if order == "start order" { // a HAR file: entries by their start
				c.stream(0, 5*time.Second, long, schema.StreamComplete, ok(1))
				c.post(1*time.Second, 100*ms, short, 200, ok(1))
			} else { // a wire log: records when they end
				c.post(1*time.Second, 100*ms, short, 200, ok(1))
				c.stream(0, 5*time.Second, long, schema.StreamComplete, ok(1))
			}
			rows := l.run()
			check(t, rows, "agent.ndjson", 1, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
			check(t, rows, "agent.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=true")
		})
	}
	t.Run("202 in flight, 2025 session", func(t *testing.T) {
		l := newTLog(t)
		c := l.client("agent.ndjson", "", v2025)
		c.sess = "s-1"
		c.post(0, 10*ms, callOf(5, "export", `{}`), 202, "")
		c.post(1*time.Second, 10*ms, callOf(5, "export", `{}`), 202, "") // the same request: an SDK re-POST
		c.post(2*time.Second, 10*ms, callOf(5, "search", `{"q":"y"}`), 200, ok(5))
		rows := l.run()
		check(t, rows, "agent.ndjson", 1, "tools/call NO_RESPONSE posts=2 [202 202] retry=sdk/same_id of=- conflict=false")
		check(t, rows, "agent.ndjson", 3, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=true")
	})
	t.Run("cut stream before 2026 is open, a failure is not", func(t *testing.T) {
		l := newTLog(t)
		c := l.client("agent.ndjson", "", v2025)
		c.sess = "s-2"
		c.stream(0, 1*time.Second, callOf(7, "export", `{}`), schema.StreamReset)
		c.post(2*time.Second, 10*ms, callOf(7, "search", `{"q":"z"}`), 200, ok(7))
		c.post(3*time.Second, 10*ms, callOf(8, "export", `{}`), 503, "")
		c.post(4*time.Second, 10*ms, callOf(8, "search", `{"q":"w"}`), 200, ok(8))
		rows := l.run()
		check(t, rows, "agent.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=true")
		check(t, rows, "agent.ndjson", 4, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	})
	t.Run("stdio", func(t *testing.T) {
		l := newTLog(t)
		c := l.client("agent.ndjson", "stdio-1", v2025)
		c.frame(0, "c2s", callOf(3, "export", `{}`))
		c.frame(1*time.Second, "c2s", callOf(3, "search", `{"q":"v"}`))
		c.frame(2*time.Second, "s2c", ok(3))
		rows := l.run()
		check(t, rows, "agent.ndjson", 2, "tools/call TOOL_SUCCESS posts=0 [] retry=none/- of=- conflict=true")
		check(t, rows, "agent.ndjson", 1, "tools/call NO_RESPONSE posts=0 [] retry=none/- of=- conflict=false")
	})
	t.Run("new instance", func(t *testing.T) {
		l := newTLog(t)
		c := l.client("agent.ndjson", "stdio-2", v2025)
		init := req(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acme-agent","version":"4.0.0"}}`)
		initOK := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"acme-files","version":"1.2.0"}}}`
		c.frame(0, "c2s", init)
		c.frame(10*ms, "s2c", initOK)
		c.frame(100*ms, "c2s", callOf(1, "export", `{}`)) // never answered: the server died
		c.frame(5*time.Second, "c2s", init)               // the client starts it again
		c.frame(5*time.Second+10*ms, "s2c", initOK)
		c.frame(5*time.Second+100*ms, "c2s", callOf(1, "search", `{"q":"u"}`))
		c.frame(5*time.Second+200*ms, "s2c", ok(1))
		rows := l.run()
		check(t, rows, "agent.ndjson", 6, "tools/call TOOL_SUCCESS posts=0 [] retry=none/- of=- conflict=false")
		check(t, rows, "agent.ndjson", 3, "tools/call NO_RESPONSE posts=0 [] retry=none/- of=- conflict=false")
	})
	t.Run("server log without sessions or connections", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "", v2026)
		s.post(1*time.Second, 100*ms, short, 200, ok(1)) // two clients, both at id 1
		s.stream(0, 5*time.Second, long, schema.StreamComplete, ok(1))
		for _, r := range l.run() {
			if r.IDConflict {
				t.Errorf("%s:%d flagged", r.Source, r.SourceLine)
			}
		}
	})
}

// The server's side of a session before 2026-07-28: the same id and params
// POSTed again after the server answered is another attempt of the same
// request (one row, both attempts), within SameIDWindow; after it, a new
// row that says it repeats the first. Other params: a new exchange, an id
// conflict when the first was open. 2026-07-28 keeps id reuse.
func TestServerSameIDInASession(t *testing.T) {
	x := callOf(4, "charge_card", `{"card":"tok_visa_4242","amount_eur":12}`)
	charged := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Charged 12 EUR"}]}}`
	t.Run("within the window", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, x, 200, charged)
		s.post(31*time.Second, 700*ms, x, 200, charged)
		rows := l.run()
		if len(rows) != 1 {
			t.Fatalf("%d rows, want 1", len(rows))
		}
		r := check(t, rows, "server.ndjson", 1, "tools/call TOOL_SUCCESS posts=2 [200 200] retry=sdk/same_id of=- conflict=false")
		if r.LatencyMS == nil || *r.LatencyMS != 31700 {
			t.Errorf("latency %v, want from the first attempt to the end of the last", r.LatencyMS)
		}
	})
	t.Run("a failed attempt then an answered one", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, x, 200, charged)
		s.post(10*time.Second, 10*ms, x, 500, "")
		s.post(20*time.Second, 700*ms, x, 200, charged)
		rows := l.run()
		check(t, rows, "server.ndjson", 1, "tools/call TOOL_SUCCESS posts=3 [200 500 200] retry=sdk/same_id of=- conflict=false")
	})
	t.Run("after the window", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, x, 200, charged)
		s.post(5*time.Minute, 700*ms, x, 200, charged)
		rows := l.run()
		first := check(t, rows, "server.ndjson", 1, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
		check(t, rows, "server.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=sdk/same_id of="+first.ExchangeID+" conflict=false")
	})
	t.Run("other params", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, x, 200, charged)
		s.post(2*time.Second, 100*ms, callOf(4, "get_balance", `{}`), 200, ok(4)) // after the first was answered
		s.stream(5*time.Second, 3*time.Second, callOf(6, "export", `{}`), schema.StreamComplete, ok(6))
		s.post(6*time.Second, 100*ms, callOf(6, "get_balance", `{}`), 200, ok(6)) // while 6 was open
		rows := l.run()
		if len(rows) != 4 {
			t.Fatalf("%d rows, want 4", len(rows))
		}
		check(t, rows, "server.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
		check(t, rows, "server.ndjson", 4, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=true")
	})
	t.Run("2026-07-28 reuses ids", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server.ndjson", "", v2026)
		s.conn = "conn-3"
		s.post(0, 800*ms, x, 200, charged)
		s.post(31*time.Second, 700*ms, x, 200, charged)
		rows := l.run()
		check(t, rows, "server.ndjson", 1, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
		check(t, rows, "server.ndjson", 2, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
	})
	t.Run("a repeat in another log does not join", func(t *testing.T) {
		l := newTLog(t)
		s := l.server("server-a.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, x, 200, charged)
		s2 := l.server("server-b.ndjson", "sess-9", v2025)
		s2.post(31*time.Second, 700*ms, x, 200, charged)
		rows := l.run()
		first := check(t, rows, "server-a.ndjson", 1, "tools/call TOOL_SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
		check(t, rows, "server-b.ndjson", 1, "tools/call TOOL_SUCCESS posts=1 [200] retry=sdk/same_id of="+first.ExchangeID+" conflict=false")
	})
}

// A held server row is written once its log's time is past SameIDWindow,
// not at the end of its conversation: at the Mark after a record of the
// log past it, whether of its own conversation or another.
func TestServerRowsWaitOnlyTheWindow(t *testing.T) {
	for _, other := range []string{"sess-9", "sess-10"} {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, callOf(4, "get_balance", `{}`), 200, ok(4))
		s.sess = other
		s.post(3*time.Minute, 100*ms, callOf(5, "get_balance", `{}`), 200, ok(5))
		var out []*schema.Exchange
		c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
		c.IdleTimeout = sampleIdle
		c.Add(l.obs[0])
		if len(out) != 0 {
			t.Fatalf("%s: the server row was written before its window passed", other)
		}
		c.Add(l.obs[1])
		if len(out) != 1 || out[0].SourceLine != 1 {
			t.Fatalf("%s: after a record 3 minutes later: %d rows written", other, len(out))
		}
		c.Flush()
		if len(out) != 2 {
			t.Fatalf("%s: %d rows after Flush", other, len(out))
		}
	}
}

// Merged, the client's view (a proxy's 502, then the SDK's re-POST) gets
// both of the server's attempts: server_post_count 2, server_http_statuses
// [200 200].
func TestServerAttemptsInTheMergedRow(t *testing.T) {
	l := newTLog(t)
	c := l.client("client.ndjson", "", v2025)
	c.sess = "sess-7"
	s := l.server("server.ndjson", "sess-7", v2025)
	x := callOf(2, "send_invoice", `{"customer":"acme","amount_eur":120}`)
	sent := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Invoice INV-2291 sent"}]}}`
	s.post(1200*ms, 500*ms, x, 200, sent)
	c.post(1000*ms, 30*time.Second, x, 502, "<html><body>502 Bad Gateway</body></html>")
	s.post(32200*ms, 500*ms, x, 200, sent)
	c.post(32000*ms, 900*ms, x, 200, sent)
	var rows []schema.Exchange
	for _, r := range l.run() {
		rows = append(rows, *r)
	}
	merged := correlate.MergeViews(rows)
	if len(merged) != 1 {
		for _, r := range merged {
			t.Logf("%s %s:%d %s", r.Sides, r.Source, r.SourceLine, ids(&r))
		}
		t.Fatalf("%d rows, want one merged", len(merged))
	}
	m := merged[0]
	if m.Sides != "both" || m.PostCount != 2 || fmt.Sprint(m.HTTPStatuses) != "[502 200]" || m.ServerPostCount == nil || *m.ServerPostCount != 2 ||
		fmt.Sprint(m.ServerStatuses) != "[200 200]" || m.RetryOrigin != "sdk" {
		t.Errorf("merged: sides %s posts %d %v server posts %v %v retry %s", m.Sides, m.PostCount, m.HTTPStatuses, m.ServerPostCount, m.ServerStatuses, m.RetryOrigin)
	}
}

// A later connection of a client's log without sessions that begins with
// a handshake is the client started again: its repeat of the call that
// failed in the earlier connection is an application retry
// (same_call_next_instance). Not when it starts without a handshake, when
// it overlaps the earlier one, or when it goes to another server.
func TestNextInstanceAcrossConnections(t *testing.T) {
	x := callOf(1, "write_file", `{"path":"notes.txt","text":"hello"}`)
	for _, tc := range []struct {
		name, server string
		handshake    bool
		at           time.Duration
		want         string
	}{
		{"restart", "acme-files", true, 20 * time.Second, "application/same_call_next_instance"},
		{"no handshake", "acme-files", false, 20 * time.Second, "none/-"},
		{"overlapping", "acme-files", true, 50 * ms, "none/-"},
		{"another server", "acme-notes", true, 20 * time.Second, "none/-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newTLog(t)
			a := l.client("agent.ndjson", "conn-a", v2026)
			b := l.client("agent.ndjson", "conn-b", v2026)
			b.server = tc.server
			a.post(0, 40*ms, discover(0), 200, okDiscover(0))
			a.post(100*ms, 30*ms, x, 503, "")
			n := int64(3)
			if tc.handshake {
				b.post(tc.at, 40*ms, discover(0), 200, okDiscover(0))
				n++
			}
			b.post(tc.at+100*ms, 60*ms, x, 200, ok(1))
			rows := l.run()
			first := byLine(t, rows, "agent.ndjson", 2)
			of := "-"
			if tc.want != "none/-" {
				of = first.ExchangeID
			}
			check(t, rows, "agent.ndjson", n, "tools/call TOOL_SUCCESS posts=1 [200] retry="+tc.want+" of="+of+" conflict=false")
			if tc.handshake {
				check(t, rows, "agent.ndjson", 3, "server/discover SUCCESS posts=1 [200] retry=none/- of=- conflict=false")
			}
		})
	}
}

// instanceTraffic is a mix of the cases above in one run: a client log
// whose process starts again, a second connection that starts again, and
// a server log of a session with a same-id repeat inside and outside the
// window, interleaved with other sessions of that log.
func instanceTraffic(t *testing.T) []*schema.Observation {
	l := newTLog(t)
	c := l.client("agent.ndjson", "", v2026)
	x := callOf(1, "write_file", `{"path":"notes.txt","text":"hello"}`)
	c.post(0, 40*ms, discover(0), 200, okDiscover(0))
	c.post(100*ms, 30*ms, x, 503, "")
	c.post(200*ms, 30*ms, callOf(2, "read_file", `{"path":"a"}`), 200, ok(2))
	c.post(20*time.Second, 40*ms, discover(0), 200, okDiscover(0))
	c.post(20*time.Second+100*ms, 60*ms, x, 200, ok(1))
	b := l.client("agent.ndjson", "conn-b", v2026)
	b.post(21*time.Second, 30*ms, callOf(7, "read_file", `{"path":"z"}`), 502, "")
	b.conn = "conn-c"
	b.post(40*time.Second, 40*ms, discover(0), 200, okDiscover(0))
	b.post(40*time.Second+100*ms, 30*ms, callOf(1, "read_file", `{"path":"z"}`), 200, ok(1))
	charge := callOf(4, "charge_card", `{"card":"tok_visa_4242","amount_eur":12}`)
	charged := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Charged 12 EUR"}]}}`
	type srec struct {
		at         time.Duration
		sess, body string
		resp       string
	}
	var srv []srec
	for i, sess := range []string{"sess-1", "sess-2", "sess-3"} {
		at := time.Duration(i) * 50 * time.Second
		srv = append(srv, srec{at, sess, charge, charged},
			srec{at + 10*time.Second, sess, callOf(5, "get_balance", `{}`), ok(5)},
			srec{at + 30*time.Second, sess, charge, charged}, // joins the first
			srec{at + 3*time.Minute, sess, charge, charged})  // too late: a row of its own
	}
	slices.SortStableFunc(srv, func(a, b srec) int { return cmp.Compare(a.at, b.at) })
	for _, r := range srv {
		s := l.server("server.ndjson", r.sess, v2025)
		s.post(r.at, 700*ms, r.body, 200, r.resp)
	}
	// Interleave the logs by time, as ingest reads wire logs side by side.
	slices.SortStableFunc(l.obs, func(a, b *schema.Observation) int { return a.EndOrStart().Compare(b.EndOrStart()) })
	return l.obs
}

// Rows do not depend on the number of shards nor, in content, on where the
// Marks fall: the instance rules, the Linker's link across connections and
// the server rows held for a same-id repeat.
func TestInstancesAndSameIDShardIndependent(t *testing.T) {
	project := func(rows []schema.Exchange) []string {
		var out []string
		for i := range rows {
			out = append(out, fmt.Sprintf("%s:%d %s", rows[i].Source, rows[i].SourceLine, ids(&rows[i])))
		}
		slices.Sort(out)
		return out
	}
	var want []string
	for _, round := range []int{1, 3, 1 << 20} {
		var first []schema.Exchange
		for _, n := range []int{1, 2, 4, 7} {
			rows, _ := shardedRun(t, instanceTraffic(t), n, round, false, 0)
			if n == 1 {
				first = rows
				if want == nil {
					want = project(rows)
				} else if got := project(rows); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d: rows differ from round 1:\n%s\nwant\n%s", round, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				continue
			}
			if !reflect.DeepEqual(rows, first) {
				t.Fatalf("round %d, %d shards: rows differ from 1 shard:\n%s\nwant\n%s", round, n, strings.Join(project(rows), "\n"), strings.Join(project(first), "\n"))
			}
		}
	}
	// What the rows say, so that the comparison above compares something.
	for _, w := range []string{
		"agent.ndjson:5 tools/call TOOL_SUCCESS posts=1 [200] retry=application/same_call_next_instance",
		"agent.ndjson:8 tools/call TOOL_SUCCESS posts=1 [200] retry=application/same_call_next_instance",
		"server.ndjson:1 tools/call TOOL_SUCCESS posts=2 [200 200] retry=sdk/same_id of=- conflict=false",
	} {
		if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("no row %s in\n%s", w, strings.Join(want, "\n"))
		}
	}
	late := 0
	for _, s := range want {
		if strings.HasPrefix(s, "server.ndjson:") && strings.Contains(s, "retry=sdk/same_id of=") && !strings.Contains(s, "of=- ") {
			late++
		}
	}
	if late != 3 {
		t.Errorf("%d late repeats with retry_of, want 3:\n%s", late, strings.Join(want, "\n"))
	}
}

// TestInstancesSampleLinks checks the links table of
// samples/instances/README.md: the line each retry_of points at.
func TestInstancesSampleLinks(t *testing.T) {
	b, err := os.ReadFile("../samples/instances/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, "<!-- links:begin -->"), strings.Index(text, "<!-- links:end -->")
	if i < 0 || j < i {
		t.Fatal("no links table in samples/instances/README.md")
	}
	obs := decodeSamples(t, []string{"../samples/instances/client.ndjson", "../samples/instances/server.ndjson"})
	rows := perLog(obs)
	lineOf := map[string]int64{}
	for _, r := range rows {
		lineOf[r.ExchangeID] = r.SourceLine
	}
	n := 0
	for _, l := range strings.Split(text[i:j], "\n") {
		c := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		if len(c) != 4 || strings.Contains(l, "---") || strings.Contains(l, "retry_of") {
			continue
		}
		for k := range c {
			c[k] = strings.TrimSpace(c[k])
		}
		line, _ := strconv.ParseInt(c[1], 10, 64)
		var found *schema.Exchange
		for k := range rows {
			r := &rows[k]
			if "instances/"+filepath.Base(r.Source) == c[0] && r.SourceLine == line && optS(r.JSONRPCID) == c[2] {
				found = r
			}
		}
		if found == nil {
			t.Errorf("%s:%d id %s: no such exchange", c[0], line, c[2])
			continue
		}
		got := "none"
		if found.RetryOf != nil {
			got = strconv.FormatInt(lineOf[*found.RetryOf], 10)
		}
		if got != c[3] {
			t.Errorf("%s:%d id %s: retry_of line %s, want %s", c[0], line, c[2], got, c[3])
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d rows in the links table", n)
	}
}

// A held server row waits for its log's time to pass its window; when its
// log stands still, its input ending (Clock.End) writes it at the next
// Mark, and so does the run's time going past the window while the log
// stands still longer than it (a server stream with nothing more to say
// while the client's goes on), not before.
func TestHeldRowsOfALogThatStandsStill(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration // when another log's record comes
		end   bool          // the server log's input ends
		want  int           // rows written before Finish
	}{
		{"another log 1 minute on", time.Minute, false, 1},
		{"the input ended", time.Minute, true, 2},
		{"another log 10 minutes on", 10 * time.Minute, false, 2},
	} {
		l := newTLog(t)
		s := l.server("server.ndjson", "sess-9", v2025)
		s.post(0, 800*ms, callOf(4, "get_balance", `{}`), 200, ok(4))
		c := l.client("agent.ndjson", "run-1", v2026)
		c.post(tc.after, 50*ms, callOf(1, "read_file", `{"path":"a"}`), 200, ok(1))
		clock := correlate.NewClock()
		rows := 0
		sh := correlate.NewShard(func(it correlate.Item) {
			if it.IsRow() {
				rows++
			}
		})
		sh.IdleTimeout, sh.Lateness = sampleIdle, sampleLateness
		for i, o := range l.obs {
			o.Seq = int64(i + 1)
			clock.Stamp(o)
			if tc.end && i == 0 {
				clock.End("server.ndjson")
			}
			sh.Add(o)
			sh.Advance(clock.Mark(o.Seq))
		}
		if rows != tc.want {
			t.Errorf("%s: %d rows before Finish, want %d", tc.name, rows, tc.want)
		}
		sh.Finish(clock.Mark(int64(len(l.obs))))
		if rows != 2 {
			t.Errorf("%s: %d rows after Finish", tc.name, rows)
		}
	}
}

// BenchmarkServerSessionHold: a server's log of sessions of 10 calls, 100 ms
// apart, before 2026-07-28, whose rows wait SameIDWindow for a same-id
// repeat. The peak live heap is what 2 minutes of rows (about 1,200) and
// the open sessions hold, so it stays flat as the input doubles.
func BenchmarkServerSessionHold(b *testing.B) {
	for _, n := range []int{100_000, 200_000} {
		b.Run(fmt.Sprintf("exchanges=%d", n), func(b *testing.B) {
			for b.Loop() {
				rows := 0
				c := correlate.New(func(*schema.Exchange) { rows++ })
				c.IdleTimeout = time.Minute
				t0 := time.Date(2026, 10, 17, 0, 0, 0, 0, time.UTC)
				var peak uint64
				var ms runtime.MemStats
				for i := 0; i < n; i++ {
					at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
					id := strconv.Itoa(i % 10)
					o := &schema.Observation{Pos: schema.Position{Source: "bench", Line: int64(i + 1)}, Side: schema.SideServer, ProtocolVersion: "2025-11-25",
						Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at.Add(20 * time.Millisecond), SessionID: "sess-" + strconv.Itoa(i/10), Format: "wire"}
					o.HTTP = &schema.HTTPEvidence{Method: "POST", Responded: true, Status: 200, ContentType: "application/json", BodyRecorded: true}
					o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"search","arguments":{"q":"`+strconv.Itoa(i)+`"}}}`), schema.InRequestBody, 0)
					o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"ok"}]}}`), schema.InResponseBody, 0)
					c.Add(o)
					if i%50_000 == 0 {
						runtime.GC()
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
					}
				}
				c.Flush()
				if rows != n {
					b.Fatalf("%d rows for %d exchanges", rows, n)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			}
		})
	}
}

// A server row held for a same-id repeat still merges with its client row
// when the client's log moves on by much more than the merge window while
// the server's stands still, however the input is cut into rounds (the
// server's record and the client's next one in the same round or not).
func TestHeldServerRowMergesWhenTheClientGoesOn(t *testing.T) {
	build := func() []*schema.Observation {
		l := newTLog(t)
		c := l.client("client.ndjson", "", v2025)
		c.sess = "sess-4"
		s := l.server("server.ndjson", "sess-4", v2025)
		x := callOf(3, "get_invoice", `{"id":"INV-1"}`)
		c.post(0, 300*ms, x, 200, ok(3))
		s.post(100*ms, 100*ms, x, 200, ok(3))
		c.sess = "sess-5"
		c.post(time.Hour, 50*ms, callOf(1, "get_invoice", `{"id":"INV-2"}`), 200, ok(1))
		s.sess = "sess-6" // the server's log goes on only after that: it has not ended
		s.post(time.Hour+time.Second, 50*ms, callOf(1, "get_balance", `{}`), 200, ok(1))
		return l.obs
	}
	for _, round := range []int{1, 2, 3} {
		rows, _ := shardedRun(t, build(), 1, round, true, 10*time.Minute)
		var merged []string
		for _, r := range rows {
			merged = append(merged, fmt.Sprintf("%s:%d %s", r.Source, r.SourceLine, r.Sides))
		}
		if len(rows) != 3 || !slices.ContainsFunc(rows, func(r schema.Exchange) bool { return r.Sides == "both" && r.SourceLine == 1 }) {
			t.Errorf("round %d: %v, want the first call merged", round, merged)
		}
	}
}
