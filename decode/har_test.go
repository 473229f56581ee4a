package decode

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

const harSamples = "../samples/har"

// readHARSample returns a sample's decompressed bytes.
func readHARSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(harSamples, name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".zhar") {
		zr, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return b
}

func decodeHARSample(t *testing.T, name string) *collector {
	t.Helper()
	return decodeString(t, FormatHAR, "har/"+name, string(readHARSample(t, name)))
}

// obsAt returns the observation of an entry (1-based).
func obsAt(t *testing.T, c *collector, entry int64) *schema.Observation {
	t.Helper()
	for _, o := range c.obs {
		if o.Pos.Line == entry {
			return o
		}
	}
	t.Fatalf("no observation for entry %d", entry)
	return nil
}

func head(b []byte) []byte {
	if len(b) > SniffBytes {
		return b[:SniffBytes]
	}
	return b
}

func TestHARDetect(t *testing.T) {
	for _, name := range []string{"mitmproxy.har", "mitmproxy-batch.har", "devtools.har", "mitmproxy.zhar"} {
		if f, ok := Detect(head(readHARSample(t, name))); !ok || f != FormatHAR {
			t.Errorf("%s detected as %q", name, f)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(harSamples, "mitmproxy.zhar"))
	if f, _ := Detect(head(raw)); f == FormatHAR {
		t.Errorf("compressed .zhar bytes claimed as HAR before decompression")
	}
	// Every other sample in the tree is not a HAR, whatever its format,
	// unless it is one (the names only tell the test what to expect).
	err := filepath.WalkDir("../samples", func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || strings.HasPrefix(p, harSamples) || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		isHAR := strings.HasSuffix(p, ".har")
		if f, ok := Detect(head(b)); (ok && f == FormatHAR) != isHAR {
			t.Errorf("%s detected as %q", p, f)
		}
		if isHAR {
			c := decodeString(t, FormatHAR, p, string(b))
			if len(c.quar) != 0 || len(c.obs) == 0 {
				t.Errorf("%s: %d observations, quarantined %+v", p, len(c.obs), c.quar)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile("../samples/seed/client.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := Detect(head(seed)); f == FormatHAR {
		t.Error("seed/client.ndjson detected as HAR")
	}
	for _, s := range []string{
		"\xef\xbb\xbf{\n  \"log\" : {\"version\":\"1.2\",\"creator\":{\"name\":\"x\"},",
		`{"log":{"entries":[`,
	} {
		if !sniffHAR([]byte(s)) {
			t.Errorf("sniffHAR(%q) = false", s)
		}
	}
	for _, s := range []string{
		`{"resourceSpans":[{"scopeSpans":[]}]}`,
		`[{"id":"7","timestamp":"2026-05-27T10:00:42.123Z","method":"POST","url":"http://x/mcp"}]`,
		`{"mcptrace":"wire/1","ts":"2026-01-01T00:00:00Z","side":"client","log":{"entries":[]}}`,
		`{"log":"entries"}`,
		`{"log":{"version":"1.2"}}`,
		`{"debug":"Successfully connected","log":{"creator":{}}}`,
		"2026-03-01T13:17:37.325Z [filesystem] [info] Message from client: {\"log\":{\"entries\":[]}}",
	} {
		if sniffHAR([]byte(s)) {
			t.Errorf("sniffHAR(%q) = true", s)
		}
	}
}

func TestHARMitmproxySample(t *testing.T) {
	c := decodeHARSample(t, "mitmproxy.har")
	if len(c.obs) != 9 || len(c.quar) != 0 || len(c.skips) != 0 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	const sid = "4d9c1f70b2e84a6f9a3e5c7d1b2f8e60"
	for i, o := range c.obs {
		if o.Pos.Line != int64(i+1) || o.Pos.Source != "har/mitmproxy.har" || o.Side != schema.SideClient ||
			o.Transport != schema.TransportStreamableHTTP || o.Format != "har" || o.Connection != "" || o.SessionID != sid {
			t.Errorf("entry %d: pos %+v side %q transport %q format %q conn %q session %q", i+1, o.Pos, o.Side, o.Transport, o.Format, o.Connection, o.SessionID)
		}
		if o.Time.Location() != time.UTC || o.EndTime.Before(o.Time) {
			t.Errorf("entry %d: time %v end %v", i+1, o.Time, o.EndTime)
		}
	}
	// Entry 1: +00:00 offset with microseconds; end = start + time ms; the
	// session comes from the lower-case response header.
	o := obsAt(t, c, 1)
	if want := time.Date(2026, 3, 14, 10, 22, 5, 113402000, time.UTC); !o.Time.Equal(want) {
		t.Errorf("time %v", o.Time)
	}
	if d := o.EndTime.Sub(o.Time); d != 12621*time.Microsecond {
		t.Errorf("duration %v", d)
	}
	if o.HTTP.RespSessionID != sid || o.HTTP.ContentType != "application/json" || len(o.Messages) != 2 ||
		o.Messages[0].Method != "initialize" || o.Messages[1].Kind != schema.MsgResponse {
		t.Errorf("initialize: %+v %+v", o.HTTP, o.Messages)
	}
	if o.ProtocolVersion != "" {
		t.Errorf("initialize carries no MCP-Protocol-Version header, got %q", o.ProtocolVersion)
	}
	// Entry 2: the lower-case mcp-protocol-version header is read.
	if o := obsAt(t, c, 2); o.ProtocolVersion != "2025-11-25" || o.HTTP.Status != 202 || !o.HTTP.BodyRecorded || !o.HTTP.BodyEmpty {
		t.Errorf("initialized: %q %+v", o.ProtocolVersion, o.HTTP)
	}
	// Entry 4: an event stream: progress, then the result.
	o = obsAt(t, c, 4)
	if !o.HTTP.SSE || o.HTTP.SSEEvents != 2 || len(o.Messages) != 3 || o.Messages[1].Method != "notifications/progress" ||
		o.Messages[2].Where != schema.InPostStream || o.Messages[2].Event != 2 || o.HTTP.StreamEnd != "" {
		t.Errorf("sse: %+v %+v", o.HTTP, o.Messages)
	}
	// Entry 6: "text": null on a streamed event stream: not recorded.
	o = obsAt(t, c, 6)
	if !o.HTTP.Responded || o.HTTP.Status != 200 || !o.HTTP.SSE || o.HTTP.BodyRecorded || o.HTTP.SSEEvents != 0 || len(o.Messages) != 1 {
		t.Errorf("streamed: %+v %+v", o.HTTP, o.Messages)
	}
	// Entry 7: base64 body decoded, charset dropped from the media type.
	o = obsAt(t, c, 7)
	if o.HTTP.ContentType != "application/json" || len(o.Messages) != 2 || o.Messages[1].Kind != schema.MsgResponse ||
		o.Messages[1].ID.Text != "5" || !strings.Contains(string(o.Messages[1].Raw), "防水") {
		t.Errorf("base64: %+v %+v", o.HTTP, o.Messages)
	}
	// Entry 8: status 0 with _error.
	o = obsAt(t, c, 8)
	if o.HTTP.Responded || o.HTTP.Failure != schema.FailureReset || o.HTTP.FailureMessage != "Server disconnected." || len(o.Messages) != 1 {
		t.Errorf("no response: %+v", o.HTTP)
	}
	if o := obsAt(t, c, 9); o.HTTP.Method != "DELETE" || len(o.Messages) != 0 || o.HTTP.RequestHasBody {
		t.Errorf("delete: %+v", o.HTTP)
	}
}

func TestHARBatchSample(t *testing.T) {
	c := decodeHARSample(t, "mitmproxy-batch.har")
	if len(c.obs) != 3 || c.records() != 3 {
		t.Fatalf("obs %d records %d", len(c.obs), c.records())
	}
	o := obsAt(t, c, 3)
	var reqs, resps int
	for _, m := range o.Messages {
		switch {
		case m.Kind == schema.MsgRequest && m.Where == schema.InRequestBody && m.BatchIndex == reqs:
			reqs++
		case m.Kind == schema.MsgResponse && m.Where == schema.InResponseBody && m.InBatch():
			resps++
		}
	}
	if reqs != 2 || resps != 2 || o.Messages[0].Method != "tools/call" || o.Messages[1].Method != "resources/read" {
		t.Errorf("batch: %d requests, %d responses: %+v", reqs, resps, o.Messages)
	}
}

func TestHARDevToolsSample(t *testing.T) {
	c := decodeHARSample(t, "devtools.har")
	if len(c.obs) != 9 || len(c.skips) != 2 || len(c.quar) != 0 || c.records() != 11 {
		t.Fatalf("obs %d skips %+v quar %+v", len(c.obs), c.skips, c.quar)
	}
	for _, s := range c.skips {
		if (s.pos.Line != 1 && s.pos.Line != 11) || s.reason != "not_mcp" {
			t.Errorf("skip %+v", s)
		}
	}
	const a, b = "f81d4fae-7dec-41d0-a765-00a0c91e6bf6", "2c5ea4c0-4067-41b3-9d1c-0e8a2f7b6d35"
	for line, sid := range map[int64]string{2: a, 3: a, 4: a, 5: a, 6: a, 7: a, 8: a, 9: b, 10: b} {
		if o := obsAt(t, c, line); o.SessionID != sid || o.Transport != schema.TransportStreamableHTTP {
			t.Errorf("entry %d: session %q transport %q", line, o.SessionID, o.Transport)
		}
	}
	if o := obsAt(t, c, 2); !o.Time.Equal(time.Date(2026, 5, 19, 8, 41, 27, 356000000, time.UTC)) {
		t.Errorf("Z time: %v", o.Time)
	}
	// Entry 3: mimeType "x-unknown" is Chrome's "none".
	if o := obsAt(t, c, 3); o.HTTP.ContentType != "" || o.HTTP.Status != 202 {
		t.Errorf("x-unknown: %+v", o.HTTP)
	}
	// Entries 4 and 6: event streams still open at export, no body.
	for _, line := range []int64{4, 6} {
		if o := obsAt(t, c, line); !o.HTTP.SSE || o.HTTP.BodyRecorded || o.HTTP.StreamEnd != "" {
			t.Errorf("open stream %d: %+v", line, o.HTTP)
		}
	}
	if o := obsAt(t, c, 4); o.HTTP.Method != "GET" || len(o.Messages) != 0 {
		t.Errorf("GET stream: %+v", o.Messages)
	}
	if o := obsAt(t, c, 7); o.HTTP.Status != 429 || o.HTTP.RetryAfter != "30" {
		t.Errorf("429: %+v", o.HTTP)
	}
	if o := obsAt(t, c, 8); o.HTTP.Status != 404 || len(o.Messages) != 2 || o.Messages[1].ID.Type != schema.IDNull {
		t.Errorf("404: %+v %+v", o.HTTP, o.Messages)
	}
}

func TestHARZharSample(t *testing.T) {
	c := decodeHARSample(t, "mitmproxy.zhar")
	if len(c.obs) != 4 || c.records() != 4 {
		t.Fatalf("obs %d records %d", len(c.obs), c.records())
	}
	if o := obsAt(t, c, 3); o.ProtocolVersion != "2025-06-18" || o.SessionID != "e3b1c8d2a94f4f0b8c6d2a7e5f10b394" {
		t.Errorf("zhar: %q %q", o.ProtocolVersion, o.SessionID)
	}
}

// harDoc wraps entries into a HAR document.
func harDoc(entries ...string) string {
	return `{"log":{"version":"1.2","creator":{"name":"test","version":"1"},"entries":[` + strings.Join(entries, ",") + `]}}`
}

// harEntry builds one entry: a POST of body to url with the given response.
func harEntry(started, reqHeaders, body, response string) string {
	pd := ""
	if body != "" {
		pd = fmt.Sprintf(`,"postData":{"mimeType":"application/json","text":%s}`, strconv.Quote(body))
	}
	if reqHeaders == "" {
		reqHeaders = "[]"
	}
	return fmt.Sprintf(`{"startedDateTime":%q,"time":10.5,"request":{"method":"POST","url":"http://localhost:3000/mcp","headers":%s%s},"response":%s}`,
		started, reqHeaders, pd, response)
}

const (
	harCall   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}`
	harResult = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":false}}`
	harT0     = "2026-03-14T10:22:05.113402+00:00"
)

func decodeOneEntry(t *testing.T, entry string) *schema.Observation {
	t.Helper()
	c := decodeString(t, FormatHAR, "t.har", harDoc(entry))
	if len(c.obs) != 1 || c.records() != 1 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	return c.obs[0]
}

func TestHARNotJSON(t *testing.T) {
	for _, text := range []string{
		"this is not json",
		`{"log":{"version":"1.2","entries":[{"startedDateTime":"2026-03-14T10:22:05Z"`, // cut short
		"",
	} {
		c := decodeString(t, FormatHAR, "bad.har", text)
		if len(c.obs) != 0 || len(c.quar) != 1 || c.quar[0].reason != ReasonNotJSON || c.quar[0].pos.Line != 1 || c.quar[0].pos.Source != "bad.har" {
			t.Errorf("%q: obs %d quar %+v", text, len(c.obs), c.quar)
		}
	}
	c := decodeString(t, FormatHAR, "x.har", `{"log":{"version":"1.2"}}`)
	if len(c.quar) != 1 || c.quar[0].reason != ReasonMissingField {
		t.Errorf("no entries: %+v", c.quar)
	}
	c = decodeString(t, FormatHAR, "x.har", `[1,2]`)
	if len(c.quar) != 1 || c.quar[0].reason != ReasonNotObject {
		t.Errorf("array: %+v", c.quar)
	}
	c = decodeString(t, FormatHAR, "x.har", strings.Repeat("[", MaxDepth()+1)+strings.Repeat("]", MaxDepth()+1))
	if len(c.quar) != 1 || c.quar[0].reason != ReasonTooDeep {
		t.Errorf("deep: %+v", c.quar)
	}
}

func TestHARUnusableEntries(t *testing.T) {
	good := harEntry(harT0, "", harCall, `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`)
	doc := harDoc(
		good,
		`"not an entry"`,
		`{"startedDateTime":"2026-03-14T10:22:05Z","response":{"status":200}}`,
		`{"startedDateTime":"2026-03-14T10:22:05Z","request":{"method":"PO ST","url":"http://x/mcp"},"response":{"status":200}}`,
		`{"startedDateTime":"2026-03-14T10:22:05Z","request":{"url":"http://x/mcp"},"response":{"status":200}}`,
		`{"request":{"method":"POST","url":"http://x/mcp","postData":{"text":"{}"}},"response":{"status":200}}`,
		`{"startedDateTime":"yesterday","request":{"method":"POST","url":"http://x/mcp"},"response":{"status":200}}`,
		`{"startedDateTime":"2026-03-14T10:22:05Z","request":{"method":"POST","url":"http://x/mcp"},"response":{"status":"200"}}`,
		good,
	)
	c := decodeString(t, FormatHAR, "t.har", doc)
	if len(c.obs) != 2 || len(c.quar) != 7 || c.records() != 9 {
		t.Fatalf("obs %d quar %+v skips %+v", len(c.obs), c.quar, c.skips)
	}
	want := map[int64]string{2: ReasonNotObject, 3: ReasonMissingField, 4: ReasonBadValue, 5: ReasonMissingField, 6: ReasonMissingField, 7: ReasonBadValue, 8: ReasonBadValue}
	for _, q := range c.quar {
		if want[q.pos.Line] != q.reason || q.raw == "" || !strings.Contains(q.detail, fmt.Sprintf("entry %d", q.pos.Line)) {
			t.Errorf("entry %d: %s %q (raw %d bytes)", q.pos.Line, q.reason, q.detail, len(q.raw))
		}
	}
	if c.obs[0].Pos.Line != 1 || c.obs[1].Pos.Line != 9 {
		t.Errorf("positions %d %d", c.obs[0].Pos.Line, c.obs[1].Pos.Line)
	}
}

func TestHARTimes(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-03-14T12:22:05.5+02:00":      time.Date(2026, 3, 14, 10, 22, 5, 500000000, time.UTC),
		"2026-03-14T10:22:05.113402+00:00": time.Date(2026, 3, 14, 10, 22, 5, 113402000, time.UTC),
		"2026-03-14T05:22:05.000-0500":     time.Date(2026, 3, 14, 10, 22, 5, 0, time.UTC),
		"2026-03-14T10:22:05Z":             time.Date(2026, 3, 14, 10, 22, 5, 0, time.UTC),
	} {
		o := decodeOneEntry(t, harEntry(in, "", harCall, `{"status":200,"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`))
		if !o.Time.Equal(want) || o.Time.Location() != time.UTC || !o.EndTime.Equal(want.Add(10500*time.Microsecond)) {
			t.Errorf("%s: %v .. %v", in, o.Time, o.EndTime)
		}
	}
	// time -1 (not known): no end.
	e := strings.Replace(harEntry(harT0, "", harCall, `{"status":200,"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`), `"time":10.5`, `"time":-1`, 1)
	if o := decodeOneEntry(t, e); !o.EndTime.IsZero() {
		t.Errorf("time -1: end %v", o.EndTime)
	}
}

func TestHARHeaders(t *testing.T) {
	hs := harHeaders(gjson.Parse(`[{"name":"Via","value":"1.1 a"},{"name":"via","value":"1.1 b"},{"name":"MCP-SESSION-ID","value":"s1"},{"value":"nameless"},7]`))
	if len(hs) != 3 || hs[0].Value != "1.1 a" || hs[1].Name != "via" || HeaderValue(hs, "Mcp-Session-Id") != "s1" {
		t.Errorf("headers %+v", hs)
	}
	// Upper-case session and version headers in the request, lower-case
	// Retry-After and content-type in the response.
	o := decodeOneEntry(t, harEntry(harT0, `[{"name":"MCP-SESSION-ID","value":"s1"},{"name":"mcp-protocol-version","value":"2025-11-25"}]`, harCall,
		`{"status":429,"headers":[{"name":"retry-after","value":"12"},{"name":"content-type","value":"application/json"},{"name":"Retry-After","value":"99"}],"content":{"text":"{}"}}`))
	if o.SessionID != "s1" || o.ProtocolVersion != "2025-11-25" || o.HTTP.RetryAfter != "12" || o.HTTP.ContentType != "application/json" {
		t.Errorf("%q %q %+v", o.SessionID, o.ProtocolVersion, o.HTTP)
	}
}

func TestHARBodies(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(harResult))
	resp := func(content string) string {
		return `{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"content":` + content + `}`
	}
	for _, tc := range []struct {
		name, content string
		recorded      bool
		msgs          int
	}{
		{"base64", `{"size":60,"mimeType":"application/json","text":"` + b64 + `","encoding":"base64"}`, true, 2},
		{"base64 unpadded", `{"mimeType":"application/json","text":"` + strings.TrimRight(b64, "=") + `","encoding":"base64"}`, true, 2},
		{"bad base64", `{"mimeType":"application/json","text":"!!!not base64","encoding":"base64"}`, false, 1},
		{"no text key", `{"size":60,"mimeType":"application/json"}`, false, 1},
		{"text null", `{"size":0,"mimeType":"application/json","text":null}`, false, 1},
		{"dropped body", `{"size":600000,"mimeType":"application/json","text":"","comment":"Body discarded"}`, false, 1},
		{"playwright attach", `{"size":60,"mimeType":"application/json","_file":"75f2c1.json"}`, false, 1},
		{"empty body", `{"size":0,"mimeType":"application/json","text":""}`, true, 1},
	} {
		o := decodeOneEntry(t, harEntry(harT0, "", harCall, resp(tc.content)))
		if o.HTTP.BodyRecorded != tc.recorded || len(o.Messages) != tc.msgs || !o.HTTP.Responded {
			t.Errorf("%s: %+v %d messages", tc.name, o.HTTP, len(o.Messages))
		}
	}
	// A base64 request body.
	e := fmt.Sprintf(`{"startedDateTime":%q,"request":{"method":"POST","url":"http://x/mcp","postData":{"mimeType":"application/json","text":%q,"encoding":"base64"}},"response":{"status":202,"content":{"text":""}}}`,
		harT0, base64.StdEncoding.EncodeToString([]byte(harCall)))
	if o := decodeOneEntry(t, e); len(o.Messages) != 1 || o.Messages[0].Method != "tools/call" || !o.EndTime.IsZero() {
		t.Errorf("base64 request: %+v", o.Messages)
	}
	// A JSON-RPC batch in postData.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	o := decodeOneEntry(t, harEntry(harT0, "", batch, `{"status":200,"content":{"mimeType":"application/json","text":"[]"}}`))
	if len(o.Messages) < 3 || o.Messages[0].Kind != schema.MsgRequest || o.Messages[1].Kind != schema.MsgRequest ||
		o.Messages[1].BatchIndex != 1 || o.Messages[2].Kind != schema.MsgNotification {
		t.Errorf("batch: %+v", o.Messages)
	}
}

func TestHAREventStreams(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"event: message\ndata: " + harResult + "\n\n"
	sseResp := func(content, extra string) string {
		return `{"status":200,"headers":[{"name":"content-type","value":"text/event-stream"}],"content":` + content + extra + `}`
	}
	// A whole stream: parsed.
	o := decodeOneEntry(t, harEntry(harT0, "", harCall, sseResp(`{"mimeType":"text/event-stream","text":`+strconv.Quote(stream)+`}`, "")))
	if !o.HTTP.SSE || !o.HTTP.BodyRecorded || o.HTTP.SSEEvents != 2 || len(o.Messages) != 3 {
		t.Errorf("stream: %+v %+v", o.HTTP, o.Messages)
	}
	// The content type only in the header (an empty mimeType, as some
	// exporters write).
	o = decodeOneEntry(t, harEntry(harT0, "", harCall, sseResp(`{"mimeType":"","text":`+strconv.Quote(stream)+`}`, "")))
	if !o.HTTP.SSE || o.HTTP.SSEEvents != 2 {
		t.Errorf("header content type: %+v", o.HTTP)
	}
	// Not kept: no text, null, or empty (still open at export). Never a
	// success: the body is not recorded.
	for _, content := range []string{`{"size":0,"mimeType":"text/event-stream"}`, `{"size":0,"mimeType":"text/event-stream","text":null}`, `{"size":0,"mimeType":"text/event-stream","text":""}`} {
		o := decodeOneEntry(t, harEntry(harT0, "", harCall, sseResp(content, "")))
		if !o.HTTP.SSE || o.HTTP.BodyRecorded || o.HTTP.SSEEvents != 0 || o.HTTP.StreamEnd != "" || len(o.Messages) != 1 {
			t.Errorf("%s: %+v", content, o.HTTP)
		}
	}
	// A stream the exporter says broke: responded, with how it ended.
	partial := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	for errText, end := range map[string]string{
		"net::ERR_INCOMPLETE_CHUNKED_ENCODING": schema.StreamReset,
		"net::ERR_ABORTED":                     schema.StreamClientClosed,
		"net::ERR_TIMED_OUT":                   schema.StreamTimeout,
	} {
		o := decodeOneEntry(t, harEntry(harT0, "", harCall, sseResp(`{"mimeType":"text/event-stream","text":`+strconv.Quote(partial)+`}`, `,"_error":"`+errText+`"`)))
		if !o.HTTP.Responded || o.HTTP.Status != 200 || o.HTTP.StreamEnd != end || !o.HTTP.BodyRecorded || o.HTTP.SSEEvents != 1 {
			t.Errorf("%s: %+v", errText, o.HTTP)
		}
	}
	// A JSON body that broke after the headers: the status came, the body
	// is no usable answer, and the attempt says why.
	o = decodeOneEntry(t, harEntry(harT0, "", harCall, `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":"{\"jsonrpc\":\"2.0\",\"id\":7,\"res"},"_error":"net::ERR_CONNECTION_RESET"}`))
	if !o.HTTP.Responded || o.HTTP.Status != 200 || o.HTTP.BodyRecorded || o.HTTP.Failure != schema.FailureReset ||
		o.HTTP.FailureMessage != "net::ERR_CONNECTION_RESET (after HTTP 200)" || len(o.Messages) != 1 {
		t.Errorf("broken JSON body: %+v %+v", o.HTTP, o.Messages)
	}
}

// TestHARStatusAndError: an entry with a status and an _error received that
// status (issue 10, 11a): a non-2xx stays an error status with its body, a
// 2xx JSON body is cut with the failure the text names (reset when it names
// none), and a stream ends as the text says.
func TestHARStatusAndError(t *testing.T) {
	errBody := `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"upstream unavailable"}}`
	for _, tc := range []struct {
		name, resp      string
		status          int
		failure, end    string
		recorded, isSSE bool
	}{
		{"503 cut (mitmproxy)", `{"status":503,"headers":[{"name":"content-type","value":"application/json"}],"content":{"mimeType":"application/json","text":` + strconv.Quote(errBody[:30]) + `},"_error":"Server disconnected."}`,
			503, "", "", true, false},
		{"503 cut, whole body (Chrome)", `{"status":503,"headers":[],"content":{"mimeType":"application/json","text":` + strconv.Quote(errBody) + `},"_error":"net::ERR_CONNECTION_CLOSED"}`,
			503, "", "", true, false},
		{"502 cut, no body", `{"status":502,"headers":[],"content":{"size":0,"mimeType":"text/html"},"_error":"net::ERR_INCOMPLETE_CHUNKED_ENCODING"}`,
			502, "", "", false, false},
		{"200 JSON, client abort", `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":""},"_error":"net::ERR_ABORTED"}`,
			200, schema.FailureClientAbort, "", false, false},
		{"200 JSON, unknown text", `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":"{"},"_error":"net::ERR_FAILED"}`,
			200, schema.FailureReset, "", false, false},
		{"200 stream, client abort", `{"status":200,"headers":[],"content":{"mimeType":"text/event-stream","text":"event: message\ndata: {}\n\n"},"_error":"Client disconnected."}`,
			200, "", schema.StreamClientClosed, true, true},
		{"200 stream, server cut", `{"status":200,"headers":[],"content":{"mimeType":"text/event-stream","text":"event: message\ndata: {}\n\n"},"_error":"Server disconnected."}`,
			200, "", schema.StreamReset, true, true},
		{"200 stream, unknown text", `{"status":200,"headers":[],"content":{"mimeType":"text/event-stream","text":"event: message\ndata: {}\n\n"},"_error":"net::ERR_FAILED"}`,
			200, "", schema.StreamReset, true, true},
	} {
		o := decodeOneEntry(t, harEntry(harT0, "", harCall, tc.resp))
		h := o.HTTP
		if !h.Responded || h.Status != tc.status || h.Failure != tc.failure || h.StreamEnd != tc.end || h.BodyRecorded != tc.recorded || h.SSE != tc.isSSE {
			t.Errorf("%s: %+v", tc.name, h)
		}
	}
}

// TestHAREventTimes: a stream's events are dated from _eventSourceMessages
// when the entry has them (matched by data, in order), else the last event
// of a POST's stream at the entry's end and the others at the start of the
// receive phase; a JSON body at the entry's end; the request when it was
// sent.
func TestHAREventTimes(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	stream := "event: message\ndata: " + progress + "\n\nevent: message\ndata: " + harResult + "\n\n"
	t0, _ := time.Parse(time.RFC3339Nano, harT0)
	end := t0.Add(10500 * time.Microsecond)
	entry := func(extra string) string {
		e := harEntry(harT0, "", harCall, `{"status":200,"headers":[],"content":{"mimeType":"text/event-stream","text":`+strconv.Quote(stream)+`}}`)
		return strings.TrimSuffix(e, "}") + extra + "}"
	}
	at := func(o *schema.Observation) []time.Time {
		var out []time.Time
		for _, m := range o.Messages {
			out = append(out, m.At)
		}
		return out
	}
	same := func(got []time.Time, want ...time.Time) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if !got[i].Equal(want[i]) {
				return false
			}
		}
		return true
	}
	// No timings, no messages: the result at the end, the progress unknown.
	if got := at(decodeOneEntry(t, entry(""))); !same(got, t0, time.Time{}, end) {
		t.Errorf("no timings: %v", got)
	}
	// Timings: the progress at the start of the receive phase (ssl is part
	// of connect, -1 is a phase that did not apply).
	timings := `,"timings":{"blocked":0.5,"dns":-1,"connect":2,"ssl":1.5,"send":0.25,"wait":6.25,"receive":1.5}`
	if got := at(decodeOneEntry(t, entry(timings))); !same(got, t0, t0.Add(9*time.Millisecond), end) {
		t.Errorf("timings: %v", got)
	}
	// Timings that add up to more than the entry's time say nothing.
	if got := at(decodeOneEntry(t, entry(`,"timings":{"send":1,"wait":60,"receive":1}`))); !same(got, t0, time.Time{}, end) {
		t.Errorf("bad timings: %v", got)
	}
	// _eventSourceMessages on the entry: seconds since the epoch, or RFC
	// 3339; an event whose data no message has stays as without them.
	sec := float64(t0.Add(3*time.Millisecond).UnixMicro()) / 1e6
	msgs := fmt.Sprintf(`,"_eventSourceMessages":[{"time":%f,"eventName":"message","eventId":"","data":%s},{"time":%q,"eventName":"message","data":%s}]`,
		sec, strconv.Quote(progress), t0.Add(7*time.Millisecond).Format(time.RFC3339Nano), strconv.Quote(harResult))
	if got := at(decodeOneEntry(t, entry(msgs))); !same(got, t0, t0.Add(3*time.Millisecond), t0.Add(7*time.Millisecond)) {
		t.Errorf("event source messages: %v", got)
	}
	// Milliseconds since the epoch, under the response; only the progress
	// is matched, so the result keeps the entry's end.
	ms := fmt.Sprintf(`,"_eventSourceMessages":[{"time":%d,"data":%s},{"time":%d,"data":"something else"}]`,
		t0.Add(2*time.Millisecond).UnixMilli(), strconv.Quote(progress), t0.Add(4*time.Millisecond).UnixMilli())
	e := strings.Replace(entry(""), `"content":{`, strings.TrimPrefix(ms, ",")+`,"content":{`, 1)
	if got := at(decodeOneEntry(t, e)); !same(got, t0, t0.Add(2*time.Millisecond).Truncate(time.Millisecond), end) {
		t.Errorf("milliseconds: %v", got)
	}
	// Garbage times are unknown, never a crash.
	bad := `,"_eventSourceMessages":[{"time":"yesterday","data":` + strconv.Quote(progress) + `},{"time":-5,"data":` + strconv.Quote(harResult) + `},7]`
	if got := at(decodeOneEntry(t, entry(bad))); !same(got, t0, time.Time{}, end) {
		t.Errorf("bad times: %v", got)
	}
	// A JSON body arrives whole at the entry's end.
	o := decodeOneEntry(t, harEntry(harT0, "", harCall, `{"status":200,"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`))
	if got := at(o); !same(got, t0, end) {
		t.Errorf("JSON body: %v", got)
	}
}

func TestHARNoResponse(t *testing.T) {
	for _, tc := range []struct{ resp, kind, msg string }{
		{`{"status":0,"headers":[],"content":{},"_error":"Server disconnected."}`, schema.FailureReset, "Server disconnected."},
		{`{"status":0,"headers":[],"content":{},"_error":null}`, schema.FailurePending, ""}, // still pending at export
		{`{"status":0,"_error":"net::ERR_CONNECTION_REFUSED"}`, schema.FailureConnectionRefused, "net::ERR_CONNECTION_REFUSED"},
		{`{"status":-1,"headers":[],"content":{"size":-1,"mimeType":"x-unknown"},"_failureText":"net::ERR_CONNECTION_RESET"}`, schema.FailureReset, "net::ERR_CONNECTION_RESET"},
		{`{"status":0,"_error":"[Errno 111] Connect call failed ('127.0.0.1', 3000)"}`, schema.FailureConnectionRefused, "[Errno 111] Connect call failed ('127.0.0.1', 3000)"},
		{`{"status":0,"_error":"Server connection to 127.0.0.1:3000 timed out"}`, schema.FailureTimeout, "Server connection to 127.0.0.1:3000 timed out"},
		{`{"status":0,"_error":"net::ERR_ABORTED"}`, schema.FailureClientAbort, "net::ERR_ABORTED"},
	} {
		o := decodeOneEntry(t, harEntry(harT0, "", harCall, tc.resp))
		if o.HTTP.Responded || o.HTTP.Failure != tc.kind || o.HTTP.FailureMessage != tc.msg || len(o.Messages) != 1 || o.Messages[0].Kind != schema.MsgRequest {
			t.Errorf("%s: %+v", tc.resp, o.HTTP)
		}
	}
	// The error on the entry rather than the response; no response at all.
	e := fmt.Sprintf(`{"startedDateTime":%q,"request":{"method":"POST","url":"http://x/mcp","postData":{"text":%s}},"_error":"NS_ERROR_NET_TIMEOUT"}`, harT0, strconv.Quote(harCall))
	if o := decodeOneEntry(t, e); o.HTTP.Responded || o.HTTP.Failure != schema.FailureTimeout {
		t.Errorf("entry _error: %+v", o.HTTP)
	}
	for msg, kind := range map[string]string{
		"net::ERR_CONNECTION_REFUSED":            schema.FailureConnectionRefused,
		"NS_ERROR_CONNECTION_REFUSED":            schema.FailureConnectionRefused,
		"net::ERR_NAME_NOT_RESOLVED":             schema.FailureConnectionRefused,
		"net::ERR_CONNECTION_TIMED_OUT":          schema.FailureTimeout,
		"net::ERR_TIMED_OUT":                     schema.FailureTimeout,
		"Request timed out":                      schema.FailureTimeout,
		"net::ERR_CONNECTION_RESET":              schema.FailureReset,
		"net::ERR_CONNECTION_CLOSED":             schema.FailureReset,
		"net::ERR_EMPTY_RESPONSE":                schema.FailureReset,
		"net::ERR_CONNECTION_ABORTED":            schema.FailureReset,
		"Server disconnected.":                   schema.FailureReset,
		"peer closed connection":                 schema.FailureReset,
		"net::ERR_ABORTED":                       schema.FailureClientAbort,
		"NS_BINDING_ABORTED":                     schema.FailureClientAbort,
		"Client disconnected.":                   schema.FailureClientAbort,
		"cancelled":                              schema.FailureClientAbort,
		"AbortError: The operation was aborted.": schema.FailureClientAbort,
		"context canceled":                       schema.FailureClientAbort,
		"net::ERR_INCOMPLETE_CHUNKED_ENCODING":   schema.FailureReset,
		"net::ERR_HTTP2_PROTOCOL_ERROR":          schema.FailureReset,
		"NS_ERROR_NET_INTERRUPT":                 schema.FailureReset,
		"NS_ERROR_NET_PARTIAL_TRANSFER":          schema.FailureReset,
		"SocketError: other side closed":         schema.FailureReset,
		"Connection killed.":                     schema.FailureReset,
		"unexpected EOF":                         schema.FailureReset,
		"context deadline exceeded (Client.Timeout exceeded while awaiting headers)": schema.FailureTimeout,
		"net::ERR_FAILED":                  "", // unknown stays unknown
		"something nobody has seen before": "",
		"":                                 "",
	} {
		if got := FailureKind(msg); got != kind {
			t.Errorf("FailureKind(%q) = %s, want %s", msg, got, kind)
		}
	}
}

func TestHARSkipsPageTraffic(t *testing.T) {
	page := `{"startedDateTime":"2026-03-14T10:22:05Z","_resourceType":"document","request":{"method":"GET","url":"https://app.test/","headers":[{"name":"accept","value":"text/html"}]},"response":{"status":200,"headers":[],"content":{"mimeType":"text/html","text":"<html></html>"}}}`
	preflight := `{"startedDateTime":"2026-03-14T10:22:05Z","_resourceType":"preflight","request":{"method":"OPTIONS","url":"https://mcp.test/mcp","headers":[{"name":"access-control-request-headers","value":"content-type,mcp-session-id"}]},"response":{"status":204,"headers":[],"content":{"size":0,"mimeType":"x-unknown"}}}`
	beacon := `{"startedDateTime":"2026-03-14T10:22:05Z","request":{"method":"POST","url":"https://app.test/metrics","postData":{"mimeType":"application/json","text":"{\"event\":\"click\"}"}},"response":{"status":204,"content":{"size":0,"mimeType":"x-unknown"}}}`
	stream := `{"startedDateTime":"2026-03-14T10:22:05Z","request":{"method":"GET","url":"https://mcp.test/mcp","headers":[{"name":"accept","value":"text/event-stream"}]},"response":{"status":405,"headers":[],"content":{"size":0,"mimeType":"x-unknown"}}}`
	c := decodeString(t, FormatHAR, "p.har", harDoc(page, preflight, beacon, stream))
	if len(c.skips) != 3 || len(c.obs) != 1 || c.obs[0].Pos.Line != 4 || c.obs[0].HTTP.Status != 405 {
		t.Errorf("skips %+v obs %d", c.skips, len(c.obs))
	}
}

func TestHARLegacyTransport(t *testing.T) {
	endpoint := "event: endpoint\ndata: /messages?sessionId=abc\n\nevent: message\ndata: " +
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}` + "\n\n"
	get := fmt.Sprintf(`{"startedDateTime":"2026-03-14T10:22:05Z","time":900,"request":{"method":"GET","url":"http://localhost:3001/sse","headers":[{"name":"Accept","value":"text/event-stream"}]},"response":{"status":200,"headers":[{"name":"Content-Type","value":"text/event-stream"}],"content":{"mimeType":"text/event-stream","text":%s}}}`, strconv.Quote(endpoint))
	post := fmt.Sprintf(`{"startedDateTime":"2026-03-14T10:22:05.2Z","time":3,"request":{"method":"POST","url":"http://localhost:3001/messages?sessionId=abc","headers":[],"postData":{"mimeType":"application/json","text":%s}},"response":{"status":202,"headers":[],"content":{"mimeType":"text/plain","text":"Accepted"}}}`,
		strconv.Quote(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	c := decodeString(t, FormatHAR, "legacy.har", harDoc(get, post))
	if len(c.obs) != 2 {
		t.Fatalf("obs %d %+v", len(c.obs), c.quar)
	}
	for _, o := range c.obs {
		if o.Transport != schema.TransportHTTPSSE || o.SessionID != "abc" {
			t.Errorf("entry %d: %q %q", o.Pos.Line, o.Transport, o.SessionID)
		}
	}
	if o := c.obs[0]; o.HTTP.SSEEvents != 1 || len(o.Messages) != 1 || o.Messages[0].Where != schema.InGetStream {
		t.Errorf("GET stream: %+v %+v", o.HTTP, o.Messages)
	}
	// The GET stream streamed by mitmproxy (no body), POSTs answered 202:
	// still legacy, by the POSTs.
	getNull := strings.Replace(get, `"text":`+strconv.Quote(endpoint), `"text":null`, 1)
	c = decodeString(t, FormatHAR, "legacy.har", harDoc(post, getNull))
	if len(c.obs) != 2 || c.obs[0].Transport != schema.TransportHTTPSSE || c.obs[1].Transport != schema.TransportHTTPSSE {
		t.Errorf("legacy without GET body: %+v", c.obs)
	}
	// Streamable HTTP with a session header stays streamable.
	sh := harEntry(harT0, `[{"name":"Mcp-Session-Id","value":"s1"}]`, harCall, `{"status":202,"content":{"text":""}}`)
	if o := decodeOneEntry(t, sh); o.Transport != schema.TransportStreamableHTTP {
		t.Errorf("streamable: %q", o.Transport)
	}
}

func TestHARBOMAndDetectOnDecoder(t *testing.T) {
	doc := "\xef\xbb\xbf" + harDoc(harEntry(harT0, "", harCall, `{"status":200,"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`))
	if f, ok := Detect([]byte(doc)); !ok || f != FormatHAR {
		t.Errorf("BOM: detected %q", f)
	}
	if c := decodeString(t, FormatHAR, "bom.har", doc); len(c.obs) != 1 {
		t.Errorf("BOM: %+v", c.quar)
	}
}

// FuzzHAR: whatever the input, the decoder neither panics nor fails, and
// every entry reaches exactly one emitter method.
func FuzzHAR(f *testing.F) {
	// Small seeds: coverage-guided fuzzing crawls on the 40 KB samples.
	f.Add(harDoc(harEntry(harT0, "", harCall, `{"status":0,"_error":"x"}`), `1`, `{}`))
	f.Add(harDoc(harEntry(harT0, `[{"name":"Mcp-Session-Id","value":"s"}]`, `[`+harCall+`]`,
		`{"status":200,"headers":[{"name":"content-type","value":"text/event-stream"}],"content":{"text":"event: message\ndata: `+strings.ReplaceAll(harResult, `"`, `\"`)+`\n\n"}}`)))
	f.Add(harDoc(harEntry(harT0, "", harCall, `{"status":200,"content":{"mimeType":"application/json","text":"e30=","encoding":"base64"}}`)))
	f.Fuzz(func(t *testing.T, text string) {
		dec, _ := DecoderFor(FormatHAR)
		c := &collector{}
		if err := dec("f.har", strings.NewReader(text), c); err != nil {
			t.Fatal(err)
		}
		n, doc := 1, strings.TrimPrefix(text, "\xef\xbb\xbf")
		if gjson.Valid(doc) && !depthExceeds([]byte(doc), MaxDepth()) && gjson.Parse(doc).IsObject() {
			if es := gjson.Get(doc, "log.entries"); es.IsArray() {
				n = len(es.Array())
			}
		}
		if c.records() != n && !(n == 0 && c.records() == 0) {
			t.Fatalf("%d records for %d entries", c.records(), n)
		}
	})
}

func TestSniffHARLogNotFirst(t *testing.T) {
	if !sniffHAR([]byte(`{"comment":"exported by a tool that writes comment first","log":{"version":"1.2","entries":[{"startedDateTime":"2026-01-01T00:00:00Z"}]}}`)) {
		t.Error("a HAR whose log key is not first was not detected")
	}
}
