package decode

import (
	"bytes"
	"hash/fnv"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// MaxDepth is the deepest JSON nesting accepted, in a log line or in a body.
// Deeper input is refused before any recursive parser sees it.
const MaxDepth = 512

// MaxBatch is the most elements a JSON array body may have to be read as a
// batch; a larger array is one invalid message (no real client batches more).
const MaxBatch = 1000

// maxInvalidRaw bounds what is kept of a body that is not JSON.
const maxInvalidRaw = 512

// depthExceeds reports whether b nests arrays and objects deeper than max,
// scanning bytes once and skipping strings.
func depthExceeds(b []byte, max int) bool {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
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
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// validJSON reports whether b is JSON, refusing nesting deeper than
// MaxDepth before gjson's recursive validator sees it (a few megabytes of
// "[" would otherwise exhaust the stack).
func validJSON(b []byte) bool {
	return !depthExceeds(b, MaxDepth) && gjson.ValidBytes(b)
}

// AppendMessages parses body (one JSON-RPC message, or a batch array) and
// appends what it holds to dst. A body that is not JSON yields one
// MsgInvalidJSON message; an empty body yields nothing.
func AppendMessages(dst []schema.Message, body []byte, where schema.Where, event int) []schema.Message {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return dst
	}
	if depthExceeds(body, MaxDepth) {
		return append(dst, schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgOther, Raw: clip(body)})
	}
	if !gjson.ValidBytes(body) {
		return append(dst, schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgInvalidJSON, Raw: clip(body)})
	}
	r := gjson.ParseBytes(body)
	if r.IsArray() {
		n := 0
		r.ForEach(func(_, _ gjson.Result) bool { n++; return n <= MaxBatch })
		if n == 0 || n > MaxBatch {
			// An empty array is no message; a huge one is refused whole
			// rather than expanded.
			return append(dst, schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgOther, Raw: clip(body)})
		}
		i := 0
		r.ForEach(func(_, el gjson.Result) bool {
			dst = append(dst, message(el, where, event, i))
			i++
			return true
		})
		return dst
	}
	return append(dst, message(r, where, event, -1))
}

func clip(b []byte) []byte {
	if len(b) > maxInvalidRaw {
		b = b[:maxInvalidRaw]
	}
	return append([]byte(nil), b...)
}

func message(r gjson.Result, where schema.Where, event, batch int) schema.Message {
	m := schema.Message{Where: where, Event: event, BatchIndex: batch, Raw: []byte(r.Raw)}
	if !r.IsObject() {
		m.Kind = schema.MsgOther
		return m
	}
	// A repeated key resolves as JSON.parse resolves it: the last wins.
	var f [5]gjson.Result
	jsonobj.Pick(r, f[:], "method", "id", "result", "error", "params")
	method, id, result, errv, params := f[0], f[1], f[2], f[3], f[4]
	m.ID = idOf(id)
	switch {
	case method.Exists() && method.Type == gjson.String:
		m.Method = method.Str
		if id.Exists() {
			m.Kind = schema.MsgRequest
			h := fnv.New64a()
			h.Write([]byte(method.Str))
			h.Write([]byte{0})
			h.Write([]byte(params.Raw))
			m.ParamsHash = h.Sum64()
			m.CallHash = callHash(method.Str, params)
		} else {
			m.Kind = schema.MsgNotification
		}
	case result.Exists() || errv.Exists():
		m.Kind = schema.MsgResponse
	default:
		m.Kind = schema.MsgOther
	}
	return m
}

func idOf(v gjson.Result) schema.ID {
	if !v.Exists() {
		return schema.ID{Type: schema.IDAbsent}
	}
	switch v.Type {
	case gjson.Null:
		return schema.ID{Type: schema.IDNull}
	case gjson.Number:
		return schema.ID{Type: schema.IDNumber, Text: v.Raw}
	case gjson.String:
		return schema.ID{Type: schema.IDString, Text: v.Str}
	}
	return schema.ID{Type: schema.IDOther, Text: v.Raw}
}

// callHash identifies what a request asks for, apart from how it is sent:
// the method, the tool, prompt or resource it names, and its arguments as
// written. Two sends of the same call under different ids (an application
// retry, an MRTR continuation) share it; _meta, inputResponses and
// requestState are left out.
func callHash(method string, params gjson.Result) uint64 {
	h := fnv.New64a()
	h.Write([]byte(method))
	for _, k := range []string{"name", "uri", "arguments", "ref", "argument", "cursor"} {
		h.Write([]byte{0})
		h.Write([]byte(jsonobj.Get(params, k).Raw))
	}
	return h.Sum64()
}
