package dataset

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

// row is the tests' own small row type.
type row struct {
	Day     time.Time `parquet:"day,timestamp(microsecond:utc)"`
	Src     string    `parquet:"src,dict"`
	N       int64     `parquet:"n"`
	Payload string    `parquet:"payload"`
}

func dayOf(r *row) time.Time { return r.Day }

var day0 = time.Date(2026, 10, 17, 12, 0, 0, 0, time.UTC)

// rows makes n rows of src spread over days dates starting at day0 (row i
// on day i%days).
func rows(src string, n, days int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{Day: day0.AddDate(0, 0, i%days), Src: src, N: int64(i), Payload: fmt.Sprintf("%s-%06d", src, i)}
	}
	return out
}

func open(t testing.TB, dir string) *Dataset {
	t.Helper()
	d, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return d
}

func begin(t testing.TB, d *Dataset, id string) *Txn {
	t.Helper()
	txn, err := d.Begin(id, day0)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return txn
}

func src(id string) Source { return Source{ID: id} }

func done(id string) SourceState {
	return SourceState{ID: id, Complete: true, Position: Position{Unit: "byte", End: 100}}
}

// run writes each source's rows in one transaction and commits them all.
func run(t testing.TB, dir, runID string, pol RollPolicy, bySource map[string][]row) *Manifest {
	t.Helper()
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, runID)
	tb := NewTable[row](txn, "events", dayOf, pol)
	var states []SourceState
	ids := make([]string, 0, len(bySource))
	for id := range bySource {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := tb.Write(src(id), bySource[id]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		states = append(states, done(id))
	}
	if _, err := txn.Commit(states); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := txn.Close(); err != nil {
		t.Fatalf("txn.Close: %v", err)
	}
	return d.Manifest()
}

// snapshot lists every file and directory under dir with a hash of each
// file's bytes; lock files are left out (they record the last holder).
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, metaDir+string(filepath.Separator)) && e.Name() == lockFile && !e.IsDir() {
			return nil
		}
		if e.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t testing.TB, what string, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q -> %q", k, v, got[k]))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: new (%s)", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s: the dataset changed:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// tableFiles lists the data files under DIR/table (what a glob sees).
func tableFiles(t testing.TB, dir, table string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(dir, table), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// emptyDirs lists the directories under dir (outside .mcptrace) that hold
// nothing.
func emptyDirs(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if e.Name() == metaDir {
			return filepath.SkipDir
		}
		if ents, _ := os.ReadDir(p); len(ents) == 0 && p != dir {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func duck(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func duckCount(t testing.TB, db *sql.DB, glob string, hive bool, where string) int64 {
	t.Helper()
	var n int64
	q := fmt.Sprintf(`SELECT count(*) FROM read_parquet(?, hive_partitioning = %v) %s`, hive, where)
	if err := db.QueryRow(q, glob).Scan(&n); err != nil {
		t.Fatalf("DuckDB %s over %s: %v", q, glob, err)
	}
	return n
}

func manifestPaths(m *Manifest, table string) []string {
	var out []string
	for _, f := range m.Files(table) {
		out = append(out, f.Path)
	}
	return out
}
