package correlate_test

import (
	"testing"
	"time"

	"mcptrace/schema"
)

// timedStream records a POST whose SSE answer the log dates at evAt.
func (s *side) timedStream(at, dur, evAt time.Duration, body, msg string) {
	s.l.t.Helper()
	ev := s.l.base.Add(evAt).Format(time.RFC3339Nano)
	s.record(at, dur, schema.WireRecord{HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", URL: s.url, Body: str(body)},
		Response: &schema.WireResponse{Status: 200, ContentType: "text/event-stream", Body: sse(msg), StreamEnd: schema.StreamComplete,
			EventTimes: []*string{str(ev)}}}})
}

// A server row answered on its stream a while after the request is held for
// a cancel, settled by a later record, then held for a same-id repeat that
// reopens it: the repeat is an attempt of that row (not of a held answer),
// so the row is judged again at once and merges with the client's row of the
// same two POSTs, whatever the answer's delay.
func TestHeldAnswerReopenedBySameIDRepeatMerges(t *testing.T) {
	for _, evAt := range []time.Duration{1500 * ms, 3 * time.Second} {
		l := newTLog(t)
		c := l.client("client.ndjson", "", v2025)
		c.sess = "sess-9"
		s := l.server("server.ndjson", "sess-9", v2025)
		x := callOf(4, "charge_card", `{"card":"tok","amount_eur":12}`)
		charged := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Charged 12 EUR"}]}}`
		s.timedStream(1000*ms, 3000*ms, evAt, x, charged)
		c.post(0, 4200*ms, x, 502, "<html>502 Bad Gateway</html>")
		s.post(5*time.Second, 100*ms, callOf(5, "get_balance", `{}`), 200, ok(5))
		c.post(4900*ms, 300*ms, callOf(5, "get_balance", `{}`), 200, ok(5))
		s.post(20*time.Second, 700*ms, x, 200, charged)
		c.post(19900*ms, 900*ms, x, 200, charged)
		for i := 1; i <= 12; i++ { // both logs go on, in other sessions, for an hour
			at := time.Duration(i) * 5 * time.Minute
			c.sess, s.sess = "sess-1x", "sess-1x"
			s.post(at+100*ms, 50*ms, callOf(100+i, "get_balance", `{}`), 200, ok(100+i))
			c.post(at, 300*ms, callOf(100+i, "get_balance", `{}`), 200, ok(100+i))
		}
		rows, _ := shardedRun(t, l.obs, 1, 2, true, 10*time.Minute)
		var charge []schema.Exchange
		for _, r := range rows {
			if r.ToolName != nil && *r.ToolName == "charge_card" {
				charge = append(charge, r)
			}
		}
		if len(charge) != 1 || charge[0].Sides != "both" || charge[0].ServerPostCount == nil || *charge[0].ServerPostCount != 2 {
			for _, r := range charge {
				t.Logf("%s %s:%d %s server_posts=%v", r.Sides, r.Source, r.SourceLine, ids(&r), r.ServerPostCount)
			}
			t.Errorf("answer %v after the request: %d charge_card rows, want one merged row with server_post_count 2", evAt, len(charge))
		}
	}
}

// 2026-07-28 has no sessions: a client log that still records a session id
// (a leftover header the server ignores) and a 404 is no session expiry.
func TestStatelessNotFoundIsNoSessionExpiry(t *testing.T) {
	l := newTLog(t)
	c := l.client("client.ndjson", "", v2026)
	c.sess = "leftover-1"
	c.post(0, 100*ms, callOf(1, "get_balance", `{}`), 404, "")
	c.post(time.Second, 100*ms, callOf(2, "get_balance", `{}`), 200, ok(2))
	rows := l.run()
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, r := range rows {
		if r.SessionExpired || r.Reinitialized != nil || r.SessionID != nil || r.SessionStuck {
			t.Errorf("id %v: session_expired %v reinitialized %v session_id %v session_stuck %v; want no session at all", optS(r.JSONRPCID), r.SessionExpired, r.Reinitialized, r.SessionID, r.SessionStuck)
		}
	}
}
