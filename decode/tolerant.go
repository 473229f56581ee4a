package decode

import (
	"bytes"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// Claude Desktop cuts long frames in the middle and writes what it removed
// as "[N chars truncated]", usually with "..." on both sides:
//
//	{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"rea...[11759 chars truncated]...ories"}]}}
//
// What is left is a true prefix of the message (the head) and a true suffix
// (the tail) around a lost middle. It is not JSON any more, but both ends can
// still be read exactly: the head forwards from the opening brace, the tail
// backwards from the closing one. That is what this file does, and nothing
// more: the members of the top-level object that lie wholly in the head or
// wholly in the tail are recovered; a member cut by the marker is known only
// by its key (enough to say "result" or "error" was there), and a member lost
// in the middle is not known at all.
var truncMarker = regexp.MustCompile(`\[\d+ chars truncated\]`)

// HasTruncationMarker reports whether b holds Claude Desktop's
// "[N chars truncated]" marker.
func HasTruncationMarker(b []byte) bool {
	return bytes.Contains(b, []byte(" chars truncated]")) && truncMarker.Match(b)
}

// Truncation is what a tolerant scan recovered from a cut message. Fields
// the cut removed stay empty; nothing is filled in by guessing.
type Truncation struct {
	ID        schema.ID // IDAbsent when no top-level "id" survived whole
	Method    string    // "" when no top-level "method" string survived whole
	HasMethod bool
	HasResult bool // a top-level "result" key survived (its value may be cut)
	HasError  bool // a top-level "error" key survived (its value may be cut)
}

// ScanTruncated recovers the top-level id, method and the presence of
// result or error from a message cut by one or more truncation markers:
// the head before the first marker is read forwards, the tail after the
// last marker backwards. A member found in both keeps the head's reading.
func ScanTruncated(raw []byte) Truncation {
	var t Truncation
	t.ID.Type = schema.IDAbsent
	locs := truncMarker.FindAllIndex(raw, -1)
	if len(locs) == 0 {
		// Not cut by the marker: the whole text is a head with no tail.
		scanHead(raw, &t)
		return t
	}
	head := raw[:locs[0][0]]
	head = bytes.TrimSuffix(head, []byte("..."))
	head = bytes.TrimSuffix(head, []byte("…"))
	tail := raw[locs[len(locs)-1][1]:]
	tail = bytes.TrimPrefix(tail, []byte("..."))
	tail = bytes.TrimPrefix(tail, []byte("…"))
	scanHead(head, &t)
	scanTail(tail, &t)
	return t
}

// TruncatedMessage is the one message made of a frame the log cut short:
// Truncated is set, Raw is the frame as logged (not valid JSON), and Kind,
// ID and Method are what ScanTruncated recovered. A recovered method makes
// it a request (with an id) or a notification; a recovered result or error
// key without a method makes it a response; with neither it is
// MsgInvalidJSON (its id, if one survived, is kept). A method without an id
// is a notification only when it is a notifications/ method.
func TruncatedMessage(raw []byte, where schema.Where, event int) schema.Message {
	t := ScanTruncated(raw)
	m := schema.Message{Where: where, Event: event, BatchIndex: -1, Raw: append([]byte(nil), raw...), Truncated: true, ID: t.ID, Method: t.Method}
	switch {
	case t.HasMethod && t.ID.Type != schema.IDAbsent:
		m.Kind = schema.MsgRequest
		// The params are cut: hash what is left so that two different cut
		// requests are not taken for a repeat of one another.
		h := fnv.New64a()
		h.Write([]byte(t.Method))
		h.Write([]byte{0})
		h.Write(raw)
		m.ParamsHash = h.Sum64()
	case t.HasMethod && strings.HasPrefix(t.Method, "notifications/"):
		// Without an id only a notification method says it is one: the id
		// of a request may simply have been cut away.
		m.Kind = schema.MsgNotification
	case t.HasResult || t.HasError:
		m.Kind = schema.MsgResponse
	default:
		m.Kind = schema.MsgInvalidJSON
	}
	return m
}

func (t *Truncation) set(key string, val []byte, whole bool) {
	switch key {
	case "result":
		t.HasResult = true
	case "error":
		t.HasError = true
	case "id":
		if whole && t.ID.Type == schema.IDAbsent {
			t.ID = idOf(gjson.ParseBytes(val))
			if !validJSON(val) {
				t.ID = schema.ID{Type: schema.IDAbsent}
			}
		}
	case "method":
		if whole && !t.HasMethod {
			if r := gjson.ParseBytes(val); validJSON(val) && r.Type == gjson.String {
				t.Method, t.HasMethod = r.Str, true
			}
		}
	}
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the JSON string
// starting at b[i] == '"'; ok is false when the string is cut.
func stringEnd(b []byte, i int) (next int, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

// readString reads the JSON string starting at b[i] == '"' and returns its
// value and the index after the closing quote; ok is false when it is cut.
func readString(b []byte, i int) (s string, next int, ok bool) {
	j, ok := stringEnd(b, i)
	if !ok {
		return "", j, false
	}
	return gjson.ParseBytes(b[i:j]).Str, j, true
}

// skipValue returns the index after the JSON value starting at b[i], and
// whether the value ended inside b (a number or literal must be followed
// by a delimiter to be known whole).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k, ok := stringEnd(b, j)
				if !ok {
					return len(b), false
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	for j := i; j < len(b); j++ {
		switch c := b[j]; {
		case c == ',' || c == '}' || c == ']' || isWS(c):
			return j, true
		}
	}
	return len(b), false
}

// scanHead reads the members of the top-level object forwards until the
// text ends.
func scanHead(b []byte, t *Truncation) {
	scanObject(b, skipWS(b, 0), func(key string, val []byte, whole bool) bool {
		t.set(key, val, whole)
		return whole
	})
}

// scanObject calls fn for each member of the object starting at b[i] ('{')
// in order: its key, its raw value, and whether the value is whole (false for
// the last member of an object cut short). It stops when fn returns false,
// at the end of the object, or where the input ends or breaks. It never
// recurses, so input cut anywhere (a sniff head, a truncated frame) is safe.
func scanObject(b []byte, i int, fn func(key string, val []byte, whole bool) bool) {
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] == '}' {
			return
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return
		}
		key, j, ok := readString(b, i)
		if !ok {
			return
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			fn(key, nil, false)
			return
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			fn(key, nil, false)
			return
		}
		end, whole := skipValue(b, i)
		if !fn(key, b[i:end], whole) || !whole {
			return
		}
		i = end
	}
}

// quoteStart returns the index of the opening quote of the JSON string whose
// closing quote is b[end], or -1 when the string starts before b: a quote
// preceded by an even number of backslashes is not escaped.
func quoteStart(b []byte, end int) int {
	for p := end - 1; p >= 0; p-- {
		if b[p] != '"' {
			continue
		}
		n := 0
		for q := p - 1; q >= 0 && b[q] == '\\'; q-- {
			n++
		}
		if n%2 == 0 {
			return p
		}
	}
	return -1
}

// valueStart returns the index where the JSON value ending at b[end]
// starts, or -1 when it starts before b.
func valueStart(b []byte, end int) int {
	switch b[end] {
	case '"':
		return quoteStart(b, end)
	case '}', ']':
		depth := 0
		for p := end; p >= 0; p-- {
			switch b[p] {
			case '"':
				p = quoteStart(b, p)
				if p < 0 {
					return -1
				}
			case '}', ']':
				depth++
			case '{', '[':
				depth--
				if depth == 0 {
					return p
				}
			}
		}
		return -1
	}
	p := end
	for p >= 0 && !isWS(b[p]) && b[p] != ':' && b[p] != ',' && b[p] != '[' && b[p] != '{' {
		p--
	}
	if p < 0 {
		return -1 // the literal may go on before the cut
	}
	return p + 1
}

func skipWSBack(b []byte, i int) int {
	for i >= 0 && isWS(b[i]) {
		i--
	}
	return i
}

// scanTail reads the members of the top-level object backwards from its
// closing brace until the text (which starts after the cut) runs out.
func scanTail(b []byte, t *Truncation) {
	i := skipWSBack(b, len(b)-1)
	if i < 0 || b[i] != '}' {
		return
	}
	i--
	for {
		i = skipWSBack(b, i)
		if i < 0 || b[i] == '{' {
			return
		}
		vs := valueStart(b, i)
		if vs < 0 {
			return
		}
		val := b[vs : i+1]
		i = skipWSBack(b, vs-1)
		if i < 0 || b[i] != ':' {
			return
		}
		i = skipWSBack(b, i-1)
		if i < 0 || b[i] != '"' {
			return
		}
		ks := quoteStart(b, i)
		if ks < 0 {
			return
		}
		key, _, ok := readString(b, ks)
		if !ok {
			return
		}
		t.set(key, val, true)
		i = skipWSBack(b, ks-1)
		if i < 0 || b[i] != ',' {
			return
		}
		i--
	}
}
