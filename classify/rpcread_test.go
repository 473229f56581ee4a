package classify_test

import (
	"encoding/json"
	"strings"
	"testing"

	"mcptrace/classify"
	"mcptrace/schema"
)

// typedBodies are responses that probe every field the judgement reads from
// the decoder's typed fields (schema.RPC): each kind where a kind is
// checked, numbers read as codes, repeated and escaped members (which the
// decoder leaves to Raw), text blocks and structured content.
var typedBodies = []string{
	good, rpcError, toolError, bothResErr, wrongID, inputReq, legacy, notArray,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error: disk full"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"},{"type":"text","text":"Traceback (most recent call last):"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image"},{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":7}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"te\u0078t","text":"Error: x"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"fine"}],"structuredContent":{"error":"upstream timeout"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":"true"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"isError":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x\\n", 9000) + `"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":7}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"later"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{},"serverInfo":{"name":"s"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":{}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"messages":[],"contents":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":[]}`,
	`{"jsonrpc":"2.0","id":1,"result":"x"}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.\u0030","id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"1","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602.0,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"-32602","message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1e30,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":3}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32001}}`,
	`{"jsonrpc":"2.0","id":1,"error":"boom"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"a","code":-32601}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"result":{"content":[]}}`,
	`[{"jsonrpc":"2.0","id":1,"result":{"content":[]}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
	`"just a string"`, `not json at all`, ``,
}

// stripped is msgs without the decoder's typed fields: what a reader of Raw
// alone sees.
func stripped(msgs []schema.Message) []schema.Message {
	out := append([]schema.Message(nil), msgs...)
	for i := range out {
		out[i].RPC = nil
	}
	return out
}

func verdictText(v classify.Verdict) string {
	j := ""
	if v.Judged != nil {
		j = string(v.Judged.Raw)
	}
	v.Judged = nil
	b, _ := json.Marshal(v)
	return string(b) + " judged " + j
}

// TestTypedFieldsJudgeAsRaw: a response judged from the decoder's typed
// fields gets the verdict (outcome, reason, code, message, suspect, text)
// it gets judged from Raw alone.
func TestTypedFieldsJudgeAsRaw(t *testing.T) {
	bodies := append([]string(nil), typedBodies...)
	for _, path := range []string{"testdata/hidden/failures.txt", "testdata/hidden/ordinary.txt"} {
		for _, r := range readCorpus(t, path) {
			text, _ := json.Marshal(r.text)
			bodies = append(bodies, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+string(text)+`}]}}`)
			if strings.HasPrefix(strings.TrimSpace(r.text), "{") {
				bodies = append(bodies, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":`+r.text+`}}`)
			}
		}
	}
	methods := []string{"tools/call", "initialize", "tools/list", "prompts/get", "resources/read", "sampling/createMessage", "elicitation/create", "ping"}
	typed, n := 0, 0
	for _, body := range bodies {
		for _, status := range []int{200, 500} {
			at := post(status, "application/json", body)
			for _, m := range at.Messages {
				if m.RPC != nil {
					typed++
				}
			}
			raw := at
			raw.Messages = stripped(at.Messages)
			for _, method := range methods {
				for _, version := range []string{"", "2025-06-18", "2026-07-28"} {
					n++
					a := classify.Classify(&classify.Evidence{Method: method, ProtocolVersion: version, ID: id1, Attempts: []classify.Attempt{at}})
					b := classify.Classify(&classify.Evidence{Method: method, ProtocolVersion: version, ID: id1, Attempts: []classify.Attempt{raw}})
					if va, vb := verdictText(a), verdictText(b); va != vb {
						t.Errorf("%s %d %s: typed %s\n raw %s\n(%.200s)", method, status, version, va, vb, body)
					}
				}
			}
			for i := range at.Messages {
				if a, b := classify.ToolText(&at.Messages[i]), classify.ToolText(&raw.Messages[i]); a != b {
					t.Errorf("ToolText: typed %.80q, raw %.80q (%.200s)", a, b, body)
				}
			}
		}
	}
	if typed < len(bodies) {
		t.Errorf("only %d typed messages in %d bodies", typed, len(bodies))
	}
	t.Logf("%d judgements compared", n)
}
