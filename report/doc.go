// Package report answers analyze's questions over an mcptrace dataset.
//
// Open lists the dataset's exchanges files, skips the dt= partitions a time
// filter rules out, and gives an embedded DuckDB (github.com/duckdb/duckdb-go)
// a view of the filtered exchanges that names only the columns reports use:
// DuckDB reads those columns alone, files and row groups in parallel, and
// skips row groups by their started_at statistics. Each report (Overview,
// Tools, Peers) is a few SQL aggregates over that view, returned as Tables
// that Render writes as aligned text, JSON, CSV or Markdown.
//
// Why DuckDB rather than reading columns with parquet-go: the acceptance
// measure is the time DuckDB takes for the same SQL, and with DuckDB
// executing the reports' SQL the overhead over hand-written SQL is the
// process and the view, whatever the size; percentiles, group-bys and
// window functions come with it, and the tests already build it (cgo, a C
// compiler, a prebuilt static library: about 30 s of linking once, cached
// after). The rules stay in Go: the false-success and failure sets come
// from package classify and are turned into SQL here (falseSuccessSQL), so
// ingest's summary and the reports count with one rule.
//
// A dataset a newer mcptrace wrote may have columns this one does not know:
// they are not read, and Dataset.Warnings says so; a column no file has (an
// older mcptrace's dataset) reads as null, also with a warning.
package report
