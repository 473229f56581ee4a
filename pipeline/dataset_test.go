package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rs/zerolog"

	"mcptrace/internal/synth"
	"mcptrace/pipeline"
)

func runAt(t *testing.T, out string, now time.Time, workers int, inputs ...string) *pipeline.Summary {
	t.Helper()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: inputs, OutDir: out, Pseudonyms: testKey(t), Workers: workers,
		Log: zerolog.Nop(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("ingest %v: %v", inputs, err)
	}
	if !sum.Balanced() {
		t.Fatalf("conservation: %+v", sum)
	}
	return sum
}

func writeSynthFile(t *testing.T, path string, o synth.Options) {
	t.Helper()
	var b bytes.Buffer
	if _, _, err := synth.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	b.WriteString("this line is not a wire record\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// datasetState is what a reader of the dataset sees: exchange rows, their
// distinct ids, quarantine rows, and the partitions.
type datasetState struct {
	rows, ids, quar int64
	ex, qdt         []string // partitions of each table
}

func stateOf(t *testing.T, out string) datasetState {
	t.Helper()
	db := duck(t)
	var s datasetState
	glob := filepath.Join(out, "exchanges", "*", "*.parquet")
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('%s')`, glob)).Scan(&s.rows, &s.ids); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s')`, filepath.Join(out, "quarantine", "*", "*.parquet"))).Scan(&s.quar); err != nil {
		t.Fatal(err)
	}
	list := func(table string) []string {
		ents, _ := os.ReadDir(filepath.Join(out, table))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	s.ex, s.qdt = list("exchanges"), list("quarantine")
	return s
}

// Reruns replace, never add: the same inputs as a subset, reordered, spelled
// differently, after a log shrank, and on another day always leave rows
// equal to the distinct exchange ids of the latest state, and no stale
// partitions.
func TestRerunMatrix(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	a, b := filepath.Join(logs, "a.ndjson"), filepath.Join(logs, "b.ndjson")
	writeSynthFile(t, a, synth.Options{Exchanges: 3000, Days: 6, Sessions: 40})
	writeSynthFile(t, b, synth.Options{Exchanges: 1000, Days: 2, Sessions: 10, Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	out := filepath.Join(dir, "out")
	day1 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

	// What a clean run of the current logs gives.
	clean := func(now time.Time, inputs ...string) datasetState {
		o := filepath.Join(t.TempDir(), "clean")
		runAt(t, o, now, 2, inputs...)
		return stateOf(t, o)
	}
	check := func(step string, want datasetState) {
		t.Helper()
		got := stateOf(t, out)
		if got.rows != got.ids {
			t.Errorf("%s: %d rows for %d distinct exchange ids: a rerun added rows", step, got.rows, got.ids)
		}
		if got.rows != want.rows || got.quar != want.quar {
			t.Errorf("%s: %d exchanges and %d quarantined, a clean run of the same logs gives %d and %d", step, got.rows, got.quar, want.rows, want.quar)
		}
		if strings.Join(got.ex, ",") != strings.Join(want.ex, ",") || strings.Join(got.qdt, ",") != strings.Join(want.qdt, ",") {
			t.Errorf("%s: partitions\n exchanges %v\n quarantine %v\nclean run:\n exchanges %v\n quarantine %v", step, got.ex, got.qdt, want.ex, want.qdt)
		}
	}
	both := clean(day1, a, b)
	runAt(t, out, day1, 2, a, b)
	check("first run", both)
	runAt(t, out, day1, 2, b, a)
	check("reordered", both)
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, a)
	if err != nil {
		t.Fatal(err)
	}
	runAt(t, out, day1, 1, "./"+rel)
	check("./a relative", both)
	runAt(t, out, day1, 3, a)
	check("absolute, a subset", both)
	link := filepath.Join(dir, "a-link.ndjson")
	os.Symlink(a, link)
	runAt(t, out, day1, 2, link)
	check("through a symlink", both)
	runAt(t, out, day1, 2, logs)
	check("the directory", both)

	// The log shrank to its first days: the partitions of the lost days go.
	data, _ := os.ReadFile(a)
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(a, []byte(strings.Join(lines[:len(lines)/3], "")), 0o644)
	shrunk := clean(day1, a, b)
	if len(shrunk.ex) >= len(both.ex) {
		t.Fatalf("the shrunk log should cover fewer days: %v vs %v", shrunk.ex, both.ex)
	}
	runAt(t, out, day1, 2, a)
	check("after the log shrank", shrunk)

	// Another day: quarantine rows (partitioned by run date) are replaced,
	// not doubled.
	day2 := day1.Add(24 * time.Hour)
	runAt(t, out, day2, 2, logs)
	check("on another day", clean(day2, logs))
}

// The same inputs give byte-identical exchange files, run after run and
// whatever -workers says; quarantine files differ only in their run-time
// column.
func TestSameInputsSameBytes(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.ndjson")
	writeSynthFile(t, big, synth.Options{Exchanges: 20000, Days: 3, Sessions: 300})
	inputs := []string{big, "../samples"}
	hashes := func(out, table string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(filepath.Join(out, table), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				sum := sha256.Sum256(b)
				rel, _ := filepath.Rel(out, p)
				m[rel] = hex.EncodeToString(sum[:])
			}
			return nil
		})
		return m
	}
	var first map[string]string
	var firstQuar string
	for i, workers := range []int{1, 4, 2, 1} {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		now := time.Date(2026, 11, 30, 9, 0, i, 0, time.UTC) // a different run time each run
		runAt(t, out, now, workers, inputs...)
		h := hashes(out, "exchanges")
		if len(h) < 3 {
			t.Fatalf("only %d exchange files", len(h))
		}
		db := duck(t)
		var quar string
		if err := db.QueryRow(fmt.Sprintf(`SELECT string_agg(concat_ws('|', source, line, reason, detail, bytes, excerpt), '\n' ORDER BY source, line) FROM read_parquet('%s')`,
			filepath.Join(out, "quarantine", "*", "*.parquet"))).Scan(&quar); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, firstQuar = h, quar
			continue
		}
		var diff []string
		for k, v := range first {
			if h[k] != v {
				diff = append(diff, k)
			}
		}
		for k := range h {
			if _, ok := first[k]; !ok {
				diff = append(diff, k+" (new)")
			}
		}
		sort.Strings(diff)
		if len(diff) > 0 {
			t.Errorf("run %d (-workers %d): %d exchange files differ from the first run (-workers 1): %v", i, workers, len(diff), diff[:min(len(diff), 5)])
		}
		if quar != firstQuar {
			t.Errorf("run %d: quarantine rows differ beyond their run time", i)
		}
	}
}

// A run with nothing quarantined still writes the quarantine table (a
// zero-row file with the full schema), so a saved query works on a clean
// day.
func TestEmptyTablesAreReadable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "clean.ndjson")
	os.WriteFile(p, []byte(okRecord+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	ingest(t, out, p)
	db := duck(t)
	for _, q := range []string{
		`SELECT count(*) FROM read_parquet('%s/quarantine/**/*.parquet')`,
		`SELECT count(*) FROM read_parquet('%s/quarantine/*/*.parquet', hive_partitioning = true)`,
	} {
		var n int64
		if err := db.QueryRow(fmt.Sprintf(q, out)).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v", q, n, err)
		}
	}
	var reason string
	if err := db.QueryRow(fmt.Sprintf(`SELECT coalesce(max(reason), 'none') FROM read_parquet('%s/quarantine/**/*.parquet')`, out)).Scan(&reason); err != nil {
		t.Errorf("the empty quarantine table lacks its columns: %v", err)
	}
}

// Input defects of the issue, each at the pipeline's level.
func TestInputDefects(t *testing.T) {
	dir := t.TempDir()
	rec2 := strings.Replace(okRecord, `"id\":1`, `"id\":2`, 2)

	t.Run("a byte order mark before the first line", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bom.ndjson")
		os.WriteFile(p, []byte("\xef\xbb\xbf"+okRecord+"\n"+rec2+"\n"), 0o644)
		sum := ingest(t, filepath.Join(t.TempDir(), "out"), p)
		if sum.Quarantined != 0 || sum.Exchanges != 2 {
			t.Errorf("quarantined %d (%v), exchanges %d", sum.Quarantined, sum.ByReason, sum.Exchanges)
		}
	})

	t.Run("compressed inputs that yield nothing are quarantined, not empty", func(t *testing.T) {
		d := t.TempDir()
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		w.Write(bytes.Repeat([]byte(okRecord+"\n"), 50))
		w.Close()
		os.WriteFile(filepath.Join(d, "cut.ndjson.gz"), gz.Bytes()[:12], 0o644)
		var zs bytes.Buffer
		zw, _ := zstd.NewWriter(&zs)
		zw.Write(bytes.Repeat([]byte(okRecord+"\n"), 50))
		zw.Close()
		os.WriteFile(filepath.Join(d, "cut.ndjson.zst"), zs.Bytes()[:8], 0o644)
		sum := ingest(t, filepath.Join(t.TempDir(), "out"), d)
		if sum.Quarantined != 2 || sum.ByReason["read_error"] != 2 {
			t.Errorf("quarantined %d %v, want both cut files as read_error", sum.Quarantined, sum.ByReason)
		}
	})

	t.Run("symlinks are followed, our own dataset is never read", func(t *testing.T) {
		d := t.TempDir()
		real := filepath.Join(dir, "real.ndjson")
		os.WriteFile(real, []byte(okRecord+"\n"), 0o644)
		os.Symlink(real, filepath.Join(d, "linked.ndjson"))
		out := filepath.Join(d, "out")
		first := ingest(t, out, d)
		second := ingest(t, out, d) // out now holds Parquet files inside the walked directory
		for i, s := range []*pipeline.Summary{first, second} {
			if s.Exchanges != 1 || s.Quarantined != 0 || len(s.Files) != 1 {
				t.Errorf("run %d: %d exchanges, %d quarantined, files %v", i+1, s.Exchanges, s.Quarantined, s.Files)
			}
		}
		if second.SkippedEntries["excluded"] == 0 {
			t.Errorf("the dataset directory was not counted as skipped: %v", second.SkippedEntries)
		}
	})

	t.Run("a forced format on an endless input ends at the document limit", func(t *testing.T) {
		for _, format := range []string{"wire", "har"} {
			sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{"/dev/zero"}, Format: format, OutDir: filepath.Join(t.TempDir(), "out"),
				MaxDocumentBytes: 2 << 20, MaxLineBytes: 1 << 20, Log: zerolog.Nop()})
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if sum.Quarantined != 1 || sum.ByReason["document_too_large"] != 1 || !sum.Balanced() {
				t.Errorf("%s: quarantined %d %v, balanced %v", format, sum.Quarantined, sum.ByReason, sum.Balanced())
			}
		}
	})
}

// Merged rows belong to both logs: rerunning one side alone replaces them
// with that side's own rows, never leaving a merged row beside a new one.
func TestRerunOfOneSideReplacesMergedRows(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	client, server := "../samples/correlation/client.ndjson", "../samples/correlation/server.ndjson"
	merged := runAt(t, out, now, 2, client, server)
	if !merged.Merging || merged.Merged == 0 {
		t.Fatalf("the two logs were not merged: %+v", merged)
	}
	serverOnly := filepath.Join(t.TempDir(), "server-only")
	runAt(t, serverOnly, now, 2, server)
	runAt(t, out, now, 2, server)
	db := duck(t)
	count := func(dir, where string) int64 {
		var n int64
		if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s') WHERE %s`, filepath.Join(dir, "exchanges", "*", "*.parquet"), where)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(out, "sides = 'both'"); n != 0 {
		t.Errorf("%d merged rows survived a rerun of the server's log alone", n)
	}
	if got, want := count(out, "sides = 'server'"), count(serverOnly, "sides = 'server'"); got != want {
		t.Errorf("%d server rows, a clean run of the server's log gives %d", got, want)
	}
	st := stateOf(t, out)
	if st.rows != st.ids {
		t.Errorf("%d rows for %d distinct exchange ids", st.rows, st.ids)
	}
	// Both again: merged as in the first run.
	again := runAt(t, out, now, 2, client, server)
	if count(out, "sides = 'both'") != again.Merged || again.Merged != merged.Merged {
		t.Errorf("merged again: %d merged rows, the first run had %d", count(out, "sides = 'both'"), merged.Merged)
	}
}

// Merging a client log and a server log read as files holds rows only for
// the merge window: the two are read side by side in event-time order.
func TestMergeOfFilesIsWindowed(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if _, _, err := synth.Write(&b, synth.Options{Exchanges: 20000, Days: 2, Sessions: 50}); err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "client.ndjson")
	server := filepath.Join(dir, "server.ndjson")
	os.WriteFile(client, b.Bytes(), 0o644)
	os.WriteFile(server, bytes.ReplaceAll(b.Bytes(), []byte(`"side":"client"`), []byte(`"side":"server"`)), 0o644)
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{client, server}, OutDir: filepath.Join(dir, "out"),
		Pseudonyms: testKey(t), Lateness: 10 * time.Minute, IdleTimeout: 30 * time.Minute, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Merging || sum.Merged != 20000 || !sum.Balanced() {
		t.Fatalf("merged %d of 20000 exchanges (merging %v, balanced %v)", sum.Merged, sum.Merging, sum.Balanced())
	}
	t.Logf("the merge held at most %d rows", sum.MergeHeldMax)
	// Two days at 20,000 exchanges: about 140 exchanges per 10 minutes a
	// side. Holding to the end would hold 40,000 rows.
	if sum.MergeHeldMax > 2000 {
		t.Errorf("the merge held %d rows at once: not bounded by its window", sum.MergeHeldMax)
	}
}
