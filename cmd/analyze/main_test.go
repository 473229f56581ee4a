package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"mcptrace/pipeline"
)

func TestAnalyzeReportsCounts(t *testing.T) {
	dir := t.TempDir()
	rec := func(id int, status int, body string) string {
		return fmt.Sprintf(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:0%dZ","side":"client","connection":"c","http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"},"response":{"status":%d,"content_type":"application/json","body":%s}}}`, id, id, status, body)
	}
	lines := []string{
		rec(1, 200, `"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"`),
		rec(2, 200, `"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[],\"isError\":true}}"`),
		rec(3, 200, `"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"x\"}}"`),
		rec(4, 503, `""`),
		"garbage",
	}
	s := ingestAndAnalyze(t, dir, strings.Join(lines, "\n")+"\n")
	for _, want := range []string{`exchanges +4\n`, `exchanges files read +1\n`,
		`TOOL_SUCCESS +application +1 +25\.0%`, `TOOL_ERROR +application +1 +25\.0%`,
		`JSONRPC_ERROR +protocol +1 +25\.0%`, `HTTP_ERROR +transport +1 +25\.0%`,
		`false successes \(2xx, then a failure\) +2\n`, `quarantined input records \(unfiltered\) +1\n`,
		`tool_error +tool error \(isError\) +TOOL_ERROR +1 +33\.3%`, `jsonrpc_error +JSON-RPC error +JSONRPC_ERROR +1 +33\.3%`} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-data", filepath.Join(dir, "nope")}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "nope") {
		t.Errorf("missing dataset: exit %d, %s", code, stderr.String())
	}
}

// A dataset whose every record was quarantined has no exchanges: analyze
// says so and exits 0 (it used to exit 1).
func TestAnalyzeQuarantineOnlyDataset(t *testing.T) {
	if got := ingestAndAnalyze(t, t.TempDir(), `{"mcptrace":"wire/1","ts":"bad"}`+"\nnot json\n"); got != "0 exchanges, 2 quarantined\n" {
		t.Errorf("report = %q", got)
	}
}

// ingestAndAnalyze ingests log into DIR/out and returns analyze's report.
func ingestAndAnalyze(t *testing.T, dir, log string) string {
	t.Helper()
	in := filepath.Join(dir, "a.ndjson")
	os.WriteFile(in, []byte(log), 0o644)
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{in}, OutDir: out, Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-data", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return stdout.String()
}
