package decode

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// bigHAR is a reader of a HAR document of about size bytes: the entries of
// the samples repeated, each copy with its own session ids, never held whole.
func bigHAR(t testing.TB, size int64) io.Reader {
	var entries []string
	for _, name := range []string{"mitmproxy.har", "devtools.har", "mitmproxy-batch.har"} {
		b, err := os.ReadFile(filepath.Join(harSamples, name))
		if err != nil {
			t.Fatal(err)
		}
		gjson.GetBytes(b, "log.entries").ForEach(func(_, e gjson.Result) bool {
			entries = append(entries, e.Raw)
			return true
		})
	}
	return &harGen{entries: entries, size: size, pending: []byte(`{"log":{"version":"1.2","entries":[`)}
}

type harGen struct {
	entries []string
	size    int64
	n       int64 // bytes produced
	k       int   // entries produced
	pending []byte
	done    bool
}

var harSessionIDs = []string{"0b6a2f3e-7c41-4d2a-9e55-8f1c0d3b7a19", "2c5ea4c0-4067-41b3-9d1c-0e8a2f7b6d35", "4d9c1f70b2e84a6f9a3e5c7d1b2f8e60", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6"}

func (g *harGen) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.done {
			return 0, io.EOF
		}
		if g.n >= g.size {
			g.pending, g.done = []byte("],\"creator\":{\"name\":\"gen\"}}}\n"), true
			break
		}
		e := g.entries[g.k%len(g.entries)]
		copyNo := g.k / len(g.entries)
		for _, s := range harSessionIDs {
			e = strings.ReplaceAll(e, s, fmt.Sprintf("%s-%d", s, copyNo))
		}
		if g.k > 0 {
			e = "," + e
		}
		g.k++
		g.pending = []byte(e)
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	g.n += int64(n)
	return n, nil
}

// BenchmarkHAR decodes a 32 MiB HAR file of realistic entries (the
// samples', repeated with their own session ids), read from the page cache
// as ingest reads a file. peak-heap-MiB is the most heap in use while it
// decodes (sampled every 500 entries).
func BenchmarkHAR(b *testing.B) {
	path := filepath.Join(b.TempDir(), "b.har")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.Copy(f, bigHAR(b, 32<<20))
	if err != nil || f.Close() != nil {
		b.Fatal(err)
	}
	dec, _ := DecoderFor(FormatHAR)
	b.SetBytes(size)
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		e := &benchEmitter{}
		if err := dec("b.har", f, e); err != nil || e.records == 0 {
			b.Fatalf("%v after %d records", err, e.records)
		}
		f.Close()
		peak = max(peak, e.peak)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// benchEmitter counts what it is given and drops it, and samples the heap.
type benchEmitter struct {
	records, asks int
	peak          uint64
}

func (e *benchEmitter) Observation(*schema.Observation)                    { e.records++ }
func (e *benchEmitter) Quarantine(schema.Position, string, string, []byte) { e.records++ }
func (e *benchEmitter) Skip(schema.Position, string)                       { e.records++ }
func (e *benchEmitter) Stopped() bool {
	if e.asks++; e.asks%500 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		e.peak = max(e.peak, m.HeapInuse)
	}
	return false
}
