// Command duckquery is the baseline analyze is measured against (issue
// 12): DuckDB, through github.com/duckdb/duckdb-go/v2, running the SQL
// statements of a file (separated by ";" at the end of a line) and printing
// each result as tab-separated lines. bench/analyze.sh runs it with
// bench/overview.sql, the SQL equivalent of `analyze overview`.
//
//	duckquery [-threads N] FILE.sql
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	threads := flag.Int("threads", 0, "DuckDB threads (0: DuckDB's default, one per core)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: duckquery [-threads N] FILE.sql")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "duckquery:", err)
		os.Exit(1)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "duckquery:", err)
		os.Exit(1)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if *threads > 0 {
		if _, err := db.Exec(fmt.Sprintf("SET threads = %d", *threads)); err != nil {
			fmt.Fprintln(os.Stderr, "duckquery:", err)
			os.Exit(1)
		}
	}
	for _, stmt := range strings.Split(string(b), ";\n") {
		if strings.TrimSpace(stripComments(stmt)) == "" {
			continue
		}
		if err := runStmt(db, stmt); err != nil {
			fmt.Fprintf(os.Stderr, "duckquery: %v\n%s\n", err, stmt)
			os.Exit(1)
		}
	}
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func runStmt(db *sql.DB, stmt string) error {
	rows, err := db.Query(stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = fmt.Sprint(v)
		}
		fmt.Println(strings.Join(cells, "\t"))
	}
	return rows.Err()
}
