package correlate_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// BenchmarkCorrelatorState feeds the correlator tools/call exchanges 100 ms
// apart, built on the fly, in three shapes: short sessions (10 calls each),
// long sessions (1,000 calls each), and one 2026-07-28 connection reusing id
// 1 for every call; every call has arguments of its own. It reports the
// peak live heap: with an idle timeout the state is the open conversations
// and what they still need, not the input, so the peak must stay flat as the
// input grows tenfold (bench/state.sh prints the ratios).
func BenchmarkCorrelatorState(b *testing.B) {
	shapes := []struct {
		name        string
		perSession  int  // calls per session
		reuseID     bool // 2026-07-28: every call reuses id 1, no session
		distinctArg bool // every call has arguments of its own
	}{
		{"short-sessions", 10, false, true},
		{"long-sessions", 1000, false, true},
		{"id-reuse", 0, true, true},
	}
	for _, sh := range shapes {
		for _, n := range []int{200_000, 2_000_000} {
			b.Run(fmt.Sprintf("%s/exchanges=%d", sh.name, n), func(b *testing.B) {
				for b.Loop() {
					peak, rows := runState(n, sh.perSession, sh.reuseID)
					if rows != n {
						b.Fatalf("%d rows for %d exchanges", rows, n)
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				}
			})
		}
	}
}

func runState(n, perSession int, reuseID bool) (peak uint64, rows int) {
	c := correlate.New(func(*schema.Exchange) { rows++ })
	c.IdleTimeout = time.Minute
	t0 := time.Date(2026, 10, 17, 0, 0, 0, 0, time.UTC)
	var ms runtime.MemStats
	sample := func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		sess, id := "", "1"
		if !reuseID {
			sess, id = "sess-"+strconv.Itoa(i/perSession), strconv.Itoa(i%perSession)
		}
		o := &schema.Observation{Pos: schema.Position{Source: "bench", Line: int64(i + 1)}, Side: schema.SideClient,
			Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at.Add(20 * time.Millisecond), SessionID: sess, Connection: "c", Format: "wire"}
		ev := &schema.HTTPEvidence{Method: "POST", Responded: true, Status: 200, ContentType: "application/json", BodyRecorded: true}
		o.HTTP = ev
		o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"search","arguments":{"q":"`+strconv.Itoa(i)+`"}}}`), schema.InRequestBody, 0)
		o.Messages = decode.AppendMessages(o.Messages, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"ok"}]}}`), schema.InResponseBody, 0)
		c.Add(o)
		if i%100_000 == 0 {
			sample()
		}
	}
	sample()
	c.Flush()
	return peak, rows
}
