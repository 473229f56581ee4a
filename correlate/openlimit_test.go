package correlate_test

import (
	"strconv"
	"strings"
	"testing"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// openRun correlates l's observations with at most maxOpen conversations
// open (0: no bound).
func openRun(l *logb, maxOpen int) ([]*schema.Exchange, correlate.Stats) {
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.MaxOpen = maxOpen
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	return out, c.Stats
}

// byConn is the rows of conversation conn (stdio: keyed by connection).
func byConn(rows []*schema.Exchange, conn string) []*schema.Exchange {
	var out []*schema.Exchange
	for _, r := range rows {
		if r.ConvKey != "" && strings.Contains(r.ConvKey, conn) {
			out = append(out, r)
		}
	}
	return out
}

// Past MaxOpen, the least recently active conversation ends early, as the
// idle timeout would end it: its open exchange is judged on what came, the
// row marked hold_cut with the limit named in its reason, and counted;
// the other conversations' rows are as without the bound.
func TestMaxOpenEndsTheLeastRecentlyActive(t *testing.T) {
	l := newLog(t)
	for _, step := range []struct{ conn, id string }{{"cA", "1"}, {"cB", "1"}, {"cA", "2"}, {"cC", "1"}} {
		l.conn = step.conn
		l.stdio(schema.DirClientToServer, req(step.id, "tools/call", `{"name":"slow"}`))
	}
	free, fs := openRun(l, 0)
	bound, bs := openRun(l, 2)
	if fs.Evicted != 0 || bs.Evicted != 1 {
		t.Fatalf("evicted %d without a bound and %d with 2, want 0 and 1", fs.Evicted, bs.Evicted)
	}
	if len(free) != 4 || len(bound) != 4 {
		t.Fatalf("%d and %d rows, want 4 each", len(free), len(bound))
	}
	// cB, the least recently active when cC came (cA had its second
	// request since), is the one ended.
	for _, r := range bound {
		cut := r.HoldCut
		named := strings.Contains(r.Reason, "conversation ended early: more than -max-open-conversations 2 open")
		if inB := strings.Contains(r.ConvKey, "cB"); cut != inB || named != inB {
			t.Errorf("row of %q: hold_cut %v, reason %q", r.ConvKey, r.HoldCut, r.Reason)
		}
	}
	// The verdicts are those of the unbounded run: only the marks differ.
	outcome := map[string]string{}
	for _, r := range free {
		if r.HoldCut {
			t.Errorf("a row is hold_cut without a bound: %+v", r)
		}
		outcome[r.ConvKey+"/"+*r.JSONRPCID] = r.Outcome + "|" + r.Reason
	}
	for _, r := range bound {
		reason, _, _ := strings.Cut(r.Reason, "; conversation ended early")
		if got := r.Outcome + "|" + reason; outcome[r.ConvKey+"/"+*r.JSONRPCID] != got {
			t.Errorf("%s id %s: %s with the bound, %s without", r.ConvKey, *r.JSONRPCID, got, outcome[r.ConvKey+"/"+*r.JSONRPCID])
		}
	}
	if len(byConn(bound, "cB")) != 1 {
		t.Fatalf("rows of cB: %d", len(byConn(bound, "cB")))
	}
}

// Memory stays bounded: however many conversations an input opens without
// ending them, at most MaxOpen are open at once, and every record is still
// an observation of one.
func TestMaxOpenBoundsOpenConversations(t *testing.T) {
	l := newLog(t)
	for i := range 500 {
		l.conn = "c" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "-" + strconv.Itoa(i)
		l.stdio(schema.DirClientToServer, req(1, "tools/call", `{"name":"slow"}`))
	}
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.MaxOpen = 10
	for i, o := range l.obs {
		c.Add(o)
		// Every conversation before the last ten has been ended (closed).
		if closed := c.Stats.Closed; closed != int64(max(0, i+1-10)) {
			t.Fatalf("after %d conversations, %d closed, want %d", i+1, closed, max(0, i+1-10))
		}
	}
	c.Flush()
	if c.Stats.Evicted != 490 || len(out) != 500 || c.Stats.Observations != 500 {
		t.Fatalf("evicted %d, rows %d, observations %d", c.Stats.Evicted, len(out), c.Stats.Observations)
	}
	cut := 0
	for _, r := range out {
		if r.HoldCut {
			cut++
		}
	}
	if cut != 490 {
		t.Fatalf("%d rows hold_cut, want 490", cut)
	}
}
