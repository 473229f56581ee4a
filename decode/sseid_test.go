package decode_test

import (
	"testing"

	"mcptrace/decode"
	"mcptrace/schema"
)

// The parser keeps the last event id a client holds (WHATWG: set at every
// dispatch, priming events included), in the same pass as the events.
func TestParseSSEStreamLastEventID(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		complete bool
		want     string
		events   int // dispatched events with data
	}{
		{"priming event only", "id: p-0\nretry: 1000\ndata: \n\n", false, "p-0", 0},
		{"the latest dispatched", "id: a\ndata: x\n\nid: b\nevent: message\ndata: y\n\n", false, "b", 2},
		{"an event cut before its blank line", "id: a\ndata: x\n\nid: b\ndata: {\"jsonrpc\"", false, "a", 1},
		{"forgiven when the stream ended normally", "id: a\ndata: x\n\nid: b\ndata: y", true, "b", 2},
		{"an empty id clears it", "id: a\ndata: x\n\nid\ndata: y\n\n", false, "", 2},
		{"kept across events without id", "id: a\ndata: x\n\ndata: y\n\n", false, "a", 2},
		{"CRLF and no space", "id:z9\r\ndata: x\r\n\r\n", false, "z9", 1},
		{"NUL is ignored", "id: a\ndata: x\n\nid: b\x00c\ndata: y\n\n", false, "a", 2},
		{"comments and no ids", ": ping\n\nevent: message\ndata: x\n\n", false, "", 1},
		{"a field named like id is not id", "idx: q\ndata: x\n\n", false, "", 1},
		{"empty", "", false, "", 0},
	} {
		st := decode.ParseSSEStream(tc.body, tc.complete)
		if st.LastEventID != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, st.LastEventID, tc.want)
		}
		if len(st.Events) != tc.events {
			t.Errorf("%s: %d events, want %d", tc.name, len(st.Events), tc.events)
		}
	}
}

// The decoder records it on the observation, from the wire log's stream.
func TestStreamLastEventIDOnObservation(t *testing.T) {
	line := `{"mcptrace":"wire/1","ts":"2026-11-12T12:00:00.000Z","side":"client","transport":"streamable-http","session_id":"s",` +
		`"http":{"request":{"method":"POST","url":"http://h/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}"},` +
		`"response":{"status":200,"content_type":"text/event-stream","body":"id: e-0\nretry: 500\ndata: \n\nid: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n","stream_end":"reset"}}}`
	o, err := decode.WireLine([]byte(line), schema.Position{Source: "t", Line: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o.HTTP.StreamLastEventID != "e-1" || o.HTTP.SSEEvents != 1 {
		t.Errorf("last event id %q, events %d", o.HTTP.StreamLastEventID, o.HTTP.SSEEvents)
	}
}
