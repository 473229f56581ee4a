package decode_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"mcptrace/decode"
	"mcptrace/internal/synth"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// benchLines is a synthetic wire log (internal/synth) split into lines.
func benchLines(b *testing.B) ([][]byte, int64) {
	var buf bytes.Buffer
	if _, _, err := synth.Write(&buf, synth.Options{Exchanges: 5000}); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	return lines, int64(buf.Len())
}

// BenchmarkWireLine decodes every line of a synthetic wire log with
// decode.WireLine (allocations and bytes per op are per log of ~5,500
// lines; see the lines metric).
func BenchmarkWireLine(b *testing.B) {
	lines, size := benchLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for i, l := range lines {
			if _, err := decode.WireLine(l, schema.Position{Source: "bench", Line: int64(i + 1)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(lines)), "lines")
}

// BenchmarkWireDecoder is the same log through one WireDecoder that folds
// notifications, as the pipeline decodes it.
func BenchmarkWireDecoder(b *testing.B) {
	lines, size := benchLines(b)
	benchWireDecoder(b, lines, size)
}

// benchWireDecoder decodes lines (size bytes) with one WireDecoder that
// folds notifications, as the pipeline decodes them.
func benchWireDecoder(b *testing.B, lines [][]byte, size int64) {
	d := decode.NewWireDecoder()
	d.Fold = true
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for i, l := range lines {
			if _, err := d.Line(l, schema.Position{Source: "bench", Line: int64(i + 1)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(lines)), "lines")
}

// BenchmarkWireLongStream decodes one record whose event stream holds
// 100,000 progress notifications and the response, folding the
// notifications: bytes and allocations per op are what one such line costs
// beyond itself (they do not grow with the events).
func BenchmarkWireLongStream(b *testing.B) {
	var body strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":%d}}\n\n", i)
	}
	body.WriteString("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n")
	lit, _ := json.Marshal(body.String())
	line := []byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":"2026-10-17T10:10:00Z","side":"client","session_id":"s",` +
		`"http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"},` +
		`"response":{"status":200,"content_type":"text/event-stream","stream_end":"complete","body":` + string(lit) + `}}}`)
	d := decode.NewWireDecoder()
	d.Fold = true
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		o, err := d.Line(line, schema.Position{Source: "bench", Line: 1})
		if err != nil || len(o.Messages) != 3 || o.Messages[1].Folded != 99999 {
			b.Fatalf("%v: %d messages", err, len(o.Messages))
		}
	}
}

// BenchmarkWireDecoderTraffic is BenchmarkWireDecoder on 32 MiB of the
// benchmark generator's client-side wire log (internal/traffic, the log
// bench/run.sh compares with DuckDB): escaped bodies of realistic length,
// event streams, credentials in headers.
func BenchmarkWireDecoderTraffic(b *testing.B) {
	var buf bytes.Buffer
	if _, err := traffic.Write(&buf, traffic.Options{Bytes: 32 << 20, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	benchWireDecoder(b, lines, int64(buf.Len()))
}
