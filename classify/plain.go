package classify

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"mcptrace/internal/jsonstr"
)

// A prefilter for the first-line rules of judgeText: one pass over a
// first line that proves none of them can fire, so that the line of a
// plain success ("Found 12 documents …") is neither lower-cased nor run
// through the rules one by one.
//
// Every first-line rule (start, httpInside, phrases, invalidStart, and
// start and phrases after "<program>: ") fires only on a line whose
// lower-cased form holds one of plainNeedles, or a number of three digits
// starting with 4 or 5 (each HTTP status rule needs an error status). A line with
// neither is plain. The needles are the strings the rules look for, or a
// part every one of them shares ("error" stands for "Error:", "Database
// error:", "KeyError:", "An error occurred" and "1 validation error
// for"); the differential tests hold the prefilter to the rules.

// plainNeedles, lower case, each at least four bytes.
var plainNeedles = func() []string {
	n := []string{
		// start: tracebacks ("Traceback (most recent call last)",
		// "panic: ", "fatal error: ", "goroutine 1 [running]",
		// "thread 'main' panicked at").
		"traceback", "panic", "fatal", "goroutine",
		// errorPrefix: every "error" rule, "[error]", "[err]",
		// "[fatal]", "npm err!", "something went wrong", "sorry …"
		// (which also needs error, failed, unable, could), "Msg 208,
		// Level 16"; anError and wordsThenError need "error".
		"error", "[err", "npm err", "something went wrong", ", level ",
		// exception: its prefixes, and a name ending in Error,
		// Exception or Timeout.
		"exception", "unhandled", "uncaught", "timeout",
		// failedStarts and failedAfterSubject.
		"failed", "failure:", "unable", "could", "cannot", "can't", "can not",
	}
	n = append(n, invalidStarts...)
	// httpStartRule's reason phrases (its other rules need a status).
	n = append(n, httpReasons...)
	for _, class := range hiddenPhrases {
		n = append(n, class.phrases...)
	}
	return n
}()

// lowerTab lower-cases an ASCII letter and keeps every other byte, as
// lowerASCII does.
var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// needleIndex holds plainNeedles by first byte; needleHeads marks the
// headHash of each one's first four bytes.
var needleIndex, needleHeads = func() (ix [256][]string, heads [1 << 16 / 64]uint64) {
	for _, n := range plainNeedles {
		if len(n) < 4 || lowerASCII(n) != n {
			panic("classify: prefilter needle not lower case or shorter than 4 bytes: " + n)
		}
		ix[n[0]] = append(ix[n[0]], n)
		h := headHash(n)
		heads[h/64] |= 1 << (h % 64)
	}
	return ix, heads
}()

// plainLine: no first-line rule can fire on line (it holds no needle and
// no error status).
func plainLine(line string) bool {
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
		if h := w * 0x9E3779B1 >> 16; needleHeads[h/64]&(1<<(h%64)) != 0 && needleAt(line[i-3:]) {
			return false
		}
	}
	return true
}

// statusLike: three digits at line[i:], not inside a longer number (what
// errorStatusAt and its callers need of a status; line[i] is a 4 or 5).
func statusLike(line string, i int) bool {
	return i+2 < len(line) && isDigit(line[i+1]) && isDigit(line[i+2]) &&
		(i == 0 || !isDigit(line[i-1])) && (i+3 == len(line) || !isDigit(line[i+3]))
}

// needleAt: s starts with a needle, ASCII letters in any case.
func needleAt(s string) bool {
	for _, n := range needleIndex[lowerTab[s[0]]] {
		if len(s) >= len(n) && equalLower(s[:len(n)], n) {
			return true
		}
	}
	return false
}

// equalLower: s lower-cased (ASCII) is low.
func equalLower(s, low string) bool {
	for i := 0; i < len(low); i++ {
		if lowerTab[s[i]] != low[i] {
			return false
		}
	}
	return true
}

// plainLiteral: the text of the JSON string literal raw (a first text
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
func plainLiteral(raw string) bool {
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
			if h := w * 0x9E3779B1 >> 16; needleHeads[h/64]&(1<<(h%64)) != 0 {
				spot = k - 3
			}
		}
		k++
		if spot >= 0 {
			if nspots == len(spots) {
				return plainLineTail(buf[:k], raw[i:])
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
			if p >= 3 && needleAtHash(line, int(p)) {
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

// needleAtHash: the four bytes of line ending at i hash into needleHeads
// and a needle starts there (plainLine's test at i).
func needleAtHash(line string, i int) bool {
	w := uint32(lowerTab[line[i-3]]) | uint32(lowerTab[line[i-2]])<<8 | uint32(lowerTab[line[i-1]])<<16 | uint32(lowerTab[line[i]])<<24
	h := w * 0x9E3779B1 >> 16
	return needleHeads[h/64]&(1<<(h%64)) != 0 && needleAt(line[i-3:])
}

// plainLineTail finishes plainLiteral the slow way when its line has more
// places to look at than it keeps: the old copy goes on (rest is raw from
// where the copy stopped), then plainLine.
func plainLineTail(head []byte, rest string) bool {
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
	return plainLine(unsafe.String(&buf[0], k))
}

// longHead is how much of a long text's value judgeText gets when the
// rest cannot change its verdict (unescapeHead).
const longHead = 2 * hiddenHead

// unescapeHead is, for a long literal (more than 2*longHead bytes, at
// most hiddenEnvelope), the first longHead bytes or so of its value, when
// judgeText(head, true) is judgeText(value, false): the value does not
// start as JSON or markup, is longer than hiddenShort (no phrase rules)
// after what judgeText strips, and is not one line (a newline with more
// than space after it is in the head). Otherwise ok is false and the
// caller unescapes the whole literal. A true result must be handed back
// with releaseScratch.
func unescapeHead(raw string) (head string, bp *[]byte, ok bool) {
	n := len(raw)
	if n <= 2*longHead || n > hiddenEnvelope || raw[0] != '"' || raw[n-1] != '"' {
		return "", nil, false
	}
	bp = scratchPool.Get().(*[]byte)
	out, more := appendUnescapedHead((*bp)[:0], unsafe.Slice(unsafe.StringData(raw[1:n-1]), n-2), longHead)
	*bp = out
	if !more || len(out) == 0 {
		scratchPool.Put(bp)
		return "", nil, false
	}
	head = unsafe.String(&out[0], len(out))
	t := strings.TrimLeft(head, " \t\r\n\ufeff")
	if t == "" || t[0] == '{' || t[0] == '[' || t[0] == '<' {
		scratchPool.Put(bp)
		return "", nil, false
	}
	t = stripDecoration(t)
	nl := strings.IndexByte(t, '\n')
	if len(t) <= hiddenShort+utf8.UTFMax || nl < 0 || strings.TrimRight(t[nl:], " \t\r\n") == "" {
		scratchPool.Put(bp)
		return "", nil, false
	}
	return head, bp, true
}

// appendUnescapedHead is jsonstr.AppendUnescapedText(dst, lit) stopped
// once limit bytes are appended, between two escapes or plain bytes, so
// that what it appends is a prefix of the value; more: it stopped there,
// before the value's end. An unescaped quote stops it with more false.
func appendUnescapedHead(dst, lit []byte, limit int) (out []byte, more bool) {
	start := len(dst)
	for i := 0; i < len(lit); {
		if len(dst)-start >= limit {
			return dst, true
		}
		end := min(len(lit), i+limit-(len(dst)-start))
		j := i
		for j < end && lit[j] != '\\' && lit[j] >= ' ' && lit[j] != '"' {
			j++
		}
		dst = append(dst, lit[i:j]...)
		if j == len(lit) {
			return dst, false
		}
		if j == end && lit[j] != '\\' && lit[j] >= ' ' && lit[j] != '"' {
			i = j // the limit, inside plain bytes
			continue
		}
		if lit[j] != '\\' {
			// A control character ends the value; so does a quote for
			// gjson (the literal is not whole): not followed here.
			return dst, false
		}
		var n int
		if dst, n = jsonstr.AppendEscape(dst, lit[j:]); n == 0 {
			return dst, false
		}
		i = j + n
	}
	return dst, false
}
