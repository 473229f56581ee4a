package decode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// decodeThenScribble decodes line from a buffer of its own, overwrites
// that buffer, and reports whether the observation (or the error) still
// equals one decoded from an untouched copy: whether the decoder kept any
// byte of the line. The pipeline reuses a line's memory as soon as the
// line is decoded (pipeline/lineslab.go), and an oversized line is memory
// given back to the system at once (decode.Line.Release).
func decodeThenScribble(t *testing.T, d *decode.WireDecoder, line []byte, pos schema.Position) {
	t.Helper()
	want, werr := d.Line(append([]byte(nil), line...), pos)
	buf := append([]byte(nil), line...)
	got, gerr := d.Line(buf, pos)
	for i := range buf {
		buf[i] = "x\"\\{}0"[i%6]
	}
	// Decoding another line reuses the decoder's scratch memory too.
	d.Line([]byte(`{"mcptrace":"wire/1","ts":"2026-01-01T00:00:00Z","side":"client","http":{"request":{"method":"GET","url":"http://h/"},"response":{"status":200,"body":"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"}}}`), pos)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("line %d: errors differ: %v and %v", pos.Line, werr, gerr)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("line %d: the observation changed when its line's memory was overwritten:\n%+v\n%+v", pos.Line, want, got)
	}
}

// TestWireObservationOwnsItsMemory: an observation, and the error of a
// quarantined line, hold no byte of the line they were decoded from, on
// every wire sample and on generated traffic of every outcome.
func TestWireObservationOwnsItsMemory(t *testing.T) {
	var logs [][]byte
	files, _ := filepath.Glob("../samples/*/*.ndjson")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b[:min(len(b), 200)], []byte(`"mcptrace"`)) {
			logs = append(logs, b)
		}
	}
	var buf bytes.Buffer
	if _, err := traffic.Write(&buf, traffic.Options{Seed: 3, Bytes: 2 << 20, Sessions: 20}); err != nil {
		t.Fatal(err)
	}
	logs = append(logs, buf.Bytes())
	if len(logs) < 5 {
		t.Fatalf("only %d wire logs found", len(logs))
	}
	for _, fold := range []bool{false, true} {
		d := decode.NewWireDecoder()
		d.Fold = fold
		n := 0
		for _, log := range logs {
			for i, line := range bytes.Split(log, []byte("\n")) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				decodeThenScribble(t, d, line, schema.Position{Source: "s", Line: int64(i + 1)})
				n++
			}
		}
		// Lines the general way decodes or quarantines.
		for i, line := range []string{`{"mcptrace":"wire/1","ts":"2026-01-01T00:00:00Z","side":"client","side":"server","http":{"request":{"method":"POST","url":"u","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\\u00e9\"}}"}}}`,
			`{"mcptrace":"wire/1","ts":"bad"}`, `[1,2]`, `{"mcptrace":"wire/1","ts":"2026-01-01T00:00:00Z","side":"client","stdio":{"dir":"client_to_server","line":"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"m\"}"}}`} {
			decodeThenScribble(t, d, []byte(line), schema.Position{Source: "s", Line: int64(i + 1)})
		}
		if n < 1000 {
			t.Fatalf("only %d lines", n)
		}
	}
}
