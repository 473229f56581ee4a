package classify

import (
	"strings"
	"testing"
)

// TestPlainWholeEveryPlace: plainLiteral, whose short literals plainWhole
// reads in one pass, says what the version it replaced says with a status,
// a needle or an escape at every place of texts of every length around
// its blocks of eight (the bytes left after the last one included).
func TestPlainWholeEveryPlace(t *testing.T) {
	for n := 10; n < 40; n++ {
		for p := 0; p+3 <= n; p++ {
			for _, ins := range []string{"404", "503", "gone", "error", `\"`, `\n`, `\u0041`} {
				if p+len(ins) > n {
					continue
				}
				s := strings.Repeat("a", p) + ins + strings.Repeat("b", n-p-len(ins))
				for _, raw := range []string{`"` + s + `"`, `"x` + s + `"`} {
					if got, want := plainLiteral(raw), onePassPlainLiteral(raw); got != want {
						t.Fatalf("%q: %v want %v", raw, got, want)
					}
				}
			}
		}
	}
}

// TestPlainWholeBytesEveryPlace holds plainWhole's one look at each eight
// bytes (quotes and control characters below 0x21 once bit 1 is flipped,
// backslashes, 4s and 5s at once) and its word-at-a-time look at the
// bytes left to the one-pass oracle: each byte that look marks, or that
// its borrows may mark after another ('#', '!', 0x01, 0x21), alone or
// after an escape at every other place, at every place of texts of every
// length around its blocks.
func TestPlainWholeBytesEveryPlace(t *testing.T) {
	ins := []string{`"`, `\`, "\x00", "\x01", "\x1f", "\x7f", "\x80", " ", "!", "#", "$", "3", "4", "5", "6", "45", "4x",
		`\"`, `\\`, `\n`, `\/`, `\u`, `\x`, `\"x`, `\\"`, "[err]", "[ERR]", "gone", "Error", `validating \"`, `VALIDATING \"`,
		`validatinG \"`, `xalidating \"`, ` \"`}
	check := func(s string) {
		t.Helper()
		for _, raw := range []string{`"` + s + `"`, `"x` + s + `"`} {
			if got, want := plainLiteral(raw), onePassPlainLiteral(raw); got != want {
				t.Fatalf("%q: %v want %v", raw, got, want)
			}
		}
	}
	for n := 10; n < 36; n++ {
		for p := 0; p < n; p++ {
			for _, a := range ins {
				if p+len(a) > n {
					continue
				}
				check(strings.Repeat("a", p) + a + strings.Repeat("b", n-p-len(a)))
				for q := p + len(a); q+2 <= n; q++ {
					for _, b := range []string{`\"`, `"`, "#"} {
						check(strings.Repeat("a", p) + a + strings.Repeat("c", q-p-len(a)) + b + strings.Repeat("d", n-q-len(b)))
					}
				}
			}
		}
	}
	// Random texts of those pieces and plain words.
	r := uint64(7)
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	words := append([]string{"a", "bc", "def ", "Found 12 ", "x", "  "}, ins...)
	for range 200000 {
		var b strings.Builder
		for m := 1 + next(20); m > 0; m-- {
			if next(3) == 0 {
				b.WriteString(ins[next(len(ins))])
			} else {
				b.WriteString(words[next(len(words))])
			}
		}
		check(b.String())
	}
}
