package correlate

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"mcptrace/decode"
	"mcptrace/schema"
)

// The state a long-lived conversation keeps is bounded by its history, not
// by how many requests it has sent; what it keeps of a judged request
// holds no row, no attempt and no message, and no exchange (history.go).
func TestHistoryStateIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sess   string
		conn   string
		limit  int
		server bool
	}{
		{"session", "s1", "", DefaultHistory, false},
		{"connection", "", "c1", DefaultHistory, false},
		{"file", "", "", 16 * DefaultHistory, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows int
			c := New(func(*schema.Exchange) { rows++ })
			t0 := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
			n := 3 * tc.limit
			side := schema.SideClient
			if tc.server {
				side = schema.SideServer
			}
			for i := 0; i < n; i++ {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				id := strconv.Itoa(i)
				o := &schema.Observation{Pos: schema.Position{Source: "t", Line: int64(i + 1)}, Side: side, Format: "wire",
					Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at, SessionID: tc.sess, Connection: tc.conn,
					HTTP: &schema.HTTPEvidence{Method: "POST", Responded: true, Status: 200, ContentType: "application/json", BodyRecorded: true}}
				o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"search","arguments":{"q":"`+id+`"}}}`), schema.InRequestBody, 0)
				o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[]}}`), schema.InResponseBody, 0)
				c.Add(o)
			}
			if len(c.convs) != 1 {
				t.Fatalf("%d conversations", len(c.convs))
			}
			for _, cv := range c.convs {
				if c.historyOf(cv) != tc.limit {
					t.Errorf("history %d, want %d", c.historyOf(cv), tc.limit)
				}
				ids, calls := 0, 0
				cv.idx.each(func(isCall bool, _ remRef) {
					if isCall {
						calls++
					} else {
						ids++
					}
				})
				if cv.past.len() != tc.limit || ids > tc.limit || calls > tc.limit {
					t.Errorf("after %d requests: %d remembered, %d by id, %d calls; bound %d", n, cv.past.len(), ids, calls, tc.limit)
				}
				cv.idx.each(func(isCall bool, x remRef) {
					if !isCall && x.ex != nil {
						t.Fatalf("a judged request keeps its exchange (its row and evidence)")
					}
				})
				for _, ex := range cv.openList {
					if ex != nil && ex.final {
						t.Fatalf("the open list keeps a judged exchange whose row is out")
					}
				}
			}
			c.Flush()
			if rows != n {
				t.Errorf("%d rows, want %d", rows, n)
			}
		})
	}
}

// remIndex gives the requests of an id in the order they were added, and
// the latest request of a call, through its moves from a list to a table
// and back, deletions (one at a time and filtered), collisions of homes,
// and live requests whose summaries take their places.
func TestRemIndex(t *testing.T) {
	type entry struct {
		call bool
		r    remRef
	}
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	for round := 0; round < 40; round++ {
		var ix remIndex
		var want []entry // in the order added
		keys := 1 + rng.IntN(40)
		newRef := func() remRef {
			n, started := rng.IntN(keys), rng.IntN(1000)
			if rng.IntN(2) == 0 {
				return remRef{ex: &exchange{id: schema.ID{Type: schema.IDNumber, Text: strconv.Itoa(n)}, callHash: uint64(n) * 7,
					startedAt: at.Add(time.Duration(started))}}
			}
			return remRef{x: &rem{idType: schema.IDNumber, idKey: strconv.Itoa(n), callHash: uint64(n) * 7, started: stamp(at.Add(time.Duration(started)).UnixNano())}}
		}
		check := func(step string) {
			t.Helper()
			if ix.len() != len(want) {
				t.Fatalf("round %d, %s: %d entries, want %d", round, step, ix.len(), len(want))
			}
			for n := 0; n < keys; n++ {
				k := idKey{schema.IDNumber, strconv.Itoa(n)}
				var ids []remRef
				var call remRef
				for _, e := range want {
					switch {
					case !e.call && e.r.key() == k:
						ids = append(ids, e.r)
					case e.call && e.r.call() == uint64(n)*7:
						call = e.r
					}
				}
				if got := ix.ids(k, nil); !slices.Equal(got, ids) {
					t.Fatalf("round %d, %s: id %d gives %d requests, want %d (or in another order)", round, step, n, len(got), len(ids))
				}
				if got := ix.call(uint64(n) * 7); got != call {
					t.Fatalf("round %d, %s: call %d gives %v, want %v", round, step, n, got, call)
				}
			}
			if ix.isTable() && 8*ix.len() <= cap(ix.s) {
				t.Fatalf("round %d, %s: a table of %d slots for %d entries", round, step, cap(ix.s), ix.len())
			}
		}
		for op := 0; op < 400; op++ {
			switch r := rng.IntN(21); {
			case r < 9:
				x := newRef()
				ix.addID(x.key(), x)
				want = append(want, entry{false, x})
			case r < 12:
				x := newRef()
				ix.setCall(x.call(), x)
				i := slices.IndexFunc(want, func(e entry) bool { return e.call && e.r.call() == x.call() })
				if i >= 0 {
					want[i].r = x
				} else {
					want = append(want, entry{true, x})
				}
			case r < 18 && len(want) > 0:
				i := rng.IntN(len(want))
				if e := want[i]; e.call {
					ix.delCall(e.r.call())
				} else {
					ix.delID(e.r.key(), e.r)
				}
				want = slices.Delete(want, i, i+1)
			case r == 18:
				cut := at.Add(time.Duration(rng.IntN(1000)))
				keep := func(x remRef) bool { return !x.startedAt().Before(cut) }
				ix.filter(keep)
				want = slices.DeleteFunc(want, func(e entry) bool { return !keep(e.r) })
			case r > 18 && len(want) > 0:
				i := rng.IntN(len(want))
				ex := want[i].r.ex
				if ex == nil {
					break
				}
				x := &rem{idType: ex.id.Type, idKey: ex.id.Text, callHash: ex.callHash}
				ix.summarized(idHash(keyOf(ex.id)), ex, x)
				ix.summarized(callSlotHash(ex.callHash), ex, x)
				for j := range want {
					if want[j].r.ex == ex {
						want[j].r = x.ref()
					}
				}
			}
			check("op " + strconv.Itoa(op))
		}
	}
}

// A conversation's history gives back its requests oldest first, through
// growths that find it wrapped around its buffer.
func TestHistoryRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cv conversation
	var want []*rem
	for op := 0; op < 5000; op++ {
		if len(want) > 0 && rng.IntN(5) < 2 {
			if got := cv.oldestPast(); got != want[0] {
				t.Fatalf("op %d: oldest %p, want %p", op, got, want[0])
			}
			if got := cv.popPast(); got != want[0] {
				t.Fatalf("op %d: popped %p, want %p", op, got, want[0])
			}
			want = want[1:]
		} else {
			x := &rem{}
			cv.pushPast(x)
			want = append(want, x)
		}
		if cv.past.len() != len(want) {
			t.Fatalf("op %d: %d remembered, want %d", op, cv.past.len(), len(want))
		}
	}
	for len(want) > 0 {
		if got := cv.popPast(); got != want[0] {
			t.Fatalf("draining: popped %p, want %p", got, want[0])
		}
		want = want[1:]
	}
}
