package decode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// Benchmarks of each format's decoder (issue 11): bytes of input to
// observations, nothing downstream. Each reports MB/s of input (b.SetBytes),
// allocations, and records/s (records: lines, HAR entries, spans, whatever
// the format's unit is; every record reaches the emitter as an observation,
// a quarantine or a skip, and the benchmark checks they all arrive).
//
//	go test ./decode -run '^$' -bench 'BenchmarkDecode|BenchmarkParseSSE' -benchmem

// benchDecodeBytes is the size each input is built up to: large enough that
// per-file set-up is noise, small enough that one iteration is a fraction
// of a second.
const benchDecodeBytes = 8 << 20

// benchInput builds the input of one format, about size bytes. It is the one
// place benchmark inputs are made: the wire log and the HAR come from
// internal/traffic (realistic traffic of 400 sessions, seed 1), the other
// formats from the samples/ files of the format, their records repeated
// (line formats) or their entries repeated inside one document (HAR,
// Inspector, OTLP documents).
func benchInput(tb testing.TB, f decode.Format, size int) []byte {
	tb.Helper()
	switch f {
	case decode.FormatWire:
		var buf bytes.Buffer
		if _, err := traffic.Write(&buf, traffic.Options{Seed: 1, Bytes: int64(size), Sessions: 400}); err != nil {
			tb.Fatal(err)
		}
		return buf.Bytes()
	case decode.FormatClaudeDesktop:
		return repeatLines(tb, size, "claude-desktop/mcp-server-filesystem.log", "claude-desktop/mcp-server-github.log")
	case decode.FormatVSCode:
		return repeatLines(tb, size, "vscode/remote-http.log", "vscode/local-stdio.log")
	case decode.FormatStdioJSONL:
		return repeatLines(tb, size, "stdio-jsonl/mcpsnoop-session.jsonl")
	case decode.FormatOTLPLogs:
		return repeatLines(tb, size, "otlp/logs.ndjson")
	case decode.FormatHAR:
		var buf bytes.Buffer
		if _, err := traffic.Write(&buf, traffic.Options{Seed: 1, Bytes: int64(size), Format: "har", Sessions: 400}); err != nil {
			tb.Fatal(err)
		}
		return buf.Bytes()
	case decode.FormatOTLPTraces:
		return repeatInDocument(tb, size, []string{"resourceSpans"}, "otlp/traces.json")
	case decode.FormatInspectorHistory:
		return repeatInDocument(tb, size, nil, "inspector/history.json")
	case decode.FormatInspectorNetwork:
		return repeatInDocument(tb, size, nil, "inspector/network.json")
	}
	tb.Fatalf("no benchmark input for format %s", f)
	return nil
}

func readSample(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "samples", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// repeatLines concatenates the sample files (each ending in a newline) until
// the result reaches size bytes.
func repeatLines(tb testing.TB, size int, names ...string) []byte {
	var unit []byte
	for _, n := range names {
		b := readSample(tb, n)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		unit = append(unit, b...)
	}
	return bytes.Repeat(unit, max(1, size/len(unit)))
}

// repeatInDocument parses each sample document, gathers the records of the
// array found under the keys path (none: the document is the array), and
// writes the first document back with those records repeated until it
// reaches about size bytes.
func repeatInDocument(tb testing.TB, size int, path []string, names ...string) []byte {
	tb.Helper()
	// get returns the array under path and a function that replaces it.
	get := func(doc any) ([]any, func([]any) any) {
		if len(path) == 0 {
			a, _ := doc.([]any)
			return a, func(n []any) any { return n }
		}
		obj, _ := doc.(map[string]any)
		for _, k := range path[:len(path)-1] {
			obj, _ = obj[k].(map[string]any)
		}
		last := path[len(path)-1]
		a, _ := obj[last].([]any)
		return a, func(n []any) any { obj[last] = n; return doc }
	}
	var first any
	var records []any
	unitBytes := 0
	for i, n := range names {
		raw := readSample(tb, n)
		unitBytes += len(raw)
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			tb.Fatalf("%s: %v", n, err)
		}
		a, _ := get(doc)
		if len(a) == 0 {
			tb.Fatalf("%s: no records under %v", n, path)
		}
		records = append(records, a...)
		if i == 0 {
			first = doc
		}
	}
	reps := max(1, size/unitBytes)
	all := make([]any, 0, reps*len(records))
	for range reps {
		all = append(all, records...)
	}
	_, set := get(first)
	out, err := json.Marshal(set(all))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// benchEmitter counts what a decoder emits and drops it.
type benchEmitter struct {
	obs, quar, skips int
	messages         int
}

func (e *benchEmitter) Observation(o *schema.Observation)                  { e.obs++; e.messages += len(o.Messages) }
func (e *benchEmitter) Quarantine(schema.Position, string, string, []byte) { e.quar++ }
func (e *benchEmitter) Skip(schema.Position, string)                       { e.skips++ }
func (e *benchEmitter) records() int                                       { return e.obs + e.quar + e.skips }

// BenchmarkDecode runs each format's FileDecoder over its input.
func BenchmarkDecode(b *testing.B) {
	formats := []decode.Format{decode.FormatWire, decode.FormatHAR, decode.FormatClaudeDesktop, decode.FormatVSCode,
		decode.FormatInspectorHistory, decode.FormatInspectorNetwork, decode.FormatOTLPTraces, decode.FormatOTLPLogs,
		decode.FormatStdioJSONL}
	for _, f := range formats {
		b.Run(string(f), func(b *testing.B) {
			in := benchInput(b, f, benchDecodeBytes)
			if got, ok := decode.Detect(in[:min(len(in), decode.SniffBytes)]); !ok || got != f {
				b.Fatalf("the %s benchmark input is detected as %q", f, got)
			}
			dec, _ := decode.DecoderFor(f)
			var e *benchEmitter
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			records := 0
			for b.Loop() {
				e = &benchEmitter{}
				if err := dec("bench", bytes.NewReader(in), e); err != nil {
					b.Fatal(err)
				}
				records += e.records()
			}
			if e.obs == 0 || e.quar != 0 {
				b.Fatalf("%d observations, %d quarantined: the input is not what the benchmark means to measure", e.obs, e.quar)
			}
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(e.records()), "records/op")
		})
	}
}

// benchSSEStream builds an event stream body of a tools/call answered on a
// POST: progress notifications, then the result carrying text of
// textBytes, each event with an id (resumable streams), LF line ends.
func benchSSEStream(progress, textBytes int) string {
	var sb strings.Builder
	sb.WriteString("id: 0\ndata:\n\n") // priming event
	for i := 1; i <= progress; i++ {
		fmt.Fprintf(&sb, "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok-7f3a\",\"progress\":%d,\"total\":%d,\"message\":\"indexed %d of %d documents\"}}\n\n",
			i, i, progress, i*40, progress*40)
	}
	const sentence = "Quarterly revenue grew 4.2% on the prior period; "
	text := strings.Repeat(sentence, textBytes/len(sentence)+1)[:textBytes]
	fmt.Fprintf(&sb, "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}],\"isError\":false}}\n\n", progress+1, text)
	return sb.String()
}

// BenchmarkParseSSEStream parses event stream bodies: a short stream (one
// progress event, a short result: the common case), a long one (50 progress
// events and a 4 KB result), and a long one with CRLF line ends.
func BenchmarkParseSSEStream(b *testing.B) {
	long := benchSSEStream(50, 4096)
	cases := []struct {
		name, body string
		events     int
	}{
		{"short", benchSSEStream(1, 120), 2},
		{"progress-50", long, 51},
		{"progress-50-crlf", strings.ReplaceAll(long, "\n", "\r\n"), 51},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			var s decode.SSEStream
			for b.Loop() {
				s = decode.ParseSSEStream(c.body, true)
			}
			if len(s.Events) != c.events {
				b.Fatalf("%d events, want %d", len(s.Events), c.events)
			}
			b.ReportMetric(float64(c.events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
