package redact

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMaskPlain masks generated tool-argument text only (benchText,
// a fixed seed): the same input on every commit.
func BenchmarkMaskPlain(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 13))
	var texts []string
	var n int64
	for range 300 {
		t := benchText(r, 100+r.IntN(1500))
		texts = append(texts, t)
		n += int64(len(t))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			MaskWith(t, nil)
		}
	}
}
