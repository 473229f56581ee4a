package jsonobj

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestLastMemberWins(t *testing.T) {
	cases := []struct {
		doc  string
		keys []string
		want string // Raw of the result; "" when it must not exist
	}{
		{`{"isError":false,"isError":true}`, []string{"isError"}, "true"},
		{`{"isError":true,"isError":false}`, []string{"isError"}, "false"},
		{`{"id":1,"x":{"id":2},"id":3}`, []string{"id"}, "3"},
		{`{"result":{"isError":true},"result":{"isError":false}}`, []string{"result", "isError"}, "false"},
		{`{"result":{"a":1},"result":{"b":2}}`, []string{"result", "a"}, ""}, // no merge of repeated objects
		{`{"is\u0045rror":true}`, []string{"isError"}, "true"},               // keys compare unescaped
		{`{"a.b":1,"a":{"b":2}}`, []string{"a.b"}, "1"},                      // a key, never a path
		{`{"a":{"b":2}}`, []string{"a.b"}, ""},
		{`{"*":1,"x":2}`, []string{"*"}, "1"},
		{`[{"id":1}]`, []string{"id"}, ""},
		{`"id"`, []string{"id"}, ""},
		{`{"id":null}`, []string{"id"}, "null"},
		{`{}`, []string{"id"}, ""},
	}
	for _, c := range cases {
		got := Path(gjson.Parse(c.doc), c.keys...)
		if c.want == "" {
			if got.Exists() {
				t.Errorf("%s %v: got %s, want nothing", c.doc, c.keys, got.Raw)
			}
			continue
		}
		if got.Raw != c.want {
			t.Errorf("%s %v: got %q, want %q", c.doc, c.keys, got.Raw, c.want)
		}
	}
	if g := gjson.Get(`{"isError":false,"isError":true}`, "isError"); g.Raw != "false" {
		t.Fatalf("gjson.Get now returns %s: the reason for this package changed", g.Raw)
	}
}

func TestPick(t *testing.T) {
	var dst [3]gjson.Result
	Pick(gjson.Parse(`{"method":"a","id":1,"method":"b","params":{}}`), dst[:], "method", "id", "result")
	if dst[0].Str != "b" || dst[1].Raw != "1" || dst[2].Exists() {
		t.Errorf("Pick: %q %q %v", dst[0].Str, dst[1].Raw, dst[2].Exists())
	}
	dst[2] = gjson.Parse(`1`)
	Pick(gjson.Parse(`[1]`), dst[:], "method", "id", "result")
	for i, r := range dst {
		if r.Exists() {
			t.Errorf("Pick of an array: dst[%d] = %s", i, r.Raw)
		}
	}
}
