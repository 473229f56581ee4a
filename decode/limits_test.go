package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"mcptrace/schema"
)

// zeros is an endless reader of zero bytes, like /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// countReader counts what a decoder read.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// limited is a collector with small limits and an optional stop after a
// number of records.
type limited struct {
	collector
	maxLine  int
	maxDoc   int64
	stopAt   int // stop once this many records were emitted; <0: never
	stopAsks int
}

func (l *limited) MaxLineBytes() int       { return l.maxLine }
func (l *limited) MaxDocumentBytes() int64 { return l.maxDoc }
func (l *limited) Stopped() bool {
	l.stopAsks++
	return l.stopAt >= 0 && l.records() >= l.stopAt
}

func TestReadLines(t *testing.T) {
	in := "\xef\xbb\xbf" + wireHTTP + "\r\n\n" + strings.Repeat("x", 100) + "\nlast"
	var got []Line
	err := ReadLines(strings.NewReader(in), LineOptions{MaxLine: 64 + len(wireHTTP)}, func(l Line) error {
		l.Text = bytes.Clone(l.Text)
		l.Head = bytes.Clone(l.Head)
		got = append(got, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d lines", len(got))
	}
	// Line 1: the byte order mark is gone, so a wire log that starts with
	// one decodes its first line.
	if string(got[0].Text) != wireHTTP || got[0].Offset != 0 || got[0].Size != int64(3+len(wireHTTP)+2) {
		t.Errorf("line 1: %q offset %d size %d", got[0].Text, got[0].Offset, got[0].Size)
	}
	if _, err := WireLine(got[0].Text, schema.Position{Source: "w", Line: 1}); err != nil {
		t.Errorf("line 1 after a byte order mark: %v", err)
	}
	if got[1].No != 2 || len(got[1].Text) != 0 || got[1].Offset != got[0].Size || got[1].Size != 1 {
		t.Errorf("line 2: %+v", got[1])
	}
	if got[2].TooLong || got[2].Reason() != "" {
		t.Errorf("line 3 is not too long at this limit: %+v", got[2])
	}
	if got[3].No != 4 || string(got[3].Text) != "last" || got[3].Size != 4 || got[3].Offset != int64(len(in)-4) {
		t.Errorf("line 4: %+v", got[3])
	}

	// An over-long line is skipped up to its newline, reading goes on.
	got = nil
	err = ReadLines(strings.NewReader(strings.Repeat("y", 5000)+"\nok\n"), LineOptions{MaxLine: 100}, func(l Line) error {
		l.Head = bytes.Clone(l.Head)
		got = append(got, l)
		return nil
	})
	if err != nil || len(got) != 2 || !got[0].TooLong || got[0].Abandoned || got[0].Reason() != ReasonLineTooLong ||
		got[0].Size != 5001 || len(got[0].Head) != excerptBytes || !strings.Contains(got[0].Detail, "-max-line") || got[1].Offset != 5001 {
		t.Errorf("over-long line: %v %+v", err, got)
	}

	// fn's error ends the loop and comes back as is.
	boom := errors.New("boom")
	n := 0
	if err := ReadLines(strings.NewReader("a\nb\nc\n"), LineOptions{}, func(Line) error { n++; return boom }); err != boom || n != 1 {
		t.Errorf("fn error: %v after %d lines", err, n)
	}
	// A read error after the whole lines comes back as is.
	rerr := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("a\nb\n"), errReader{rerr})
	n = 0
	if err := ReadLines(r, LineOptions{}, func(Line) error { n++; return nil }); err != rerr || n != 2 {
		t.Errorf("read error: %v after %d lines", err, n)
	}
	// A stop ends the loop before the next line.
	n = 0
	err = ReadLines(strings.NewReader("a\nb\nc\n"), LineOptions{Stop: func() bool { return n == 2 }}, func(Line) error { n++; return nil })
	if err != ErrStopped || n != 2 {
		t.Errorf("stop: %v after %d lines", err, n)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestReadLinesAbandonsAnEndlessLine: with no newline in sight the skip of an
// over-long line ends at the document limit, so /dev/zero with a line
// format ends.
func TestReadLinesAbandonsAnEndlessLine(t *testing.T) {
	const limit = 64 << 10
	cr := &countReader{r: io.LimitReader(zeros{}, 64*limit)}
	var got []Line
	err := ReadLines(cr, LineOptions{MaxLine: 1024, MaxDocument: limit}, func(l Line) error {
		got = append(got, l)
		return nil
	})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit", err)
	}
	if len(got) != 1 || !got[0].Abandoned || got[0].Reason() != ReasonDocumentTooLarge || got[0].Offset != 0 ||
		!strings.Contains(got[0].Detail, fmt.Sprint(limit)) || !strings.Contains(got[0].Detail, "-max-document") {
		t.Fatalf("lines: %+v", got)
	}
	if cr.n > limit+512<<10 {
		t.Errorf("read %d bytes for a %d-byte limit", cr.n, limit)
	}
}

// docInputs are endless-looking inputs (a few times the limit) that every
// format's decoder must give up on at the document limit.
func docInputs(limit int64) map[Format]func() io.Reader {
	z := func() io.Reader { return io.LimitReader(zeros{}, 16*limit) }
	prettyOTLP := func() io.Reader {
		// A pretty-printed document of short lines that never ends.
		return io.LimitReader(io.MultiReader(strings.NewReader("{\n  \"resourceSpans\": [\n"), repeatReader("    {},\n")), 16*limit)
	}
	return map[Format]func() io.Reader{
		FormatWire: z, FormatStdioJSONL: z, FormatClaudeDesktop: z, FormatVSCode: z, FormatOTLPLogs: z,
		FormatOTLPTraces: prettyOTLP, FormatHAR: z, FormatInspectorHistory: z, FormatInspectorNetwork: z,
	}
}

func repeatReader(s string) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		n := 0
		for n+len(s) <= len(p) {
			n += copy(p[n:], s)
		}
		if n == 0 {
			n = copy(p, s[:min(len(s), len(p))])
		}
		return n, nil
	})
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestEveryDecoderEndsAtTheDocumentLimit(t *testing.T) {
	const limit = 256 << 10
	for f, input := range docInputs(limit) {
		t.Run(string(f), func(t *testing.T) {
			dec, _ := DecoderFor(f)
			e := &limited{maxLine: 1024, maxDoc: limit, stopAt: -1}
			cr := &countReader{r: input()}
			err := dec("in", cr, e)
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want one wrapping ErrLimit", err)
			}
			if len(e.quar) != 1 || e.records() != 1 {
				t.Fatalf("want the one record quarantined, got %d quarantined of %d: %+v", len(e.quar), e.records(), e.quar)
			}
			q := e.quar[0]
			if q.reason != ReasonDocumentTooLarge || !strings.Contains(q.detail, fmt.Sprint(limit)) || !strings.Contains(q.detail, "-max-document") {
				t.Errorf("quarantine: %+v", q)
			}
			if len(q.raw) > maxQuarantineRaw {
				t.Errorf("raw of %d bytes", len(q.raw))
			}
			if cr.n > limit+512<<10 {
				t.Errorf("read %d bytes of input for a %d-byte limit", cr.n, limit)
			}
		})
	}
}

// TestDocumentLimitBoundsMemory measures what decoding an over-long input
// allocates: it depends on the limit, not on the input's size.
func TestDocumentLimitBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	for _, f := range []Format{FormatWire, FormatHAR, FormatOTLPTraces, FormatInspectorNetwork} {
		var small uint64
		for _, size := range []int64{16 * limit, 128 * limit} {
			dec, _ := DecoderFor(f)
			r := io.LimitReader(zeros{}, size)
			if f == FormatOTLPTraces {
				r = io.LimitReader(io.MultiReader(strings.NewReader("{\n\"resourceSpans\": [\n"), repeatReader("{},\n")), size)
			}
			alloc := allocated(func() {
				if err := dec("in", r, &limited{maxDoc: limit, stopAt: -1}); !errors.Is(err, ErrLimit) {
					t.Errorf("%s: %v", f, err)
				}
			})
			// The document and its growth, the line reader's buffer.
			if max := uint64(8*limit + 1<<20); alloc > max {
				t.Errorf("%s over %d bytes of input allocated %d bytes, want at most %d", f, size, alloc, max)
			}
			if small == 0 {
				small = alloc
			} else if alloc > small+256<<10 {
				t.Errorf("%s: %d bytes allocated over %d bytes of input, %d over 16 times the limit: memory grows with the input", f, alloc, size, small)
			}
		}
	}
}

func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func BenchmarkDocumentLimit(b *testing.B) {
	const limit = 1 << 20
	for _, f := range []Format{FormatWire, FormatHAR} {
		b.Run(string(f), func(b *testing.B) {
			dec, _ := DecoderFor(f)
			b.ReportAllocs()
			b.SetBytes(limit)
			for b.Loop() {
				dec("in", io.LimitReader(zeros{}, 64*limit), &limited{maxDoc: limit, stopAt: -1})
			}
		})
	}
}

// stopSamples is one sample per format, each with more records than the
// stop tests let through.
var stopSamples = map[Format]string{
	FormatWire:             "seed/client.ndjson",
	FormatStdioJSONL:       "stdio-jsonl/mcpsnoop-session.jsonl",
	FormatClaudeDesktop:    "claude-desktop/mcp-server-filesystem.log",
	FormatVSCode:           "vscode/local-stdio.log",
	FormatHAR:              "har/mitmproxy.har",
	FormatInspectorHistory: "inspector/history.json",
	FormatInspectorNetwork: "inspector/network.json",
	FormatOTLPTraces:       "otlp/traces.json",
	FormatOTLPLogs:         "otlp/logs.ndjson",
}

func TestEveryDecoderStops(t *testing.T) {
	if len(stopSamples) != len(Formats()) {
		t.Fatalf("a sample for each of the %d formats, have %d", len(Formats()), len(stopSamples))
	}
	for f, rel := range stopSamples {
		t.Run(string(f), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "samples", rel))
			if err != nil {
				t.Fatal(err)
			}
			dec, _ := DecoderFor(f)
			all := &limited{stopAt: -1}
			if err := dec(rel, bytes.NewReader(data), all); err != nil {
				t.Fatalf("whole sample: %v", err)
			}
			const n = 3
			if all.records() < n+3 {
				t.Fatalf("sample has only %d records", all.records())
			}
			for _, stopAt := range []int{0, n} {
				e := &limited{stopAt: stopAt}
				err := dec(rel, bytes.NewReader(data), e)
				if err != ErrStopped {
					t.Fatalf("stop after %d: err = %v, want ErrStopped", stopAt, err)
				}
				// VS Code emits a status line it already read when it stops.
				if e.records() < stopAt || e.records() > stopAt+1 {
					t.Errorf("stop after %d: %d records emitted (of %d)", stopAt, e.records(), all.records())
				}
			}
		})
	}
}
