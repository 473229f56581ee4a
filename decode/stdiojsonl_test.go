package decode

import (
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

func TestStdioJSONLMcpsnoopSample(t *testing.T) {
	c := decodeString(t, FormatStdioJSONL, "s.jsonl", inspReadSample(t, "stdio-jsonl/mcpsnoop-session.jsonl"))
	if len(c.obs) != 13 || len(c.skips) != 1 || len(c.quar) != 0 || c.skips[0].reason != "session_meta" || c.skips[0].pos.Line != 1 {
		t.Fatalf("obs %d skips %+v quar %+v", len(c.obs), c.skips, c.quar)
	}
	dirs := []string{"c2s", "stderr", "s2c", "c2s", "c2s", "s2c", "c2s", "s2c", "c2s", "s2c", "c2s", "c2s", "stderr"}
	for i, o := range c.obs {
		if o.Pos.Line != int64(i+2) || o.Stdio != dirs[i] || o.Side != schema.SideClient || o.Transport != schema.TransportStdio ||
			o.SessionID != "01JWQ3K8Z5R7T2V9M4X6N1B0CD" || o.ServerName != "weather" || o.Format != "stdio-jsonl" || o.HTTP != nil || o.Paired {
			t.Errorf("line %d: %+v", i+2, o)
		}
		if o.Stdio == schema.DirStderr && len(o.Messages) != 0 || o.Stdio != schema.DirStderr && len(o.Messages) != 1 {
			t.Errorf("line %d: messages %+v", i+2, o.Messages)
		}
		for _, m := range o.Messages {
			if m.Where != schema.InStdio {
				t.Errorf("line %d: where %v", i+2, m.Where)
			}
		}
	}
	first := c.obs[0]
	if want := time.Date(2026, 6, 2, 9, 14, 3, 402117930, time.UTC); !first.Time.Equal(want) || first.Time.Location() != time.UTC {
		t.Errorf("time %v", first.Time)
	}
	if first.Messages[0].Kind != schema.MsgRequest || first.Messages[0].Method != "initialize" || first.ClientName != "claude-code" || first.ClientVersion != "2.1.30" {
		t.Errorf("initialize %+v", first)
	}
	polluted := c.obs[9] // line 11: the server printed a Python dict
	if polluted.Messages[0].Kind != schema.MsgInvalidJSON || polluted.Messages[0].Truncated || !strings.HasPrefix(string(polluted.Messages[0].Raw), "{'jsonrpc'") {
		t.Errorf("stdout pollution: %+v", polluted.Messages)
	}
	if m := c.obs[11].Messages[0]; m.Kind != schema.MsgNotification || m.Method != "notifications/cancelled" {
		t.Errorf("cancel %+v", m)
	}
}

func TestStdioJSONLGenericSample(t *testing.T) {
	c := decodeString(t, FormatStdioJSONL, "g.jsonl", inspReadSample(t, "stdio-jsonl/generic-proxy.jsonl"))
	if len(c.obs) != 7 || c.records() != 7 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	want := []struct {
		dir  string
		kind schema.MsgKind
	}{{"c2s", schema.MsgRequest}, {"s2c", schema.MsgResponse}, {"c2s", schema.MsgNotification}, {"c2s", schema.MsgRequest},
		{"s2c", schema.MsgResponse}, {"c2s", schema.MsgRequest}, {"s2c", schema.MsgResponse}}
	for i, w := range want {
		o := c.obs[i]
		if o.Stdio != w.dir || len(o.Messages) != 1 || o.Messages[0].Kind != w.kind || o.SessionID != "" || o.Connection != "" {
			t.Errorf("line %d: %+v", i+1, o)
		}
	}
	if got := c.obs[0].Time; !got.Equal(time.Date(2026, 6, 7, 13, 0, 0, 512e6, time.UTC)) {
		t.Errorf("unix seconds: %v", got)
	}
	if m := c.obs[6].Messages[0]; m.ID.Text != "3" || m.ID.Type != schema.IDNumber {
		t.Errorf("frame as a string: %+v", m)
	}
}

func TestStdioJSONLDirections(t *testing.T) {
	for in, want := range map[string]string{
		"c2s": "c2s", "S2C": "s2c", "client -> server": "c2s", "Server->Client": "s2c", "client_to_server": "c2s",
		"server-to-client": "s2c", "to_server": "c2s", "client <- server": "s2c", "editor -> server": "c2s", "server -> editor": "s2c",
		"out": "c2s", "send": "c2s", "sent": "c2s", "TX": "c2s", "outgoing": "c2s",
		"in": "s2c", "recv": "s2c", "received": "s2c", "rx": "s2c", "incoming": "s2c",
		"stderr": "stderr", "meta": "meta",
	} {
		if got, ok := sjlDirection(in, false); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"out": "s2c", "send": "s2c", "in": "c2s", "recv": "c2s", "c2s": "c2s", "s2c": "s2c"} {
		if got, _ := sjlDirection(in, true); got != want {
			t.Errorf("server viewpoint %q: %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"", "up", "request", "both"} {
		if _, ok := sjlDirection(in, false); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestStdioJSONLLines(t *testing.T) {
	lines := []string{
		`{"ts":"2026-06-02T09:00:00Z","direction":"out","message":{"jsonrpc":"2.0","id":"a","method":"ping"}}`, // 1 ok
		`not json at all`,     // 2 not_json
		`["direction","c2s"]`, // 3 not_an_object
		`{"ts":"2026-06-02T09:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}`, // 4 no direction
		`{"ts":"2026-06-02T09:00:00Z","direction":"sideways","raw":{}}`,                    // 5 unknown direction
		`{"ts":"2026-06-02T09:00:00Z","direction":"c2s"}`,                                  // 6 no frame
		`{"ts":"last tuesday","direction":"c2s","raw":{}}`,                                 // 7 bad ts
		``, // 8 blank
		`{"ts":1780837200512,"direction":"s2c","text":"Traceback (most recent call last):"}`,                                                                 // 9 non-JSON frame: an observation
		`{"ts":1780837200512000,"direction":"in","viewpoint":"server","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}`,                         // 10 server view
		`{"direction":"s2c","transport":"http","conn_id":"c-7","mcp_protocol_version":"2026-07-28","raw":{"jsonrpc":"2.0","id":1,"result":{}},"status":200}`, // 11 http, no ts
		`{"direction":"s2c","truncated":true,"text":"{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"aaaa"}`,           // 12 truncated
		`{"direction":"c2s","truncated":true,"text":"{\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"q\":\"aaa"}`,                     // 13 truncated before id
		`{"direction":"c2s","truncated":true,"text":"{\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,"}`,                              // 14 truncated notification
		`{"direction":"stderr","text":"warming cache"}`,                                                           // 15 stderr
		"{\"direction\":\"c2s\",\"raw\":\"\xff\"}",                                                                // 16 invalid UTF-8
		`{"direction":"c2s","raw":[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]}`, // 17 a batch
		`{"ts":-5,"direction":"c2s","raw":{}}`,                                                                    // 18 bad ts number
		`{"direction":"c2s","raw":""}`,                                                                            // 19 empty frame
	}
	c := decodeString(t, FormatStdioJSONL, "x", "\xef\xbb\xbf"+strings.Join(lines, "\n"))
	if c.records() != len(lines) {
		t.Fatalf("%d records for %d lines", c.records(), len(lines))
	}
	wantQ := map[int64]string{2: ReasonNotJSON, 3: ReasonNotObject, 4: ReasonMissingField, 5: ReasonBadValue, 6: ReasonMissingField,
		7: ReasonBadValue, 16: ReasonInvalidUTF8, 18: ReasonBadValue}
	if len(c.quar) != len(wantQ) {
		t.Errorf("quarantined %+v", c.quar)
	}
	for _, q := range c.quar {
		if wantQ[q.pos.Line] != q.reason {
			t.Errorf("line %d: %s (%s), want %s", q.pos.Line, q.reason, q.detail, wantQ[q.pos.Line])
		}
	}
	obs := map[int64]*schema.Observation{}
	for _, o := range c.obs {
		obs[o.Pos.Line] = o
	}
	if o := obs[1]; o.Stdio != "c2s" || o.Messages[0].ID != (schema.ID{Type: schema.IDString, Text: "a"}) {
		t.Errorf("line 1: %+v", o)
	}
	if o := obs[9]; o.Stdio != "s2c" || o.Messages[0].Kind != schema.MsgInvalidJSON || !o.Time.Equal(time.UnixMilli(1780837200512)) {
		t.Errorf("line 9: %+v", o)
	}
	if o := obs[10]; o.Stdio != "c2s" || o.Side != schema.SideServer || o.Messages[0].Kind != schema.MsgRequest || !o.Time.Equal(time.UnixMicro(1780837200512000)) {
		t.Errorf("line 10: %+v", o)
	}
	if o := obs[11]; o.Transport != schema.TransportStreamableHTTP || o.Connection != "c-7" || o.ProtocolVersion != "2026-07-28" || !o.Time.IsZero() || o.HTTP != nil {
		t.Errorf("line 11: %+v", o)
	}
	if m := obs[12].Messages[0]; !m.Truncated || m.Kind != schema.MsgResponse || m.ID != (schema.ID{Type: schema.IDNumber, Text: "12"}) || !strings.HasSuffix(string(m.Raw), "aaaa") {
		t.Errorf("line 12: %+v", m)
	}
	if m := obs[13].Messages[0]; !m.Truncated || m.Kind != schema.MsgInvalidJSON || m.Method != "tools/call" {
		t.Errorf("line 13: %+v", m)
	}
	if m := obs[14].Messages[0]; !m.Truncated || m.Kind != schema.MsgNotification {
		t.Errorf("line 14: %+v", m)
	}
	if o := obs[15]; o.Stdio != schema.DirStderr || len(o.Messages) != 0 {
		t.Errorf("line 15: %+v", o)
	}
	if o := obs[17]; len(o.Messages) != 2 || o.Messages[1].BatchIndex != 1 {
		t.Errorf("line 17: %+v", o.Messages)
	}
	if o := obs[19]; o == nil || len(o.Messages) != 0 {
		t.Errorf("line 19: %+v", o)
	}
	if len(c.skips) != 1 || c.skips[0].reason != "blank" {
		t.Errorf("skips %+v", c.skips)
	}
}

func TestStdioJSONLSniffer(t *testing.T) {
	for _, s := range []string{
		`{"session_id":"x","server_label":"w","seq":1,"ts":"2026-06-02T09:00:00Z","direction":"meta","transport":"stdio","raw":{"command":["x"]}}`,
		"\n\n" + `{"ts":1,"direction":"send","message":{}}`,
		`{"direction":"c2s","frame":"{}"}`,
		`{"direction":"s2c","text":"x"}`,
	} {
		if f, ok := Detect([]byte(s)); !ok || f != FormatStdioJSONL {
			t.Errorf("%s: %q", s, f)
		}
	}
	for _, s := range []string{
		`{"mcptrace":"wire/1","ts":"2026-06-02T09:00:00Z","side":"client","stdio":{"direction":"c2s","line":"{}"}}`,
		`{"mcptrace":"wire/1","direction":"c2s","raw":{}}`,
		`{"direction":"c2s"}`,
		`{"message":{"jsonrpc":"2.0"}}`,
		`[{"direction":"request","message":{}}]`,
		`{"debug":"Successfully connected to stdio server in 2272ms","timestamp":"2026-02-01T10:00:02.412Z","sessionId":"5c1e"}`,
		`{"resourceSpans":[]}`,
		`2026-03-01T13:17:37.325Z [filesystem] [info] Message from client: {"direction":"c2s","raw":{}}`,
	} {
		if sniffStdioJSONL([]byte(s)) {
			t.Errorf("claimed %s", s)
		}
	}
}

// FuzzMyDecoders: the Inspector, OTLP and stdio JSONL decoders never panic
// and account for something on any input that is not empty.
func FuzzMyDecoders(f *testing.F) {
	f.Add(`[{"id":"1","timestamp":"2026-05-27T10:00:00Z","direction":"request","message":{"method":"a","jsonrpc":"2.0","id":1},"response":{"result":{},"jsonrpc":"2.0","id":1}}]`)
	f.Add(`[{"id":"1","timestamp":"2026-05-27T10:00:00Z","method":"POST","url":"http://x/mcp","requestHeaders":{},"requestBody":"{}","responseStatus":200,"responseHeaders":{"content-type":"text/event-stream"},"responseBody":"data: {}\n\n","category":"transport"}]`)
	f.Add(otlpLine(otlpSpanJSON(otlpAttr("mcp.method.name", "tools/call"), `,"kind":2,"status":{"code":2}`)))
	f.Add("{\n \"resourceLogs\": [{\"scopeLogs\":[{\"logRecords\":[{\"attributes\":[]}]}]}]\n}")
	f.Add(`{"direction":"s2c","truncated":true,"text":"{\"id\":1,\"res`)
	f.Add("[{\"a\":\"\\\"]}],[")
	f.Fuzz(func(t *testing.T, s string) {
		for _, fm := range []Format{FormatInspectorHistory, FormatInspectorNetwork, FormatOTLPTraces, FormatStdioJSONL} {
			c := decodeString(t, fm, "f", s)
			if strings.TrimSpace(s) != "" && strings.Trim(s, "[], \n\t\r") != "" && c.records() == 0 && fm != FormatOTLPTraces {
				t.Errorf("%s: no record for %q", fm, s)
			}
			_ = sniffInspectorHistory([]byte(s)) || sniffInspectorNetwork([]byte(s)) || sniffStdioJSONL([]byte(s)) || otlpSniff([]byte(s), `"resourceSpans"`)
		}
	})
}
