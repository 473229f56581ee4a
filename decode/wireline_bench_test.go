package decode_test

import (
	"bytes"
	"testing"

	"mcptrace/decode"
	"mcptrace/internal/synth"
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
