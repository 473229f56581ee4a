package classify

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"mcptrace/internal/jsonstr"
)

// The prefilter as it was before the line was scanned eight bytes at a
// time: oldPlainLine (a rolling hash of every four bytes) and
// onePassPlainLiteral (plainLine run as the literal is unescaped, in one
// pass). They are the oracles of plainLine and plainLiteral
// (TestPlainLineSameAsOld, FuzzPlainLineSameAsOld).

// headHash hashes the first four bytes of s (len(s) >= 4) to 16 bits.
func headHash(s string) uint32 {
	return (uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24) * 0x9E3779B1 >> 16
}

// oldNeedleHeads marks the headHash of each needle's first four bytes.
var oldNeedleHeads = func() (heads [1 << 16 / 64]uint64) {
	for _, n := range plainNeedles {
		h := headHash(n)
		heads[h/64] |= 1 << (h % 64)
	}
	return heads
}()

// needleIndex holds plainNeedles by first byte.
var needleIndex = func() (ix [256][]string) {
	for _, n := range plainNeedles {
		ix[n[0]] = append(ix[n[0]], n)
	}
	return ix
}()

// needleAt: s starts with a needle, ASCII letters in any case.
func needleAt(s string) bool {
	for _, n := range needleIndex[lowerTab[s[0]]] {
		if len(s) >= len(n) && equalLower(s[:len(n)], n) {
			return true
		}
	}
	return false
}

// oldPlainLine: no first-line rule can fire on line (it holds no needle and
// no error status).
func oldPlainLine(line string) bool {
	var w uint32 // the last four bytes read, lower-cased, the first lowest
	for i := 0; i < len(line); i++ {
		c := lowerTab[line[i]]
		if (c == '4' || c == '5') && statusLike(line, i) {
			return false
		}
		w = w>>8 | uint32(c)<<24
		if i < 3 {
			continue
		}
		if h := w * 0x9E3779B1 >> 16; oldNeedleHeads[h/64]&(1<<(h%64)) != 0 && needleAt(line[i-3:]) {
			return false
		}
	}
	return true
}

// onePassPlainLiteral: the text of the JSON string literal raw (a first text
// block, at most hiddenEnvelope long) is one judgeText finds nothing in,
// because its first line is plain (plainLine), read from raw as it is
// unescaped, without unescaping the rest. It is false (the text must be
// judged) for whatever it does not follow exactly: a \u escape, a control
// character, a text that starts as a JSON object or markup or with a byte that is
// not ASCII, a literal that is not whole. Other bytes are copied as they
// are, as jsonstr.AppendUnescapedText copies them.
//
// It is plainLine run as the line is unescaped, in the same pass: the
// rolling four bytes are hashed as each byte comes, and the places where
// a needle may start (the hash is in needleHeads) or a status may stand
// (a 4 or a 5) are kept, to be looked at once the line is whole (both
// read bytes after the place).
func onePassPlainLiteral(raw string) bool {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return false
	}
	// buf is judgeText's head: hiddenHead bytes from the first that
	// strings.TrimLeft keeps (stripDecoration keeps a printable ASCII
	// start, except "**" and "__", which move the head on).
	var buf [hiddenHead]byte
	var spots [64]int16 // the places to look at (a needle's start, a digit)
	nspots := 0
	var w uint32 // the last four bytes, lower-cased, the first lowest
	k, started := 0, false
	i := 1
	// The text's start: white space skipped, then the first byte.
	for ; i < n-1 && !started; i++ {
		c := raw[i]
		if c == '\\' {
			if i+2 > n-1 {
				return false
			}
			switch raw[i+1] {
			case 'n', 'r', 't':
				i++
				continue
			case '"', '\\', '/':
				c = raw[i+1]
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			default:
				return false
			}
			i++
		} else if c < ' ' || c == '"' || c >= utf8.RuneSelf {
			return false
		} else if c == ' ' {
			continue
		}
		if c == '{' || c == '<' {
			return false // judged as JSON or markup
		}
		// A text starting with '[' is a list of results when it is
		// valid JSON (not judged) and judged by its first line when it
		// is not: either way a plain first line is no failure.
		started = true
		buf[0] = c
		k = 1
		lc := lowerTab[c]
		w = uint32(lc) << 24
		if lc == '4' || lc == '5' {
			spots[0] = 0
			nspots = 1
		}
	}
	if !started {
		return false
	}
	for i < n-1 && k < len(buf) {
		c := raw[i]
		if c == '\\' {
			if i+2 > n-1 {
				return false
			}
			var ok bool
			if c, ok = jsonstr.ShortEscape(raw[i+1]); !ok {
				return false
			}
			i += 2
		} else if c < ' ' || c == '"' {
			return false // a control character or a quote ends the text (gjson)
		} else {
			i++
		}
		if c == '\n' {
			break
		}
		buf[k] = c
		lc := lowerTab[c]
		w = w>>8 | uint32(lc)<<24
		spot := -1
		if lc == '4' || lc == '5' {
			spot = k
		} else if k >= 3 {
			if h := w * 0x9E3779B1 >> 16; oldNeedleHeads[h/64]&(1<<(h%64)) != 0 {
				spot = k - 3
			}
		}
		k++
		if spot >= 0 {
			if nspots == len(spots) {
				return onePassPlainLineTail(buf[:k], raw[i:])
			}
			spots[nspots] = int16(spot)
			nspots++
		}
	}
	if k >= 2 && (buf[0] == '*' && buf[1] == '*' || buf[0] == '_' && buf[1] == '_') {
		return false
	}
	for k > 0 && (buf[k-1] == ' ' || buf[k-1] == '\t' || buf[k-1] == '\r') {
		k--
	}
	line := unsafe.String(&buf[0], k)
	for _, p := range spots[:nspots] {
		if p >= int16(k) {
			continue // past the trimmed line (places are not in order)
		}
		if c := line[p]; c == '4' || c == '5' {
			if statusLike(line, int(p)) {
				return false
			}
			// A digit ends no needle head: a needle may still start
			// three bytes before it.
			if p >= 3 && onePassNeedleAtHash(line, int(p)) {
				return false
			}
			continue
		}
		if int(p)+3 < k && needleAt(line[p:]) {
			return false
		}
	}
	return true
}

// onePassNeedleAtHash: the four bytes of line ending at i hash into needleHeads
// and a needle starts there (plainLine's test at i).
func onePassNeedleAtHash(line string, i int) bool {
	w := uint32(lowerTab[line[i-3]]) | uint32(lowerTab[line[i-2]])<<8 | uint32(lowerTab[line[i-1]])<<16 | uint32(lowerTab[line[i]])<<24
	h := w * 0x9E3779B1 >> 16
	return oldNeedleHeads[h/64]&(1<<(h%64)) != 0 && needleAt(line[i-3:])
}

// onePassPlainLineTail finishes onePassPlainLiteral the slow way when its line has more
// places to look at than it keeps: the old copy goes on (rest is raw from
// where the copy stopped), then plainLine.
func onePassPlainLineTail(head []byte, rest string) bool {
	var buf [hiddenHead]byte
	k := copy(buf[:], head)
	for i := 0; i < len(rest)-1 && k < len(buf); {
		c := rest[i]
		if c == '\\' {
			if i+2 > len(rest)-1 {
				return false
			}
			var ok bool
			if c, ok = jsonstr.ShortEscape(rest[i+1]); !ok {
				return false
			}
			i += 2
		} else if c < ' ' || c == '"' {
			return false
		} else {
			i++
		}
		if c == '\n' {
			break
		}
		buf[k] = c
		k++
	}
	if k >= 2 && (buf[0] == '*' && buf[1] == '*' || buf[0] == '_' && buf[1] == '_') {
		return false
	}
	for k > 0 && (buf[k-1] == ' ' || buf[k-1] == '\t' || buf[k-1] == '\r') {
		k--
	}
	return oldPlainLine(unsafe.String(&buf[0], k))
}

// plainLineCases are lines around what the eight-byte scan has to get
// right: needles at every place and of every length, in both cases and cut
// by the line's end, statuses at block edges, bytes that fold like letters
// ('[' and '{', ' ' and NUL), escapes in literals.
func plainLineCases() []string {
	var out []string
	fills := []string{"", "a", "ab", "abc", "abcd", "x y z", "4471 ", "Row 17: shipment ", "{", "\x00"}
	for _, n := range plainNeedles {
		for _, needle := range []string{n, strings.ToUpper(n), n[:len(n)-1], strings.ReplaceAll(n, "[", "{"),
			strings.ReplaceAll(n, " ", "\x00")} {
			for _, fill := range fills {
				for pad := 0; pad < 12; pad++ {
					out = append(out, fill+strings.Repeat(".", pad)+needle, strings.Repeat(" ", pad)+needle+fill)
				}
			}
		}
	}
	for _, st := range []string{"404", "503", "4040", "5", "45", "450", "599", "499", "4.04", "x400x", "1500"} {
		for pad := 0; pad < 20; pad++ {
			out = append(out, strings.Repeat("a", pad)+st, strings.Repeat("7", pad)+st, strings.Repeat("a ", pad)+st+" b")
		}
	}
	return out
}

// TestPlainLineSameAsOld: plainLine and plainLiteral say what the versions
// they replaced say, on lines and on literals made of them (as
// encoding/json writes them, as written, with an escape before, after or
// inside, and long).
func TestPlainLineSameAsOld(t *testing.T) {
	for _, s := range plainLineCases() {
		checkPlainLineSame(t, s)
	}
}

func checkPlainLineSame(t *testing.T, s string) {
	t.Helper()
	if got, want := plainLine(s), oldPlainLine(s); got != want {
		t.Fatalf("plainLine(%q) = %v, the one it replaced says %v", s, got, want)
	}
	lit, _ := json.Marshal(s)
	for _, raw := range []string{string(lit), `"` + s + `"`, `"\"` + s + `"`, `"` + s + `\"x"`, `" \n ` + s + `\nError: x"`,
		`"` + s + `\/` + s + `\t` + s + `"`, `"` + strings.Repeat("a", 500) + s + `"`, `"` + strings.Repeat("a ", 300) + `\"` + s + `"`,
		`"` + s + `\u0041"`, `"` + s + `\` + `"`} {
		if got, want := plainLiteral(raw), onePassPlainLiteral(raw); got != want {
			t.Fatalf("plainLiteral(%q) = %v, the one it replaced says %v", raw, got, want)
		}
	}
}

// FuzzPlainLineSameAsOld: on any line plainLine and plainLiteral say what
// the versions they replaced say.
func FuzzPlainLineSameAsOld(f *testing.F) {
	for _, s := range []string{"ok", "Error: x", "x 503 y", "Found 3 \"x\": a", "a gone b", "[ERR] x", "x{err",
		strings.Repeat("4471 ", 30) + "Error: x", strings.Repeat("timeo ", 20) + "503", "Row 17: shipment 4471 left on time"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkPlainLineSame(t, s) })
}

// TestKindPhrasesAtEveryPlace: textKind finds every phrase and need of
// kindPatterns (whose places it looks up at every other byte) at every
// place of a text, in both cases, after and before other phrases and cut
// by the text's end, as its oracle does.
func TestKindPhrasesAtEveryPlace(t *testing.T) {
	for _, p := range kindPhrases {
		for _, ph := range []string{p.text, strings.ToUpper(p.text), p.text[:len(p.text)-1], p.text[1:]} {
			for pad := 0; pad < 12; pad++ {
				for _, s := range []string{strings.Repeat(".", pad) + ph, strings.Repeat("a ", pad) + ph + " timeout",
					"unknown tool" + strings.Repeat(" ", pad) + ph, strings.Repeat("x", pad) + ph + strings.Repeat("y", 9),
					"status code: 503 " + strings.Repeat("z", pad) + ph, "request " + strings.Repeat("q", pad) + ph + " cancelled"} {
					checkKind(t, "places", s)
				}
			}
		}
	}
}

// TestRequiredOf: requiredOf is requiredFields' lookup, and the switches
// that replace maps on the hot path say what the maps say.
func TestRequiredOf(t *testing.T) {
	methods := []string{"", "tools/call", "x", "initialize ", "Tools/list"}
	for m := range requiredFields {
		methods = append(methods, m)
	}
	for _, m := range methods {
		got, want := requiredOf(m), requiredFields[m]
		if len(got) != len(want) || len(got) > 0 && &got[0] != &want[0] {
			t.Errorf("requiredOf(%q) = %v, requiredFields says %v", m, got, want)
		}
		if isMRTR(m) != mrtrMethods[m] {
			t.Errorf("isMRTR(%q) = %v", m, isMRTR(m))
		}
	}
	for m := range mrtrMethods {
		if !isMRTR(m) {
			t.Errorf("isMRTR(%q) = false", m)
		}
	}
	for c := int64(-33000); c < 1000; c++ {
		if isCallerCode(c) != callerCodes[c] {
			t.Errorf("isCallerCode(%d) = %v", c, isCallerCode(c))
		}
	}
	for st := 0; st < 1000; st++ {
		if isHTTPOwnStatus(st) != httpOwnStatus[st] {
			t.Errorf("isHTTPOwnStatus(%d) = %v", st, isHTTPOwnStatus(st))
		}
	}
}

// TestIndexSpecial: indexSpecial against a byte-by-byte look, for every
// length up to 40, every special byte at every place, after bytes that
// border them.
func TestIndexSpecial(t *testing.T) {
	naive := func(s string) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < ' ' || c == '"' || c == '\\' {
				return i
			}
		}
		return -1
	}
	for n := 0; n <= 40; n++ {
		for _, fill := range []byte{'a', ' ', '!', '#', '[', ']', '\x7f', '\x80', '\xff', '!' + 0x80} {
			base := strings.Repeat(string([]byte{fill}), n)
			if got, want := indexSpecial(base), naive(base); got != want {
				t.Fatalf("indexSpecial(%q) = %d, want %d", base, got, want)
			}
			for at := 0; at < n; at++ {
				for _, c := range []byte{0, 1, '\n', 0x1f, '"', '\\'} {
					s := base[:at] + string([]byte{c}) + base[at+1:]
					for _, x := range []string{s, s[:at] + string([]byte{c}) + strings.Repeat("\"", n-at)} {
						if got, want := indexSpecial(x), naive(x); got != want {
							t.Fatalf("indexSpecial(%q) = %d, want %d", x, got, want)
						}
					}
				}
			}
		}
	}
}

// TestHasControl: hasControl against a byte-by-byte look.
func TestHasControl(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for _, fill := range []byte{'a', ' ', '!', '\x7f', '\x80', '\xff', '\xa0'} {
			base := strings.Repeat(string([]byte{fill}), n)
			if hasControl(base) {
				t.Fatalf("hasControl(%q) = true", base)
			}
			for at := 0; at < n; at++ {
				for _, c := range []byte{0, 1, '\n', 0x1f} {
					if s := base[:at] + string([]byte{c}) + base[at+1:]; !hasControl(s) {
						t.Fatalf("hasControl(%q) = false", s)
					}
				}
			}
		}
	}
}
