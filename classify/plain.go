package classify

import (
	"bytes"
	"encoding/binary"
	"math/bits"
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

// plainNeedles, lower case, each at least five bytes.
var plainNeedles = func() []string {
	n := []string{
		// start: tracebacks ("Traceback (most recent call last)",
		// "panic: ", "fatal error: ", "goroutine 1 [running]",
		// "thread 'main' panicked at").
		"traceback", "panic", "fatal", "goroutine",
		// errorPrefix: every "error" rule, "[error]" (which holds
		// "error"), "[err]", "[fatal]" (which holds "fatal"), "npm
		// err!", "something went wrong", "sorry …" (which also needs
		// error, failed, unable, could), "Msg 208, Level 16"; anError
		// and wordsThenError need "error".
		"error", "[err]", "npm err", "something went wrong", ", level ",
		// exception: its prefixes, and a name ending in Error,
		// Exception or Timeout.
		"exception", "unhandled", "uncaught", "timeout",
		// failedStarts and failedAfterSubject.
		"failed", "failure:", "unable", "could", "cannot", "can't", "can not",
	}
	n = append(n, invalidStarts...)
	// httpStartRule's reason phrases (its other rules need a status),
	// but "gone": httpStartRule passes it alone, and reasonAt reads it
	// only after a status. So every needle is at least five bytes long,
	// and needleGrams marks no place for a phrase that starts after it
	// (gramAfter: for a four-byte phrase, 256 marks each, most of them
	// false hits on plain texts).
	for _, r := range httpReasons {
		if r != "gone" {
			n = append(n, r)
		}
	}
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

// needleGrams finds where needles may start in a line, ASCII letters in
// any case.
var needleGrams = func() *gramIndex {
	for _, n := range plainNeedles {
		if len(n) < 5 || lowerASCII(n) != n {
			panic("classify: prefilter needle not lower case or shorter than 5 bytes: " + n)
		}
	}
	return newGramIndex(plainNeedles, true)
}()

// plainLine: no first-line rule can fire on line (it holds no needle and
// no error status). It is needleGrams.scan with the look for a status (a
// 4 or a 5 that is statusLike) in the same pass.
func plainLine(line string) bool {
	b := unsafe.Slice(unsafe.StringData(line), len(line))
	g := needleGrams
	n := len(b)
	i := 0
	for ; i+10 <= n; i += 8 {
		v0 := binary.LittleEndian.Uint64(b[i:])
		// A '4' or a '5' (0x34, 0x35) is a zero byte once xored and its
		// lowest bit cleared.
		if zeroByte((v0^0x3434343434343434)&^lowBits) != 0 && statusIn(line, i, i+8) {
			return false
		}
		f0 := v0 & foldMask
		f2 := binary.LittleEndian.Uint64(b[i+2:]) & foldMask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 != 0 && (t0 != 0 && needleNear(line, i, t0) || t1 != 0 && needleNear(line, i+2, t1) ||
			t2 != 0 && needleNear(line, i+4, t2) || t3 != 0 && needleNear(line, i+6, t3)) {
			return false
		}
	}
	if statusIn(line, i, n) {
		return false
	}
	if i < n && n >= 10 {
		// The even places left, read as the last block: ten bytes from
		// an even place (places read again give the same answer).
		i = (n - 10) &^ 1
		f0 := binary.LittleEndian.Uint64(b[i:]) & foldMask
		f2 := binary.LittleEndian.Uint64(b[i+2:]) & foldMask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 != 0 && (t0 != 0 && needleNear(line, i, t0) || t1 != 0 && needleNear(line, i+2, t1) ||
			t2 != 0 && needleNear(line, i+4, t2) || t3 != 0 && needleNear(line, i+6, t3)) {
			return false
		}
		return true
	}
	for ; i+4 <= n; i += 2 {
		if t := g.marks(binary.LittleEndian.Uint32(b[i:]) & foldMask32); t != 0 && needleNear(line, i, t) {
			return false
		}
	}
	return true
}

// needleNear: a needle starts at p-1, p or p+1 (ASCII letters in any
// case), where the marks t of the even place p point to.
func needleNear(line string, p int, t uint8) bool {
	return t&gramBefore != 0 && needleStarts(line, p-1) || t&gramHead != 0 && needleStarts(line, p) ||
		t&gramAfter != 0 && needleStarts(line, p+1)
}

// needleStarts: a needle starts at line[i:] (ASCII letters in any case).
// The needles of a head share their first four bytes (folded), so each is
// told apart by its fifth first (every needle has one).
func needleStarts(line string, i int) bool {
	for _, k := range needleGrams.heads(line, i) {
		if n := plainNeedles[k]; len(line)-i >= len(n) && lowerTab[line[i+4]] == n[4] && equalLowerWords(line[i:i+len(n)], n) {
			return true
		}
	}
	return false
}

// statusIn: a status stands in line at a place from i to j (statusLike
// at a 4 or a 5).
func statusIn(line string, i, j int) bool {
	for ; i < j; i++ {
		if c := line[i]; (c == '4' || c == '5') && statusLike(line, i) {
			return true
		}
	}
	return false
}

// statusLike: three digits at line[i:], not inside a longer number (what
// errorStatusAt and its callers need of a status; line[i] is a 4 or 5).
func statusLike(line string, i int) bool {
	return i+2 < len(line) && isDigit(line[i+1]) && isDigit(line[i+2]) &&
		(i == 0 || !isDigit(line[i-1])) && (i+3 == len(line) || !isDigit(line[i+3]))
}

// equalLower: s lower-cased (ASCII) is low (s is at least as long as
// low).
func equalLower(s, low string) bool {
	for i := 0; i < len(low); i++ {
		if lowerTab[s[i]] != low[i] {
			return false
		}
	}
	return true
}

// equalLowerWords is equalLower eight bytes at a time (lowerWord), the
// last eight read where low ends, for a low of eight bytes or more (a
// phrase a gram index found the head of).
func equalLowerWords(s, low string) bool {
	n := len(low)
	if n < 8 {
		return equalLower(s, low)
	}
	a := unsafe.Slice(unsafe.StringData(s), n)
	b := unsafe.Slice(unsafe.StringData(low), n)
	for i := 0; ; i += 8 {
		i = min(i, n-8)
		if lowerWord(binary.LittleEndian.Uint64(a[i:])) != binary.LittleEndian.Uint64(b[i:]) {
			return false
		}
		if i == n-8 {
			return true
		}
	}
}

// lowerWord is the eight bytes of v with each ASCII capital letter
// lower-cased (as lowerTab does it): a byte from 'A' to 'Z' is one whose
// low seven bits reach 0x80 with 0x3F added and not with 0x25, and whose
// high bit is clear; its bit 0x20 is set.
func lowerWord(v uint64) uint64 {
	h := v & 0x7F7F7F7F7F7F7F7F
	up := (h + 0x3F3F3F3F3F3F3F3F) &^ (h + 0x2525252525252525) &^ v & highBits
	return v | up>>2
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
// The first line is judged where it stands in raw, escapes and all: no
// needle holds a backslash, nor a byte an escape stands for, but the quote
// of "validating \"" (looked for at each \" instead), and no escape stands
// for a digit, so a needle or a status of the text is one of raw. The
// converse does not hold (raw's `\timeout` is a tab and "imeout"), so
// when raw's line is not plain and has escapes, it is unescaped and judged
// again (plainEscaped).
func plainLiteral(raw string) bool {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return false
	}
	end := n - 1 // the closing quote
	// The text's start: white space skipped (judgeText's TrimLeft; a
	// byte-order mark is not ASCII, so not followed here).
	i := 1
	for ; i < end; i++ {
		if c := raw[i]; c == '\\' && i+2 <= end && (raw[i+1] == 'n' || raw[i+1] == 'r' || raw[i+1] == 't') {
			i++
		} else if c != ' ' {
			break
		}
	}
	if i == end {
		return false
	}
	switch c := raw[i]; {
	case c == '\\':
		return plainEscaped(raw, i)
	case c < ' ' || c == '"' || c >= utf8.RuneSelf:
		return false
	case c == '{' || c == '<':
		return false // judged as JSON or markup
	}
	// A text starting with '[' is a list of results when it is valid
	// JSON (not judged) and judged by its first line when it is not:
	// either way a plain first line is no failure.
	if end-i <= hiddenHead && plainWhole(raw[i:end]) {
		return true // the common case, read in one pass
	}
	//
	// The line's end in raw: a \n, the closing quote, or hiddenHead
	// bytes of text.
	j, k := i, 0 // raw[i:j] is read, k bytes of text
	escaped := false
	for k < hiddenHead {
		lim := min(end, j+hiddenHead-k)
		s := indexSpecial(raw[j:lim])
		if s < 0 {
			k += lim - j
			j = lim
			break
		}
		k += s
		j += s
		if raw[j] != '\\' || j+2 > end {
			return false // a control character or a quote ends the text (gjson), or a cut escape
		}
		e := raw[j+1]
		if e == 'n' {
			break
		}
		if _, ok := jsonstr.ShortEscape(e); !ok {
			return false
		}
		if e == '"' && j-i >= len(quotedNeedle) && equalLower(raw[j-len(quotedNeedle):j], quotedNeedle) {
			return plainEscaped(raw, i)
		}
		escaped = true
		k++
		j += 2
	}
	if plainHead(raw[i:j]) {
		return true
	}
	return escaped && plainEscaped(raw, i)
}

// plainWhole: raw's line is plain, told from the whole rest of the
// literal in one pass. s is the inside of a literal from its text's first
// byte (neither white space nor a backslash), of at most hiddenHead bytes,
// so that raw's first line is a prefix of it: a line that ends at a \n
// escape (a backslash, in no needle nor status) or at s's end, trimmed on
// the right of spaces only (raw holds no other white space). A needle or a
// status of that line is one of s (a status at the line's end is followed
// in s by a space or a backslash, as by the end, none a digit), so when s
// holds none (plainLine's look, made in the same pass as the look at its
// escapes) and every escape of s is one plainLiteral follows, and none is
// the quote of "validating \"", plainLiteral is true. It is false when it
// cannot tell, and plainLiteral reads the text escape by escape: an escape
// it does not follow, a control character or a quote (the text ends
// there), a decoration, a needle or a status anywhere in s, a short s.
func plainWhole(s string) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	n := len(b)
	if n < 10 || (b[0] == '*' || b[0] == '_') && b[1] == b[0] {
		return false
	}
	g := needleGrams
	next := 0 // bytes before next are read (an escape's letter is)
	i := 0
	for ; i+10 <= n; i += 8 {
		w := b[i : i+10 : i+10]
		v0 := binary.LittleEndian.Uint64(w)
		// One look for every byte plainBlock reads again: a quote or a
		// control character is below 0x21 once its bit 1 is flipped
		// (the quote, 0x22, becomes 0x20), a backslash is zero once
		// xored, and so are a 4 and a 5 once xored and their lowest bit
		// cleared. Each such byte sets its high bit in the mask (a few
		// others may too).
		x, y, z := v0^0x0202020202020202, v0^0x5C5C5C5C5C5C5C5C, (v0^0x3434343434343434)&^lowBits
		if m := ((x-0x2121212121212121)&^x | (y-lowBits)&^y | (z-lowBits)&^z) & highBits; m != 0 && !plainBlock(s, i, m, &next) {
			return false
		}
		f0 := v0 & foldMask
		f2 := binary.LittleEndian.Uint64(w[2:]) & foldMask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 != 0 && (t0 != 0 && needleNear(s, i, t0) || t1 != 0 && needleNear(s, i+2, t1) ||
			t2 != 0 && needleNear(s, i+4, t2) || t3 != 0 && needleNear(s, i+6, t3)) {
			return false
		}
	}
	// The bytes left (at most nine), a word at a time, the last one read
	// where it ends with s: its bytes before j, read already, are left
	// out of its mask (a byte above them it marks is read again).
	for j := i; j < n; {
		k := min(j, n-8)
		v := binary.LittleEndian.Uint64(b[k:])
		if m := (zeroByte(v^0x2222222222222222) | zeroByte(v^0x5C5C5C5C5C5C5C5C) | (v-0x2020202020202020)&^v&highBits) >>
			(8 * (j - k)) << (8 * (j - k)); m != 0 && !escapesFollowed(s, k, m, &next) {
			return false
		}
		j = k + 8
	}
	// The bytes left (at most nine: the last eight and the one before),
	// when they hold no 4 and no 5, hold no status.
	if v := binary.LittleEndian.Uint64(b[n-8:]); (zeroByte((v^0x3434343434343434)&^lowBits) != 0 ||
		i < n-8 && (b[i] == '4' || b[i] == '5')) && statusIn(s, i, n) {
		return false
	}
	if i < n {
		// The even places left, read as the last block (as plainLine
		// reads them).
		i = (n - 10) &^ 1
		f0 := binary.LittleEndian.Uint64(b[i:]) & foldMask
		f2 := binary.LittleEndian.Uint64(b[i+2:]) & foldMask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 != 0 && (t0 != 0 && needleNear(s, i, t0) || t1 != 0 && needleNear(s, i+2, t1) ||
			t2 != 0 && needleNear(s, i+4, t2) || t3 != 0 && needleNear(s, i+6, t3)) {
			return false
		}
	}
	return true
}

// plainBlock: the bytes of s from i to i+8 that m marks (the high bit of
// each byte that may be a backslash, a quote, a control character, a 4 or
// a 5; a few others may be marked too) hold no quote and no control
// character, every backslash among them that is not an escape's letter
// (bytes before *next are read) starts an escape plainWhole follows
// (escapeFollowed, after which *next is moved), and no status starts
// among them. A 4 or a 5 is never the letter of an escape it follows.
func plainBlock(s string, i int, m uint64, next *int) bool {
	nx := *next
	for ; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros64(m)/8
		switch c := s[j]; {
		case c == '4' || c == '5':
			if statusLike(s, j) {
				return false
			}
		case j < nx:
		case c == '\\':
			if j+1 == len(s) || !escapeFollowed(s, j) {
				return false
			}
			nx = j + 2
		case c == '"' || c < ' ':
			return false
		}
	}
	*next = nx
	return true
}

// escapesFollowed: the bytes of s from i to i+8 that m marks (the high
// bit of each byte that may be a backslash, a quote or a control
// character; a few others may be marked too) hold no quote and no control
// character, and each backslash among them that is not an escape's letter
// (bytes before *next are read) starts an escape plainWhole follows
// (escapeFollowed), after which *next is moved.
func escapesFollowed(s string, i int, m uint64, next *int) bool {
	nx := *next
	for ; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros64(m)/8
		if j < nx {
			continue
		}
		switch c := s[j]; {
		case c == '\\':
			if j+1 == len(s) || !escapeFollowed(s, j) {
				return false
			}
			nx = j + 2
		case c == '"' || c < ' ':
			return false
		}
	}
	*next = nx
	return true
}

// escapeFollowed: the escape at s[j] (a backslash, with a letter after
// it) is one plainLiteral follows as plainWhole reads it: a short escape
// (jsonstr.ShortEscape, by its table jsonstr.ShortEscapes), and no quote after "validating "
// (whose last byte, a space, is looked at first).
func escapeFollowed(s string, j int) bool {
	e := s[j+1]
	return jsonstr.ShortEscapes[e] != 0 && (e != '"' || j < len(quotedNeedle) || s[j-1] != ' ' || !quotedAfter(s, j))
}

// quotedAfter: s[:j] ends with quotedNeedle (ASCII letters in any case).
func quotedAfter(s string, j int) bool {
	return equalLower(s[j-len(quotedNeedle):j], quotedNeedle)
}

// quotedNeedle is the needle "validating \"" without its quote: the one
// needle with a byte that is escaped in a literal (checked by init).
const quotedNeedle = "validating "

func init() {
	for _, n := range plainNeedles {
		if strings.ContainsAny(n, "\\/\b\f\t\r\n") || strings.Contains(n, `"`) && n != quotedNeedle+`"` {
			panic("classify: a needle with a byte a JSON escape stands for: " + n)
		}
	}
}

// plainHead is plainLine of the head line (judgeText's first line of at
// most hiddenHead bytes, from its first byte that is not white space),
// after what judgeLines does to it first: a line that starts with "**"
// or "__" is not followed (stripDecoration moves its start), and white
// space at its end is trimmed.
func plainHead(line string) bool {
	if len(line) >= 2 && (line[0] == '*' && line[1] == '*' || line[0] == '_' && line[1] == '_') {
		return false
	}
	k := len(line)
	for k > 0 && (line[k-1] == ' ' || line[k-1] == '\t' || line[k-1] == '\r') {
		k--
	}
	return plainLine(line[:k])
}

// plainEscaped is plainLiteral of a first line with escapes, from raw[i]
// (the text's first byte, not white space): the line is unescaped into a
// buffer, then judged.
func plainEscaped(raw string, i int) bool {
	end := len(raw) - 1
	var buf [hiddenHead]byte
	k := 0
	for i < end && k < len(buf) {
		// A run of plain bytes, copied at once.
		run := raw[i:min(end, i+len(buf)-k)]
		j := indexSpecial(run)
		if j < 0 {
			j = len(run)
		}
		k += copy(buf[k:], run[:j])
		i += j
		if i == end || k == len(buf) {
			break
		}
		if raw[i] != '\\' {
			return false // a control character or a quote ends the text (gjson)
		}
		if i+2 > end {
			return false
		}
		c, ok := jsonstr.ShortEscape(raw[i+1])
		if !ok {
			return false
		}
		if c == '\n' {
			break
		}
		buf[k] = c
		k++
		i += 2
	}
	return plainHead(unsafe.String(&buf[0], k))
}

// specialBytes marks with its high bit each byte of v (eight bytes of a
// JSON string literal, the first in memory the lowest) that is not plain
// in it: '"', '\\' or a control character.
func specialBytes(v uint64) uint64 {
	return zeroByte(v^0x2222222222222222) | zeroByte(v^0x5C5C5C5C5C5C5C5C) | (v-0x2020202020202020)&^v&highBits
}

// indexSpecial is the index of the first byte of s that is a backslash, a
// quote or a control character, -1 if none is.
func indexSpecial(s string) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if len(b) < 8 {
		for i, c := range b {
			if c < ' ' || c == '"' || c == '\\' {
				return i
			}
		}
		return -1
	}
	for i := 0; ; i += 8 {
		// The last word is read where it ends with s, over bytes already
		// read (none of which is special).
		i = min(i, len(b)-8)
		v := binary.LittleEndian.Uint64(b[i:])
		if m := specialBytes(v); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		if i == len(b)-8 {
			return -1
		}
	}
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
		if dst, n = jsonstr.AppendEscape(dst, lit[j:]); n == 0 || bytes.IndexByte(lit[j+2:j+n], '"') >= 0 {
			// A bad \u escape with a quote among the bytes AppendEscape
			// reads for it is not followed: gjson ends the literal at
			// that quote.
			return dst, false
		}
		i = j + n
	}
	return dst, false
}

// longPlain: the text of the JSON string literal raw (at most
// hiddenEnvelope long) is one judgeText finds nothing in because it is
// long and its first words are plain. A text of more than hiddenShort
// bytes (from its first byte that is not white space) is judged by the
// rules of how its first line starts only (judgeLines returns after
// start), and each of them fires only on a needle or a status that starts
// in the line's first words: at its start ("Error: …", "404 Not Found",
// "Traceback …"), in its first five words ("Database error: …", "Upload
// failed: …", "An unexpected error occurred", "HTTP Error 503") or in its
// first token ("java.net.ConnectException: …", which ends before the first
// space). Three starts are read
// further and left to the other ways: "Sorry, … could not", "Msg 208, …,
// Level 16" and "thread 'x' panicked at". So a long text whose first
// words (up to the end of the fifth) start no needle and no status holds
// no failure however its line
// goes on; they are read in raw, as plainLiteral reads them. It is false
// when it cannot tell: a short text, an escape it does not follow (\u), a
// text that starts with an escape, as JSON or markup, or with a
// decoration.
func longPlain(raw string) bool {
	n := len(raw)
	if n < hiddenShort+3 || n > hiddenEnvelope || raw[0] != '"' || raw[n-1] != '"' {
		return false
	}
	end := n - 1
	i := 1
	for ; i < end; i++ {
		if c := raw[i]; c == '\\' && i+2 <= end && (raw[i+1] == 'n' || raw[i+1] == 'r' || raw[i+1] == 't') {
			i++
		} else if c != ' ' {
			break
		}
	}
	if end-i <= hiddenShort {
		return false
	}
	if c := raw[i]; c == '\\' || c < ' ' || c == '"' || c >= utf8.RuneSelf || c == '{' || c == '<' ||
		(c == '*' || c == '_') && raw[i+1] == c {
		return false
	}
	if t := raw[i:]; equalLowerPrefix(t, "sorry") || equalLowerPrefix(t, "msg ") || equalLowerPrefix(t, "thread '") {
		return false
	}
	// The text is read to more than hiddenShort bytes, through its
	// escapes: where its first line ends in raw (a \n, or hiddenHead
	// bytes of text), and whether a quote that is escaped there follows
	// "validating ".
	j, k := i, 0 // raw[i:j] is read, k bytes of text
	lineEnd := -1
	if seg := raw[i : i+hiddenShort+1]; strings.IndexByte(seg, '\\') < 0 && strings.IndexByte(seg, '"') < 0 && !hasControl(seg) {
		// No escape and nothing that ends the text in its first
		// hiddenShort+1 bytes (most long texts: found at once).
		k, lineEnd = hiddenShort+1, i+hiddenHead
	}
	for k <= hiddenShort {
		lim := min(end, j+hiddenShort+1-k)
		s := indexSpecial(raw[j:lim])
		if s < 0 {
			s = lim - j
		}
		if lineEnd < 0 && k+s >= hiddenHead {
			lineEnd = j + hiddenHead - k
		}
		k += s
		j += s
		if k > hiddenShort {
			break
		}
		if j == end || raw[j] != '\\' || j+2 > end {
			return false // the text ends, or a control character or a quote ends it (gjson), or a cut escape
		}
		e := raw[j+1]
		if _, ok := jsonstr.ShortEscape(e); !ok {
			return false
		}
		if lineEnd < 0 {
			if e == 'n' {
				lineEnd = j
			} else if e == '"' && j-i >= len(quotedNeedle) && equalLower(raw[j-len(quotedNeedle):j], quotedNeedle) {
				return false
			}
		}
		k++
		j += 2
		if lineEnd < 0 && k == hiddenHead {
			lineEnd = j
		}
	}
	line := raw[i:lineEnd]
	// The first words: the first five (separated by spaces, as the
	// rules split them; the first token ends before the first space).
	w, spaces := 0, 0
	for ; w < len(line) && spaces < 5; w++ {
		if line[w] == ' ' {
			spaces++
		}
	}
	// A needle that starts in the first words ends within maxNeedle bytes
	// of them, and a status within three.
	if w+maxNeedle >= len(line) {
		return plainHead(line)
	}
	return plainLine(line[:w+maxNeedle])
}

// maxNeedle is the length of the longest needle.
var maxNeedle = func() int {
	m := 0
	for _, n := range plainNeedles {
		m = max(m, len(n))
	}
	return m
}()

// equalLowerPrefix: s starts with low, ASCII letters in any case.
func equalLowerPrefix(s, low string) bool {
	return len(s) >= len(low) && equalLower(s[:len(low)], low)
}

// hasControl: s holds a control character (a byte below 0x20), read eight
// bytes at a time.
func hasControl(s string) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if len(b) < 8 {
		for _, c := range b {
			if c < ' ' {
				return true
			}
		}
		return false
	}
	var m uint64
	i := 0
	for ; i+16 <= len(b); i += 16 {
		w := b[i : i+16 : i+16]
		v, u := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		m |= (v-0x2020202020202020)&^v | (u-0x2020202020202020)&^u
	}
	for ; i < len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[min(i, len(b)-8):])
		m |= (v - 0x2020202020202020) &^ v
	}
	return m&highBits != 0
}
