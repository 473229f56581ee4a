package classify

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"mcptrace/internal/jsonstr"
	"unicode/utf8"
	"unsafe"
)

// JSON texts judged from their head. A first text that is a JSON value (a
// search API's answer, a row listing) is judged as an error envelope when it
// is valid JSON and by its first line when it is not (judgeText). Most are
// payloads, and what says so comes early: the first line holds no failure,
// and a list is never an envelope, nor an object whose first three members
// are data (judgeEnvelope counts data members, and more than two of them
// rule an envelope out whatever follows). When both hold, the verdict is
// "no failure" whether the text is valid or not, so neither validating nor
// walking the whole text is needed; when they do not, the caller judges it
// whole. The differential tests hold this to the code it shortcuts.

// notEnvelope: t (an object text, t[0] == '{', or a prefix of one) starts
// with three members that judgeEnvelope counts as data (a key that is not
// one of envelopeKeys, with a value that is not empty), so that, if t is
// valid JSON, judgeEnvelope finds no envelope in it. Only members read
// whole count; the third one's value needs only to be known not empty. It
// is false when it cannot tell (fewer such members, a cut, a text that is
// not JSON where it reads).
func notEnvelope(t string) bool {
	i, domain := 1, 0
	for {
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) || t[i] != '"' {
			return false
		}
		k := scanString(t[i:])
		if k == "" {
			return false
		}
		i += len(k)
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) || t[i] != ':' {
			return false
		}
		i++
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) {
			return false
		}
		if !envelopeKey(k) {
			empty, known := emptyPrefix(t[i:])
			if !known {
				return false
			}
			if !empty {
				if domain++; domain > 2 {
					return true
				}
			}
		}
		n := skipValue(t[i:])
		if n == 0 || i+n >= len(t) {
			return false // cut, or a scalar that may go on
		}
		i += n
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) || t[i] != ',' {
			return false
		}
		i++
	}
}

// dataObject: the valid JSON object t (t[0] == '{') has no member whose
// key is one of envelopeKeys, so judgeEnvelope finds no envelope in it:
// each of its signs (error set, success false, a status, a lone detail or
// message) is read from a member with such a key. It reads every member's
// key and skips its value; it is false when it meets an envelope key or
// cannot read the object. Only for a text known to be valid JSON (the
// decoder's structuredContent): on a text that is not, judgeText would not
// ask judgeEnvelope at all.
func dataObject(t string) bool {
	i := 1
	for {
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) {
			return false
		}
		if t[i] == '}' {
			return true // the object ends (an empty one, or after a comma gjson would not pass)
		}
		if t[i] != '"' {
			return false
		}
		k := scanString(t[i:])
		if k == "" || envelopeKey(k) {
			return false
		}
		i += len(k)
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) || t[i] != ':' {
			return false
		}
		i++
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		n := skipValue(t[i:])
		if n == 0 {
			return false
		}
		i += n
		for i < len(t) && t[i] <= ' ' {
			i++
		}
		if i >= len(t) {
			return false
		}
		switch t[i] {
		case '}':
			return true
		case ',':
			i++
		default:
			return false
		}
	}
}

// envelopeKey: the key of the string literal lit, lower-cased, is one of
// envelopeKeys (as judgeEnvelope asks it).
func envelopeKey(lit string) bool {
	key := lit[1 : len(lit)-1]
	if strings.IndexByte(key, '\\') >= 0 {
		key = stringValue(lit)
	}
	var buf [24]byte // longer than every envelope key
	if len(key) > len(buf) {
		return false
	}
	b := buf[:len(key)]
	for i := 0; i < len(key); i++ {
		b[i] = lowerTab[key[i]]
	}
	return envelopeKeys[string(b)]
}

// emptyPrefix is emptyValue of the valid JSON value s starts with (s may go
// on past it, and may be cut inside it): null, "", [], {} or an object of
// nulls. known is false when the bytes of s do not settle it.
func emptyPrefix(s string) (empty, known bool) {
	switch s[0] {
	case 'n':
		return true, true
	case '"':
		if len(s) < 2 {
			return false, false
		}
		return s[1] == '"', true
	case '[':
		i := 1
		for i < len(s) && s[i] <= ' ' {
			i++
		}
		if i >= len(s) {
			return false, false
		}
		return s[i] == ']', true
	case '{':
		// Empty when every value is null: the first other value settles
		// it.
		for i := 1; ; {
			for i < len(s) && (s[i] <= ' ' || s[i] == ',') {
				i++
			}
			if i >= len(s) {
				return false, false
			}
			if s[i] == '}' {
				return true, true
			}
			if s[i] != '"' {
				return false, false
			}
			k := scanString(s[i:])
			if k == "" {
				return false, false
			}
			i += len(k)
			for i < len(s) && (s[i] <= ' ' || s[i] == ':') {
				i++
			}
			if i >= len(s) {
				return false, false
			}
			if s[i] != 'n' {
				return false, true
			}
			n := skipValue(s[i:])
			if n == 0 || i+n >= len(s) {
				return false, false
			}
			i += n
		}
	}
	return false, true // a number, true, false
}

// jsonHeadPlain: the first text literal raw (at most hiddenEnvelope
// bytes) is a JSON list or object that judgeText finds nothing in, told
// from the first longHead bytes of its value: its first line holds no
// failure, and it is a list or starts with three data members
// (notEnvelope). False when it cannot tell; the caller then judges the
// text as before.
//
// The first line is known when the head holds a newline within
// hiddenHead bytes or at least hiddenHead bytes: the rules read no more
// of it. It holds no failure whatever the rest of the text is when it is
// empty, a log line, a location or plain (judgeLines looks at nothing
// else before it returns); otherwise a value longer than the head whose
// head makes judgeLines find nothing, one line or not, holds none either
// (as for unescapeHead: no phrase rules on a long text).
func jsonHeadPlain(raw string) bool {
	n := len(raw)
	if n < 3 || n > hiddenEnvelope || raw[0] != '"' || raw[n-1] != '"' || !mayStartJSON(raw[1:n-1]) {
		return false
	}
	// The head is unescaped in two steps: most payloads are told by
	// their first members, in the first few hundred bytes.
	var h valueHead
	for _, limit := range [...]int{jsonFirstHead, longHead} {
		h.fill(raw[1:n-1], limit)
		if h.n == 0 {
			return false
		}
		t := strings.TrimLeft(unsafe.String(&h.b[0], h.n), " \t\r\n\ufeff")
		if t == "" || t[0] != '[' && t[0] != '{' {
			return false
		}
		if (firstLinePlain(t) || limit == longHead && h.more && len(t) > hiddenShort+utf8.UTFMax &&
			!lineSuspect(t, linesHead) && !lineSuspect(t, linesHeadOne)) && (t[0] == '[' || notEnvelope(t)) {
			return true
		}
		if !h.more {
			return false
		}
	}
	return false
}

// jsonFirstHead is how much of a JSON text's value jsonHeadPlain reads
// first.
const jsonFirstHead = 256

// valueHead is the head of a string literal's value, unescaped on the
// stack as jstr.AppendUnescapedText would (a prefix of the value).
type valueHead struct {
	b    [longHead + utf8.UTFMax]byte
	n    int  // bytes of b written
	i    int  // bytes of the literal's inside read
	more bool // the value goes on past b[:n]
}

// fill goes on unescaping in (the inside of the literal) until at least
// limit bytes (at most longHead) are written or the value ends; an escape
// it does not follow, a control character or a quote ends it as well, with
// more false (the caller then gives up: what is written is still a prefix
// of the value).
func (h *valueHead) fill(in string, limit int) {
	// i and n are h.i and h.n, kept in registers. Plain bytes are copied
	// eight at a time while eight more fit below limit, up to the first
	// byte that is not plain (specialBytes): every byte up to it is
	// written; the word's others are written over later or never read.
	i, n := h.i, h.n
	h.more = false
	src := unsafe.Slice(unsafe.StringData(in), len(in))
	for i < len(in) {
		if n >= limit {
			h.i, h.n, h.more = i, n, true
			return
		}
		for i+8 <= len(src) && n+8 <= limit {
			v := binary.LittleEndian.Uint64(src[i:])
			binary.LittleEndian.PutUint64(h.b[n:], v)
			if m := specialBytes(v); m != 0 {
				k := bits.TrailingZeros64(m) / 8
				n += k
				i += k
				break
			}
			n += 8
			i += 8
		}
		if i >= len(in) || n >= limit {
			continue
		}
		c := in[i]
		if c >= ' ' && c != '\\' && c != '"' {
			h.b[n] = c
			n++
			i++
			continue
		}
		if c != '\\' || i+1 >= len(in) {
			h.i, h.n = len(in), n
			return
		}
		if e := jsonstr.ShortEscapes[in[i+1]]; e != 0 {
			h.b[n] = e
			n++
			i += 2
			continue
		}
		if in[i+1] != 'u' || i+6 > len(in) {
			h.i, h.n = len(in), n
			return
		}
		out, k := jsonstr.AppendEscape(h.b[n:n:len(h.b)], src[i:])
		n += len(out)
		i += k
	}
	h.i, h.n = i, n
}

// mayStartJSON: the value of the literal whose inside is in may start, once
// trimmed as judgeText trims it, with '{' or '[' (false only when it
// surely does not).
func mayStartJSON(in string) bool {
	for i := 0; i < len(in); i++ {
		switch c := in[i]; c {
		case ' ':
		case '\\':
			if i+1 < len(in) && (in[i+1] == 'n' || in[i+1] == 't' || in[i+1] == 'r') {
				i++
				continue
			}
			return true // another escape: not followed here
		case '{', '[':
			return true
		default:
			return c >= utf8.RuneSelf // a byte-order mark, maybe
		}
	}
	return false
}

// firstLinePlain: the first line of t, a head of a text trimmed on the
// left, is known (see jsonHeadPlain) and judgeLines returns on it before
// any rule.
func firstLinePlain(t string) bool {
	head := t
	if len(head) > hiddenHead {
		head = head[:hiddenHead]
	}
	line := head
	if i := strings.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	} else if len(head) < hiddenHead {
		return false // the line may go on past the head
	}
	line = strings.TrimRight(line, " \t\r")
	return line == "" || isLogLine(line) || isLocation(line) || plainLine(line)
}

func lineSuspect(t string, mode int) bool {
	s, _ := judgeLines(t, mode)
	return s
}
