package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the engine: see the package documentation

	"mcptrace/classify"
	"mcptrace/schema"
)

// ErrNoDataset is matched (errors.Is) by Open's error when the directory
// does not exist or holds no table file.
var ErrNoDataset = errors.New("no dataset")

// Filter selects the exchanges a report counts. Empty fields select all;
// a list matches any of its values.
type Filter struct {
	Since, Until time.Time // started_at >= Since, started_at < Until (zero: open)
	// Clients and Servers are "name" or "name@version".
	Clients, Servers []string
	Tools, Methods   []string
	Outcomes         []string
	Sessions         []string // session_id as written (a pseudonym such as k1:...)
}

// Dataset is a dataset opened for reports: the files a filter needs and
// an in-memory DuckDB whose view ex holds the filtered exchanges.
type Dataset struct {
	Dir         string
	Files       int   // exchanges files read (after partition pruning)
	AllFiles    int   // exchanges files in the dataset
	Quarantined int64 // quarantine rows (not filtered)
	// Warnings are things the reader of a report should know: columns a
	// newer mcptrace wrote that this one does not know, columns older files
	// lack (read as null).
	Warnings []string
	Filter   Filter

	db *sql.DB
}

// column is one exchanges column reports read, with its DuckDB type (used
// when no file has it: the column then reads as a typed null).
type column struct{ name, typ string }

// columns are the only exchanges columns reports read.
var columns = []column{
	{"exchange_id", "VARCHAR"},
	{"started_at", "TIMESTAMPTZ"},
	{"latency_ms", "DOUBLE"},
	{"session_id", "VARCHAR"},
	{"client_name", "VARCHAR"},
	{"client_version", "VARCHAR"},
	{"server_name", "VARCHAR"},
	{"server_version", "VARCHAR"},
	{"method", "VARCHAR"},
	{"tool_name", "VARCHAR"},
	{"http_statuses", "INTEGER[]"},
	{"outcome", "VARCHAR"},
	{"layer", "VARCHAR"},
	{"error_code", "BIGINT"},
	{"error_message", "VARCHAR"},
	{"post_count", "INTEGER"},
	{"retry_origin", "VARCHAR"},
	{"retry_of", "VARCHAR"},
	{"retry_unsafe", "BOOLEAN"},
	{"retry_after_s", "DOUBLE"},
	{"retry_after_respected", "BOOLEAN"},
	{"duplicate_of", "VARCHAR"},
	{"duplicate_side_effect", "BOOLEAN"},
	{"sse_events", "INTEGER"},
	{"stream_end", "VARCHAR"},
	{"stream_complete", "BOOLEAN"},
	{"resume_problem", "VARCHAR"},
	{"session_expired", "BOOLEAN"},
	{"reinitialized", "BOOLEAN"},
	{"session_stuck", "BOOLEAN"},
	{"cancelled", "BOOLEAN"},
	{"late_response", "BOOLEAN"},
	{"mrtr_round", "INTEGER"},
	{"chain_outcome", "VARCHAR"},
	{"ended_at", "TIMESTAMPTZ"},
	{"jsonrpc_id", "VARCHAR"},
	{"reason", "VARCHAR"},
}

// knownColumns are the exchanges columns this build's schema writes.
func knownColumns() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeOf(schema.Exchange{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("parquet"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	return known
}

// tableFile is one Parquet file of a table, with its dt= partition ("" when
// it is not under one).
type tableFile struct{ path, dt string }

// tableFiles lists the Parquet files of DIR/table, as the README's glob
// DIR/table/**/*.parquet does (hidden names skipped).
func tableFiles(dir, table string) ([]tableFile, error) {
	var out []tableFile
	root := filepath.Join(dir, table)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		f := tableFile{path: p}
		if par := filepath.Base(filepath.Dir(p)); strings.HasPrefix(par, "dt=") {
			f.dt = strings.TrimPrefix(par, "dt=")
		}
		out = append(out, f)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// prune keeps the files whose dt= partition can hold a row started in
// [since, until); files outside partitions are kept. dt is the UTC date of
// started_at, as ingest files rows.
func prune(files []tableFile, since, until time.Time) []tableFile {
	var lo, hi string
	if !since.IsZero() {
		lo = since.UTC().Format(time.DateOnly)
	}
	if !until.IsZero() {
		hi = until.UTC().Add(-time.Microsecond).Format(time.DateOnly)
	}
	var out []tableFile
	for _, f := range files {
		if f.dt != "" && ((lo != "" && f.dt < lo) || (hi != "" && f.dt > hi)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Open opens the dataset at dir for reports over the exchanges f selects.
// Only the exchanges files whose date partition can hold a selected row are
// read (DuckDB then skips row groups by their started_at statistics).
func Open(ctx context.Context, dir string, f Filter) (*Dataset, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: %s does not exist or is not a directory: run `ingest -out %s LOGS` first, or pass -data DIR", ErrNoDataset, dir, dir)
	}
	ex, err := tableFiles(dir, "exchanges")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	qf, err := tableFiles(dir, "quarantine")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(ex) == 0 && len(qf) == 0 {
		return nil, fmt.Errorf("%w: %s has no exchanges/**/*.parquet or quarantine/**/*.parquet: is it a dataset written by ingest?", ErrNoDataset, dir)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("starting DuckDB: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection: queries run one at a time, in order
	d := &Dataset{Dir: dir, AllFiles: len(ex), Filter: f, db: db}
	if err := d.init(ctx, ex, qf); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the engine.
func (d *Dataset) Close() error { return d.db.Close() }

func (d *Dataset) init(ctx context.Context, ex, qf []tableFile) error {
	if _, err := d.db.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		return fmt.Errorf("DuckDB: %w", err)
	}
	if len(qf) > 0 {
		if err := d.db.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet("+fileList(qf)+", union_by_name = true, hive_partitioning = false)").Scan(&d.Quarantined); err != nil {
			return fmt.Errorf("reading the quarantine files of %s: %w", d.Dir, err)
		}
	}
	sel := prune(ex, d.Filter.Since, d.Filter.Until)
	if len(sel) == 0 && len(ex) > 0 {
		// No partition can hold a selected row; one file still gives the
		// view its columns, and the filter selects none of its rows.
		sel = ex[:1]
	}
	d.Files = len(sel)
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", c.typ, c.name)
	}
	from := "(SELECT " + strings.Join(cols, ", ") + " WHERE false)"
	if len(sel) > 0 {
		src := "read_parquet(" + fileList(sel) + ", union_by_name = true, hive_partitioning = false)"
		have, err := d.describe(ctx, src)
		if err != nil {
			return err
		}
		known := knownColumns()
		var unknown, missing []string
		for _, n := range sortedKeys(have) {
			if !known[n] {
				unknown = append(unknown, n)
			}
		}
		for i, c := range columns {
			if have[c.name] {
				cols[i] = c.name
			} else {
				missing = append(missing, c.name)
			}
		}
		if len(unknown) > 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("the dataset has columns this analyze does not know (%s): it was written by a newer mcptrace; the reports read the columns they know",
				strings.Join(unknown, ", ")))
		}
		if len(missing) > 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("no file has the columns %s (an older mcptrace wrote them): they read as null", strings.Join(missing, ", ")))
		}
		from = "(SELECT " + strings.Join(cols, ", ") + " FROM " + src + ")"
	}
	view := "CREATE VIEW ex AS SELECT *, http_statuses[-1] AS final_status, " + falseSuccessSQL("http_statuses[-1]") + " AS false_success, " +
		inList("outcome", failures()) + " AS failed FROM " + from + " WHERE " + d.Filter.where()
	if _, err := d.db.ExecContext(ctx, view); err != nil {
		return fmt.Errorf("reading the exchanges of %s: %w", d.Dir, err)
	}
	return nil
}

// describe returns the columns src has.
func (d *Dataset) describe(ctx context.Context, src string) (map[string]bool, error) {
	rows, err := d.db.QueryContext(ctx, "SELECT column_name FROM (DESCRIBE SELECT * FROM "+src+")")
	if err != nil {
		return nil, fmt.Errorf("reading the exchanges of %s: %w", d.Dir, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		have[n] = true
	}
	return have, rows.Err()
}

// falseSuccessSQL is classify.FalseSuccess as a SQL expression over the
// final status and outcome: the class, or NULL.
func falseSuccessSQL(final string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CASE WHEN %s BETWEEN 200 AND 299 THEN CASE outcome", final)
	for _, o := range sortedKeys(classify.FalseSuccessClasses) {
		fmt.Fprintf(&b, " WHEN %s THEN %s", quote(o), quote(classify.FalseSuccessClasses[o]))
	}
	b.WriteString(" END END")
	return b.String()
}

// failures lists the outcomes classify.IsFailure counts as failures.
func failures() []string {
	var out []string
	for _, o := range classify.Outcomes {
		if classify.IsFailure(o) {
			out = append(out, o)
		}
	}
	return out
}

func (f *Filter) where() string {
	conds := []string{"true"}
	if !f.Since.IsZero() {
		conds = append(conds, "started_at >= "+timestamp(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "started_at < "+timestamp(f.Until))
	}
	if c := peerCond("client", f.Clients); c != "" {
		conds = append(conds, c)
	}
	if c := peerCond("server", f.Servers); c != "" {
		conds = append(conds, c)
	}
	for _, l := range []struct {
		col  string
		vals []string
	}{{"tool_name", f.Tools}, {"method", f.Methods}, {"outcome", f.Outcomes}, {"session_id", f.Sessions}} {
		if len(l.vals) > 0 {
			conds = append(conds, inList(l.col, l.vals))
		}
	}
	return strings.Join(conds, " AND ")
}

// peerCond matches who_name (and who_version, for "name@version") against
// any of vals.
func peerCond(who string, vals []string) string {
	var or []string
	for _, v := range vals {
		name, version, ok := strings.Cut(v, "@")
		c := who + "_name = " + quote(name)
		if ok {
			c = "(" + c + " AND " + who + "_version = " + quote(version) + ")"
		}
		or = append(or, c)
	}
	if len(or) == 0 {
		return ""
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

func inList(col string, vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = quote(v)
	}
	return "coalesce(" + col + " IN (" + strings.Join(q, ", ") + "), false)"
}

func timestamp(t time.Time) string {
	return "TIMESTAMPTZ " + quote(t.UTC().Format("2006-01-02 15:04:05.999999+00"))
}

// quote is a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func fileList(files []tableFile) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = quote(f.path)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
