package classify

import (
	"encoding/binary"
	"unsafe"
)

// gramIndex finds where phrases (each at least four bytes) may start in a
// text, looking at four bytes at every other place only. A phrase that
// starts at an even place shows its first four bytes there; one that
// starts at an odd place and is at least five bytes long shows its bytes 1
// to 4 at the next place; one of four bytes at an odd place shows its
// first three after any byte at the place before. set marks the hash of
// each of these four bytes (a filter: a marked place may hold none) with
// where the phrase would start (gramHead: at p, gramBefore: at p-1,
// gramAfter: at p+1), and those places are looked at by the phrases' first
// four bytes (heads, an exact table).
//
// With fold, bytes compare with bit 0x20 cleared, so that the two cases
// of an ASCII letter look the same (so do a few other pairs of bytes,
// which the caller's comparison tells apart); without it, as they are.
type gramIndex struct {
	fold  bool
	set   [1 << 16]uint8 // by gramHash: gramHead, gramBefore, gramAfter
	slots [gramSlots]gramSlot
	order []int32 // phrase numbers, those of one head together
}

// gramSlot is one head of gramIndex's table (open addressing): key is the
// four bytes (folded with fold; never 0, as no phrase starts with a NUL),
// order[first:first+n] the phrases that start with them.
type gramSlot struct {
	key      uint32
	first, n uint16
}

const gramSlots = 1024

// Where a phrase may start, for four bytes marked at an even place p.
const (
	gramHead   = 1 << iota // at p: its first four bytes
	gramBefore             // at p-1: its bytes 1 to 4
	gramAfter              // at p+1: its first three, after any byte
)

// foldMask clears bit 0x20 of every byte of a word; foldMask32 of four
// bytes.
const (
	foldMask   = 0xDFDFDFDFDFDFDFDF
	foldMask32 = 0xDFDFDFDF
)

// Masks of the eight bytes of a word.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// zeroByte is non-zero when a byte of v is zero; its lowest set bit is
// the high bit of the first such byte.
func zeroByte(v uint64) uint64 { return (v - lowBits) & ^v & highBits }

func gramHash(w uint32) uint32 { return w * 0x9E3779B1 >> 16 }

func slotOf(k uint32) uint32 { return k * 0x85EBCA6B >> (32 - 10) }

func word4(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func newGramIndex(phrases []string, fold bool) *gramIndex {
	g := &gramIndex{fold: fold}
	mask := uint32(0xFFFFFFFF)
	if fold {
		mask = foldMask32
	}
	mark := func(s string, where uint8) { g.set[gramHash(word4(s)&mask)] |= where }
	var keys []uint32
	byKey := map[uint32][]int32{}
	for i, p := range phrases {
		if len(p) < 4 || p[0] == 0 {
			panic("classify: a phrase shorter than four bytes or starting with NUL: " + p)
		}
		mark(p, gramHead)
		if len(p) >= 5 {
			mark(p[1:], gramBefore)
		} else {
			for c := 0; c < 256; c++ {
				mark(string([]byte{byte(c)})+p[:3], gramAfter)
			}
		}
		k := word4(p) & mask
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], int32(i))
	}
	if len(keys) > gramSlots/2 {
		panic("classify: more phrase heads than a gramIndex holds")
	}
	for _, k := range keys {
		s := slotOf(k)
		for g.slots[s].key != 0 {
			s = (s + 1) % gramSlots
		}
		g.slots[s] = gramSlot{key: k, first: uint16(len(g.order)), n: uint16(len(byKey[k]))}
		g.order = append(g.order, byKey[k]...)
	}
	return g
}

// marks is where phrases may start for the four bytes w (folded with
// fold) at an even place: gramHead, gramBefore, gramAfter.
func (g *gramIndex) marks(w uint32) uint8 { return g.set[gramHash(w)] }

// heads is the phrases whose first four bytes are s[i:i+4] (folded with
// fold); none when fewer than four bytes are left.
func (g *gramIndex) heads(s string, i int) []int32 {
	if i < 0 || i+4 > len(s) {
		return nil
	}
	k := word4(s[i:])
	if g.fold {
		k &= foldMask32
	}
	for h := slotOf(k); ; h = (h + 1) % gramSlots {
		e := &g.slots[h]
		if e.key == k {
			return g.order[e.first : e.first+e.n]
		}
		if e.key == 0 {
			return nil
		}
	}
}

// scan calls found(p, t), in order, for each even place p of s whose
// four bytes are marked (t: marks), until found returns true; it reports
// whether one did. The phrases that may start near p are heads(s, p-1)
// (t has gramBefore), heads(s, p) (gramHead) and heads(s, p+1)
// (gramAfter).
func (g *gramIndex) scan(s string, found func(p int, t uint8) bool) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	var mask uint64 = 0xFFFFFFFFFFFFFFFF
	if g.fold {
		mask = foldMask
	}
	n := len(b)
	i := 0
	for ; i+10 <= n; i += 8 {
		f0 := binary.LittleEndian.Uint64(b[i:]) & mask
		f2 := binary.LittleEndian.Uint64(b[i+2:]) & mask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 != 0 && (t0 != 0 && found(i, t0) || t1 != 0 && found(i+2, t1) ||
			t2 != 0 && found(i+4, t2) || t3 != 0 && found(i+6, t3)) {
			return true
		}
	}
	for ; i+4 <= n; i += 2 {
		if t := g.marks(binary.LittleEndian.Uint32(b[i:]) & uint32(mask)); t != 0 && found(i, t) {
			return true
		}
	}
	return false
}
