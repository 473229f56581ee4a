package classify

import (
	"unicode/utf8"
	"unsafe"
)

// oldPlainLiteral is plainLiteral as it was (a copy of the first line,
// then plainLine over it): the oracle of the one-pass version.
//
// plainLiteral: the text of the JSON string literal raw (a first text
// block, at most hiddenEnvelope long) is one judgeText finds nothing in,
// because its first line is plain (plainLine), read from raw as it is
// unescaped, without unescaping the rest. It is false (the text must be
// judged) for whatever it does not follow exactly: a \u escape, a control
// character, a text that starts as a JSON object or markup or with a byte that is
// not ASCII, a literal that is not whole. Other bytes are copied as they
// are, as jsonstr.AppendUnescapedText copies them.
func oldPlainLiteral(raw string) bool {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return false
	}
	// buf is judgeText's head: hiddenHead bytes from the first that
	// strings.TrimLeft keeps (stripDecoration keeps a printable ASCII
	// start, except "**" and "__", which move the head on).
	var buf [hiddenHead]byte
	k, started := 0, false
	for i := 1; i < n-1 && k < len(buf); {
		c := raw[i]
		switch {
		case c == '\\':
			if i+2 > n-1 {
				return false
			}
			switch raw[i+1] {
			case '"', '\\', '/':
				c = raw[i+1]
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return false
			}
			i += 2
		case c < ' ' || c == '"' || c >= utf8.RuneSelf && !started:
			// A control character or a quote ends the text (gjson); a
			// text may start with a byte-order mark or a decoration.
			return false
		default:
			i++
		}
		if !started {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{', '<':
				return false // judged as JSON or markup
			}
			// A text starting with '[' is a list of results when it is
			// valid JSON (not judged) and judged by its first line when
			// it is not: either way a plain first line is no failure.
			started = true
		}
		if c == '\n' {
			break
		}
		buf[k] = c
		k++
	}
	if !started || k >= 2 && (buf[0] == '*' && buf[1] == '*' || buf[0] == '_' && buf[1] == '_') {
		return false
	}
	for k > 0 && (buf[k-1] == ' ' || buf[k-1] == '\t' || buf[k-1] == '\r') {
		k--
	}
	return plainLine(unsafe.String(&buf[0], k))
}
