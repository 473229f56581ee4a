package pipeline

import (
	"bytes"
	"testing"
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
