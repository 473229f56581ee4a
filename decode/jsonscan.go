package decode

import (
	"encoding/binary"
	"math/bits"
	"mcptrace/internal/jsonstr"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// The JSON scanner of the wire decoder's one pass (see "One pass" in the
// package documentation). It validates as it walks: the JSON grammar exactly
// as gjson.ValidBytes accepts it (RFC 8259), nesting no deeper than MaxDepth
// and, when utf8 is set, UTF-8 inside strings (outside strings JSON is
// ASCII). Callers walk the objects whose members they want with key and
// elem and skip every other value with value; nothing is copied.
type scanner struct {
	b     []byte
	i     int
	depth int
	utf8  bool
	esc   bool // the string scanned last had an escape
}

// tok is one scanned value: its kind and where it is in the input.
type tok struct {
	kind       schema.JSONKind
	start, end int
	esc        bool // a string with an escape
}

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// strSpecial marks the bytes a string scan must stop at: '"', '\\' and
// control characters; strSpecialUTF8 adds every byte from 0x80 (the start
// or continuation of a multi-byte sequence, checked rune by rune).
var strSpecial, strSpecialUTF8 [256]bool

func init() {
	for c := 0; c < 256; c++ {
		sp := c < 0x20 || c == '"' || c == '\\'
		strSpecial[c] = sp
		strSpecialUTF8[c] = sp || c >= 0x80
	}
}

// specialTable is the table str and strInto stop at in a literal's last
// bytes (fewer than eight left): strSpecialUTF8 when UTF-8 is checked.
func specialTable(checkUTF8 bool) *[256]bool {
	if checkUTF8 {
		return &strSpecialUTF8
	}
	return &strSpecial
}

// specialMask marks with its high bit each of the eight bytes of v (the
// first in memory the lowest) that a string scan may stop at. The first
// mark is exact: the bit tricks can mark a wrong byte only after a byte
// that is marked rightly (a borrow runs upwards), never before one, and
// they never miss one. So the lowest mark is where the scan stops.
//
// Each of the three tests is "x - 0x01 has its high bit set and x has
// not" for one byte x (x = v^'"', v^'\\' and, with 0x20 for 0x01, v
// itself); the three x share their high bits with v (the constants have
// none), so "x has not" is one &^ v for all three.
func specialMask(v uint64, checkUTF8 bool) uint64 {
	t := (v ^ (swarLo * '"') - swarLo) | (v ^ (swarLo * '\\') - swarLo) | (v - swarLo*0x20)
	if checkUTF8 {
		return (t | v) & swarHi
	}
	return t &^ v & swarHi
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		s.i++
	}
}

// str scans the string literal at s.i (a '"'); s.i ends after it.
func (s *scanner) str() bool {
	b := s.b
	i := s.i + 1
	s.esc = false
	checkUTF8 := s.utf8
	last, p := len(b)-8, unsafe.Pointer(unsafe.SliceData(b))
	for {
		// To the next byte to stop at: eight bytes at a time (through
		// load64, without bounds checks: i <= last keeps them inside b),
		// jumping to the first marked one (exact, see specialMask); the
		// last few bytes of b one by one. The common stop, a backslash
		// and a one-character escape, is taken here and the loop goes on.
		if i <= last {
			m := specialMask(load64(p, i), checkUTF8)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			// i < len(b): the mark is one of the eight bytes.
			if *(*byte)(unsafe.Add(p, i)) == '\\' && i+1 < len(b) && escapes[*(*byte)(unsafe.Add(p, i+1))] == escShort {
				s.esc = true
				i += 2
				continue
			}
		} else {
			tbl := specialTable(checkUTF8)
			for i < len(b) && !tbl[b[i]] {
				i++
			}
			if i >= len(b) {
				return false
			}
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			s.esc = true
			if i+1 >= len(b) {
				return false
			}
			switch escapes[b[i+1]] {
			case escShort:
				i += 2
			case escU:
				if i+6 > len(b) || !ishex(b[i+2]) || !ishex(b[i+3]) || !ishex(b[i+4]) || !ishex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default: // from 0x80, with utf8
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
}

// strInto is str for a string whose value the caller wants too: in the
// same pass it writes the value (as jsonstr.AppendUnescaped gives it) to
// the start of dst and returns its length. dst must be at least
// len(s.b)-s.i long (eight-byte steps write whole words, at most as far as
// the literal's own bytes reach). Validation is exactly str's.
func (s *scanner) strInto(dst []byte) (n int, ok bool) {
	b := s.b
	i := s.i + 1
	if len(dst) < len(b)-s.i {
		panic("decode: strInto's dst is shorter than its contract")
	}
	s.esc = false
	checkUTF8 := s.utf8
	// While i <= last, j+8 <= len(dst): j <= i-s.i-1.
	last, p, out := len(b)-8, unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(dst))
	j := 0
	for {
		if i <= last {
			v := load64(p, i)
			store64(out, j, v)
			m := specialMask(v, checkUTF8)
			if m == 0 {
				i, j = i+8, j+8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i, j = i+k, j+k
			// i < len(b) and j < len(dst), as in str; the common stop,
			// a one-character escape, is taken here.
			if *(*byte)(unsafe.Add(p, i)) == '\\' && i+1 < len(b) {
				if e := jsonstr.ShortEscapes[*(*byte)(unsafe.Add(p, i+1))]; e != 0 {
					s.esc = true
					*(*byte)(unsafe.Add(out, j)) = e
					i, j = i+2, j+1
					continue
				}
			}
		} else {
			tbl := specialTable(checkUTF8)
			for i < len(b) && !tbl[b[i]] {
				dst[j] = b[i]
				i, j = i+1, j+1
			}
			if i >= len(b) {
				return j, false
			}
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return j, true
		case c == '\\':
			s.esc = true
			if i+1 >= len(b) {
				return j, false
			}
			if e := jsonstr.ShortEscapes[b[i+1]]; e != 0 {
				dst[j] = e
				i, j = i+2, j+1
				continue
			}
			if b[i+1] != 'u' || i+6 > len(b) || !ishex(b[i+2]) || !ishex(b[i+3]) || !ishex(b[i+4]) || !ishex(b[i+5]) {
				return j, false
			}
			// A surrogate pair takes the next \u escape too, which is
			// then valid: its value is in DC00-DFFF only if its four
			// characters are hex digits.
			e, n := jsonstr.AppendEscape(dst[:j], b[i:])
			i, j = i+n, len(e)
		case c < 0x20:
			return j, false
		default: // from 0x80, with utf8
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return j, false
			}
			if i <= last {
				// The rune's bytes with the word they start (there is
				// room, as above), rather than a call to copy.
				store64(out, j, load64(p, i))
			} else {
				copy(dst[j:], b[i:i+n])
			}
			i, j = i+n, j+n
		}
	}
}

// escapes says what follows a backslash: a one-character escape, a \u
// escape, or nothing JSON allows (0).
var escapes = func() (t [256]uint8) {
	for c, e := range jsonstr.ShortEscapes {
		if e != 0 {
			t[c] = escShort
		}
	}
	t['u'] = escU
	return t
}()

const (
	escShort = 1 + iota
	escU
)

// load64 is the eight bytes at p+i, which the caller knows are there, as
// a little-endian word; store64 writes v there.
func load64(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
}

func store64(p unsafe.Pointer, i int, v uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, i))[:], v)
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// num scans the number at s.i (a '-' or a digit).
func (s *scanner) num() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	s.i = i
	return true
}

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// value scans the value at s.i (white space already skipped) and returns
// it; ok false when the input is not valid there.
func (s *scanner) value() (t tok, ok bool) {
	t.start = s.i
	if s.i >= len(s.b) {
		return t, false
	}
	switch c := s.b[s.i]; c {
	case '"':
		t.kind = schema.JSONString
		ok = s.str()
		t.esc = s.esc
	case '{':
		t.kind = schema.JSONObject
		ok = s.skipObject()
	case '[':
		t.kind = schema.JSONArray
		ok = s.skipArray()
	case 't':
		t.kind, ok = schema.JSONTrue, s.lit("true")
	case 'f':
		t.kind, ok = schema.JSONFalse, s.lit("false")
	case 'n':
		t.kind, ok = schema.JSONNull, s.lit("null")
	default:
		if c == '-' || isDigit(c) {
			t.kind, ok = schema.JSONNumber, s.num()
		}
	}
	t.end = s.i
	return t, ok
}

// enter steps into the object or array at s.i.
func (s *scanner) enter() bool {
	s.depth++
	s.i++
	return s.depth <= MaxDepth()
}

// key reads the key of member n (0-based) of the object being walked, and
// the colon after it; done at the closing brace.
func (s *scanner) key(n int) (key []byte, esc, done, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, false, false
	}
	c := s.b[s.i]
	if c == '}' {
		s.i++
		s.depth--
		return nil, false, true, true
	}
	if n > 0 {
		if c != ',' {
			return nil, false, false, false
		}
		s.i++
		s.ws()
		if s.i >= len(s.b) {
			return nil, false, false, false
		}
		c = s.b[s.i]
	}
	if c != '"' {
		return nil, false, false, false
	}
	start := s.i
	if end := s.plainStr(); end > start {
		// A key without escapes or other stops (most keys): no call.
		key, esc = s.b[start+1:end], false
		s.i = end + 1
	} else {
		if !s.str() {
			return nil, false, false, false
		}
		key, esc = s.b[start+1:s.i-1], s.esc
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false, false, false
	}
	s.i++
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, false, false
	}
	return key, esc, false, true
}

// plainStr is where the string literal at s.i (a '"') ends, its closing
// quote, when the eight-byte steps of str reach it with no other stop on
// the way and the literal is no longer than two words; otherwise 0, and
// str decides. It moves nothing.
func (s *scanner) plainStr() int {
	b, i := s.b, s.i+1
	p := unsafe.Pointer(unsafe.SliceData(b))
	for w := 0; w < 2 && i <= len(b)-8; w++ {
		if m := specialMask(load64(p, i), s.utf8); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if *(*byte)(unsafe.Add(p, i)) == '"' {
				return i
			}
			return 0
		}
		i += 8
	}
	return 0
}

// elem moves to element n (0-based) of the array being walked; done at the
// closing bracket.
func (s *scanner) elem(n int) (done, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	c := s.b[s.i]
	if c == ']' {
		s.i++
		s.depth--
		return true, true
	}
	if n > 0 {
		if c != ',' {
			return false, false
		}
		s.i++
		s.ws()
		if s.i >= len(s.b) {
			return false, false
		}
	}
	return false, true
}

func (s *scanner) skipObject() bool {
	if !s.enter() {
		return false
	}
	for n := 0; ; n++ {
		_, _, done, ok := s.key(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if _, ok := s.value(); !ok {
			return false
		}
	}
}

func (s *scanner) skipArray() bool {
	if !s.enter() {
		return false
	}
	for n := 0; ; n++ {
		done, ok := s.elem(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if _, ok := s.value(); !ok {
			return false
		}
	}
}

// whole scans b as one JSON text with nothing but white space around it.
func (s *scanner) whole() (tok, bool) {
	s.ws()
	t, ok := s.value()
	if !ok {
		return t, false
	}
	s.ws()
	return t, s.i == len(s.b)
}

// scanValid reports whether b is one JSON text, valid UTF-8 inside its
// strings when checkUTF8, and nested at most MaxDepth deep: on a wire-log
// line, utf8.Valid(b) && !depthExceeds(b, MaxDepth) && gjson.ValidBytes(b)
// (outside strings valid JSON is ASCII), in one pass.
func scanValid(b []byte, checkUTF8 bool) bool {
	s := scanner{b: b, utf8: checkUTF8}
	_, ok := s.whole()
	return ok
}

// bstr is b as a string, sharing its memory: b must not change afterwards.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// gj is the value t of b as the gjson.Result a gjson parse gives for it
// (sharing b's memory unless it is a string with escapes), so that reading
// it as text, an integer or a boolean follows gjson's rules exactly.
func (t tok) gj(b []byte) gjson.Result {
	raw := bstr(b[t.start:t.end])
	switch t.kind {
	case schema.JSONString:
		r := gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
		if t.esc {
			r.Str = string(jsonstr.AppendUnescaped(nil, b[t.start+1:t.end-1]))
		}
		return r
	case schema.JSONNumber:
		f, _ := strconv.ParseFloat(raw, 64)
		return gjson.Result{Type: gjson.Number, Raw: raw, Num: f}
	case schema.JSONTrue:
		return gjson.Result{Type: gjson.True, Raw: raw}
	case schema.JSONFalse:
		return gjson.Result{Type: gjson.False, Raw: raw}
	case schema.JSONNull:
		return gjson.Result{Type: gjson.Null, Raw: raw}
	case schema.JSONObject, schema.JSONArray:
		return gjson.Result{Type: gjson.JSON, Raw: raw}
	}
	return gjson.Result{}
}

// text is what gjson's Result.String gives for the value t of b; a string
// without escapes shares b's memory.
func (t tok) text(b []byte) string {
	if t.kind == schema.JSONString && !t.esc {
		return bstr(b[t.start+1 : t.end-1])
	}
	return t.gj(b).String()
}

// integer is classify's isInteger: a number with an integral value that
// fits an int64.
func (t tok) integer(b []byte) bool {
	if t.kind != schema.JSONNumber {
		return false
	}
	raw := bstr(b[t.start:t.end])
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			f, _ := strconv.ParseFloat(raw, 64)
			return f == float64(int64(f))
		}
	}
	_, err := strconv.ParseInt(raw, 10, 64)
	return err == nil
}
