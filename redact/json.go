package redact

import (
	"bytes"
	"encoding/binary"
	"hash"
	"mcptrace/internal/jsonstr"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// The fast path of HashJSON and Shape: one pass checks that the value is
// strict JSON (RFC 8259) and records its tokens on a tape; the canonical
// form and the shape are then written from the tape. For strict JSON, gjson
// (which the slow path uses) reads every value the way the tape does, so
// both give the same bytes; anything else takes the slow path.
// equiv_test.go checks this against the implementation of before.

// jtok is one value on the tape (an object key is a string token).
type jtok struct {
	kind byte  // '{', '[', '"', 'n' (number), 't', 'f', 'z' (null)
	esc  bool  // a string with escapes
	a, b int32 // the text: a string's contents without quotes, a number or literal
	next int32 // the tape index after this value and everything in it
}

// jmember is an object member while its object is written: its key, and
// the tape index of its value.
type jmember struct {
	key []byte
	val int32
}

// jsonScratch holds the tape and the buffers of one goroutine.
type jsonScratch struct {
	raw     []byte
	tape    []jtok
	open    []int32 // containers not yet closed, while parsing
	members []jmember
	parts   []int // shape: where each distinct element shape of an array is in out
	arena   []byte
	tmp     []byte
	out     []byte
}

// maxScratch bounds what a scratch keeps between calls: a buffer grown
// larger by an unusual value is dropped.
const maxScratch = 256 << 10

func (j *jsonScratch) trim() {
	if cap(j.tape) > maxScratch/16 {
		j.tape = nil
	}
	if cap(j.out) > maxScratch {
		j.out = nil
	}
	if cap(j.tmp) > maxScratch {
		j.tmp = nil
	}
	if cap(j.arena) > maxScratch {
		j.arena = nil
	}
	if cap(j.members) > maxScratch/32 {
		j.members = nil
	}
	j.raw = nil
}

// Eight bytes at a time: whether a word holds a byte below 0x20, a quote or
// a backslash (and, for quoting, a byte of 0x80 or more). The tests are
// exact for whether there is one (bit hacks "hasless" and "haszero").
const (
	ones8 = 0x0101010101010101
	high8 = 0x8080808080808080
)

func specialIn(x uint64) uint64 {
	q, b := x^(ones8*'"'), x^(ones8*'\\')
	return ((x-ones8*0x20)&^x | (q-ones8)&^q | (b-ones8)&^b) & high8
}

// plainRun returns how many bytes at the start of s are printable ASCII
// other than a quote or backslash (0x7f counts as special).
func plainRun(s []byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if specialIn(x)|x&high8 != 0 {
			break
		}
		if (x+ones8)&high8 != 0 { // a 0x7f byte (0x7f+1 sets the high bit)
			break
		}
	}
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}

// strStop marks the bytes that end a run of plain string contents.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return
}()

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parse reads raw onto the tape; false if raw is not strict JSON (one
// value, white space around it allowed) or is too long for the tape.
func (j *jsonScratch) parse(raw []byte) bool {
	j.raw = raw
	j.tape = j.tape[:0]
	j.open = j.open[:0]
	if len(raw) >= 1<<31-1 {
		return false
	}
	n := len(raw)
	i := 0
	for i < n && isJSONSpace(raw[i]) {
		i++
	}
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := raw[i]; c {
		case '{', '[':
			j.open = append(j.open, int32(len(j.tape)))
			j.tape = append(j.tape, jtok{kind: c})
			i++
			for i < n && isJSONSpace(raw[i]) {
				i++
			}
			if i < n && raw[i] == c+2 { // '}' or ']': empty
				j.close()
				i++
				goto after
			}
			if c == '{' {
				if i = j.key(i); i < 0 {
					return false
				}
			}
			continue
		case '"':
			var ok bool
			if i, ok = j.str(i); !ok {
				return false
			}
		case 't', 'f', 'n':
			lit, kind := "true", byte('t')
			switch c {
			case 'f':
				lit, kind = "false", 'f'
			case 'n':
				lit, kind = "null", 'z'
			}
			if n-i < len(lit) || string(raw[i:i+len(lit)]) != lit {
				return false
			}
			j.tape = append(j.tape, jtok{kind: kind, a: int32(i), b: int32(i + len(lit)), next: int32(len(j.tape) + 1)})
			i += len(lit)
		default:
			e := number(raw, i)
			if e < 0 {
				return false
			}
			j.tape = append(j.tape, jtok{kind: 'n', a: int32(i), b: int32(e), next: int32(len(j.tape) + 1)})
			i = e
		}
	after:
		// A value ended before i: what follows it.
		for {
			for i < n && isJSONSpace(raw[i]) {
				i++
			}
			if len(j.open) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			top := j.tape[j.open[len(j.open)-1]].kind
			switch raw[i] {
			case ',':
				i++
				for i < n && isJSONSpace(raw[i]) {
					i++
				}
				if top == '{' {
					if i = j.key(i); i < 0 {
						return false
					}
				}
			case top + 2:
				j.close()
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// close ends the innermost open container.
func (j *jsonScratch) close() {
	k := j.open[len(j.open)-1]
	j.open = j.open[:len(j.open)-1]
	j.tape[k].next = int32(len(j.tape))
}

// key reads an object key and its colon at i; the index of the value, or -1.
func (j *jsonScratch) key(i int) int {
	raw := j.raw
	if i >= len(raw) || raw[i] != '"' {
		return -1
	}
	i, ok := j.str(i)
	if !ok {
		return -1
	}
	for i < len(raw) && isJSONSpace(raw[i]) {
		i++
	}
	if i >= len(raw) || raw[i] != ':' {
		return -1
	}
	i++
	for i < len(raw) && isJSONSpace(raw[i]) {
		i++
	}
	return i
}

// str reads a string at raw[i] == '"' onto the tape.
func (j *jsonScratch) str(i int) (int, bool) {
	raw := j.raw
	a := i + 1
	esc := false
	for k := a; k < len(raw); k++ {
		for k+8 <= len(raw) && specialIn(binary.LittleEndian.Uint64(raw[k:])) == 0 {
			k += 8
		}
		if k >= len(raw) {
			break
		}
		c := raw[k]
		if !strStop[c] {
			continue
		}
		switch {
		case c == '"':
			j.tape = append(j.tape, jtok{kind: '"', esc: esc, a: int32(a), b: int32(k), next: int32(len(j.tape) + 1)})
			return k + 1, true
		case c == '\\':
			esc = true
			if k+1 >= len(raw) {
				return 0, false
			}
			switch raw[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				k++
			case 'u':
				if k+5 >= len(raw) || !isHex(raw[k+2]) || !isHex(raw[k+3]) || !isHex(raw[k+4]) || !isHex(raw[k+5]) {
					return 0, false
				}
				k += 5
			default:
				return 0, false
			}
		default: // a control character
			return 0, false
		}
	}
	return 0, false
}

// number returns the end of the strict JSON number at raw[i:], or -1.
func number(raw []byte, i int) int {
	n := len(raw)
	if i < n && raw[i] == '-' {
		i++
	}
	switch {
	case i < n && raw[i] == '0':
		i++
	case i < n && '1' <= raw[i] && raw[i] <= '9':
		for i < n && isDigit(raw[i]) {
			i++
		}
	default:
		return -1
	}
	if i < n && raw[i] == '.' {
		i++
		if i >= n || !isDigit(raw[i]) {
			return -1
		}
		for i < n && isDigit(raw[i]) {
			i++
		}
	}
	if i < n && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < n && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if i >= n || !isDigit(raw[i]) {
			return -1
		}
		for i < n && isDigit(raw[i]) {
			i++
		}
	}
	return i
}

// bytesString views b as a string, for reading only while b is unchanged.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// text returns a string token's decoded contents (in tmp when it has
// escapes).
func (j *jsonScratch) text(t *jtok) []byte {
	s := j.raw[t.a:t.b]
	if !t.esc {
		return s
	}
	j.tmp = jsonstr.AppendUnescaped(j.tmp[:0], s)
	return j.tmp
}

// members collects the members of the object at tape index i onto
// j.members, sorted by key as the slow path sorts them, and returns where
// they start. Keys with escapes are decoded into the arena, which only
// grows during one value.
func (j *jsonScratch) sortedMembers(i int32) int {
	base := len(j.members)
	end := j.tape[i].next
	for k := i + 1; k < end; {
		t := &j.tape[k]
		key := j.raw[t.a:t.b]
		if t.esc {
			a := len(j.arena)
			j.arena = jsonstr.AppendUnescaped(j.arena, key)
			key = j.arena[a:len(j.arena):len(j.arena)]
		}
		j.members = append(j.members, jmember{key, k + 1})
		k = j.tape[k+1].next
	}
	ms := j.members[base:]
	if len(ms) < 2 {
		return base
	}
	slices.SortFunc(ms, func(x, y jmember) int { return bytes.Compare(x.key, y.key) })
	for k := 1; k < len(ms); k++ {
		if bytes.Equal(ms[k-1].key, ms[k].key) {
			// A repeated key: the order of equal keys is the one
			// sort.Slice (which the slow path uses, and which is not
			// stable) gives them from the order of the text.
			slices.SortFunc(ms, func(x, y jmember) int { return int(x.val - y.val) })
			sort.Slice(ms, func(a, b int) bool { return bytes.Compare(ms[a].key, ms[b].key) < 0 })
			break
		}
	}
	return base
}

// flushAt is how much canonical text is gathered before it goes into the
// hash.
const flushAt = 4096

// canonical writes the canonical form of the value at tape index i (at
// depth) to j.out, flushing it into m as it grows.
func (j *jsonScratch) canonical(i int32, depth int, m hash.Hash) {
	if len(j.out) >= flushAt {
		m.Write(j.out)
		j.out = j.out[:0]
	}
	t := &j.tape[i]
	if depth > maxShapeDepth {
		j.out = append(j.out, `"…"`...)
		return
	}
	switch t.kind {
	case '{':
		base := j.sortedMembers(i)
		n := len(j.members) - base
		j.out = append(j.out, '{')
		for k := 0; k < n; k++ {
			if k > 0 {
				j.out = append(j.out, ',')
			}
			mb := j.members[base+k]
			j.out = appendQuoted(j.out, mb.key)
			j.out = append(j.out, ':')
			j.canonical(mb.val, depth+1, m)
		}
		j.members = j.members[:base]
		if base == 0 {
			j.arena = j.arena[:0]
		}
		j.out = append(j.out, '}')
	case '[':
		j.out = append(j.out, '[')
		for k := i + 1; k < t.next; k = j.tape[k].next {
			if k > i+1 {
				j.out = append(j.out, ',')
			}
			j.canonical(k, depth+1, m)
		}
		j.out = append(j.out, ']')
	case '"':
		s := j.raw[t.a:t.b]
		if t.esc {
			s = j.text(t)
		} else if len(s) >= flushAt && plain(s) {
			// A long plain string goes into the hash as it is.
			j.out = append(j.out, '"')
			m.Write(j.out)
			m.Write(s)
			j.out = append(j.out[:0], '"')
			return
		}
		j.out = appendQuoted(j.out, s)
	default:
		j.out = append(j.out, j.raw[t.a:t.b]...)
	}
}

// plain: every byte is printable ASCII other than a quote or backslash, so
// strconv.Quote would write s as it is.
func plain(s []byte) bool { return plainRun(s) == len(s) }

// appendQuoted appends strconv.Quote(s). strconv escapes each rune on its
// own (an invalid byte as \x..), so s is done rune by rune: runs of
// printable ASCII and printable runes beyond ASCII are copied, any other
// rune quoted by strconv.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		k := i + plainRun(s[i:])
		dst = append(dst, s[i:k]...)
		if k == len(s) {
			break
		}
		switch s[k] { // what strconv writes for these
		case '\n':
			dst = append(dst, '\\', 'n')
			i = k + 1
			continue
		case '\t':
			dst = append(dst, '\\', 't')
			i = k + 1
			continue
		case '\r':
			dst = append(dst, '\\', 'r')
			i = k + 1
			continue
		case '"', '\\':
			dst = append(dst, '\\', s[k])
			i = k + 1
			continue
		}
		r, w := rune(s[k]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(s[k:])
		}
		if r >= utf8.RuneSelf && !(r == utf8.RuneError && w == 1) && strconv.IsPrint(r) {
			dst = append(dst, s[k:k+w]...)
		} else {
			at := len(dst)
			dst = strconv.AppendQuote(dst, bytesString(s[k:k+w]))
			// Drop the quotes strconv put around the rune.
			copy(dst[at:], dst[at+1:len(dst)-1])
			dst = dst[:len(dst)-2]
		}
		i = k + w
	}
	return append(dst, '"')
}

// shape writes the shape of the value at tape index i (at depth) to j.out,
// masking object keys as the slow path does.
func (j *jsonScratch) shape(i int32, depth int, st *Stats, sc *scratch) {
	t := &j.tape[i]
	if depth > maxShapeDepth {
		j.out = append(j.out, `"…"`...)
		return
	}
	switch t.kind {
	case '{':
		base := j.sortedMembers(i)
		n := len(j.members) - base
		j.out = append(j.out, '{')
		for k := 0; k < n; k++ {
			if k > 0 {
				j.out = append(j.out, ',')
			}
			mb := j.members[base+k]
			key := bytesString(mb.key)
			if m := sc.mask(key, st); m != key {
				j.out = strconv.AppendQuote(j.out, m)
			} else {
				j.out = appendQuoted(j.out, mb.key)
			}
			j.out = append(j.out, ':')
			j.shape(mb.val, depth+1, st, sc)
		}
		j.members = j.members[:base]
		if base == 0 {
			j.arena = j.arena[:0]
		}
		j.out = append(j.out, '}')
	case '[':
		// One entry per distinct element shape, in order of first sight,
		// at most 8.
		j.out = append(j.out, '[')
		pbase := len(j.parts)
		for k := i + 1; k < t.next && len(j.parts)-pbase < 2*8; k = j.tape[k].next {
			at := len(j.out)
			if len(j.parts) > pbase {
				j.out = append(j.out, ',')
			}
			s := len(j.out)
			j.shape(k, depth+1, st, sc)
			el := j.out[s:]
			seen := false
			for p := pbase; p < len(j.parts); p += 2 {
				if bytes.Equal(j.out[j.parts[p]:j.parts[p+1]], el) {
					seen = true
					break
				}
			}
			if seen {
				j.out = j.out[:at]
			} else {
				j.parts = append(j.parts, s, len(j.out))
			}
		}
		j.parts = j.parts[:pbase]
		j.out = append(j.out, ']')
	case '"':
		j.out = append(j.out, `"string"`...)
	case 'n':
		j.out = append(j.out, `"number"`...)
	case 't', 'f':
		j.out = append(j.out, `"boolean"`...)
	default:
		j.out = append(j.out, `"null"`...)
	}
}
