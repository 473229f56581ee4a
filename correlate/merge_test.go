package correlate_test

import (
	"fmt"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

func row(side, conv string, id string, start time.Time, outcome string, statuses ...int32) schema.Exchange {
	t := "number"
	r := schema.Exchange{ExchangeID: side + conv + id, Sides: side, Initiator: "client", Method: "tools/call", JSONRPCID: &id, JSONRPCIDType: &t,
		StartedAt: start, Outcome: outcome, ConvKey: side + "|" + conv, MatchHash: 42, HTTPStatuses: statuses, PostCount: int32(len(statuses)),
		Transport: "streamable-http", FailedHop: "unknown"}
	return r
}

func TestMergeViewsWithClockSkew(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	skew := 3*time.Second + 250*time.Millisecond // the server's clock runs ahead
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	rows := []schema.Exchange{
		row("client", "a", "1", at(0), "TOOL_SUCCESS", 200),
		row("client", "a", "2", at(10), "HTTP_ERROR", 502),   // the server answered 200: a proxy failed
		row("client", "a", "3", at(20), "HTTP_ERROR", 503),   // the server sent the 503 itself
		row("client", "a", "4", at(30), "NO_RESPONSE", 0),    // the server never saw it
		row("client", "a", "5", at(40), "TOOL_ERROR", 200),   //
		row("client", "a", "6", at(50), "NO_RESPONSE", 0, 0), // two POSTs, the server saw one and failed
		row("server", "x", "1", at(0).Add(skew), "TOOL_SUCCESS", 200),
		row("server", "x", "2", at(10).Add(skew), "TOOL_SUCCESS", 200),
		row("server", "x", "3", at(20).Add(skew), "HTTP_ERROR", 503),
		row("server", "x", "5", at(40).Add(skew), "TOOL_ERROR", 200),
		row("server", "x", "6", at(50).Add(skew+time.Second), "NO_RESPONSE", 0),
		row("server", "y", "1", at(3600), "TOOL_SUCCESS", 200), // another conversation, an hour later: no partner
	}
	out := correlate.MergeViews(rows)
	if len(out) != 7 {
		t.Fatalf("got %d rows, want 7 (5 merged, 1 client-only, 1 server-only)", len(out))
	}
	want := map[string]struct{ sides, hop string }{
		"1": {"both", "none"}, "2": {"both", "network"}, "3": {"both", "server"}, "4": {"client", "network"},
		"5": {"both", "tool"}, "6": {"both", "network"},
	}
	for _, r := range out {
		if r.Sides == "server" {
			if r.ConvKey != "server|y" {
				t.Errorf("unexpected server-only row %s", r.ExchangeID)
			}
			continue
		}
		w := want[*r.JSONRPCID]
		if r.Sides != w.sides || r.FailedHop != w.hop {
			t.Errorf("id %s: sides %s hop %s, want %+v", *r.JSONRPCID, r.Sides, r.FailedHop, w)
		}
		if r.Sides == "both" {
			if r.ClockSkewMS == nil || *r.ClockSkewMS != 3250 || r.ServerPostCount == nil || r.ServerOutcome == nil {
				t.Errorf("id %s: skew %v server posts %v", *r.JSONRPCID, r.ClockSkewMS, r.ServerPostCount)
			}
		}
	}
}

func TestMergeViewsRespectsSessions(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	c := row("client", "a", "1", t0, "TOOL_SUCCESS", 200)
	s := row("server", "x", "1", t0, "TOOL_SUCCESS", 200)
	s1, s2 := "sess-1", "sess-2"
	c.SessionID, s.SessionID = &s1, &s2
	if out := correlate.MergeViews([]schema.Exchange{c, s}); len(out) != 2 {
		t.Errorf("rows of different sessions merged")
	}
	s.SessionID = &s1
	if out := correlate.MergeViews([]schema.Exchange{c, s}); len(out) != 1 || out[0].Sides != "both" {
		t.Errorf("rows of one session not merged: %+v", out)
	}
}

func TestMergeViewsSameScriptMinuteSkew(t *testing.T) {
	// Five runs of the same script, a minute apart, without sessions; the
	// server's clock is three minutes ahead, so the nearest server row in
	// time belongs to another run.
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	skew := 3 * time.Minute
	var rows []schema.Exchange
	for run := 0; run < 5; run++ {
		for call := 1; call <= 3; call++ {
			at := t0.Add(time.Duration(run)*time.Minute + time.Duration(call)*2*time.Second)
			id := fmt.Sprint(call)
			rows = append(rows, row("client", fmt.Sprint("run", run), id, at, "TOOL_SUCCESS", 200))
			rows = append(rows, row("server", fmt.Sprint("conn", run), id, at.Add(skew+40*time.Millisecond), "TOOL_SUCCESS", 200))
		}
	}
	out := correlate.MergeViews(rows)
	if len(out) != 15 {
		t.Fatalf("got %d rows, want 15 merged", len(out))
	}
	for _, r := range out {
		if r.Sides != "both" || r.ClockSkewMS == nil || *r.ClockSkewMS != 180040 {
			t.Errorf("%s: sides %s skew %v", r.ConvKey, r.Sides, r.ClockSkewMS)
		}
	}
}

func BenchmarkMergeViews(b *testing.B) {
	// 20,000 stateless sessions running the same two calls.
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var rows []schema.Exchange
	for s := 0; s < 20000; s++ {
		for call := 1; call <= 2; call++ {
			at := t0.Add(time.Duration(s)*100*time.Millisecond + time.Duration(call)*time.Millisecond)
			rows = append(rows, row("client", fmt.Sprint("c", s), fmt.Sprint(call), at, "TOOL_SUCCESS", 200))
			rows = append(rows, row("server", fmt.Sprint("s", s), fmt.Sprint(call), at.Add(2*time.Millisecond), "TOOL_SUCCESS", 200))
		}
	}
	for b.Loop() {
		in := append([]schema.Exchange(nil), rows...)
		if out := correlate.MergeViews(in); len(out) != 40000 {
			b.Fatalf("%d rows", len(out))
		}
	}
}

// TestMergeSameIDRepeatTakesTheServersAnswer: a sessionless client (2026-07-28)
// sends tools/call id 2, which a proxy answers 503 without forwarding it;
// a new client instance sends the same call with the same id 2 ms later,
// and the server answers it 200. Logged to the millisecond, the start
// times (and the skew estimated from them) cannot tell the two apart; the
// server's row goes with the client row that received a status the server
// sent (mcpgo-mcpgo-modern-new-instance in interop/), and the 503 is a
// request the server never saw: failed_hop network.
func TestMergeSameIDRepeatTakesTheServersAnswer(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 43, 43, 217_000_000, time.UTC)
	rows := []schema.Exchange{
		row("client", "a", "2", t0, "HTTP_ERROR", 503),
		row("client", "a", "2", t0.Add(2*time.Millisecond), "TOOL_SUCCESS", 200),
		row("server", "x", "2", t0.Add(2*time.Millisecond), "TOOL_SUCCESS", 200),
	}
	rows[1].ExchangeID += "b"
	out := correlate.MergeViews(rows)
	if len(out) != 2 {
		t.Fatalf("%d rows, want 2", len(out))
	}
	for _, r := range out {
		switch r.Outcome {
		case "HTTP_ERROR":
			if r.Sides != "client" || r.FailedHop != "network" {
				t.Errorf("503: sides %s failed_hop %s, want client network", r.Sides, r.FailedHop)
			}
		case "TOOL_SUCCESS":
			if r.Sides != "both" || r.ServerOutcome == nil || *r.ServerOutcome != "TOOL_SUCCESS" {
				t.Errorf("200: sides %s server_outcome %v, want both TOOL_SUCCESS", r.Sides, r.ServerOutcome)
			}
		}
	}
	// Far apart, time decides as before: a server row 3 s after the 503
	// and 7 s before the repeat stays the 503's (the proxy failed after
	// the server answered).
	rows = []schema.Exchange{
		row("client", "b", "2", t0, "HTTP_ERROR", 503),
		row("server", "y", "2", t0.Add(10*time.Millisecond), "TOOL_SUCCESS", 200),
		row("client", "b", "2", t0.Add(3*time.Second), "TOOL_SUCCESS", 200),
	}
	rows[2].ExchangeID += "b"
	for _, r := range correlate.MergeViews(rows) {
		if r.Outcome == "HTTP_ERROR" && (r.Sides != "both" || r.FailedHop != "network") {
			t.Errorf("far apart: 503 sides %s failed_hop %s, want both network", r.Sides, r.FailedHop)
		}
	}
}
