package decode

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"sync/atomic"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// DefaultMaxDepth is the deepest JSON nesting accepted unless configured
// otherwise (ingest -max-depth), in a log line, a document or a body.
// Deeper input is refused before any recursive parser sees it.
const DefaultMaxDepth = 512

// MaxMaxDepth is the largest depth limit SetMaxDepth accepts: Go's
// encoding/json, which later stages use on message text, refuses nesting
// past 10000 levels itself, and recursive parsers (gjson) must stay far
// from exhausting a goroutine's stack.
const MaxMaxDepth = 10000

// maxDepth is the depth limit in force (MaxDepth, SetMaxDepth).
var maxDepth atomic.Int64

func init() { maxDepth.Store(DefaultMaxDepth) }

// MaxDepth is the deepest JSON nesting accepted, in a log line, a document
// or a body: DefaultMaxDepth unless SetMaxDepth changed it.
func MaxDepth() int { return int(maxDepth.Load()) }

// SetMaxDepth sets the depth limit for every decoder of the process
// (ingest -max-depth); n outside 1..MaxMaxDepth restores DefaultMaxDepth.
// It is process-wide: set it before decoding starts (a decoder reads it
// once per line or document), not while a run with another limit decodes.
func SetMaxDepth(n int) {
	if n < 1 || n > MaxMaxDepth {
		n = DefaultMaxDepth
	}
	maxDepth.Store(int64(n))
}

// depthDetail is the detail of a record quarantined as ReasonTooDeep.
func depthDetail(what string) string {
	return fmt.Sprintf("%s nests deeper than %d levels (-max-depth)", what, MaxDepth())
}

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
	return !depthExceeds(b, MaxDepth()) && gjson.ValidBytes(b)
}

// AppendMessages parses body (one JSON-RPC message, or a batch array) and
// appends what it holds to dst. A body that is not JSON yields one
// MsgInvalidJSON message; an empty body yields nothing.
//
// Each message is read in one pass (msgReader) and carries its RPC fields;
// the messages of one body share one copy of it (Raw and the RPC strings
// are pieces of it) and one array of RPC values.
func AppendMessages(dst []schema.Message, body []byte, where schema.Where, event int) []schema.Message {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return dst
	}
	own := append([]byte(nil), body...)
	var r msgReader
	var buf [2]schema.RPC
	n := len(dst)
	dst, rpcs, ok := r.readBody(dst, buf[:0], own, where, event)
	if !ok {
		return append(dst, invalidBody(body, where, event))
	}
	placeRPC(dst[n:], rpcs, nil)
	return dst
}

// invalidBody is the one message of a body that is not JSON (or nests too
// deep to be read).
func invalidBody(body []byte, where schema.Where, event int) schema.Message {
	if depthExceeds(body, MaxDepth()) {
		return schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgOther, Raw: clip(body)}
	}
	return schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgInvalidJSON, Raw: clip(body)}
}

// placeRPC gives the RPC values read for msgs (in order, one for each
// message marked pendingRPC) their final place: slab when it is long
// enough, else a new array.
func placeRPC(msgs []schema.Message, rpcs []schema.RPC, slab []schema.RPC) {
	if len(rpcs) == 0 {
		return
	}
	if len(slab) < len(rpcs) {
		slab = make([]schema.RPC, len(rpcs))
	}
	copy(slab, rpcs)
	j := 0
	for i := range msgs {
		if msgs[i].RPC == pendingRPC {
			msgs[i].RPC = &slab[j]
			j++
		}
	}
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
