package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"mcptrace/correlate"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// BenchmarkOpenConversationsHeap measures the live heap an open
// conversation keeps in a run's correlation: the generator's
// open-conversations shape (each conversation an answered initialize, its
// notification and a request never finished), decoded as the decode stage
// decodes it and correlated as a shard and the Linker correlate it, with
// no idle timeout. It reports the live heap after a collection per open
// conversation (issue 11: at most 2 KiB). With
// MCPTRACE_OPEN_HEAPPROFILE=FILE it writes a heap profile taken while
// they are all open.
func BenchmarkOpenConversationsHeap(b *testing.B) {
	for _, n := range []int{20_000} {
		b.Run(fmt.Sprintf("conversations=%d", n), func(b *testing.B) {
			var log bytes.Buffer
			if _, err := traffic.Write(&log, traffic.Options{Seed: 1, Side: "client", Shape: traffic.ShapeOpenConversations, Conversations: n}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.ReportMetric(openHeap(b, log.Bytes(), n), "bytes/conversation")
			}
		})
	}
}

func openHeap(b *testing.B, log []byte, n int) float64 {
	if os.Getenv("MCPTRACE_OPEN_HEAPPROFILE") != "" {
		defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	rows := 0
	lk := correlate.NewLinker(func(correlate.Row) { rows++ })
	c := correlate.NewShard(lk.Add)
	clock := correlate.NewClock()
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<24)
	var line int64
	for sc.Scan() {
		line++
		o, reason, detail := wireRecord(append([]byte(nil), sc.Bytes()...), schema.Position{Source: "open.ndjson", Line: line})
		if reason != "" {
			b.Fatalf("line %d: %s: %s", line, reason, detail)
		}
		o.Seq, o.Pos.ID = line, "file:open.ndjson"
		clock.Stamp(o)
		c.Add(o)
		if line%chunkLines == 0 {
			m := clock.Mark(line)
			c.Advance(m)
			lk.Advance(m)
		}
	}
	m := clock.Mark(line + 1)
	c.Advance(m)
	lk.Advance(m)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if open := c.OpenConversations(); open != n {
		b.Fatalf("%d conversations open, want %d", open, n)
	}
	if f := os.Getenv("MCPTRACE_OPEN_HEAPPROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	per := float64(int64(ms.HeapAlloc)-int64(before)) / float64(n)
	runtime.KeepAlive(c)
	runtime.KeepAlive(lk)
	return per
}
