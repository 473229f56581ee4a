// Command analyze reads a dataset written by ingest and prints reports on
// it: the overview (false successes over 2xx, outcomes by layer), tools,
// clients and servers, retries, streams and sessions, as aligned text,
// JSON, CSV, Markdown or a self-contained HTML page with charts, over the
// exchanges the filters select; `analyze check` is a CI gate with
// thresholds and JUnit XML. `analyze -h` describes every report,
// filter and format. The queries live in package report (report/doc.go
// says how the dataset is read); this command parses flags and writes the
// output, one file per command (reports.go, check.go, session.go).
//
//	analyze [-data DIR] [-format F] [-o FILE] [filters] [REPORT...]
//	analyze check [-data DIR] [filters] [thresholds] [-junit FILE]
//	analyze session [ID] [-data DIR] [-format F] [-o FILE]
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command. The reports' exit status is 0 on success, 1 when
// the dataset cannot be read or the output written, 2 on bad flags;
// check's is in check.go.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return runCheck(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "session" {
		return runSession(args[1:], stdout, stderr)
	}
	return runReports(args, stdout, stderr)
}
