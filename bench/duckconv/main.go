// Command duckconv is the baseline bench/run.sh measures ingest against
// (issue 11): DuckDB, through github.com/duckdb/duckdb-go/v2, converting a
// log to Parquet with no MCP logic at all. For a wire log (the default,
// -format newline_delimited) it runs exactly
//
//	COPY (SELECT * FROM read_json('IN', format='newline_delimited'))
//	  TO 'OUT.parquet' (FORMAT parquet, COMPRESSION zstd)
//
// -format auto or unstructured runs the same with that read_json format.
//
// -format har is the closest fair equivalent for a HAR file (one JSON
// document, {"log":{"entries":[...]}}): one Parquet row per entry, its
// top-level fields as columns, as the wire conversion makes one row per
// record:
//
//	COPY (SELECT e.* FROM (SELECT unnest(log.entries) AS e
//	        FROM read_json('IN', format='auto', maximum_object_size=N)))
//	  TO 'OUT.parquet' (FORMAT parquet, COMPRESSION zstd)
//
// with N the file's size plus 1 MiB (read_json refuses an object over
// maximum_object_size, 16 MiB by default, and a HAR is one object).
// Reading the document with format='auto' alone would write one row
// holding the whole archive, which is not a table anyone would query.
//
// DuckDB's version (PRAGMA version), its thread count and memory limit go
// to stderr; DuckDB uses every core by default (threads = cores), as ingest
// does. -threads N sets it (0: DuckDB's default).
//
//	duckconv [-format newline_delimited|auto|unstructured|har] [-threads N] IN OUT.parquet
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	format := flag.String("format", "newline_delimited", "read_json format: newline_delimited, auto or unstructured; or har (one row per HAR entry)")
	threads := flag.Int("threads", 0, "DuckDB threads (0: DuckDB's default, one per core)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: duckconv [-format newline_delimited|auto|unstructured|har] [-threads N] IN OUT.parquet")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*format, *threads, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "duckconv:", err)
		os.Exit(1)
	}
}

// quote makes s a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Query builds the COPY statement for a format; size is the input's size in
// bytes (used by har).
func Query(format, in, out string, size int64) (string, error) {
	to := " TO " + quote(out) + " (FORMAT parquet, COMPRESSION zstd)"
	switch format {
	case "newline_delimited", "auto", "unstructured":
		return "COPY (SELECT * FROM read_json(" + quote(in) + ", format=" + quote(format) + "))" + to, nil
	case "har":
		maxObj := max(size+1<<20, 16<<20)
		return fmt.Sprintf("COPY (SELECT e.* FROM (SELECT unnest(log.entries) AS e FROM read_json(%s, format='auto', maximum_object_size=%d)))%s",
			quote(in), maxObj, to), nil
	}
	return "", fmt.Errorf("unknown -format %q (newline_delimited, auto, unstructured or har)", format)
}

func run(format string, threads int, in, out string) error {
	st, err := os.Stat(in)
	if err != nil {
		return err
	}
	q, err := Query(format, in, out, st.Size())
	if err != nil {
		return err
	}
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("opening DuckDB: %w", err)
	}
	defer db.Close()
	// One connection: settings apply to the session that runs the COPY.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening DuckDB: %w", err)
	}
	defer conn.Close()
	if threads > 0 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
			return fmt.Errorf("SET threads: %w", err)
		}
	}
	var version, source string
	if err := conn.QueryRowContext(ctx, "SELECT library_version, source_id FROM pragma_version()").Scan(&version, &source); err != nil {
		return fmt.Errorf("PRAGMA version: %w", err)
	}
	var nthreads, memLimit string
	if err := conn.QueryRowContext(ctx, "SELECT current_setting('threads')::VARCHAR, current_setting('memory_limit')").Scan(&nthreads, &memLimit); err != nil {
		return fmt.Errorf("reading DuckDB's settings: %w", err)
	}
	fmt.Fprintf(os.Stderr, "duckconv: DuckDB %s (%s), threads %s, memory_limit %s\n", version, source, nthreads, memLimit)
	fmt.Fprintf(os.Stderr, "duckconv: %s\n", q)
	var rows int64
	if err := conn.QueryRowContext(ctx, q).Scan(&rows); err != nil {
		return fmt.Errorf("converting %s: %w", in, err)
	}
	fmt.Fprintf(os.Stderr, "duckconv: %d rows written to %s\n", rows, out)
	return nil
}
