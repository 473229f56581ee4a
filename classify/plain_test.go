package classify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

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

// checkPlainLiteral holds plainLiteral to the rules: the text of a literal
// it passes is one the old detector (gjson's unescaping, oldJudgeText)
// finds nothing in.
func checkPlainLiteral(t testing.TB, where, raw string) bool {
	t.Helper()
	if len(raw) > hiddenEnvelope || !plainLiteral(raw) {
		return false
	}
	if ok, r := oldJudgeText(gjson.Parse(raw).Str, false); ok {
		t.Fatalf("%s: plainLiteral passes %.300q, but the rules say %q", where, raw, r)
	}
	return true
}

// TestPlainLiteral: escapes, leading space and what plainLiteral leaves to
// the rules.
func TestPlainLiteral(t *testing.T) {
	for _, raw := range []string{`"Error: x"`, `"\nError: x"`, `" \t\r\nError: x"`, `"Err\u006fr: x"`, `"ok\nError: x"`,
		`"Found \"x\": Error: y"`, `"**Error: x**"`, `"__x__ Error"`, `"{\"error\":\"x\"}"`, `"<title>503</title>"`,
		`"ok\"`, `"ok`, `ok"`, `"a"b"`, `"\u2028Error"`, `"❌ Failed"`, `"Status 503"`, `"` + strings.Repeat("a ", 300) + `"`,
		`"` + strings.Repeat("a", 509) + `503"`, `"` + strings.Repeat("a", 510) + `5034"`} {
		checkPlainLiteral(t, "table", raw)
		if lit, _ := json.Marshal(gjson.Parse(raw).Str); plainLiteral(raw) && !strings.Contains(raw, "Error") && !plainLiteral(string(lit)) {
			t.Errorf("plainLiteral passes %q but not %s", raw, lit)
		}
	}
	for _, raw := range []string{`"Error: x"`, `"\nError: x"`, `"Err\u006fr: x"`, `"**x"`, `"{}"`, `"a"b"`, `""`, `"  "`} {
		if plainLiteral(raw) {
			t.Errorf("plainLiteral(%s) passes a literal the rules must judge", raw)
		}
	}
	for _, raw := range []string{`"ok"`, `"Found 12 documents matching \"quarterly report\": Q3"`, `"\n  Row 17: 4471 pallets\nError: x"`,
		`"` + strings.Repeat("a", 512) + `Error"`} {
		if !plainLiteral(raw) {
			t.Errorf("plainLiteral(%s) does not pass a plain text", raw)
		}
		checkPlainLiteral(t, "table", raw)
	}
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

// TestPlainLineOnTraffic: on the first text blocks of generated traffic
// the prefilters pass some successes and never a text the rules judge.
func TestPlainLineOnTraffic(t *testing.T) {
	var buf bytes.Buffer
	if _, err := traffic.Write(&buf, traffic.Options{Format: "wire", Side: "client", Seed: 7, Bytes: 6 << 20}); err != nil {
		t.Fatal(err)
	}
	lines, literals, texts := 0, 0, 0
	var visit func(v gjson.Result)
	visit = func(v gjson.Result) {
		switch {
		case v.IsObject() || v.IsArray():
			v.ForEach(func(_, x gjson.Result) bool { visit(x); return true })
		case v.Type == gjson.String:
			// A body: JSON, or an event stream's data lines.
			for _, data := range strings.Split(v.Str, "\n") {
				data = strings.TrimSpace(strings.TrimPrefix(data, "data:"))
				if data == "" || !gjson.Valid(data) {
					continue
				}
				body := gjson.Parse(data)
				if text := body.Get("result.content.0.text"); text.Type == gjson.String {
					texts++
					if checkPlain(t, "traffic", text.Str) {
						lines++
					}
					if checkPlainLiteral(t, "traffic", text.Raw) {
						literals++
					}
				}
				visit(body)
			}
		}
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if gjson.Valid(line) {
			visit(gjson.Parse(line))
		}
	}
	if texts < 100 || lines == 0 || lines == texts || literals == 0 || literals > lines {
		t.Fatalf("of %d texts %d have a plain first line, %d a plain literal: the prefilters should pass some and not all", texts, lines, literals)
	}
	t.Logf("of %d texts %d have a plain first line, %d a plain literal", texts, lines, literals)
}

// FuzzPlainLine: on any line the prefilter passes, and in the text of any
// literal plainLiteral passes, the rules find nothing.
func FuzzPlainLine(f *testing.F) {
	for _, s := range []string{"ok", "Error: x", "x 503 y", "Found 3 \"x\": a", "ls: cannot", "ÄRROR: x", "a\u212aerror"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkPlain(t, "fuzz", s)
		lit, _ := json.Marshal(s)
		checkPlainLiteral(t, "fuzz", string(lit))
		checkPlainLiteral(t, "fuzz", `"`+s+`"`) // escapes as written
	})
}
