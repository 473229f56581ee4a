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
	keepCaptures = flag.String("interop-keep", "", "write every scenario's captures and dataset into this directory (kept)")
	onlyScenario = flag.String("interop-only", "", "run only the scenarios whose name contains this")
	updateReadme = flag.Bool("interop-update-readme", false, "rewrite the scenario table of README.md from the scenarios")
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
	expected := map[string][]row{}
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
			expected[sc.name] = want
			out := filepath.Join(dir, "out")
			ingestDir(t, filepath.Join(dir, "capture"), out)
			compare(t, sc, want, readRows(t, db, out))
		})
	}
	if *onlyScenario == "" && len(expected) == len(scenarios) {
		checkReadme(t, expected)
	}
}

// checkReadme compares the scenario table of README.md with the scenarios'
// expectations as this run produced them (-interop-update-readme rewrites
// it).
func checkReadme(t *testing.T, expected map[string][]row) {
	t.Helper()
	var b strings.Builder
	b.WriteString("| scenario | client → server | era | captured | fault | expected exchanges, in order | needs |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, sc := range scenarios {
		var lines []string
		needs := map[string]bool{}
		for _, r := range expected[sc.name] {
			lines = append(lines, r.summary(sc))
			for _, p := range strings.Split(r.pending, ", ") {
				if p != "" {
					needs[strings.SplitN(p, " (", 2)[0]] = true
				}
			}
		}
		var ns []string
		for n := range needs {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		fmt.Fprintf(&b, "| `%s` | %s → %s | %s | %s | %s | %s | %s |\n", sc.name, sc.client, sc.server, sc.era, sc.capture,
			strings.ReplaceAll(sc.fault, "|", "\\|"), strings.Join(lines, "<br>"), strings.Join(ns, ", "))
	}
	const begin, end = "<!-- scenarios:begin -->\n", "<!-- scenarios:end -->"
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(string(readme), begin), strings.Index(string(readme), end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q section", begin, end)
	}
	have := string(readme[i+len(begin) : j])
	if have == b.String() {
		return
	}
	if *updateReadme {
		out := string(readme[:i+len(begin)]) + b.String() + string(readme[j:])
		if err := os.WriteFile("README.md", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's scenario table differs from the scenarios (go test ./interop -interop-update-readme rewrites it):\n%s", b.String())
}

// compare checks the rows ingest wrote against the expected ones, in order.
func compare(t *testing.T, sc *scenario, want []row, rows []got) {
	t.Helper()
	if len(rows) != len(want) {
		var b strings.Builder
		for _, g := range rows {
			fmt.Fprintf(&b, "\n  got  %s", g)
		}
		var needs []string
		for _, w := range want {
			fmt.Fprintf(&b, "\n  want %s", w)
			if w.pending != "" {
				needs = append(needs, w.pending)
			}
		}
		pending := ""
		if len(needs) > 0 {
			pending = " [rows need " + strings.Join(needs, ", ") + ", on another branch]"
		}
		t.Fatalf("%d rows, want %d%s:%s", len(rows), len(want), pending, b.String())
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
