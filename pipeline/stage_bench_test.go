package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Benchmarks of issue 11 in this package: the redaction of finished rows
// (RedactExchange, the stage between the correlator and the sink) and the
// allocations of the whole wire path.
//
//	go test ./pipeline -run '^$' -bench 'BenchmarkRedactExchange|BenchmarkWireAllocs' -benchmem

// benchWireLog writes a client-side wire log of about size bytes to w and
// returns its size. It is the one place this file's input is made:
// internal/traffic: a realistic client-side wire log of 400 interleaved sessions (seed 1).
func benchWireLog(tb testing.TB, w *bytes.Buffer, size int64) int64 {
	tb.Helper()
	if _, err := traffic.Write(w, traffic.Options{Seed: 1, Bytes: size, Sessions: 400}); err != nil {
		tb.Fatal(err)
	}
	return int64(w.Len())
}

// benchRows decodes and correlates a wire log of about size bytes and
// returns its rows as the correlator hands them to redaction, with the
// log's size.
func benchRows(tb testing.TB, size int64) ([]schema.Exchange, int64) {
	tb.Helper()
	var log bytes.Buffer
	n := benchWireLog(tb, &log, size)
	var rows []schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
	c.IdleTimeout, c.Lateness = 30*time.Minute, 10*time.Minute
	dec, _ := decode.DecoderFor(decode.FormatWire)
	if err := dec("bench.ndjson", &log, obsFunc(c.Add)); err != nil {
		tb.Fatal(err)
	}
	c.Flush()
	if len(rows) == 0 {
		tb.Fatal("no rows")
	}
	return rows, n
}

// obsFunc is an Emitter that hands observations on and fails on anything
// else (the benchmark log has no bad or skipped records).
type obsFunc func(*schema.Observation)

func (f obsFunc) Observation(o *schema.Observation) { f(o) }
func (f obsFunc) Quarantine(pos schema.Position, reason, detail string, _ []byte) {
	panic(fmt.Sprintf("benchmark log: line %d quarantined: %s: %s", pos.Line, reason, detail))
}
func (f obsFunc) Skip(pos schema.Position, why string) {
	panic(fmt.Sprintf("benchmark log: line %d skipped: %s", pos.Line, why))
}

// BenchmarkRedactExchange applies the default policy to the rows of a wire
// log: pseudonyms, the detectors on every masked text field, URL
// sanitizing, the argument hash and shape. Input bytes are the wire log's
// (MB/s compares with decode and ingest); rows/s is rows redacted a second.
func BenchmarkRedactExchange(b *testing.B) {
	rows, size := benchRows(b, 8<<20)
	withArgs := 0
	for i := range rows {
		if rows[i].Arguments != nil {
			withArgs++
		}
	}
	if withArgs == 0 {
		b.Fatal("no row has arguments: the benchmark would not hash any")
	}
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	rd := &redact.Redactor{Policy: redact.DefaultPolicy(), Pseud: key, Stats: &redact.Stats{}}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for i := range rows {
			out := RedactExchange(rows[i], rd)
			if out.Arguments != nil {
				b.Fatal("arguments kept")
			}
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWireAllocs is the whole ingest of a wire log file (Run: read,
// decode, correlate, classify, redact, write Parquet) at the default
// workers, measured per input record: allocs/record is every allocation of
// the process during the runs (runtime.MemStats.Mallocs, all goroutines)
// over the input records read (issue 11's target: fewer than 20), and
// B/record the bytes allocated.
func BenchmarkWireAllocs(b *testing.B) {
	var log bytes.Buffer
	size := benchWireLog(b, &log, 16<<20)
	p := filepath.Join(b.TempDir(), "bench.ndjson")
	if err := os.WriteFile(p, log.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	b.SetBytes(size)
	b.ReportAllocs()
	var records int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		sum, err := Run(context.Background(), Config{Inputs: []string{p}, OutDir: b.TempDir(), Pseudonyms: key, Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		if !sum.Balanced() || sum.Quarantined != 0 || sum.Exchanges == 0 {
			b.Fatalf("%d exchanges, %d quarantined, balanced %v", sum.Exchanges, sum.Quarantined, sum.Balanced())
		}
		records += sum.Records
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(records), "allocs/record")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(records), "B/record")
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
