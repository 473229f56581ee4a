package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// HashJSON is a keyed hash of a JSON value in canonical form (object keys
// sorted, no insignificant white space, numbers and strings as written), so
// identical tool calls group together whatever their key order, and nobody
// without the key can test a guess. It carries the key id like a pseudonym.
func (p *Pseudonymizer) HashJSON(raw []byte) string {
	var b bytes.Buffer
	canonical(&b, gjson.ParseBytes(raw), 0)
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte("args\x00"))
	m.Write(b.Bytes())
	sum := m.Sum(nil)
	return p.keyID + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

const maxShapeDepth = 32

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
	var b strings.Builder
	shape(&b, gjson.ParseBytes(raw), 0, st)
	return b.String()
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
