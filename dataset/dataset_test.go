package dataset

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

func TestWriteCommitRead(t *testing.T) {
	dir := t.TempDir()
	m := run(t, dir, "r1", RollPolicy{}, map[string][]row{
		"file:/logs/a.log": rows("a", 30, 3),
		"file:/logs/b.log": rows("b", 5, 1),
	})
	stemA, stemB := DefaultStem("file:/logs/a.log"), DefaultStem("file:/logs/b.log")
	if !strings.HasPrefix(stemA, "file-") || len(stemA) != len("file-")+12 || stemA == stemB {
		t.Fatalf("stems %q %q", stemA, stemB)
	}
	want := []string{
		"events/dt=2026-10-17/" + stemA + "-00001.parquet",
		"events/dt=2026-10-17/" + stemB + "-00001.parquet",
		"events/dt=2026-10-18/" + stemA + "-00001.parquet",
		"events/dt=2026-10-19/" + stemA + "-00001.parquet",
	}
	slices.Sort(want)
	if got := manifestPaths(m, "events"); !slices.Equal(got, want) {
		t.Fatalf("manifest files:\n got %v\nwant %v", got, want)
	}
	if got := tableFiles(t, dir, "events"); !slices.Equal(got, want) {
		t.Fatalf("files on disk:\n got %v\nwant %v", got, want)
	}
	if n := m.Rows("events"); n != 35 {
		t.Fatalf("manifest rows %d, want 35", n)
	}
	a := m.Sources["file:/logs/a.log"]
	if a == nil || a.RunID != "r1" || !a.Complete || a.Position.End != 100 || !a.RunTime.Equal(day0) {
		t.Fatalf("source entry %+v", a)
	}
	// Read back with parquet-go: every row, in order, per file.
	back, err := parquet.ReadFile[row](filepath.Join(dir, "events/dt=2026-10-18/"+stemA+"-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 10 || back[0].N != 1 || back[9].N != 28 || back[0].Payload != "a-000001" {
		t.Fatalf("read back %d rows: %+v", len(back), back[0])
	}
	// And with DuckDB, with and without Hive partitioning.
	db := duck(t)
	for _, glob := range []string{filepath.Join(dir, "events", "**", "*.parquet"), filepath.Join(dir, "events", "*", "*.parquet")} {
		for _, hive := range []bool{true, false} {
			if n := duckCount(t, db, glob, hive, ""); n != 35 {
				t.Fatalf("DuckDB %s hive=%v: %d rows, want 35", glob, hive, n)
			}
		}
	}
	if n := duckCount(t, db, filepath.Join(dir, "events", "**", "*.parquet"), true, "WHERE dt = DATE '2026-10-17' AND src = 'b'"); n != 5 {
		t.Fatalf("DuckDB dt partition: %d rows of b on 10-17, want 5", n)
	}
	// The manifest itself is not matched by the tables' globs and is JSON.
	if _, err := os.Stat(filepath.Join(dir, ".mcptrace", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	rm, err := ReadManifest(dir)
	if err != nil || !reflect.DeepEqual(rm.Files("events"), m.Files("events")) || rm.Pending != nil {
		t.Fatalf("ReadManifest: %v %+v", err, rm)
	}
}

func TestRollByRows(t *testing.T) {
	dir := t.TempDir()
	var durable []FileInfo
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxRows: 100, OnDurable: func(f FileInfo) { durable = append(durable, f) }})
	s := src("file:/a")
	if err := tb.Write(s, rows("a", 150, 1)); err != nil {
		t.Fatal(err)
	}
	if len(durable) != 1 || durable[0].Rows != 100 {
		t.Fatalf("after 150 rows with MaxRows 100: durable %+v", durable)
	}
	if err := tb.Write(s, rows("a", 100, 1)); err != nil {
		t.Fatal(err)
	}
	got, err := tb.Roll()
	if err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, f := range got {
		counts = append(counts, f.Rows)
	}
	if !slices.Equal(counts, []int64{100, 100, 50}) || len(durable) != 3 {
		t.Fatalf("Roll reported %v (durable callbacks %d), want rows 100,100,50", counts, len(durable))
	}
	stem := DefaultStem("file:/a")
	for i, f := range got {
		if want := "events/dt=2026-10-17/" + stem + "-0000" + string(rune('1'+i)) + ".parquet"; f.Path != want || f.Source != "file:/a" || f.Table != "events" || f.DT != "2026-10-17" {
			t.Fatalf("file %d: %+v, want path %s", i, f, want)
		}
	}
	// Staged, not yet in the dataset.
	if files := tableFiles(t, dir, "events"); len(files) != 0 {
		t.Fatalf("before commit the table directory holds %v", files)
	}
	pub, err := txn.Commit([]SourceState{done("file:/a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 3 {
		t.Fatalf("published %v", pub)
	}
	for _, f := range pub {
		n, err := parquetRows(d.Path(f.Path))
		if err != nil || n != f.Rows {
			t.Fatalf("%s: %d rows (%v), manifest says %d", f.Path, n, err, f.Rows)
		}
		st, _ := os.Stat(d.Path(f.Path))
		if st.Size() != f.Bytes {
			t.Fatalf("%s: %d bytes, FileInfo says %d", f.Path, st.Size(), f.Bytes)
		}
	}
}

func parquetRows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, err
	}
	return pf.NumRows(), nil
}

func TestRollByBytes(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxBytes: 256 << 10})
	rs := rows("a", 10000, 1)
	for i := range rs {
		rs[i].Payload = strings.Repeat(string(rune('a'+i%26)), 100) + rs[i].Payload // about 110 bytes a row
	}
	if err := tb.Write(src("file:/a"), rs); err != nil {
		t.Fatal(err)
	}
	files, err := tb.Roll()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("10,000 rows of ~110 bytes with MaxBytes 256 KiB made %d files", len(files))
	}
	var total int64
	for i, f := range files {
		total += f.Rows
		if i < len(files)-1 && f.Rows%CheckEvery != 0 {
			t.Fatalf("file %d rolled after %d rows: size checks happen every %d rows", i, f.Rows, CheckEvery)
		}
	}
	if total != 10000 {
		t.Fatalf("files hold %d rows, want 10000", total)
	}
}

// Past MaxOpen writers the least recently used is rolled: 1,000 date
// partitions never have more than 8 files open.
func TestBoundedOpenWriters(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxOpen: 8})
	// Two passes over 1,000 dates: the second pass finds every writer of
	// the first rolled, so each partition gets two files.
	all := rows("a", 2000, 1000)
	for i := 0; i < len(all); i += 100 {
		if err := tb.Write(src("file:/a"), all[i:i+100]); err != nil {
			t.Fatal(err)
		}
		if n := tb.OpenWriters(); n > 8 {
			t.Fatalf("%d writers open", n)
		}
	}
	if n := tb.MaxOpenSeen(); n != 8 {
		t.Fatalf("at most %d writers were open, want exactly the bound 8", n)
	}
	pub, err := txn.Commit([]SourceState{done("file:/a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 2000 {
		t.Fatalf("%d files, want 2000 (two per partition)", len(pub))
	}
	parts, _ := os.ReadDir(filepath.Join(dir, "events"))
	if len(parts) != 1000 {
		t.Fatalf("%d partitions, want 1000", len(parts))
	}
	if n := duckCount(t, duck(t), filepath.Join(dir, "events", "*", "*.parquet"), true, ""); n != 2000 {
		t.Fatalf("DuckDB reads %d rows, want 2000", n)
	}
}

// The same rows in the same order give the same names and bytes, however
// the Writes are batched.
func TestDeterministicFiles(t *testing.T) {
	rs := rows("a", 5000, 1)
	for i := range rs {
		rs[i].Day = day0.AddDate(0, 0, (i/300)%7) // blocks of days: some LRU rolls with MaxOpen 3
		rs[i].Payload = strings.Repeat("x", i%300)
	}
	write := func(batch int) map[string]string {
		dir := t.TempDir()
		d := open(t, dir)
		defer d.Close()
		txn := begin(t, d, "run-"+string(rune('a'+batch%26)))
		tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxRows: 700, MaxBytes: 96 << 10, MaxOpen: 3})
		for i := 0; i < len(rs); i += batch {
			if err := tb.Write(src("file:/a"), rs[i:min(i+batch, len(rs))]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := txn.Commit([]SourceState{done("file:/a")}); err != nil {
			t.Fatal(err)
		}
		snap := snapshot(t, dir)
		out := map[string]string{}
		for k, v := range snap {
			if strings.HasPrefix(k, "events") {
				out[k] = v
			}
		}
		return out
	}
	one := write(len(rs))
	if len(one) < 10 {
		t.Fatalf("only %d files and directories: the test should roll", len(one))
	}
	for _, batch := range []int{1, 13, 1024} {
		if got := write(batch); !reflect.DeepEqual(one, got) {
			t.Fatalf("batches of %d give other files:\n%v\n%v", batch, one, got)
		}
	}
}

func TestRerunReplaces(t *testing.T) {
	dir := t.TempDir()
	const A, B = "file:/logs/a.log", "file:/logs/b.log"
	run(t, dir, "r1", RollPolicy{}, map[string][]row{A: rows("a", 30, 3), B: rows("b", 4, 2)})
	bFiles := map[string]string{}
	for k, v := range snapshot(t, dir) {
		if strings.Contains(k, DefaultStem(B)) {
			bFiles[k] = v
		}
	}
	if len(bFiles) != 2 {
		t.Fatalf("b's files: %v", bFiles)
	}

	// A again, shrunk to one day (a rotated log): its other days go.
	m := run(t, dir, "r2", RollPolicy{}, map[string][]row{A: rows("a", 3, 1)})
	if rowsOf(m, A) != 3 || rowsOf(m, B) != 4 {
		t.Fatalf("after rerun of a: a %d rows, b %d", rowsOf(m, A), rowsOf(m, B))
	}
	if _, err := os.Stat(filepath.Join(dir, "events", "dt=2026-10-19")); !os.IsNotExist(err) {
		t.Fatalf("a's old partition 2026-10-19 is still there: %v", err)
	}
	if n := duckCount(t, duck(t), filepath.Join(dir, "events", "**", "*.parquet"), true, ""); n != 7 {
		t.Fatalf("DuckDB: %d rows, want 7 (3 of a, 4 of b)", n)
	}
	snap := snapshot(t, dir)
	for k, v := range bFiles {
		if snap[k] != v {
			t.Fatalf("b's file %s changed on a rerun of a", k)
		}
	}
	if m.Sources[A].RunID != "r2" || m.Sources[B].RunID != "r1" {
		t.Fatalf("run ids: a %s, b %s", m.Sources[A].RunID, m.Sources[B].RunID)
	}

	// A once more, with no rows at all: it loses every file, stays known.
	d := open(t, dir)
	txn := begin(t, d, "r3")
	NewTable[row](txn, "events", dayOf, RollPolicy{})
	if _, err := txn.Commit([]SourceState{done(A)}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	m = d.Manifest()
	d.Close()
	if rowsOf(m, A) != 0 || m.Sources[A] == nil || m.Sources[A].RunID != "r3" {
		t.Fatalf("a after an empty rerun: %+v", m.Sources[A])
	}
	for _, f := range tableFiles(t, dir, "events") {
		if strings.Contains(f, DefaultStem(A)) {
			t.Fatalf("a's file %s survived a rerun that wrote nothing", f)
		}
	}
	if e := emptyDirs(t, dir); len(e) > 0 {
		t.Fatalf("empty directories left: %v", e)
	}
	// The listing on disk is exactly the manifest's.
	if got, want := tableFiles(t, dir, "events"), manifestPaths(m, "events"); !slices.Equal(got, want) {
		t.Fatalf("on disk %v, manifest %v", got, want)
	}
}

func rowsOf(m *Manifest, id string) int64 {
	var n int64
	if s := m.Sources[id]; s != nil {
		for _, fs := range s.Files {
			for _, f := range fs {
				n += f.Rows
			}
		}
	}
	return n
}

// Live streams commit a source repeatedly in one transaction: later
// commits add; Append keeps the files of earlier runs.
func TestRepeatedCommitsAppend(t *testing.T) {
	dir := t.TempDir()
	const K = "kafka:events/0"
	d := open(t, dir)
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	for i, off := range []int64{0, 10} {
		if err := tb.Write(Source{ID: K, Stem: "events-0-" + string(rune('0'+i))}, rows("k", 10, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := txn.Commit([]SourceState{{ID: K, Position: Position{Unit: "offset", Start: 0, End: off + 10}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := rowsOf(d.Manifest(), K); n != 20 {
		t.Fatalf("after two commits in one run: %d rows, want 20", n)
	}
	txn.Close()
	d.Close()

	d = open(t, dir)
	defer d.Close()
	txn = begin(t, d, "r2")
	tb = NewTable[row](txn, "events", dayOf, RollPolicy{})
	if err := tb.Write(Source{ID: K, Stem: "events-0-20"}, rows("k", 5, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{{ID: K, Append: true, Position: Position{Unit: "offset", End: 25}}}); err != nil {
		t.Fatal(err)
	}
	m := d.Manifest()
	if n := rowsOf(m, K); n != 25 || m.Sources[K].Position.End != 25 {
		t.Fatalf("a resumed stream: %d rows, position %+v; want 25 rows to offset 25", n, m.Sources[K].Position)
	}
	// Two sources that would share a file name are refused.
	if err := tb.Write(Source{ID: "kafka:other/0", Stem: "events-0-20"}, rows("o", 1, 1)); err == nil || !strings.Contains(err.Error(), "distinct stems") {
		t.Fatalf("a second source with the same stem: %v", err)
	}
}

func TestEmptyTables(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	txn := begin(t, d, "r1")
	ev := NewTable[row](txn, "events", dayOf, RollPolicy{})
	NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	if err := ev.Write(src("file:/a"), rows("a", 3, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{done("file:/a")}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	m := d.Manifest()
	d.Close()
	empty := "quarantine/dt=1970-01-01/empty.parquet"
	if m.EmptyFile("quarantine") != empty || m.EmptyFile("events") != "" {
		t.Fatalf("empty files: quarantine %q, events %q", m.EmptyFile("quarantine"), m.EmptyFile("events"))
	}
	if got := tableFiles(t, dir, "quarantine"); !slices.Equal(got, []string{empty}) {
		t.Fatalf("quarantine holds %v", got)
	}
	db := duck(t)
	for _, glob := range []string{"**/*.parquet", "*/*.parquet"} {
		for _, hive := range []bool{true, false} {
			p := filepath.Join(dir, "quarantine", glob)
			if n := duckCount(t, db, p, hive, ""); n != 0 {
				t.Fatalf("%s: %d rows", p, n)
			}
			var cols string
			q := `SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = ` + map[bool]string{true: "true", false: "false"}[hive] + `))`
			if err := db.QueryRow(q, p).Scan(&cols); err != nil {
				t.Fatal(err)
			}
			want := "day TIMESTAMP WITH TIME ZONE, src VARCHAR, n BIGINT, payload VARCHAR"
			if hive {
				want += ", dt DATE" // the same type as on a day with rows
			}
			if cols != want {
				t.Fatalf("%s hive=%v: schema %q, want %q", p, hive, cols, want)
			}
		}
	}
	if n := duckCount(t, db, filepath.Join(dir, "quarantine", "*", "*.parquet"), true, "WHERE dt >= DATE '2026-01-01'"); n != 0 {
		t.Fatal(n)
	}

	// Real quarantine rows: the zero-row file goes.
	d = open(t, dir)
	txn = begin(t, d, "r2")
	NewTable[row](txn, "events", dayOf, RollPolicy{})
	q := NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	if err := q.Write(src("file:/b"), rows("b", 2, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{done("file:/b")}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	m = d.Manifest()
	if m.EmptyFile("quarantine") != "" {
		t.Fatalf("empty file still recorded: %q", m.EmptyFile("quarantine"))
	}
	if got := tableFiles(t, dir, "quarantine"); len(got) != 1 || strings.Contains(got[0], "1970") {
		t.Fatalf("quarantine holds %v", got)
	}
	if n := duckCount(t, db, filepath.Join(dir, "quarantine", "*", "*.parquet"), true, ""); n != 2 {
		t.Fatalf("%d rows", n)
	}
	// b's rerun has no quarantine rows: its file goes and, the table being
	// registered in the run, the zero-row file returns.
	d.Close()
	d = open(t, dir)
	txn = begin(t, d, "r3")
	NewTable[row](txn, "events", dayOf, RollPolicy{})
	NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	if _, err := txn.Commit([]SourceState{done("file:/b")}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	d.Close()
	if got := tableFiles(t, dir, "quarantine"); !slices.Equal(got, []string{empty}) {
		t.Fatalf("quarantine with no rows left holds %v", got)
	}
	if e := emptyDirs(t, dir); len(e) > 0 {
		t.Fatalf("empty directories: %v", e)
	}
}

func TestAbortLeavesDatasetUnchanged(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rows("a", 30, 3), "file:/b": rows("b", 3, 1)})
	before := snapshot(t, dir)

	d := open(t, dir)
	txn := begin(t, d, "r2")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxRows: 7})
	NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	if err := tb.Write(src("file:/a"), rows("a", 100, 5)); err != nil {
		t.Fatal(err)
	}
	if err := tb.Write(src("file:/c"), rows("c", 100, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Write(src("file:/a"), rows("a", 1, 1)); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
	sameSnapshot(t, "after Abort", before, snapshot(t, dir))
	d.Close()
	sameSnapshot(t, "after Close", before, snapshot(t, dir))
	d = open(t, dir)
	d.Close()
	sameSnapshot(t, "after reopening", before, snapshot(t, dir))
}

func TestCloseReportsUncommitted(t *testing.T) {
	d := open(t, t.TempDir())
	defer d.Close()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	tb.Write(src("file:/a"), rows("a", 1, 1))
	tb.Write(src("file:/b"), rows("b", 1, 1))
	if _, err := txn.Commit([]SourceState{done("file:/a")}); err != nil {
		t.Fatal(err)
	}
	err := txn.Close()
	if err == nil || !strings.Contains(err.Error(), "file:/b") || strings.Contains(err.Error(), "file:/a") {
		t.Fatalf("Close with b uncommitted: %v", err)
	}
	if _, err := d.Begin("r2", day0); err != nil {
		t.Fatalf("Begin after Close: %v", err)
	}
}

func TestSchemaIsBytesStable(t *testing.T) {
	// Files written here equal those pipeline/sink.go would write for the
	// same rows: same writer options.
	rs := rows("a", 100, 1)
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, (&Table[row]{pol: RollPolicy{}.withDefaults()}).writerOptions()...)
	w.Write(rs)
	w.Close()
	dir := t.TempDir()
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rs})
	got, err := os.ReadFile(filepath.Join(dir, "events", "dt=2026-10-17", DefaultStem("file:/a")+"-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("the staged file (%d bytes) differs from a plain write of the same rows (%d bytes)", len(got), buf.Len())
	}
}

func TestRollByAgeAndTick(t *testing.T) {
	now := day0
	d := open(t, t.TempDir())
	defer d.Close()
	txn := begin(t, d, "r1")
	var durable []FileInfo
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxAge: time.Minute, Now: func() time.Time { return now },
		OnDurable: func(f FileInfo) { durable = append(durable, f) }})
	if err := tb.Write(src("file:/a"), rows("a", 3, 1)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	if files, err := tb.Tick(); err != nil || len(files) != 0 || tb.OpenWriters() != 1 {
		t.Fatalf("Tick before MaxAge: %v %v, %d open", files, err, tb.OpenWriters())
	}
	now = now.Add(31 * time.Second)
	files, err := tb.Tick()
	if err != nil || len(files) != 1 || files[0].Rows != 3 || tb.OpenWriters() != 0 || len(durable) != 1 {
		t.Fatalf("Tick after MaxAge: %v %v, %d open, %d reported", files, err, tb.OpenWriters(), len(durable))
	}
	// A write to a file older than MaxAge rolls it first.
	tb.Write(src("file:/a"), rows("a", 2, 1))
	now = now.Add(2 * time.Minute)
	tb.Write(src("file:/a"), rows("a", 1, 1))
	if len(durable) != 2 || durable[1].Rows != 2 {
		t.Fatalf("age roll on write: %+v", durable)
	}
	if err := tb.Write(Source{ID: "file:/b", Stem: "_hidden"}, rows("b", 1, 1)); err == nil || !strings.Contains(err.Error(), "invalid file-name stem") {
		t.Fatalf("a stem Spark would skip: %v", err)
	}
}

// Tables written from several goroutines while another commits: no race
// (run with -race), every row lands once.
func TestConcurrentWritersAndCommits(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	ev := NewTable[row](txn, "events", dayOf, RollPolicy{MaxRows: 50})
	q := NewTable[row](txn, "quarantine", dayOf, RollPolicy{MaxRows: 50})
	var wg sync.WaitGroup
	for g, tb := range []*Table[row]{ev, q, ev} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("file:/g%d", g)
			for i := 0; i < 20; i++ {
				if err := tb.Write(src(id), rows(id, 10, 3)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		if _, err := txn.Commit([]SourceState{done("file:/g0"), done("file:/g1"), done("file:/g2")}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if _, err := txn.Commit([]SourceState{done("file:/g0"), done("file:/g1"), done("file:/g2")}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Close(); err != nil {
		t.Fatal(err)
	}
	m := d.Manifest()
	if m.Rows("events") != 400 || m.Rows("quarantine") != 200 {
		t.Fatalf("events %d rows, quarantine %d; want 400 and 200", m.Rows("events"), m.Rows("quarantine"))
	}
	if n := duckCount(t, duck(t), filepath.Join(dir, "events", "*", "*.parquet"), true, ""); n != 400 {
		t.Fatalf("DuckDB: %d rows", n)
	}
}

// A Kafka source passes the offset of a file's first row in its stem, so
// the stem changes from one Write to the next: a file keeps the stem of
// the Write that opened it, and files are numbered per stem, so a replay
// that starts at another file gives each file the name it had.
func TestStemChangesBetweenWrites(t *testing.T) {
	dir := t.TempDir()
	const K = "kafka:events/3"
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	write := func(stem string, n int) {
		t.Helper()
		if err := tb.Write(Source{ID: K, Stem: stem}, rows(stem, n, 1)); err != nil {
			t.Fatal(err)
		}
	}
	roll := func() []string {
		t.Helper()
		fs, err := tb.Roll()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range fs {
			names = append(names, path.Base(f.Path)+fmt.Sprintf(":%d", f.Rows))
		}
		return names
	}
	write("events+3+100", 4)
	write("events+3+104", 6) // goes to the open file, under its name
	if got := roll(); !slices.Equal(got, []string{"events+3+100-00001.parquet:10"}) {
		t.Fatalf("first file: %v", got)
	}
	write("events+3+110", 2)
	if got := roll(); !slices.Equal(got, []string{"events+3+110-00001.parquet:2"}) {
		t.Fatalf("a new stem starts at 00001: %v", got)
	}
	write("events+3+110", 3)
	if got := roll(); !slices.Equal(got, []string{"events+3+110-00002.parquet:3"}) {
		t.Fatalf("the same stem again: %v", got)
	}
	if _, err := txn.Commit([]SourceState{{ID: K}}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	want := []string{"events/dt=2026-10-17/events+3+100-00001.parquet", "events/dt=2026-10-17/events+3+110-00001.parquet", "events/dt=2026-10-17/events+3+110-00002.parquet"}
	if got := tableFiles(t, dir, "events"); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if n := duckCount(t, duck(t), filepath.Join(dir, "events", "*", "*.parquet"), true, ""); n != 15 {
		t.Fatalf("DuckDB reads %d rows, want 15", n)
	}
	// The first file holds the rows of both Writes, in order.
	var payloads string
	if err := duck(t).QueryRow(`SELECT string_agg(payload, ',' ORDER BY file_row_number) FROM read_parquet(?, file_row_number = true)`, filepath.Join(dir, want[0])).Scan(&payloads); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(payloads, "events+3+100-000000,") || !strings.Contains(payloads, ",events+3+104-000000,") {
		t.Fatalf("rows of the first file: %s", payloads)
	}
}
