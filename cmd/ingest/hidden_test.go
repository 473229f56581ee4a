package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The ingest summary counts the TOOL_SUCCESS rows that samples/hidden marks
// suspect (its README's columns table says which).
func TestSummaryCountsSuspectHiddenErrors(t *testing.T) {
	readme, err := os.ReadFile("../../samples/hidden/README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(string(readme), "| suspect_hidden_error | true |")
	if want == 0 {
		t.Fatal("samples/hidden/README.md states no suspect row")
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", t.TempDir(), "-merge", "off", "../../samples/hidden"}, &stdout, &stderr); code != 0 {
		t.Fatalf("ingest exited %d: %s", code, stderr.String())
	}
	line := fmt.Sprintf("suspect hidden errors (TOOL_SUCCESS whose text says it failed): %d\n", want)
	if !strings.Contains(stdout.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, stdout.String())
	}
}
