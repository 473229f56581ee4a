package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mcptrace/schema"
)

// The fuzz targets of this file hold every input format's decoder, and the
// event-stream parser, to properties that hold for any input (.ci/fuzz
// runs each for a few seconds; FUZZTIME sets how long):
//
//   - every record reaches exactly one Emitter method: for a line format,
//     one per line;
//   - every position is within the input: a line number no greater than
//     the input's lines, an entry number no greater than its bytes;
//   - the same input gives the same observations, quarantines and skips;
//   - decoding returns (the fuzzer's own timeout catches a hang) and,
//     with no limits reached, without an error.

// formatSamples returns the contents of the sample files of format f
// (samples/, detected as ingest detects them, compressed ones left out)
// and, for a line format, each of their lines, for seed corpora.
func formatSamples(tb testing.TB, f Format) (files, lines []string) {
	tb.Helper()
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if got, ok := Detect(b[:min(len(b), SniffBytes)]); !ok || got != f {
			return nil
		}
		files = append(files, string(b))
		if lineFormat(f) {
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" {
					lines = append(lines, l)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no sample of format %s", f)
	}
	return files, lines
}

// lineFormat: a format with one record per line.
func lineFormat(f Format) bool {
	switch f {
	case FormatWire, FormatClaudeDesktop, FormatVSCode, FormatStdioJSONL:
		return true
	}
	return false
}

// addSamples seeds f with the samples of the formats: whole files (up to
// 16 KiB: the fuzzer crawls on large inputs), their first 16 KiB, and
// each line of a line format.
func addSamples(f *testing.F, formats ...Format) {
	for _, fm := range formats {
		files, lines := formatSamples(f, fm)
		for _, s := range files {
			f.Add(s[:min(len(s), 16<<10)])
		}
		for _, l := range lines {
			f.Add(l)
		}
	}
}

// checkDecoder decodes s as format fm twice and checks the properties
// above.
func checkDecoder(t *testing.T, fm Format, s string) {
	t.Helper()
	c := decodeString(t, fm, "fuzz", s)
	if again := decodeString(t, fm, "fuzz", s); !sameCollected(c, again) {
		t.Fatalf("%s: two decodings of one input differ", fm)
	}
	if lineFormat(fm) && s != "" && c.records() != txLines(s) {
		t.Fatalf("%s: %d records (%d observations, %d quarantined, %d skipped) for %d lines",
			fm, c.records(), len(c.obs), len(c.quar), len(c.skips), txLines(s))
	}
	if !lineFormat(fm) && fm != FormatOTLPTraces && fm != FormatOTLPLogs && fm != FormatHAR && strings.Trim(s, "[], \n\t\r") != "" && c.records() == 0 {
		t.Fatalf("%s: nothing accounted for a non-blank input", fm)
	}
	bound := int64(len(s)) + 1
	if lineFormat(fm) {
		bound = int64(txLines(s))
	}
	check := func(what string, p schema.Position) {
		if p.Source != "fuzz" || p.Line < 0 || p.Line > bound || p.Sub < 0 {
			t.Fatalf("%s: %s at %+v, outside an input of %d bytes (bound %d)", fm, what, p, len(s), bound)
		}
		if lineFormat(fm) && p.Line < 1 {
			t.Fatalf("%s: %s at line %d", fm, what, p.Line)
		}
	}
	for _, o := range c.obs {
		check("observation", o.Pos)
		if o.Format == "" {
			t.Fatalf("%s: an observation without a format at %+v", fm, o.Pos)
		}
	}
	for _, q := range c.quar {
		check("quarantine "+q.reason, q.pos)
		if q.reason == "" {
			t.Fatalf("%s: a quarantine without a reason at %+v", fm, q.pos)
		}
		if len(q.raw) > len(s)+len("\n") {
			t.Fatalf("%s: a quarantine excerpt of %d bytes from an input of %d", fm, len(q.raw), len(s))
		}
	}
	for _, k := range c.skips {
		check("skip "+k.reason, k.pos)
		if k.reason == "" {
			t.Fatalf("%s: a skip without a reason at %+v", fm, k.pos)
		}
	}
}

// sameCollected compares two collections of what a decoder emitted.
func sameCollected(a, b *collector) bool {
	return reflect.DeepEqual(a.obs, b.obs) && reflect.DeepEqual(a.quar, b.quar) && reflect.DeepEqual(a.skips, b.skips)
}

func FuzzFormatWire(f *testing.F) {
	addSamples(f, FormatWire)
	for _, l := range hostileWireLines() {
		f.Add(l + "\n" + l)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDecoder(t, FormatWire, s) })
}

func FuzzFormatHAR(f *testing.F) {
	addSamples(f, FormatHAR)
	for _, doc := range harOddDocs() {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDecoder(t, FormatHAR, s) })
}

func FuzzFormatClaudeDesktop(f *testing.F) {
	addSamples(f, FormatClaudeDesktop)
	f.Add(claudeMultiline)
	f.Add(claudeTruncated)
	f.Fuzz(func(t *testing.T, s string) { checkDecoder(t, FormatClaudeDesktop, s) })
}

func FuzzFormatVSCode(f *testing.F) {
	addSamples(f, FormatVSCode)
	f.Add(vsRemote)
	f.Add(vsMultilineBody)
	f.Fuzz(func(t *testing.T, s string) { checkDecoder(t, FormatVSCode, s) })
}

func FuzzFormatStdioJSONL(f *testing.F) {
	addSamples(f, FormatStdioJSONL)
	f.Fuzz(func(t *testing.T, s string) { checkDecoder(t, FormatStdioJSONL, s) })
}

// FuzzFormatInspector runs both Inspector exports' decoders on each input.
func FuzzFormatInspector(f *testing.F) {
	addSamples(f, FormatInspectorHistory, FormatInspectorNetwork)
	f.Fuzz(func(t *testing.T, s string) {
		checkDecoder(t, FormatInspectorHistory, s)
		checkDecoder(t, FormatInspectorNetwork, s)
	})
}

// FuzzFormatOTLP runs the traces and the logs decoder on each input.
func FuzzFormatOTLP(f *testing.F) {
	addSamples(f, FormatOTLPTraces, FormatOTLPLogs)
	f.Fuzz(func(t *testing.T, s string) {
		checkDecoder(t, FormatOTLPTraces, s)
		checkDecoder(t, FormatOTLPLogs, s)
	})
}

// FuzzDetect: whatever the first bytes, Detect names a registered format
// or none, and the decoder it names accounts for the input.
func FuzzDetect(f *testing.F) {
	for _, fm := range Formats() {
		files, _ := formatSamples(f, fm)
		f.Add(files[0][:min(len(files[0]), 4<<10)])
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, ok := Detect([]byte(s))
		if !ok {
			return
		}
		if _, ok := DecoderFor(fm); !ok {
			t.Fatalf("detected %q, which has no decoder", fm)
		}
		checkDecoder(t, fm, s)
	})
}

// sseWireLine is a wire-log line whose POST was answered with body as a
// text/event-stream.
func sseWireLine(body string, end string) []byte {
	q, _ := json.Marshal(body)
	return []byte(fmt.Sprintf(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":"2026-10-17T10:00:01Z","side":"client","transport":"streamable-http","session_id":"s","http":{"request":{"method":"POST","url":"https://h/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"},"response":{"status":200,"content_type":"text/event-stream","stream_end":%q,"body":%s}}}`, end, q))
}

// FuzzSSE holds the event-stream parser to the WHATWG reference on any
// body, complete or cut, and the wire decoder's one-pass stream reading
// (with and without folding) to the general decoder it replaces. The
// events a cut stream gives are the first of those the same stream gives
// complete; every event dispatched has data; no event id holds a NUL.
func FuzzSSE(f *testing.F) {
	for _, b := range sseBodies {
		f.Add(b)
	}
	for _, l := range sampleLines(f) {
		var rec schema.WireRecord
		if json.Unmarshal(l, &rec) == nil && rec.HTTP != nil && rec.HTTP.Response != nil && rec.HTTP.Response.Body != nil &&
			strings.Contains(rec.HTTP.Response.ContentType, "event-stream") {
			f.Add(*rec.HTTP.Response.Body)
		}
	}
	d := NewWireDecoder()
	f.Fuzz(func(t *testing.T, body string) {
		var streams [2]SSEStream
		for i, complete := range []bool{false, true} {
			got, want := ParseSSEStream(body, complete), refParseSSEStream(body, complete)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("complete %v:\n got %+v\nwant %+v", complete, got, want)
			}
			for _, e := range got.Events {
				if e.Data == "" || strings.ContainsRune(e.ID, 0) {
					t.Fatalf("event %+v", e)
				}
			}
			if strings.ContainsRune(got.LastEventID, 0) {
				t.Fatalf("last event id %q", got.LastEventID)
			}
			streams[i] = got
		}
		cut, whole := streams[0].Events, streams[1].Events
		if len(cut) > len(whole) || len(whole) > len(cut)+1 || !slices.Equal(cut, whole[:len(cut)]) {
			t.Fatalf("cut stream's events %+v are not the first of the complete stream's %+v", cut, whole)
		}
		if n := strings.Count(body, "\n") + strings.Count(body, "\r") + 1; len(whole) > n {
			t.Fatalf("%d events from %d lines", len(whole), n)
		}
		for _, end := range []string{"complete", "reset"} {
			line := sseWireLine(body, end)
			for _, fold := range []bool{false, true} {
				d.Fold = fold
				if m := wireMismatch(d, line); m != "" {
					t.Fatal(m)
				}
			}
		}
	})
}

// The seeds every target starts from are what its format's decoder reads
// as that format.
func TestFuzzSeedsAreTheirFormat(t *testing.T) {
	for _, fm := range Formats() {
		files, lines := formatSamples(t, fm)
		if lineFormat(fm) != (len(lines) > 0) {
			t.Errorf("%s: %d sample lines", fm, len(lines))
		}
		for _, s := range files {
			if c := decodeString(t, fm, "s", s); len(c.obs) == 0 {
				t.Errorf("%s: a sample with no observation", fm)
			}
		}
	}
	if !bytes.Contains(sseWireLine("data: x\n\n", "complete"), []byte(`"body":"data: x\n\n"`)) {
		t.Error("sseWireLine does not carry the body")
	}
}
