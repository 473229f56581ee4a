package decode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

func inspReadSample(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "samples", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func inspKinds(ms []schema.Message) []schema.MsgKind {
	var out []schema.MsgKind
	for _, m := range ms {
		out = append(out, m.Kind)
	}
	return out
}

func inspSameKinds(a []schema.MsgKind, b ...schema.MsgKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInspectorHistorySample(t *testing.T) {
	c := decodeString(t, FormatInspectorHistory, "h.json", inspReadSample(t, "inspector/history.json"))
	if len(c.obs) != 8 || c.records() != 8 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	for i, o := range c.obs {
		if o.Pos.Line != int64(i+1) || o.Pos.Source != "h.json" || !o.Paired || o.Side != schema.SideClient ||
			o.Transport != schema.TransportStreamableHTTP || o.Format != "inspector-history" || o.HTTP != nil {
			t.Errorf("entry %d: %+v", i+1, o)
		}
		for _, m := range o.Messages {
			if m.Where != schema.InRecord {
				t.Errorf("entry %d: message where %v", i+1, m.Where)
			}
		}
	}
	init := c.obs[0]
	if !inspSameKinds(inspKinds(init.Messages), schema.MsgRequest, schema.MsgResponse) || init.Messages[0].Method != "initialize" ||
		init.ClientName != "mcp-inspector" || init.ClientVersion != "2.3.0" || init.Reported != nil {
		t.Errorf("initialize: %+v", init)
	}
	if want := time.Date(2026, 5, 27, 10, 0, 41, 208e6, time.UTC); !init.Time.Equal(want) || !init.EndTime.Equal(want.Add(143*time.Millisecond)) {
		t.Errorf("times %v %v", init.Time, init.EndTime)
	}
	if n := c.obs[1]; !inspSameKinds(inspKinds(n.Messages), schema.MsgNotification) || n.Messages[0].Method != "notifications/initialized" || !n.EndTime.IsZero() {
		t.Errorf("notification: %+v", n)
	}
	if n := c.obs[6]; !inspSameKinds(inspKinds(n.Messages), schema.MsgNotification) || n.Messages[0].Method != "notifications/message" {
		t.Errorf("server notification: %+v", n)
	}
	for _, i := range []int{2, 3, 4, 5} {
		if o := c.obs[i]; !inspSameKinds(inspKinds(o.Messages), schema.MsgRequest, schema.MsgResponse) || o.Reported != nil ||
			o.Messages[0].ID != o.Messages[1].ID || o.Messages[0].ID.Type != schema.IDNumber {
			t.Errorf("entry %d: %+v", i+1, o)
		}
	}
	to := c.obs[7]
	if !inspSameKinds(inspKinds(to.Messages), schema.MsgRequest) || to.Reported == nil || !to.Reported.Failed ||
		to.Reported.ErrorType != "timeout" || to.Reported.Message != "MCP error -32001: Request timed out" || !to.EndTime.IsZero() {
		t.Errorf("timed-out entry: %+v %+v", to, to.Reported)
	}
}

const inspEntry = `{"id":"e1","timestamp":"2026-05-27T10:00:00.000Z","direction":"request","message":{"method":"tools/call","params":{"name":"x"},"jsonrpc":"2.0","id":7}`

func TestInspectorHistoryTraps(t *testing.T) {
	t.Run("clientError beside a response is the client's rejection: the response decides", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", `[`+inspEntry+`,"response":{"result":{"tools":[]},"jsonrpc":"2.0","id":7},"duration":5,"clientError":"ttlMs required"}]`)
		o := c.obs[0]
		if len(o.Messages) != 2 || o.Reported == nil || o.Reported.Failed || o.Reported.ErrorType != "" || o.Reported.Message != "ttlMs required" {
			t.Errorf("%+v %+v", o, o.Reported)
		}
	})
	t.Run("clientError without a response and not a timeout", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", `[`+inspEntry+`,"clientError":"MCP error -32000: Connection closed"}]`)
		r := c.obs[0].Reported
		if r == nil || !r.Failed || r.ErrorType != "" || r.Message != "MCP error -32000: Connection closed" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("no response, no clientError: nothing reported", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", `[`+inspEntry+`,"response":null}]`)
		if o := c.obs[0]; o.Reported != nil || len(o.Messages) != 1 {
			t.Errorf("%+v", o)
		}
	})
	t.Run("a response entry on its own (request rotated out)", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", `[{"id":"r","timestamp":"2026-05-27T10:00:00Z","direction":"response","origin":"server","message":{"result":{},"jsonrpc":"2.0","id":3}}]`)
		if len(c.obs) != 1 || !inspSameKinds(inspKinds(c.obs[0].Messages), schema.MsgResponse) || !c.obs[0].Paired {
			t.Errorf("%+v", c.obs)
		}
	})
	t.Run("timestamp as epoch milliseconds", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", `[{"id":"n","timestamp":1779891600412,"direction":"notification","message":{"method":"notifications/initialized","jsonrpc":"2.0"}}]`)
		if !c.obs[0].Time.Equal(time.UnixMilli(1779891600412)) || c.obs[0].Time.Location() != time.UTC {
			t.Errorf("%v", c.obs[0].Time)
		}
	})
	t.Run("every bad entry is quarantined with its index, the rest decode", func(t *testing.T) {
		text := "[\n" + strings.Join([]string{
			`{"id":"a","timestamp":"2026-05-27T10:00:00Z","direction":"sideways","message":{"method":"ping","jsonrpc":"2.0","id":1}}`,
			`{"id":"b","timestamp":"2026-05-27T10:00:00Z","direction":"request"}`,
			`{"id":"c","timestamp":"yesterday","direction":"request","message":{"method":"ping","jsonrpc":"2.0","id":1}}`,
			`"just a string"`,
			`{"id":"d","direction":"request","message":{"method":"ping","jsonrpc":"2.0","id":1}}`,
			`{"id":"e","timestamp":"2026-05-27T10:00:00Z","direction":"request","message":"ping"}`,
			`{"id":"f","timestamp":"2026-05-27T10:00:00Z","message":{"method":"ping","jsonrpc":"2.0","id":1}}`,
			inspEntry + `}`,
			`{"id":"g","timestamp":"2026-05-27T10:00:01Z","direction":"request","message":{"method":"ping","jsonr`,
		}, ",\n")
		c := decodeString(t, FormatInspectorHistory, "h", text)
		want := []struct {
			line   int64
			reason string
		}{{1, ReasonBadValue}, {2, ReasonMissingField}, {3, ReasonBadValue}, {4, ReasonNotObject}, {5, ReasonMissingField}, {6, ReasonBadValue}, {7, ReasonMissingField}, {9, ReasonNotJSON}}
		if len(c.quar) != len(want) || len(c.obs) != 1 || c.obs[0].Pos.Line != 8 || c.records() != 9 {
			t.Fatalf("obs %d quar %+v", len(c.obs), c.quar)
		}
		for i, w := range want {
			if c.quar[i].pos.Line != w.line || c.quar[i].reason != w.reason || c.quar[i].raw == "" {
				t.Errorf("quarantine %d: %+v, want %+v", i, c.quar[i], w)
			}
		}
		if !strings.Contains(c.quar[7].detail, "cut short") {
			t.Errorf("detail %q", c.quar[7].detail)
		}
	})
	t.Run("an export cut between entries", func(t *testing.T) {
		c := decodeString(t, FormatInspectorHistory, "h", "[\n  "+inspEntry+"},\n")
		if len(c.obs) != 1 || len(c.quar) != 1 || c.quar[0].pos.Line != 2 || c.quar[0].reason != ReasonNotJSON {
			t.Errorf("obs %d quar %+v", len(c.obs), c.quar)
		}
	})
	t.Run("not an array, empty array, trailing text", func(t *testing.T) {
		if c := decodeString(t, FormatInspectorHistory, "h", `{"log":{}}`); len(c.quar) != 1 || c.records() != 1 {
			t.Errorf("object: %+v", c.quar)
		}
		if c := decodeString(t, FormatInspectorHistory, "h", " [ ] \n"); c.records() != 0 {
			t.Errorf("empty: %d records", c.records())
		}
		if c := decodeString(t, FormatInspectorHistory, "h", "\xef\xbb\xbf["+inspEntry+"}] junk"); len(c.obs) != 1 || len(c.quar) != 1 || c.quar[0].pos.Line != 2 {
			t.Errorf("trailing: %+v", c.quar)
		}
		if c := decodeString(t, FormatInspectorHistory, "h", "[,,"+inspEntry+"},]"); len(c.obs) != 1 || c.records() != 1 {
			t.Errorf("stray commas: %d %+v", len(c.obs), c.quar)
		}
		if c := decodeString(t, FormatInspectorHistory, "h", "[}]"); len(c.quar) != 1 || c.records() != 1 {
			t.Errorf("stray brace: %+v", c.quar)
		}
	})
	t.Run("deep and invalid UTF-8 entries", func(t *testing.T) {
		deep := strings.Repeat("[", MaxDepth()+1) + strings.Repeat("]", MaxDepth()+1)
		c := decodeString(t, FormatInspectorHistory, "h", "["+deep+",\"\xff\"]")
		if len(c.quar) != 2 || c.quar[0].reason != ReasonTooDeep || c.quar[1].reason != ReasonInvalidUTF8 {
			t.Errorf("%+v", c.quar)
		}
	})
}

func TestInspectorNetworkSample(t *testing.T) {
	c := decodeString(t, FormatInspectorNetwork, "n.json", inspReadSample(t, "inspector/network.json"))
	if len(c.obs) != 9 || len(c.skips) != 3 || len(c.quar) != 0 {
		t.Fatalf("obs %d skips %+v quar %+v", len(c.obs), c.skips, c.quar)
	}
	for i, s := range c.skips {
		if s.reason != "auth" || s.pos.Line != int64(7+i) {
			t.Errorf("skip %+v", s)
		}
	}
	byLine := map[int64]*schema.Observation{}
	for _, o := range c.obs {
		byLine[o.Pos.Line] = o
		if o.Format != "inspector-network" || o.Side != schema.SideClient || o.Transport != schema.TransportStreamableHTTP || o.HTTP == nil || o.Paired {
			t.Errorf("line %d: %+v", o.Pos.Line, o)
		}
		if o.SessionID != "7d1c0f5e9b2a4c68a3e1f04d2b6c9a17" {
			t.Errorf("line %d: session %q", o.Pos.Line, o.SessionID)
		}
	}
	init := byLine[1]
	if h := init.HTTP; h.Status != 200 || !h.SSE || h.SSEEvents != 1 || !h.BodyRecorded || h.RespSessionID == "" ||
		!inspSameKinds(inspKinds(init.Messages), schema.MsgRequest, schema.MsgResponse) || init.Messages[1].Where != schema.InPostStream {
		t.Errorf("initialize: %+v %+v", init.HTTP, init.Messages)
	}
	if want := time.Date(2026, 5, 27, 14, 20, 0, 412e6, time.UTC); !init.Time.Equal(want) || !init.EndTime.Equal(want.Add(187*time.Millisecond)) {
		t.Errorf("times %v %v", init.Time, init.EndTime)
	}
	if o := byLine[2]; o.HTTP.Status != 202 || !o.HTTP.BodyEmpty || !inspSameKinds(inspKinds(o.Messages), schema.MsgNotification) || o.ProtocolVersion != "2025-11-25" {
		t.Errorf("202: %+v", o.HTTP)
	}
	if o := byLine[3]; o.HTTP.Method != "GET" || o.HTTP.BodyRecorded || len(o.Messages) != 0 {
		t.Errorf("GET stream: %+v", o.HTTP)
	}
	if o := byLine[5]; o.HTTP.SSEEvents != 2 || !inspSameKinds(inspKinds(o.Messages), schema.MsgRequest, schema.MsgNotification, schema.MsgResponse) {
		t.Errorf("progress then result: %+v", o.Messages)
	}
	if o := byLine[6]; o.HTTP.Status != 401 || !inspSameKinds(inspKinds(o.Messages), schema.MsgRequest, schema.MsgResponse) || o.Messages[1].ID.Valid() {
		t.Errorf("401: %+v %+v", o.HTTP, o.Messages)
	}
	if o := byLine[10]; o.HTTP.Status != 200 || o.Messages[0].ParamsHash != byLine[6].Messages[0].ParamsHash {
		t.Errorf("retry after refresh: %+v", o.HTTP)
	}
	if o := byLine[11]; o.HTTP.Status != 500 || o.HTTP.ContentType != "text/plain" || !inspSameKinds(inspKinds(o.Messages), schema.MsgRequest, schema.MsgInvalidJSON) {
		t.Errorf("500: %+v", o.HTTP)
	}
	if o := byLine[12]; o.HTTP.Responded || o.HTTP.Failure != "" || o.HTTP.FailureMessage != "fetch failed" {
		t.Errorf("failed fetch: %+v", o.HTTP)
	}
}

func TestInspectorNetworkTraps(t *testing.T) {
	for msg, want := range map[string]string{
		"fetch failed":                                    "", // says nothing of how it failed
		"Failed to fetch":                                 "",
		"connect ECONNREFUSED 127.0.0.1:3001":             schema.FailureConnectionRefused,
		"The operation was aborted due to timeout":        schema.FailureTimeout,
		"This operation was aborted":                      schema.FailureClientAbort,
		"read ECONNRESET":                                 schema.FailureReset,
		"Headers Timeout Error":                           schema.FailureTimeout,
		"request to https://x/ failed, reason: ETIMEDOUT": schema.FailureTimeout,
	} {
		if got := FailureKind(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
	entry := func(extra string) string {
		return `[{"id":"1","timestamp":"2026-05-27T14:20:00.412Z","method":"POST","url":"http://localhost:3001/mcp","requestHeaders":{"Content-Type":"application/json"},"requestBody":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"` + extra + `}]`
	}
	t.Run("an auth-category POST that carries JSON-RPC is MCP traffic", func(t *testing.T) {
		c := decodeString(t, FormatInspectorNetwork, "n", entry(`,"responseStatus":401,"category":"auth"`))
		if len(c.obs) != 1 || c.obs[0].HTTP.Status != 401 {
			t.Errorf("%+v %+v", c.obs, c.skips)
		}
	})
	t.Run("neither status nor error", func(t *testing.T) {
		c := decodeString(t, FormatInspectorNetwork, "n", entry(`,"category":"transport"`))
		if len(c.quar) != 1 || c.quar[0].reason != ReasonMissingField {
			t.Errorf("%+v", c.quar)
		}
	})
	t.Run("no method or url; bad timestamp", func(t *testing.T) {
		c := decodeString(t, FormatInspectorNetwork, "n", `[{"id":"1","timestamp":"2026-05-27T14:20:00Z","url":"http://x/mcp","requestHeaders":{}},{"id":"2","timestamp":"noon","method":"GET","url":"http://x/mcp","requestHeaders":{},"responseStatus":405}]`)
		if len(c.quar) != 2 || c.quar[0].reason != ReasonMissingField || c.quar[1].reason != ReasonBadValue {
			t.Errorf("%+v", c.quar)
		}
	})
	t.Run("response body absent is not recorded; headers as an array; status 0 with an error", func(t *testing.T) {
		c := decodeString(t, FormatInspectorNetwork, "n", entry(`,"responseStatus":200,"responseHeaders":[{"name":"Content-Type","value":"application/json"}],"category":"transport"`))
		if h := c.obs[0].HTTP; h.BodyRecorded || h.ContentType != "application/json" || len(c.obs[0].Messages) != 1 {
			t.Errorf("%+v", h)
		}
		c = decodeString(t, FormatInspectorNetwork, "n", entry(`,"responseStatus":0,"error":"connect ECONNREFUSED 127.0.0.1:3001","category":"transport"`))
		if h := c.obs[0].HTTP; h.Responded || h.Failure != schema.FailureConnectionRefused {
			t.Errorf("%+v", h)
		}
	})
	t.Run("legacy HTTP+SSE endpoint", func(t *testing.T) {
		c := decodeString(t, FormatInspectorNetwork, "n", `[{"id":"1","timestamp":"2026-05-27T14:20:00Z","method":"POST","url":"http://localhost:3001/message?sessionId=abc","requestHeaders":{},"requestBody":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}","responseStatus":202,"responseBody":"Accepted","category":"transport"}]`)
		if o := c.obs[0]; o.Transport != schema.TransportHTTPSSE || o.SessionID != "abc" {
			t.Errorf("%+v", o)
		}
	})
}

// inspMyFormats are the formats this file's decoders (inspector, OTLP, stdio
// JSONL) own, with the sample directories they read.
var inspMyFormats = map[Format]string{
	FormatInspectorHistory: "inspector/", FormatInspectorNetwork: "inspector/",
	FormatOTLPTraces: "otlp/", FormatOTLPLogs: "otlp/", FormatStdioJSONL: "stdio-jsonl/",
}

// TestMySniffersOnEverySample: my samples are detected as their format, and
// my sniffers claim no other sample in the tree.
func TestMySniffersOnEverySample(t *testing.T) {
	want := map[string]Format{
		"inspector/history.json":             FormatInspectorHistory,
		"inspector/network.json":             FormatInspectorNetwork,
		"otlp/traces.json":                   FormatOTLPTraces,
		"otlp/logs.ndjson":                   FormatOTLPLogs,
		"stdio-jsonl/mcpsnoop-session.jsonl": FormatStdioJSONL,
		"stdio-jsonl/generic-proxy.jsonl":    FormatStdioJSONL,
	}
	root := filepath.Join("..", "samples")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(b) > SniffBytes {
			b = b[:SniffBytes]
		}
		if f, ok := want[rel]; ok {
			seen++
			if got, ok := Detect(b); !ok || got != f {
				t.Errorf("%s detected as %q, want %q", rel, got, f)
			}
			return nil
		}
		for f, dir := range inspMyFormats {
			if strings.HasPrefix(rel, dir) {
				t.Errorf("%s: sample in %s not listed in this test", rel, dir)
				continue
			}
			if formats[f].sniff(b) {
				t.Errorf("%s sniffer claims %s", f, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("found %d of my %d samples", seen, len(want))
	}
}

func TestInspectorSniffers(t *testing.T) {
	compact := `[{"id":"7","timestamp":"2026-05-27T10:00:42.123Z","direction":"request","message":{"jsonrpc":"2.0","id":3,"method":"tools/call"}}]`
	if f, ok := Detect([]byte(compact)); !ok || f != FormatInspectorHistory {
		t.Errorf("compact history: %q", f)
	}
	// A head cut inside the first entry's message still has both keys.
	big := `[` + "\n  " + `{"id":"x","timestamp":"2026-05-27T10:00:42.123Z","direction":"request","message":{"method":"tools/list","params":{"x":"` + strings.Repeat("a", 70000)
	if f, ok := Detect([]byte(big)[:SniffBytes]); !ok || f != FormatInspectorHistory {
		t.Errorf("cut head: %q", f)
	}
	for _, s := range []string{`[]`, `[{"direction":"request"}]`, `{"direction":"c2s","message":{}}`, `[1,2]`, `[{"url":"x"}]`, `["direction","message"]`} {
		if sniffInspectorHistory([]byte(s)) || sniffInspectorNetwork([]byte(s)) {
			t.Errorf("claimed %s", s)
		}
	}
	if !sniffInspectorNetwork([]byte(`[{"id":"1","timestamp":"t","method":"GET","url":"u","requestHeaders":{}}]`)) ||
		!sniffInspectorNetwork([]byte(`[{"url":"u","category":"auth"}]`)) {
		t.Error("network export not claimed")
	}
}
