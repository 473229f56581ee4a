// Package jsonstr decodes the body of a JSON string literal the way gjson
// does, so that every stage that reads a string from escaped text gets the
// value gjson would have given: decode's one-pass scanner, redaction's
// token hash and the hidden-failure detector all call it.
package jsonstr

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// AppendUnescaped appends the value of lit, the body of a JSON string
// literal without its quotes and already validated, to dst, as gjson
// unescapes it (a lone or unpaired surrogate is U+FFFD).
func AppendUnescaped(dst, lit []byte) []byte {
	for len(lit) > 0 {
		k := bytes.IndexByte(lit, '\\')
		if k < 0 {
			return append(dst, lit...)
		}
		dst = append(dst, lit[:k]...)
		var n int
		if dst, n = AppendEscape(dst, lit[k:]); n == 0 {
			return dst // not valid JSON after all: gjson ends the value here too
		}
		lit = lit[k+n:]
	}
	return dst
}

// UnescapeInto writes the value of lit, as AppendUnescaped appends it, to
// the start of dst and returns its length; dst must be at least as long as
// lit (a value is never longer than its literal) and must not overlap it.
// It copies eight bytes at a time and steps to the next backslash by bit
// tricks, so a body dense with \" escapes costs a few instructions each.
func UnescapeInto(dst, lit []byte) int {
	n, _ := UnescapeSome(dst, lit, len(lit))
	return n
}

// UnescapeSome is UnescapeInto for the start of lit: it stops at the first
// place at or after max that does not cut an escape (at most 11 bytes
// past it, or lit's end), and returns the bytes written and read. dst must
// be at least min(len(lit), max+11) long.
//
// Its eight-byte steps read and write through word (no bounds checks, the
// loop's own conditions keep them inside lit and dst): with them the loop
// took about twice the instructions.
func UnescapeSome(dst, lit []byte, max int) (written, read int) {
	const ones, highs, slash = 0x0101010101010101, 0x8080808080808080, 0x5C5C5C5C5C5C5C5C
	max = min(max, len(lit))
	if len(dst) < min(len(lit), max+11) {
		panic("jsonstr: UnescapeSome's dst is shorter than its contract")
	}
	// While i < max and i+8 <= len(lit), j+8 <= len(dst) too: j <= i,
	// and dst is at least len(lit) or max+11 long.
	last := len(lit) - 8
	src, out := unsafe.Pointer(unsafe.SliceData(lit)), unsafe.Pointer(unsafe.SliceData(dst))
	i, j := 0, 0
	for i < max {
		if i <= last {
			v := binary.LittleEndian.Uint64(word(src, i))
			binary.LittleEndian.PutUint64(word(out, j), v)
			x := v ^ slash
			// The lowest marked byte is the first backslash (a borrow
			// marks wrongly only above a byte marked rightly).
			m := (x - ones) &^ x & highs
			if m == 0 {
				i, j = i+8, j+8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i, j = i+k, j+k
			if i >= max {
				break
			}
		} else if c := lit[i]; c != '\\' {
			dst[j] = c
			i, j = i+1, j+1
			continue
		}
		// lit[i] is a backslash.
		if i+1 < len(lit) {
			if c := ShortEscapes[lit[i+1]]; c != 0 {
				dst[j] = c
				i, j = i+2, j+1
				continue
			}
		}
		e, n := AppendEscape(dst[:j], lit[i:])
		if n == 0 {
			return j, len(lit) // not valid JSON after all: AppendUnescaped stops here too
		}
		i, j = i+n, len(e)
	}
	return j, i
}

// word is the eight bytes at p+i, which the caller knows are there.
func word(p unsafe.Pointer, i int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(p, i)), 8)
}

// ShortEscapes is ShortEscape as a table: the byte an escape stands for,
// given the character after the backslash; 0 where ShortEscape is not ok.
var ShortEscapes = func() (t [256]byte) {
	for c := range t {
		t[c], _ = ShortEscape(byte(c))
	}
	return t
}()

// AppendUnescapedText is AppendUnescaped for a body that was not validated,
// exactly as gjson unescapes it: a control character outside an escape, an
// unknown escape, a cut \u escape or a trailing backslash ends the value
// there, and a \u escape with a character that is not a hex digit is
// U+0000.
func AppendUnescapedText(dst, lit []byte) []byte {
	for i := 0; i < len(lit); {
		j := i + plainRun(lit[i:])
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

// AppendEscape appends the value of the escape at the start of e (a
// backslash and what follows) to dst and says how many bytes of e it took:
// 2, 6, or 12 for a surrogate pair. It takes 0, and appends nothing, when e
// does not start with a whole escape (an unknown letter, a cut \u, e only a
// backslash).
func AppendEscape(dst, e []byte) ([]byte, int) {
	if len(e) < 2 || e[0] != '\\' {
		return dst, 0
	}
	if c, ok := ShortEscape(e[1]); ok {
		return append(dst, c), 2
	}
	switch e[1] {
	case 'u':
		if len(e) < 6 {
			return dst, 0
		}
		r, n := Hex4(e[2:6]), 6
		if r >= 0xD800 && r < 0xDC00 && len(e) >= 12 && e[6] == '\\' && e[7] == 'u' {
			if r2 := Hex4(e[8:12]); r2 >= 0xDC00 && r2 < 0xE000 {
				r, n = utf16.DecodeRune(r, r2), 12
			}
		}
		return utf8.AppendRune(dst, r), n
	}
	return dst, 0
}

// Hex4 is the value of the four hex digits h[:4], 0 if one of them is not a
// hex digit (gjson's reading of a bad \u escape).
func Hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0
		}
		r = r<<4 | rune(c)
	}
	return r
}

// plainRun is how many bytes of b, a multiple of 8, are surely neither a
// backslash nor a control character: it tests 8 bytes at a time, and the
// caller tests the rest one by one.
func plainRun(b []byte) int {
	const ones, highs, ctrl, slash = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020, 0x5C5C5C5C5C5C5C5C
	n := 0
	for ; n+8 <= len(b); n += 8 {
		v := binary.LittleEndian.Uint64(b[n:])
		x := v ^ slash // a zero byte where v has a backslash
		// A byte below 0x20, or a zero byte of x, sets its high bit in
		// one of the two terms (the usual has-less and has-zero tests).
		if ((v-ctrl)&^v|(x-ones)&^x)&highs != 0 {
			break
		}
	}
	return n
}

// ShortEscape is the byte a one-character JSON escape stands for, given
// the character after the backslash; ok is false for 'u' (AppendEscape
// reads those) and for anything that is not an escape.
func ShortEscape(e byte) (c byte, ok bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
