package interop

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var (
	keepCaptures = flag.String("interop-keep", "", "copy every scenario's captures and dataset into this directory")
	onlyScenario = flag.String("interop-only", "", "run only the scenarios whose name contains this")
)

// TestInterop runs every scenario: SDK client and server through the proxy,
// captures written, ingest run over them, the Parquet read back with DuckDB,
// and every expected label compared. Each scenario is a subtest, so a
// failure names the scenario and the row.
func TestInterop(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	root := t.TempDir()
	if *keepCaptures != "" {
		root = *keepCaptures
	}
	for _, sc := range scenarios {
		if *onlyScenario != "" && !strings.Contains(sc.name, *onlyScenario) {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join(root, sc.name)
			os.RemoveAll(dir)
			want := runScenario(t, sc, filepath.Join(dir, "capture"))
			if t.Failed() {
				return // the SDKs did not do what the scenario says: its labels mean nothing
			}
			out := filepath.Join(dir, "out")
			ingestDir(t, filepath.Join(dir, "capture"), out)
			compare(t, sc, want, readRows(t, db, out))
		})
	}
}

// compare checks the rows ingest wrote against the expected ones, in order.
func compare(t *testing.T, sc *scenario, want []row, rows []got) {
	t.Helper()
	if len(rows) != len(want) {
		var b strings.Builder
		for _, g := range rows {
			fmt.Fprintf(&b, "\n  got  %s", g)
		}
		for _, w := range want {
			fmt.Fprintf(&b, "\n  want %s", w)
		}
		t.Fatalf("%d rows, want %d:%s", len(rows), len(want), b.String())
	}
	for i, w := range want {
		g := rows[i]
		exp := w.want(sc)
		keys := make([]string, 0, len(exp))
		for k := range exp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			if g[k] != exp[k] {
				diffs = append(diffs, fmt.Sprintf("%s = %s, want %s", k, g[k], exp[k]))
			}
		}
		if len(diffs) > 0 {
			pending := ""
			if w.pending != "" {
				pending = " [needs " + w.pending + ", on another branch]"
			}
			t.Errorf("row %d (%s %s id %s, %s line %s)%s: %s", i+1, g["method"], g["tool_name"], g["jsonrpc_id"], filepath.Base(g["source"]), g["source_line"],
				pending, strings.Join(diffs, "; "))
		}
	}
}
