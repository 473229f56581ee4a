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
// (that does not start as a JSON object or markup, which judgeText judges
// before it reaches the line rules; a list is not judged or judged by the
// line rules) is one on which the old rules (oldJudgeText, which has no prefilter) find
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
		if t := strings.TrimLeft(s, " \t\r\n\ufeff"); t != "" && (t[0] == '{' || t[0] == '<') {
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
	if got, want := plainLiteral(raw), oldPlainLiteral(raw); got != want {
		t.Fatalf("%s: plainLiteral(%.300q) = %v, the one it replaced says %v", where, raw, got, want)
	}
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
	// Lines with more places to look at than plainLiteral keeps (digits
	// 4 and 5, needle heads), a needle or a status past them, a status
	// or needle cut by the trimmed end.
	for _, fill := range []string{"4471 ", "5 ", "erro ", "4", "time ", "x"} {
		for _, end := range []string{"", " 503", " Error: x", " failed", " 4040", "erro", " 50 ", "  \t "} {
			for _, n := range []int{1, 7, 8, 9, 60, 64, 65, 70, 200} {
				checkPlainLiteral(t, "spots", `"`+strings.Repeat(fill, n)+end+`"`)
				checkPlainLiteral(t, "spots", `"`+strings.Repeat(fill, n)+end+`\nError: y"`)
			}
		}
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
	if texts < 100 || lines == 0 || lines == texts || literals == 0 || literals == texts {
		t.Fatalf("of %d texts %d have a plain first line, %d a plain literal: the prefilters should pass some and not all", texts, lines, literals)
	}
	t.Logf("of %d texts %d have a plain first line, %d a plain literal", texts, lines, literals)
}

// FuzzPlainLine: on any line the prefilter passes, and in the text of any
// literal plainLiteral passes, the rules find nothing.
func FuzzPlainLine(f *testing.F) {
	for _, s := range []string{"ok", "Error: x", "x 503 y", "Found 3 \"x\": a", "ls: cannot", "ÄRROR: x", "a\u212aerror",
		strings.Repeat("4471 ", 30) + "Error: x", strings.Repeat("timeo ", 20) + "503"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkPlain(t, "fuzz", s)
		lit, _ := json.Marshal(s)
		checkPlainLiteral(t, "fuzz", string(lit))
		checkPlainLiteral(t, "fuzz", `"`+s+`"`) // escapes as written
	})
}

// checkHead holds unescapeHead to the old detector on long literals made
// from a text: the text, then more lines, as encoding/json writes it and
// with the text's own escapes.
func checkHead(t testing.TB, where, s string) {
	t.Helper()
	filler := strings.Repeat("Row 17: shipment 4471 left Rotterdam on time, 3 pallets.\n", 90)
	for _, text := range []string{s + "\n" + filler, filler + s, s + " " + filler, strings.Repeat(" ", 600) + s + "\n" + filler,
		"**" + s + "\n" + filler, s + "\n   \n" + strings.Repeat(" ", 6000)} {
		lit, _ := json.Marshal(text)
		for _, raw := range []string{string(lit), `"` + s + `\n` + strings.ReplaceAll(filler, "\n", `\n`) + `"`} {
			checkSame(t, where, `{"content":[{"type":"text","text":`+raw+`}]}`)
			if head, bp, ok := unescapeHead(raw); ok {
				full := gjson.Parse(raw).Str
				if !strings.HasPrefix(full, head) {
					t.Fatalf("%s: unescapeHead(%.200q) = %.200q, not a prefix of %.200q", where, raw, head, full)
				}
				r := ""
				releaseScratch(head, bp, &r)
			}
		}
	}
}

// TestUnescapeHead: long texts of each kind the rules know, and escapes
// at the head's end.
func TestUnescapeHead(t *testing.T) {
	taken := 0
	for _, s := range []string{"Error: x", "ok", "Found 3 \"x\":", "{\"error\":\"x\"}", "<title>503</title>", "❌ Failed to fetch",
		"Traceback (most recent call last):", "x 503 y", "\u00e9\U0001F600", "KeyError: 'x'", "Upload failed.", "a\\b", "\x01",
		"Error", "Request timed out", strings.Repeat("é", 2000) + "\nError: x", strings.Repeat("\"", 3000) + "\nx"} {
		checkHead(t, "table", s)
		lit, _ := json.Marshal(s + "\n" + strings.Repeat("line two\n", 600))
		if _, bp, ok := unescapeHead(string(lit)); ok {
			taken++
			r := ""
			releaseScratch("", bp, &r)
		}
	}
	if taken < 5 {
		t.Fatalf("unescapeHead took only %d of the long texts", taken)
	}
	// The limit falls on every byte of escapes of each length.
	for pad := 0; pad < 16; pad++ {
		for _, esc := range []string{`\n`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\uZZZZ`} {
			raw := `"` + strings.Repeat("a", longHead-pad) + strings.Repeat(esc, 8) + `\n` + strings.Repeat("b", 3*longHead) + `"`
			checkSame(t, "limit", `{"content":[{"type":"text","text":`+raw+`}]}`)
			out, more := appendUnescapedHead(nil, []byte(raw[1:len(raw)-1]), longHead)
			if full := gjson.Parse(raw).Str; !more || !strings.HasPrefix(full, string(out)) {
				t.Fatalf("appendUnescapedHead(pad %d, %s) = %q (more %v), not a prefix of the value", pad, esc, out, more)
			}
		}
	}
}

// FuzzUnescapeHead: on long literals made from any text the detector
// agrees with its oracle.
func FuzzUnescapeHead(f *testing.F) {
	for _, s := range []string{"Error: x", "ok", "{\"a\":1}", "❌ x", "x\\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkHead(t, "fuzz", s) })
}

// TestEqualLowerWords: equalLowerWords, which compares eight bytes at a
// time (lowerWord), says what equalLower (byte by byte through lowerTab) says, on
// every byte value at every place of needles and phrases of every length,
// and on random bytes.
func TestEqualLowerWords(t *testing.T) {
	byteWise := equalLower
	for c := 0; c < 256; c++ {
		if got, want := lowerWord(uint64(c)*lowBits), uint64(lowerTab[c])*lowBits; got != want {
			t.Fatalf("lowerWord of eight %#x: %#x, want %#x", c, got, want)
		}
	}
	var lows []string
	for _, n := range plainNeedles {
		lows = append(lows, n)
	}
	for _, p := range kindPhrases {
		lows = append(lows, p.text)
	}
	lows = append(lows, "abcdefgh", "abcdefghi", "validating ", "0123456789abcdef[]{}@`")
	for _, low := range lows {
		for i := 0; i < len(low); i++ {
			for c := 0; c < 256; c++ {
				s := []byte(low)
				s[i] = byte(c)
				for _, x := range []string{string(s), strings.ToUpper(string(s)), string(s) + "xyz"} {
					if got, want := equalLowerWords(x, low), byteWise(x, low); got != want {
						t.Fatalf("equalLowerWords(%q, %q) = %v, byte by byte %v", x, low, got, want)
					}
				}
			}
		}
	}
	r := uint64(5)
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	for range 200000 {
		n := next(24)
		low, s := make([]byte, n), make([]byte, n)
		for i := range low {
			low[i] = byte(next(256))
			s[i] = low[i]
			switch next(4) {
			case 0:
				s[i] = byte(next(256))
			case 1:
				s[i] ^= 0x20
			}
		}
		if got, want := equalLowerWords(string(s), string(low)), byteWise(string(s), string(low)); got != want {
			t.Fatalf("equalLowerWords(%q, %q) = %v, byte by byte %v", s, low, got, want)
		}
	}
}
