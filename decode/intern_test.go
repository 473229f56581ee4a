package decode

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestInternRecent holds the cache in front of the intern table to what
// the table alone gives: each string interned is equal to its bytes and has
// memory of its own, whichever strings share its slot, and a string met
// again comes back as the copy made the first time (while it is still
// cached or in the table).
func TestInternRecent(t *testing.T) {
	d := NewWireDecoder()
	var words []string
	for i := range 3000 { // far more than the slots: every slot is shared
		words = append(words, fmt.Sprintf("w%d-%s", i, "abcdefghijklmnop"[:i%17]))
	}
	first := map[string]string{}
	for round := range 3 {
		for _, w := range words {
			b := []byte(w)
			got := d.intern(b)
			for i := range b {
				b[i] = '#' // the line's memory is reused
			}
			if got != w {
				t.Fatalf("round %d: intern(%q) = %q", round, w, got)
			}
			if f, ok := first[w]; !ok {
				first[w] = got
			} else if unsafe.StringData(f) != unsafe.StringData(got) {
				t.Fatalf("round %d: %q interned twice", round, w)
			}
		}
	}
	if s := d.intern(nil); s != "" {
		t.Fatalf("intern(nil) = %q", s)
	}
}
