package decode

import (
	"errors"
	"strings"
	"testing"
	"time"

	"mcptrace/schema"
)

func TestParseSSE(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		complete bool
		want     []Event
	}{
		{"one event", "event: message\ndata: {\"a\":1}\n\n", true, []Event{{Type: "message", Data: `{"a":1}`}}},
		{"multi-line data joined with newline", "data: {\"a\":\ndata: 1}\n\n", true, []Event{{Data: "{\"a\":\n1}"}}},
		{"comments and CRLF", ": keep-alive\r\ndata:x\r\n\r\n", true, []Event{{Data: "x"}}},
		{"CR line ends", "data: a\r\rdata: b\r\r", true, []Event{{Data: "a"}, {Data: "b"}}},
		{"priming event with empty data is not dispatched", "id: ev-1\nretry: 500\ndata: \n\ndata: y\n\n", true, []Event{{ID: "ev-1", Data: "y"}}},
		{"id carries over", "id: 7\ndata: a\n\ndata: b\n\n", true, []Event{{ID: "7", Data: "a"}, {ID: "7", Data: "b"}}},
		{"unterminated event discarded when cut", "data: a\n\ndata: b", false, []Event{{Data: "a"}}},
		{"unterminated event kept when complete", "data: a\n\ndata: b", true, []Event{{Data: "a"}, {Data: "b"}}},
		{"field without colon", "data\n\n", true, nil},
		{"one leading space only", "data:  two\n\n", true, []Event{{Data: " two"}}},
		{"endpoint event type", "event: endpoint\ndata: /messages?sessionId=abc\n\n", true, []Event{{Type: "endpoint", Data: "/messages?sessionId=abc"}}},
	}
	for _, c := range cases {
		got := ParseSSE(c.text, c.complete)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %d events %+v, want %+v", c.name, len(got), got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: event %d = %+v, want %+v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestAppendMessages(t *testing.T) {
	msgs := AppendMessages(nil, []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"x","result":{}},7]`), schema.InRequestBody, 0)
	if len(msgs) != 4 {
		t.Fatalf("got %d messages", len(msgs))
	}
	want := []struct {
		kind  schema.MsgKind
		id    schema.ID
		batch int
	}{
		{schema.MsgRequest, schema.ID{Type: schema.IDNumber, Text: "1"}, 0},
		{schema.MsgNotification, schema.ID{Type: schema.IDAbsent}, 1},
		{schema.MsgResponse, schema.ID{Type: schema.IDString, Text: "x"}, 2},
		{schema.MsgOther, schema.ID{}, 3},
	}
	for i, w := range want {
		if msgs[i].Kind != w.kind || msgs[i].ID != w.id || msgs[i].BatchIndex != w.batch {
			t.Errorf("message %d = %+v, want %+v", i, msgs[i], w)
		}
	}
	if m := AppendMessages(nil, []byte("{nope"), schema.InResponseBody, 0); len(m) != 1 || m[0].Kind != schema.MsgInvalidJSON {
		t.Errorf("invalid JSON: %+v", m)
	}
	if m := AppendMessages(nil, []byte("  "), schema.InResponseBody, 0); len(m) != 0 {
		t.Errorf("blank body gave %d messages", len(m))
	}
	a := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`), schema.InRequestBody, 0)
	b := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`), schema.InRequestBody, 0)
	c := AppendMessages(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"y"}}`), schema.InRequestBody, 0)
	if a[0].ParamsHash != b[0].ParamsHash || a[0].ParamsHash == c[0].ParamsHash {
		t.Error("params hash should ignore the id and see the params")
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if m := AppendMessages(nil, []byte(deep), schema.InResponseBody, 0); len(m) != 1 || m[0].Kind != schema.MsgOther {
		t.Errorf("deep body: %+v", m)
	}
}

const wireHTTP = `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.120+02:00","end_ts":"2026-10-17T08:00:00.150Z","side":"client","transport":"streamable-http","client":{"name":"c","version":"1"},"connection":"k","http":{"request":{"method":"post","url":"https://h/mcp","headers":{"MCP-Protocol-Version":"2025-11-25","mcp-session-id":["S1","S2"]},"body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"},"response":{"status":200,"headers":{"Content-Type":"text/event-stream; charset=utf-8","Retry-After":"5"},"body":"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n","stream_end":"complete"}}}`

func TestWireLineHTTP(t *testing.T) {
	o, err := WireLine([]byte(wireHTTP), schema.Position{Source: "f", Line: 9})
	if err != nil {
		t.Fatal(err)
	}
	if o.Side != schema.SideClient || o.SessionID != "S1" || o.ProtocolVersion != "2025-11-25" || o.ClientName != "c" || o.Pos.Line != 9 {
		t.Errorf("observation: %+v", o)
	}
	if got := o.Time.Format("15:04:05.000"); got != "08:00:00.120" || o.EndTime.Sub(o.Time).Milliseconds() != 30 {
		t.Errorf("times: %v %v", o.Time, o.EndTime)
	}
	h := o.HTTP
	if h.Method != "POST" || !h.SSE || h.ContentType != "text/event-stream" || h.SSEEvents != 2 || h.RetryAfter != "5" || !h.BodyRecorded {
		t.Errorf("http: %+v", h)
	}
	if len(o.Messages) != 3 || o.Messages[0].Where != schema.InRequestBody || o.Messages[1].Kind != schema.MsgNotification ||
		o.Messages[2].Kind != schema.MsgResponse || o.Messages[2].Where != schema.InPostStream || o.Messages[2].Event != 2 {
		t.Errorf("messages: %+v", o.Messages)
	}
}

func TestWireLineVariants(t *testing.T) {
	// Body absent: not recorded; body "": recorded and empty.
	o, err := WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","http":{"request":{"method":"POST"},"response":{"status":202}}}`), schema.Position{})
	if err != nil || o.HTTP.BodyRecorded || o.Transport != schema.TransportStreamableHTTP {
		t.Errorf("absent body: %+v %v", o.HTTP, err)
	}
	o, _ = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","http":{"request":{"method":"POST"},"response":{"status":202,"body":""}}}`), schema.Position{})
	if !o.HTTP.BodyRecorded || !o.HTTP.BodyEmpty {
		t.Errorf("empty body: %+v", o.HTTP)
	}
	// Legacy HTTP+SSE: the session comes from the endpoint event or the query.
	o, _ = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","transport":"http+sse","http":{"request":{"method":"GET","url":"http://h/sse"},"response":{"status":200,"content_type":"text/event-stream","body":"event: endpoint\ndata: /messages?sessionId=abc\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n","stream_end":"client_closed"}}}`), schema.Position{})
	if o.SessionID != "abc" || len(o.Messages) != 1 || o.Messages[0].Where != schema.InGetStream {
		t.Errorf("legacy GET: %q %+v", o.SessionID, o.Messages)
	}
	o, _ = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","transport":"http+sse","http":{"request":{"method":"POST","url":"http://h/messages?session_id=py1"},"response":{"status":202}}}`), schema.Position{})
	if o.SessionID != "py1" {
		t.Errorf("legacy POST session %q", o.SessionID)
	}
	// Resumed stream.
	o, _ = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"GET","headers":{"Last-Event-ID":"e5"}},"response":{"status":200,"content_type":"text/event-stream","body":"id: e6\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"}}}`), schema.Position{})
	if len(o.Messages) != 1 || o.Messages[0].Where != schema.InResumedStream {
		t.Errorf("resumed: %+v", o.Messages)
	}
	// Failure and stdio.
	o, err = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"},"failure":{"kind":"reset","message":"ECONNRESET"}}}`), schema.Position{})
	if err != nil || o.HTTP.Responded || o.HTTP.Failure != "reset" {
		t.Errorf("failure: %+v %v", o.HTTP, err)
	}
	o, err = WireLine([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"s2c","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"}}`), schema.Position{})
	if err != nil || o.Transport != schema.TransportStdio || o.Stdio != "s2c" || len(o.Messages) != 1 {
		t.Errorf("stdio: %+v %v", o, err)
	}
}

func TestWireLineErrors(t *testing.T) {
	cases := []struct {
		line, reason string
	}{
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"},"resp`, ReasonNotJSON},
		{"\x00\x01\xff\xfe garbage", ReasonInvalidUTF8},
		{`[1,2,3]`, ReasonNotObject},
		{`{"hello":"world"}`, ReasonNotWireRecord},
		{`{"mcptrace":"wire/9","ts":"x"}`, ReasonUnsupported},
		{`{"mcptrace":"wire/1","side":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`, ReasonMissingField},
		{`{"mcptrace":"wire/1","ts":"yesterday","side":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`, ReasonBadValue},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","http":{"request":{"method":"POST"},"response":{"status":200}}}`, ReasonMissingField},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"proxy","http":{"request":{"method":"POST"},"response":{"status":200}}}`, ReasonBadValue},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client"}`, ReasonMissingField},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"}}}`, ReasonMissingField},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"},"response":{"status":"ok"}}}`, ReasonBadValue},
		{`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"up","line":"x"}}`, ReasonBadValue},
		{strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), ReasonTooDeep},
	}
	for _, c := range cases {
		_, err := WireLine([]byte(c.line), schema.Position{})
		var le *LineError
		if !errors.As(err, &le) || le.Reason != c.reason {
			t.Errorf("%.60q: got %v, want %s", c.line, err, c.reason)
		}
	}
}

func FuzzWireLine(f *testing.F) {
	f.Add([]byte(wireHTTP))
	f.Add([]byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"c2s","line":"[1,"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		WireLine(line, schema.Position{}) // must not panic
	})
}

func TestBatchCap(t *testing.T) {
	big := "[" + strings.Repeat("0,", MaxBatch) + "0]"
	if m := AppendMessages(nil, []byte(big), schema.InResponseBody, 0); len(m) != 1 || m[0].Kind != schema.MsgOther || len(m[0].Raw) > 512 {
		t.Errorf("oversized batch: %d messages", len(m))
	}
	ok := "[" + strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, MaxBatch-1) + `{"jsonrpc":"2.0","method":"n"}]`
	if m := AppendMessages(nil, []byte(ok), schema.InRequestBody, 0); len(m) != MaxBatch || m[MaxBatch-1].BatchIndex != MaxBatch-1 {
		t.Errorf("batch at the cap: %d messages", len(m))
	}
}

func TestEnumeratedValuesAreChecked(t *testing.T) {
	for _, line := range []string{
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"},"failure":{"kind":"Bearer abcdefghijkl"}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","http":{"request":{"method":"POST"},"response":{"status":200,"stream_end":"eventually"}}}`,
	} {
		_, err := WireLine([]byte(line), schema.Position{})
		var le *LineError
		if !errors.As(err, &le) || le.Reason != ReasonBadValue {
			t.Errorf("%.70s: %v", line, err)
		}
	}
}

// TestWireEventTimes: response.event_times dates the stream's dispatched
// events (null: unknown); without them the last event of a POST's stream
// arrives at end_ts and the others are unknown, a GET stream's events are
// unknown, a JSON body arrives at end_ts, request messages and stdio frames
// at ts.
func TestWireEventTimes(t *testing.T) {
	t0 := time.Date(2026, 10, 17, 8, 0, 0, 120e6, time.UTC)
	end := t0.Add(30 * time.Millisecond)
	at := func(line string) []time.Time {
		t.Helper()
		o, err := WireLine([]byte(line), schema.Position{})
		if err != nil {
			t.Fatalf("%v: %.80s", err, line)
		}
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
	if got := at(wireHTTP); !same(got, t0, time.Time{}, end) {
		t.Errorf("no event times: %v", got)
	}
	withTimes := strings.Replace(wireHTTP, `"stream_end":"complete"`, `"stream_end":"complete","event_times":["2026-10-17T08:00:00.125Z","2026-10-17T10:00:00.140+02:00"]`, 1)
	if got := at(withTimes); !same(got, t0, t0.Add(5*time.Millisecond), t0.Add(20*time.Millisecond)) {
		t.Errorf("event times: %v", got)
	}
	// null is unknown (the fallback applies); entries past the events are
	// ignored.
	partial := strings.Replace(wireHTTP, `"stream_end":"complete"`, `"stream_end":"complete","event_times":["2026-10-17T08:00:00.125Z",null,"2026-10-17T08:00:09Z"]`, 1)
	if got := at(partial); !same(got, t0, t0.Add(5*time.Millisecond), end) {
		t.Errorf("partial event times: %v", got)
	}
	get := `{"mcptrace":"wire/1","ts":"2026-10-17T08:00:00.120Z","end_ts":"2026-10-17T08:00:00.150Z","side":"client","http":{"request":{"method":"GET"},"response":{"status":200,"content_type":"text/event-stream","body":"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"}}}`
	if got := at(get); !same(got, time.Time{}) {
		t.Errorf("GET stream: %v", got)
	}
	js := `{"mcptrace":"wire/1","ts":"2026-10-17T08:00:00.120Z","end_ts":"2026-10-17T08:00:00.150Z","side":"client","http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}}}`
	if got := at(js); !same(got, t0, end) {
		t.Errorf("JSON body: %v", got)
	}
	stdio := `{"mcptrace":"wire/1","ts":"2026-10-17T08:00:00.120Z","side":"client","stdio":{"direction":"s2c","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"}}`
	if got := at(stdio); !same(got, t0) {
		t.Errorf("stdio: %v", got)
	}
	// Bad event_times are a bad value, quarantined like any other.
	for _, bad := range []string{`"event_times":"2026-10-17T08:00:00Z"`, `"event_times":[17]`, `"event_times":["soon"]`} {
		line := strings.Replace(wireHTTP, `"stream_end":"complete"`, `"stream_end":"complete",`+bad, 1)
		_, err := WireLine([]byte(line), schema.Position{})
		var le *LineError
		if !errors.As(err, &le) || le.Reason != ReasonBadValue || !strings.Contains(le.Detail, "event_times") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestWireClosedByClient: stream_end closed_by_client is read as
// client_closed.
func TestWireClosedByClient(t *testing.T) {
	line := strings.Replace(wireHTTP, `"stream_end":"complete"`, `"stream_end":"closed_by_client"`, 1)
	o, err := WireLine([]byte(line), schema.Position{})
	if err != nil || o.HTTP.StreamEnd != schema.StreamClientClosed {
		t.Errorf("closed_by_client: %q %v", o.HTTP.StreamEnd, err)
	}
}
