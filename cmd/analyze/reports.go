package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"mcptrace/classify"
	"mcptrace/report"
)

// reportNames are the reports, in the order they print.
var reportNames = []string{"overview", "tools", "clients", "retries", "streams"}

const usageText = `usage: analyze [flags] [REPORT...]
       analyze check [flags] THRESHOLD... [-junit FILE]   (analyze check -h)
       analyze session [ID] [flags]

Prints reports on a dataset written by ingest (default ./out): every report,
or the ones named. Flags may come before or after the report names.

Reports:
  overview   exchanges; false successes (final HTTP status 2xx, then a failure)
             as a count and a rate over the 2xx exchanges, split into JSON-RPC
             error, tool error, invalid result and incomplete stream; the 2xx
             exchanges that did not fail (INPUT_REQUIRED and CANCELLED are the
             interaction flow, UNKNOWN missing evidence) apart; exchanges by
             layer and by outcome.
               analyze overview
  tools      per tool (tools/call): calls, error rate by layer (transport,
             protocol, tool error), false successes, latency p50/p90/p99 in ms;
             then each tool's top errors (outcome, final HTTP status, JSON-RPC
             code, redacted message).
               analyze -top 5 tools
  clients    outcome rates per client_name@client_version and per
             server_name@server_version, with false-success rates.
               analyze clients
  retries    repeats (retry_origin sdk, application, manual, unknown) and how
             many ended in success; unsafe repeats of tools neither read-only
             nor idempotent; side effects done twice; Retry-After ignored;
             duplicates; exchanges POSTed more than once; unsafe ones per tool.
               analyze -since 2026-10-17 retries
  streams    event streams and how they ended, incomplete streams, broken
             resumptions; expired sessions and whether the client
             re-initialised, requests stuck on a dead session; cancellations
             and late responses; MRTR chains and how they ended.
               analyze -server notes streams

Output:
  -format F  one of:
             text      aligned tables, the default.
                         analyze overview
             json      one object: meta, then reports.NAME.TABLE, rows as
                       objects, rates as fractions, null without a denominator.
                         analyze -format json overview | jq .reports.overview.summary
             csv       one block per table, blank-line separated, each row led
                       by REPORT.TABLE, rates as fractions.
                         analyze -format csv -o report.csv tools
             markdown  a heading per report and table, pipe tables.
                         analyze -format markdown -o report.md
             html      one self-contained page (inline CSS and SVG, no script,
                       nothing fetched): the tables with the same numbers, and
                       charts: outcome breakdown, false-success rate over time,
                       tool error rates by layer, retry flows; with analyze
                       session ID, the session as a sequence diagram.
                         analyze -format html -o report.html
  -o FILE    write to FILE instead of standard output.
               analyze -format markdown -o report.md
  -limit N   at most N rows in the tools, clients, servers and unsafe tables, the
             busiest first (0: all; default 20 for text, markdown and html, all
             for json and csv).
               analyze -limit 10 tools
  -top N     at most N errors per tool (0: all; default 3).

Filters (a list is comma-separated and matches any of its values; filters
apply to every report except the quarantine count):
  -since T   exchanges started at or after T: RFC 3339, a date (UTC), or a
             duration before now. Partitions before T are not read.
               analyze -since 2026-10-17T09:00:00Z    analyze -since 24h
  -until T   exchanges started before T (same forms).
               analyze -since 2026-10-17 -until 2026-10-18
  -client C  client_name, or client_name@client_version.
               analyze -client claude-code@2.1.0
  -server S  server_name, or server_name@server_version.
               analyze -server notes
  -tool T    tool_name.          analyze -tool search,fetch tools
  -method M  JSON-RPC method.    analyze -method tools/call
  -outcome O outcome.            analyze -outcome TOOL_ERROR,JSONRPC_ERROR tools
  -session S session_id as written in the dataset (a pseudonym, k1:...).
               analyze -session k1:3f9a2c

Other flags:
  -data DIR  the dataset directory (default ./out); a lone directory argument
             is taken as -data too.

One session as a story: analyze session ID lists every exchange of the
session (session_id as written, a pseudonym) in order, with attempts, HTTP
statuses, outcomes and retry links (#N: the row repeated); analyze session
without ID lists the sessions with the most failures.
  analyze session                   analyze session -format markdown k1:3f9a2c
  analyze session -format html -o session.html k1:3f9a2c

A CI gate: analyze check fails (exit 1) when a threshold is exceeded, and
can write JUnit XML.
  analyze check -max-false-success-rate 0.01 -max-unsafe-retries 0 -fail-on TOOL_ERROR,HTTP_ERROR -junit check.xml

Exit status: 0 reports written; 1 the dataset is missing or unreadable, or the
output could not be written; 2 bad flags.
`

// options are the parsed flags of the reports command.
type options struct {
	data, format, out string
	limit, top        int
	filter            report.Filter
	filterText        []string
	reports           []string
	session           string // analyze session's ID when it follows flags
}

// parseFlags parses the flags every command shares; check, when not nil,
// adds analyze check's thresholds. cmd names a command that takes no
// report names ("" for the reports).
func parseFlags(args []string, stderr io.Writer, now time.Time, check *checkFlags, cmd string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	if check != nil {
		check.register(fs)
	}
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.data, "data", "./out", "")
	fs.StringVar(&o.format, "format", "text", "")
	fs.StringVar(&o.out, "o", "", "")
	fs.IntVar(&o.limit, "limit", -1, "")
	fs.IntVar(&o.top, "top", 3, "")
	var since, until, client, server, tool, method, outcome, session string
	for _, f := range []struct {
		name string
		p    *string
	}{{"since", &since}, {"until", &until}, {"client", &client}, {"server", &server}, {"tool", &tool},
		{"method", &method}, {"outcome", &outcome}, {"session", &session}} {
		fs.StringVar(f.p, f.name, "", "")
	}
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
	for _, a := range rest {
		switch {
		case cmd == "session" && o.session == "" && !isDir(a):
			o.session = a // the session ID after the flags
		case cmd != "":
			return nil, fmt.Errorf("analyze %s takes no more arguments (%q): use -data DIR", cmd, a)
		case slices.Contains(reportNames, a):
			if !slices.Contains(o.reports, a) {
				o.reports = append(o.reports, a)
			}
		case isDir(a):
			o.data = a
		default:
			return nil, fmt.Errorf("unknown report %q: the reports are %s", a, strings.Join(reportNames, ", "))
		}
	}
	if len(o.reports) == 0 {
		o.reports = reportNames
	}
	if o.limit < 0 {
		o.limit = 0 // json and csv: every row
		if o.format == "text" || o.format == "markdown" || o.format == "html" {
			o.limit = 20
		}
	}
	if !slices.Contains(report.Formats, o.format) {
		return nil, fmt.Errorf("-format %q: use one of %s", o.format, strings.Join(report.Formats, ", "))
	}
	var err error
	if o.filter.Since, err = parseTime("since", since, now); err != nil {
		return nil, err
	}
	if o.filter.Until, err = parseTime("until", until, now); err != nil {
		return nil, err
	}
	o.filter.Clients, o.filter.Servers, o.filter.Tools = list(client), list(server), list(tool)
	o.filter.Methods, o.filter.Outcomes, o.filter.Sessions = list(method), list(outcome), list(session)
	for _, oc := range o.filter.Outcomes {
		if !slices.Contains(classify.Outcomes, oc) {
			return nil, fmt.Errorf("-outcome %q: not an outcome (%s)", oc, strings.Join(classify.Outcomes, ", "))
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "since", "until", "client", "server", "tool", "method", "outcome", "session":
			o.filterText = append(o.filterText, "-"+f.Name+"="+f.Value.String())
		}
	})
	return o, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parseTime reads an RFC 3339 time, a UTC date or time without zone, or a
// duration before now.
func parseTime(name, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("-%s %q: not a time (RFC 3339, YYYY-MM-DD) or a duration before now (24h)", name, s)
}

// openDataset parses the flags of a report command (cmd: "" or "session")
// and opens the dataset they name. It returns the exit status when the
// command ends there (-h, a bad flag, no dataset), or -1 with the dataset
// open, which the caller closes.
func openDataset(ctx context.Context, args []string, stdout, stderr io.Writer, cmd string) (*options, *report.Dataset, int) {
	o, err := parseFlags(args, stderr, time.Now(), nil, cmd)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return nil, nil, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n\n%s", err, usageText)
		return nil, nil, 2
	}
	d, err := report.Open(ctx, o.data, o.filter)
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n", err)
		return nil, nil, 1
	}
	if o.out != "" {
		for _, w := range d.Warnings { // the report states them too
			fmt.Fprintf(stderr, "analyze: warning: %s\n", w)
		}
	}
	return o, d, -1
}

func runReports(args []string, stdout, stderr io.Writer) int {
	ctx := context.Background()
	o, d, code := openDataset(ctx, args, stdout, stderr, "")
	if code >= 0 {
		return code
	}
	defer d.Close()
	var reps []*report.Report
	for _, name := range o.reports {
		var r *report.Report
		var err error
		switch name {
		case "overview":
			r, err = d.Overview(ctx)
			if err == nil && o.format == "html" {
				// The page draws false successes over time; the other
				// formats keep the tables they always had.
				var t *report.Table
				if t, err = d.OverTime(ctx); err == nil {
					r.Tables = append(r.Tables, t)
				}
			}
		case "tools":
			r, err = d.Tools(ctx, o.limit, o.top)
		case "clients":
			r, err = d.Peers(ctx, o.limit)
		case "retries":
			r, err = d.Retries(ctx, o.limit)
		case "streams":
			r, err = d.Streams(ctx)
		}
		if err != nil {
			fmt.Fprintf(stderr, "analyze: %v\n", err)
			return 1
		}
		reps = append(reps, r)
	}
	if d.AllFiles == 0 || (len(reps) > 0 && reps[0].Name == "overview" && exchanges(reps[0]) == 0 && len(o.filterText) == 0) {
		// Nothing to report: say so in one line, as analyze always has.
		if o.format == "text" {
			fmt.Fprintf(stderr, "analyze: dataset %s has no exchanges\n", o.data)
			return writeOut(o, stdout, stderr, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "0 exchanges, %d quarantined\n", d.Quarantined)
				return err
			})
		}
	}
	m := report.Meta{Dataset: o.data, Files: d.Files, AllFiles: d.AllFiles, Filters: o.filterText, Warnings: d.Warnings}
	return writeOut(o, stdout, stderr, func(w io.Writer) error { return report.Render(w, o.format, m, reps) })
}

// exchanges is the overview's exchange count.
func exchanges(r *report.Report) int64 {
	if t := r.Table("summary"); t != nil && len(t.Rows) == 1 {
		n, _ := t.Rows[0][0].(int64)
		return n
	}
	return -1
}

// writeOut writes with write to -o FILE (created whole: a temporary file
// renamed) or to stdout.
func writeOut(o *options, stdout, stderr io.Writer, write func(io.Writer) error) int {
	if o.out == "" || o.out == "-" {
		if err := write(stdout); err != nil {
			fmt.Fprintf(stderr, "analyze: writing the report: %v\n", err)
			return 1
		}
		return 0
	}
	tmp := o.out + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, o.out)
		}
		if err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "analyze: writing %s: %v\n", o.out, err)
		return 1
	}
	return 0
}
