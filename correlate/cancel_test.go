package correlate_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// timedLog builds wire records with the times a test gives them, in the
// order the test adds them.
type timedLog struct {
	t   *testing.T
	t0  time.Time
	ver string
	obs []*schema.Observation
}

func newTimedLog(t *testing.T) *timedLog {
	return &timedLog{t: t, t0: time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC), ver: "2025-11-25"}
}

func (l *timedLog) at(ms int) string {
	return l.t0.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano)
}

// record adds one POST of session sess sent at ms, ended at endMS.
func (l *timedLog) record(sess string, ms, endMS int, body string, resp *schema.WireResponse) {
	l.t.Helper()
	rec := schema.WireRecord{Format: schema.WireFormat, Time: l.at(ms), EndTime: l.at(endMS), Side: schema.SideClient,
		Transport: schema.TransportStreamableHTTP, SessionID: sess, ProtocolVersion: l.ver,
		HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: "http://127.0.0.1:8080/mcp", Body: str(body)}, Response: resp}}
	b, err := json.Marshal(rec)
	if err != nil {
		l.t.Fatal(err)
	}
	o, err := decode.WireLine(b, schema.Position{Source: "timed.ndjson", Line: int64(len(l.obs) + 1)})
	if err != nil {
		l.t.Fatalf("record %d: %v", len(l.obs)+1, err)
	}
	l.obs = append(l.obs, &o)
}

const slowCall = `{"name":"export","arguments":{}}`

// stream adds the POST of tools/call id 1 at 0 ms whose event stream
// carries a progress event and then text, ended at endMS; eventMS date the
// two events (nil: no event_times).
func (l *timedLog) stream(endMS int, text string, end string, eventMS ...int) {
	body := *sse(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, text)
	resp := &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &body, StreamEnd: end}
	for _, ms := range eventMS {
		resp.EventTimes = append(resp.EventTimes, str(l.at(ms)))
	}
	l.record("s1", 0, endMS, req(1, "tools/call", slowCall), resp)
}

func (l *timedLog) cancel(ms int) {
	l.record("s1", ms, ms+4, req(nil, "notifications/cancelled", `{"requestId":1,"reason":"user pressed stop"}`),
		&schema.WireResponse{Status: 202, Body: str("")})
}

const canceledText = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"context canceled"}],"isError":true}}`

// TestLateAnswerOnTheOpenStream: the client cancels and keeps the stream
// open; the server answers on it a moment later. Whichever record the log
// wrote first (the stream's, sorted by start as in a HAR, or the cancel's,
// written when it completed as in a wire log), the answer came after the
// cancel by the log's own times: CANCELLED with late_response (issue 10,
// point 3). An answer that came before the cancel stands.
func TestLateAnswerOnTheOpenStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		eventMS []int // nil: the last event at end_ts
		cancel  int
		outcome string
		late    bool
	}{
		{"isError context canceled, event times", canceledText, []int{400, 2600}, 2000, "CANCELLED", true},
		{"real result, event times", ok(1), []int{400, 2600}, 2000, "CANCELLED", true},
		{"real result at end_ts", ok(1), nil, 2000, "CANCELLED", true},
		{"answered before the cancel", ok(1), []int{400, 1500}, 2000, "TOOL_SUCCESS", false},
	} {
		for _, cancelFirst := range []bool{false, true} {
			l := newTimedLog(t)
			if cancelFirst {
				l.cancel(tc.cancel)
				l.stream(2700, tc.text, schema.StreamComplete, tc.eventMS...)
			} else {
				l.stream(2700, tc.text, schema.StreamComplete, tc.eventMS...)
				l.cancel(tc.cancel)
			}
			got, st := run(&logb{t: t, obs: l.obs})
			name := tc.name + map[bool]string{false: ", stream record first", true: ", cancel record first"}[cancelFirst]
			if len(got) != 1 {
				t.Fatalf("%s: %d rows", name, len(got))
			}
			r := got[0]
			if r.Outcome != tc.outcome || r.LateResponse != tc.late || r.Cancelled != tc.late {
				t.Errorf("%s: %s (%s) late_response %v cancelled %v", name, r.Outcome, r.Reason, r.LateResponse, r.Cancelled)
			}
			if st.Notifications != 2 || st.StrayMessages != 0 {
				t.Errorf("%s: stats %+v", name, st)
			}
		}
	}
}

// TestClientCloseAndCancel: a stream the client closed itself, then a
// cancel, is CANCELLED; a stream the server or the network cut, then a
// cancel, keeps STREAM_INCOMPLETE (issue 10, point 2), in both record
// orders.
func TestClientCloseAndCancel(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	for end, want := range map[string]string{
		schema.StreamClientClosed: "CANCELLED",
		schema.StreamReset:        "STREAM_INCOMPLETE",
		schema.StreamTimeout:      "STREAM_INCOMPLETE",
	} {
		for _, cancelFirst := range []bool{false, true} {
			l := newTimedLog(t)
			body := *sse(progress)
			cut := func() {
				l.record("s1", 0, 1500, req(1, "tools/call", slowCall), &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &body, StreamEnd: end})
			}
			if cancelFirst {
				l.cancel(1490)
				cut()
			} else {
				cut()
				l.cancel(1510)
			}
			got, _ := run(&logb{t: t, obs: l.obs})
			if len(got) != 1 || got[0].Outcome != want || !got[0].Cancelled || got[0].LateResponse || got[0].StreamEnd == nil || *got[0].StreamEnd != end {
				t.Errorf("%s, cancel first %v: %+v", end, cancelFirst, got)
			}
		}
	}
}

// TestHeldAnswerIsReleasedByTheLog: an answer on a POST's stream, a second
// or more after its request, waits for a cancel only until its log shows a
// record that started after the answer came, in its own conversation or in
// another; a quicker answer, a JSON body and 2026-07-28 traffic (no cancel
// notification over HTTP) do not wait.
func TestHeldAnswerIsReleasedByTheLog(t *testing.T) {
	rows := func(l *timedLog) []int {
		var out []*schema.Exchange
		c := correlate.New(func(e *schema.Exchange) { out = append(out, e) })
		var n []int
		for _, o := range l.obs {
			c.Add(o)
			n = append(n, len(out))
		}
		c.Flush()
		return append(n, len(out))
	}
	same := func(a []int, b ...int) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	// Another session's record that starts before the answer came keeps
	// it held; one that starts after releases it.
	l := newTimedLog(t)
	l.stream(2700, ok(1), schema.StreamComplete, 400, 2600)
	l.record("s2", 1000, 1010, req(5, "ping", ""), &schema.WireResponse{Status: 200, ContentType: "application/json", Body: str(`{"jsonrpc":"2.0","id":5,"result":{}}`)})
	l.record("s2", 2650, 2660, req(6, "ping", ""), &schema.WireResponse{Status: 200, ContentType: "application/json", Body: str(`{"jsonrpc":"2.0","id":6,"result":{}}`)})
	if n := rows(l); !same(n, 0, 1, 3, 3) {
		t.Errorf("rows after each record: %v, want [0 1 3 3]", n)
	}
	// The same session: the next request, sent after the answer, is a new
	// exchange (the same id and call again is not a re-POST of the first).
	l = newTimedLog(t)
	l.stream(2700, ok(1), schema.StreamComplete, 400, 2600)
	l.record("s1", 3000, 3100, req(1, "tools/call", slowCall), &schema.WireResponse{Status: 200, ContentType: "application/json", Body: str(ok(1))})
	if n := rows(l); !same(n, 0, 2, 2) {
		t.Errorf("same session: rows %v, want [0 2 2]", n)
	}
	got, _ := run(&logb{t: t, obs: l.obs})
	if len(got) != 2 || got[0].PostCount != 1 || got[1].PostCount != 1 {
		t.Errorf("same session: %+v", got)
	}
	// A JSON body is not held.
	l = newTimedLog(t)
	l.record("s1", 0, 2700, req(1, "tools/call", slowCall), &schema.WireResponse{Status: 200, ContentType: "application/json", Body: str(ok(1))})
	if n := rows(l); !same(n, 1, 1) {
		t.Errorf("JSON body: rows %v, want [1 1]", n)
	}
	// Nor is 2026-07-28 traffic, nor an initialize.
	l = newTimedLog(t)
	l.ver = "2026-07-28"
	l.stream(2700, ok(1), schema.StreamComplete, 400, 2600)
	if n := rows(l); !same(n, 1, 1) {
		t.Errorf("2026-07-28: rows %v, want [1 1]", n)
	}
	l = newTimedLog(t)
	body := *sse(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	l.record("s1", 0, 30, req(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`),
		&schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &body, StreamEnd: schema.StreamComplete})
	if n := rows(l); !same(n, 1, 1) {
		t.Errorf("initialize: rows %v, want [1 1]", n)
	}
	// An answer that came within a second of its request is written at
	// once: a cancel logged after its record is not seen as before it
	// (a cancel logged before it still is).
	l = newTimedLog(t)
	l.stream(400, ok(1), schema.StreamComplete, 100, 350)
	l.cancel(200)
	if n := rows(l); !same(n, 1, 1, 1) {
		t.Errorf("quick answer: rows %v, want [1 1 1]", n)
	}
	if got, _ := run(&logb{t: t, obs: l.obs}); len(got) != 1 || got[0].Outcome != "TOOL_SUCCESS" || got[0].Cancelled {
		t.Errorf("quick answer, cancel logged after: %+v", got)
	}
	l = newTimedLog(t)
	l.cancel(200)
	l.stream(400, ok(1), schema.StreamComplete, 100, 350)
	if got, _ := run(&logb{t: t, obs: l.obs}); len(got) != 1 || got[0].Outcome != "CANCELLED" || !got[0].LateResponse {
		t.Errorf("quick answer, cancel logged first: %+v", got)
	}
	// Held to the end of input when nothing later comes: still written,
	// not late.
	l = newTimedLog(t)
	l.stream(2700, ok(1), schema.StreamComplete, 400, 2600)
	if n := rows(l); !same(n, 0, 1) {
		t.Errorf("last record: rows %v, want [0 1]", n)
	}
}

// TestLateAnswerSharded: the same verdicts for any number of shards and
// rounds, with a held answer released by other conversations' records
// (through the Marks) and another settled by its cancel, records in start
// order as a HAR lists them.
func TestLateAnswerSharded(t *testing.T) {
	l := newTimedLog(t)
	l.stream(2700, canceledText, schema.StreamComplete, 400, 2600)
	other := *sse(ok(1))
	l.record("s5", 100, 1200, req(1, "tools/call", slowCall), &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: &other,
		StreamEnd: schema.StreamComplete, EventTimes: []*string{str(l.at(1100))}})
	for i := 0; i < 6; i++ {
		ms := 500 + 600*i
		if ms == 2300 {
			l.cancel(2000)
		}
		l.record([]string{"s2", "s3", "s4"}[i%3], ms, ms+10, req(10+i, "ping", ""), &schema.WireResponse{Status: 200, ContentType: "application/json",
			Body: str(`{"jsonrpc":"2.0","id":` + strconv.Itoa(10+i) + `,"result":{}}`)})
	}
	one := derefRows(run(&logb{t: t, obs: l.obs}))
	want := verdicts(one)
	for _, shards := range []int{1, 2, 3} {
		for _, round := range []int{1, 3} {
			got, _ := shardedRun(t, l.obs, shards, round, false, 0)
			if v := verdicts(got); !slices.Equal(v, want) {
				t.Errorf("%d shards, round %d:\n%v\nwant\n%v", shards, round, v, want)
			}
		}
	}
	var late, answered int
	for _, r := range one {
		switch {
		case r.Method == "tools/call" && *r.SessionID == "s1":
			if r.Outcome != "CANCELLED" || !r.LateResponse {
				t.Errorf("s1: %s late %v", r.Outcome, r.LateResponse)
			}
			late++
		case r.Method == "tools/call":
			if r.Outcome != "TOOL_SUCCESS" || r.LateResponse || r.Cancelled {
				t.Errorf("s5: %s late %v", r.Outcome, r.LateResponse)
			}
			answered++
		}
	}
	if late != 1 || answered != 1 || len(one) != 8 {
		t.Errorf("%d rows", len(one))
	}
}

func derefRows(rs []*schema.Exchange, _ correlate.Stats) []schema.Exchange {
	out := make([]schema.Exchange, len(rs))
	for i, r := range rs {
		out[i] = *r
	}
	return out
}

// TestCancelLoggedFirstSameMillisecond: a server's wire log written as each
// transaction ends holds the cancel's record (its 202 came at once) before
// the record of the request it cancels, whose stream ended after the
// answer. An application that cancels programmatically does so within
// milliseconds, so the cancel and the answer often share a millisecond (the
// schema's precision): the order of the records then decides, and the
// cancel, logged first, came first: CANCELLED with late_response (go-sdk's
// server answers "context canceled" once the cancel reached the tool).
func TestCancelLoggedFirstSameMillisecond(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cancel, end     int
		eventMS         []int
		outcome         string
		late, cancelled bool
	}{
		{"same millisecond", 3, 3, nil, "CANCELLED", true, true},
		{"answer dated after the cancel", 2, 3, nil, "CANCELLED", true, true},
		{"answer dated before the cancel", 3, 4, []int{1, 2}, "TOOL_ERROR", false, false},
	} {
		l := newTimedLog(t)
		l.record("s1", tc.cancel, tc.cancel, req(nil, "notifications/cancelled", `{"requestId":1,"reason":"context canceled"}`),
			&schema.WireResponse{Status: 202, Body: str("")})
		l.stream(tc.end, canceledText, schema.StreamComplete, tc.eventMS...)
		got, _ := run(&logb{t: t, obs: l.obs})
		if len(got) != 1 {
			t.Fatalf("%s: %d rows", tc.name, len(got))
		}
		if r := got[0]; r.Outcome != tc.outcome || r.LateResponse != tc.late || r.Cancelled != tc.cancelled {
			t.Errorf("%s: %s (%s) late_response %v cancelled %v, want %s %v %v", tc.name, r.Outcome, r.Reason, r.LateResponse, r.Cancelled,
				tc.outcome, tc.late, tc.cancelled)
		}
	}
}
