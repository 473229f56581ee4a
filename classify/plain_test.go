package classify

import (
	"bytes"
	"strings"
	"testing"

	"mcptrace/internal/traffic"
)

// checkPlain holds the prefilter to the rules: a line plainLine passes
// (that does not start as JSON or markup, which judgeText judges before
// it reaches the line rules) is one on which the old rules (oldJudgeText, which has no prefilter) find
// nothing, as a text of its own (one short line: every rule may fire) and
// as the first line of a longer text. It reports whether the text's
// first line was plain.
func checkPlain(t testing.TB, where, text string) bool {
	t.Helper()
	first := text
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	plain := false
	for _, s := range []string{first, strings.TrimSpace(first), stripDecoration(strings.TrimSpace(first))} {
		if !plainLine(s) {
			continue
		}
		if t := strings.TrimLeft(s, " \t\r\n\ufeff"); t != "" && (t[0] == '{' || t[0] == '[' || t[0] == '<') {
			continue // judged as JSON or markup, never by the line rules
		}
		plain = true
		for _, text := range []string{s, s + "\nx", s + "\n[y]"} {
			for _, cut := range []bool{false, true} {
				if ok, r := oldJudgeText(text, cut); ok {
					t.Fatalf("%s: plainLine passes %.300q, but the rules say %q (cut %v)", where, s, r, cut)
				}
			}
		}
	}
	return plain
}

// TestPlainLine: each rule's examples are not plain; plain successes are.
func TestPlainLine(t *testing.T) {
	for _, s := range []string{"Error: x", "ERROR #5002: x", "Database error: x", "KeyError: 'x'",
		"java.net.ConnectException: refused", "NotFoundError(404, x)", "RequestTimeout", "1 validation error for X",
		"Traceback (most recent call last):", "panic: x", "fatal error: x", "goroutine 1 [running]:",
		"thread 'main' panicked at x", "[ERROR] x", "npm ERR! x", "Something went wrong", "Sorry, I could not",
		"Msg 208, Level 16, State 1", "An error occurred", "Exception in thread main", "Unhandled rejection",
		"Uncaught TypeError", "Failed to fetch", "Failure: x", "Unable to x", "Could not x", "Couldn't x",
		"Cannot x", "Can't x", "Can not x", "Upload failed: x", "HTTP 500", "http/1.1 503 x", "404 Not Found",
		"Service Unavailable: x", "Gateway Timeout", "Too Many Requests", "status code 503", "x 504 y",
		"Permission denied", "x: no such file or directory", "connection refused", "Invalid input",
		"Missing required x", "validating \"x\"", "Required parameter x", "ls: cannot access x",
		"curl: (7) Failed to connect", "quota exceeded", "ETIMEDOUT", "net::ERR_FAILED", "x does not exist"} {
		if plainLine(s) {
			t.Errorf("plainLine(%q) passes a line a rule is about", s)
		}
		checkPlain(t, "table", s)
	}
	for _, s := range []string{"ok", "Found 12 documents matching \"quarterly report\": Q3 revenue summary",
		"Row 17: shipment 4471 left Rotterdam on time, 3 pallets.", "Done.", "https://example.com/a/b"} {
		if !plainLine(s) {
			t.Errorf("plainLine(%q) does not pass a plain success", s)
		}
		checkPlain(t, "table", s)
	}
}

// TestPlainLineOnTraffic: on the texts of generated traffic the prefilter
// passes most successes and never a line the rules judge (the walk runs
// checkText, and so checkPlain, on every string).
func TestPlainLineOnTraffic(t *testing.T) {
	var buf bytes.Buffer
	if _, err := traffic.Write(&buf, traffic.Options{Format: "wire", Side: "client", Seed: 7, Bytes: 2 << 20}); err != nil {
		t.Fatal(err)
	}
	plainTexts, texts := 0, 0
	for _, line := range strings.Split(buf.String(), "\n") {
		for _, q := range strings.Split(line, `\"text\":\"`)[1:] {
			if i := strings.Index(q, `\"`); i >= 0 {
				q = q[:i]
			}
			texts++
			if checkPlain(t, "traffic", q) {
				plainTexts++
			}
		}
	}
	if texts < 100 || plainTexts == 0 || plainTexts == texts {
		t.Fatalf("%d of %d texts plain: the prefilter should pass some and not all", plainTexts, texts)
	}
	t.Logf("%d of %d texts plain", plainTexts, texts)
}

// FuzzPlainLine: on any line the prefilter passes, the rules find nothing.
func FuzzPlainLine(f *testing.F) {
	for _, s := range []string{"ok", "Error: x", "x 503 y", "Found 3 \"x\": a", "ls: cannot", "ÄRROR: x", "a\u212aerror"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkPlain(t, "fuzz", s) })
}
