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

// BenchmarkCorrelatorState feeds the correlator a stream of short sessions
// (ten tools/call exchanges each, 100 ms apart, a new session every second)
// built on the fly, and reports the peak live heap. With an idle timeout the
// state is the open conversations, not the input: the peak must stay flat
// as the input grows (compare the two sizes).
func BenchmarkCorrelatorState(b *testing.B) {
	for _, n := range []int{200_000, 2_000_000} {
		b.Run(fmt.Sprintf("exchanges=%d", n), func(b *testing.B) {
			for b.Loop() {
				peak, rows := runState(n)
				if rows != n {
					b.Fatalf("%d rows for %d exchanges", rows, n)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			}
		})
	}
}

func runState(n int) (peak uint64, rows int) {
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
		sess := "sess-" + strconv.Itoa(i/10)
		id := strconv.Itoa(i % 10)
		o := &schema.Observation{Pos: schema.Position{Source: "bench", Line: int64(i + 1)}, Side: schema.SideClient,
			Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at.Add(20 * time.Millisecond), SessionID: sess, Format: "wire"}
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
