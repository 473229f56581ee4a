package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// columnExpectation is one row of a "columns" table in a samples README:
// the value one column of one exchange must hold.
type columnExpectation struct {
	readme, file, method, id, column, value string
	line                                    int64
}

var columnName = regexp.MustCompile(`^[a-z_]+$`)

// readColumnTables parses every table between <!-- NAME:begin --> and
// <!-- NAME:end --> in readme. Its rows are
// | file | line | method | id | column | value |, where id is the JSON-RPC id
// as JSON text (a string id quoted) and value is the column cast to text by
// DuckDB ("null" for null; lists as DuckDB prints them).
func readColumnTables(t *testing.T, readme, name string) []columnExpectation {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []columnExpectation
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch l {
		case "<!-- " + name + ":begin -->":
			in = true
			continue
		case "<!-- " + name + ":end -->":
			in = false
		}
		if !in || !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "| file") || strings.HasPrefix(l, "| ---") {
			continue
		}
		c := strings.Split(strings.Trim(l, "|"), "|")
		for i := range c {
			c[i] = strings.Trim(strings.TrimSpace(c[i]), "`")
		}
		if len(c) != 6 {
			t.Fatalf("%s:%d: a columns row has 6 cells, this one %d: %s", readme, n, len(c), l)
		}
		line, err := strconv.ParseInt(c[1], 10, 64)
		if err != nil || !columnName.MatchString(c[4]) {
			t.Fatalf("%s:%d: bad columns row: %s", readme, n, l)
		}
		out = append(out, columnExpectation{readme: readme, file: c[0], line: line, method: c[2], id: c[3], column: c[4], value: c[5]})
	}
	return out
}

// TestSampleColumnsMatchREADME checks every "columns" table of
// samples/**/README.md against a run over samples/ with -merge off (each
// log's own view), and every "columns-merged" table against the default
// run (client and server views merged where both are present).
func TestSampleColumnsMatchREADME(t *testing.T) {
	var own, merged []columnExpectation
	filepath.WalkDir("../../samples", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "README.md" {
			own = append(own, readColumnTables(t, p, "columns")...)
			merged = append(merged, readColumnTables(t, p, "columns-merged")...)
		}
		return nil
	})
	if len(own)+len(merged) == 0 {
		t.Fatal("no columns tables in samples/**/README.md")
	}
	for _, tc := range []struct {
		name string
		args []string
		rows []columnExpectation
	}{
		{"own view", []string{"-merge", "off"}, own},
		{"merged", nil, merged},
	} {
		if len(tc.rows) == 0 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			args := append([]string{"-out", out, "-quiet"}, tc.args...)
			if code := run(append(args, "../../samples"), &stdout, &stderr); code != ExitQuarantined {
				t.Fatalf("ingest exited %d: %s", code, stderr.String())
			}
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			glob := filepath.Join(out, "exchanges", "*", "*.parquet")
			for _, x := range tc.rows {
				idText, idType := x.id, "number"
				if s, err := strconv.Unquote(x.id); err == nil {
					idText, idType = s, "string"
				}
				var vals []string
				rows, err := db.Query(`SELECT coalesce(CAST(`+x.column+` AS VARCHAR), 'null') FROM read_parquet(?, union_by_name = true)
					WHERE source = ? AND source_line = ? AND method = ? AND coalesce(jsonrpc_id, '') = ? AND coalesce(jsonrpc_id_type, '') = ?`,
					glob, "../../samples/"+x.file, x.line, x.method, idText, idType)
				if err != nil {
					t.Fatalf("%s: %s: %v", x.readme, x.column, err)
				}
				for rows.Next() {
					var v string
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					vals = append(vals, v)
				}
				rows.Close()
				switch {
				case len(vals) != 1:
					t.Errorf("%s: %s:%d %s id %s: %d exchanges, want one", x.readme, x.file, x.line, x.method, x.id, len(vals))
				case vals[0] != x.value:
					t.Errorf("%s: %s:%d %s id %s: %s = %q, want %q", x.readme, x.file, x.line, x.method, x.id, x.column, vals[0], x.value)
				}
			}
		})
	}
}
