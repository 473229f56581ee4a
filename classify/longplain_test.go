package classify

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// checkLongPlain holds longPlain to the rules on one literal: the text of
// a literal it passes is one the old detector (oldJudgeText, which has no
// prefilter) finds nothing in, and the detector agrees with its oracle on
// the literal as a tool result. It reports whether longPlain passed it.
func checkLongPlain(t testing.TB, where, raw string) bool {
	t.Helper()
	checkSame(t, where, `{"content":[{"type":"text","text":`+raw+`}]}`)
	if !longPlain(raw) {
		return false
	}
	if ok, r := oldJudgeText(gjson.Parse(raw).Str, false); ok {
		t.Fatalf("%s: longPlain passes %.300q, but the rules say %q", where, raw, r)
	}
	return true
}

// literal is s as a JSON string literal, without encoding/json's HTML
// escapes (\u003c), which longPlain leaves to the other ways.
func literal(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// longTexts makes long texts around a start s: after a few words, with
// the rest of its line long or short, in one line or more, written with
// escapes and without.
func longTexts(s string) []string {
	filler := strings.Repeat("lorem ipsum dolor ", 40)
	var out []string
	for words := 0; words <= 7; words++ {
		pre := strings.Repeat("word ", words)
		for _, text := range []string{pre + s + " " + filler, pre + s + "\n" + filler, pre + s + filler,
			"  \n " + pre + s + ": " + filler, pre + strings.ToUpper(s) + " x\n\n" + filler,
			pre + `"` + s + `" ` + filler, strings.Repeat("w", 40*words) + s + " " + filler,
			s + " " + strings.Repeat("word ", 4+words) + strings.Repeat(" ", 8*words) + "could not error failed: x " + filler,
			strings.Repeat("a.", 20*words) + s + " " + filler} {
			out = append(out, literal(text), `"`+text+`"`)
		}
	}
	return out
}

// TestLongPlain: the starts every rule is about, needles and statuses
// after each number of words, the corpus' texts and the rules' own
// examples, each made long; longPlain passes some and never one the rules
// judge.
func TestLongPlain(t *testing.T) {
	starts := []string{"Error: x", "ERROR #5002: x", "Database error: x", "KeyError: 'x'", "java.net.ConnectException: refused",
		"NotFoundError(404, x)", "RequestTimeout", "1 validation error for X", "Traceback (most recent call last):",
		"panic: x", "fatal error: x", "goroutine 1 [running]:", "thread 'main' panicked at x", "[ERROR] x", "npm ERR! x",
		"Something went wrong", "Sorry, I could not", "Sorry, this is a long story about how we could not", "Msg 208, Level 16, State 1",
		"An error occurred", "An unexpected error occurred", "A fatal error happened", "Exception in thread main",
		"Unhandled rejection", "Uncaught TypeError", "Failed to fetch", "Failure: x", "Unable to x", "Could not x",
		"Couldn't x", "Cannot x", "Can't x", "Can not x", "Upload failed: x", "The big upload failed: x", "Task failed.",
		"HTTP 500", "http/1.1 503 x", "HTTP Error 503: x", "404 Not Found", "Service Unavailable: x", "Gateway Timeout",
		"Too Many Requests", "status code 503", "x 504 y", "Permission denied", "x: no such file or directory",
		"connection refused", "Invalid input", "Missing required x", `validating "x"`, "Required parameter x",
		"ls: cannot access x", "curl: (7) Failed to connect", "quota exceeded", "ETIMEDOUT", "net::ERR_FAILED",
		"x does not exist", "MCP error -32603: x", "Kimai API error (400): x", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.AnError: x",
		strings.Repeat("x", 700) + "Error: y", "ok", "Found 12 documents", "Row 17: shipment 4471 left Rotterdam",
		"Sorry,", "Msg 1,", "thread 'main'", strings.Repeat("pkg.", 40) + "KeyError: x", strings.Repeat("k", 100) + "Timeout"}
	// Rules that read words far from the start: long words before the
	// fifth, and starts whose rules read the whole line.
	long := strings.Repeat("w", 50)
	for words := 1; words <= 6; words++ {
		pre := strings.Repeat(long+" ", words)
		starts = append(starts, pre+"error: x", pre+"failed: x", "An "+pre+"error occurred", pre+"HTTP 503")
	}
	starts = append(starts, "Msg 208, a b c d e f "+long+", Level 16", "thread 'main' a b c d e f "+long+"' panicked at x",
		"Sorry, "+long+long+" could not", "Error "+long+long+": x", "[ERROR] "+long+long, "Upload "+long+long+" failed: x")
	for _, n := range plainNeedles {
		starts = append(starts, n, n+": x", n+" (503)")
	}
	for _, f := range []string{"testdata/hidden/failures.txt", "testdata/hidden/ordinary.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "----8<----") {
				starts = append(starts, line)
			}
		}
	}
	passed, total := 0, 0
	for _, s := range starts {
		for _, raw := range longTexts(s) {
			total++
			if checkLongPlain(t, "starts", raw) {
				passed++
			}
		}
	}
	if passed == 0 || passed == total {
		t.Fatalf("longPlain passed %d of %d long texts: it should pass some and not all", passed, total)
	}
	t.Logf("longPlain passed %d of %d long texts", passed, total)
	// Escapes where the text's length, its line's end and its first words
	// are read.
	for pad := 0; pad < 20; pad++ {
		for _, esc := range []string{`\n`, `\"`, `\\`, `\/`, `\t`, `\u0041`, `\x`, `"`, "\x01"} {
			for _, at := range []int{0, 5, hiddenHead - 2, hiddenShort - 2} {
				body := strings.Repeat("a ", 400)
				raw := `"` + body[:at+pad] + esc + body[at+pad:] + `"`
				checkLongPlain(t, "escapes", raw)
				checkLongPlain(t, "escapes", `"validating `+esc+` x `+body+`"`)
				checkLongPlain(t, "escapes", `"`+strings.Repeat("y", at+pad)+esc+"Error: x "+body+`"`)
			}
		}
	}
}

// FuzzLongPlain: on long texts made around any start, longPlain passes
// only texts the rules find nothing in.
func FuzzLongPlain(f *testing.F) {
	for _, s := range []string{"Error: x", "ok", "a b c d e failed: x", "Sorry, x could not", "x.y.KeyError: z", "404 Not Found"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, raw := range longTexts(s) {
			checkLongPlain(t, "fuzz", raw)
		}
	})
}
