package jsonstr

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// gjsonValue is what gjson gives for the literal with body lit.
func gjsonValue(lit []byte) string { return gjson.Parse(`"` + string(lit) + `"`).Str }

// unescape decodes lit with AppendUnescapedText and, when lit is valid
// JSON (no control character), checks that AppendUnescaped agrees.
func unescape(t testing.TB, lit []byte) string {
	got := string(AppendUnescapedText(nil, lit))
	if !bytes.ContainsFunc(lit, func(r rune) bool { return r < ' ' }) && utf8.Valid(lit) && validEscapes(lit) {
		if v := string(AppendUnescaped(nil, lit)); v != got {
			t.Fatalf("%q: AppendUnescaped %q, AppendUnescapedText %q", lit, v, got)
		}
		checkUnescapeInto(t, lit)
	}
	return got
}

// validEscapes says every escape in lit is one JSON allows.
func validEscapes(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		if i+1 == len(lit) || !strings.ContainsRune(`"\\/bfnrtu`, rune(lit[i+1])) {
			return false
		}
		if lit[i+1] == 'u' {
			if i+6 > len(lit) {
				return false
			}
			for _, c := range lit[i+2 : i+6] {
				if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
					return false
				}
			}
			i += 5
		} else {
			i++
		}
	}
	return true
}

// closes says gjson reads lit as one whole literal ending at the closing
// quote added after it (no unescaped quote inside, the last not escaped),
// and unescapes it: a body without a backslash gjson hands back as it is,
// control characters and all, where its unescape stops at one; no caller
// unescapes a body without a backslash.
func closes(lit []byte) bool {
	if bytes.IndexByte(lit, '\\') < 0 && bytes.ContainsFunc(lit, func(r rune) bool { return r < ' ' }) {
		return false
	}
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
			if i == len(lit) {
				return false
			}
		case '"':
			return false
		}
	}
	return true
}

var cases = []string{
	``, `plain`, `a\"b`, `\\`, `\/`, `\b\f\n\r\t`, `tab\there`, `\u0041\u00e9\u4e2d`,
	`\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00`, `\ud83d\u0041`, `\uD83D\uDE00`,
	`\u00zz`, `\u12`, `\x41`, "ctl\x01after", "nl\nafter", "e\\n\x01after", "e\\t\nafter", `end\`, `caf\u00e9 \"quoted\" \\ path\/x`,
	"\xff\xfe bytes", `\u0000`, `a\u000ab`,
}

// TestSameAsGjson: every case decodes to gjson's value.
func TestSameAsGjson(t *testing.T) {
	checked := 0
	for _, c := range cases {
		lit := []byte(c)
		if !closes(lit) {
			continue
		}
		checked++
		if got, want := unescape(t, lit), gjsonValue(lit); got != want {
			t.Errorf("%q: got %q, gjson %q", c, got, want)
		}
	}
	if checked < len(cases)-4 {
		t.Fatalf("only %d of %d cases are whole literals", checked, len(cases))
	}
}

// TestAppends: the value is appended to dst, which is kept.
func TestAppends(t *testing.T) {
	if got := string(AppendUnescaped([]byte("x="), []byte(`a\nb`))); got != "x=a\nb" {
		t.Fatalf("got %q", got)
	}
}

func FuzzSameAsGjson(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		if !closes(lit) {
			return
		}
		got := unescape(t, lit)
		if want := gjsonValue(lit); got != want {
			t.Fatalf("%q: got %q, gjson %q", lit, got, want)
		}
	})
}

// oldAppendUnescapedText is AppendUnescapedText as it was, one byte at a
// time: the oracle of plainRun's eight at a time.
func oldAppendUnescapedText(dst, lit []byte) []byte {
	for i := 0; i < len(lit); {
		j := i
		for j < len(lit) && lit[j] != '\\' && lit[j] >= ' ' {
			j++
		}
		dst = append(dst, lit[i:j]...)
		if j == len(lit) || lit[j] != '\\' {
			return dst
		}
		var n int
		if dst, n = AppendEscape(dst, lit[j:]); n == 0 {
			return dst
		}
		i = j + n
	}
	return dst
}

// checkPlainRun: plainRun never passes a backslash or a control character
// and stops at most 8 bytes before the first; the decoding is the old one.
func checkPlainRun(t testing.TB, lit []byte) {
	t.Helper()
	n := plainRun(lit)
	first := -1
	for i, c := range lit {
		if c == '\\' || c < ' ' {
			first = i
			break
		}
	}
	if first < 0 {
		first = len(lit)
	}
	if n%8 != 0 || n > first || first-n >= 8 && n+8 <= len(lit) {
		t.Fatalf("%q: plainRun %d, first backslash or control character at %d", lit, n, first)
	}
	if got, want := AppendUnescapedText(nil, lit), oldAppendUnescapedText(nil, lit); !bytes.Equal(got, want) {
		t.Fatalf("%q: AppendUnescapedText %q, the old one %q", lit, got, want)
	}
}

func TestPlainRun(t *testing.T) {
	for _, c := range cases {
		checkPlainRun(t, []byte(c))
	}
	// Each byte value at each place of a word, after plain bytes.
	for c := 0; c < 256; c++ {
		for at := 0; at < 17; at++ {
			lit := []byte(strings.Repeat("a", at) + string([]byte{byte(c)}) + strings.Repeat("b", 20))
			checkPlainRun(t, lit)
		}
	}
}

func FuzzPlainRun(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, lit []byte) { checkPlainRun(t, lit) })
}

// checkUnescapeInto holds UnescapeInto to AppendUnescaped on lit, written
// into a buffer of lit's length, and at
// every offset of lit in a longer buffer so that its eight-byte steps meet
// escapes at every place.
func checkUnescapeInto(t testing.TB, lit []byte) {
	t.Helper()
	want := string(AppendUnescaped(nil, lit))
	dst := make([]byte, len(lit))
	if got := string(dst[:UnescapeInto(dst, lit)]); got != want {
		t.Fatalf("%q: UnescapeInto %q, AppendUnescaped %q", lit, got, want)
	}
	for max := 1; max <= 24; max++ { // in pieces, as the stream reader reads
		var got []byte
		buf := make([]byte, max+11)
		for rest := lit; len(rest) > 0; {
			w, r := UnescapeSome(buf, rest, max)
			if r == 0 || r < min(max, len(rest)) {
				t.Fatalf("%q: UnescapeSome(max %d) read %d of %d", rest, max, r, len(rest))
			}
			got, rest = append(got, buf[:w]...), rest[r:]
		}
		if string(got) != want {
			t.Fatalf("%q: UnescapeSome in pieces of %d %q, AppendUnescaped %q", lit, max, got, want)
		}
	}
	for pad := 1; pad < 8; pad++ {
		lit2 := append(bytes.Repeat([]byte("x"), pad), lit...)
		want2 := strings.Repeat("x", pad) + want
		dst2 := make([]byte, len(lit2))
		if got := string(dst2[:UnescapeInto(dst2, lit2)]); got != want2 {
			t.Fatalf("%q: UnescapeInto %q, want %q", lit2, got, want2)
		}
	}
}

// TestUnescapeInto: escapes of every kind at every place of a word, dense
// and sparse, long and short.
func TestUnescapeInto(t *testing.T) {
	parts := []string{`\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\u4e2d`, `a`, `bc`, `defghij`, "\xc3\xa9", `klmnopqrstu`}
	for _, c := range cases {
		if lit := []byte(c); closes(lit) && utf8.Valid(lit) && validEscapes(lit) && !bytes.ContainsFunc(lit, func(r rune) bool { return r < ' ' }) {
			checkUnescapeInto(t, lit)
		}
	}
	seed := uint64(1)
	for range 20000 {
		var b strings.Builder
		n := int(seed % 24)
		for range n {
			seed = seed*6364136223846793005 + 1442695040888963407
			b.WriteString(parts[(seed>>33)%uint64(len(parts))])
		}
		seed = seed*6364136223846793005 + 1442695040888963407
		checkUnescapeInto(t, []byte(b.String()))
	}
}
