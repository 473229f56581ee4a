package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

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
	o, err := parseFlags(args, stderr, time.Now(), nil, "session")
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n\n%s", err, usageText)
		return 2
	}
	ctx := context.Background()
	d, err := report.Open(ctx, o.data, o.filter)
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n", err)
		return 1
	}
	defer d.Close()
	var r *report.Report
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
