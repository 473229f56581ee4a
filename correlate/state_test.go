package correlate_test

import (
	"fmt"
	"testing"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// runWith runs a log through a correlator with a history bound (0: the
// default, negative: none).
func runWith(l *logb, history int) []*schema.Exchange {
	var out []*schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { cp := *e; out = append(out, &cp) })
	c.History = history
	for _, o := range l.obs {
		c.Add(o)
	}
	c.Flush()
	return out
}

// retryAfter builds a session in which a call fails (a JSON-RPC error: it
// is judged at once; a call whose POST failed stays open, see
// TestHistoryKeepsOpenRequests), then others other calls succeed, then the
// failed call is sent again under a new id.
func retryAfter(t *testing.T, others int) *logb {
	l := newLog(t)
	l.sess = "s1"
	l.post(req(0, "tools/call", `{"name":"create_ticket","arguments":{"title":"disk full"}}`), 200, "application/json",
		str(`{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"boom"}}`))
	for i := 1; i <= others; i++ {
		l.post(req(i, "tools/call", fmt.Sprintf(`{"name":"search","arguments":{"q":"%d"}}`, i)), 200, "application/json", str(ok(i)))
	}
	id := others + 1
	l.post(req(id, "tools/call", `{"name":"create_ticket","arguments":{"title":"disk full"}}`), 200, "application/json", str(ok(id)))
	return l
}

// A conversation remembers its open requests and its latest DefaultHistory
// judged ones: a retry that comes with fewer judged requests between it and
// the failure it repeats is linked as before; the bound only forgets what
// is further back (a long-lived session does not keep every request it
// ever sent), and -1 lifts it.
func TestHistoryBound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		others  int
		history int
		linked  bool
	}{
		{"within", correlate.DefaultHistory - 1, 0, true},
		{"beyond", correlate.DefaultHistory + 1, 0, false},
		{"small bound", 9, 8, false},
		{"unbounded", 3 * correlate.DefaultHistory, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := retryAfter(t, tc.others)
			got := runWith(l, tc.history)
			x := byID(got)
			first, last := x["0"], x[fmt.Sprint(tc.others+1)]
			if len(got) != tc.others+2 || first == nil || last == nil {
				t.Fatalf("%d rows", len(got))
			}
			if first.Outcome != "JSONRPC_ERROR" {
				t.Errorf("the failed call: %s", first.Outcome)
			}
			linked := last.RetryOf != nil && *last.RetryOf == first.ExchangeID && last.RetryOrigin == "application" &&
				*last.RetryBasis == "same_call_after_failure"
			if linked != tc.linked {
				t.Errorf("retry linked = %v, want %v (%+v)", linked, tc.linked, last)
			}
			if !tc.linked && (last.RetryOrigin != "none" || last.RetryOf != nil) {
				t.Errorf("a call repeated beyond the history is a new call: %+v", last)
			}
			// Nothing else changes: every other row is the same as
			// with no bound.
			ref := byID(runWith(retryAfter(t, tc.others), -1))
			for id, g := range x {
				if id == fmt.Sprint(tc.others+1) {
					continue
				}
				r := ref[id]
				if g.Outcome != r.Outcome || g.RetryOrigin != r.RetryOrigin || g.PostCount != r.PostCount || g.ExchangeID != r.ExchangeID {
					t.Errorf("row %s differs from the unbounded run: %+v, %+v", id, g, r)
				}
			}
		})
	}
}

// Open requests are never forgotten, however many judged requests follow
// them: a request whose POST failed waits for its re-POST (the same id),
// which joins it as another attempt, and a 202 whose answer comes on a GET
// stream much later still pairs.
func TestHistoryKeepsOpenRequests(t *testing.T) {
	l := newLog(t)
	l.sess = "s1"
	charge := req(0, "tools/call", `{"name":"charge_card","arguments":{"amount":12}}`)
	l.post(charge, 503, "", str(""))
	l.post(req(1, "tools/call", `{"name":"slow","arguments":{}}`), 202, "", str(""))
	n := 4 * correlate.DefaultHistory
	for i := 2; i < n; i++ {
		l.post(req(i, "tools/call", fmt.Sprintf(`{"name":"search","arguments":{"q":"%d"}}`, i)), 200, "application/json", str(ok(i)))
	}
	l.post(charge, 200, "application/json", str(ok(0)))
	l.get(*sse(ok(1)), "", schema.StreamComplete)
	got := runWith(l, 0)
	x := byID(got)
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	if g := x["0"]; g.PostCount != 2 || g.RetryOrigin != "sdk" || g.Outcome != "TOOL_SUCCESS" || fmt.Sprint(g.HTTPStatuses) != "[503 200]" {
		t.Errorf("re-POST after %d calls: %+v", n, g)
	}
	if g := x["1"]; g.Outcome != "TOOL_SUCCESS" || g.ResponseWhere == nil || *g.ResponseWhere != "get_stream" {
		t.Errorf("answer on a GET stream after %d calls: %+v", n, g)
	}
}

// A duplicate of a response to a request the conversation has forgotten
// is still counted as stray (at the end, rather than at once), and the
// accounting still balances.
func TestHistoryForgottenDuplicateResponse(t *testing.T) {
	l := newLog(t)
	l.sess = "s1"
	n := 2 * correlate.DefaultHistory
	for i := 0; i < n; i++ {
		l.post(req(i, "tools/call", fmt.Sprintf(`{"name":"search","arguments":{"q":"%d"}}`, i)), 200, "application/json", str(ok(i)))
	}
	l.get(*sse(ok(0)), "", schema.StreamComplete) // answers request 0 again
	for _, history := range []int{0, -1} {
		var rows int
		c := correlate.New(func(*schema.Exchange) { rows++ })
		c.History = history
		for _, o := range l.obs {
			c.Add(o)
		}
		c.Flush()
		s := c.Stats
		if rows != n || s.StrayMessages != 1 || s.Stray != 1 || s.Parked != 0 ||
			s.Contributing+s.NotificationOnly+s.Stray+s.Stderr+s.Other != s.Observations {
			t.Errorf("history %d: %d rows, stats %+v", history, rows, s)
		}
	}
}
