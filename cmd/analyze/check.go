package main

import (
	"context"
	"encoding/xml"
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

const checkUsage = `usage: analyze check [-data DIR] [filters] THRESHOLD... [-junit FILE]

A CI gate: checks the dataset (after the filters of analyze -h) against each
threshold given, prints PASS or FAIL per threshold, and exits 1 when one is
exceeded, so a test suite that records its MCP traffic can fail a build on it.

Thresholds (at least one):
  -max-false-success-rate R   false successes over the 2xx exchanges, 0..1
                                analyze check -max-false-success-rate 0.01
  -max-failure-rate R         failures (transport, protocol, TOOL_ERROR) over
                              all exchanges, 0..1
                                analyze check -max-failure-rate 0.05
  -max-unsafe-retries N       repeats of tools neither read-only nor
                              idempotent after an uncertain outcome
                                analyze check -max-unsafe-retries 0
  -max-duplicate-side-effects N  tool calls that ran (or may have run) twice
                                analyze check -max-duplicate-side-effects 0
  -fail-on OUTCOMES           fail when any exchange has one of these outcomes
                                analyze check -fail-on TOOL_ERROR,HTTP_ERROR

  -junit FILE                 also write the results as JUnit XML (one test
                              case per threshold; a failure element when
                              exceeded)
                                analyze check -max-unsafe-retries 0 -junit check.xml

Exit status: 0 every threshold holds; 1 one is exceeded; 2 bad flags; 3 the
dataset is missing or unreadable, or the JUnit file could not be written.
`

// checkFlags are analyze check's thresholds; negative: not checked.
type checkFlags struct {
	maxFalseRate, maxFailRate float64
	maxUnsafe, maxDupEffects  int64
	failOn                    string
	junit                     string
}

func (c *checkFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&c.maxFalseRate, "max-false-success-rate", -1, "")
	fs.Float64Var(&c.maxFailRate, "max-failure-rate", -1, "")
	fs.Int64Var(&c.maxUnsafe, "max-unsafe-retries", -1, "")
	fs.Int64Var(&c.maxDupEffects, "max-duplicate-side-effects", -1, "")
	fs.StringVar(&c.failOn, "fail-on", "", "")
	fs.StringVar(&c.junit, "junit", "", "")
}

// checkResult is one threshold's verdict.
type checkResult struct {
	name    string // the flag
	failed  bool
	message string
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	c := &checkFlags{}
	o, err := parseFlags(args, stderr, time.Now(), c, "check")
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, checkUsage)
		return 0
	}
	if err == nil {
		err = c.validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "analyze check: %v\n\n%s", err, checkUsage)
		return 2
	}
	ctx := context.Background()
	d, err := report.Open(ctx, o.data, o.filter)
	if err != nil {
		fmt.Fprintf(stderr, "analyze check: %v\n", err)
		return 3
	}
	defer d.Close()
	for _, w := range d.Warnings {
		fmt.Fprintf(stderr, "analyze check: warning: %s\n", w)
	}
	results, err := c.evaluate(ctx, d)
	if err != nil {
		fmt.Fprintf(stderr, "analyze check: %v\n", err)
		return 3
	}
	failed := 0
	for _, r := range results {
		verdict := "PASS"
		if r.failed {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", verdict, r.name, r.message)
	}
	fmt.Fprintf(stdout, "%d of %d checks failed on %s", failed, len(results), o.data)
	if len(o.filterText) > 0 {
		fmt.Fprintf(stdout, " (%s)", strings.Join(o.filterText, " "))
	}
	fmt.Fprintln(stdout)
	if c.junit != "" {
		if err := writeJUnit(c.junit, o, results); err != nil {
			fmt.Fprintf(stderr, "analyze check: writing %s: %v\n", c.junit, err)
			return 3
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func (c *checkFlags) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"max-false-success-rate", c.maxFalseRate}, {"max-failure-rate", c.maxFailRate}} {
		if r.v != -1 && (r.v < 0 || r.v > 1) {
			return fmt.Errorf("-%s %v: a rate is between 0 and 1", r.name, r.v)
		}
	}
	for _, oc := range list(c.failOn) {
		if !slices.Contains(classify.Outcomes, oc) {
			return fmt.Errorf("-fail-on %q: not an outcome (%s)", oc, strings.Join(classify.Outcomes, ", "))
		}
	}
	if c.maxFalseRate < 0 && c.maxFailRate < 0 && c.maxUnsafe < 0 && c.maxDupEffects < 0 && c.failOn == "" {
		return errors.New("give at least one threshold")
	}
	return nil
}

// figure returns a cell of a report's table by column name.
func figure(r *report.Report, table, col string) any {
	t := r.Table(table)
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	for i, c := range t.Cols {
		if c.Name == col {
			return t.Rows[0][i]
		}
	}
	return nil
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }

func (c *checkFlags) evaluate(ctx context.Context, d *report.Dataset) ([]checkResult, error) {
	ov, err := d.Overview(ctx)
	if err != nil {
		return nil, err
	}
	var out []checkResult
	if c.maxFalseRate >= 0 {
		n, n2xx := asInt(figure(ov, "summary", "false_successes")), asInt(figure(ov, "summary", "http_2xx"))
		rate, _ := figure(ov, "summary", "false_success_rate").(float64) // no 2xx: 0
		out = append(out, checkResult{"max-false-success-rate", rate > c.maxFalseRate,
			fmt.Sprintf("false-success rate %s (%d of %d 2xx exchanges), limit %s", pct(rate), n, n2xx, pct(c.maxFalseRate))})
	}
	if c.maxFailRate >= 0 {
		n, all := asInt(figure(ov, "summary", "failed")), asInt(figure(ov, "summary", "exchanges"))
		var rate float64
		if all > 0 {
			rate = float64(n) / float64(all)
		}
		out = append(out, checkResult{"max-failure-rate", rate > c.maxFailRate,
			fmt.Sprintf("failure rate %s (%d of %d exchanges), limit %s", pct(rate), n, all, pct(c.maxFailRate))})
	}
	if c.maxUnsafe >= 0 || c.maxDupEffects >= 0 {
		rt, err := d.Retries(ctx, 0)
		if err != nil {
			return nil, err
		}
		if c.maxUnsafe >= 0 {
			n := asInt(figure(rt, "summary", "unsafe_repeats"))
			out = append(out, checkResult{"max-unsafe-retries", n > c.maxUnsafe, fmt.Sprintf("%d unsafe repeats, limit %d", n, c.maxUnsafe)})
		}
		if c.maxDupEffects >= 0 {
			n := asInt(figure(rt, "summary", "duplicate_side_effects"))
			out = append(out, checkResult{"max-duplicate-side-effects", n > c.maxDupEffects, fmt.Sprintf("%d side effects done twice, limit %d", n, c.maxDupEffects)})
		}
	}
	if outs := list(c.failOn); len(outs) > 0 {
		counts := map[string]int64{}
		if t := ov.Table("outcomes"); t != nil {
			for _, row := range t.Rows {
				counts[row[0].(string)] += row[2].(int64)
			}
		}
		for _, oc := range outs {
			out = append(out, checkResult{"fail-on " + oc, counts[oc] > 0, fmt.Sprintf("%d exchanges with outcome %s, limit 0", counts[oc], oc)})
		}
	}
	return out, nil
}

// JUnit XML, the subset CI systems read: testsuites > testsuite > testcase,
// a failure element in a failed case.
type junitSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Suites   []junitSet `xml:"testsuite"`
}

type junitSet struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnit(path string, o *options, results []checkResult) error {
	set := junitSet{Name: "mcptrace analyze check", Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{{"dataset", o.data}, {"filters", strings.Join(o.filterText, " ")}}}
	for _, r := range results {
		c := junitCase{Name: r.name, Classname: "mcptrace.analyze.check", Time: "0", SystemOut: r.message}
		if r.failed {
			c.Failure = &junitFailure{Message: r.message, Type: "threshold", Text: r.message}
			set.Failures++
		}
		set.Cases = append(set.Cases, c)
	}
	set.Tests = len(set.Cases)
	doc := junitSuites{Name: set.Name, Tests: set.Tests, Failures: set.Failures, Suites: []junitSet{set}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
