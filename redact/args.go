package redact

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// HashJSON is a keyed hash of a JSON value in canonical form (object keys
// sorted, no insignificant white space, numbers and strings as written), so
// identical tool calls group together whatever their key order, and nobody
// without the key can test a guess. It carries the key id like a pseudonym.
//
// The canonical form is streamed into the hash from the value's tokens,
// never built whole. Strings are written as Go quotes them (strconv.Quote)
// and values nested deeper than 32 levels as "…": the hash of a value is the
// same as it has always been, so pseudonyms compare across runs.
func (p *Pseudonymizer) HashJSON(raw []byte) string {
	sc := getScratch()
	h := sc.hashJSON(p, raw)
	putScratch(sc)
	return h
}

// hashJSON is HashJSON on sc's buffers.
func (sc *scratch) hashJSON(p *Pseudonymizer, raw []byte) string {
	return sc.hashParsed(p, raw, sc.json.parse(raw))
}

// hashParsed is hashJSON once raw was parsed (strict: it is on the tape).
func (sc *scratch) hashParsed(p *Pseudonymizer, raw []byte, strict bool) string {
	m := sc.mac(p)
	m.Write(argsPrefix)
	if j := &sc.json; strict {
		j.out = j.out[:0]
		j.canonical(0, 0, m)
		m.Write(j.out)
	} else {
		// Not strict JSON: the form gjson gives it, as before.
		var b bytes.Buffer
		canonical(&b, gjson.ParseBytes(raw), 0)
		m.Write(b.Bytes())
	}
	return p.format(m.Sum(sc.sum[:0]))
}

// arguments is HashJSON and Shape, reading raw once.
func (sc *scratch) arguments(p *Pseudonymizer, raw []byte, st *Stats) (hash, shape string) {
	strict := sc.json.parse(raw)
	return sc.hashParsed(p, raw, strict), sc.shapeParsed(raw, strict, st)
}

var argsPrefix = []byte("args\x00")

const maxShapeDepth = 32

// canonical and shape below are the forms of values that are not strict
// JSON, as gjson reads them; json.go has the fast path for the rest.

func canonical(b *bytes.Buffer, v gjson.Result, depth int) {
	if depth > maxShapeDepth {
		b.WriteString(`"…"`)
		return
	}
	switch {
	case v.IsObject():
		b.WriteByte('{')
		for i, e := range sortedMembers(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(e.k))
			b.WriteByte(':')
			canonical(b, e.v, depth+1)
		}
		b.WriteByte('}')
	case v.IsArray():
		b.WriteByte('[')
		i := 0
		v.ForEach(func(_, x gjson.Result) bool {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, x, depth+1)
			i++
			return true
		})
		b.WriteByte(']')
	case v.Type == gjson.String:
		b.WriteString(strconv.Quote(v.Str))
	default:
		b.WriteString(v.Raw)
	}
}

// Shape describes a JSON value by its keys and value types only, never its
// values: {"path":"string","options":{"recursive":"boolean"},"ids":["number"]}.
// Keys are run through the detectors, since a key can itself be a secret.
func Shape(raw []byte, st *Stats) string {
	sc := getScratch()
	s := sc.shape(raw, st)
	putScratch(sc)
	return s
}

// shape is Shape on sc's buffers.
func (sc *scratch) shape(raw []byte, st *Stats) string {
	return sc.shapeParsed(raw, sc.json.parse(raw), st)
}

// shapeParsed is shape once raw was parsed (strict: it is on the tape).
func (sc *scratch) shapeParsed(raw []byte, strict bool, st *Stats) string {
	j := &sc.json
	if !strict {
		var b strings.Builder
		shape(&b, gjson.ParseBytes(raw), 0, st)
		return b.String()
	}
	j.out = j.out[:0]
	j.shape(0, 0, st, sc)
	// The same tools are called with the same argument names: one
	// string for each shape.
	if e, ok := sc.shapes.get(bytesString(j.out)); ok {
		return e.out
	}
	s := string(j.out)
	if len(s) <= maxMemoText {
		sc.shapes.putOwned(s, s, counts{})
	}
	return s
}

func shape(b *strings.Builder, v gjson.Result, depth int, st *Stats) {
	if depth > maxShapeDepth {
		b.WriteString(`"…"`)
		return
	}
	switch {
	case v.IsObject():
		b.WriteByte('{')
		for i, e := range sortedMembers(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(MaskWith(e.k, st)))
			b.WriteByte(':')
			shape(b, e.v, depth+1, st)
		}
		b.WriteByte('}')
	case v.IsArray():
		// One entry per distinct element shape, in order of first sight.
		seen := map[string]bool{}
		var parts []string
		v.ForEach(func(_, x gjson.Result) bool {
			var sb strings.Builder
			shape(&sb, x, depth+1, st)
			if s := sb.String(); !seen[s] {
				seen[s] = true
				parts = append(parts, s)
			}
			return len(parts) < 8
		})
		b.WriteString("[" + strings.Join(parts, ",") + "]")
	case v.Type == gjson.String:
		b.WriteString(`"string"`)
	case v.Type == gjson.Number:
		b.WriteString(`"number"`)
	case v.Type == gjson.True, v.Type == gjson.False:
		b.WriteString(`"boolean"`)
	case v.Type == gjson.Null:
		b.WriteString(`"null"`)
	default:
		b.WriteString(`"invalid"`)
	}
}

type member struct {
	k string
	v gjson.Result
}

// sortedMembers returns an object's members sorted by key.
func sortedMembers(v gjson.Result) []member {
	var ms []member
	v.ForEach(func(k, x gjson.Result) bool { ms = append(ms, member{k.Str, x}); return true })
	sort.Slice(ms, func(i, j int) bool { return ms[i].k < ms[j].k })
	return ms
}
