package pipeline

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"mcptrace/internal/traffic"
)

// TestLineSlabRefs: a slab counts its lines not yet decoded, plus the
// feed's hold until it is full; releasing every line of a sealed slab
// brings it to zero (back to the pool), in whatever order units finish.
func TestLineSlabRefs(t *testing.T) {
	var s slabber
	line := bytes.Repeat([]byte("a"), slabMaxLine)
	var items []lineItem
	for i := range 6 { // four fill the first slab, two go into the second
		b := append([]byte(nil), line...)
		b[0] = byte('0' + i)
		l, sl := s.copyLine(b)
		if sl == nil || !bytes.Equal(l, b) {
			t.Fatalf("line %d: not copied into a slab", i)
		}
		items = append(items, lineItem{line: l, slab: sl})
	}
	first, second := items[0].slab, items[5].slab
	if first == second || items[3].slab != first || items[4].slab != second {
		t.Fatal("lines not placed in order into two slabs")
	}
	if got := first.refs.Load(); got != 4 {
		t.Fatalf("sealed slab with 4 lines: refs %d, want 4", got)
	}
	if got := second.refs.Load(); got != 3 {
		t.Fatalf("open slab with 2 lines: refs %d, want 3", got)
	}
	for i, it := range items {
		if it.line[0] != byte('0'+i) {
			t.Fatalf("line %d overwritten", i)
		}
	}
	// Units decoded out of order: the second unit (lines 3..5) first.
	releaseLines(items[3:])
	if first.refs.Load() != 3 || second.refs.Load() != 1 {
		t.Fatalf("after the second unit: refs %d, %d", first.refs.Load(), second.refs.Load())
	}
	if items[3].line != nil || items[3].slab != nil {
		t.Fatal("released items still point into their slab")
	}
	releaseLines(items[:3])
	if first.refs.Load() != 0 {
		t.Fatalf("every line of the sealed slab decoded: refs %d", first.refs.Load())
	}
	s.seal()
	if second.refs.Load() != 0 {
		t.Fatalf("the feed's slab sealed after its lines: refs %d", second.refs.Load())
	}
	// A long line gets memory of its own.
	long := bytes.Repeat([]byte("b"), slabMaxLine+1)
	l, sl := s.copyLine(long)
	if sl != nil || !bytes.Equal(l, long) {
		t.Fatal("a long line went into a slab")
	}
	releaseLines([]lineItem{{line: l}, {reason: "x"}})
}

// TestLongStreamLine: a record of an event stream far longer than a slab
// (and than the 1 MiB past which ReadLines gathers a line outside the
// heap, freed once the line is decoded) is judged as its short form is,
// with every notification counted, beside ordinary records on both sides.
func TestLongStreamLine(t *testing.T) {
	run := func(events int) *Summary {
		var buf bytes.Buffer
		if _, err := traffic.Write(&buf, traffic.Options{Seed: 1, Shape: traffic.ShapeLongSSE, Events: events}); err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		if _, err := traffic.Write(&plain, traffic.Options{Seed: 2, Bytes: 256 << 10, Sessions: 4}); err != nil {
			t.Fatal(err)
		}
		log := append(append(plain.Bytes(), buf.Bytes()...), plain.Bytes()...)
		if longest := slices.Max(lineLengths(log)); events > 1000 && longest < 4<<20 {
			t.Fatalf("the longest line is %d bytes: not long enough to test anything", longest)
		}
		p := filepath.Join(t.TempDir(), "a.ndjson")
		if err := os.WriteFile(p, log, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := Run(context.Background(), Config{Inputs: []string{p}, OutDir: t.TempDir(), MaxLineBytes: 64 << 20, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Balanced() || sum.Quarantined != 0 {
			t.Fatalf("summary %+v", sum)
		}
		return sum
	}
	short, long := run(10), run(60000)
	if long.Correlation.Notifications-short.Correlation.Notifications != 60000-10 {
		t.Errorf("notifications: %d with 60000 events, %d with 10", long.Correlation.Notifications, short.Correlation.Notifications)
	}
	if !maps.Equal(short.ByOutcome, long.ByOutcome) || short.Exchanges != long.Exchanges {
		t.Errorf("outcomes %v (%d exchanges) with 60000 events, %v (%d) with 10", long.ByOutcome, long.Exchanges, short.ByOutcome, short.Exchanges)
	}
}

func lineLengths(b []byte) []int {
	var n []int
	for _, l := range bytes.Split(b, []byte("\n")) {
		n = append(n, len(l))
	}
	return n
}
