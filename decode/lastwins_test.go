package decode

import (
	"testing"

	"mcptrace/schema"
)

// Repeated keys in the JSON-RPC fields decode reads resolve as JSON.parse
// resolves them: the last one wins.
func TestRepeatedKeysLastWins(t *testing.T) {
	if id := cancelledID([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":"b"}}`)); id != (schema.ID{Type: schema.IDString, Text: "b"}) {
		t.Errorf("cancelledID: %+v", id)
	}
	ms := AppendMessages(nil, []byte(`[{"jsonrpc":"2.0","id":1,"result":{},"id":2},{"jsonrpc":"2.0","method":"x","method":"notifications/y"}]`), schema.InResponseBody, 0)
	if len(ms) != 2 || ms[0].ID.Text != "2" || ms[0].Kind != schema.MsgResponse || ms[1].Method != "notifications/y" || ms[1].Kind != schema.MsgNotification {
		t.Errorf("batch: %+v", ms)
	}
	a := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1},"name":"b"}}`), schema.InResponseBody, 0)[0]
	b := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":1},"name":"b"}}`), schema.InResponseBody, 0)[0]
	c := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":1},"name":"a"}}`), schema.InResponseBody, 0)[0]
	if a.CallHash != b.CallHash || a.CallHash == c.CallHash {
		t.Error("callHash does not read the last params.name")
	}
}
