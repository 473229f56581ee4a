package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"

	"mcptrace/internal/traffic"
	"mcptrace/pipeline"
)

// The reports are checked against figures DuckDB computes here, with SQL
// written for the test: the README's glob (not analyze's file list), the
// rules spelled out as lists of outcomes (not classify's tables), and
// percentile_cont WITHIN GROUP (not quantile_cont).

var (
	testRoot string

	samplesOnce sync.Once
	samplesDir  string
	samplesErr  error

	genOnce sync.Once
	genDir  string
	genErr  error
)

func TestMain(m *testing.M) {
	var err error
	if testRoot, err = os.MkdirTemp("", "analyze-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testRoot)
	os.Exit(code)
}

// samplesDataset is the dataset ingest makes of samples/, built once.
func samplesDataset(t *testing.T) string {
	t.Helper()
	samplesOnce.Do(func() {
		samplesDir = filepath.Join(testRoot, "samples-out")
		_, samplesErr = pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{"../../samples"}, OutDir: samplesDir, Log: zerolog.Nop()})
	})
	if samplesErr != nil {
		t.Fatal(samplesErr)
	}
	return samplesDir
}

// genRows is the size of the generated dataset: the acceptance asks for at
// least 100,000 rows.
const genRows = 100_000

// generatedDataset is the dataset of a generated client wire log of
// genRows exchanges over three days (three dt= partitions), built once.
func generatedDataset(t *testing.T) string {
	t.Helper()
	genOnce.Do(func() {
		log := filepath.Join(testRoot, "gen.ndjson")
		f, err := os.Create(log)
		if err != nil {
			genErr = err
			return
		}
		_, err = traffic.Write(f, traffic.Options{Seed: 7, Exchanges: genRows, Days: 3})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			genErr = err
			return
		}
		genDir = filepath.Join(testRoot, "gen-out")
		_, genErr = pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{log}, OutDir: genDir, Log: zerolog.Nop()})
		os.Remove(log)
	})
	if genErr != nil {
		t.Fatal(genErr)
	}
	return genDir
}

// analyzeOut runs analyze and returns stdout; it fails the test on a
// non-zero exit.
func analyzeOut(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

type jsonOut struct {
	Meta struct {
		Files    int      `json:"files"`
		AllFiles int      `json:"all_files"`
		Warnings []string `json:"warnings"`
	} `json:"meta"`
	Reports map[string]map[string]json.RawMessage `json:"reports"`
}

func analyzeJSON(t *testing.T, args ...string) *jsonOut {
	t.Helper()
	out := analyzeOut(t, append([]string{"-format", "json", "-limit", "0", "-top", "0"}, args...)...)
	var j jsonOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("analyze's JSON: %v\n%s", err, out)
	}
	return &j
}

// rows returns a table's rows as lists of values in cols order.
func (j *jsonOut) rows(t *testing.T, report, table string, cols ...string) [][]any {
	t.Helper()
	raw, ok := j.Reports[report][table]
	if !ok {
		t.Fatalf("no table %s.%s in the JSON", report, table)
	}
	var objs []map[string]any
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		var o map[string]any
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		objs = []map[string]any{o}
	} else if err := json.Unmarshal(raw, &objs); err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for _, o := range objs {
		var row []any
		for _, c := range cols {
			v, ok := o[c]
			if !ok {
				t.Fatalf("%s.%s has no column %s: %v", report, table, c, o)
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return out
}

// duck opens DuckDB on the dataset's exchanges as view x, the README's way.
func duck(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"SET TimeZone = 'UTC'",
		fmt.Sprintf(`CREATE VIEW x AS SELECT *, http_statuses[len(http_statuses)] AS last_status
			FROM read_parquet('%s/exchanges/*/*.parquet', hive_partitioning = true, union_by_name = true)`, dir)} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// sqlRows runs q and returns its rows, numbers as float64 (as JSON gives
// them), times as RFC 3339 text.
func sqlRows(t *testing.T, db *sql.DB, q string) [][]any {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			switch v := v.(type) {
			case int64:
				vals[i] = float64(v)
			case int32:
				vals[i] = float64(v)
			case time.Time:
				vals[i] = v.UTC().Format(time.RFC3339Nano)
			}
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameValue(a, b any) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return fa == fb || math.Abs(fa-fb) <= 1e-9*math.Max(math.Abs(fa), math.Abs(fb))
	}
	return a == b
}

// sameRows compares rows in order.
func sameRows(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, DuckDB says %d\n got %v\nwant %v", what, len(got), len(want), got, want)
		return
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s row %d: %d cells, want %d", what, i, len(got[i]), len(want[i]))
		}
		for k := range got[i] {
			if !sameValue(got[i][k], want[i][k]) {
				t.Errorf("%s row %d: %v, DuckDB says %v", what, i, got[i], want[i])
				break
			}
		}
	}
}

// sameRowSet compares rows in any order.
func sameRowSet(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	key := func(r []any) string { return fmt.Sprint(r...) }
	sort.Slice(got, func(i, j int) bool { return key(got[i]) < key(got[j]) })
	sort.Slice(want, func(i, j int) bool { return key(want[i]) < key(want[j]) })
	sameRows(t, what, got, want)
}

// The rules, spelled out for the test.
const (
	testFailed  = `outcome IN ('TOOL_ERROR', 'JSONRPC_ERROR', 'MALFORMED_JSON', 'INVALID_ENVELOPE', 'INVALID_TOOL_RESULT', 'INVALID_RESULT', 'HTTP_ERROR', 'STREAM_INCOMPLETE', 'NO_RESPONSE')`
	test2xx     = `last_status >= 200 AND last_status < 300`
	testFalseOK = test2xx + ` AND outcome IN ('TOOL_ERROR', 'JSONRPC_ERROR', 'MALFORMED_JSON', 'INVALID_ENVELOPE', 'INVALID_TOOL_RESULT', 'INVALID_RESULT', 'STREAM_INCOMPLETE', 'NO_RESPONSE')`
	testClass   = `CASE WHEN outcome = 'JSONRPC_ERROR' THEN 'jsonrpc_error' WHEN outcome = 'TOOL_ERROR' THEN 'tool_error'
		WHEN outcome IN ('STREAM_INCOMPLETE', 'NO_RESPONSE') THEN 'incomplete' ELSE 'invalid_result' END`
)

// checkReports checks every figure of every report analyze gives over dir
// (with args, whose filter where restates in SQL) against DuckDB.
func checkReports(t *testing.T, dir, where string, args ...string) {
	t.Helper()
	db := duck(t, dir)
	j := analyzeJSON(t, append([]string{"-data", dir}, args...)...)
	w := " WHERE (" + where + ")"
	and := " AND (" + where + ")"

	// Overview.
	sameRows(t, "overview.summary", j.rows(t, "overview", "summary", "exchanges", "first_started_at", "last_started_at", "http_2xx", "false_successes", "false_success_rate", "failed"),
		sqlRows(t, db, `SELECT count(*), min(started_at), max(started_at), count(*) FILTER (WHERE `+test2xx+`),
			count(*) FILTER (WHERE `+testFalseOK+`), (count(*) FILTER (WHERE `+testFalseOK+`)) / nullif(count(*) FILTER (WHERE `+test2xx+`), 0),
			count(*) FILTER (WHERE `+testFailed+`) FROM x`+w))
	n2xx := sqlRows(t, db, `SELECT count(*) FROM x WHERE `+test2xx+and)[0][0].(float64)
	want := sqlRows(t, db, `SELECT c, count(x.outcome) FROM (VALUES ('jsonrpc_error', 1), ('tool_error', 2), ('invalid_result', 3), ('incomplete', 4)) AS k(c, o)
		LEFT JOIN x ON `+testClass+` = c AND `+testFalseOK+and+` GROUP BY c, o ORDER BY o`)
	var total float64
	for _, r := range want {
		total += r[1].(float64)
	}
	gotFS := j.rows(t, "overview", "false_successes", "class", "count", "rate")
	wantFS := [][]any{}
	for _, r := range want {
		var rate any
		if n2xx > 0 {
			rate = r[1].(float64) / n2xx
		}
		wantFS = append(wantFS, []any{r[0], r[1], rate})
	}
	var rate any
	if n2xx > 0 {
		rate = total / n2xx
	}
	wantFS = append(wantFS, []any{"total", total, rate})
	sameRows(t, "overview.false_successes", gotFS, wantFS)
	sameRowSet(t, "overview.not_failures_2xx", j.rows(t, "overview", "not_failures_2xx", "outcome", "layer", "count", "rate"),
		sqlRows(t, db, `SELECT outcome, layer, count(*), count(*) / `+fmt.Sprint(max(n2xx, 1))+` FROM x WHERE `+test2xx+` AND NOT (`+testFalseOK+`)`+and+` GROUP BY ALL`))
	sameRowSet(t, "overview.layers", j.rows(t, "overview", "layers", "layer", "count", "share"),
		sqlRows(t, db, `SELECT layer, count(*), count(*) / (SELECT count(*) FROM x`+w+`) FROM x`+w+` GROUP BY ALL`))
	sameRowSet(t, "overview.outcomes", j.rows(t, "overview", "outcomes", "outcome", "layer", "count", "share"),
		sqlRows(t, db, `SELECT outcome, layer, count(*), count(*) / (SELECT count(*) FROM x`+w+`) FROM x`+w+` GROUP BY ALL`))

	// Tools.
	tw := ` WHERE method = 'tools/call' AND tool_name IS NOT NULL` + and
	sameRowSet(t, "tools.tools", j.rows(t, "tools", "tools", "tool", "calls", "failed", "error_rate", "transport_rate", "protocol_rate", "tool_error_rate",
		"interaction", "false_successes", "p50_ms", "p90_ms", "p99_ms"),
		sqlRows(t, db, `SELECT tool_name, count(*), count(*) FILTER (WHERE `+testFailed+`), (count(*) FILTER (WHERE `+testFailed+`)) / count(*),
			avg(CASE WHEN outcome IN ('HTTP_ERROR', 'STREAM_INCOMPLETE', 'NO_RESPONSE') THEN 1 ELSE 0 END),
			avg(CASE WHEN outcome IN ('JSONRPC_ERROR', 'MALFORMED_JSON', 'INVALID_ENVELOPE', 'INVALID_TOOL_RESULT', 'INVALID_RESULT') THEN 1 ELSE 0 END),
			avg(CASE WHEN outcome = 'TOOL_ERROR' THEN 1 ELSE 0 END),
			count(*) FILTER (WHERE outcome IN ('INPUT_REQUIRED', 'CANCELLED')), count(*) FILTER (WHERE `+testFalseOK+`),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms), percentile_cont(0.9) WITHIN GROUP (ORDER BY latency_ms),
			percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms)
			FROM x`+tw+` GROUP BY tool_name`))
	sameRowSet(t, "tools.tool_errors", j.rows(t, "tools", "tool_errors", "tool", "outcome", "http_status", "error_code", "error_message", "count"),
		sqlRows(t, db, `SELECT tool_name, outcome, last_status, error_code, error_message, count(*) FROM x`+tw+` AND `+testFailed+` GROUP BY ALL`))

	// Retries.
	rep := `retry_origin <> 'none'`
	ok := `outcome IN ('SUCCESS', 'TOOL_SUCCESS')`
	sameRows(t, "retries.summary", j.rows(t, "retries", "summary", "repeats", "repeats_succeeded", "repeat_success_rate", "unsafe_repeats",
		"duplicate_side_effects", "retry_after_given", "retry_after_ignored", "duplicates", "multi_post"),
		sqlRows(t, db, `SELECT count(*) FILTER (WHERE `+rep+`), count(*) FILTER (WHERE `+rep+` AND `+ok+`),
			(count(*) FILTER (WHERE `+rep+` AND `+ok+`)) / nullif(count(*) FILTER (WHERE `+rep+`), 0),
			count(*) FILTER (WHERE retry_unsafe), count(*) FILTER (WHERE duplicate_side_effect), count(*) FILTER (WHERE retry_after_s IS NOT NULL),
			count(*) FILTER (WHERE retry_after_respected = false), count(*) FILTER (WHERE duplicate_of IS NOT NULL), count(*) FILTER (WHERE post_count >= 2)
			FROM x`+w))
	sameRowSet(t, "retries.by_origin", j.rows(t, "retries", "by_origin", "retry_origin", "repeats", "succeeded", "success_rate", "unsafe", "retry_after_ignored"),
		sqlRows(t, db, `SELECT retry_origin, count(*), count(*) FILTER (WHERE `+ok+`), avg(CASE WHEN `+ok+` THEN 1 ELSE 0 END),
			count(*) FILTER (WHERE retry_unsafe), count(*) FILTER (WHERE retry_after_respected = false) FROM x WHERE `+rep+and+` GROUP BY ALL`))
	sameRowSet(t, "retries.unsafe", j.rows(t, "retries", "unsafe", "tool", "unsafe_repeats", "duplicate_side_effects"),
		sqlRows(t, db, `SELECT coalesce(tool_name, '(none)'), count(*) FILTER (WHERE retry_unsafe), count(*) FILTER (WHERE duplicate_side_effect)
			FROM x WHERE (retry_unsafe OR duplicate_side_effect)`+and+` GROUP BY ALL`))

	// Streams and sessions.
	sameRows(t, "streams.summary", j.rows(t, "streams", "summary", "event_streams", "incomplete_streams", "resume_problems", "sessions_expired",
		"reinitialized", "not_reinitialized", "session_stuck", "cancelled", "late_responses", "mrtr_chains"),
		sqlRows(t, db, `SELECT count(sse_events), count(*) FILTER (WHERE outcome = 'STREAM_INCOMPLETE'), count(*) FILTER (WHERE resume_problem IS NOT NULL),
			count(*) FILTER (WHERE session_expired), count(*) FILTER (WHERE session_expired AND reinitialized = true),
			count(*) FILTER (WHERE session_expired AND reinitialized = false), count(*) FILTER (WHERE session_stuck),
			count(*) FILTER (WHERE outcome = 'CANCELLED'), count(*) FILTER (WHERE late_response), count(*) FILTER (WHERE mrtr_round = 1) FROM x`+w))
	sameRowSet(t, "streams.stream_ends", j.rows(t, "streams", "stream_ends", "stream_end", "streams", "complete", "incomplete", "cancelled"),
		sqlRows(t, db, `SELECT CASE WHEN stream_end IS NULL THEN '(not logged)' ELSE stream_end END, count(*), count(*) FILTER (WHERE stream_complete = true),
			count(*) FILTER (WHERE outcome = 'STREAM_INCOMPLETE'), count(*) FILTER (WHERE outcome = 'CANCELLED') FROM x WHERE sse_events IS NOT NULL`+and+` GROUP BY ALL`))
	sameRowSet(t, "streams.mrtr", j.rows(t, "streams", "mrtr", "chain_outcome", "chains", "rounds", "max_round"),
		sqlRows(t, db, `SELECT CASE WHEN chain_outcome IS NULL THEN '(unknown)' ELSE chain_outcome END, count(*) FILTER (WHERE mrtr_round = 1), count(*), max(mrtr_round)
			FROM x WHERE mrtr_round IS NOT NULL`+and+` GROUP BY ALL`))

	// Clients and servers.
	for _, who := range []string{"client", "server"} {
		sameRowSet(t, "clients."+who+"s", j.rows(t, "clients", who+"s", who, "exchanges", "success_rate", "failure_rate", "transport_rate", "protocol_rate",
			"tool_error_rate", "interaction_rate", "false_successes", "false_success_rate"),
			sqlRows(t, db, fmt.Sprintf(`SELECT CASE WHEN %[1]s_name IS NULL THEN '(unknown)' WHEN %[1]s_version IS NULL THEN %[1]s_name ELSE %[1]s_name || '@' || %[1]s_version END AS k,
				count(*), avg(CASE WHEN outcome IN ('SUCCESS', 'TOOL_SUCCESS') THEN 1 ELSE 0 END), avg(CASE WHEN %[2]s THEN 1 ELSE 0 END),
				avg(CASE WHEN layer = 'transport' THEN 1 ELSE 0 END), avg(CASE WHEN layer = 'protocol' THEN 1 ELSE 0 END),
				avg(CASE WHEN outcome = 'TOOL_ERROR' THEN 1 ELSE 0 END), avg(CASE WHEN layer = 'interaction' THEN 1 ELSE 0 END),
				count(*) FILTER (WHERE %[3]s), (count(*) FILTER (WHERE %[3]s)) / nullif(count(*) FILTER (WHERE %[4]s), 0)
				FROM x%[5]s GROUP BY k`, who, testFailed, testFalseOK, test2xx, w)))
	}
}

func TestReportsOnSamples(t *testing.T) {
	checkReports(t, samplesDataset(t), "true")
}

func TestReportsOnGenerated(t *testing.T) {
	dir := generatedDataset(t)
	n := sqlRows(t, duck(t, dir), "SELECT count(*) FROM x")[0][0].(float64)
	if n < genRows {
		t.Fatalf("the generated dataset has %v rows, want at least %d", n, genRows)
	}
	checkReports(t, dir, "true")
}

// Filters select the same exchanges as their SQL; a time filter reads only
// the partitions it needs.
func TestFilters(t *testing.T) {
	dir := generatedDataset(t)
	db := duck(t, dir)
	day2 := sqlRows(t, db, "SELECT min(started_at) + INTERVAL 1 DAY FROM x")[0][0].(string)
	tool := sqlRows(t, db, "SELECT tool_name FROM x WHERE tool_name IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")[0][0].(string)
	client := sqlRows(t, db, "SELECT client_name || '@' || client_version FROM x WHERE client_name IS NOT NULL AND client_version IS NOT NULL GROUP BY 1 ORDER BY count(*) LIMIT 1")[0][0].(string)
	name, version, _ := strings.Cut(client, "@")
	t.Run("since", func(t *testing.T) {
		checkReports(t, dir, "started_at >= TIMESTAMPTZ '"+day2+"'", "-since", day2)
		j := analyzeJSON(t, "-data", dir, "-since", day2, "overview")
		if j.Meta.AllFiles < 3 || j.Meta.Files >= j.Meta.AllFiles {
			t.Errorf("-since read %d of %d files: the first day's partition should be skipped", j.Meta.Files, j.Meta.AllFiles)
		}
	})
	t.Run("until", func(t *testing.T) {
		checkReports(t, dir, "started_at < TIMESTAMPTZ '"+day2+"'", "-until", day2)
	})
	t.Run("tool-outcome", func(t *testing.T) {
		checkReports(t, dir, "tool_name = '"+tool+"' AND outcome IN ('TOOL_ERROR', 'JSONRPC_ERROR')", "-tool", tool, "-outcome", "TOOL_ERROR,JSONRPC_ERROR")
	})
	t.Run("client-method", func(t *testing.T) {
		checkReports(t, dir, "client_name = '"+name+"' AND client_version = '"+version+"' AND method = 'tools/call'", "-client", client, "-method", "tools/call")
	})
	t.Run("client-name", func(t *testing.T) {
		checkReports(t, dir, "client_name = '"+name+"'", "-client", name)
	})
	t.Run("none", func(t *testing.T) {
		j := analyzeJSON(t, "-data", dir, "-server", "no-such-server", "overview")
		got := j.rows(t, "overview", "summary", "exchanges", "false_success_rate")
		if got[0][0] != float64(0) || got[0][1] != nil {
			t.Errorf("no exchange selected: %v", got)
		}
	})
	t.Run("session", func(t *testing.T) {
		s := sqlRows(t, db, "SELECT session_id FROM x WHERE session_id IS NOT NULL LIMIT 1")
		if len(s) == 0 {
			t.Fatal("the generated dataset has no session ids")
		}
		checkReports(t, samplesDataset(t), "session_id = '"+s[0][0].(string)+"'", "-session", s[0][0].(string))
	})
}

// CSV and Markdown carry the same figures as JSON.
func TestFormats(t *testing.T) {
	dir := samplesDataset(t)
	j := analyzeJSON(t, "-data", dir, "overview")
	want := j.rows(t, "overview", "outcomes", "outcome", "layer", "count", "share")
	out := filepath.Join(t.TempDir(), "r.csv")
	analyzeOut(t, "-data", dir, "-format", "csv", "-o", out, "overview")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for _, block := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		recs, err := csv.NewReader(strings.NewReader(block)).ReadAll()
		if err != nil {
			t.Fatalf("CSV block: %v\n%s", err, block)
		}
		for _, r := range recs[1:] {
			if r[0] != "overview.outcomes" {
				break
			}
			var n, share float64
			fmt.Sscan(r[3], &n)
			fmt.Sscan(r[4], &share)
			got = append(got, []any{r[1], r[2], n, share})
		}
	}
	sameRows(t, "csv overview.outcomes", got, want)

	md := analyzeOut(t, "-data", dir, "-format", "markdown", "overview")
	for _, w := range []string{"## Overview\n", "### Exchanges by outcome and layer\n", "| outcome | layer | count | share |\n| --- | --- | ---: | ---: |\n"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	for _, r := range want {
		line := fmt.Sprintf("| %s | %s | %v | %.1f%% |", strings.ReplaceAll(r[0].(string), "_", `\_`), r[1], r[2], 100*r[3].(float64))
		if !strings.Contains(md, line) {
			t.Errorf("markdown lacks %q", line)
		}
	}
	text := analyzeOut(t, "-data", dir, "-limit", "3", "tools")
	if n := strings.Count(text, "\n"); n > 40 {
		t.Errorf("-limit 3: %d lines of text", n)
	}
}

// A missing or empty dataset says so, a quarantine-only one too.
func TestNoDataset(t *testing.T) {
	for name, dir := range map[string]string{"missing": filepath.Join(t.TempDir(), "nope"), "empty": t.TempDir()} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"-data", dir}, &stdout, &stderr)
		want := map[string]string{"missing": "does not exist", "empty": "has no exchanges/**/*.parquet"}[name]
		if code != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), dir) {
			t.Errorf("%s dataset: exit %d, stderr %q (want 1 and %q)", name, code, stderr.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-data", samplesDataset(t), "nosuchreport"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `unknown report "nosuchreport"`) {
		t.Errorf("unknown report: exit %d, %s", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	for _, w := range []string{"overview", "tools", "clients", "retries", "streams", "check", "-format", "-o FILE", "-since", "-until", "-client", "-server", "-tool", "-method", "-outcome", "-session", "-limit", "-top"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("-h does not describe %s", w)
		}
	}
}

// Files a newer mcptrace wrote (an extra column) are read with a warning;
// files that lack a column the reports read give nulls and a warning.
func TestSchemaVersions(t *testing.T) {
	src := samplesDataset(t)
	db := duck(t, src)
	copyTo := func(sel, name string) string {
		dir := filepath.Join(t.TempDir(), name)
		part := filepath.Join(dir, "exchanges", "dt=2026-10-17")
		if err := os.MkdirAll(part, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", sel, filepath.Join(part, "f.parquet"))); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := copyTo("SELECT * EXCLUDE (dt, last_status), 42 AS some_future_column FROM x", "newer")
	j := analyzeJSON(t, "-data", dir)
	if len(j.Meta.Warnings) != 1 || !strings.Contains(j.Meta.Warnings[0], "does not know (some_future_column)") {
		t.Errorf("newer: warnings %q", j.Meta.Warnings)
	}
	checkReports(t, dir, "true")

	dir = copyTo("SELECT * EXCLUDE (dt, last_status, error_message) FROM x", "older")
	j = analyzeJSON(t, "-data", dir)
	if len(j.Meta.Warnings) != 1 || !strings.Contains(j.Meta.Warnings[0], "no file has the columns error_message") {
		t.Errorf("older: warnings %q", j.Meta.Warnings)
	}
	n := sqlRows(t, db, "SELECT count(*) FROM x")[0][0]
	if got := j.rows(t, "overview", "summary", "exchanges")[0][0]; got != n {
		t.Errorf("older: %v exchanges, want %v", got, n)
	}
	errs := j.rows(t, "tools", "tool_errors", "error_message")
	if len(errs) == 0 {
		t.Fatal("older: no tool errors")
	}
	for _, r := range errs {
		if r[0] != nil {
			t.Errorf("older: error_message %v, want null", r[0])
		}
	}
}
