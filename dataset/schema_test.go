package dataset

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

func exchanges(source string, n, days int) []schema.Exchange {
	out := make([]schema.Exchange, n)
	for i := range out {
		at := day0.AddDate(0, 0, i*days/n).Add(time.Duration(i) * time.Second)
		lat := float64(i % 97)
		out[i] = schema.Exchange{
			ExchangeID: fmt.Sprintf("%s-%06d", source, i), Source: source, SourceLine: int64(i + 1), Sides: "client",
			Initiator: "client", StartedAt: at, EndedAt: at.Add(20 * time.Millisecond), LatencyMS: &lat,
			Transport: "streamable-http", SessionID: schema.Str(fmt.Sprintf("s%03d", i%50)), Method: "tools/call",
			ToolName: schema.Str("synthetic"), HTTPStatuses: []int32{200}, PostCount: 1, Outcome: "TOOL_SUCCESS",
			Layer: "none", Reason: "ok", Format: "wire", RetryOrigin: "none", RetryAdvice: "none", FailedHop: "none",
		}
	}
	return out
}

func quarantined(source string, n int) []schema.Quarantine {
	out := make([]schema.Quarantine, n)
	for i := range out {
		out[i] = schema.Quarantine{Source: source, Line: int64(i + 1), ObservedAt: day0, Reason: "bad_json", Detail: "truncated", Bytes: 12, Excerpt: "{\"a\":"}
	}
	return out
}

func writeSchemaRun(t *testing.T, dir string) *Manifest {
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	ex := NewTable[schema.Exchange](txn, "exchanges", func(e *schema.Exchange) time.Time { return e.StartedAt }, RollPolicy{MaxRows: 300})
	q := NewTable[schema.Quarantine](txn, "quarantine", func(q *schema.Quarantine) time.Time { return q.ObservedAt }, RollPolicy{})
	if err := ex.Write(src("file:/logs/client.ndjson"), exchanges("client.ndjson", 1000, 3)); err != nil {
		t.Fatal(err)
	}
	if err := ex.Write(src("file:/logs/server.ndjson"), exchanges("server.ndjson", 10, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{done("file:/logs/client.ndjson"), done("file:/logs/server.ndjson")}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Close(); err != nil {
		t.Fatal(err)
	}
	_ = q
	return d.Manifest()
}

// The pipeline's row types: exchanges and an empty quarantine table, read
// by DuckDB; two runs give byte-identical files.
func TestSchemaRows(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	m := writeSchemaRun(t, a)
	writeSchemaRun(t, b)
	if m.Rows("exchanges") != 1010 || len(m.Files("exchanges")) < 4 {
		t.Fatalf("manifest: %d rows in %d files", m.Rows("exchanges"), len(m.Files("exchanges")))
	}
	if !reflect.DeepEqual(tablesOnly(snapshot(t, a)), tablesOnly(snapshot(t, b))) {
		t.Fatal("two runs of the same rows gave different files")
	}
	db := duck(t)
	var n, sessions int64
	var dts string
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT session_id), string_agg(DISTINCT dt::VARCHAR, ',' ORDER BY dt::VARCHAR) FROM read_parquet(?, hive_partitioning = true)`,
		filepath.Join(a, "exchanges", "*", "*.parquet")).Scan(&n, &sessions, &dts); err != nil {
		t.Fatal(err)
	}
	if n != 1010 || sessions != 50 || dts != "2026-10-17,2026-10-18,2026-10-19" {
		t.Fatalf("DuckDB: %d rows, %d sessions, partitions %s", n, sessions, dts)
	}
	for _, hive := range []bool{true, false} {
		if n := duckCount(t, db, filepath.Join(a, "quarantine", "**", "*.parquet"), hive, "WHERE reason = 'bad_json'"); n != 0 {
			t.Fatalf("empty quarantine: %d rows", n)
		}
	}
	var cols string
	if err := db.QueryRow(`SELECT string_agg(column_name, ',') FROM (DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false))`, filepath.Join(a, "quarantine", "*", "*.parquet")).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if cols != "source,line,observed_at,reason,detail,bytes,excerpt" {
		t.Fatalf("empty quarantine file's columns: %s", cols)
	}

	// Quarantine rows replace the zero-row file.
	d := open(t, a)
	txn := begin(t, d, "r2")
	q := NewTable[schema.Quarantine](txn, "quarantine", func(q *schema.Quarantine) time.Time { return q.ObservedAt }, RollPolicy{})
	if err := q.Write(src("stdin:sha256:00ff"), quarantined("-", 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{done("stdin:sha256:00ff")}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	d.Close()
	if got := tableFiles(t, a, "quarantine"); len(got) != 1 || !strings.HasPrefix(filepath.Base(got[0]), "stdin-") {
		t.Fatalf("quarantine files: %v", got)
	}
	if n := duckCount(t, db, filepath.Join(a, "quarantine", "*", "*.parquet"), true, "WHERE reason = 'bad_json'"); n != 4 {
		t.Fatalf("quarantine: %d rows", n)
	}
}

// BenchmarkPartitions writes the same 200,000 exchanges spread over 10 or
// 1,000 date partitions (in time order, as logs are) with MaxOpen 8 and
// reports the peak live heap above that of the rows themselves, sampled
// every 20,000 rows: it does not grow with the partitions. The
// last case lifts the bound (a writer per partition, as pipeline/sink.go
// did) for comparison.
func BenchmarkPartitions(b *testing.B) {
	for _, c := range []struct{ days, maxOpen int }{{10, 8}, {1000, 8}, {1000, 1000}} {
		days := c.days
		b.Run(fmt.Sprintf("dates=%d/maxopen=%d", c.days, c.maxOpen), func(b *testing.B) {
			const n = 200000
			rs := exchanges("client.ndjson", n, days)
			var peak uint64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				d := open(b, dir)
				txn := begin(b, d, fmt.Sprintf("r%d", i))
				tb := NewTable[schema.Exchange](txn, "exchanges", func(e *schema.Exchange) time.Time { return e.StartedAt }, RollPolicy{MaxOpen: c.maxOpen})
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc // the rows to write
				for j := 0; j < n; j += 5000 {
					if err := tb.Write(src("file:/a"), rs[j:j+5000]); err != nil {
						b.Fatal(err)
					}
					if j%20000 == 0 { // a forced GC on every Write would be what the benchmark measures
						runtime.GC()
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
					}
				}
				if _, err := txn.Commit([]SourceState{done("file:/a")}); err != nil {
					b.Fatal(err)
				}
				txn.Close()
				d.Close()
			}
			b.ReportMetric(float64(peak)/(1<<20), "writer-heap-MiB")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
