package classify

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"mcptrace/internal/jsonstr"
)

// refFill is valueHead.fill as it was written first, a byte at a time:
// the reference the run-at-a-time fill is held to.
func (h *valueHead) refFill(in string, limit int) {
	h.more = false
	for h.i < len(in) {
		if h.n >= limit {
			h.more = true
			return
		}
		c := in[h.i]
		if c >= ' ' && c != '\\' && c != '"' {
			h.b[h.n] = c
			h.n++
			h.i++
			continue
		}
		if c != '\\' || h.i+1 >= len(in) {
			h.i = len(in)
			return
		}
		if e, ok := jsonstr.ShortEscape(in[h.i+1]); ok {
			h.b[h.n] = e
			h.n++
			h.i += 2
			continue
		}
		switch in[h.i+1] {
		case 'u':
			if h.i+6 > len(in) {
				h.i = len(in)
				return
			}
			e := unsafe.Slice(unsafe.StringData(in[h.i:]), len(in)-h.i)
			out, k := jsonstr.AppendEscape(h.b[h.n:h.n:len(h.b)], e)
			h.n += len(out)
			h.i += k
			continue
		default:
			h.i = len(in)
			return
		}
	}
}

// checkFill fills two heads of in, by fill and by refFill, in the steps
// jsonHeadPlain takes, and compares them after each step.
func checkFill(t *testing.T, in string) {
	t.Helper()
	var got, want valueHead
	for _, limit := range [...]int{jsonFirstHead, longHead, 7, longHead} {
		got.fill(in, limit)
		want.refFill(in, limit)
		if got.n != want.n || got.i != want.i || got.more != want.more || string(got.b[:got.n]) != string(want.b[:want.n]) {
			t.Fatalf("fill(%.200q, %d): n %d i %d more %v %.100q; byte at a time: n %d i %d more %v %.100q", in, limit,
				got.n, got.i, got.more, got.b[:got.n], want.n, want.i, want.more, want.b[:want.n])
		}
	}
}

// TestValueHeadFillSameAsByteAtATime: fill, which copies runs of plain
// bytes at once, writes what the byte-at-a-time fill writes, on texts of
// escapes, quotes, control characters and \u escapes (good, bad, cut,
// surrogates) at every place, around both limits.
func TestValueHeadFillSameAsByteAtATime(t *testing.T) {
	pieces := []string{"a", "b c", "é", "✨", `\"`, `\\`, `\/`, `\n`, `\t`, `\r`, `\b`, `\f`, `\u00e9`, `\u6771`,
		`\ud83d\ude00`, `\ud83d`, `\ude00`, `\u12`, `\uzzzz`, `\x`, `"`, "\x01", "\n", `\`, "{", "[", "  ",
		strings.Repeat("x", 250), strings.Repeat("y", 1000), `{\"k\": \"v\", `}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(60); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		checkFill(t, s)
		for _, cut := range []int{1, 2, 5, 6} {
			if len(s) > cut {
				checkFill(t, s[:len(s)-cut])
			}
		}
	}
	// A run that ends at each limit, exactly and a byte on either side,
	// followed by each kind of byte.
	for _, limit := range []int{jsonFirstHead, longHead} {
		for d := -7; d <= 7; d++ {
			for _, next := range []string{"", "x", `\n`, `\u00e9`, `\ud83d\ude00`, `"`, "\x01", `\`, `\q`} {
				checkFill(t, strings.Repeat("a", limit+d)+next+"tail")
				checkFill(t, strings.Repeat(`\"`, (limit+d)/2)+next)
			}
		}
	}
}

func FuzzValueHeadFillSameAsByteAtATime(f *testing.F) {
	for _, s := range []string{`{\"a\": 1}`, `\u00e9\ud83d\ude00`, strings.Repeat(`ab\"`, 400), "x\x01y"} {
		f.Add(s)
	}
	f.Fuzz(checkFill)
}
