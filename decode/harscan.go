package decode

import (
	"encoding/binary"
	"io"
)

// docScanner is a single-pass JSON validator over a reader, for documents
// too large to hold: it accepts exactly what gjson.ValidBytes accepts (RFC
// 8259 syntax, no UTF-8 check), counts nesting as depthExceeds does, and
// holds only its read buffer, plus the bytes from a mark on (one HAR entry)
// up to a limit. The HAR decoder drives it (harstream.go); the generic value
// methods validate and skip anything it does not look into.
//
// Every method that consumes input returns false on the first failure, with
// the reason in fail: a syntax error (the bytes after it can then be drained
// with the naive depth count), nesting too deep, a read error, a stop, or the
// read cap.
type docScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int   // next byte, end of the bytes read
	base     int64 // input offset of buf[0]
	total    int64 // bytes read from r
	cap      int64 // most bytes read before failing with scanCap (0: no cap)

	// mark, when >= 0, is the index in buf of the first byte kept: reads
	// keep buf[mark:] (growing buf) until more than keepMax bytes are
	// kept; then over is set, the first excerptBytes go to overHead, and
	// the mark is dropped.
	mark     int
	keepMax  int64
	over     bool
	overHead []byte

	head    []byte // the input's first headMax bytes, for excerpts
	headMax int

	depth int
	stop  func() bool
	fail  scanFail
	rerr  error // the reader's error (scanRead)
	eof   bool

	// Where a syntax error left the naive depth count (depthExceeds) of
	// the bytes before it: inside a string, and whether the byte at pos is
	// skipped as an escaped one.
	errInStr, errSkip bool
	errAtEnd          bool // the input ended inside a value
}

type scanFail uint8

const (
	scanOK      scanFail = iota
	scanSyntax           // not JSON at pos (or the input ended inside a value: errAtEnd)
	scanDeep             // nests deeper than MaxDepth
	scanRead             // the reader failed: rerr
	scanStopped          // the stop check said so
	scanCap              // more than cap bytes read
	scanSpool            // the caller's spool failed (set by the caller)
)

// scanBuf is the read size and the buffer's first size.
const scanBuf = 256 << 10

func newDocScanner(r io.Reader, stop func() bool, keepMax int64, headMax int) *docScanner {
	return &docScanner{r: r, buf: make([]byte, scanBuf), mark: -1, keepMax: keepMax, stop: stop, headMax: headMax,
		head: make([]byte, 0, min(headMax, scanBuf))}
}

// offset is the input offset of the next byte.
func (s *docScanner) offset() int64 { return s.base + int64(s.pos) }

// fill reads more input after buf[end], keeping buf[pos:] (or buf[mark:]).
// It returns false at the end of the input (eof) or on a failure.
func (s *docScanner) fill() bool {
	if s.fail != scanOK || s.eof {
		return false
	}
	if s.stop() {
		s.fail = scanStopped
		return false
	}
	if s.cap > 0 && s.total > s.cap {
		s.fail = scanCap
		return false
	}
	keep := s.pos
	if s.mark >= 0 {
		keep = s.mark
		if int64(s.end-s.mark) > s.keepMax {
			// The marked value is over the limit: keep its head, hold no
			// more of it.
			s.over = true
			s.overHead = append(s.overHead[:0], s.buf[s.mark:s.mark+min(s.end-s.mark, excerptBytes)]...)
			s.mark, keep = -1, s.pos
		}
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
		if s.mark >= 0 {
			s.mark -= keep
		}
	}
	if len(s.buf)-s.end < scanBuf/2 {
		// Kept bytes fill the buffer: grow it, by doubling but to no more
		// than the limit and two reads.
		want := max(2*len(s.buf), s.end+scanBuf)
		if lim := s.keepMax + 2*scanBuf; int64(want) > lim {
			want = max(int(lim), s.end+scanBuf)
		}
		nb := make([]byte, want)
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		if n > 0 {
			if len(s.head) < s.headMax {
				s.head = append(s.head, s.buf[s.end:s.end+min(n, s.headMax-len(s.head))]...)
			}
			s.end += n
			s.total += int64(n)
		}
		switch {
		case err == io.EOF:
			s.eof = true
			return n > 0
		case err != nil:
			s.fail, s.rerr = scanRead, err
			return false
		case n > 0:
			return true
		}
	}
}

// peek returns the next byte without consuming it, or -1 at the end of the
// input or on a failure.
func (s *docScanner) peek() int {
	if s.pos == s.end && !s.fill() {
		return -1
	}
	return int(s.buf[s.pos])
}

// ws skips white space and returns the next byte (not consumed), or -1.
func (s *docScanner) ws() int {
	for {
		// Indented documents (mitmproxy's, DevTools') are mostly runs of
		// spaces.
		for s.pos+8 <= s.end && binary.LittleEndian.Uint64(s.buf[s.pos:]) == ' '*lsb {
			s.pos += 8
		}
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return int(c)
			}
			s.pos++
		}
		if !s.fill() {
			return -1
		}
	}
}

// bad records a syntax error at the byte c (at pos, outside a string), or
// the end of the input inside a value (c < 0), unless a failure is recorded
// already.
func (s *docScanner) bad(c int) bool {
	if s.fail == scanOK {
		s.fail = scanSyntax
		s.errAtEnd = c < 0
	}
	return false
}

// badInStr records a syntax error inside a string at pos; skip says the
// naive count skips that byte (it follows a backslash).
func (s *docScanner) badInStr(c int, skip bool) bool {
	if s.fail == scanOK {
		s.fail = scanSyntax
		s.errAtEnd = c < 0
		s.errInStr, s.errSkip = true, skip
	}
	return false
}

func (s *docScanner) push() bool {
	s.depth++
	if s.depth > MaxDepth() {
		if s.fail == scanOK {
			s.fail = scanDeep
		}
		return false
	}
	return true
}

// value validates one value after optional white space.
func (s *docScanner) value() bool {
	c := s.ws()
	switch c {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		s.pos++
		return s.str()
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number()
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return s.bad(c)
}

// object validates an object; pos is at its '{'.
func (s *docScanner) object() bool {
	s.pos++
	if !s.push() {
		return false
	}
	c := s.ws()
	if c == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if c != '"' {
			return s.bad(c)
		}
		s.pos++
		if !s.str() {
			return false
		}
		if !s.colon() || !s.value() {
			return false
		}
		switch c = s.ws(); c {
		case ',':
			s.pos++
			c = s.ws()
		case '}':
			s.pos++
			s.depth--
			return true
		default:
			return s.bad(c)
		}
	}
}

func (s *docScanner) colon() bool {
	if c := s.ws(); c != ':' {
		return s.bad(c)
	}
	s.pos++
	return true
}

// array validates an array; pos is at its '['.
func (s *docScanner) array() bool {
	s.pos++
	if !s.push() {
		return false
	}
	if s.ws() == ']' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		switch c := s.ws(); c {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return s.bad(c)
		}
	}
}

// strPlain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether none of the 8 bytes of w is a quote, a backslash
// or below 0x20.
func plain8(w uint64) bool {
	// The high bit of a byte is set where it is below 0x20, a quote or a
	// backslash (x - 0x01.. &^ x flags zero bytes); a borrow may flag a
	// byte after a flagged one too, never one in a word with none.
	q := w ^ '"'*lsb
	bs := w ^ '\\'*lsb
	return ((w-0x20*lsb)&^w|(q-lsb)&^q|(bs-lsb)&^bs)&msb == 0
}

// str validates the rest of a string; pos is after its opening quote.
func (s *docScanner) str() bool {
	for {
		b := s.buf[s.pos:s.end]
		i := 0
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		s.pos += i
		if i == len(b) {
			if !s.fill() {
				return s.badInStr(-1, false)
			}
			continue
		}
		switch c := b[i]; {
		case c == '"':
			s.pos++
			return true
		case c != '\\':
			return s.badInStr(int(c), false) // a control character
		}
		s.pos++
		if !s.escape() {
			return false
		}
	}
}

// escape validates an escape; pos is after its backslash.
func (s *docScanner) escape() bool {
	e := s.peek()
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return true
	case 'u':
		s.pos++
		for range 4 {
			h := s.peek()
			if h < 0 || !ishex(byte(h)) {
				return s.badInStr(h, false)
			}
			s.pos++
		}
		return true
	}
	return s.badInStr(e, true)
}

// ishex is in jsonscan.go.

func digit(c int) bool { return c >= '0' && c <= '9' }

// number validates a number; pos is at its first byte.
func (s *docScanner) number() bool {
	c := s.peek()
	if c == '-' {
		s.pos++
		if c = s.peek(); !digit(c) {
			return s.bad(c)
		}
	}
	if c == '0' {
		s.pos++
		c = s.peek()
	} else {
		for digit(c) {
			s.pos++
			c = s.peek()
		}
	}
	if c == '.' {
		s.pos++
		if c = s.peek(); !digit(c) {
			return s.bad(c)
		}
		for digit(c) {
			s.pos++
			c = s.peek()
		}
	}
	if c == 'e' || c == 'E' {
		s.pos++
		if c = s.peek(); c == '+' || c == '-' {
			s.pos++
			c = s.peek()
		}
		if !digit(c) {
			return s.bad(c)
		}
		for digit(c) {
			s.pos++
			c = s.peek()
		}
	}
	return true
}

// lit validates a literal (true, false, null); pos is at its first byte.
func (s *docScanner) lit(word string) bool {
	for i := 0; i < len(word); i++ {
		if c := s.peek(); c != int(word[i]) {
			return s.bad(c)
		}
		s.pos++
	}
	return true
}

// key validates a key (pos after its opening quote) and returns its text
// when it is at most len(dst) bytes of ASCII once unescaped, else nil: the
// HAR decoder compares keys with "log" and "entries" as gjson does, after
// unescaping.
func (s *docScanner) key(dst []byte) ([]byte, bool) {
	n, long := 0, false
	put := func(c byte) {
		if n < len(dst) {
			dst[n] = c
			n++
		} else {
			long = true
		}
	}
	for {
		c := s.peek()
		switch {
		case c < 0:
			return nil, s.badInStr(-1, false)
		case c == '"':
			s.pos++
			if long {
				return nil, true
			}
			return dst[:n], true
		case c < 0x20:
			return nil, s.badInStr(c, false)
		case c != '\\':
			s.pos++
			if c >= 0x80 {
				long = true // no key we look for
			}
			put(byte(c))
			continue
		}
		s.pos++
		e := s.peek()
		switch e {
		case '"', '\\', '/':
			put(byte(e))
		case 'b':
			put('\b')
		case 'f':
			put('\f')
		case 'n':
			put('\n')
		case 'r':
			put('\r')
		case 't':
			put('\t')
		case 'u':
			s.pos++
			v := 0
			for range 4 {
				h := s.peek()
				if h < 0 || !ishex(byte(h)) {
					return nil, s.badInStr(h, false)
				}
				v = v<<4 | hexVal(byte(h))
				s.pos++
			}
			if v >= 0x80 {
				long = true
			}
			put(byte(v))
			continue
		default:
			return nil, s.badInStr(e, true)
		}
		s.pos++
	}
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

// drain reads on after a failure at pos without holding anything, as far
// as limit bytes, continuing the naive depth count (depthExceeds) from the
// state the failure left when count is set. It reports whether the input
// ended within the limit and whether the count went past MaxDepth; a read
// error or a stop is left in fail/rerr.
func (s *docScanner) drain(limit int64, count bool) (ended, deep bool) {
	s.mark = -1
	depth, inStr, skip := s.depth, s.errInStr, s.errSkip
	maxDepth := MaxDepth()
	fail := s.fail
	s.fail = scanOK // let fill read on
	s.cap = 0
	start := s.offset()
	for {
		b := s.buf[s.pos:s.end]
		if count && !deep {
			for i := 0; i < len(b); i++ {
				c := b[i]
				if skip {
					skip = false
					continue
				}
				if inStr {
					switch c {
					case '\\':
						skip = true
					case '"':
						inStr = false
					}
					continue
				}
				switch c {
				case '"':
					inStr = true
				case '{', '[':
					depth++
					if depth > maxDepth {
						deep = true
					}
				case '}', ']':
					depth--
				}
			}
		}
		s.pos = s.end
		if s.offset()-start > limit {
			s.fail = fail
			return false, deep
		}
		if !s.fill() {
			if s.fail == scanOK {
				s.fail = fail
				return true, deep
			}
			return false, deep
		}
	}
}

// ensure reads until n bytes are available at pos (fewer at the end of the
// input) and returns them, unconsumed.
func (s *docScanner) ensure(n int) []byte {
	for s.end-s.pos < n && s.fill() {
	}
	return s.buf[s.pos:min(s.end, s.pos+n)]
}
