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

// BenchmarkCorrelatorOpenConversations measures what one conversation that
// never finishes costs while it is open: n client sessions, each an
// initialize (answered) and a tools/call answered 202 whose response never
// comes, decoded from wire-log lines as ingest decodes them, fed to a
// correlator with its Linker (New) and no idle timeout. It reports the live
// heap per open conversation (bytes/conversation; the issue 11 target is
// at most 2 KiB) and checks that every exchange is written at the end.
func BenchmarkCorrelatorOpenConversations(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprintf("conversations=%d", n), func(b *testing.B) {
			for b.Loop() {
				per, rows := runOpen(b, n)
				if rows != 2*n {
					b.Fatalf("%d rows for %d conversations", rows, n)
				}
				b.ReportMetric(per, "bytes/conversation")
			}
		})
	}
}

// openLines returns the two wire-log lines of open conversation i.
func openLines(i int) [2]string {
	t0 := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	ts := func(d time.Duration) string { return t0.Add(d).Format("2006-01-02T15:04:05.000Z") }
	s := fmt.Sprintf("sess-%07d", i)
	head := `{"mcptrace":"wire/1","ts":"%s","end_ts":"%s","side":"client","transport":"streamable-http","session_id":"` + s +
		`","protocol_version":"2025-11-25","client":{"name":"bench-agent","version":"1.0.0"},"http":{"request":{"method":"POST","url":"https://mcp.example.com/mcp","headers":{"content-type":"application/json","mcp-session-id":"` + s + `"},"body":"%s"},"response":%s}}`
	init := fmt.Sprintf(head, ts(0), ts(5*time.Millisecond),
		`{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench-agent\",\"version\":\"1.0.0\"}}}`,
		`{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"bench-server\",\"version\":\"1.0.0\"}}}"}`)
	call := fmt.Sprintf(head, ts(6*time.Millisecond), ts(8*time.Millisecond),
		`{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"open call `+strconv.Itoa(i)+`\",\"limit\":20}}}`,
		`{"status":202,"body":""}`)
	return [2]string{init, call}
}

func runOpen(b testing.TB, n int) (bytesPer float64, rows int) {
	c := correlate.New(func(*schema.Exchange) { rows++ })
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	line := int64(0)
	for i := 0; i < n; i++ {
		for _, l := range openLines(i) {
			line++
			o, err := decode.WireLine([]byte(l), schema.Position{Source: "open.ndjson", Line: line})
			if err != nil {
				b.Fatal(err)
			}
			c.Add(&o)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if got := c.OpenConversations(); got != n {
		b.Fatalf("%d conversations open, want %d", got, n)
	}
	bytesPer = float64(int64(ms.HeapAlloc)-int64(before)) / float64(n)
	c.Flush()
	return bytesPer, rows
}

// TestOpenConversationMemory bounds what an open conversation keeps: the
// live heap after a GC, per conversation, of 20,000 sessions that each
// sent an initialize (answered) and a tools/call still waiting, through a
// correlator and its Linker. The bound (2.5 KiB, against the issue 11
// target of 2 KiB; they take about 1.9 KB today, with their waiting rows
// parked) is no timing and leaves room for noise: it catches a change
// that makes a waiting conversation keep its records' bodies or decoded
// messages (each of these records' bodies is over 250 bytes, a record's
// decoded messages more), or its waiting row whole.
func TestOpenConversationMemory(t *testing.T) {
	const n, bound = 20_000, 5 << 9
	per, rows := runOpen(t, n)
	if rows != 2*n {
		t.Fatalf("%d rows for %d conversations", rows, n)
	}
	t.Logf("%.0f bytes per open conversation", per)
	if per > bound {
		t.Errorf("an open conversation keeps %.0f bytes, over the bound of %d", per, bound)
	}
}
