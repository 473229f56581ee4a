package dataset_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/dataset"
	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/pipeline"
	"mcptrace/redact"
	"mcptrace/schema"
)

// benchRows decodes, correlates and redacts (default policy) a wire log of
// about size bytes and returns the rows as the pipeline's sink receives
// them, with the log's size. It is the one place this file's input is made:
// internal/traffic: a realistic client-side wire log of 400 interleaved sessions (seed 1).
func benchRows(tb testing.TB, size int64) ([]schema.Exchange, int64) {
	tb.Helper()
	var log bytes.Buffer
	if _, err := traffic.Write(&log, traffic.Options{Seed: 1, Bytes: size, Sessions: 400}); err != nil {
		tb.Fatal(err)
	}
	n := int64(log.Len())
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	rd := &redact.Redactor{Policy: redact.DefaultPolicy(), Pseud: key, Stats: &redact.Stats{}}
	var rows []schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { rows = append(rows, pipeline.RedactExchange(*e, rd)) })
	c.IdleTimeout, c.Lateness = 30*time.Minute, 10*time.Minute
	e := &rowEmitter{c: c}
	dec, _ := decode.DecoderFor(decode.FormatWire)
	if err := dec("bench.ndjson", &log, e); err != nil {
		tb.Fatal(err)
	}
	c.Flush()
	if e.other != 0 || len(rows) == 0 {
		tb.Fatalf("benchmark log: %d rows, %d records not observations", len(rows), e.other)
	}
	return rows, n
}

type rowEmitter struct {
	c     *correlate.Correlator
	other int
}

func (e *rowEmitter) Observation(o *schema.Observation)                  { e.c.Add(o) }
func (e *rowEmitter) Quarantine(schema.Position, string, string, []byte) { e.other++ }
func (e *rowEmitter) Skip(schema.Position, string)                       { e.other++ }

// BenchmarkWriteExchanges writes the redacted rows of a 32 MiB wire log
// (about 35,000 rows, in one row group) into a fresh dataset
// through dataset.Table[schema.Exchange], as the pipeline's sink does: the
// default roll policy (zstd, 65,536-row row groups), batches of 2,048 rows
// (the pipeline's rounds), one commit at the end (files fsynced, renamed,
// the manifest written). Input bytes are the wire log's (MB/s compares with
// decode and ingest); rows/s is rows written a second, out-B/row the
// Parquet bytes per row.
func BenchmarkWriteExchanges(b *testing.B) {
	rows, size := benchRows(b, 32<<20)
	const batch = 2048
	b.SetBytes(size)
	b.ReportAllocs()
	var written, outBytes int64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		ds, err := dataset.Open(context.Background(), dir, dataset.Options{})
		if err != nil {
			b.Fatal(err)
		}
		txn, err := ds.Begin("", time.Date(2026, 10, 18, 0, 0, 0, 0, time.UTC))
		if err != nil {
			b.Fatal(err)
		}
		tb := dataset.NewTable[schema.Exchange](txn, "exchanges", func(e *schema.Exchange) time.Time { return e.StartedAt }, dataset.RollPolicy{})
		for i := 0; i < len(rows); i += batch {
			if err := tb.Write(dataset.Source{ID: "bench.ndjson"}, rows[i:min(i+batch, len(rows))]); err != nil {
				b.Fatal(err)
			}
		}
		files, err := txn.Commit([]dataset.SourceState{{ID: "bench.ndjson", Complete: true}})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, f := range files {
			n += f.Rows
			outBytes += f.Bytes
		}
		if n != int64(len(rows)) {
			b.Fatalf("%d rows committed of %d", n, len(rows))
		}
		written += n
		if err := txn.Close(); err != nil {
			b.Fatal(err)
		}
		if err := ds.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(outBytes)/float64(written), "out-B/row")
}
