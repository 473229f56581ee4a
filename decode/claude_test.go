package decode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

// lineCount is how many records a text format has: one per line.
func txLines(text string) int {
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// byLine indexes observations by their line.
func txObsByLine(c *collector) map[int64]*schema.Observation {
	m := map[int64]*schema.Observation{}
	for _, o := range c.obs {
		m[o.Pos.Line] = o
	}
	return m
}

// skipsByLine indexes skip reasons by line.
func txSkips(c *collector) map[int64]string {
	m := map[int64]string{}
	for _, s := range c.skips {
		m[s.pos.Line] = s.reason
	}
	return m
}

func txCheckEveryLine(t *testing.T, c *collector, text string) {
	t.Helper()
	if got, want := c.records(), txLines(text); got != want {
		t.Errorf("%d records reached the emitter, the text has %d lines", got, want)
	}
	seen := map[int64]bool{}
	for _, l := range append(append(txObsLines(c.obs), txCollLines(c.quar)...), txCollLines(c.skips)...) {
		if seen[l] {
			t.Errorf("line %d reached the emitter twice", l)
		}
		seen[l] = true
	}
}

func txObsLines(obs []*schema.Observation) []int64 {
	var out []int64
	for _, o := range obs {
		out = append(out, o.Pos.Line)
	}
	return out
}

func txCollLines(cs []collected) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.pos.Line)
	}
	return out
}

const claudeThreeEras = `2025-03-04T08:12:40.171Z [fs] [info] Message from client: {"method":"tools/list","params":{},"jsonrpc":"2.0","id":1}
2025-05-20T14:31:08.934Z [fs] [error] Message from server: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x {y}"}} {"context":"connection","stack":"Error: x {y}\n    at z"}
2025-09-18T07:55:22.039Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":2,"result":{}} { metadata: undefined }
2025-09-18T07:55:22.040Z [fs] [error] Message from server: {"jsonrpc":"2.0","id":3,"result":{}} { metadata: { context: 'connection', stack: undefined } }
`

func TestClaudeMetadataSuffixes(t *testing.T) {
	c := decodeString(t, FormatClaudeDesktop, "mcp-server-fs.log", claudeThreeEras)
	txCheckEveryLine(t, c, claudeThreeEras)
	if len(c.obs) != 4 {
		t.Fatalf("%d observations, want 4 (quarantined %+v)", len(c.obs), c.quar)
	}
	want := []struct {
		dir, raw string
		kind     schema.MsgKind
	}{
		{schema.DirClientToServer, `{"method":"tools/list","params":{},"jsonrpc":"2.0","id":1}`, schema.MsgRequest},
		{schema.DirServerToClient, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x {y}"}}`, schema.MsgResponse},
		{schema.DirServerToClient, `{"jsonrpc":"2.0","id":2,"result":{}}`, schema.MsgResponse},
		{schema.DirServerToClient, `{"jsonrpc":"2.0","id":3,"result":{}}`, schema.MsgResponse},
	}
	for i, w := range want {
		o := c.obs[i]
		if o.Stdio != w.dir || len(o.Messages) != 1 || string(o.Messages[0].Raw) != w.raw || o.Messages[0].Kind != w.kind || o.Messages[0].Truncated {
			t.Errorf("line %d: stdio %q messages %+v", i+1, o.Stdio, o.Messages)
		}
		if o.Format != "claude-desktop" || o.Side != schema.SideClient || o.Transport != schema.TransportStdio || o.ServerName != "fs" || o.Connection != "fs#0" || o.HTTP != nil {
			t.Errorf("line %d: %+v", i+1, o)
		}
	}
	if ts := c.obs[0].Time; !ts.Equal(time.Date(2025, 3, 4, 8, 12, 40, 171e6, time.UTC)) || ts.Location() != time.UTC {
		t.Errorf("time %v", ts)
	}
}

const claudeMultiline = `2025-09-18T07:55:21.340Z [filesystem] [info] Initializing server... { metadata: undefined }
2025-09-18T07:55:21.392Z [filesystem] [info] Using MCP server command: /usr/local/bin/npx with args and path: {
  metadata: {
    args: [
      '-y',
      '@modelcontextprotocol/server-filesystem',
      [length]: 2
    ],

    paths: [ '/usr/bin', '/bin', [length]: 2 ]
  }
} %o
Secure MCP Filesystem Server running on stdio
2025-09-18T07:55:21.395Z [filesystem] [info] Server started and connected successfully { metadata: undefined }
2025-09-18T07:55:21.530Z [filesystem] [error] spawn npx ENOENT {
  metadata: {
    context: 'connection',
    stack: 'Error: spawn npx ENOENT\n' +
      '    at onErrorNT (node:internal/child_process:483:16)'
  }
}
 1: 0x1003a1c44 node::Abort() [/usr/local/bin/node]

2025-11-11T04:00:02.758Z [info] [Nexus] Using MCP server command: /home/linux/Nexus/nexus with args and path: {
  args: [ [length]: 0 ],
  paths: [ '/usr/bin' ]
npx: installed 57 in 4.118s
`

func TestClaudeMultilineEntriesAndStderr(t *testing.T) {
	c := decodeString(t, FormatClaudeDesktop, "mcp-server-filesystem.log", claudeMultiline)
	txCheckEveryLine(t, c, claudeMultiline)
	sk := txSkips(c)
	for l := int64(3); l <= 12; l++ {
		if sk[l] != "continuation" {
			t.Errorf("line %d: %q, want continuation", l, sk[l])
		}
	}
	for l := int64(16); l <= 21; l++ {
		if sk[l] != "continuation" {
			t.Errorf("line %d: %q, want continuation", l, sk[l])
		}
	}
	if sk[1] != "lifecycle" || sk[2] != "lifecycle" || sk[14] != "lifecycle" || sk[15] != "log" || sk[23] != "blank" || sk[24] != "lifecycle" || sk[25] != "continuation" || sk[26] != "continuation" {
		t.Errorf("skips %v", sk)
	}
	obs := txObsByLine(c)
	// After the closing "} %o", an unindented line is stderr; after a
	// closed entry, an indented line is stderr too (Node's crash dump); an
	// unindented line inside an unclosed entry ends it and is stderr.
	for _, l := range []int64{13, 22, 27} {
		o := obs[l]
		if o == nil || o.Stdio != schema.DirStderr || len(o.Messages) != 0 {
			t.Errorf("line %d: %+v, want stderr", l, o)
		}
	}
	if o := obs[13]; o.Connection != "filesystem#1" || o.ServerName != "filesystem" || !o.Time.Equal(time.Date(2025, 9, 18, 7, 55, 21, 392e6, time.UTC)) {
		t.Errorf("stderr takes the previous entry's time and connection: %+v", o)
	}
	if o := obs[27]; o.ServerName != "Nexus" || o.Connection != "Nexus#0" {
		t.Errorf("stderr after an mcp.log entry: %+v", o)
	}
}

func TestClaudeStderrBeforeAnyEntry(t *testing.T) {
	text := "npx: installed 1 in 0.5s\n[11770] [Remote→Local] 1\n"
	c := decodeString(t, FormatClaudeDesktop, "x.log", text)
	txCheckEveryLine(t, c, text)
	if len(c.obs) != 2 || c.obs[1].Stdio != schema.DirStderr || !c.obs[1].Time.IsZero() || c.obs[1].Connection != "" {
		t.Errorf("%+v", c.obs)
	}
}

const claudeRestart = `2025-05-20T14:31:07.000Z [fs] [info] Message from client: {"method":"ping","jsonrpc":"2.0","id":9}
2025-05-20T14:31:07.602Z [fs] [info] Initializing server...
2025-05-20T14:31:07.655Z [fs] [info] Message from client: {"method":"initialize","params":{"protocolVersion":"2025-06-18"},"jsonrpc":"2.0","id":0}
2025-05-20T14:31:08.913Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}
2025-05-20T14:31:09.000Z [fs] [info] Message from client: {"method":"tools/call","params":{"name":"a"},"jsonrpc":"2.0","id":1}
2025-05-20T14:36:12.913Z [fs] [info] Server transport closed unexpectedly, this is likely due to the process exiting early.
2025-05-20T14:36:12.913Z [fs] [error] Server disconnected. For troubleshooting guidance, please visit our [debugging documentation](https://modelcontextprotocol.io/docs/tools/debugging) {"context":"connection"}
2025-05-20T14:37:00.000Z [fs] [info] Initializing server...
2025-05-20T14:37:00.100Z [fs] [info] Message from client: {"method":"initialize","params":{"protocolVersion":"2025-06-18"},"jsonrpc":"2.0","id":0}
2025-05-20T14:37:00.200Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}
`

func TestClaudeIDRestartIsANewConnection(t *testing.T) {
	c := decodeString(t, FormatClaudeDesktop, "mcp-server-fs.log", claudeRestart)
	txCheckEveryLine(t, c, claudeRestart)
	obs := txObsByLine(c)
	for l, conn := range map[int64]string{1: "fs#0", 3: "fs#1", 4: "fs#1", 5: "fs#1", 9: "fs#2", 10: "fs#2"} {
		if obs[l] == nil || obs[l].Connection != conn {
			t.Errorf("line %d: connection %+v, want %s", l, obs[l], conn)
		}
	}
	// The response with id 1 after the restart must not share a
	// conversation with the request id 1 before it.
	if obs[5].Connection == obs[10].Connection {
		t.Error("request and response of different processes share a connection")
	}
	sk := txSkips(c)
	if sk[2] != "lifecycle" || sk[6] != "lifecycle" || sk[7] != "lifecycle" || sk[8] != "lifecycle" {
		t.Errorf("skips %v", sk)
	}
	// The version the server chose is carried from its initialize result on,
	// per process.
	if obs[3].ProtocolVersion != "" || obs[4].ProtocolVersion != "2025-03-26" || obs[5].ProtocolVersion != "2025-03-26" || obs[9].ProtocolVersion != "" {
		t.Errorf("versions %q %q %q %q", obs[3].ProtocolVersion, obs[4].ProtocolVersion, obs[5].ProtocolVersion, obs[9].ProtocolVersion)
	}
}

const claudeTruncated = `2025-05-20T14:31:08.934Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","description":"Read the compl...[11759 chars truncated]...properties":{},"required":[]}}]}}
2025-05-20T14:31:09.000Z [fs] [info] Message from client: {"method":"tools/call","params":{"name":"write_file","arguments":{"content":"aaaa...[90211 chars truncated]...zz"}},"jsonrpc":"2.0","id":"call-8"} { metadata: undefined }
2025-05-20T14:31:24.170Z [fs] [error] Message from server: {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"EACCES...[48213 chars truncated]...\"file\"}]}])"}} {"context":"connection"}
2025-05-20T14:31:25.000Z [fs] [info] Message from server: {"jsonr...[4000 chars truncated]...ue}]}}
2025-05-20T14:31:26.000Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"head...[512 chars truncated]...tail"}],"isError":true}}
2025-05-20T14:31:27.000Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"plain, not cut"}]}} trailing words
`

func TestClaudeTruncatedFrames(t *testing.T) {
	c := decodeString(t, FormatClaudeDesktop, "mcp-server-fs.log", claudeTruncated)
	txCheckEveryLine(t, c, claudeTruncated)
	if len(c.obs) != 6 {
		t.Fatalf("%d observations; quarantined %+v", len(c.obs), c.quar)
	}
	want := []struct {
		kind      schema.MsgKind
		id        schema.ID
		method    string
		truncated bool
		rawSuffix string
	}{
		{schema.MsgResponse, txNum("1"), "", true, `"required":[]}}]}}`},
		{schema.MsgRequest, txStr("call-8"), "tools/call", true, `"jsonrpc":"2.0","id":"call-8"}`}, // metadata stripped
		{schema.MsgResponse, txNum("2"), "", true, `}])"}}`},                                       // JSON metadata stripped
		{schema.MsgInvalidJSON, txAbsent, "", true, `ue}]}}`},                                      // nothing recoverable
		{schema.MsgResponse, txNum("7"), "", true, `"isError":true}}`},                             // still JSON: parsed exactly, marked cut
		{schema.MsgInvalidJSON, txAbsent, "", false, `trailing words`},                             // not cut, not JSON
	}
	for i, w := range want {
		if len(c.obs[i].Messages) != 1 {
			t.Errorf("line %d: %d messages", i+1, len(c.obs[i].Messages))
			continue
		}
		m := c.obs[i].Messages[0]
		if m.Kind != w.kind || m.ID != w.id || m.Method != w.method || m.Truncated != w.truncated || !strings.HasSuffix(string(m.Raw), w.rawSuffix) {
			t.Errorf("line %d: kind %d id %+v method %q truncated %v raw …%s", i+1, m.Kind, m.ID, m.Method, m.Truncated, string(m.Raw[max(0, len(m.Raw)-40):]))
		}
	}
}

const claudeAggregated = `2024-12-09T16:20:03.514Z [info] Connected to MCP server filesystem!
2025-06-02T08:11:40.101Z [info] [filesystem] Initializing server...
2025-06-02T08:11:40.103Z [info] [weather] Initializing server...
2025-06-02T08:11:40.245Z [info] [filesystem] Message from client: {"method":"initialize","params":{},"jsonrpc":"2.0","id":0}
2025-06-02T08:11:40.246Z [info] [weather] Message from client: {"method":"initialize","params":{},"jsonrpc":"2.0","id":0}
2025-06-02T08:11:40.690Z [info] [weather] Message from server: {"jsonrpc":"2.0","id":0,"result":{}}
2025-06-02T08:11:41.020Z [warn] [filesystem] Message from server: {"jsonrpc":"2.0","id":0,"result":{}}
2025-06-02T08:11:41.021Z [info] Message from server: {"jsonrpc":"2.0","id":0,"result":{}}
`

func TestClaudeAggregatedLog(t *testing.T) {
	c := decodeString(t, FormatClaudeDesktop, "mcp.log", claudeAggregated)
	txCheckEveryLine(t, c, claudeAggregated)
	obs := txObsByLine(c)
	for l, w := range map[int64][2]string{4: {"filesystem", "filesystem#1"}, 5: {"weather", "weather#1"}, 6: {"weather", "weather#1"}, 7: {"filesystem", "filesystem#1"}, 8: {"", ""}} {
		if o := obs[l]; o == nil || o.ServerName != w[0] || o.Connection != w[1] {
			t.Errorf("line %d: %+v, want server %q connection %q", l, o, w[0], w[1])
		}
	}
	if sk := txSkips(c); sk[1] != "lifecycle" || sk[2] != "lifecycle" || sk[3] != "lifecycle" {
		t.Errorf("skips %v", sk)
	}
}

func TestClaudeQuarantine(t *testing.T) {
	text := "2025-06-02T08:11:40.101Z not a claude entry\n" +
		"2025-06-02T08:11:40.102Z [fs] [info] Message from client:   \n" +
		"2025-06-02T08:11:40.103Z [fs] [bogus] Message from client: {}\n" +
		"2025-06-02T08:11:40.104Z [fs] [info] Something else entirely\n"
	c := decodeString(t, FormatClaudeDesktop, "x.log", text)
	txCheckEveryLine(t, c, text)
	if len(c.quar) != 3 || c.quar[0].reason != ReasonBadValue || c.quar[1].reason != ReasonMissingField || c.quar[2].reason != ReasonBadValue || c.quar[0].raw == "" {
		t.Errorf("quarantined %+v", c.quar)
	}
	if sk := txSkips(c); sk[4] != "log" {
		t.Errorf("skips %v", sk)
	}
}

func TestClaudeLineTooLong(t *testing.T) {
	long := `2025-06-02T08:11:40.245Z [fs] [info] Message from server: {"jsonrpc":"2.0","id":0,"result":{"x":"` + strings.Repeat("a", 2000) + `"}}`
	text := "2025-06-02T08:11:40.000Z [fs] [info] Using MCP server command: npx with args and path: {\n" + long + "\n  indented stderr after the long line\n"
	c := &collector{}
	if err := decodeClaude("x.log", strings.NewReader(text), c, 1024); err != nil {
		t.Fatal(err)
	}
	txCheckEveryLine(t, c, text)
	if len(c.quar) != 1 || c.quar[0].reason != ReasonLineTooLong || len(c.obs) != 1 || c.obs[0].Stdio != schema.DirStderr {
		t.Errorf("quar %+v obs %+v skips %+v", c.quar, c.obs, c.skips)
	}
}

// otherSamples lists the sample files of the other formats.
func txSamplesExcept(t *testing.T, mine ...string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "README.md") || strings.Contains(p, "internal") {
			return nil
		}
		for _, m := range mine {
			if strings.Contains(p, m) {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if len(out) == 0 {
		t.Fatal("no other samples found")
	}
	return out
}

func txHead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > SniffBytes {
		b = b[:SniffBytes]
	}
	return b
}

func TestClaudeDetect(t *testing.T) {
	mine := []string{"../samples/claude-desktop/mcp-server-filesystem.log", "../samples/claude-desktop/mcp.log", "../samples/equivalence/mcp-server-weather.log"}
	for _, p := range mine {
		if f, ok := Detect(txHead(t, p)); !ok || f != FormatClaudeDesktop {
			t.Errorf("%s detected as %q", p, f)
		}
	}
	for _, text := range []string{claudeThreeEras, claudeMultiline, claudeAggregated, claudeRestart} {
		if f, _ := Detect([]byte(text)); f != FormatClaudeDesktop {
			t.Errorf("detected %q for %.60q", f, text)
		}
	}
	// A file that starts with stderr noise is still found.
	if f, _ := Detect([]byte("npx: installed 57 in 4.118s\n" + claudeRestart)); f != FormatClaudeDesktop {
		t.Errorf("stderr first: %q", f)
	}
	for _, p := range txSamplesExcept(t, "claude-desktop", "mcp-server-weather.log") {
		if sniffClaude(txHead(t, p)) {
			t.Errorf("the Claude Desktop sniffer claims %s", p)
		}
	}
	for _, text := range []string{"2025-02-25 01:21:18.278 [info] db10: Calling tool 'getConsoleLogs'\n",
		"2025-10-02T01:43:04.463219Z ERROR codex_core::mcp_connection_manager: failed\n",
		"2025-06-02T08:11:40.101Z [info] [web] GET /index.html 200\n"} {
		if sniffClaude([]byte(text)) {
			t.Errorf("claims %q", text)
		}
	}
}

func TestClaudeSampleAccounting(t *testing.T) {
	for p, want := range map[string][5]int{ // observations, stderr, lifecycle, continuation, truncated
		"../samples/claude-desktop/mcp-server-filesystem.log": {37, 10, 24, 34, 2},
		"../samples/claude-desktop/mcp.log":                   {14, 0, 10, 0, 0},
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := decodeString(t, FormatClaudeDesktop, p, string(b))
		txCheckEveryLine(t, c, string(b))
		stderr, trunc := 0, 0
		for _, o := range c.obs {
			if o.Stdio == schema.DirStderr {
				stderr++
			}
			for _, m := range o.Messages {
				if m.Truncated {
					trunc++
				}
			}
		}
		sk := map[string]int{}
		for _, s := range c.skips {
			sk[s.reason]++
		}
		got := [5]int{len(c.obs), stderr, sk["lifecycle"], sk["continuation"], trunc}
		if got != want || len(c.quar) != 0 {
			t.Errorf("%s: got %v (skips %v, quarantined %d), want %v", p, got, sk, len(c.quar), want)
		}
	}
}

func TestClaudeCRLF(t *testing.T) {
	lf := decodeString(t, FormatClaudeDesktop, "a.log", claudeMultiline)
	crlf := decodeString(t, FormatClaudeDesktop, "a.log", strings.ReplaceAll(claudeMultiline, "\n", "\r\n"))
	if len(lf.obs) != len(crlf.obs) || len(lf.skips) != len(crlf.skips) || len(lf.quar) != len(crlf.quar) {
		t.Errorf("LF %d/%d/%d, CRLF %d/%d/%d", len(lf.obs), len(lf.skips), len(lf.quar), len(crlf.obs), len(crlf.skips), len(crlf.quar))
	}
	for i := range lf.skips {
		if lf.skips[i] != crlf.skips[i] {
			t.Errorf("skip %d: %+v vs %+v", i, lf.skips[i], crlf.skips[i])
		}
	}
}

func FuzzTextDecoders(f *testing.F) {
	f.Add(claudeMultiline)
	f.Add(claudeTruncated)
	f.Add(vsRemote)
	f.Add(vsMultilineBody)
	f.Fuzz(func(t *testing.T, s string) {
		for _, fm := range []Format{FormatClaudeDesktop, FormatVSCode} {
			c := decodeString(t, fm, "f.log", s)
			if s != "" && c.records() != txLines(s) {
				t.Errorf("%s: %d records for %d lines", fm, c.records(), txLines(s))
			}
		}
	})
}

// TestFramesAreDatedByTheirLine: a Claude Desktop, VS Code or stdio JSONL
// frame carries its line's time (schema.Message.At), on which the
// correlator orders a cancel and a late response.
func TestFramesAreDatedByTheirLine(t *testing.T) {
	for _, tc := range []struct {
		format Format
		text   string
		want   time.Time
	}{
		{FormatClaudeDesktop, `2026-02-11T16:25:00.415Z [github] [info] Message from client: {"method":"notifications/cancelled","params":{"requestId":2},"jsonrpc":"2.0"} { metadata: undefined }` + "\n",
			time.Date(2026, 2, 11, 16, 25, 0, 415e6, time.UTC)},
		{FormatVSCode, `2026-05-12 14:03:52.402 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
			time.Date(2026, 5, 12, 14, 3, 52, 402e6, time.UTC)},
	} {
		c := decodeString(t, tc.format, "x.log", tc.text)
		if len(c.obs) != 1 || len(c.obs[0].Messages) != 1 || !c.obs[0].Messages[0].At.Equal(tc.want) {
			t.Errorf("%s: %+v", tc.format, c.obs)
		}
	}
}
