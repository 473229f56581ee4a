package decode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

const vsLocal = `2026-05-12 14:03:51.204 [info] Starting server sqlite
2026-05-12 14:03:51.219 [info] Starting server from LocalProcess extension host
2026-05-12 14:03:51.240 [info] Connection state: Running
2026-05-12 14:03:51.262 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
2026-05-12 14:03:52.011 [warning] [server stderr] Installed 14 packages in 18ms
2026-05-12 14:03:52.402 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sqlite","version":"1"}}}
2026-05-12 14:06:02.480 [error] MPC -32602: Invalid params
    at McpServerRequestHandler._handleResponse (file:///x.js:1:2)

2025-03-21 10:14:58.461 [debug] [Client Says] {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
2025-03-21 10:15:01.880 [debug] [Server Says] {"result":{"tools":[]},"jsonrpc":"2.0","id":2}
2025-03-21 10:15:02.000 [info] Starting server sqlite
2025-03-21 10:15:02.100 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
`

func TestVSCodeFramesBothStyles(t *testing.T) {
	c := decodeString(t, FormatVSCode, "mcp-sqlite.log", vsLocal)
	txCheckEveryLine(t, c, vsLocal)
	obs := txObsByLine(c)
	want := map[int64]struct {
		dir  string
		kind schema.MsgKind
		id   string
		conn string
	}{
		4:  {schema.DirClientToServer, schema.MsgRequest, "1", "sqlite#1"},
		6:  {schema.DirServerToClient, schema.MsgResponse, "1", "sqlite#1"},
		10: {schema.DirClientToServer, schema.MsgRequest, "2", "sqlite#1"},
		11: {schema.DirServerToClient, schema.MsgResponse, "2", "sqlite#1"},
		13: {schema.DirClientToServer, schema.MsgRequest, "1", "sqlite#2"},
	}
	for l, w := range want {
		o := obs[l]
		if o == nil || o.Stdio != w.dir || len(o.Messages) != 1 || o.Messages[0].Kind != w.kind || o.Messages[0].ID != txNum(w.id) || o.Connection != w.conn {
			t.Errorf("line %d: %+v", l, o)
			continue
		}
		if o.Format != "vscode" || o.Side != schema.SideClient || o.Transport != schema.TransportStdio || o.ServerName != "sqlite" || o.HTTP != nil || o.Messages[0].Where != schema.InStdio {
			t.Errorf("line %d: %+v", l, o)
		}
	}
	if o := obs[5]; o == nil || o.Stdio != schema.DirStderr || len(o.Messages) != 0 || !o.Time.Equal(time.Date(2026, 5, 12, 14, 3, 52, 11e6, time.UTC)) {
		t.Errorf("stderr: %+v", o)
	}
	if obs[4].Time.Location() != time.UTC || !obs[4].Time.Equal(time.Date(2026, 5, 12, 14, 3, 51, 262e6, time.UTC)) {
		t.Errorf("local time read as UTC: %v", obs[4].Time)
	}
	if obs[6].ProtocolVersion != "2025-06-18" || obs[13].ProtocolVersion != "" {
		t.Errorf("versions %q %q", obs[6].ProtocolVersion, obs[13].ProtocolVersion)
	}
	sk := txSkips(c)
	for l, why := range map[int64]string{1: "lifecycle", 2: "lifecycle", 3: "lifecycle", 7: "log", 8: "continuation", 9: "blank", 12: "lifecycle"} {
		if sk[l] != why {
			t.Errorf("line %d skipped as %q, want %q", l, sk[l], why)
		}
	}
}

const vsRemote = `2026-05-13 09:44:52.617 [info] Starting server acme
2026-05-13 09:44:52.626 [info] Connection state: Running
2026-05-13 09:44:52.633 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
2026-05-13 09:44:53.140 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"a","version":"1"}}}
2026-05-13 09:44:53.388 [debug] 405 status connecting to https://acme.example/mcp for async notifications; they will be disabled: Method Not Allowed
2026-05-13 09:52:30.211 [debug] [editor -> server] {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}}
2026-05-13 09:52:31.004 [debug] [editor -> server] {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b"}}
2026-05-13 09:52:31.010 [debug] [server -> editor] {"jsonrpc":"2.0","id":4,"result":{"content":[]}}
2026-05-13 09:52:31.118 [info] Connection state: Error 429 status sending message to https://acme.example/mcp?sessionId=legacy-1: { "statusCode": 429, "message": "Rate limit is exceeded. Try again in 60 seconds." }
2026-05-13 09:52:32.000 [info] Connection state: Error 429 status sending message to https://acme.example/mcp: again
`

func TestVSCodeStatusLineAttachesToTheUnansweredRequest(t *testing.T) {
	c := decodeString(t, FormatVSCode, "mcp-acme.log", vsRemote)
	txCheckEveryLine(t, c, vsRemote)
	obs := txObsByLine(c)
	// The read-ahead saw a URL: frames logged before it are HTTP too.
	for _, l := range []int64{3, 4, 6, 7, 8} {
		if obs[l] == nil || obs[l].Transport != schema.TransportStreamableHTTP || obs[l].Stdio == "" || obs[l].HTTP != nil {
			t.Errorf("line %d: %+v", l, obs[l])
		}
	}
	o := obs[9]
	if o == nil || o.HTTP == nil {
		t.Fatalf("status line: %+v", o)
	}
	h := o.HTTP
	if h.Method != "POST" || h.URL != "https://acme.example/mcp?sessionId=legacy-1" || !h.Responded || h.Status != 429 || !h.RequestHasBody || !h.BodyRecorded {
		t.Errorf("http %+v", h)
	}
	// Request 4 was answered: the failed send is request 3.
	if len(o.Messages) != 2 || o.Messages[0].Where != schema.InRequestBody || o.Messages[0].ID != txNum("3") || o.Messages[0].Method != "tools/call" ||
		string(o.Messages[0].Raw) != `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}}` || o.Messages[1].Where != schema.InResponseBody {
		t.Errorf("messages %+v", o.Messages)
	}
	if o.Messages[0].ParamsHash != obs[6].Messages[0].ParamsHash {
		t.Error("the status line's request must be the logged frame, byte for byte")
	}
	if o.Connection != obs[6].Connection || o.SessionID != "" || o.Transport != schema.TransportStreamableHTTP || o.Side != schema.SideClient || o.Format != "vscode" || o.ProtocolVersion != "2025-06-18" {
		t.Errorf("the status must share the frames' conversation: %+v", o)
	}
	// Request 3 has been blamed already: the second 429 names no request.
	if sk := txSkips(c); sk[5] != "status" || sk[10] != "status" || obs[10] != nil {
		t.Errorf("skips %v", sk)
	}
}

const vsFallbackLog = `2026-05-13 09:41:07.310 [info] Starting server legacy
2026-05-13 09:41:07.330 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
2026-05-13 09:41:07.912 [info] 404 status sending message to http://localhost:3000/, will attempt to fall back to legacy SSE
2026-05-13 09:41:08.100 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"l","version":"1"}}}
2026-05-13 09:41:08.200 [debug] [editor -> server] {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
2026-05-13 09:41:08.300 [warning] 500 status sending message to [object Object]: boom
`

func TestVSCodeLegacySSEFallback(t *testing.T) {
	c := decodeString(t, FormatVSCode, "mcp-legacy.log", vsFallbackLog)
	txCheckEveryLine(t, c, vsFallbackLog)
	obs := txObsByLine(c)
	o := obs[3]
	if o == nil || o.HTTP == nil || o.HTTP.Status != 404 || o.HTTP.URL != "http://localhost:3000/" || o.HTTP.BodyRecorded || o.Transport != schema.TransportStreamableHTTP {
		t.Fatalf("fallback line: %+v", o)
	}
	if len(o.Messages) != 1 || o.Messages[0].ID != txNum("1") || o.Messages[0].Method != "initialize" {
		t.Errorf("fallback request %+v", o.Messages)
	}
	if obs[2].Transport != schema.TransportStreamableHTTP || obs[4].Transport != schema.TransportHTTPSSE || obs[5].Transport != schema.TransportHTTPSSE {
		t.Errorf("transports %s %s %s", obs[2].Transport, obs[4].Transport, obs[5].Transport)
	}
	// A legacy POST failure names "[object Object]" (VS Code's own bug) and
	// still belongs to the unanswered request.
	if o := obs[6]; o == nil || o.HTTP == nil || o.HTTP.Status != 500 || o.HTTP.URL != "[object Object]" || o.Messages[0].ID != txNum("2") || o.Transport != schema.TransportHTTPSSE {
		t.Errorf("legacy POST failure: %+v", o)
	}
}

const vsMultilineBody = `2026-05-13 10:15:44.870 [info] Starting server acme
2026-05-13 10:15:44.888 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
2026-05-13 10:16:44.951 [info] Connection state: Error 502 status sending message to https://acme.example/mcp: <html>
<head><title>502 Bad Gateway</title></head>

</html>
2026-05-13 10:16:44.952 [error] Server exited before responding to ` + "`initialize`" + ` request.
2026-05-13 10:20:00.000 [info] Starting server acme
2026-05-13 10:20:00.100 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
2026-05-13 10:20:00.200 [info] Connection state: Error 404 status sending message to https://acme.example/mcp: {"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}; will retry with new session ID
2026-05-13 10:30:00.000 [info] Starting server acme
2026-05-13 10:30:00.100 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
2026-05-13 10:30:00.164 [info] Connection state: Error Error sending message to https://acme.example/mcp: TypeError: fetch failed
2026-05-13 10:31:00.100 [debug] [editor -> server] {"jsonrpc":"2.0","id":2,"method":"ping"}
2026-05-13 10:31:00.164 [error] Error sending message to https://acme.example/mcp: Error: connect ECONNREFUSED 127.0.0.1:443
`

func TestVSCodeStatusBodiesAndFailures(t *testing.T) {
	c := decodeString(t, FormatVSCode, "mcp-acme.log", vsMultilineBody)
	txCheckEveryLine(t, c, vsMultilineBody)
	obs := txObsByLine(c)
	o := obs[3]
	if o == nil || o.HTTP == nil || o.HTTP.Status != 502 || o.Connection != "acme#1" || len(o.Messages) != 2 {
		t.Fatalf("502: %+v", o)
	}
	if body := string(o.Messages[1].Raw); body != "<html>\n<head><title>502 Bad Gateway</title></head>\n\n</html>" || o.Messages[1].Kind != schema.MsgInvalidJSON {
		t.Errorf("502 body %q", body)
	}
	sk := txSkips(c)
	for _, l := range []int64{4, 5, 6} {
		if sk[l] != "continuation" {
			t.Errorf("line %d: %q", l, sk[l])
		}
	}
	if o := obs[10]; o == nil || o.HTTP.Status != 404 || o.Connection != "acme#2" || len(o.Messages) != 2 || o.Messages[1].Kind != schema.MsgResponse ||
		string(o.Messages[1].Raw) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}` {
		t.Errorf("404 with a JSON-RPC body: %+v", o)
	}
	if o := obs[13]; o == nil || o.HTTP == nil || o.HTTP.Responded || o.HTTP.Failure != "" || o.HTTP.FailureMessage != "TypeError: fetch failed" || o.Connection != "acme#3" {
		t.Errorf("fetch failed: %+v", o.HTTP)
	}
	if o := obs[15]; o == nil || o.HTTP == nil || o.HTTP.Failure != schema.FailureConnectionRefused || o.Messages[0].ID != txNum("2") {
		t.Errorf("ECONNREFUSED: %+v", o)
	}
}

func TestVSCodeQuarantineAndLongLines(t *testing.T) {
	text := "2026-05-13 10:15:44.870 Starting server acme\n" +
		"2026-05-13 10:15:44.871 [info] [editor -> server]   \n" +
		"2026-05-13 10:15:44.872 [debug] [editor -> server] {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"" + strings.Repeat("a", 2000) + "\"}}\n" +
		"2026-05-13 10:15:44.873 [debug] [server -> editor] {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
	c := &collector{}
	if err := decodeVSCode("x.log", strings.NewReader(text), c, 1024); err != nil {
		t.Fatal(err)
	}
	txCheckEveryLine(t, c, text)
	if len(c.quar) != 3 || c.quar[0].reason != ReasonBadValue || c.quar[1].reason != ReasonMissingField || c.quar[2].reason != ReasonLineTooLong || len(c.obs) != 1 {
		t.Errorf("quarantined %+v, obs %d", c.quar, len(c.obs))
	}
}

func TestVSCodeReadAheadStopsAtTheNextStart(t *testing.T) {
	// The second connection is remote; the first is not, whatever follows.
	text := "2026-05-13 10:00:00.000 [info] Starting server a\n" +
		"2026-05-13 10:00:00.100 [debug] [editor -> server] {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n" +
		"2026-05-13 10:01:00.000 [info] Starting server a\n" +
		"2026-05-13 10:01:00.100 [debug] [editor -> server] {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n" +
		"2026-05-13 10:01:00.200 [info] Connection state: Error 401 status sending message to https://a.example/mcp: Unauthorized\n"
	c := decodeString(t, FormatVSCode, "x.log", text)
	txCheckEveryLine(t, c, text)
	obs := txObsByLine(c)
	if obs[2].Transport != schema.TransportStdio || obs[4].Transport != schema.TransportStreamableHTTP || obs[5].HTTP.Status != 401 || obs[5].Messages[0].ID != txNum("1") || obs[5].Connection != "a#2" {
		t.Errorf("%+v %+v %+v", obs[2], obs[4], obs[5])
	}
}

func TestVSCodeDetect(t *testing.T) {
	for _, p := range []string{"../samples/vscode/local-stdio.log", "../samples/vscode/remote-http.log", "../samples/vscode/client-says-2025-03.log"} {
		if f, ok := Detect(txHead(t, p)); !ok || f != FormatVSCode {
			t.Errorf("%s detected as %q", p, f)
		}
	}
	for _, text := range []string{vsLocal, vsRemote, vsFallbackLog, vsMultilineBody} {
		if f, _ := Detect([]byte(text)); f != FormatVSCode {
			t.Errorf("detected %q for %.60q", f, text)
		}
	}
	for _, p := range txSamplesExcept(t, "samples/vscode/") {
		if sniffVSCode(txHead(t, p)) {
			t.Errorf("the VS Code sniffer claims %s", p)
		}
	}
	// Cursor writes the same timestamps without VS Code's frames or states.
	if sniffVSCode([]byte("2025-02-25 01:21:18.278 [info] db10: Calling tool 'getConsoleLogs'\n2025-02-25 01:21:18.301 [info] db10: Successfully called tool 'getConsoleLogs'\n")) {
		t.Error("claims a Cursor log")
	}
}

func TestVSCodeSampleAccounting(t *testing.T) {
	for p, want := range map[string][3]int{ // frames, stderr, HTTP
		"../samples/vscode/local-stdio.log":         {11, 3, 0},
		"../samples/vscode/remote-http.log":         {11, 0, 4},
		"../samples/vscode/client-says-2025-03.log": {8, 4, 0},
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := decodeString(t, FormatVSCode, p, string(b))
		txCheckEveryLine(t, c, string(b))
		var got [3]int
		for _, o := range c.obs {
			switch {
			case o.HTTP != nil:
				got[2]++
			case o.Stdio == schema.DirStderr:
				got[1]++
			default:
				got[0]++
			}
		}
		if got != want || len(c.quar) != 0 {
			t.Errorf("%s: got %v, want %v (quarantined %+v)", p, got, want, c.quar)
		}
	}
}

// failingReader returns its text, then an error instead of EOF.
type failingReader struct{ r *strings.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("unexpected EOF in gzip stream")
	}
	return n, err
}

func TestVSCodeReadErrorKeepsLinesReadAhead(t *testing.T) {
	var b strings.Builder
	b.WriteString("2026-05-01 10:00:00.000 [info] Starting server everything\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "2026-05-01 10:00:01.000 [debug] [editor -> server] {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", i)
	}
	dec, _ := DecoderFor(FormatVSCode)
	c := &collector{}
	err := dec("cut.log", failingReader{strings.NewReader(b.String())}, c)
	if err == nil || len(c.obs) != 100 || c.records() != 101 {
		t.Errorf("err %v, %d observations, %d records", err, len(c.obs), c.records())
	}
}

func TestVSCodeManyUnansweredRequestsStayLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("2026-05-01 10:00:00.000 [info] Starting server everything\n")
	const n = 20000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "2026-05-01 10:00:01.000 [debug] [editor -> server] {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "2026-05-01 10:00:02.000 [debug] [server -> editor] {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n", n+i)
	}
	b.WriteString("2026-05-01 10:00:03.000 [error] Error 502 status sending message to https://h/mcp: bad gateway\n")
	c := decodeString(t, FormatVSCode, "big.log", b.String())
	last := c.obs[len(c.obs)-1]
	if last.HTTP == nil || last.HTTP.Status != 502 || len(last.Messages) == 0 || last.Messages[0].ID.Text != fmt.Sprint(n-1) {
		t.Errorf("status line attached to %+v", last.Messages)
	}
}
