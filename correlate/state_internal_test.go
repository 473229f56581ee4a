package correlate

import (
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
				ids := 0
				cv.byID.each(func(_ idKey, list []*rem) { ids += len(list) })
				if cv.past.len() != tc.limit || ids > tc.limit || cv.calls.len() > tc.limit {
					t.Errorf("after %d requests: %d remembered, %d by id, %d calls; bound %d", n, cv.past.len(), ids, cv.calls.len(), tc.limit)
				}
				cv.byID.each(func(_ idKey, list []*rem) {
					for _, x := range list {
						if x.ex != nil {
							t.Fatalf("a judged request keeps its exchange (its row and evidence)")
						}
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

// smallMap behaves as a map through its move from the slice to a map and
// back to fewer entries.
func TestSmallMap(t *testing.T) {
	var s smallMap[int, string]
	want := map[int]string{}
	check := func(step string) {
		t.Helper()
		if s.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, s.len(), len(want))
		}
		for k, v := range want {
			if got := s.get(k); got != v {
				t.Fatalf("%s: get(%d) = %q, want %q", step, k, got, v)
			}
		}
		seen := 0
		s.each(func(k int, v string) {
			seen++
			if want[k] != v {
				t.Fatalf("%s: each gave %d=%q", step, k, v)
			}
		})
		if seen != len(want) || s.get(-1) != "" {
			t.Fatalf("%s: each saw %d of %d", step, seen, len(want))
		}
	}
	for i := 0; i < 3*smallMax; i++ {
		s.set(i, strconv.Itoa(i))
		want[i] = strconv.Itoa(i)
		s.set(i/2, "again")
		want[i/2] = "again"
		check("set " + strconv.Itoa(i))
		if i%3 == 0 {
			s.del(i / 3)
			delete(want, i/3)
			check("del " + strconv.Itoa(i))
		}
	}
	s.each(func(k int, _ string) {
		if k%2 == 0 {
			s.del(k)
			delete(want, k)
		}
	})
	check("deleting in each")
}
