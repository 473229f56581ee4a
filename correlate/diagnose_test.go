package correlate_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// Tests of session_stuck, resume_problem and duplicate_side_effect
// (diagnose.go). Every scenario runs through the one-goroutine correlator
// (New) and through the sharded wiring with 1, 2, 4 and 7 shards: the rows
// must be the same whatever the number of shards.

// diagRun correlates a log with New and with every shard count, checks
// that they agree row for row, and returns New's rows by JSON-RPC id (the
// scenarios give each request of interest its own id).
func diagRun(t *testing.T, l *logb) map[string]*schema.Exchange {
	t.Helper()
	got, _ := run(l)
	byExID := map[string]schema.Exchange{}
	for _, g := range got {
		byExID[g.ExchangeID] = *g
	}
	for _, round := range []int{1, 3} {
		for _, n := range []int{1, 2, 4, 7} {
			rows, _ := shardedRun(t, l.obs, n, round, false, 0)
			if len(rows) != len(got) {
				t.Fatalf("%d shards, round %d: %d rows, New %d", n, round, len(rows), len(got))
			}
			for i := range rows {
				want, ok := byExID[rows[i].ExchangeID]
				if !ok || !reflect.DeepEqual(diagCols(&rows[i]), diagCols(&want)) {
					t.Fatalf("%d shards, round %d: row %s\n got %v\nwant %v", n, round, rows[i].ExchangeID, diagCols(&rows[i]), diagCols(&want))
				}
			}
		}
	}
	return byID(got)
}

// diagCols are the columns these rules decide, and those they sit beside.
func diagCols(r *schema.Exchange) string {
	return strings.Join([]string{r.Method, optS(r.JSONRPCID), r.Outcome, fmt.Sprint(r.SessionStuck), optS(r.SessionStuckReason),
		optS(r.ResumeProblem), fmt.Sprint(r.DuplicateSideEffect), fmt.Sprint(r.RetryUnsafe), r.RetryOrigin, optS(r.RetryBasis),
		fmt.Sprint(r.SessionExpired), optB(r.Reinitialized), fmt.Sprint(r.HTTPStatuses)}, " ")
}

const (
	sessionNotFound = `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
	initParams      = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}`
	initResult      = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"srv","version":"1"}}}`
)

func stuck(r *schema.Exchange) string {
	if !r.SessionStuck {
		if r.SessionStuckReason != nil {
			return "reason without flag: " + *r.SessionStuckReason
		}
		return "-"
	}
	return optS(r.SessionStuckReason)
}

func TestStuckOnADeadSession(t *testing.T) {
	l := newLog(t)
	l.sess = "s1"
	call := func(id int, tool string) string { return req(id, "tools/call", `{"name":"`+tool+`","arguments":{}}`) }
	l.post(call(1, "list"), 200, "application/json", str(ok(1)))
	l.post(call(2, "create"), 404, "application/json", str(sessionNotFound))
	l.post(call(3, "create"), 404, "application/json", str(sessionNotFound)) // carries on: stuck
	l.post(call(4, "list"), 404, "", str(""))                                // stuck, whatever the body
	// A replica that knows the session answers: it was not dead after all.
	l.post(call(5, "list"), 200, "application/json", str(ok(5)))
	l.post(call(6, "list"), 404, "application/json", str(sessionNotFound)) // a first 404 again
	l.post(call(7, "list"), 404, "application/json", str(sessionNotFound))
	// A request sent before the 404 arrived (logged after it: records
	// follow their end) is not stuck: the client could not know.
	l2 := newLog(t)
	l2.sess = "s2"
	l2.post(call(1, "create"), 404, "application/json", str(sessionNotFound))
	l2.clock = l2.clock.Add(-12 * time.Millisecond)
	add(l2, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(call(2, "list"))},
		Response: &schema.WireResponse{Status: 404, ContentType: "application/json", Body: str(sessionNotFound)}}})
	x := diagRun(t, l)
	for id, w := range map[string]string{"1": "-", "2": "-", "3": "no_reinitialize", "4": "no_reinitialize", "5": "-", "6": "-", "7": "no_reinitialize"} {
		if g := stuck(x[id]); g != w {
			t.Errorf("id %s: stuck %s, want %s", id, g, w)
		}
	}
	if !x["2"].SessionExpired || !x["3"].SessionExpired {
		t.Errorf("the 404s are session_expired too")
	}
	x2 := diagRun(t, l2)
	if stuck(x2["1"]) != "-" || stuck(x2["2"]) != "-" {
		t.Errorf("sent while the 404 was on its way: %s %s", stuck(x2["1"]), stuck(x2["2"]))
	}
}

// A client that re-initialized but still sends on the old session: the
// Linker sees the initialize, in another conversation.
func TestStuckAfterReinitialize(t *testing.T) {
	for _, side := range []schema.Side{schema.SideClient, schema.SideServer} {
		l := newLog(t)
		l.side = side
		l.sess = "old"
		call := func(id int) string {
			return req(id, "tools/call", `{"name":"poll","arguments":{"n":`+fmt.Sprint(id)+`}}`)
		}
		l.post(call(1), 404, "application/json", str(sessionNotFound))
		l.post(call(2), 404, "application/json", str(sessionNotFound))
		l.sess = "new"
		l.post(req(0, "initialize", initParams), 200, "application/json", str(initResult))
		l.post(call(1), 200, "application/json", str(ok(1)))
		l.sess = "old"
		l.post(call(3), 404, "application/json", str(sessionNotFound))
		x := diagRun(t, l)
		want3 := "dead_session_reused"
		if side == schema.SideServer {
			want3 = "no_reinitialize" // a server's log interleaves clients: not refined
		}
		if stuck(x["2"]) != "no_reinitialize" || stuck(x["3"]) != want3 {
			t.Errorf("%s: before the initialize %s, after it %s (want %s)", side, stuck(x["2"]), stuck(x["3"]), want3)
		}
		if x["3"].Reinitialized == nil || *x["3"].Reinitialized || x["2"].Reinitialized == nil || !*x["2"].Reinitialized {
			t.Errorf("%s: reinitialized %s %s", side, optB(x["2"].Reinitialized), optB(x["3"].Reinitialized))
		}
	}
}

func TestUnknownSessionAnswers(t *testing.T) {
	const noValid = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`
	cases := []struct {
		name        string
		version     string
		session     string
		initialized bool // the log saw the session's initialize first
		status      int
		ct, body    string
		want        string
	}{
		{"ts example server 400", "", "s", true, 400, "application/json", noValid, "status_400_for_unknown_session"},
		{"anubis no active session", "", "s", true, 400, "application/json", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"No active session"},"id":null}`, "status_400_for_unknown_session"},
		{"plain text 403", "", "s", true, 403, "text/plain", "invalid session", "status_403_for_unknown_session"},
		{"ts1 after restart", "", "s", true, 400, "application/json", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`, "status_400_for_unknown_session"},
		{"missing header is another fault", "", "s", true, 400, "application/json", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`, "-"},
		{"unsupported version", "", "s", true, 400, "application/json", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version"},"id":null}`, "-"},
		{"bare 400, never initialized", "", "s", false, 400, "text/plain", "Bad Request", "status_400_for_unknown_session"},
		{"bare 400, initialized", "", "s", true, 400, "text/plain", "Bad Request", "-"},
		{"bare 400 without a session", "", "", false, 400, "text/plain", "Bad Request", "-"},
		{"404 is the right answer", "", "s", true, 404, "application/json", sessionNotFound, "-"},
		{"zilla 200 -32600 id null", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}`, "jsonrpc_error_for_unknown_session"},
		{"-32600 with another cause", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: params must be an object"},"id":null}`, "-"},
		{"own id -32600 with words", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid or expired session ID"}}`, "jsonrpc_error_for_unknown_session"},
		{"own id -32000 naming the session id", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"session id 7f2 is unknown"}}`, "jsonrpc_error_for_unknown_session"},
		{"py server-error id on 200", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`, "jsonrpc_error_for_unknown_session"},
		{"a tool's browser session", "", "s", true, 200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Browser session not found"}}`, "-"},
		{"2026-07-28 has no sessions", "2026-07-28", "s", true, 400, "application/json", noValid, "-"},
		{"no session id", "", "", true, 400, "application/json", noValid, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			if tc.version != "" {
				l.ver = tc.version
			}
			l.sess = tc.session
			if tc.initialized {
				l.post(req(0, "initialize", initParams), 200, "application/json", str(initResult))
			}
			l.post(req(1, "tools/call", `{"name":"search","arguments":{"q":"x"}}`), tc.status, tc.ct, str(tc.body))
			x := diagRun(t, l)
			if g := stuck(x["1"]); g != tc.want {
				t.Errorf("stuck %s, want %s (%s %s)", g, tc.want, x["1"].Outcome, x["1"].Reason)
			}
		})
	}
}

// postStream logs a POST answered with an event stream that ends as said.
func (l *logb) postStream(body, stream, end string) {
	add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(body)},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: str(stream), StreamEnd: end}}})
}

func TestResumption(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":5}}`
	withIDs := "id: p-0\nretry: 500\ndata: \n\nid: p-1\nevent: message\ndata: " + progress + "\n\n"
	call := req(1, "tools/call", `{"name":"build","arguments":{}}`)
	replay := "id: p-2\nevent: message\ndata: " + ok(1) + "\n\n"
	cut := func(end string) step { return func(l *logb) { l.postStream(call, withIDs, end) } }
	get := func(leid, body, end string) step { return func(l *logb) { l.get(body, leid, end) } }
	cases := []struct {
		name    string
		version string
		steps   []step
		outcome string
		want    string
	}{
		{"no Last-Event-ID", "", []step{cut(schema.StreamReset), get("", ": ping\n\n", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "no_last_event_id"},
		{"timeout cut too", "", []step{cut(schema.StreamTimeout), get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "no_last_event_id"},
		{"the priming id counts", "", []step{func(l *logb) { l.postStream(call, "id: only\nretry: 500\ndata: \n\n", schema.StreamReset) }, get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "no_last_event_id"},
		{"resumed and replayed", "", []step{cut(schema.StreamReset), get("p-1", replay, schema.StreamComplete)}, "TOOL_SUCCESS", "-"},
		{"resumed from an older id", "", []step{cut(schema.StreamReset), get("p-0", replay, schema.StreamComplete)}, "TOOL_SUCCESS", "-"},
		{"resumed, nothing replayed", "", []step{cut(schema.StreamReset), get("p-1", "", schema.StreamComplete)}, "STREAM_INCOMPLETE", "not_replayed"},
		{"resumed, 404", "", []step{cut(schema.StreamReset), func(l *logb) {
			add(l, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "GET", Headers: map[string]any{"Last-Event-ID": "p-1"}},
				Response: &schema.WireResponse{Status: 404, Body: str("")}}})
		}}, "STREAM_INCOMPLETE", "not_replayed"},
		{"replayed on the second resumption", "", []step{cut(schema.StreamReset), get("p-1", "", schema.StreamReset), get("p-1", replay, schema.StreamComplete)}, "TOOL_SUCCESS", "-"},
		{"typescript-sdk #2499", "", []step{cut(schema.StreamReset), get("p-1", "", schema.StreamReset), get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "no_last_event_id"},
		{"the resumed stream's own id", "", []step{cut(schema.StreamReset), get("p-1", "id: p-7\nevent: message\ndata: "+progress+"\n\n", schema.StreamReset),
			get("p-7", replay, schema.StreamComplete)}, "TOOL_SUCCESS", "-"},
		{"another stream's resumption", "", []step{cut(schema.StreamReset), get("q-9", "", schema.StreamComplete), get("p-1", replay, schema.StreamComplete)}, "TOOL_SUCCESS", "-"},
		{"no event id: nothing to resume", "", []step{func(l *logb) { l.postStream(call, "event: message\ndata: "+progress+"\n\n", schema.StreamReset) },
			get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "-"},
		{"an id in an event cut before its end", "", []step{func(l *logb) { l.postStream(call, "id: half\nevent: message\ndata: {", schema.StreamReset) },
			get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "-"},
		{"the client closed it", "", []step{cut(schema.StreamClientClosed), get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "-"},
		{"a re-POST instead", "", []step{cut(schema.StreamReset), func(l *logb) { l.post(call, 200, "application/json", str(ok(1))) }, get("", "", schema.StreamTimeout)}, "TOOL_SUCCESS", "-"},
		{"2026-07-28 has no resumption", "2026-07-28", []step{cut(schema.StreamReset), get("", "", schema.StreamTimeout)}, "STREAM_INCOMPLETE", "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			l.sess = "r1"
			if tc.version != "" {
				l.ver, l.sess = tc.version, ""
			}
			for _, s := range tc.steps {
				s(l)
			}
			x := diagRun(t, l)
			g := x["1"]
			if g.Outcome != tc.outcome || optS(g.ResumeProblem) != tc.want {
				t.Errorf("%s resume_problem %s, want %s %s", g.Outcome, optS(g.ResumeProblem), tc.outcome, tc.want)
			}
		})
	}
	// A GET opened before the cut (the standalone stream) is not the
	// reconnect: the one after it is.
	l := newLog(t)
	l.sess = "r2"
	l.clock = l.clock.Add(time.Second)
	add(l, schema.WireRecord{Time: "", HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: str(call)},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: str(withIDs), StreamEnd: schema.StreamReset}}})
	l.clock = l.clock.Add(-500 * time.Millisecond) // the standalone GET started earlier, and ends later
	rec := schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "GET"}, Response: &schema.WireResponse{Status: 200,
		ContentType: "text/event-stream", Body: str(""), StreamEnd: schema.StreamTimeout}}}
	add(l, rec)
	l.clock = l.clock.Add(time.Second)
	l.get(replay, "p-1", schema.StreamComplete)
	if x := diagRun(t, l); x["1"].Outcome != "TOOL_SUCCESS" || x["1"].ResumeProblem != nil {
		t.Errorf("standalone GET from before the cut: %s %s", x["1"].Outcome, optS(x["1"].ResumeProblem))
	}
}

const payTools = `{"jsonrpc":"2.0","id":100,"result":{"tools":[` +
	`{"name":"charge","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"idempotentHint":false}},` +
	`{"name":"refund","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"idempotentHint":true}},` +
	`{"name":"balance","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
	`{"name":"mail","inputSchema":{"type":"object"}}]}}`

// Steps of a scenario, one record each.
type step func(l *logb)

func posted(body string, status int, ct string, resp *string) step {
	return func(l *logb) { l.post(body, status, ct, resp) }
}

func failed(body, kind string) step { return func(l *logb) { l.fail(body, kind) } }

func frame(dir, line string) step { return func(l *logb) { l.stdio(dir, line) } }

// shifted moves the log's clock before the step (negative: the record
// starts before the previous one ended).
func shifted(d time.Duration, s step) step {
	return func(l *logb) { l.clock = l.clock.Add(d); s(l) }
}

func TestDuplicateSideEffect(t *testing.T) {
	charge := func(id int) string { return req(id, "tools/call", `{"name":"charge","arguments":{"amount":5}}`) }
	tool := func(id int, name string) string { return req(id, "tools/call", `{"name":"`+name+`","arguments":{}}`) }
	rpcErr := func(id, code int) *string {
		return str(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":%d,"message":"x"}}`, id, code))
	}
	toolErr := str(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"relay timed out"}],"isError":true}}`)
	const js = "application/json"
	cases := []struct {
		name string
		side schema.Side
		list bool // tools/list first
		step []step
		want map[string]bool
	}{
		{"timeout then the same id", "", true, []step{failed(charge(1), schema.FailureTimeout), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": true}},
		{"refused then the same id", "", true, []step{failed(charge(1), schema.FailureConnectionRefused), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": false}},
		{"429 then the same id", "", true, []step{posted(charge(1), 429, js, str(`{}`)), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": false}},
		{"500 then the same id", "", true, []step{posted(charge(1), 500, js, str(`{}`)), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": true}},
		{"timeout then refused", "", true, []step{failed(charge(1), schema.FailureTimeout), failed(charge(1), schema.FailureConnectionRefused)}, map[string]bool{"1": false}},
		{"502 then a new id", "", true, []step{posted(charge(1), 502, "text/html", str("<h1>502</h1>")), posted(charge(2), 200, js, str(ok(2)))}, map[string]bool{"1": false, "2": true}},
		{"401 then a new id", "", true, []step{posted(charge(1), 401, js, str(`{}`)), posted(charge(2), 200, js, str(ok(2)))}, map[string]bool{"2": false}},
		{"-32602 then a new id", "", true, []step{posted(charge(1), 200, js, rpcErr(1, -32602)), posted(charge(2), 200, js, str(ok(2)))}, map[string]bool{"2": false}},
		{"-32603 then a new id", "", true, []step{posted(charge(1), 200, js, rpcErr(1, -32603)), posted(charge(2), 200, js, str(ok(2)))}, map[string]bool{"2": true}},
		{"a tool error then a new id", "", true, []step{posted(charge(1), 200, js, toolErr), posted(charge(2), 200, js, str(ok(2)))}, map[string]bool{"2": true}},
		{"the retry never ran", "", true, []step{posted(charge(1), 502, "", str("")), posted(charge(2), 429, js, str(`{}`))}, map[string]bool{"2": false}},
		{"a success then the same call", "", true, []step{posted(charge(1), 200, js, str(ok(1))), shifted(time.Second, posted(charge(2), 200, js, str(ok(2))))}, map[string]bool{"2": false}},
		{"dispatched twice", "", true, []step{posted(charge(1), 200, js, str(ok(1))), shifted(-8*time.Millisecond, posted(charge(2), 200, js, str(ok(2))))},
			map[string]bool{"1": false, "2": true}},
		{"idempotent", "", true, []step{failed(tool(1, "refund"), schema.FailureTimeout), posted(tool(1, "refund"), 200, js, str(ok(1)))}, map[string]bool{"1": false}},
		{"read-only", "", true, []step{failed(tool(1, "balance"), schema.FailureTimeout), posted(tool(1, "balance"), 200, js, str(ok(1)))}, map[string]bool{"1": false}},
		{"no annotations: the defaults", "", true, []step{failed(tool(1, "mail"), schema.FailureReset), posted(tool(1, "mail"), 200, js, str(ok(1)))}, map[string]bool{"1": true}},
		{"never listed: the defaults", "", false, []step{failed(tool(1, "balance"), schema.FailureTimeout), posted(tool(1, "balance"), 200, js, str(ok(1)))}, map[string]bool{"1": true}},
		{"not a tool", "", true, []step{failed(req(1, "resources/read", `{"uri":"file:///a"}`), schema.FailureTimeout),
			posted(req(1, "resources/read", `{"uri":"file:///a"}`), 200, js, str(`{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`))}, map[string]bool{"1": false}},
		{"stdio: an error, then the call again", "", true, []step{frame("c2s", charge(1)), frame("s2c", *rpcErr(1, -32603)), frame("c2s", charge(2)), frame("s2c", ok(2))},
			map[string]bool{"2": true}},
		{"server: received twice", schema.SideServer, true, []step{failed(charge(1), schema.FailureReset), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": true}},
		{"server: refused, then run", schema.SideServer, true, []step{posted(charge(1), 400, js, str(`{}`)), posted(charge(1), 200, js, str(ok(1)))}, map[string]bool{"1": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			if tc.side != "" {
				l.side = tc.side
			}
			l.sess = "p1"
			if tc.list {
				l.post(req(100, "tools/list", ""), 200, js, str(payTools))
			}
			for _, s := range tc.step {
				s(l)
			}
			x := diagRun(t, l)
			for id, w := range tc.want {
				if x[id] == nil {
					t.Fatalf("no exchange %s", id)
				}
				if x[id].DuplicateSideEffect != w {
					t.Errorf("id %s: duplicate_side_effect %v, want %v (%s, %v, retry %s)", id, x[id].DuplicateSideEffect, w, x[id].Outcome, x[id].HTTPStatuses, x[id].RetryOrigin)
				}
			}
		})
	}
}

// A call repeated in the client's next session: the Linker decides, from
// whether the earlier one may have run and the repeat ran.
func TestDuplicateSideEffectNextSession(t *testing.T) {
	charge := func(id int) string { return req(id, "tools/call", `{"name":"charge","arguments":{"amount":120}}`) }
	for _, tc := range []struct {
		name  string
		first func(l *logb)
		then  func(l *logb)
		want  bool
	}{
		{"cut stream, then a charge in the next session", func(l *logb) { l.postStream(charge(1), "event: message\ndata: {}\n\n", schema.StreamReset) },
			func(l *logb) { l.post(charge(1), 200, "application/json", str(ok(1))) }, true},
		{"404 (never ran), then a charge in the next session", func(l *logb) { l.post(charge(1), 404, "application/json", str(sessionNotFound)) },
			func(l *logb) { l.post(charge(1), 200, "application/json", str(ok(1))) }, false},
		{"cut stream, then a refused repeat", func(l *logb) { l.postStream(charge(1), "event: message\ndata: {}\n\n", schema.StreamReset) },
			func(l *logb) { l.post(charge(1), 429, "application/json", str(`{}`)) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t)
			l.sess = "s1"
			l.post(req(100, "tools/list", ""), 200, "application/json", str(payTools))
			tc.first(l)
			l.post(req(2, "tools/call", `{"name":"balance","arguments":{}}`), 404, "application/json", str(sessionNotFound))
			l.sess = "s2"
			l.post(req(0, "initialize", initParams), 200, "application/json", str(initResult))
			l.post(req(101, "tools/list", ""), 200, "application/json", str(strings.Replace(payTools, `"id":100`, `"id":101`, 1)))
			tc.then(l)
			got, _ := run(l)
			var repeat *schema.Exchange
			for _, g := range got {
				if g.SessionID != nil && *g.SessionID == "s2" && g.Method == "tools/call" {
					repeat = g
				}
			}
			diagRun(t, l) // the same whatever the shards (ids repeat across sessions: looked up above)
			if repeat == nil || repeat.RetryBasis == nil || *repeat.RetryBasis != "same_call_next_session" {
				t.Fatalf("the repeat is not linked to the previous session: %+v", repeat)
			}
			if repeat.DuplicateSideEffect != tc.want {
				t.Errorf("duplicate_side_effect %v, want %v", repeat.DuplicateSideEffect, tc.want)
			}
		})
	}
}

// Merged rows: the server's count of what it received decides for one
// request's own attempts.
func TestMergedDuplicateSideEffect(t *testing.T) {
	charge := func(id int) string {
		return req(id, "tools/call", fmt.Sprintf(`{"name":"charge","arguments":{"n":%d}}`, id))
	}
	c := newLog(t)
	c.sess = "m1"
	c.post(req(100, "tools/list", ""), 200, "application/json", str(payTools))
	c.post(charge(1), 503, "text/plain", str("upstream connect error")) // a proxy's
	c.post(charge(1), 200, "application/json", str(ok(1)))
	c.post(charge(2), 200, "application/json", str(ok(2))) // the proxy sent it twice upstream
	s := newLog(t)
	s.side, s.sess, s.conn = schema.SideServer, "m1", "srv"
	s.post(req(100, "tools/list", ""), 200, "application/json", str(payTools))
	s.clock = s.clock.Add(10 * time.Millisecond)
	s.post(charge(1), 200, "application/json", str(ok(1)))
	s.fail(charge(2), schema.FailureReset)
	s.post(charge(2), 200, "application/json", str(ok(2)))
	for i := range s.obs {
		s.obs[i].Pos.Source = "server.ndjson"
	}
	cr, _ := run(c)
	sr, _ := run(s)
	var rows []schema.Exchange
	for _, r := range append(cr, sr...) {
		rows = append(rows, *r)
	}
	own := map[string]bool{}
	for _, r := range rows {
		if r.Method == "tools/call" {
			own[r.Sides+*r.JSONRPCID] = r.DuplicateSideEffect
		}
	}
	if !own["client1"] || own["client2"] || own["server1"] || !own["server2"] {
		t.Fatalf("own views: %v", own)
	}
	merged := map[string]bool{}
	for _, r := range correlate.MergeViews(rows) {
		if r.Method == "tools/call" && r.Sides == "both" {
			merged[*r.JSONRPCID] = r.DuplicateSideEffect
		}
	}
	if len(merged) != 2 || merged["1"] || !merged["2"] {
		t.Errorf("merged: %v", merged)
	}
}

// The diagnosis columns of the samples do not depend on how the run is
// sharded (TestShardedSamplesAgree compares whole rows); here, that the
// samples hold every value of the vocabulary at least once.
func TestSamplesCoverTheDiagnosisVocabulary(t *testing.T) {
	rows, _ := shardedRun(t, decodeSamples(t, sampleFiles(t)), 3, 7, false, 0)
	seen := map[string]bool{}
	for _, r := range rows {
		if r.SessionStuckReason != nil {
			seen[*r.SessionStuckReason] = true
		}
		if r.ResumeProblem != nil {
			seen[*r.ResumeProblem] = true
		}
		if r.DuplicateSideEffect {
			seen["duplicate_side_effect"] = true
		}
	}
	for _, v := range []string{"no_reinitialize", "dead_session_reused", "status_400_for_unknown_session", "jsonrpc_error_for_unknown_session",
		"no_last_event_id", "not_replayed", "duplicate_side_effect"} {
		if !seen[v] {
			t.Errorf("no sample row with %s", v)
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.Logf("seen: %v", keys)
}
