package correlate

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// What the correlator reads of messages: from the fields the decoder read
// in its one parse (schema.RPC) or, for a message without them, from Raw
// exactly as it always did. What is kept beyond the message (client and
// server names, versions, tool names, MRTR states) is cloned, so that it
// does not keep the message's memory alive.

// reqParams is what attach and link read of a request's params.
type reqParams struct {
	name            string // params.name when it is a string
	hasName         bool
	arguments       string // raw JSON of params.arguments
	hasArguments    bool
	continuation    bool   // inputResponses or requestState is present (MRTR)
	requestState    string // params.requestState as text
	metaVersion     string // _meta["io.modelcontextprotocol/protocolVersion"] as text
	clientInfoName  string // params.clientInfo.name as text (initialize)
	clientInfo      schema.ImplInfo
	metaClientInfo  schema.ImplInfo
	hasParamsObject bool
}

func paramsOf(m *schema.Message) reqParams {
	if p := m.RPC; p != nil {
		q := p.Req
		return reqParams{name: q.NameText, hasName: q.Name == schema.JSONString, arguments: q.Arguments,
			hasArguments: q.Arguments != "", continuation: q.InputResponses || q.RequestState.Exists(),
			requestState: q.RequestStateText, metaVersion: q.MetaProtocolVersion, clientInfoName: q.ClientInfo.Name,
			clientInfo: q.ClientInfo, metaClientInfo: q.MetaClientInfo, hasParamsObject: p.Params == schema.JSONObject}
	}
	p := jsonobj.Get(gjson.ParseBytes(m.Raw), "params") // repeated keys: the last wins, as in JSON.parse
	var r reqParams
	r.hasParamsObject = p.IsObject()
	if n := jsonobj.Get(p, "name"); n.Type == gjson.String {
		r.name, r.hasName = n.Str, true
	}
	if a := jsonobj.Get(p, "arguments"); a.Exists() {
		r.arguments = a.Raw
	}
	r.hasArguments = p.Get("arguments").Exists()
	r.continuation = p.Get("inputResponses").Exists() || p.Get("requestState").Exists()
	r.requestState = p.Get("requestState").String()
	r.metaVersion = jsonobj.Path(p, "_meta", "io.modelcontextprotocol/protocolVersion").String()
	r.clientInfoName = p.Get("clientInfo.name").String()
	impl := func(ci gjson.Result) schema.ImplInfo {
		if !ci.IsObject() {
			return schema.ImplInfo{}
		}
		return schema.ImplInfo{Object: true, Name: ci.Get("name").String(), Version: ci.Get("version").String()}
	}
	r.clientInfo = impl(p.Get("clientInfo"))
	r.metaClientInfo = impl(p.Get(`_meta.io\.modelcontextprotocol/clientInfo`))
	return r
}

// rawBytes is s as bytes, sharing its memory (a message's arguments, for
// the row: read, hashed and dropped by the redaction, never written to).
func rawBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// owned is s with memory of its own.
func owned(s string) string { return strings.Clone(s) }

// implementation is a clientInfo or serverInfo with memory of its own.
func implementation(ii schema.ImplInfo) schema.Implementation {
	return schema.Implementation{Name: strings.Clone(ii.Name), Version: strings.Clone(ii.Version)}
}

// cancelledID is the requestId of a notifications/cancelled, when it is a
// string or a number.
func cancelledID(m *schema.Message) (schema.ID, bool) {
	if p := m.RPC; p != nil {
		id := p.Req.RequestID
		return id, id.Valid()
	}
	rid := jsonobj.Path(gjson.ParseBytes(m.Raw), "params", "requestId")
	switch rid.Type {
	case gjson.String:
		return schema.ID{Type: schema.IDString, Text: rid.Str}, true
	case gjson.Number:
		return schema.ID{Type: schema.IDNumber, Text: rid.Raw}, true
	}
	return schema.ID{}, false
}

// errorInfo is what diagnose reads of a response's error object: whether
// there is one, its message as text, its code (gjson's Int of any value)
// and whether the code is a number.
type errorInfo struct {
	object     bool
	message    string
	code       int64
	codeNumber bool
}

func errorOf(m *schema.Message) errorInfo {
	if p := m.RPC; p != nil {
		if p.Error != schema.JSONObject {
			return errorInfo{}
		}
		return errorInfo{object: true, message: p.Err.MessageText, code: p.Err.CodeInt, codeNumber: p.Err.Code == schema.JSONNumber}
	}
	e := jsonobj.Get(gjson.ParseBytes(m.Raw), "error")
	if !e.IsObject() {
		return errorInfo{}
	}
	c := jsonobj.Get(e, "code")
	return errorInfo{object: true, message: jsonobj.Get(e, "message").String(), code: c.Int(), codeNumber: c.Type == gjson.Number}
}

// errorData is the raw JSON of a response's error.data (read with gjson's
// Get, the first member of a name counting), "" when there is none.
func errorData(m *schema.Message) (string, bool) {
	if p := m.RPC; p != nil {
		return p.Err.Data, p.Error == schema.JSONObject && p.Err.Data != ""
	}
	d := gjson.GetBytes(m.Raw, "error.data")
	return d.Raw, d.Exists()
}

// initializeResult is the protocolVersion (as text) and serverInfo of an
// initialize result, with memory of their own.
func initializeResult(m *schema.Message) (version string, server schema.Implementation, hasServer bool) {
	if p := m.RPC; p != nil {
		si := p.Res.Kinds[schema.ResServerInfo] == schema.JSONObject
		return strings.Clone(p.Res.ProtocolVersion), schema.Implementation{Name: strings.Clone(p.Res.ServerInfo.Name),
			Version: strings.Clone(p.Res.ServerInfo.Version)}, si
	}
	res := jsonobj.Get(gjson.ParseBytes(m.Raw), "result")
	version = strings.Clone(jsonobj.Get(res, "protocolVersion").String())
	if si := jsonobj.Get(res, "serverInfo"); si.IsObject() {
		return version, schema.Implementation{Name: strings.Clone(si.Get("name").String()), Version: strings.Clone(si.Get("version").String())}, true
	}
	return version, schema.Implementation{}, false
}

// resultRequestState is result.requestState as text, with memory of its
// own.
func resultRequestState(m *schema.Message) string {
	if p := m.RPC; p != nil {
		return strings.Clone(p.Res.RequestState)
	}
	return strings.Clone(gjson.GetBytes(m.Raw, "result.requestState").String())
}

// learnToolsOf records the annotations of the tools a tools/list result
// lists.
func (cv *conversation) learnToolsOf(m *schema.Message) {
	p := m.RPC
	if p == nil || p.Res.Kinds[schema.ResTools] != schema.JSONArray {
		cv.learnTools(gjson.GetBytes(m.Raw, "result.tools"))
		return
	}
	for _, t := range p.Res.Tools {
		if cv.tools == nil {
			cv.tools = map[string]toolHints{}
		}
		cv.tools[strings.Clone(t.Name)] = toolHints{readOnly: t.ReadOnly, idempotent: t.Idempotent}
	}
}
