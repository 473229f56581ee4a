package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
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
	// Each table states one log's own view: no merging here.
	if code := run([]string{"-out", out, "-quiet", "-merge", "off", "../../samples"}, &stdout, &stderr); code != ExitQuarantined {
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
	if code := run([]string{"-out", out}, &stdout, &stderr); code != ExitQuarantined {
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
	if code := run([]string{"-out", out, "-quiet", "../../samples"}, &stdout, &stderr); code != ExitQuarantined {
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

// TestClientServerViewsAreConsistent ingests the seed and Cakewalk traffic
// as the client's log alone, the server's log alone, and both, and checks
// that the merged rows agree with each side's own view.
func TestClientServerViewsAreConsistent(t *testing.T) {
	clientLogs := []string{"../../samples/seed/client.ndjson", "../../samples/cakewalk/client.ndjson"}
	serverLogs := []string{"../../samples/seed/server.ndjson", "../../samples/cakewalk/server.ndjson"}
	ingestTo := func(paths ...string) string {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"-out", out, "-quiet"}, paths...), &stdout, &stderr); code != 0 {
			t.Fatalf("ingest %v exited %d: %s", paths, code, stderr.String())
		}
		return filepath.Join(out, "exchanges", "*", "*.parquet")
	}
	clientOnly, serverOnly := ingestTo(clientLogs...), ingestTo(serverLogs...)
	both := ingestTo(append(clientLogs, serverLogs...)...)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	nc, ns, nb := count(`SELECT count(*) FROM read_parquet(?)`, clientOnly), count(`SELECT count(*) FROM read_parquet(?)`, serverOnly), count(`SELECT count(*) FROM read_parquet(?)`, both)
	merged := count(`SELECT count(*) FROM read_parquet(?) WHERE sides = 'both'`, both)
	if merged < 40 || nb != nc+ns-merged {
		t.Errorf("client %d + server %d - merged %d != both %d", nc, ns, merged, nb)
	}
	// A merged row keeps the client's verdict (the client had the evidence in all these logs).
	if n := count(`SELECT count(*) FROM read_parquet(?) b JOIN read_parquet(?) c USING (source, source_line, jsonrpc_id, method)
		WHERE b.sides = 'both' AND (b.outcome <> c.outcome OR b.layer <> c.layer OR b.post_count <> c.post_count)`, both, clientOnly); n != 0 {
		t.Errorf("%d merged rows disagree with the client's own view", n)
	}
	// Every POST the server logged is counted once: in a merged row or a server-only row.
	serverPosts := count(`SELECT sum(post_count) FROM read_parquet(?)`, serverOnly)
	if got := count(`SELECT coalesce(sum(CASE WHEN sides = 'both' THEN server_post_count WHEN sides = 'server' THEN post_count ELSE 0 END), 0) FROM read_parquet(?)`, both); got != serverPosts {
		t.Errorf("server POSTs: %d in the merged dataset, %d in the server's log", got, serverPosts)
	}
	// Where the hops are plain from the seed cases.
	for outcome, hop := range map[string]string{"TOOL_SUCCESS": "none", "TOOL_ERROR": "tool", "JSONRPC_ERROR": "server", "MALFORMED_JSON": "server"} {
		if n := count(`SELECT count(*) FROM read_parquet(?) WHERE sides = 'both' AND outcome = ? AND failed_hop <> ?`, both, outcome, hop); n != 0 {
			t.Errorf("%d merged %s rows do not say failed_hop %s", n, outcome, hop)
		}
	}
	// The seed's HTTP 500 was sent by the server itself.
	if n := count(`SELECT count(*) FROM read_parquet(?) WHERE sides = 'both' AND http_statuses = [500] AND failed_hop = 'server'`, both); n != 1 {
		t.Errorf("the seed's 500: %d rows with failed_hop server", n)
	}
	if n := count(`SELECT count(*) FROM read_parquet(?) WHERE sides = 'both' AND (clock_skew_ms IS NULL OR abs(clock_skew_ms) > 1000)`, both); n != 0 {
		t.Errorf("%d merged rows without a plausible clock skew", n)
	}
}

// TestCorrelationColumns checks the correlation columns of the merged run of
// samples/correlation against the second table of its README.
func TestCorrelationColumns(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out, "-quiet", "../../samples/correlation"}, &stdout, &stderr); code != 0 {
		t.Fatalf("ingest exited %d: %s", code, stderr.String())
	}
	readme, err := os.ReadFile("../../samples/correlation/README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := string(readme)
	block = block[strings.Index(block, "<!-- correlation:begin -->"):strings.Index(block, "<!-- correlation:end -->")]
	var header []string
	var want [][]string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		want = append(want, cells)
	}
	if len(want) < 10 {
		t.Fatalf("only %d rows in the correlation table", len(want))
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := header[3:]
	sel := "exchange_id, source_line, jsonrpc_id"
	for _, c := range cols {
		sel += fmt.Sprintf(", coalesce(CAST(%s AS VARCHAR), '')", c)
	}
	rows, err := db.Query(`SELECT `+sel+` FROM read_parquet(?) WHERE source LIKE '%client.ndjson'`, filepath.Join(out, "exchanges", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	lineOf := map[string]string{}
	got := map[string][]string{} // "line id" -> values
	for rows.Next() {
		vals := make([]string, len(cols)+3)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		lineOf[vals[0]] = vals[1]
		got[vals[1]+" "+vals[2]] = vals[3:]
	}
	for _, w := range want {
		g, ok := got[w[1]+" "+w[2]]
		if !ok {
			t.Errorf("line %s id %s: no such exchange", w[1], w[2])
			continue
		}
		for i, c := range cols {
			exp, val := w[3+i], g[i]
			if exp == "" {
				continue
			}
			if c == "retry_of" || c == "duplicate_of" || c == "continues" {
				val = lineOf[val] // compare the line the link points to
			}
			if val != exp {
				t.Errorf("line %s id %s: %s = %q, want %q", w[1], w[2], c, val, exp)
			}
		}
	}
}

func TestRedactionPolicyFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-print-policy"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "exchanges.session_id: pseudonymize") ||
		!strings.Contains(stdout.String(), "exchanges.tool_error_text: drop") {
		t.Fatalf("print-policy exit %d:\n%s", code, stdout.String())
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	os.WriteFile(policy, []byte("fields:\n  exchanges.tool_error_text: mask\n  exchanges.method: keep\n"), 0o644)
	stdout.Reset()
	if code := run([]string{"-redact-policy", policy, "-print-policy"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "exchanges.error_message: drop") {
		t.Fatalf("a loaded policy must drop what it does not name:\n%s", stdout.String())
	}
	out := t.TempDir()
	stdout.Reset()
	if code := run([]string{"-out", out, "-quiet", "-redact-policy", policy, "../../samples/seed/client.ndjson"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "redacted:") {
		t.Errorf("summary lacks the redaction counts:\n%s", stdout.String())
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var withText, withMessage int
	db.QueryRow(`SELECT count(tool_error_text), count(error_message) FROM read_parquet(?)`, filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&withText, &withMessage)
	if withText == 0 || withMessage != 0 {
		t.Errorf("policy not applied: %d rows with tool_error_text (want >0), %d with error_message (want 0)", withText, withMessage)
	}
	os.WriteFile(policy, []byte("fields:\n  exchanges.pasword: keep\n"), 0o644)
	if code := run([]string{"-redact-policy", policy, "-print-policy"}, &stdout, &stderr); code == 0 {
		t.Error("a policy naming an unknown field was accepted")
	}
}

func TestPseudonymKeys(t *testing.T) {
	log := newLogger(io.Discard, true)
	dir := t.TempDir()
	key := func(text string) error {
		p := filepath.Join(dir, "key")
		os.WriteFile(p, []byte(text), 0o600)
		_, err := pseudonymizer(p, "k1", log)
		return err
	}
	if err := key("00112233445566778899aabbccddeeff\n"); err != nil {
		t.Errorf("a 16-byte hex key: %v", err)
	}
	if err := key("0011223344556677"); err == nil {
		t.Error("an 8-byte hex key was accepted")
	}
	if err := key("a raw passphrase of enough length\n"); err != nil {
		t.Errorf("a raw key: %v", err)
	}
	if err := key("short"); err == nil {
		t.Error("a 5-byte key was accepted")
	}
	if _, err := pseudonymizer(filepath.Join(dir, "missing"), "k1", log); err == nil {
		t.Error("a missing key file was accepted")
	}
}
