package decode

import (
	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// msgReader reads the JSON-RPC messages of one body in one pass of the
// scanner: it validates the body and fills each message's Kind, ID,
// Method, hashes and RPC fields as it goes (see schema.RPC). The body must
// be memory the messages may keep: Raw is a piece of it and so are the RPC
// strings that have no escapes.
type msgReader struct {
	s scanner
	// odd: the message being read has a member the fast readers do not
	// handle (repeated, or with an escaped name); it is read again the
	// general way (message) and gets no RPC.
	odd bool
	// intern, when set, gives the strings that outlive the message (ids,
	// methods, tool names) memory of their own, shared between messages.
	intern func([]byte) string
}

// pendingRPC marks, while a body is read, the messages whose RPC is to be
// set once the RPC values have their final place (in order).
var pendingRPC = new(schema.RPC)

// readBody appends the messages of body (trimmed, non-empty, owned) to dst
// and their RPC values, in order, to rpcs; each message that has one gets
// pendingRPC, for the caller to point at its final copy. It reports
// whether body is valid JSON no deeper than MaxDepth; when it is not,
// nothing is appended and the caller makes the one invalid message.
func (r *msgReader) readBody(dst []schema.Message, rpcs []schema.RPC, body []byte, where schema.Where, event int) ([]schema.Message, []schema.RPC, bool) {
	r.s = scanner{b: body}
	s := &r.s
	n0, k0 := len(dst), len(rpcs)
	if body[0] != '[' {
		var ok bool
		dst, rpcs, ok = r.message(dst, rpcs, where, event, -1)
		if !ok || s.i != len(body) {
			return dst[:n0], rpcs[:k0], false
		}
		return dst, rpcs, true
	}
	// A batch, or a value the size of one refused whole.
	s.enter()
	n := 0
	for ; ; n++ {
		done, ok := s.elem(n)
		if !ok {
			return dst[:n0], rpcs[:k0], false
		}
		if done {
			break
		}
		if n >= MaxBatch {
			if _, ok := s.value(); !ok {
				return dst[:n0], rpcs[:k0], false
			}
			continue
		}
		if dst, rpcs, ok = r.message(dst, rpcs, where, event, n); !ok {
			return dst[:n0], rpcs[:k0], false
		}
	}
	if s.i != len(body) {
		return dst[:n0], rpcs[:k0], false
	}
	if n == 0 || n > MaxBatch {
		// An empty array is no message; a huge one is refused whole rather
		// than expanded.
		dst, rpcs = dst[:n0], rpcs[:k0]
		dst = append(dst, schema.Message{Where: where, Event: event, BatchIndex: -1, Kind: schema.MsgOther, Raw: clip(body)})
	}
	return dst, rpcs, true
}

// message reads the value at the scanner's position as one message.
func (r *msgReader) message(dst []schema.Message, rpcs []schema.RPC, where schema.Where, event, batch int) ([]schema.Message, []schema.RPC, bool) {
	s := &r.s
	b := s.b
	start := s.i
	if s.i >= len(b) || b[s.i] != '{' {
		t, ok := s.value()
		if !ok {
			return dst, rpcs, false
		}
		return append(dst, schema.Message{Where: where, Event: event, BatchIndex: batch, Kind: schema.MsgOther, Raw: b[start:t.end:t.end]}), rpcs, true
	}
	r.odd = false
	var rpc schema.RPC
	// The parts are read here and given a place of their own only when
	// the message keeps its RPC (see schema.RPC.Err).
	var req schema.RPCParams
	var res schema.RPCResult
	var rerr schema.RPCError
	var top [6]tok // jsonrpc, id, method, params, result, error
	var hash [6]tok
	if !s.enter() {
		return dst, rpcs, false
	}
	var seen uint8
	for n := 0; ; n++ {
		key, esc, done, ok := s.key(n)
		if !ok {
			return dst, rpcs, false
		}
		if done {
			break
		}
		if esc {
			r.odd = true
		}
		f := -1
		switch string(key) {
		case "jsonrpc":
			f = 0
		case "id":
			f = 1
		case "method":
			f = 2
		case "params":
			f = 3
		case "result":
			f = 4
		case "error":
			f = 5
		}
		if f < 0 {
			if _, ok := s.value(); !ok {
				return dst, rpcs, false
			}
			continue
		}
		if seen&(1<<f) != 0 {
			r.odd = true
		}
		seen |= 1 << f
		st := s.i
		switch {
		case f == 3 && b[s.i] == '{':
			ok = r.params(&req, &hash)
		case f == 4 && b[s.i] == '{':
			ok = r.result(&res)
		case f == 5 && b[s.i] == '{':
			ok = r.errorObj(&rerr)
		default:
			var t tok
			if t, ok = s.value(); !ok {
				return dst, rpcs, false
			}
			top[f] = t
			continue
		}
		if !ok {
			return dst, rpcs, false
		}
		top[f] = tok{kind: schema.JSONObject, start: st, end: s.i}
	}
	end := s.i
	raw := b[start:end:end]
	m := schema.Message{Where: where, Event: event, BatchIndex: batch, Raw: raw}
	if r.odd {
		// The general way, as the readers after us will read it too.
		m = message(gjson.Parse(bstr(raw)), where, event, batch)
		m.Raw = raw
		return append(dst, m), rpcs, true
	}
	jsonrpc, id, method, params, result, errv := top[0], top[1], top[2], top[3], top[4], top[5]
	rpc.JSONRPC20 = jsonrpc.kind == schema.JSONString && jsonrpc.text(b) == "2.0"
	rpc.Params, rpc.Result, rpc.Error = params.kind, result.kind, errv.kind
	m.ID = r.idOf(b, id)
	switch {
	case method.kind == schema.JSONString:
		m.Method = r.str(b, method)
		if id.kind.Exists() {
			m.Kind = schema.MsgRequest
			m.ParamsHash, m.CallHash = hashes(b, m.Method, params, &hash)
		} else {
			m.Kind = schema.MsgNotification
			if m.Method != "notifications/cancelled" {
				return append(dst, m), rpcs, true // nothing reads it but its count
			}
		}
	case result.kind.Exists() || errv.kind.Exists():
		m.Kind = schema.MsgResponse
	default:
		m.Kind = schema.MsgOther
	}
	m.RPC = pendingRPC
	rpc.Req, rpc.Res, rpc.Err = schema.NoRPCParams, schema.NoRPCResult, schema.NoRPCError
	if params.kind == schema.JSONObject {
		rpc.Req = new(schema.RPCParams)
		*rpc.Req = req
	}
	if result.kind == schema.JSONObject {
		rpc.Res = new(schema.RPCResult)
		*rpc.Res = res
	}
	if errv.kind == schema.JSONObject {
		rpc.Err = new(schema.RPCError)
		*rpc.Err = rerr
	}
	return append(dst, m), append(rpcs, rpc), true
}

// hashes computes ParamsHash and CallHash as message and callHash do, from
// the spans of the one parse (FNV-1a, without allocating). Each FNV-1a
// chain waits on a multiplication per byte, so the two are fed side by
// side (fnv2): CallHash's members, taken in its order, run alongside the
// start of ParamsHash's params text, and the rest of each runs alone.
func hashes(b []byte, method string, params tok, hash *[6]tok) (uint64, uint64) {
	hm := fnvString(fnvOffset, method)
	ph := fnvByte(hm, 0)
	var p []byte // what ph has still to take
	if params.kind.Exists() {
		p = b[params.start:params.end]
	}
	ch := hm
	obj := params.kind == schema.JSONObject
	for _, t := range hash {
		ch = fnvByte(ch, 0)
		if t.kind.Exists() && obj {
			m := b[t.start:t.end]
			n := min(len(m), len(p))
			ph, ch = fnv2(ph, p[:n], ch, m[:n])
			p = p[n:]
			ch = fnvBytes(ch, m[n:])
		}
	}
	return fnvBytes(ph, p), ch
}

// fnv2 is fnvBytes(h1, a) and fnvBytes(h2, b[:len(a)]) in one loop, the two
// chains interleaved.
func fnv2(h1 uint64, a []byte, h2 uint64, b []byte) (uint64, uint64) {
	b = b[:len(a)]
	for i, c := range a {
		h1 = (h1 ^ uint64(c)) * fnvPrime
		h2 = (h2 ^ uint64(b[i])) * fnvPrime
	}
	return h1, h2
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// str is a string value kept beyond the message: interned when the reader
// interns.
func (r *msgReader) str(b []byte, t tok) string {
	if r.intern != nil && !t.esc {
		return r.intern(b[t.start+1 : t.end-1])
	}
	return t.text(b)
}

func (r *msgReader) idOf(b []byte, t tok) schema.ID {
	switch t.kind {
	case schema.JSONAbsent:
		return schema.ID{Type: schema.IDAbsent}
	case schema.JSONNull:
		return schema.ID{Type: schema.IDNull}
	case schema.JSONNumber:
		if r.intern != nil {
			return schema.ID{Type: schema.IDNumber, Text: r.intern(b[t.start:t.end])}
		}
		return schema.ID{Type: schema.IDNumber, Text: bstr(b[t.start:t.end])}
	case schema.JSONString:
		return schema.ID{Type: schema.IDString, Text: r.str(b, t)}
	}
	return schema.ID{Type: schema.IDOther, Text: bstr(b[t.start:t.end])}
}

// walk calls member for each member of the object at the scanner's
// position, with its key and the index of that key in keys (-1 for one
// not listed); member scans the value. A listed key given twice, or any
// key with an escape, makes the message odd when dups says so (firstWins
// readers keep the first themselves and only need escapes refused).
func (r *msgReader) walk(keys []string, firstWins bool, member func(i int) bool) bool {
	s := &r.s
	if !s.enter() {
		return false
	}
	var seen uint32
	for n := 0; ; n++ {
		key, esc, done, ok := s.key(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if esc {
			r.odd = true
		}
		f := -1
		for i, k := range keys {
			if string(key) == k {
				f = i
				break
			}
		}
		if f >= 0 {
			if seen&(1<<f) != 0 {
				if !firstWins {
					r.odd = true
				}
				f = -1 // the first one stands
			} else {
				seen |= 1 << f
			}
		}
		if f < 0 {
			if _, ok := s.value(); !ok {
				return false
			}
			continue
		}
		if !member(f) {
			return false
		}
	}
}

var paramKeys = []string{"name", "uri", "arguments", "ref", "argument", "cursor", // callHash's, in its order
	"_meta", "clientInfo", "requestId", "inputResponses", "requestState"}

func (r *msgReader) params(p *schema.RPCParams, hash *[6]tok) bool {
	s := &r.s
	b := s.b
	return r.walk(paramKeys, false, func(f int) bool {
		switch {
		case f == 6 && b[s.i] == '{':
			return r.meta(p)
		case f == 7 && b[s.i] == '{':
			return r.impl(&p.ClientInfo)
		}
		t, ok := s.value()
		if !ok {
			return false
		}
		switch f {
		case 0:
			p.Name = t.kind
			if t.kind == schema.JSONString {
				p.NameText = r.str(b, t)
			}
			hash[0] = t
		case 2:
			p.Arguments = bstr(b[t.start:t.end])
			hash[2] = t
		case 8:
			switch t.kind {
			case schema.JSONString:
				p.RequestID = schema.ID{Type: schema.IDString, Text: t.text(b)}
			case schema.JSONNumber:
				p.RequestID = schema.ID{Type: schema.IDNumber, Text: bstr(b[t.start:t.end])}
			}
		case 9:
			p.InputResponses = true
		case 10:
			p.RequestState, p.RequestStateText = t.kind, t.text(b)
		default:
			if f < 6 {
				hash[f] = t
			}
		}
		return true
	})
}

var metaKeys = []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo"}

func (r *msgReader) meta(p *schema.RPCParams) bool {
	s := &r.s
	b := s.b
	return r.walk(metaKeys, false, func(f int) bool {
		if f == 1 && b[s.i] == '{' {
			return r.impl(&p.MetaClientInfo)
		}
		t, ok := s.value()
		if ok && f == 0 {
			p.MetaProtocolVersion = t.text(b)
		}
		return ok
	})
}

var implKeys = []string{"name", "version"}

// impl reads a clientInfo or serverInfo object (read with gjson's Get: the
// first member of a name counts).
func (r *msgReader) impl(ii *schema.ImplInfo) bool {
	s := &r.s
	b := s.b
	ii.Object = true
	return r.walk(implKeys, true, func(f int) bool {
		t, ok := s.value()
		if !ok {
			return false
		}
		if f == 0 {
			ii.Name = t.text(b)
		} else {
			ii.Version = t.text(b)
		}
		return true
	})
}

var resultKeys = schema.ResultMembers[:]

func (r *msgReader) result(res *schema.RPCResult) bool {
	s := &r.s
	b := s.b
	res.TextsPlain = true
	ok := r.walk(resultKeys, false, func(f int) bool {
		c := b[s.i]
		st := s.i
		var t tok
		var ok bool
		switch {
		case f == schema.ResServerInfo && c == '{':
			var ii schema.ImplInfo
			ok = r.impl(&ii)
			res.ServerInfo = schema.Implementation{Name: ii.Name, Version: ii.Version}
			t = tok{kind: schema.JSONObject, start: st, end: s.i}
		case f == schema.ResTools && c == '[':
			ok = r.tools(res)
			t = tok{kind: schema.JSONArray, start: st, end: s.i}
		case f == schema.ResContent && c == '[':
			ok = r.content(res)
			t = tok{kind: schema.JSONArray, start: st, end: s.i}
		default:
			t, ok = s.value()
		}
		if !ok {
			return false
		}
		res.Kinds[f] = t.kind
		switch f {
		case schema.ResResultType:
			if t.kind == schema.JSONString {
				res.ResultType = t.text(b)
			}
		case schema.ResRequestState:
			res.RequestState = t.text(b)
		case schema.ResProtocolVersion:
			res.ProtocolVersion = t.text(b)
		case schema.ResStructuredContent:
			res.StructuredContent = bstr(b[t.start:t.end])
		}
		return true
	})
	return ok
}

var toolKeys = []string{"name", "annotations"}
var hintKeys = []string{"readOnlyHint", "idempotentHint"}

// tools reads a tools array as correlate's learnTools reads it (gjson's
// Get: the first member of a name counts).
func (r *msgReader) tools(res *schema.RPCResult) bool {
	s := &r.s
	b := s.b
	if !s.enter() {
		return false
	}
	for n := 0; ; n++ {
		done, ok := s.elem(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if b[s.i] != '{' {
			if _, ok := s.value(); !ok {
				return false
			}
			continue
		}
		var ti schema.ToolInfo
		ok = r.walk(toolKeys, true, func(f int) bool {
			if f == 1 && b[s.i] == '{' {
				return r.walk(hintKeys, true, func(g int) bool {
					t, ok := s.value()
					if !ok {
						return false
					}
					if g == 0 {
						ti.ReadOnly = t.gj(b).Bool()
					} else {
						ti.Idempotent = t.gj(b).Bool()
					}
					return true
				})
			}
			t, ok := s.value()
			if ok && f == 0 {
				ti.Name = t.text(b)
			}
			return ok
		})
		if !ok {
			return false
		}
		if ti.Name != "" {
			res.Tools = append(res.Tools, ti)
		}
	}
}

var blockKeys = []string{"type", "text"}

// content reads a content array's text blocks (the last member of a name
// counts, as in JSON.parse and classify's own reading).
func (r *msgReader) content(res *schema.RPCResult) bool {
	s := &r.s
	b := s.b
	if !s.enter() {
		return false
	}
	for n := 0; ; n++ {
		done, ok := s.elem(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if b[s.i] != '{' {
			if _, ok := s.value(); !ok {
				return false
			}
			continue
		}
		var typ, text tok
		if !s.enter() {
			return false
		}
		for k := 0; ; k++ {
			key, esc, done, ok := s.key(k)
			if !ok {
				return false
			}
			if done {
				break
			}
			if esc {
				r.odd = true
			}
			t, ok := s.value()
			if !ok {
				return false
			}
			switch string(key) {
			case "type":
				typ = t
			case "text":
				text = t
			}
		}
		if typ.kind != schema.JSONString {
			continue
		}
		if typ.esc {
			r.odd = true // "text" written with escapes: readers compare it differently
			continue
		}
		if string(b[typ.start+1:typ.end-1]) != "text" {
			continue
		}
		res.TextBlocks++
		if text.kind != schema.JSONString {
			res.TextsPlain = false
			continue
		}
		if res.TextBlocks <= len(res.Texts) {
			res.Texts[res.TextBlocks-1] = bstr(b[text.start:text.end])
		}
		if res.TextBlocks == 1 {
			res.FirstText = true
		}
	}
}

var errorKeys = []string{"code", "message", "data"}

func (r *msgReader) errorObj(e *schema.RPCError) bool {
	s := &r.s
	b := s.b
	return r.walk(errorKeys, false, func(f int) bool {
		t, ok := s.value()
		if !ok {
			return false
		}
		switch f {
		case 0:
			e.Code, e.CodeInt, e.CodeInteger = t.kind, t.gj(b).Int(), t.integer(b)
		case 1:
			e.Message, e.MessageText = t.kind, t.text(b)
		case 2:
			e.Data = bstr(b[t.start:t.end])
		}
		return true
	})
}
