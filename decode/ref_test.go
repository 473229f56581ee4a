package decode

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// The reference: how the decoder and the stages after it read a message
// before the one-pass reader (gjson, member by member). The differential
// tests hold the new code to it.

// refAppendMessages is AppendMessages as it was.
func refAppendMessages(dst []schema.Message, body []byte, where schema.Where, event int) []schema.Message {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return dst
	}
	if depthExceeds(body, MaxDepth()) {
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

// refValid is what the wire decoder checked a line with, in three passes.
func refValid(b []byte) bool {
	return utf8.Valid(b) && !depthExceeds(b, MaxDepth()) && gjson.ValidBytes(b)
}

func kindOf(r gjson.Result) schema.JSONKind {
	switch {
	case !r.Exists():
		return schema.JSONAbsent
	case r.Type == gjson.Null:
		return schema.JSONNull
	case r.Type == gjson.False:
		return schema.JSONFalse
	case r.Type == gjson.True:
		return schema.JSONTrue
	case r.Type == gjson.Number:
		return schema.JSONNumber
	case r.Type == gjson.String:
		return schema.JSONString
	case r.IsObject():
		return schema.JSONObject
	case r.IsArray():
		return schema.JSONArray
	}
	return 255
}

// refIsInteger is classify's isInteger.
func refIsInteger(v gjson.Result) bool {
	if v.Type != gjson.Number {
		return false
	}
	if !strings.ContainsAny(v.Raw, ".eE") {
		_, err := strconv.ParseInt(v.Raw, 10, 64)
		return err == nil
	}
	f := v.Num
	return f == float64(int64(f))
}

// rpcMismatch compares a message's RPC fields with what each reader computes
// from Raw (first member where the reader uses gjson's Get, last where it
// uses jsonobj), and describes the first difference ("" when none).
func rpcMismatch(m *schema.Message) string {
	p := m.RPC
	if p == nil {
		return ""
	}
	raw := m.Raw
	r := gjson.ParseBytes(raw)
	bad := func(field string, got, want any) string {
		return fmt.Sprintf("%s: %v, readers get %v (%.200s)", field, got, want, raw)
	}
	if !r.IsObject() {
		return bad("object", true, false)
	}
	j := jsonobj.Get(r, "jsonrpc")
	if got, want := p.JSONRPC20, j.Type == gjson.String && j.Str == "2.0"; got != want {
		return bad("jsonrpc", got, want)
	}
	res, errv, params := jsonobj.Get(r, "result"), jsonobj.Get(r, "error"), jsonobj.Get(r, "params")
	if kindOf(res) != p.Result || kindOf(errv) != p.Error || kindOf(params) != p.Params {
		return bad("kinds", []schema.JSONKind{p.Result, p.Error, p.Params}, []schema.JSONKind{kindOf(res), kindOf(errv), kindOf(params)})
	}
	if f := gjson.GetBytes(raw, "result"); f.Raw != res.Raw {
		return bad("first result", f.Raw, res.Raw)
	}
	if errv.IsObject() {
		e := p.Err
		c, msg := jsonobj.Get(errv, "code"), jsonobj.Get(errv, "message")
		if e.Code != kindOf(c) || e.CodeInt != c.Int() || e.CodeInteger != refIsInteger(c) {
			return bad("code", e, c.Raw)
		}
		if e.Message != kindOf(msg) || e.MessageText != msg.String() {
			return bad("message", e.MessageText, msg.String())
		}
		if d := gjson.GetBytes(raw, "error.data"); e.Data != d.Raw || e.Data != jsonobj.Get(errv, "data").Raw {
			return bad("data", e.Data, d.Raw)
		}
	} else if p.Err != schema.NoRPCError || *p.Err != (schema.RPCError{}) {
		return bad("error members", *p.Err, "none")
	}
	if res.IsObject() {
		x := p.Res
		for i, name := range schema.ResultMembers {
			if k := kindOf(jsonobj.Get(res, name)); x.Kinds[i] != k {
				return bad("result."+name, x.Kinds[i], k)
			}
		}
		if rt := jsonobj.Get(res, "resultType"); rt.Type == gjson.String && x.ResultType != rt.Str || rt.Type != gjson.String && x.ResultType != "" {
			return bad("resultType", x.ResultType, rt.Str)
		}
		if want := gjson.GetBytes(raw, "result.requestState").String(); x.RequestState != want {
			return bad("requestState", x.RequestState, want)
		}
		if want := jsonobj.Get(res, "protocolVersion").String(); x.ProtocolVersion != want {
			return bad("protocolVersion", x.ProtocolVersion, want)
		}
		var si schema.Implementation
		if s := jsonobj.Get(res, "serverInfo"); s.IsObject() {
			si = schema.Implementation{Name: s.Get("name").String(), Version: s.Get("version").String()}
		}
		if x.ServerInfo != si {
			return bad("serverInfo", x.ServerInfo, si)
		}
		if want := jsonobj.Get(res, "structuredContent").Raw; x.StructuredContent != want {
			return bad("structuredContent", x.StructuredContent, want)
		}
		if tools := gjson.GetBytes(raw, "result.tools"); tools.IsArray() {
			var want []schema.ToolInfo
			tools.ForEach(func(_, t gjson.Result) bool {
				if name := t.Get("name").String(); name != "" {
					a := t.Get("annotations")
					want = append(want, schema.ToolInfo{Name: name, ReadOnly: a.Get("readOnlyHint").Bool(), Idempotent: a.Get("idempotentHint").Bool()})
				}
				return true
			})
			if fmt.Sprint(x.Tools) != fmt.Sprint(want) {
				return bad("tools", x.Tools, want)
			}
		} else if x.Tools != nil {
			return bad("tools", x.Tools, "none")
		}
		if content := jsonobj.Get(res, "content"); content.IsArray() {
			var texts []gjson.Result
			content.ForEach(func(_, c gjson.Result) bool {
				if jsonobj.Get(c, "type").String() == "text" {
					texts = append(texts, jsonobj.Get(c, "text"))
				}
				return true
			})
			plain := true
			for _, t := range texts {
				plain = plain && t.Type == gjson.String
			}
			if x.TextBlocks != len(texts) || x.TextsPlain != plain {
				return bad("text blocks", []any{x.TextBlocks, x.TextsPlain}, []any{len(texts), plain})
			}
			for i := 0; i < len(texts) && i < len(x.Texts); i++ {
				if texts[i].Type == gjson.String && x.Texts[i] != texts[i].Raw {
					return bad("text", x.Texts[i], texts[i].Raw)
				}
			}
			if want := len(texts) > 0 && texts[0].Type == gjson.String; x.FirstText != want {
				return bad("first text", x.FirstText, want)
			}
		} else if x.TextBlocks != 0 || x.FirstText {
			return bad("text blocks", x.TextBlocks, 0)
		}
	} else if p.Res != schema.NoRPCResult || p.Res.Kinds != ([schema.NumResultMembers]schema.JSONKind{}) {
		return bad("result members", *p.Res, "none")
	}
	if params.IsObject() {
		q := p.Req
		n := jsonobj.Get(params, "name")
		if q.Name != kindOf(n) || n.Type == gjson.String && q.NameText != n.Str {
			return bad("name", q.NameText, n.Str)
		}
		if a := jsonobj.Get(params, "arguments"); q.Arguments != a.Raw || (q.Arguments != "") != params.Get("arguments").Exists() {
			return bad("arguments", q.Arguments, a.Raw)
		}
		if q.InputResponses != params.Get("inputResponses").Exists() {
			return bad("inputResponses", q.InputResponses, !q.InputResponses)
		}
		if rs := params.Get("requestState"); q.RequestState != kindOf(rs) || q.RequestStateText != rs.String() {
			return bad("params.requestState", q.RequestStateText, rs.String())
		}
		if want := jsonobj.Path(params, "_meta", "io.modelcontextprotocol/protocolVersion").String(); q.MetaProtocolVersion != want {
			return bad("_meta protocolVersion", q.MetaProtocolVersion, want)
		}
		impl := func(ci gjson.Result) schema.ImplInfo {
			if !ci.IsObject() {
				return schema.ImplInfo{}
			}
			return schema.ImplInfo{Object: true, Name: ci.Get("name").String(), Version: ci.Get("version").String()}
		}
		if want := impl(params.Get("clientInfo")); q.ClientInfo != want || q.ClientInfo.Name != params.Get("clientInfo.name").String() {
			return bad("clientInfo", q.ClientInfo, want)
		}
		if want := impl(params.Get(`_meta.io\.modelcontextprotocol/clientInfo`)); q.MetaClientInfo != want {
			return bad("_meta clientInfo", q.MetaClientInfo, want)
		}
		rid := jsonobj.Path(r, "params", "requestId")
		want := schema.ID{Type: schema.IDAbsent}
		switch rid.Type {
		case gjson.String:
			want = schema.ID{Type: schema.IDString, Text: rid.Str}
		case gjson.Number:
			want = schema.ID{Type: schema.IDNumber, Text: rid.Raw}
		}
		if q.RequestID != want {
			return bad("requestId", q.RequestID, want)
		}
	} else if p.Req != schema.NoRPCParams || *p.Req != (schema.RPCParams{}) {
		return bad("params members", *p.Req, "none")
	}
	return ""
}

// sameMessage compares two messages apart from RPC.
func sameMessage(a, b *schema.Message) bool {
	return a.Where == b.Where && a.Event == b.Event && a.BatchIndex == b.BatchIndex && a.Kind == b.Kind && a.ID == b.ID &&
		a.Method == b.Method && bytes.Equal(a.Raw, b.Raw) && a.ParamsHash == b.ParamsHash && a.CallHash == b.CallHash &&
		a.Truncated == b.Truncated && a.At.Equal(b.At) && a.Folded == b.Folded
}

// messagesMismatch compares AppendMessages with the reference on one body.
func messagesMismatch(body []byte) string {
	got := AppendMessages(nil, body, schema.InResponseBody, 2)
	want := refAppendMessages(nil, body, schema.InResponseBody, 2)
	if len(got) != len(want) {
		return fmt.Sprintf("%d messages, want %d (%.200q)", len(got), len(want), body)
	}
	for i := range got {
		if !sameMessage(&got[i], &want[i]) {
			return fmt.Sprintf("message %d: %+v, want %+v", i, got[i], want[i])
		}
		if d := rpcMismatch(&got[i]); d != "" {
			return fmt.Sprintf("message %d: %s", i, d)
		}
	}
	return ""
}
