// Command analyze reads a dataset written by ingest and prints reports on
// it: the overview (false successes over 2xx, outcomes by layer), tools,
// and clients and servers, as aligned text, JSON, CSV or Markdown, over the
// exchanges the filters select. `analyze -h` describes every report, filter
// and format. The queries live in package report (report/doc.go says how
// the dataset is read); this command parses flags and writes the output.
//
//	analyze [-data DIR] [-format F] [-o FILE] [filters] [REPORT...]
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: its exit status is 0 on success, 1 when the dataset
// cannot be read or the output written, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	return runReports(args, stdout, stderr)
}
