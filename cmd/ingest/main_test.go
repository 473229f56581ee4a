package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

type expectation struct {
	file, side, method, id, outcome, layer, statuses, retry string
	line, posts                                             int64
}

// readExpectations parses the table between the expectations markers of
// samples/README.md.
func readExpectations(t *testing.T, readme string) []expectation {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expectation
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "<!-- expectations:begin -->":
			in = true
			continue
		case l == "<!-- expectations:end -->":
			in = false
		}
		if !in || !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "| file") || strings.HasPrefix(l, "|---") || strings.HasPrefix(l, "| ---") {
			continue
		}
		c := strings.Split(strings.Trim(l, "|"), "|")
		for i := range c {
			c[i] = strings.Trim(strings.TrimSpace(c[i]), "`")
		}
		if len(c) != 10 {
			t.Fatalf("expectation row has %d cells: %s", len(c), l)
		}
		line, err1 := strconv.ParseInt(c[1], 10, 64)
		posts, err2 := strconv.ParseInt(c[7], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad expectation row: %s", l)
		}
		out = append(out, expectation{file: c[0], line: line, side: c[2], method: c[3], id: c[4], outcome: c[5],
			layer: c[6], posts: posts, statuses: strings.ReplaceAll(c[8], " ", ""), retry: c[9]})
	}
	return out
}

func TestSamplesMatchREADME(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out, "-quiet", "../../samples"}, &stdout, &stderr); code != 0 {
		t.Fatalf("ingest exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "[OK]") {
		t.Errorf("summary lacks a passing conservation check:\n%s", stdout.String())
	}
	// Every samples/**/README.md may hold an expectations table.
	var exps []expectation
	filepath.WalkDir("../../samples", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "README.md" {
			exps = append(exps, readExpectations(t, p)...)
		}
		return nil
	})
	if len(exps) < 100 {
		t.Fatalf("only %d expectations in samples/**/README.md", len(exps))
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT source, source_line, sides, method, coalesce(jsonrpc_id, ''), coalesce(jsonrpc_id_type, ''),
		outcome, layer, post_count, CAST(http_statuses AS VARCHAR), retry_origin FROM read_parquet(?)`,
		filepath.Join(out, "exchanges", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type key struct {
		file   string
		line   int64
		method string
		id     string
	}
	got := map[key]expectation{}
	for rows.Next() {
		var e expectation
		var idType string
		if err := rows.Scan(&e.file, &e.line, &e.side, &e.method, &e.id, &idType, &e.outcome, &e.layer, &e.posts, &e.statuses, &e.retry); err != nil {
			t.Fatal(err)
		}
		e.file = strings.TrimPrefix(filepath.ToSlash(e.file), "../../samples/")
		if idType == "string" {
			e.id = strconv.Quote(e.id)
		}
		e.statuses = strings.ReplaceAll(e.statuses, " ", "")
		k := key{e.file, e.line, e.method, e.id}
		if _, dup := got[k]; dup {
			t.Errorf("two exchanges at %v", k)
		}
		got[k] = e
	}
	for _, x := range exps {
		k := key{x.file, x.line, x.method, x.id}
		g, ok := got[k]
		if !ok {
			t.Errorf("%s:%d %s id %s: expected %s, no such exchange in the dataset", x.file, x.line, x.method, x.id, x.outcome)
			continue
		}
		delete(got, k)
		if g.side != x.side || g.outcome != x.outcome || g.layer != x.layer || g.posts != x.posts || g.statuses != x.statuses || g.retry != x.retry {
			t.Errorf("%s:%d %s id %s:\n  got  %s %s %s posts=%d %s retry=%s\n  want %s %s %s posts=%d %s retry=%s",
				x.file, x.line, x.method, x.id, g.side, g.outcome, g.layer, g.posts, g.statuses, g.retry,
				x.side, x.outcome, x.layer, x.posts, x.statuses, x.retry)
		}
	}
	for k, g := range got {
		t.Errorf("exchange not in samples/README.md: %v -> %s", k, g.outcome)
	}
}

func TestDefaultRunIngestsSamples(t *testing.T) {
	wd, _ := os.Getwd()
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"mcptrace ingest summary", "exchanges:", "TOOL_SUCCESS", "quarantined:", "conservation:", "[OK]"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "{") {
		t.Errorf("logs leaked to stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), `"level"`) {
		t.Errorf("stderr should carry JSON logs off a terminal: %s", stderr.String())
	}
}

func TestMissingPathExitsNonZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	p := filepath.Join(t.TempDir(), "missing.ndjson")
	if code := run([]string{"-out", t.TempDir(), p}, &stdout, &stderr); code == 0 {
		t.Fatal("exit 0 for a missing input")
	}
	if !strings.Contains(stderr.String(), p) {
		t.Errorf("error does not name the path: %s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout should be empty on error: %s", stdout.String())
	}
}

// TestREADMEQueriesRun runs every DuckDB query of the README against the
// samples dataset, so the documentation cannot drift from the columns.
func TestREADMEQueriesRun(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out, "-quiet", "../../samples"}, &stdout, &stderr); code != 0 {
		t.Fatalf("ingest exited %d: %s", code, stderr.String())
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, block := range strings.Split(string(readme), "```sql\n")[1:] {
		block = block[:strings.Index(block, "```")]
		for _, q := range strings.Split(block, ";") {
			if strings.Contains(q, "SELECT") {
				queries = append(queries, strings.ReplaceAll(q, "'out/", "'"+filepath.ToSlash(out)+"/"))
			}
		}
	}
	if len(queries) < 3 {
		t.Fatalf("README has %d SQL queries, want at least 3", len(queries))
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("README query fails: %v\n%s", err, q)
			continue
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n == 0 {
			t.Errorf("README query returns nothing on the samples:\n%s", q)
		}
	}
}

// TestSameTrafficSameVerdictInEveryFormat ingests one conversation written as
// a wire log, a HAR file and a Claude Desktop log and checks that every
// request gets the same verdict from each.
func TestSameTrafficSameVerdictInEveryFormat(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out, "-quiet", "../../samples/equivalence"}, &stdout, &stderr); code != 0 {
		t.Fatalf("ingest exited %d: %s", code, stderr.String())
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT method || ' ' || jsonrpc_id, format, outcome || '/' || layer || '/' || coalesce(CAST(error_code AS VARCHAR), '-') || '/' || coalesce(CAST(is_error AS VARCHAR), '-')
		FROM read_parquet(?)`, filepath.Join(out, "exchanges", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	verdicts := map[string]map[string]string{} // request -> format -> verdict
	formats := map[string]bool{}
	for rows.Next() {
		var req, format, verdict string
		if err := rows.Scan(&req, &format, &verdict); err != nil {
			t.Fatal(err)
		}
		if verdicts[req] == nil {
			verdicts[req] = map[string]string{}
		}
		verdicts[req][format] = verdict
		formats[format] = true
	}
	if len(formats) != 3 || len(verdicts) != 6 {
		t.Fatalf("formats %v, requests %d: want 3 formats and 6 requests", formats, len(verdicts))
	}
	for req, byFormat := range verdicts {
		if len(byFormat) != 3 {
			t.Errorf("%s seen in %d formats: %v", req, len(byFormat), byFormat)
			continue
		}
		var first string
		for f, v := range byFormat {
			if first == "" {
				first = v
			} else if v != first {
				t.Errorf("%s: verdicts differ across formats: %v (%s)", req, byFormat, f)
				break
			}
		}
	}
}
