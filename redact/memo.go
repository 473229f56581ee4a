package redact

import (
	"math/bits"
	"strings"
)

// Memos: the rows of one log repeat the same few values (client and server
// names, versions, methods, URLs, session ids, error messages). A goroutine
// redacts each once and keeps the result with what it counted, to give the
// same result and add the same counts the next time. Each table is bounded
// and emptied when full.

// counter takes what one redaction counts: a *Stats, or a tally that keeps
// the counts for a memo.
type counter interface {
	add(rule int)
	addNamed(name string)
}

// tally records the counts of one redaction.
type tally struct {
	rules []uint8
	names []string
}

func (t *tally) add(rule int)         { t.rules = append(t.rules, uint8(rule)) }
func (t *tally) addNamed(name string) { t.names = append(t.names, name) }
func (t *tally) reset()               { t.rules, t.names = t.rules[:0], t.names[:0] }

// counts are the counts a memo entry adds each time it is used.
type counts struct {
	rules []uint8
	names []string
}

// keep copies what t recorded (nothing, usually).
func (t *tally) keep() counts {
	var c counts
	if len(t.rules) > 0 {
		c.rules = append([]uint8(nil), t.rules...)
	}
	if len(t.names) > 0 {
		c.names = append([]string(nil), t.names...)
	}
	return c
}

func (c *counts) addTo(st *Stats) {
	if st == nil {
		return
	}
	for _, r := range c.rules {
		st.add(int(r))
	}
	for _, n := range c.names {
		st.addNamed(n)
	}
}

// A memo entry: the result, and what computing it counted.
type memo struct {
	out string
	counts
	key string // the table's own copy of the value
}

const (
	maxMemoEntries = 1024      // entries in one table
	maxMemoBytes   = 256 << 10 // bytes of keys in one table
	maxMemoText    = 512       // longest value a table keeps
)

// memoTable maps a value to its redaction. recent is a cache in front of
// the map, one entry a slot (memoSlot), for the few values that come back
// on most rows: a hash of a few bytes and one comparison instead of a map
// lookup. An entry stays right when the map is emptied (a memo is what the
// value redacts to, whenever asked), so only reset clears both.
type memoTable struct {
	m      map[string]memo
	bytes  int
	recent [1 << memoRecentBits]memo
}

const memoRecentBits = 7

func (t *memoTable) get(k string) (memo, bool) {
	if len(k) == 0 {
		e, ok := t.m[k]
		return e, ok
	}
	r := &t.recent[memoSlot(k)]
	if r.key == k { // an empty slot has key "", never k
		return *r, true
	}
	e, ok := t.m[k]
	if ok {
		*r = e
	}
	return e, ok
}

// reset empties the table and its cache.
func (t *memoTable) reset() {
	clear(t.m)
	t.bytes = 0
	t.recent = [len(t.recent)]memo{}
}

// memoSlot is where k goes in memoTable.recent: a hash of its length and
// its first and last eight bytes (k is not empty).
func memoSlot(k string) int {
	n := len(k)
	x := uint64(n)
	if n >= 8 {
		x ^= le64(k) ^ bits.RotateLeft64(le64(k[n-8:]), 29)
	} else {
		for i := 0; i < n; i++ {
			x = x<<8 | uint64(k[i])
		}
	}
	return int((x * 0x9E3779B97F4A7C15) >> (64 - memoRecentBits))
}

// le64 is the first eight bytes of s, little-endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// put keeps out (k itself when unchanged) for a copy of k; k may be
// scratch memory.
func (t *memoTable) put(k, out string, c counts) {
	same := out == k
	k = strings.Clone(k)
	if same {
		out = k
	}
	t.putOwned(k, out, c)
}

// putOwned is put for a key that is not scratch memory.
func (t *memoTable) putOwned(k, out string, c counts) {
	if t.m == nil {
		t.m = make(map[string]memo)
	}
	if len(t.m) >= maxMemoEntries || t.bytes+len(k) > maxMemoBytes {
		clear(t.m)
		t.bytes = 0
	}
	t.m[k] = memo{out, c, k}
	t.bytes += len(k)
}

// mask is MaskWith through the memo: identical result and counts. s may
// be scratch memory (it is copied into the memo); an unchanged result may be
// s itself.
func (sc *scratch) mask(s string, st *Stats) string {
	if len(s) > maxMemoText {
		return maskWith(s, st)
	}
	e := sc.maskMemo(s)
	e.addTo(st)
	return e.out
}

// maskMemo is the memo entry of MaskWith(s), made if missing: its key is
// the table's own copy of s, its counts what masking s counts. s is not
// longer than maxMemoText.
func (sc *scratch) maskMemo(s string) memo {
	if e, ok := sc.masks.get(s); ok {
		return e
	}
	sc.tally.reset()
	out := maskWith(s, &sc.tally)
	c := sc.tally.keep()
	k := strings.Clone(s)
	if out == s {
		out = k
	}
	sc.masks.putOwned(k, out, c)
	return memo{out, c, k}
}

// pseudonym is p.Pseudonym(v) through the memo.
func (sc *scratch) pseudonym(p *Pseudonymizer, v string) string {
	if sc.pseudFor != p {
		sc.pseuds.reset()
		sc.pseudFor = p
	}
	if e, ok := sc.pseuds.get(v); ok {
		return e.out
	}
	out := sc.pseudonymOf(p, v)
	if len(v) <= maxMemoText {
		sc.pseuds.put(v, out, counts{})
	}
	return out
}

// pseudonymMemo is the memo entry of p.Pseudonym(v), made if missing (v
// is not longer than maxMemoText).
func (sc *scratch) pseudonymMemo(p *Pseudonymizer, v string) memo {
	if sc.pseudFor != p {
		sc.pseuds.reset()
		sc.pseudFor = p
	}
	if e, ok := sc.pseuds.get(v); ok {
		return e
	}
	k := strings.Clone(v)
	out := sc.pseudonymOf(p, k)
	sc.pseuds.putOwned(k, out, counts{})
	return memo{out: out, key: k}
}
