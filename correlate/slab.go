package correlate

import (
	"cmp"
	"strconv"
	"strings"

	"mcptrace/schema"
)

// Where the optional columns of rows point (issue 11: one allocation per
// text, number or flag of every row was most of the correlator's
// allocations).
//
// Ownership: a slot is written once, when it is handed out, and never
// again by the slab (own, state.go, may rewrite a slot of a row not yet
// emitted, as it did the string schema.Str allocated). A chunk is never
// reused: a new one is made when it is full, and the garbage collector
// frees the old one once no row points into it. So a row handed to the
// Linker, redaction and the sink may be kept, copied and written for as
// long as they like, as with schema.Str; nothing waits for an
// acknowledgement.

// slab hands out pointers to values of T from chunks of slabChunk values
// (or of chunk, when set).
type slab[T any] struct {
	buf   []T
	chunk int
}

// slabChunk is the number of values in one chunk: a row kept for long (a
// held row) keeps at most one chunk of each type alive beside it.
const slabChunk = 64

// put returns a pointer to a slot holding v.
func (s *slab[T]) put(v T) *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, cmp.Or(s.chunk, slabChunk))
	}
	s.buf = append(s.buf, v)
	return &s.buf[len(s.buf)-1]
}

// rowSlabs are a correlator's slabs for the columns its rows fill when
// they are judged: the rows of judged exchanges are emitted at once, so
// their chunks are soon free.
type rowSlabs struct {
	strs  slab[string]
	i32s  slab[int32]
	f64s  slab[float64]
	bools slab[bool]
	// Emitted: the rows the correlator makes or copies (emitRow, an
	// MRTR chain's; a judged exchange's own row goes out as it is,
	// emitRowOf) and the events for the Linker (Item.ev, Item.st), which
	// reads and drops them.
	rows   slab[schema.Exchange]
	events slab[linkEvent]
	states slab[stateEvent]
}

// linkEv is &ev from the slab.
func (c *Correlator) linkEv(ev linkEvent) *linkEvent { return c.slabs.events.put(ev) }

// emitted is a copy of row from the slab, for an Item.
func (c *Correlator) emitted(row *schema.Exchange) *schema.Exchange {
	if c.slabs.rows.chunk == 0 {
		c.slabs.rows.chunk = rowChunk
	}
	return c.slabs.rows.put(*row)
}

// rowChunk is how many emitted rows share a chunk: a row the Linker holds
// (a row of an expired session, waiting for what the client does next)
// keeps at most rowChunk-1 others' memory alive.
const rowChunk = 16

// str is schema.Str from the slab: nil when s is empty.
func (r *rowSlabs) str(s string) *string {
	if s == "" {
		return nil
	}
	return r.strs.put(s)
}

// rowBox is an open exchange's row with the slots of the text its
// columns point to when it is attached (attach, state.go's own): one
// allocation, and an exchange that waits for long (a request never
// answered) keeps nothing of other rows alive.
type rowBox struct {
	row  schema.Exchange
	strs [attachStrs]string
	n    uint8
	// Where HTTPStatuses starts: most rows have one attempt. A copy of
	// the row taken before its first attempt (none is: rows are copied
	// when judged) would share it, as rows share the array append grows.
	statuses [1]int32
}

// attachStrs is how many texts of attach the box holds: as many as a row
// usually has (session, id and its type, scenario, client and server names
// and versions, tool, URL) and as many as keep the box in the 1,024-byte
// size class (1,008 bytes), so that a row waiting for its answer takes no
// more memory than the row and its texts did before; the rarer ones
// (retry of and basis) may go to the heap.
const attachStrs = 10

// str is schema.Str from the box's slots, or from the heap once they are
// used up.
func (b *rowBox) str(s string) *string {
	if s == "" {
		return nil
	}
	return b.put(s)
}

// put is str for a column that is set even when its text is empty.
func (b *rowBox) put(s string) *string {
	if int(b.n) == len(b.strs) {
		return heapStr(s)
	}
	b.strs[b.n] = s
	b.n++
	return &b.strs[b.n-1]
}

// heapStr is a string of its own on the heap. Not inlined: its argument
// escapes, and inlined into put it would move put's argument to the heap
// on every call.
//
//go:noinline
func heapStr(s string) *string { return &s }

// smallIDs are the texts of the ids 0 to len-1, the ids most conversations
// use (a client numbers its requests from 0 or 1).
var smallIDs = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// ownIDText is a copy of an id's text that keeps nothing of the record it
// was read from: the package's own text for a small decimal number (no
// sign, no leading zero), else a clone.
func ownIDText(s string) string {
	if n := len(s); n >= 1 && n <= 4 && (s[0] != '0' || n == 1) {
		v := 0
		for i := 0; i < n; i++ {
			d := s[i] - '0'
			if d > 9 {
				return strings.Clone(s)
			}
			v = v*10 + int(d)
		}
		if v < len(smallIDs) {
			return smallIDs[v]
		}
	}
	return strings.Clone(s)
}
