package decode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

func TestOTLPTracesSample(t *testing.T) {
	c := decodeString(t, FormatOTLPTraces, "t.json", inspReadSample(t, "otlp/traces.json"))
	if len(c.obs) != 12 || len(c.skips) != 2 || len(c.quar) != 0 {
		t.Fatalf("obs %d skips %+v quar %+v", len(c.obs), c.skips, c.quar)
	}
	if c.skips[0].pos.Line != 5 || c.skips[0].reason != "not_mcp" || c.skips[1].pos.Line != 8 {
		t.Errorf("skips %+v", c.skips)
	}
	type want struct {
		line     int64
		side     schema.Side
		method   string
		id       schema.ID
		kind     schema.MsgKind
		tool     string
		errType  string
		ok, fail bool
	}
	num := func(s string) schema.ID { return schema.ID{Type: schema.IDNumber, Text: s} }
	absent := schema.ID{Type: schema.IDAbsent}
	wants := []want{
		{1, "client", "initialize", num("0"), schema.MsgRequest, "", "", true, false},
		{2, "client", "notifications/initialized", absent, schema.MsgNotification, "", "", true, false},
		{3, "client", "tools/list", num("1"), schema.MsgRequest, "", "", true, false},
		{4, "client", "tools/call", num("2"), schema.MsgRequest, "get_forecast", "", true, false},
		{6, "client", "tools/call", num("3"), schema.MsgRequest, "get_forecast", "-32602", false, true},
		{7, "client", "tools/call", num("4"), schema.MsgRequest, "get_alerts", "tool_error", false, true},
		{9, "server", "initialize", num("0"), schema.MsgRequest, "", "", true, false},
		{10, "server", "notifications/initialized", absent, schema.MsgNotification, "", "", true, false},
		{11, "server", "tools/list", num("1"), schema.MsgRequest, "", "", true, false},
		{12, "server", "tools/call", num("2"), schema.MsgRequest, "get_forecast", "", true, false},
		{13, "server", "tools/call", num("3"), schema.MsgRequest, "get_forecast", "-32602", false, true},
		{14, "server", "tools/call", num("4"), schema.MsgRequest, "get_alerts", "tool_error", false, true},
	}
	for i, w := range wants {
		o := c.obs[i]
		r := o.Reported
		if o.Pos.Line != w.line || o.Side != w.side || !o.Paired || r == nil || r.Method != w.method || r.ID != w.id ||
			r.ToolName != w.tool || r.ErrorType != w.errType || r.OK != w.ok || r.Failed != w.fail || r.HTTPStatus != 0 ||
			o.Format != "otlp-traces" || o.Transport != schema.TransportStreamableHTTP || (o.SessionID != "3f9e2c71a8b54d0c9e6a1b2c3d4e5f60") != (w.line == 1) {
			t.Errorf("span %d: %+v %+v", w.line, o, r)
			continue
		}
		if len(o.Messages) != 1 || o.Messages[0].Kind != w.kind || o.Messages[0].Method != w.method || o.Messages[0].ID != w.id ||
			o.Messages[0].Where != schema.InRecord {
			t.Errorf("span %d message: %+v", w.line, o.Messages)
		}
		if w.side == "client" && (o.ClientName != "trip-planner-agent" || o.ClientVersion != "1.8.0" || o.ServerName != "") ||
			w.side == "server" && (o.ServerName != "weather-mcp" || o.ServerVersion != "0.4.1" || o.ClientName != "") {
			t.Errorf("span %d names: %q %q", w.line, o.ClientName, o.ServerName)
		}
		if w.errType == "-32602" && (r.StatusCode != "-32602" || r.Message != "Invalid params: days must be between 1 and 7") {
			t.Errorf("span %d: %+v", w.line, r)
		}
	}
	first := c.obs[0]
	if want := time.Date(2026, 5, 29, 10, 0, 12, 0, time.UTC); !first.Time.Equal(want) || !first.EndTime.Equal(want.Add(151*time.Millisecond)) || first.ProtocolVersion != "2025-11-25" {
		t.Errorf("times %v %v %q", first.Time, first.EndTime, first.ProtocolVersion)
	}
	if raw := string(c.obs[3].Messages[0].Raw); raw != `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_forecast"}}` {
		t.Errorf("synthetic request %s", raw)
	}
}

func TestOTLPLogsSample(t *testing.T) {
	c := decodeString(t, FormatOTLPLogs, "l.ndjson", inspReadSample(t, "otlp/logs.ndjson"))
	if len(c.obs) != 7 || len(c.skips) != 1 || len(c.quar) != 0 || c.skips[0].pos.Line != 4 || c.skips[0].reason != "not_mcp" {
		t.Fatalf("obs %d skips %+v quar %+v", len(c.obs), c.skips, c.quar)
	}
	type want struct {
		line       int64
		method, id string
		idType     schema.IDType
		errType    string
		http       int
		ok, fail   bool
	}
	wants := []want{
		{1, "tools/list", "1", schema.IDNumber, "", 200, true, false},
		{2, "tools/call", "2", schema.IDNumber, "", 200, true, false},
		{3, "tools/call", "3", schema.IDNumber, "tool_error", 200, false, false},
		{5, "prompts/get", "c0a8012e-4f1b-4d5e-9a77-3b6f0e9d2c41", schema.IDString, "", 200, true, false},
		{6, "tools/call", "5", schema.IDNumber, "", 429, false, false},
		{7, "tools/call", "6", schema.IDNumber, "timeout", 0, false, false},
		{8, "tools/call", "7", schema.IDNumber, "", 0, false, true},
	}
	for i, w := range wants {
		o := c.obs[i]
		r := o.Reported
		if o.Pos.Line != w.line || r.Method != w.method || r.ID.Text != w.id || r.ID.Type != w.idType || r.ErrorType != w.errType ||
			r.HTTPStatus != w.http || r.OK != w.ok || r.Failed != w.fail || o.Side != schema.SideClient || o.Format != "otlp-logs" ||
			o.ClientName != "edge-mcp-gateway" || o.SessionID != "b5e04c9a1f2d4e7c8a6b3d0f9e1c2a58" || !o.EndTime.IsZero() || o.Time.IsZero() {
			t.Errorf("record %d: %+v %+v", w.line, o, r)
		}
	}
	if r := c.obs[3]; string(r.Messages[0].Raw) != `{"jsonrpc":"2.0","id":"c0a8012e-4f1b-4d5e-9a77-3b6f0e9d2c41","method":"prompts/get","params":{"name":"summarize_ticket"}}` {
		t.Errorf("prompt request %s", r.Messages[0].Raw)
	}
	if r := c.obs[6].Reported; r.Message != "upstream connection reset by peer" {
		t.Errorf("message %q", r.Message)
	}
	if r := c.obs[0].Reported; r.Message != "" {
		t.Errorf("a successful record keeps no message: %q", r.Message)
	}
}

func otlpLine(spans string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[` + spans + `]}]}]}`
}

func otlpSpanJSON(attrs string, extra string) string {
	return `{"traceId":"S/kvNXezTaajzpKdDg5HNg==","spanId":"APBnqguVAuA=","name":"x","startTimeUnixNano":"1780048812000000000","endTimeUnixNano":"1780048812100000000","attributes":[` + attrs + `]` + extra + `}`
}

func otlpAttr(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }

func TestOTLPNDJSONAccounting(t *testing.T) {
	m := otlpAttr("mcp.method.name", "tools/list")
	text := strings.Join([]string{
		"",
		otlpLine(otlpSpanJSON(m+","+otlpAttr("jsonrpc.request.id", "1"), "") + "," + otlpSpanJSON(otlpAttr("http.route", "/mcp"), "")),
		`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"traceId":"ab`,
		"",
		`{"resourceSpans":[]}`,
		`{"something":"else"}`,
		`[1,2]`,
		otlpLine(otlpSpanJSON(m+","+otlpAttr("jsonrpc.request.id", "2"), "")),
		"{\"resourceSpans\":\"\xff\"}",
	}, "\n")
	c := decodeString(t, FormatOTLPTraces, "t", text)
	if len(c.obs) != 2 || c.records() != 10 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	if c.obs[0].Pos.Line != 1 || c.obs[1].Pos.Line != 3 || c.skips[1].pos.Line != 2 || c.skips[1].reason != "not_mcp" {
		t.Errorf("ordinals: %d %d %+v", c.obs[0].Pos.Line, c.obs[1].Pos.Line, c.skips)
	}
	wantQ := []struct {
		line   int64
		reason string
	}{{3, ReasonNotJSON}, {6, ReasonMissingField}, {7, ReasonNotObject}, {9, ReasonInvalidUTF8}}
	if len(c.quar) != len(wantQ) {
		t.Fatalf("quarantine %+v", c.quar)
	}
	for i, w := range wantQ {
		if q := c.quar[i]; q.pos.Line != w.line || q.reason != w.reason || !strings.Contains(q.detail, "line") {
			t.Errorf("quarantine %d: %+v want %+v", i, q, w)
		}
	}
	var blank, empty int
	for _, s := range c.skips {
		switch s.reason {
		case "blank":
			blank++
		case "empty_batch":
			empty++
			if s.pos.Line != 5 {
				t.Errorf("empty batch at %d", s.pos.Line)
			}
		}
	}
	if blank != 2 || empty != 1 {
		t.Errorf("skips %+v", c.skips)
	}
}

func TestOTLPDocumentModes(t *testing.T) {
	one := otlpLine(otlpSpanJSON(otlpAttr("mcp.method.name", "ping")+","+otlpAttr("jsonrpc.request.id", "9"), ""))
	pretty := strings.ReplaceAll(strings.ReplaceAll(one, "{", "{\n  "), ",", ",\n  ")
	c := decodeString(t, FormatOTLPTraces, "t", "\n"+pretty+"\n")
	if len(c.obs) != 1 || c.records() != 1 || c.obs[0].Pos.Line != 1 || c.obs[0].Reported.Method != "ping" {
		t.Errorf("pretty document: obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	c = decodeString(t, FormatOTLPTraces, "t", pretty[:len(pretty)/2])
	if len(c.quar) != 1 || c.records() != 1 || c.quar[0].reason != ReasonNotJSON || !strings.Contains(c.quar[0].detail, "document") {
		t.Errorf("cut document: %+v", c.quar)
	}
	// A pretty-printed logs document whose resourceLogs has old-style scopes.
	logs := "{\n \"resourceLogs\": [{\"resource\":{\"attributes\":[]},\"instrumentationLibraryLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"0\",\"observedTimeUnixNano\":1780048812000000000,\"severityText\":\"error\",\"attributes\":[" +
		otlpAttr("mcp.method.name", "tools/call") + "," + otlpAttr("mcp.request.id", "x") + "]}]}]}]\n}\n"
	c = decodeString(t, FormatOTLPLogs, "l", logs)
	if len(c.obs) != 1 || c.obs[0].Format != "otlp-logs" || !c.obs[0].Reported.Failed || c.obs[0].Time.IsZero() {
		t.Errorf("logs document: %+v %+v", c.obs, c.quar)
	}
	if c := decodeString(t, FormatOTLPTraces, "t", "\xef\xbb\xbf"+one+"\n"+one+"\n"); len(c.obs) != 2 {
		t.Errorf("NDJSON with a byte order mark: %+v", c.quar)
	}
	if c := decodeString(t, FormatOTLPTraces, "t", "\xef\xbb\xbf"+pretty); len(c.obs) != 1 {
		t.Errorf("document with a byte order mark: %+v", c.quar)
	}
	if c := decodeString(t, FormatOTLPTraces, "t", "\n\n"); c.records() != 2 {
		t.Errorf("blank input: %d records", c.records())
	}
}

func TestOTLPAttributes(t *testing.T) {
	dec := func(attrs, extra string) *schema.Observation {
		t.Helper()
		c := decodeString(t, FormatOTLPTraces, "t", otlpLine(otlpSpanJSON(attrs, extra)))
		if len(c.obs) != 1 {
			t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
		}
		return c.obs[0]
	}
	call := otlpAttr("mcp.method.name", "tools/call") + ","
	for idText, want := range map[string]schema.ID{
		"12":     {Type: schema.IDNumber, Text: "12"},
		"-3":     {Type: schema.IDNumber, Text: "-3"},
		"007":    {Type: schema.IDString, Text: "007"},
		"1.5":    {Type: schema.IDString, Text: "1.5"},
		"abc":    {Type: schema.IDString, Text: "abc"},
		"a\"b\\": {Type: schema.IDString, Text: "a\"b\\"},
	} {
		q, _ := json.Marshal(idText)
		attr := `{"key":"jsonrpc.request.id","value":{"stringValue":` + string(q) + `}}`
		o := dec(call+attr, "")
		if o.Reported.ID != want || o.Messages[0].ID != want || o.Messages[0].Kind != schema.MsgRequest {
			t.Errorf("id %q: %+v %+v", idText, o.Reported.ID, o.Messages[0])
		}
	}
	// intValue ids (as a string and as a number), and no id at all on a request.
	if o := dec(call+`{"key":"jsonrpc.request.id","value":{"intValue":"42"}}`, ""); o.Reported.ID.Type != schema.IDNumber || o.Reported.ID.Text != "42" {
		t.Errorf("intValue id: %+v", o.Reported.ID)
	}
	if o := dec(call+`{"key":"rpc.jsonrpc.request_id","value":{"intValue":43}}`, ""); o.Reported.ID.Text != "43" {
		t.Errorf("numeric intValue id: %+v", o.Reported.ID)
	}
	if o := dec(otlpAttr("mcp.method.name", "tools/call"), ""); o.Reported.ID.Type != schema.IDNull || o.Messages[0].Kind != schema.MsgRequest || o.Messages[0].ID.Type != schema.IDNull {
		t.Errorf("request without id: %+v %+v", o.Reported.ID, o.Messages[0])
	}
	// Kind and status as enum names; stdio; HTTP status; resource URI.
	o := dec(otlpAttr("mcp.method.name", "resources/read")+","+otlpAttr("mcp.resource.uri", "file:///a.txt")+","+otlpAttr("network.transport", "pipe")+
		`,{"key":"http.response.status_code","value":{"intValue":"503"}},{"key":"jsonrpc.request.id","value":{"stringValue":"5"}}`,
		`,"kind":"SPAN_KIND_SERVER","status":{"code":"STATUS_CODE_OK"}`)
	if o.Side != schema.SideServer || o.Transport != schema.TransportStdio || o.Reported.HTTPStatus != 503 || o.Reported.OK ||
		string(o.Messages[0].Raw) != `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///a.txt"}}` || o.ServerName != "svc" {
		t.Errorf("server span: %+v %+v %s", o, o.Reported, o.Messages[0].Raw)
	}
	// Unset status without an end time says nothing; with an error status and
	// no error.type, Failed.
	open := decodeString(t, FormatOTLPTraces, "t", otlpLine(`{"name":"ping","startTimeUnixNano":1780048812000000000,"attributes":[`+
		otlpAttr("mcp.method.name", "ping")+","+otlpAttr("jsonrpc.request.id", "1")+`]}`))
	if o := open.obs[0]; o.Reported.OK || o.Reported.Failed || !o.EndTime.IsZero() || o.Time.IsZero() {
		t.Errorf("open span: %+v %v", o.Reported, o.Time)
	}
	if o := dec(otlpAttr("mcp.method.name", "ping")+","+otlpAttr("jsonrpc.request.id", "1"), `,"status":{"code":2,"message":"boom"}`); o.Reported.OK || !o.Reported.Failed || o.Reported.Message != "boom" {
		t.Errorf("error span: %+v", o.Reported)
	}
	// Older names: mcp.error.type, rpc.jsonrpc.error_code, mcp.transport sse, http.status_code.
	o = dec(otlpAttr("mcp.method", "tools/call")+","+otlpAttr("mcp.error.type", "tool_error")+","+otlpAttr("mcp.transport", "sse")+
		`,{"key":"rpc.jsonrpc.error_code","value":{"intValue":"-32603"}},{"key":"http.status_code","value":{"intValue":200}}`, `,"kind":3`)
	if r := o.Reported; r.ErrorType != "tool_error" || r.StatusCode != "-32603" || r.HTTPStatus != 200 || o.Transport != schema.TransportHTTPSSE || o.ClientName != "svc" || r.OK {
		t.Errorf("aliases: %+v %+v", o, r)
	}
	// A span that is not an object.
	c := decodeString(t, FormatOTLPTraces, "t", otlpLine(`"oops"`))
	if len(c.quar) != 1 || c.quar[0].reason != ReasonNotObject || c.quar[0].pos.Line != 1 {
		t.Errorf("%+v", c.quar)
	}
}

func TestOTLPSniffers(t *testing.T) {
	for _, s := range []string{`{"resourceSpans":[]}`, "\xef\xbb\xbf \n{\n  \"resourceSpans\": [", `{ "resourceSpans" : 1`} {
		if f, ok := Detect([]byte(s)); !ok || f != FormatOTLPTraces {
			t.Errorf("%q: %q", s, f)
		}
	}
	if f, ok := Detect([]byte("{\"resourceLogs\":[]}\n")); !ok || f != FormatOTLPLogs {
		t.Errorf("logs: %q", f)
	}
	for _, s := range []string{`{"log":{"resourceSpans":[]}}`, `[{"resourceSpans":[]}]`, `{"mcptrace":"wire/1","resourceSpans":[]}`, `{"resourceMetrics":[]}`} {
		b := []byte(s)
		if formats[FormatOTLPTraces].sniff(b) || formats[FormatOTLPLogs].sniff(b) {
			t.Errorf("claimed %s", s)
		}
	}
}

func TestOTLPPrettyPrintedDocuments(t *testing.T) {
	span := func(id string) string {
		return `{
  "resourceSpans": [
    {"scopeSpans": [{"spans": [{"name": "tools/call search", "kind": 3,
      "startTimeUnixNano": "1718000000000000000", "endTimeUnixNano": "1718000000210000000",
      "attributes": [{"key": "mcp.method.name", "value": {"stringValue": "tools/call"}},
                     {"key": "jsonrpc.request.id", "value": {"stringValue": "` + id + `"}}],
      "status": {"code": 1}}]}]}
  ]
}`
	}
	// Collector NDJSON passed through jq: documents one after another.
	c := decodeString(t, FormatOTLPTraces, "jq.json", span("1")+"\n"+span("2")+"\n"+span("3")+"\n")
	if len(c.obs) != 3 || len(c.quar) != 0 {
		t.Errorf("jq stream: %d observations, %d quarantined", len(c.obs), len(c.quar))
	}
	// A document whose first line opens the resourceSpans array.
	c = decodeString(t, FormatOTLPTraces, "doc.json", `{"resourceSpans": [`+strings.TrimPrefix(span("4"), "{\n  \"resourceSpans\": [")+"\n")
	if len(c.obs) != 1 || len(c.quar) != 0 {
		t.Errorf("document: %d observations, %d quarantined %+v", len(c.obs), len(c.quar), c.quar)
	}
}
