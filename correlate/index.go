package correlate

import (
	"math/bits"
	"slices"
)

// remIndex is a conversation's index of the requests it remembers (rems):
// by id, every request of an id in the order they were sent, and by call
// hash, the latest client request of each call. Both live in one table of
// 16-byte slots, a hash and the rem; the key is not kept, but compared
// through the rem (key, callHash), which reads its exchange while it is
// live and its summary after (issue 11: two Go maps, or slices of a few
// entries, of keys, lists and rems took some 110 bytes for the two
// requests of an open conversation, and on long logs the most live heap
// after the rows themselves).
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
	h uint64 // the hash of its key: bit 0 clear for an id, set for a call (idHash, callSlotHash)
	x *rem   // nil: a free slot (in a table)
}

const indexListMax = 8

// idHash is the slot hash of an id's key.
func idHash(k idKey) uint64 {
	h := uint64(14695981039346656037) ^ uint64(k.t)
	for i := 0; i < len(k.text); i++ {
		h ^= uint64(k.text[i])
		h *= 1099511628211
	}
	return mix64(h) &^ 1
}

// callSlotHash is the slot hash of a call hash.
func callSlotHash(ch uint64) uint64 { return mix64(ch) | 1 }

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

// find calls fn, in the order they were added, for the entries whose
// slot hash is h, with their place in slots, until fn returns false.
func (ix *remIndex) find(h uint64, fn func(i int, x *rem) bool) {
	t := ix.slots()
	if !ix.isTable() {
		for i := range t {
			if t[i].h == h && !fn(i, t[i].x) {
				return
			}
		}
		return
	}
	mask := len(t) - 1
	for i := home(h, len(t)); t[i].x != nil; i = (i + 1) & mask {
		if t[i].h == h && !fn(i, t[i].x) {
			return
		}
	}
}

// ids appends to buf the requests of id k, oldest first.
func (ix *remIndex) ids(k idKey, buf []*rem) []*rem {
	if len(ix.s) == 0 {
		return buf
	}
	ix.find(idHash(k), func(_ int, x *rem) bool {
		if x.key() == k {
			buf = append(buf, x)
		}
		return true
	})
	return buf
}

// call is the latest client request of call hash ch (nil: none).
func (ix *remIndex) call(ch uint64) (found *rem) {
	if len(ix.s) == 0 {
		return nil
	}
	ix.find(callSlotHash(ch), func(_ int, x *rem) bool {
		if x.callHash == ch {
			found = x
			return false
		}
		return true
	})
	return found
}

// setCall makes x the latest request of call hash ch.
func (ix *remIndex) setCall(ch uint64, x *rem) {
	h, done := callSlotHash(ch), false
	if len(ix.s) > 0 {
		t := ix.slots()
		ix.find(h, func(i int, y *rem) bool {
			if y.callHash == ch {
				t[i].x, done = x, true
				return false
			}
			return true
		})
	}
	if !done {
		ix.add(h, x)
	}
}

// delCall forgets the latest request of call hash ch.
func (ix *remIndex) delCall(ch uint64) {
	if x := ix.call(ch); x != nil {
		ix.del(callSlotHash(ch), x)
	}
}

// addID adds x, of id k, after the requests of its id.
func (ix *remIndex) addID(k idKey, x *rem) { ix.add(idHash(k), x) }

// delID forgets x among the requests of id k.
func (ix *remIndex) delID(k idKey, x *rem) { ix.del(idHash(k), x) }

// add adds the entry (h, x) after the entries of its hash.
func (ix *remIndex) add(h uint64, x *rem) {
	n := len(ix.s)
	switch {
	case !ix.isTable() && n < indexListMax:
		if n == cap(ix.s) {
			grown := make([]remSlot, n, max(1, min(2*n, indexListMax)))
			copy(grown, ix.s)
			ix.s = grown
		}
		ix.s = append(ix.s, remSlot{h, x})
		return
	case !ix.isTable():
		ix.resize(2 * indexListMax)
	case 4*(n+1) > 3*cap(ix.s):
		ix.resize(2 * cap(ix.s))
	}
	t := ix.s[:cap(ix.s)]
	mask := len(t) - 1
	i := home(h, len(t))
	for t[i].x != nil {
		i = (i + 1) & mask
	}
	t[i] = remSlot{h, x}
	ix.s = t[:n+1]
}

// del deletes the entry (h, x), if it is there.
func (ix *remIndex) del(h uint64, x *rem) {
	at := -1
	ix.find(h, func(i int, y *rem) bool {
		if y == x {
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
	for j := (i + 1) & mask; t[j].x != nil; j = (j + 1) & mask {
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
func (ix *remIndex) filter(keep func(*rem) bool) {
	if !ix.isTable() {
		ix.s = slices.DeleteFunc(ix.s, func(e remSlot) bool { return !keep(e.x) })
		ix.fit()
		return
	}
	t := ix.s[:cap(ix.s)]
	for i := 0; i < len(t); {
		// An entry deleted at i leaves in its place one that followed
		// (seen again: a table's first entries may come back to its
		// end), never one before.
		if t[i].x != nil && !keep(t[i].x) {
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
		for t[start].x != nil {
			start++
		}
		old = make([]remSlot, 0, n)
		for k := 1; k <= len(t); k++ {
			if e := t[(start+k)%len(t)]; e.x != nil {
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
		ix.add(e.h, e.x)
	}
}

// each calls fn for every entry (the package's tests).
func (ix *remIndex) each(fn func(isCall bool, x *rem)) {
	for _, e := range ix.slots() {
		if e.x != nil {
			fn(e.h&1 != 0, e.x)
		}
	}
}
