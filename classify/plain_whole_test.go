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
