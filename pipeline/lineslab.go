package pipeline

import (
	"sync"
	"sync/atomic"
)

// Lines of a wire log are copied out of the reader's buffer into slabs:
// consecutive lines share one slab instead of one allocation each, and a
// slab goes back to a pool as soon as every line in it is decoded, not
// when the garbage collector finds it. A decoded observation holds no byte
// of its line (decode copies or interns what it keeps; TestWireObservation
// OwnsItsMemory), so a unit's lines are done with once decoded, while its
// observations are still being correlated.

// slabSize is the capacity of a slab; a line longer than slabMaxLine gets
// an allocation of its own (or keeps the one the reader made for it).
const (
	slabSize    = 1 << 20
	slabMaxLine = slabSize / 4
)

// lineSlab is one slab: buf holds its lines, refs counts the lines not yet
// decoded plus one while the feed still fills it.
type lineSlab struct {
	buf  []byte
	refs atomic.Int32
}

var slabPool = sync.Pool{New: func() any { return &lineSlab{buf: make([]byte, 0, slabSize)} }}

// The line lists of units (Unit.lines) are reused too: a unit's list is
// done with once its lines are decoded and released (decoder.run), and the
// next unit cut takes it instead of growing a new one line by line.
var itemsPool sync.Pool // of *[]lineItem, empty

// newItems returns an empty line list, with room for a typical unit when it
// is new (about 340 lines of 1 MiB).
func newItems() []lineItem {
	if p, ok := itemsPool.Get().(*[]lineItem); ok {
		return *p
	}
	return make([]lineItem, 0, 512)
}

// reuseItems gives back a line list no one reads any more.
func reuseItems(items []lineItem) {
	if cap(items) == 0 || cap(items) > chunkLines {
		return
	}
	clear(items)
	items = items[:0]
	itemsPool.Put(&items)
}

// slabber copies lines into slabs (one per line feed, used by its
// goroutine only).
type slabber struct {
	cur *lineSlab
}

// copyLine returns a copy of b in the current slab and the slab it is in,
// or a copy of its own and nil for a long line.
func (s *slabber) copyLine(b []byte) ([]byte, *lineSlab) {
	if len(b) > slabMaxLine {
		return append([]byte(nil), b...), nil
	}
	if s.cur != nil && cap(s.cur.buf)-len(s.cur.buf) < len(b) {
		s.seal()
	}
	if s.cur == nil {
		s.cur = slabPool.Get().(*lineSlab)
		s.cur.buf = s.cur.buf[:0]
		s.cur.refs.Store(1) // the feed's hold
	}
	sl := s.cur
	n := len(sl.buf)
	sl.buf = append(sl.buf, b...)
	sl.refs.Add(1)
	return sl.buf[n : n+len(b) : n+len(b)], sl
}

// seal ends the feed's hold on the current slab.
func (s *slabber) seal() {
	if s.cur != nil {
		s.cur.release(1)
		s.cur = nil
	}
}

// release drops n references; the last one returns the slab to the pool.
func (sl *lineSlab) release(n int32) {
	if sl.refs.Add(-n) == 0 {
		slabPool.Put(sl)
	}
}

// releaseLines returns the slabs of decoded lines (consecutive lines of
// one slab released at once), frees the long lines held outside the heap,
// and drops the items' references to them. It is called once a unit is
// decoded, and for lines that will not be (a unit discarded, a feed
// drained at its close): a slab not released is only taken by the
// garbage collector (the pool is a cache), but a long line not released
// would stay mapped.
func releaseLines(items []lineItem) {
	var cur *lineSlab
	var n int32
	for i := range items {
		it := &items[i]
		if it.slab != cur {
			if cur != nil {
				cur.release(n)
			}
			cur, n = it.slab, 0
		}
		if it.slab != nil {
			n++
		}
		if it.release != nil {
			it.release()
		}
		it.line, it.slab, it.release = nil, nil, nil
	}
	if cur != nil {
		cur.release(n)
	}
}
