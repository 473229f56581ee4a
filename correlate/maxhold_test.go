package correlate_test

import (
	"fmt"
	"slices"
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

// Where MaxHold cuts a conversation depends only on the records, never on
// how the input was cut into rounds (a Kafka consumer's rounds follow its
// fetches): the samples, whose logs span up to an hour, give the same rows
// (in an order that may differ: rows go out as their conversations close)
// with MaxHold at 1 and 15 minutes (the Kafka default) whatever the round
// size, and some rows are cut.
func TestMaxHoldCutsSameWhateverTheRounds(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	for _, hold := range []time.Duration{time.Minute, 15 * time.Minute} {
		var first []string
		for _, round := range []int{1 << 20, 1, 2, 3, 5, 7, 17, 64, 301} {
			rows, _ := shardedRunHold(t, obs, 1+round%3, round, false, 0, hold)
			var got []string
			cut := 0
			for i := range rows {
				got = append(got, fmt.Sprintf("%s hold_cut=%v", verdict(&rows[i]), rows[i].HoldCut))
				if rows[i].HoldCut {
					cut++
				}
			}
			slices.Sort(got)
			if first == nil {
				first = got
				t.Logf("MaxHold %v: %d of %d rows cut", hold, cut, len(rows))
				if cut == 0 {
					t.Errorf("MaxHold %v: no row cut; the test proves nothing", hold)
				}
				continue
			}
			diffLines(t, fmt.Sprintf("MaxHold %v, rounds of %d, against one round", hold, round), got, first)
		}
	}
}
