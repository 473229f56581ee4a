package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"mcptrace/schema"
)

// sseBodies are event streams that probe the stream rules: line ends of
// every kind and how a JSON string writes them, a byte order mark,
// comments, ids (priming, cleared, with NUL), data of several lines, event
// types, endpoint events, a cut last event, long runs of notifications.
var sseBodies = []string{
	"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n",
	"id: p-0\nretry: 1000\ndata: \n\nid: e-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n",
	"\ufeffdata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\n\r\n",
	"\ufeff\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\r",
	"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{}}\n\n",
	"data:{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\n: ping\r\n\r\n",
	"event: endpoint\ndata: /messages?sessionId=abc-1\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n",
	"event: ping\ndata: x\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\nevent: ping\ndata: y\n\n",
	"id: a\ndata: x\n\nid: b\x00c\ndata: y\n\nid\ndata: z\n\n",
	"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
	"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n",
	"data\ndata\n\ndata:  two spaces\n\n",
	"data: [{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]\n\n",
	strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n", 20) +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}\n\n" +
		strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n", 3) +
		"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", 3) +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n",
	"data: not json\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n",
	"data:   \n\n",
	"",
	" \n\t",
	"\u00a0\u2028",
	":only a comment",
}

// jsonStr writes s as a JSON string the way a logger might: escapes
// chosen per variant (plain \n, \u000a, \r\n, raw UTF-8 or escaped).
func jsonStr(s string, variant int) string {
	b, _ := json.Marshal(s)
	out := string(b)
	switch variant {
	case 1:
		out = strings.ReplaceAll(out, `\n`, `\u000a`)
		out = strings.ReplaceAll(out, `\r`, `\u000D`)
	case 2:
		out = strings.ReplaceAll(out, `\n`, `\r\n`)
	case 3:
		out = strings.ReplaceAll(out, `\ufeff`, "\ufeff")
		out = strings.ReplaceAll(out, `"jsonrpc"`, `\"jsonrpc\u0022`)
	}
	return out
}

// hostileWireLines are wire records that probe how the one pass reads the
// record: every member in every kind, repeated and escaped, headers every
// way, event times, and the stream bodies above.
func hostileWireLines() []string {
	const head = `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.120+02:00","end_ts":"2026-10-17T08:00:00.150Z","side":"client","session_id":"s"`
	const req = `"request":{"method":"POST","url":"https://h/mcp?sessionId=u","headers":{"Mcp-Session-Id":"h"},"body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{}}}"}`
	lines := []string{wireHTTP,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"c2s","line":"[1,"}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","stdio":{"direction":"s2c","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","stdio":{"direction":"stderr","line":"boom"}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","stdio":{"direction":"c2s","line":{"jsonrpc":"2.0","id":1,"method":"ping"}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","stdio":{"direction":"c2s","line":1.50}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","transport":"stdio","stdio":{"line":"x","direction":"c2s","direction":"zz"}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"server","stdio":{"direction":"c2s"}}`,
		`{"mcptrace":"wire/2","ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"c2s","line":""}}`,
		`{"mcptrace":1,"ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"c2s","line":""}}`,
		`{"ts":"2026-10-17T10:00:00Z","side":"client","stdio":{"direction":"c2s","line":""}}`,
		`[1,2]`, `"x"`, `{}`, ``, `{"mcptrace":"wire/1"`, "{\"mcptrace\":\"wire/1\",\"x\":\"\xff\"}",
	}
	variants := []string{
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}"}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"application/json","body":"  "}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"application/json","body":"\u00a0\n"}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"application/json","body":"{bad"}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"application/json","body":17}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"content_type":"Application/JSON; charset=UTF-8","body":"{}"}}}`,
		head + `,"http":{` + req + `,"response":{"status":202,"headers":{"content-type":["text/plain","x"],"RETRY-AFTER":["7"],"mcp-session-id":[]},"body":"Accepted"}}}`,
		head + `,"http":{` + req + `,"response":{"status":200.5,"body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":"200","body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":99,"body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":503,"headers":{"Retry-After":3},"body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"headers":{"Mcp-Session-Id":"r","Mcp-Session-Id":"r2"},"body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"headers":{"Mcp-Sess\u0069on-Id":"r"},"body":""}}}`,
		head + `,"http":{` + req + `,"response":{"status":200},"failure":{"kind":"reset"}}}`,
		head + `,"http":{` + req + `,"failure":{"kind":"reset","message":"socket hang up"}}}`,
		head + `,"http":{` + req + `,"failure":{"kind":"reset","message":12}}}`,
		head + `,"http":{` + req + `,"failure":{"kind":"melted"}}}`,
		head + `,"http":{` + req + `,"failure":"reset"}}`,
		head + `,"http":{` + req + `,"response":"ok","failure":{"kind":"timeout"}}}`,
		head + `,"http":{` + req + `,"response":{"status":200,"body":""},"response":{"status":500}}}`,
		head + `,"http":{"request":{"method":"get","url":"https://h/mcp","headers":{"last-event-id":"e-9"}},"response":{"status":200,"content_type":"text/event-stream","stream_end":"reset","body":"id: e-10\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"}}}`,
		head + `,"http":{"request":{"method":"GET","url":"https://h/sse"},"response":{"status":200,"content_type":"text/event-stream","body":"event: endpoint\ndata: /m?session_id=py-1\n\n"}}}`,
		head + `,"http":{"request":{"method":"","url":"u"},"response":{"status":200}}}`,
		head + `,"http":{"request":{"url":"u"},"response":{"status":200}}}`,
		head + `,"http":{"request":"POST","response":{"status":200}}}`,
		head + `,"http":{"request":{"method":"POST","body":null},"response":{"status":200,"stream_end":"closed_by_client","content_type":"text/event-stream","body":"data: x"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"stream_end":"eventually"}}}`,
		head + `,"http":{"request":{"method":"POST"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200}},"stdio":{"direction":"c2s","line":"x"}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200}},"http":{"request":{"method":"GET"},"response":{"status":404}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"content_type":"text/event-stream","event_times":["2026-10-17T08:00:00.125Z",null,"2026-10-17T08:00:09Z"],"body":"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"content_type":"text/event-stream","event_times":null,"body":"data: {}\n\n"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"content_type":"text/event-stream","event_times":"2026-10-17T08:00:00Z","body":"data: {}\n\n"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"content_type":"text/event-stream","event_times":[17],"body":"data: {}\n\n"}}}`,
		head + `,"http":{"request":{"method":"POST"},"response":{"status":200,"content_type":"text/event-stream","event_times":["soon"],"body":"data: {}\n\n"}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":null,"side":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":"later","side":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"yesterday","side":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"proxy","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","trigger":"manual","scenario":"s\"1","transport":"http+sse","protocol_version":"2025-03-26","connection":"c","server":{"name":"srv","version":"9","name":"x"},"client":{"name":"cl\u00e9"},"http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","trigger":"bot","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","transport":"carrier pigeon","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","transport":"","client":"c","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","side":"server","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","s\u0069de":"client","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","session_id":7,"http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","labels":{"a":"b"},"http":{"request":{"method":"POST","extra":[1,{"x":null}]},"response":{"status":200}}} `,
	}
	lines = append(lines, variants...)
	for _, b := range sseBodies {
		for v := 0; v < 4; v++ {
			for _, method := range []string{"POST", "GET"} {
				for _, end := range []string{"complete", "reset", ""} {
					lines = append(lines, head+`,"http":{"request":{"method":"`+method+`","url":"https://h/mcp"},"response":{"status":200,"content_type":"text/event-stream","stream_end":"`+end+`","body":`+jsonStr(b, v)+`}}}`)
				}
			}
		}
	}
	for _, b := range hostileBodies {
		lines = append(lines, head+`,"http":{"request":{"method":"POST","body":`+jsonStr(b, 0)+`},"response":{"status":200,"content_type":"application/json","body":`+jsonStr(b, 1)+`}}}`)
	}
	return lines
}

// wireMismatch compares the one pass with the reference on one line.
func wireMismatch(d *WireDecoder, line []byte) string {
	pos := schema.Position{Source: "f", Line: 3}
	want, werr := refWireLine(line, pos)
	got, gerr := d.Line(line, pos)
	if (gerr == nil) != (werr == nil) {
		return fmt.Sprintf("error %v, reference %v: %.300q", gerr, werr, line)
	}
	if gerr != nil {
		var a, b *LineError
		if !errors.As(gerr, &a) || !errors.As(werr, &b) || *a != *b {
			return fmt.Sprintf("error %v, reference %v: %.300q", gerr, werr, line)
		}
		return ""
	}
	g, w := *got, want
	gm, wm := g.Messages, w.Messages
	g.Messages, w.Messages = nil, nil
	if !reflect.DeepEqual(g.HTTP, w.HTTP) {
		return fmt.Sprintf("http %+v, reference %+v: %.300q", g.HTTP, w.HTTP, line)
	}
	g.HTTP, w.HTTP = nil, nil
	if !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("observation %+v, reference %+v: %.300q", g, w, line)
	}
	if d.Fold {
		gm = unfold(gm)
	}
	if len(gm) != len(wm) {
		return fmt.Sprintf("%d messages, reference %d: %.300q", len(gm), len(wm), line)
	}
	for i := range gm {
		if d.Fold && gm[i].Folded < 0 {
			if gm[i].Kind != wm[i].Kind || gm[i].Method != wm[i].Method || gm[i].Where != wm[i].Where {
				return fmt.Sprintf("folded message %d: %+v, reference %+v", i, gm[i], wm[i])
			}
			continue
		}
		if !sameMessage(&gm[i], &wm[i]) {
			return fmt.Sprintf("message %d: %+v, reference %+v: %.300q", i, gm[i], wm[i], line)
		}
		if m := rpcMismatch(&gm[i]); m != "" {
			return fmt.Sprintf("message %d: %s", i, m)
		}
	}
	return ""
}

// unfold expands folded notifications back into one entry each (the
// copies marked Folded -1, to be compared only by what is kept of them).
func unfold(ms []schema.Message) []schema.Message {
	var out []schema.Message
	for _, m := range ms {
		n := m.Folded
		m.Folded = 0
		out = append(out, m)
		for range n {
			c := m
			c.Folded = -1
			out = append(out, c)
		}
	}
	return out
}

func wireInputs(tb testing.TB) [][]byte {
	var inputs [][]byte
	for _, l := range sampleLines(tb) {
		inputs = append(inputs, l)
		inputs = append(inputs, mutations(l)...)
	}
	for _, l := range hostileWireLines() {
		inputs = append(inputs, []byte(l))
		inputs = append(inputs, mutations([]byte(l))...)
	}
	return inputs
}

// TestWireLineMatchesReference: the one pass decodes every line as the
// gjson decoder did (the same observation, the same messages, the same
// quarantine reason and detail), and every RPC field equals what the
// stages after it would read from Raw. Folding changes only how many
// notifications are kept.
func TestWireLineMatchesReference(t *testing.T) {
	inputs := wireInputs(t)
	for _, fold := range []bool{false, true} {
		d := NewWireDecoder()
		d.Fold = fold
		for _, l := range inputs {
			if m := wireMismatch(d, l); m != "" {
				t.Errorf("fold %v: %s", fold, m)
			}
		}
	}
}

// TestWireLineOnePass: the one pass itself settles the sample lines (the
// general way is for the rare line, not the common one).
func TestWireLineOnePass(t *testing.T) {
	d := NewWireDecoder()
	lines := sampleLines(t)
	fast, valid := 0, 0
	for _, l := range lines {
		if _, err := refWireLine(l, schema.Position{}); err != nil {
			continue
		}
		valid++
		d.s = scanner{b: l, utf8: true}
		d.w = wireScan{}
		d.times = d.times[:0]
		if d.scanLine() {
			if _, ok := d.build(schema.Position{}); ok {
				fast++
			}
		}
	}
	if fast < valid*99/100 {
		t.Errorf("the one pass settled %d of %d valid sample lines", fast, valid)
	}
}

func FuzzWireDecoder(f *testing.F) {
	for _, l := range hostileWireLines() {
		f.Add([]byte(l), false)
	}
	f.Add([]byte(wireHTTP), true)
	d := NewWireDecoder()
	f.Fuzz(func(t *testing.T, line []byte, fold bool) {
		d.Fold = fold
		// Bodies decoded by the scanner, and (none left to it) unescaped
		// from their literals.
		defer func(m int) { scanDecodeMax = m }(scanDecodeMax)
		for _, m := range []int{maxScratch, 0} {
			scanDecodeMax = m
			if m := wireMismatch(d, line); m != "" {
				t.Errorf("scanDecodeMax %d: %s", scanDecodeMax, m)
			}
		}
	})
}

// TestParseSSEStreamMatchesReference: the event-stream parser without a
// builder per event gives the events and last id the old one gave.
func TestParseSSEStreamMatchesReference(t *testing.T) {
	bodies := append([]string(nil), sseBodies...)
	for _, l := range sampleLines(t) {
		if b, err := refWireLine(l, schema.Position{}); err == nil && b.HTTP != nil && b.HTTP.SSE {
			var rec schema.WireRecord
			if json.Unmarshal(l, &rec) == nil && rec.HTTP != nil && rec.HTTP.Response != nil && rec.HTTP.Response.Body != nil {
				bodies = append(bodies, *rec.HTTP.Response.Body)
			}
		}
	}
	if len(bodies) < len(sseBodies)+20 {
		t.Fatalf("only %d stream bodies", len(bodies))
	}
	for _, b := range bodies {
		for _, m := range append(mutations([]byte(b)), []byte(b)) {
			for _, complete := range []bool{false, true} {
				got, want := ParseSSEStream(string(m), complete), refParseSSEStream(string(m), complete)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q complete %v:\n got %+v\nwant %+v", m, complete, got, want)
				}
			}
		}
	}
}

// TestStreamAcrossPieces: a stream's literal is decoded whole by the
// line's scanner, or (on a line too long for that, here every line) is
// unescaped sseChunk bytes at a time; a CR LF, an escaped quote or a \u
// escape cut by a piece's end reads as the general decoder reads it,
// wherever the cut falls, and so it does decoded whole.
func TestStreamAcrossPieces(t *testing.T) {
	defer func(m int) { scanDecodeMax = m }(scanDecodeMax)
	for _, m := range []int{0, maxScratch} {
		scanDecodeMax = m
		streamAcrossPieces(t)
	}
}

func streamAcrossPieces(t *testing.T) {
	d := NewWireDecoder()
	checked := 0
	for _, brk := range []string{"\r\n", "\n", "\r"} {
		for pad := sseChunk - 40; pad < sseChunk+8; pad++ {
			body := "event: message" + brk + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"m\":\"" +
				strings.Repeat("x", pad%7) + "é\"}}" + brk + brk +
				": " + strings.Repeat("y", pad-60) + brk +
				"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a \\\"q\\\" b\"}]}}" + brk + brk
			line := sseWireLine(body, "complete")
			lines := [][]byte{line}
			// The same with its breaks as \u escapes, which take six bytes.
			u := bytes.ReplaceAll(bytes.ReplaceAll(line, []byte(`\r`), []byte(`\u000d`)), []byte(`\n`), []byte(`\u000A`))
			lines = append(lines, u)
			for _, l := range lines {
				for _, fold := range []bool{false, true} {
					d.Fold = fold
					if m := wireMismatch(d, l); m != "" {
						t.Fatalf("pad %d: %s", pad, m)
					}
					o, err := d.Line(l, schema.Position{Source: "f", Line: 1})
					if err != nil || len(o.Messages) != 3 {
						t.Fatalf("pad %d: %v, %d messages", pad, err, len(o.Messages))
					}
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// TestWireHeaderFoldMatchesReference: scanHeaders skips a header key
// shorter than the name it looks for; keys that fold to a name through
// longer UTF-8 (ſ for s, the Kelvin sign for k), keys one byte short or
// long and every case of the names still decode as the reference does.
func TestWireHeaderFoldMatchesReference(t *testing.T) {
	const head = `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":"2026-10-17T10:00:01Z","side":"client","http":{"request":{"method":"POST","url":"https://h/mcp","headers":`
	const mid = `,"body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"},"response":{"status":200,"headers":`
	const tail = `,"body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"}}}`
	keys := []string{"Mcp-Session-Id", "mcp-session-id", "MCP-SESSION-ID", "Mcp-ſession-Id", "Mcp-Seſſion-Id", "Mcp-Session-I", "Mcp-Session-Idd",
		"Last-Event-ID", "laſt-event-id", "Last-Event-I", "MCP-Protocol-Version", "mcp-protocol-verſion", "MCP-Protocol-Versio",
		"Content-Type", "content-typ", "Retry-After", "retry-after", "Retry-After ", "x", "", "Kontent-Type", "\u212aontent-Type"}
	d := NewWireDecoder()
	for i, k := range keys {
		for j, k2 := range keys {
			if (i+j)%3 != 0 && i != j {
				continue
			}
			hdr := `{"` + k + `":"v1","` + k2 + `":["v2"]}`
			line := head + hdr + mid + hdr + tail
			if m := wireMismatch(d, []byte(line)); m != "" {
				t.Errorf("%s", m)
			}
		}
	}
}
