package decode

import (
	"bytes"
	"runtime"
	"testing"
)

// refLines is the oracle of ReadLines: the input split at each newline,
// each line's trailing CR and LF bytes trimmed, a line too long when it
// takes more than max+2 bytes with its terminator or more than max without
// (the rules of the reader before long lines were gathered in chunks).
type refLine struct {
	text    string
	tooLong bool
	size    int64
}

func refLines(in []byte, max int) []refLine {
	var out []refLine
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		seg := in
		if i >= 0 {
			seg = in[:i+1]
		}
		in = in[len(seg):]
		r := refLine{size: int64(len(seg))}
		t := bytes.TrimRight(seg, "\r\n")
		if len(seg) > max+2 || len(t) > max { // the limit counts a byte order mark
			r.tooLong = true
		} else {
			if len(out) == 0 {
				t = trimBOM(t)
			}
			r.text = string(t)
		}
		out = append(out, r)
	}
	return out
}

// collectLines reads in with ReadLines, keeping every line (an owned one
// as it is, to prove the reader does not reuse it; the others copied).
// With keep (LineOptions.Keep), long lines may come in memory outside the
// heap: each is released once, after every line is read.
func collectLines(t *testing.T, in []byte, max int, keep bool) []refLine {
	t.Helper()
	var out []refLine
	var kept [][]byte
	var want []string
	var releases []func()
	err := ReadLines(bytes.NewReader(in), LineOptions{MaxLine: max, MaxDocument: int64(len(in)) + int64(max) + 16, Keep: keep}, func(l Line) error {
		r := refLine{tooLong: l.TooLong, size: l.Size}
		if l.Release != nil {
			if !keep || !l.Owned {
				t.Fatalf("line %d: a Release without Keep, or on a line not owned", l.No)
			}
			releases = append(releases, l.Release)
		}
		if !l.TooLong {
			r.text = string(l.Text)
			if l.Owned {
				kept = append(kept, l.Text)
				want = append(want, r.text)
			}
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range kept {
		if string(kept[i]) != want[i] {
			t.Fatalf("owned line %d changed after later reads", i)
		}
	}
	for _, r := range releases {
		r()
	}
	return out
}

func sameLines(t *testing.T, got, want []refLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("line %d: got tooLong=%v size=%d len=%d, want tooLong=%v size=%d len=%d",
				i+1, got[i].tooLong, got[i].size, len(got[i].text), want[i].tooLong, want[i].size, len(want[i].text))
		}
	}
}

// TestLongLinesChunked: lines around and far past bigLine (gathered in
// chunks, joined, handed over owned) read as the oracle says.
func TestLongLinesChunked(t *testing.T) {
	var in []byte
	fill := func(n int, c byte) {
		for i := 0; i < n; i++ {
			in = append(in, c+byte(i%7))
		}
	}
	for _, n := range []int{0, 1, bigLine - 1, bigLine, bigLine + 1, 3*bigLine + 7, 300 << 10, 5*bigLine + 3} {
		fill(n, 'a')
		in = append(in, '\n')
		fill(n, 'A')
		in = append(in, '\r', '\n')
	}
	fill(6<<20+1, 'x') // over the limit below
	in = append(in, '\n')
	fill(2*bigLine, 'z') // the last line, without a newline
	max := 6 << 20
	for _, keep := range []bool{false, true} {
		sameLines(t, collectLines(t, in, max, keep), refLines(in, max))
	}
}

// TestLongLinesMapped: with Keep, a line past bigLine comes with a
// Release (on Linux: gathered outside the heap), and ReadLines frees the
// long lines it does not hand over (too long, or the input abandoned);
// mapped lines and the chunked ones read the same (TestLongLinesChunked).
func TestLongLinesMapped(t *testing.T) {
	line := bytes.Repeat([]byte("m"), 2*bigLine)
	in := append(append(append([]byte(nil), line...), '\n'), line...) // the last without a newline
	n := 0
	err := ReadLines(bytes.NewReader(in), LineOptions{MaxLine: 4 * bigLine, Keep: true}, func(l Line) error {
		n++
		if !l.Owned || !bytes.Equal(l.Text, line) {
			t.Fatalf("line %d: owned %v, %d bytes", l.No, l.Owned, len(l.Text))
		}
		if (l.Release != nil) != (runtime.GOOS == "linux") {
			t.Fatalf("line %d: Release %v on %s", l.No, l.Release != nil, runtime.GOOS)
		}
		if l.Release != nil {
			l.Release()
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("%d lines, %v", n, err)
	}
	// Too long once gathered: no line handed over, nothing to free.
	err = ReadLines(bytes.NewReader(in), LineOptions{MaxLine: bigLine + 10, Keep: true}, func(l Line) error {
		if !l.TooLong || l.Release != nil {
			t.Fatalf("line %d: too long %v, release %v", l.No, l.TooLong, l.Release != nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzReadLinesChunked: with bigLine small, any input reads as the oracle
// says, whatever the mix of short, chunked and too-long lines.
func FuzzReadLinesChunked(f *testing.F) {
	f.Add([]byte("ab\ncdefghijkl\r\n\n\xef\xbb\xbfx\r\r\nlong line here without end"), uint8(5), uint8(9))
	f.Add([]byte("\xef\xbb\xbfabcdefgh\n"), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, big, max uint8) {
		old := bigLine
		bigLine = int(big%32) + 1
		defer func() { bigLine = old }()
		m := int(max%64) + 1
		sameLines(t, collectLines(t, in, m, false), refLines(in, m))
		sameLines(t, collectLines(t, in, m, true), refLines(in, m))
	})
}
