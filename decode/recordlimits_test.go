package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"mcptrace/schema"
)

// limitCollector is a collector that asks for record limits.
type limitCollector struct {
	collector
	lim Limits
}

func (c *limitCollector) RecordLimits() Limits { return c.lim }

// wireWith is a client wire record whose request and response bodies are
// reqBody and respBody, the response of content type ctype.
func wireWith(reqBody, respBody, ctype string) string {
	rec := map[string]any{
		"mcptrace": "wire/1", "ts": "2026-10-17T09:14:03.118Z", "end_ts": "2026-10-17T09:14:03.121Z",
		"side": "client", "transport": "streamable-http", "connection": "c1",
		"http": map[string]any{
			"request":  map[string]any{"method": "POST", "url": "http://127.0.0.1:1/mcp", "headers": map[string]any{}, "body": reqBody},
			"response": map[string]any{"status": 200, "headers": map[string]any{}, "content_type": ctype, "body": respBody},
		},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const limReq = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`

// limResp is a response whose text is n bytes of x.
func limResp(n int) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", n) + `"}]}}`
}

// limStream is an event stream of n progress notifications and the
// response, n+1 message events.
func limStream(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i)
	}
	b.WriteString("event: message\ndata: " + limResp(2) + "\n\n")
	return b.String()
}

// bothPaths decodes line with the one pass and with the general decoder,
// and checks they agree on whether and why it is refused.
func bothPaths(t *testing.T, line string, lim Limits) (*schema.Observation, *LineError) {
	t.Helper()
	d := NewWireDecoder()
	d.Limits = lim
	o, err := d.Line([]byte(line), schema.Position{Source: "l.ndjson", Line: 1})
	_, gerr := wireLineGJSON([]byte(line), schema.Position{Source: "l.ndjson", Line: 1}, lim)
	if (err == nil) != (gerr == nil) || (err != nil && err.Error() != gerr.Error()) {
		t.Fatalf("the one pass says %v, the general decoder %v", err, gerr)
	}
	if err == nil {
		return o, nil
	}
	le, ok := err.(*LineError)
	if !ok {
		t.Fatalf("error %T %v, want a *LineError", err, err)
	}
	return nil, le
}

func TestBodyLimit(t *testing.T) {
	resp := limResp(1000)
	n := int64(len(resp))
	lim := Limits{MaxBody: n}
	if o, le := bothPaths(t, wireWith(limReq, resp, "application/json"), lim); le != nil || len(o.Messages) != 2 {
		t.Fatalf("a body at the limit: %v, %v", o, le)
	}
	lim.MaxBody = n - 1
	_, le := bothPaths(t, wireWith(limReq, resp, "application/json"), lim)
	if le == nil || le.Reason != ReasonBodyTooLarge || !strings.Contains(le.Detail, fmt.Sprintf("response body of %d bytes is over -max-body %d bytes", n, n-1)) {
		t.Fatalf("a response body one byte over: %v", le)
	}
	// The request body is measured too, and said first.
	_, le = bothPaths(t, wireWith(limReq, resp, "application/json"), Limits{MaxBody: int64(len(limReq)) - 1})
	if le == nil || le.Reason != ReasonBodyTooLarge || !strings.Contains(le.Detail, "request body of") {
		t.Fatalf("a request body over: %v", le)
	}
	// The limit is on the body as decoded: escapes are not counted as
	// their text. A body of 600 quotes is 600 bytes, 1,200 in the line.
	quoted := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`\"`, 300) + `"}]}}`
	if o, le := bothPaths(t, wireWith(limReq, quoted, "application/json"), Limits{MaxBody: int64(len(quoted))}); le != nil || o == nil {
		t.Fatalf("an escaped body within the limit: %v", le)
	}
	if _, le := bothPaths(t, wireWith(limReq, quoted, "application/json"), Limits{MaxBody: int64(len(quoted)) - 1}); le == nil || le.Reason != ReasonBodyTooLarge {
		t.Fatalf("an escaped body one byte over: %v", le)
	}
	// An event stream is a body too.
	stream := limStream(3)
	if _, le := bothPaths(t, wireWith(limReq, stream, "text/event-stream"), Limits{MaxBody: int64(len(stream)) - 1}); le == nil || le.Reason != ReasonBodyTooLarge {
		t.Fatalf("a stream body over: %v", le)
	}
	// The default is generous: this is all within it.
	if o, le := bothPaths(t, wireWith(limReq, resp, "application/json"), Limits{}); le != nil || o == nil {
		t.Fatalf("default limit: %v", le)
	}
}

func TestSSEEventLimit(t *testing.T) {
	line := wireWith(limReq, limStream(4), "text/event-stream") // 5 message events
	o, le := bothPaths(t, line, Limits{MaxSSEEvents: 5})
	if le != nil || o.HTTP.SSEEvents != 5 {
		t.Fatalf("5 events at a limit of 5: %v %v", o, le)
	}
	_, le = bothPaths(t, line, Limits{MaxSSEEvents: 4})
	if le == nil || le.Reason != ReasonTooManyEvents || !strings.Contains(le.Detail, "event stream of 5 message events is over -max-sse-events 4") {
		t.Fatalf("5 events at a limit of 4: %v", le)
	}
	// Folded or not, every event counts.
	d := NewWireDecoder()
	d.Fold, d.Limits = true, Limits{MaxSSEEvents: 4}
	if _, err := d.Line([]byte(line), schema.Position{Source: "l", Line: 1}); err == nil || err.(*LineError).Reason != ReasonTooManyEvents {
		t.Fatalf("folding decoder: %v", err)
	}
	// A decoder reused after a refused line decodes the next one whole.
	d.Limits = Limits{}
	if o, err := d.Line([]byte(line), schema.Position{Source: "l", Line: 2}); err != nil || o.HTTP.SSEEvents != 5 {
		t.Fatalf("the next line: %v %v", o, err)
	}
}

// The wire file decoder asks its Emitter for the limits, quarantines the
// record past one, and goes on.
func TestWireFileRecordLimits(t *testing.T) {
	good := wireWith(limReq, limResp(10), "application/json")
	big := wireWith(limReq, limResp(5000), "application/json")
	c := &limitCollector{lim: Limits{MaxBody: 1000}}
	if err := decodeWireFile("w.ndjson", strings.NewReader(good+"\n"+big+"\n"+good+"\n"), c); err != nil {
		t.Fatal(err)
	}
	if len(c.obs) != 2 || len(c.quar) != 1 || c.quar[0].pos.Line != 2 || c.quar[0].reason != ReasonBodyTooLarge ||
		!strings.Contains(c.quar[0].detail, "-max-body 1000 bytes") || c.quar[0].raw != big {
		t.Fatalf("obs %d quar %+v", len(c.obs), c.quar)
	}
}

func harWith(respText string) string {
	ent := map[string]any{
		"startedDateTime": "2026-10-17T09:14:03.118Z", "time": 3,
		"request": map[string]any{"method": "POST", "url": "http://127.0.0.1:1/mcp", "headers": []any{},
			"postData": map[string]any{"mimeType": "application/json", "text": limReq}},
		"response": map[string]any{"status": 200, "headers": []any{}, "content": map[string]any{"mimeType": "application/json", "text": respText}},
	}
	b, _ := json.Marshal(ent)
	return string(b)
}

// A HAR entry past a record limit is quarantined where it is, the limit
// named; the entries around it are decoded.
func TestHAREntryRecordLimits(t *testing.T) {
	doc := `{"log":{"version":"1.2","entries":[` + harWith(limResp(10)) + "," + harWith(limResp(5000)) + "," + harWith(limResp(10)) + `]}}`
	c := &limitCollector{lim: Limits{MaxBody: 1000}}
	if err := decodeHARFile("x.har", strings.NewReader(doc), c); err != nil {
		t.Fatal(err)
	}
	if len(c.obs) != 2 || len(c.quar) != 1 || c.quar[0].pos.Line != 2 || c.quar[0].reason != ReasonBodyTooLarge ||
		!strings.Contains(c.quar[0].detail, "HAR entry 2: response body of") || !strings.Contains(c.quar[0].detail, "-max-body 1000 bytes") {
		t.Fatalf("obs %d quar %+v", len(c.obs), c.quar)
	}
	c = &limitCollector{}
	if err := decodeHARFile("x.har", strings.NewReader(doc), c); err != nil || len(c.obs) != 3 || len(c.quar) != 0 {
		t.Fatalf("default limits: %v, obs %d quar %+v", err, len(c.obs), c.quar)
	}
}

// The depth limit is a setting: a line nested one level past it is
// quarantined, the limit and its flag named; at it, decoded.
func TestDepthLimitIsConfigurable(t *testing.T) {
	defer SetMaxDepth(DefaultMaxDepth)
	SetMaxDepth(20)
	if MaxDepth() != 20 {
		t.Fatalf("MaxDepth %d", MaxDepth())
	}
	// A line whose labels nest n arrays deep: the line nests n+1 levels.
	deep := func(n int) string {
		l := wireWith(limReq, limResp(1), "application/json")
		return l[:len(l)-1] + `,"labels":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	okLine, deepLine := deep(19), deep(20)
	if depthExceeds([]byte(okLine), 20) || !depthExceeds([]byte(deepLine), 20) {
		t.Fatal("the lines are not either side of the limit")
	}
	if okLine == "" || deepLine == "" {
		t.Fatal("no lines either side of the limit")
	}
	if o, le := bothPaths(t, okLine, Limits{}); le != nil || o == nil {
		t.Fatalf("at the limit: %v", le)
	}
	_, le := bothPaths(t, deepLine, Limits{})
	if le == nil || le.Reason != ReasonTooDeep || le.Detail != "JSON nests deeper than 20 levels (-max-depth)" {
		t.Fatalf("past the limit: %v", le)
	}
	SetMaxDepth(DefaultMaxDepth)
	if _, le := bothPaths(t, deepLine, Limits{}); le != nil {
		t.Fatalf("at the default limit: %v", le)
	}
	SetMaxDepth(0)
	SetMaxDepth(MaxMaxDepth + 1)
	if MaxDepth() != DefaultMaxDepth {
		t.Fatalf("an out-of-range setting gave %d", MaxDepth())
	}
}

func TestUnescapedLen(t *testing.T) {
	for _, s := range []string{"", "abc", `a\nb`, `\"\\\/`, `\u00e9x`, `\ud83d\ude00`, `tail\`} {
		want := len(s)
		var v string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &v); err == nil {
			want = len(v)
		}
		if got := unescapedLen([]byte(s)); got != int64(want) {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

// FuzzRecordLimits holds the one pass to the general decoder under small
// record limits: both refuse the same lines with the same reason and
// detail, and a line either refuses decodes as it does without limits.
func FuzzRecordLimits(f *testing.F) {
	for _, l := range hostileWireLines() {
		f.Add([]byte(l), uint16(64), uint8(2))
	}
	f.Add([]byte(wireWith(limReq, limResp(100), "application/json")), uint16(150), uint8(1))
	f.Add([]byte(wireWith(limReq, limStream(3), "text/event-stream")), uint16(4000), uint8(3))
	f.Add([]byte(wireWith(limReq, `{"jsonrpc":"2.0","id":1,"result":{"t":"`+strings.Repeat(`\u00e9`, 40)+`"}}`, "application/json")), uint16(100), uint8(1))
	d := NewWireDecoder()
	free := NewWireDecoder()
	f.Fuzz(func(t *testing.T, line []byte, maxBody uint16, maxEvents uint8) {
		lim := Limits{MaxBody: int64(maxBody) + 1, MaxSSEEvents: int(maxEvents) + 1}
		d.Limits = lim
		pos := schema.Position{Source: "f", Line: 1}
		_, err := d.Line(line, pos)
		_, gerr := wireLineGJSON(line, pos, lim)
		if (err == nil) != (gerr == nil) || (err != nil && err.Error() != gerr.Error()) {
			t.Fatalf("one pass: %v; general: %v", err, gerr)
		}
		var le *LineError
		if err == nil || !errors.As(err, &le) || (le.Reason != ReasonBodyTooLarge && le.Reason != ReasonTooManyEvents) {
			return
		}
		// Refused for a limit only: without limits the line decodes.
		if _, ferr := free.Line(line, pos); ferr != nil {
			t.Fatalf("refused for %s, but without limits: %v", le.Reason, ferr)
		}
	})
}
