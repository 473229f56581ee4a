package correlate

import (
	"math/bits"
	"slices"
	"unsafe"
)

// remIndex is a conversation's index of the requests it remembers
// (history.go): by id, every request of an id in the order they were
// sent, and by call hash, the latest client request of each call. Both
// live in one table of 16-byte slots, a hash and the request (its
// exchange while it is live, its summary after: remRef); the key is not
// kept, but compared through the request (key, call) (issue 11: two Go
// maps, or slices of a few entries, of keys, lists and rems took some 110
// bytes for the two requests of an open conversation, and on long logs
// the most live heap after the rows themselves).
//
// Up to indexListMax entries are a list, in the order they were added,
// searched from end to end. More are an open-addressing table (linear
// probing, at most three quarters full): an entry goes to the first free
// slot from the home of its hash, so the requests of one id, which share
// it, come in the order they were added along their probe sequence;
// deleting shifts the entries that follow back (Knuth's algorithm R),
// which keeps that order.
type remIndex struct {
	// The list (cap at most indexListMax: its len entries), or the table
	// (cap a power of two above indexListMax: s[:cap(s)] its slots, len
	// how many are used).
	s []remSlot
}

type remSlot struct {
	// The hash of its key: bit 0 clear for an id, set for a call (idHash,
	// callSlotHash); bit 1 (slotLive) set when p is an *exchange, clear
	// when it is a *rem.
	h uint64
	p unsafe.Pointer // nil: a free slot (in a table)
}

const slotLive = 2

// ref is the request of a used slot.
func (e remSlot) ref() remRef {
	if e.h&slotLive != 0 {
		return remRef{ex: (*exchange)(e.p)}
	}
	return (*rem)(e.p).ref()
}

// slotOf is the slot of r, of key hash h.
func slotOf(h uint64, r remRef) remSlot {
	if r.x != nil {
		return remSlot{h, unsafe.Pointer(r.x)}
	}
	return remSlot{h | slotLive, unsafe.Pointer(r.ex)}
}

const indexListMax = 8

// idHash is the slot hash of an id's key.
func idHash(k idKey) uint64 {
	h := uint64(14695981039346656037) ^ uint64(k.t)
	for i := 0; i < len(k.text); i++ {
		h ^= uint64(k.text[i])
		h *= 1099511628211
	}
	return mix64(h) &^ 3
}

// callSlotHash is the slot hash of a call hash.
func callSlotHash(ch uint64) uint64 { return mix64(ch)&^3 | 1 }

// mix64 spreads the bits of h (the finalizer of SplitMix64): homes are
// taken from the top bits.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func (ix *remIndex) len() int { return len(ix.s) }

func (ix *remIndex) isTable() bool { return cap(ix.s) > indexListMax }

// slots is the list, or every slot of the table.
func (ix *remIndex) slots() []remSlot {
	if ix.isTable() {
		return ix.s[:cap(ix.s)]
	}
	return ix.s
}

// home is where a table's probe sequence for h starts.
func home(h uint64, size int) int {
	return int(h >> (64 - bits.TrailingZeros(uint(size))))
}

// find calls fn, in the order they were added, for the entries whose key
// hash is h, with their place in slots, until fn returns false.
func (ix *remIndex) find(h uint64, fn func(i int, r remRef) bool) {
	t := ix.slots()
	if !ix.isTable() {
		for i := range t {
			if t[i].h&^slotLive == h && !fn(i, t[i].ref()) {
				return
			}
		}
		return
	}
	mask := len(t) - 1
	for i := home(h, len(t)); t[i].p != nil; i = (i + 1) & mask {
		if t[i].h&^slotLive == h && !fn(i, t[i].ref()) {
			return
		}
	}
}

// ids appends to buf the requests of id k, oldest first.
func (ix *remIndex) ids(k idKey, buf []remRef) []remRef {
	if len(ix.s) == 0 {
		return buf
	}
	ix.find(idHash(k), func(_ int, r remRef) bool {
		if r.key() == k {
			buf = append(buf, r)
		}
		return true
	})
	return buf
}

// call is the latest client request of call hash ch (the zero remRef:
// none).
func (ix *remIndex) call(ch uint64) (found remRef) {
	if len(ix.s) == 0 {
		return remRef{}
	}
	ix.find(callSlotHash(ch), func(_ int, r remRef) bool {
		if r.call() == ch {
			found = r
			return false
		}
		return true
	})
	return found
}

// setCall makes r the latest request of call hash ch.
func (ix *remIndex) setCall(ch uint64, r remRef) {
	h, done := callSlotHash(ch), false
	if len(ix.s) > 0 {
		t := ix.slots()
		ix.find(h, func(i int, y remRef) bool {
			if y.call() == ch {
				t[i], done = slotOf(h, r), true
				return false
			}
			return true
		})
	}
	if !done {
		ix.add(slotOf(h, r))
	}
}

// delCall forgets the latest request of call hash ch.
func (ix *remIndex) delCall(ch uint64) {
	if r := ix.call(ch); r.ok() {
		ix.del(callSlotHash(ch), r)
	}
}

// addID adds r, of id k, after the requests of its id.
func (ix *remIndex) addID(k idKey, r remRef) { ix.add(slotOf(idHash(k), r)) }

// delID forgets r among the requests of id k.
func (ix *remIndex) delID(k idKey, r remRef) { ix.del(idHash(k), r) }

// summarized puts x, the summary of ex, in the place of ex in the slots of
// key hash h.
func (ix *remIndex) summarized(h uint64, ex *exchange, x *rem) {
	t := ix.slots()
	ix.find(h, func(i int, r remRef) bool {
		if r.x == nil && r.ex == ex {
			t[i] = slotOf(h, remRef{x: x})
			return false
		}
		return true
	})
}

// add adds the entry e after the entries of its hash.
func (ix *remIndex) add(e remSlot) {
	n := len(ix.s)
	switch {
	case !ix.isTable() && n < indexListMax:
		if n == cap(ix.s) {
			grown := make([]remSlot, n, max(1, min(2*n, indexListMax)))
			copy(grown, ix.s)
			ix.s = grown
		}
		ix.s = append(ix.s, e)
		return
	case !ix.isTable():
		ix.resize(2 * indexListMax)
	case 4*(n+1) > 3*cap(ix.s):
		ix.resize(2 * cap(ix.s))
	}
	t := ix.s[:cap(ix.s)]
	mask := len(t) - 1
	i := home(e.h, len(t))
	for t[i].p != nil {
		i = (i + 1) & mask
	}
	t[i] = e
	ix.s = t[:n+1]
}

// del deletes the entry of r of key hash h, if it is there.
func (ix *remIndex) del(h uint64, r remRef) {
	at := -1
	ix.find(h, func(i int, y remRef) bool {
		if y == r {
			at = i
			return false
		}
		return true
	})
	if at >= 0 {
		ix.delAt(at)
		ix.fit()
	}
}

// delAt deletes the entry at slots()[i].
func (ix *remIndex) delAt(i int) {
	n := len(ix.s)
	if !ix.isTable() {
		ix.s = slices.Delete(ix.s, i, i+1)
		return
	}
	t := ix.s[:cap(ix.s)]
	mask := len(t) - 1
	for j := (i + 1) & mask; t[j].p != nil; j = (j + 1) & mask {
		// The entry at j may move back to i when i lies on its probe
		// sequence before j; the entries of one home meet i in their
		// order, and keep it.
		if hm := home(t[j].h, len(t)); (i-hm)&mask < (j-hm)&mask {
			t[i] = t[j]
			i = j
		}
	}
	t[i] = remSlot{}
	ix.s = t[:n-1]
}

// filter keeps the entries keep says to keep (it may be called twice
// for one entry).
func (ix *remIndex) filter(keep func(remRef) bool) {
	if !ix.isTable() {
		ix.s = slices.DeleteFunc(ix.s, func(e remSlot) bool { return !keep(e.ref()) })
		ix.fit()
		return
	}
	t := ix.s[:cap(ix.s)]
	for i := 0; i < len(t); {
		// An entry deleted at i leaves in its place one that followed
		// (seen again: a table's first entries may come back to its
		// end), never one before.
		if t[i].p != nil && !keep(t[i].ref()) {
			ix.delAt(i)
			continue
		}
		i++
	}
	ix.fit()
}

// fit makes a table that has become mostly free smaller (a list, for a
// few entries), and lets go of an empty list.
func (ix *remIndex) fit() {
	n := len(ix.s)
	switch {
	case n == 0:
		ix.s = nil
	case ix.isTable() && 8*n <= cap(ix.s):
		size := 2 * indexListMax
		for 4*n > 3*size {
			size *= 2
		}
		if n <= indexListMax {
			size = n
		}
		ix.resize(size)
	}
}

// resize moves the entries to a list (size at most indexListMax) or a
// table of size slots, keeping the order of the entries of each hash.
func (ix *remIndex) resize(size int) {
	n := len(ix.s)
	old := ix.s
	if ix.isTable() {
		// In the order of the table from a free slot on: the entries of
		// one hash are on one run of used slots.
		t := ix.s[:cap(ix.s)]
		start := 0
		for t[start].p != nil {
			start++
		}
		old = make([]remSlot, 0, n)
		for k := 1; k <= len(t); k++ {
			if e := t[(start+k)%len(t)]; e.p != nil {
				old = append(old, e)
			}
		}
	}
	if size <= indexListMax {
		ix.s = slices.Clone(old)
		return
	}
	ix.s = make([]remSlot, 0, size)
	for _, e := range old {
		ix.add(e)
	}
}

// each calls fn for every entry (the package's tests).
func (ix *remIndex) each(fn func(isCall bool, r remRef)) {
	for _, e := range ix.slots() {
		if e.p != nil {
			fn(e.h&1 != 0, e.ref())
		}
	}
}
