package decode

import (
	"testing"

	"mcptrace/schema"
)

func txNum(s string) schema.ID { return schema.ID{Type: schema.IDNumber, Text: s} }
func txStr(s string) schema.ID { return schema.ID{Type: schema.IDString, Text: s} }

var txAbsent = schema.ID{Type: schema.IDAbsent}

func TestScanTruncated(t *testing.T) {
	cases := []struct {
		name                string
		raw                 string
		id                  schema.ID
		method              string
		result, err, hasMth bool
	}{
		{"server order: id and result key in the head",
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","description":"Read the compl...[11759 chars truncated]...ories"}]}}`,
			txNum("1"), "", true, false, false},
		{"client order: method in the head, id in the tail",
			`{"method":"tools/call","params":{"name":"write_file","arguments":{"content":"aaaa...[90211 chars truncated]...zz"}},"jsonrpc":"2.0","id":8}`,
			txNum("8"), "tools/call", false, false, true},
		{"string id kept as a string",
			`{"method":"tools/call","params":{"arguments":{"q":"x...[500 chars truncated]...y"}},"jsonrpc":"2.0","id":"req-7"}`,
			txStr("req-7"), "tools/call", false, false, true},
		{"string id 1 is not the number 1",
			`{"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"ab...[9 chars truncated]...cd"}]}}`,
			txStr("1"), "", true, false, false},
		{"error key in the tail, code lost in the cut",
			`{"jsonrpc":"2.0","id":4,"er...[10 chars truncated]...ssage":"boom"}}`,
			txNum("4"), "", false, false, false},
		{"error member whole in the tail",
			`{"jsonrpc":"2.0","id":4,"x":"...[10 chars truncated]...","error":{"code":-32603,"message":"boom"}}`,
			txNum("4"), "", false, true, false},
		{"number cut at the marker is not read",
			`{"jsonrpc":"2.0","id":12...[10 chars truncated]...xx"}}`,
			txAbsent, "", false, false, false},
		{"method string cut is not read",
			`{"method":"tools/ca...[10 chars truncated]...}}`,
			txAbsent, "", false, false, false},
		{"escaped quotes in the tail do not fake an id",
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"abc...[77 chars truncated]...x\",\"id\":99,\"a\":\"b\\\\\"}"}],"isError":true}}`,
			txAbsent, "", true, false, false},
		{"several markers: head before the first, tail after the last",
			`{"method":"notifications/message","params":{"data":"a...[100 chars truncated]...b...[200 chars truncated]...c"},"jsonrpc":"2.0"}`,
			txAbsent, "notifications/message", false, false, true},
		{"nothing survived", `{"jsonr...[4000 chars truncated]...ue}]}`, txAbsent, "", false, false, false},
		{"null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"mess...[10 chars truncated]...e"}}`,
			schema.ID{Type: schema.IDNull}, "", false, true, false},
	}
	for _, c := range cases {
		got := ScanTruncated([]byte(c.raw))
		if got.ID != c.id || got.Method != c.method || got.HasResult != c.result || got.HasError != c.err || got.HasMethod != c.hasMth {
			t.Errorf("%s: got %+v", c.name, got)
		}
	}
}

func TestTruncatedMessageKinds(t *testing.T) {
	cases := []struct {
		raw  string
		kind schema.MsgKind
		id   schema.ID
	}{
		{`{"method":"tools/call","params":{"a":"x...[5 chars truncated]...y"}},"jsonrpc":"2.0","id":3}`, schema.MsgRequest, txNum("3")},
		{`{"method":"notifications/message","params":{"data":"x...[5 chars truncated]...y"}}`, schema.MsgNotification, txAbsent},
		{`{"jsonrpc":"2.0","id":"a","result":{"x":"...[5 chars truncated]...`, schema.MsgResponse, txStr("a")},
		{`{"jsonrpc":"2.0","id":5,"resu...[5 chars truncated]...}}`, schema.MsgInvalidJSON, txNum("5")},
		{`{"jso...[5 chars truncated]...}}`, schema.MsgInvalidJSON, txAbsent},
	}
	for _, c := range cases {
		m := TruncatedMessage([]byte(c.raw), schema.InStdio, 0)
		if m.Kind != c.kind || m.ID != c.id || !m.Truncated || string(m.Raw) != c.raw || m.BatchIndex != -1 || m.Where != schema.InStdio {
			t.Errorf("%s: got kind %d id %+v truncated %v", c.raw, m.Kind, m.ID, m.Truncated)
		}
	}
	a := TruncatedMessage([]byte(`{"method":"tools/call","params":{"a":"x...[5 chars truncated]...y"}},"jsonrpc":"2.0","id":3}`), schema.InStdio, 0)
	b := TruncatedMessage([]byte(`{"method":"tools/call","params":{"a":"q...[5 chars truncated]...y"}},"jsonrpc":"2.0","id":3}`), schema.InStdio, 0)
	if a.ParamsHash == 0 || a.ParamsHash == b.ParamsHash {
		t.Error("different cut requests must not share a params hash")
	}
}

func TestHasTruncationMarker(t *testing.T) {
	for s, want := range map[string]bool{
		`abc...[18778 chars truncated]...def`: true,
		`[1 chars truncated]`:                 true,
		`[N chars truncated]`:                 false,
		`chars truncated`:                     false,
		`[12 char truncated]`:                 false,
	} {
		if got := HasTruncationMarker([]byte(s)); got != want {
			t.Errorf("%q: %v", s, got)
		}
	}
}

func FuzzScanTruncated(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"rea...[11759 chars truncated]...ories"}]}}`)
	f.Add(`{"method":"tools/call","params":{"a":"x...[5 chars truncated]...y\\\""}},"jsonrpc":"2.0","id":"q"}`)
	f.Add(`...[1 chars truncated]...`)
	f.Fuzz(func(t *testing.T, s string) {
		m := TruncatedMessage([]byte(s), schema.InStdio, 0)
		if m.Kind == schema.MsgRequest && !m.ID.Valid() && m.ID.Type != schema.IDNull && m.ID.Type != schema.IDOther {
			t.Errorf("request without an id: %+v", m)
		}
	})
}
