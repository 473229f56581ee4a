package correlate_test

import (
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// A conversation still active MaxHold after it began is closed: what is
// open then (a POST whose connection was reset, waiting for a re-POST) is
// judged and marked hold_cut, and later records start a new conversation.
func TestMaxHoldCutsAnActiveConversation(t *testing.T) {
	l := newLog(t)
	l.sess = "s1"
	l.fail(req(1, "tools/call", `{"name":"slow"}`), "reset")
	for i := 2; i < 200; i++ { // 10 ms apart: about 2 s of activity
		l.post(req(i, "tools/call", `{"name":"fast"}`), 200, "application/json", str(ok(i)))
	}
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.MaxHold = time.Second
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	if c.Stats.HoldCuts == 0 {
		t.Fatal("no conversation was cut")
	}
	cut := 0
	for _, e := range out {
		if e.HoldCut {
			cut++
			if e.JSONRPCID == nil || *e.JSONRPCID != "1" {
				t.Errorf("row of id %v marked hold_cut; only the exchange open at the cut should be", e.JSONRPCID)
			}
		}
	}
	if cut != 1 || len(out) != 199 {
		t.Fatalf("%d rows, %d marked hold_cut; want 199 and 1", len(out), cut)
	}
	// Without a bound nothing is cut, and the reset POST is judged at the end.
	out = nil
	c = correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	for _, e := range out {
		if e.HoldCut {
			t.Fatal("a row is marked hold_cut without MaxHold")
		}
	}
}
