package classify

import (
	"strings"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// What the judgement reads of a response, from the fields the decoder read
// in its one parse (schema.RPC) or, for a message without them, from Raw
// the way it always was (repeated keys: the last wins, as in JSON.parse).
// The rules themselves (judgeMatched, judgeResult) read only these views,
// so both ways are judged by the same code.

// envelope is a response's top level and its error object.
type envelope struct {
	object      bool
	jsonrpc20   bool
	result      schema.JSONKind
	errv        schema.JSONKind
	code        schema.JSONKind
	codeInteger bool
	codeInt     int64
	message     schema.JSONKind
	messageText string
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
	return schema.JSONAbsent
}

func envelopeOf(m *schema.Message) envelope {
	if p := m.RPC; p != nil {
		return rpcEnvelope(p)
	}
	return rawEnvelope(m.Raw)
}

// rpcEnvelope is envelopeOf a message the decoder read (small enough to
// be inlined: no call on the common path).
func rpcEnvelope(p *schema.RPC) envelope {
	e := envelope{object: true, jsonrpc20: p.JSONRPC20, result: p.Result, errv: p.Error}
	if p.Error == schema.JSONObject {
		e.code, e.codeInteger, e.codeInt = p.Err.Code, p.Err.CodeInteger, p.Err.CodeInt
		e.message, e.messageText = p.Err.Message, p.Err.MessageText
	}
	return e
}

// rawEnvelope is envelopeOf a message read from its raw JSON.
func rawEnvelope(raw []byte) envelope {
	r := gjson.ParseBytes(raw)
	if !r.IsObject() {
		return envelope{}
	}
	var top [3]gjson.Result
	jsonobj.Pick(r, top[:], "jsonrpc", "result", "error")
	j := top[0]
	e := envelope{object: true, jsonrpc20: j.Type == gjson.String && j.Str == "2.0", result: kindOf(top[1]), errv: kindOf(top[2])}
	if top[2].IsObject() {
		c, msg := jsonobj.Get(top[2], "code"), jsonobj.Get(top[2], "message")
		e.code, e.codeInteger, e.codeInt = kindOf(c), isInteger(c), c.Int()
		e.message, e.messageText = kindOf(msg), msg.Str
	}
	return e
}

// resultView is a result object's members, as judgeResult reads them.
type resultView struct {
	kinds      [schema.NumResultMembers]schema.JSONKind
	resultType string
}

func resultOf(m *schema.Message) resultView {
	if p := m.RPC; p != nil {
		return resultView{kinds: p.Res.Kinds, resultType: p.Res.ResultType}
	}
	return rawResult(m.Raw)
}

// rawResult is resultOf a message read from its raw JSON.
func rawResult(raw []byte) resultView {
	var v resultView
	res := jsonobj.Get(gjson.ParseBytes(raw), "result")
	for i, name := range schema.ResultMembers {
		g := jsonobj.Get(res, name)
		v.kinds[i] = kindOf(g)
		if i == schema.ResResultType && g.Type == gjson.String {
			v.resultType = g.Str
		}
	}
	return v
}

// hiddenFailureOf is HiddenFailure of a judged tool result.
func hiddenFailureOf(m *schema.Message) (bool, string) {
	if p := m.RPC; p != nil {
		r := p.Res
		sc := r.StructuredContent
		if len(sc) > 0 && sc[0] == '{' && (notEnvelope(sc) || dataObject(sc)) {
			// The decoder read the message in its validating pass, so
			// structuredContent is valid JSON, and its first members
			// already rule an envelope out, or none of its keys is an
			// envelope's (jsonhead.go).
			sc = ""
		}
		return hiddenFailure(r.Texts[0], r.TextBlocks > 0 && r.FirstText, sc)
	}
	return HiddenFailure(gjson.GetBytes(m.Raw, "result"))
}

// toolTexts is ToolText from the decoder's fields, when they hold every
// text block.
func toolTexts(m *schema.Message) (string, bool) {
	p := m.RPC
	if p == nil || p.Result != schema.JSONObject || p.Res.Kinds[schema.ResContent] != schema.JSONArray ||
		!p.Res.TextsPlain || p.Res.TextBlocks > len(p.Res.Texts) {
		return "", false
	}
	switch r := p.Res; r.TextBlocks {
	case 0:
		return "", true
	case 1:
		return stringValue(r.Texts[0]), true
	default:
		var b strings.Builder
		for i := 0; i < r.TextBlocks; i++ {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(stringValue(r.Texts[i]))
		}
		return b.String(), true
	}
}
