package traffic

import (
	"strconv"
	"time"
)

// How a writer escapes JSON strings. Each is what a real encoder writes, so
// the logs carry each encoder's escapes.
const (
	escPlain = iota // JSON.stringify, most clients' loggers: ", \ and control characters
	escASCII        // Python's json.dumps (ensure_ascii): also every non-ASCII character as \uXXXX
	escHTML         // Go's encoding/json: also <, >, & and U+2028, U+2029 as \uXXXX
)

var needEsc [3][256]bool

func init() {
	for m := range needEsc {
		for c := 0; c < 0x20; c++ {
			needEsc[m][c] = true
		}
		needEsc[m]['"'], needEsc[m]['\\'] = true, true
	}
	for c := 0x80; c < 0x100; c++ {
		needEsc[escASCII][c] = true
	}
	needEsc[escHTML]['<'], needEsc[escHTML]['>'], needEsc[escHTML]['&'] = true, true, true
	needEsc[escHTML][0xE2] = true // the first byte of U+2028 and U+2029
}

const hexDigits = "0123456789abcdef"

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendEsc appends s as the inside of a JSON string (no quotes), escaped
// as mode says. s is valid UTF-8.
func appendEsc[T ~string | ~[]byte](dst []byte, s T, mode int) []byte {
	tab := &needEsc[mode]
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if !tab[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x80: // other control characters, and < > & in escHTML
			dst = appendU(dst, rune(c))
		default:
			r, n := decodeRune(s[i:])
			switch {
			case mode == escHTML && (r == 0x2028 || r == 0x2029):
				dst = appendU(dst, r)
			case mode == escHTML:
				dst = append(dst, s[i:i+n]...)
			case r >= 0x10000:
				r -= 0x10000
				dst = appendU(appendU(dst, 0xD800+(r>>10)), 0xDC00+(r&0x3FF))
			default:
				dst = appendU(dst, r)
			}
			i += n
			start = i
			continue
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// decodeRune reads the UTF-8 sequence that starts s (valid UTF-8).
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	c := s[0]
	switch {
	case c < 0xE0 && len(s) >= 2:
		return rune(c&0x1F)<<6 | rune(s[1]&0x3F), 2
	case c < 0xF0 && len(s) >= 3:
		return rune(c&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	case len(s) >= 4:
		return rune(c&0x07)<<18 | rune(s[1]&0x3F)<<12 | rune(s[2]&0x3F)<<6 | rune(s[3]&0x3F), 4
	}
	return 0xFFFD, 1
}

// appendStr appends s as a JSON string, quotes included.
func appendStr[T ~string | ~[]byte](dst []byte, s T, mode int) []byte {
	dst = append(dst, '"')
	dst = appendEsc(dst, s, mode)
	return append(dst, '"')
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// Times are microseconds since the Unix epoch, UTC.

// tsFormatter writes RFC 3339 times with milliseconds ("2026-10-17T10:00:00.120Z"),
// caching the date of the last day it wrote.
type tsFormatter struct {
	day  int64
	date []byte // "2026-10-17T"
}

func (f *tsFormatter) append(dst []byte, us int64) []byte {
	ms := us / 1000
	day := ms / 86400000
	if ms < 0 {
		day = (ms - 86399999) / 86400000
	}
	if f.date == nil || day != f.day {
		f.day = day
		f.date = time.UnixMilli(day*86400000).UTC().AppendFormat(f.date[:0], "2006-01-02T")
	}
	dst = append(dst, f.date...)
	rem := ms - day*86400000
	h, m, s, milli := rem/3600000, rem/60000%60, rem/1000%60, rem%1000
	return append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.', byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}

// appendMillis appends a duration in microseconds as milliseconds with up
// to three decimals (HAR times: "39.82").
func appendMillis(dst []byte, us int64) []byte {
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	dst = strconv.AppendInt(dst, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return dst
	}
	d := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for n > 0 && d[n-1] == '0' {
		n--
	}
	return append(append(dst, '.'), d[:n]...)
}

// appendEpochSeconds appends a time as seconds since the epoch with
// milliseconds ("1781624401.4"), as CDP event times are written.
func appendEpochSeconds(dst []byte, us int64) []byte {
	return appendMillis(dst, us/1000) // whole milliseconds, written as seconds with three decimals
}
