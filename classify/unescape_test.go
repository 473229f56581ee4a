package classify

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

var unescapeSeeds = []string{
	`"a\"b"`, `"line\nnext\ttab"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 smile"`, `"\ud83d lone"`,
	`"\ude00 low"`, `"\uZZZZ bad hex"`, `"\u12"`, `"bad \x escape"`, `"ctrl ` + "\x01" + ` char\n"`,
	`"ends \\"`, `"ends \\\"`, `"\\\\"`, `"inner "quote\n"`, `"\/\b\f\r"`, `"\"`, `"\\"`, `""`, `"x"`,
	`"Error: \"not found\"\n404"`, `"\ud83d\u0041"`, `"\uD83D\uDE00"`, `"\u+123"`,
}

// checkUnescape: where unescapeLiteral takes raw, it gives gjson's value.
func checkUnescape(t *testing.T, raw string) {
	got, bp, ok := unescapeLiteral(raw)
	if !ok {
		if bp != nil {
			t.Fatalf("%q: buffer without a result", raw)
		}
		return
	}
	got = strings.Clone(got)
	r := ""
	releaseScratch(got, bp, &r)
	if want := gjson.Parse(raw).Str; got != want {
		t.Fatalf("unescapeLiteral(%q) = %q, gjson %q", raw, got, want)
	}
}

func TestUnescapeLiteralSameAsGjson(t *testing.T) {
	taken := 0
	for _, s := range unescapeSeeds {
		checkUnescape(t, s)
		if _, _, ok := unescapeLiteral(s); ok {
			taken++
		}
	}
	if taken < 15 {
		t.Fatalf("only %d seeds took the scratch path", taken)
	}
}

func FuzzUnescapeLiteralSameAsGjson(f *testing.F) {
	for _, s := range unescapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkUnescape(t, s)
		checkUnescape(t, `"`+s+`"`)
	})
}
