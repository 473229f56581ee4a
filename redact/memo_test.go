package redact

import (
	"fmt"
	"testing"
)

// TestMemoRecentAcrossKeys holds the pseudonym memo, map and cache in
// front of it, to Pseudonymizer.Pseudonym when one scratch serves two keys
// in turn (scratches are pooled across redactors): a value asked again
// under the other key gets that key's pseudonym, never the one cached.
func TestMemoRecentAcrossKeys(t *testing.T) {
	p1, err := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := NewPseudonymizer("k2", []byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	sc := new(scratch)
	vals := []string{"a", "session-1", "0123456789abcdef-long-value"}
	for i := range 300 { // more values than the cache has slots
		vals = append(vals, fmt.Sprintf("v%d", i))
	}
	for round := range 4 {
		p := p1
		if round%2 == 1 {
			p = p2
		}
		for range 2 { // the second pass is served by the memo
			for _, v := range vals {
				if got, want := sc.pseudonym(p, v), p.Pseudonym(v); got != want {
					t.Fatalf("round %d: pseudonym(%q) = %q, want %q", round, v, got, want)
				}
			}
		}
	}
}
