package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptrace/schema"
)

// Every flag with a rule refuses a value outside it with exit 2, a message
// naming the flag, and nothing read or written.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	bad := map[string]string{
		"workers": "-1", "max-line": "0", "row-group": "0", "max-document": "-5", "commit-interval": "0s",
		"roll-rows": "0", "roll-bytes": "-1", "roll-age": "-1m", "max-open-files": "0", "flush-interval": "0s",
		"idle-timeout": "-1s", "lateness": "-1s", "kafka-session-timeout": "0s", "kafka-rebalance-timeout": "-1s",
		"shutdown-timeout": "0s", "merge-window": "-1s", "max-hold": "-1m", "merge": "sometimes", "format": "csv",
		"pseudonym-key-id": "", "memory-limit": "-1", "max-body": "0", "max-sse-events": "0", "max-depth": "0",
		"max-open-conversations": "-1",
	}
	// Values past a rule's upper bound, for the rules that have one.
	tooHigh := map[string]string{"max-depth": "10001"}
	for name, r := range flagRules {
		if _, ok := tooHigh[name]; r.max != 0 && !ok {
			t.Errorf("flag -%s has an upper bound but no value past it in this test", name)
		}
	}
	for name, v := range tooHigh {
		t.Run(name+"-high", func(t *testing.T) {
			p, code := runIngestProc(t, "-out", filepath.Join(t.TempDir(), "out"), "-"+name+"="+v, "../../samples/seed")
			if code != ExitUsage || !strings.Contains(p.stderr.String(), "-"+name+" "+v+": must be") {
				t.Fatalf("-%s=%s: exit %d, want %d\n%s", name, v, code, ExitUsage, p)
			}
		})
	}
	for name := range flagRules {
		if _, ok := bad[name]; !ok {
			t.Errorf("flag -%s has a rule but no bad value in this test", name)
		}
	}
	for name, v := range bad {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			p, code := runIngestProc(t, "-out", out, "-"+name+"="+v, "../../samples/seed")
			if code != ExitUsage {
				t.Fatalf("-%s=%s: exit %d, want %d\n%s", name, v, code, ExitUsage, p)
			}
			if msg := p.stderr.String(); !strings.Contains(msg, "-"+name+" ") || !strings.Contains(msg, "must be") {
				t.Errorf("-%s=%s: the message does not name the flag and what it accepts:\n%s", name, v, msg)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("-%s=%s: the dataset directory was created (%v)", name, v, err)
			}
		})
	}
	// The values at the rules' edges are accepted.
	out := filepath.Join(t.TempDir(), "out")
	if p, code := runIngestProc(t, "-out", out, "-workers", "0", "-roll-age", "0", "-idle-timeout", "0", "-lateness", "0", "-max-open-files", "1",
		"-max-depth", "10000", "-max-open-conversations", "0", "-max-body", "1", "../../samples/seed"); code != ExitOK && code != ExitQuarantined {
		t.Fatalf("edge values: exit %d, want %d\n%s", code, ExitOK, p)
	}
}

// The exit statuses of a file run, one case each (3, stopped by a signal,
// and 128+N are tested in signal_test.go and process_test.go, 4 by the
// Kafka tests).
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want int
		says string // in stderr
	}{
		{"clean input", []string{"-out", filepath.Join(dir, "a"), "../../samples/seed"}, ExitOK, ""},
		{"quarantined input", []string{"-out", filepath.Join(dir, "b"), "../../samples/hostile"}, ExitQuarantined, ""},
		{"missing input", []string{"-out", filepath.Join(dir, "c"), filepath.Join(dir, "nothing-here.ndjson")}, ExitInput, "nothing-here.ndjson"},
		{"output not a directory", []string{"-out", notDir, "../../samples/seed"}, ExitOutput, notDir},
		{"usage", []string{"-no-such-flag"}, ExitUsage, "no-such-flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, code := runIngestProc(t, c.args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d\n%s", code, c.want, p)
			}
			if c.says != "" && !strings.Contains(p.stderr.String(), c.says) {
				t.Errorf("stderr does not name %q:\n%s", c.says, p.stderr)
			}
		})
	}
}

// When stderr is not a terminal, the run's last log line is a JSON object
// with the exit status and the ledger, the same as the dataset's
// .mcptrace/ledger.json, so a cron job or a log pipeline reads the result
// without parsing the summary.
func TestLastLogLineCarriesTheLedger(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	p, code := runIngestProc(t, "-out", out, "../../samples/hostile", "../../samples/seed")
	if code != ExitQuarantined {
		t.Fatalf("exit %d, want %d\n%s", code, ExitQuarantined, p)
	}
	last, _ := lastLogLine(t, p)
	l := last.Ledger
	if last.Message != "ingest finished" || last.Exit != ExitQuarantined || !l.Balanced || len(l.Inputs) < 2 || l.Totals.Quarantined == 0 {
		t.Fatalf("last line: %+v", last)
	}
	b, err := os.ReadFile(filepath.Join(out, ".mcptrace", "ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file schema.Ledger
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if file.Totals.Records != l.Totals.Records || file.Out.Exchanges != l.Out.Exchanges || len(file.Inputs) != len(l.Inputs) {
		t.Errorf("ledger.json %+v differs from the log line's %+v", file.Totals, l.Totals)
	}
}

// lastLine is the fields of ingest's last log line a script reads.
type lastLine struct {
	Message string        `json:"message"`
	Exit    int           `json:"exit"`
	Ledger  schema.Ledger `json:"ledger"`
}

// lastLogLine decodes the last line a run wrote on stderr (not a
// terminal: JSON), and returns it as written too.
func lastLogLine(t *testing.T, p *ingestProc) (lastLine, string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	line := lines[len(lines)-1]
	var last lastLine
	if err := json.Unmarshal([]byte(line), &last); err != nil {
		t.Fatalf("the last stderr line is not JSON: %v\n%s", err, line)
	}
	return last, line
}
