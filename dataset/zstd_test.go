package dataset

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	pzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// pageLike makes n bytes that compress like column pages: repeated
// values, ids and text with some noise.
func pageLike(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	words := []string{"TOOL_SUCCESS", "tools/call", "sess-0001", "k1:7f3a9c", "application/json", "quarterly report", "2026-10-17"}
	for b.Len() < n {
		if rng.Intn(4) == 0 {
			fmt.Fprintf(&b, "%08x", rng.Uint32())
		} else {
			b.WriteString(words[rng.Intn(len(words))])
		}
	}
	return b.Bytes()[:n]
}

// The small-window codec writes, for every page up to its window, the
// same bytes as parquet-go's own ZSTD codec at the same level (the files
// do not change), and what it writes beyond the window decodes with the
// library's decoder.
func TestSmallZstdSameBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	ref := &pzstd.Codec{Level: pzstd.SpeedDefault}
	c := &smallZstd{}
	for _, n := range []int{0, 1, 100, 4 << 10, 256 << 10, 1 << 20, zstdWindow} {
		src := pageLike(rng, n)
		got, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ref.Encode(nil, src)
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: %d bytes compressed, the library's codec %d, or other bytes", n, len(got), len(want))
		}
		back, err := c.Decode(nil, got)
		if err != nil || !bytes.Equal(back, src) {
			t.Errorf("%d bytes: round trip: %v", n, err)
		}
	}
	big := pageLike(rng, 3*zstdWindow)
	enc, err := c.Encode(nil, big)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ref.Decode(nil, enc)
	if err != nil || !bytes.Equal(back, big) {
		t.Errorf("beyond the window: the library's decoder: %v", err)
	}
}
