package correlate_test

import "testing"

// An initialize request carries no MCP-Protocol-Version header (the version
// is being negotiated): its row takes the version its result negotiated, as
// the rows after it do.
func TestInitializeRowHasNegotiatedVersion(t *testing.T) {
	l := newLog(t)
	l.ver = ""
	l.post(req(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), 200, "application/json",
		str(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	l.post(req(2, "tools/list", ""), 200, "application/json", str(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`))
	got, _ := run(l)
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	for i, r := range got {
		if r.ProtocolVersion == nil || *r.ProtocolVersion != "2025-06-18" {
			t.Errorf("row %d (%s): protocol_version %v, want the negotiated 2025-06-18", i, r.Method, r.ProtocolVersion)
		}
	}
}
