package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkExit runs analyze check and returns its exit status and stdout.
func checkExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"check"}, args...), &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

// Each threshold holds at the dataset's own figure and fails just under it;
// an absent outcome passes -fail-on, a present one fails it.
func TestCheckThresholds(t *testing.T) {
	dir := samplesDataset(t)
	j := analyzeJSON(t, "-data", dir, "overview", "retries")
	sum := j.rows(t, "overview", "summary", "false_success_rate", "failed", "exchanges")[0]
	ret := j.rows(t, "retries", "summary", "unsafe_repeats", "duplicate_side_effects")[0]
	fsRate := sum[0].(float64)
	failRate := sum[1].(float64) / sum[2].(float64)
	unsafe, dup := int(ret[0].(float64)), int(ret[1].(float64))
	if fsRate == 0 || unsafe == 0 || dup == 0 {
		t.Fatalf("the samples should have false successes, unsafe repeats and side effects done twice: %v %v %v", fsRate, unsafe, dup)
	}
	for _, c := range []struct {
		flag       string
		pass, fail string
	}{
		{"-max-false-success-rate", fmt.Sprint(fsRate), fmt.Sprint(fsRate - 1e-6)},
		{"-max-failure-rate", fmt.Sprint(failRate), fmt.Sprint(failRate - 1e-6)},
		{"-max-unsafe-retries", fmt.Sprint(unsafe), fmt.Sprint(unsafe - 1)},
		{"-max-duplicate-side-effects", fmt.Sprint(dup), fmt.Sprint(dup - 1)},
		{"-fail-on", "INVALID_ENVELOPE", "TOOL_ERROR"},
	} {
		args := []string{"-data", dir, c.flag}
		if c.flag == "-fail-on" {
			// The pass case: a tool whose calls never had the outcome.
			args = append([]string{"-tool", "get_weather"}, args...)
		}
		if code, out := checkExit(t, append(args, c.pass)...); code != 0 || !strings.HasPrefix(out, "PASS ") {
			t.Errorf("%s %s: exit %d, want 0:\n%s", c.flag, c.pass, code, out)
		}
		if code, out := checkExit(t, "-data", dir, c.flag, c.fail); code != 1 || !strings.HasPrefix(out, "FAIL ") {
			t.Errorf("%s %s: exit %d, want 1:\n%s", c.flag, c.fail, code, out)
		}
	}
	// Filters apply: one tool with no unsafe repeat passes where the
	// dataset fails.
	if code, out := checkExit(t, "-data", dir, "-tool", "get_weather", "-max-unsafe-retries", "0", "-fail-on", "TOOL_ERROR,HTTP_ERROR"); code != 0 {
		t.Errorf("filtered: exit %d:\n%s", code, out)
	}
	for _, bad := range [][]string{{"-data", dir}, {"-data", dir, "-max-false-success-rate", "2"}, {"-data", dir, "-fail-on", "NOPE"}, {"-data", dir, "-max-unsafe-retries", "0", "overview"}} {
		if code, out := checkExit(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2:\n%s", bad, code, out)
		}
	}
	if code, out := checkExit(t, "-data", filepath.Join(t.TempDir(), "nope"), "-max-unsafe-retries", "0"); code != 3 || !strings.Contains(out, "does not exist") {
		t.Errorf("missing dataset: exit %d:\n%s", code, out)
	}
}

// The JUnit file is well-formed and consistent: one case per threshold,
// a failure element exactly in the failed ones, counts that match.
func TestCheckJUnit(t *testing.T) {
	dir := samplesDataset(t)
	path := filepath.Join(t.TempDir(), "check.xml")
	code, out := checkExit(t, "-data", dir, "-max-false-success-rate", "1", "-max-unsafe-retries", "0", "-fail-on", "TOOL_ERROR,INVALID_ENVELOPE,MALFORMED_JSON", "-junit", path)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("no XML declaration:\n%s", b)
	}
	var doc struct {
		XMLName  xml.Name
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Class   string `xml:"classname,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("JUnit XML: %v\n%s", err, b)
	}
	if doc.XMLName.Local != "testsuites" || len(doc.Suites) != 1 {
		t.Fatalf("root %s with %d suites:\n%s", doc.XMLName.Local, len(doc.Suites), b)
	}
	s := doc.Suites[0]
	want := map[string]bool{"max-false-success-rate": false, "max-unsafe-retries": true, "fail-on TOOL_ERROR": true,
		"fail-on INVALID_ENVELOPE": true, "fail-on MALFORMED_JSON": true}
	failures := 0
	for _, c := range s.Cases {
		f, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected case %q", c.Name)
			continue
		}
		if (c.Failure != nil) != f || c.Class == "" {
			t.Errorf("case %s: failure %v, want %v", c.Name, c.Failure, f)
		}
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" {
				t.Errorf("case %s: failure without a message", c.Name)
			}
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("cases missing: %v", want)
	}
	if s.Tests != len(s.Cases) || doc.Tests != s.Tests || s.Failures != failures || doc.Failures != failures {
		t.Errorf("counts: suites %d/%d, suite %d/%d, cases %d, failures %d", doc.Tests, doc.Failures, s.Tests, s.Failures, len(s.Cases), failures)
	}
}
