package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"mcptrace/report"
)

// runSession is `analyze session [ID] [flags]`: one session's timeline,
// or without ID the sessions with the most failures. Exit status as the
// reports', and 1 when the session has no exchange.
func runSession(args []string, stdout, stderr io.Writer) int {
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	ctx := context.Background()
	o, d, code := openDataset(ctx, args, stdout, stderr, "session")
	if code >= 0 {
		return code
	}
	defer d.Close()
	if id == "" {
		id = o.session
	} else if o.session != "" {
		fmt.Fprintf(stderr, "analyze: analyze session takes one ID (%q and %q)\n\n%s", id, o.session, usageText)
		return 2
	}
	var r *report.Report
	var err error
	if id == "" {
		r, err = d.Sessions(ctx, o.limit)
	} else {
		r, err = d.Session(ctx, id)
	}
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n", err)
		return 1
	}
	m := report.Meta{Dataset: o.data, Files: d.Files, AllFiles: d.AllFiles, Filters: o.filterText, Warnings: d.Warnings}
	return writeOut(o, stdout, stderr, func(w io.Writer) error { return report.Render(w, o.format, m, []*report.Report{r}) })
}
