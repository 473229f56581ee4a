package classify

import (
	"strings"
	"testing"
)

// checkFold holds what textKind reads in place to what it read of the
// text lower-cased: statusInFold to statusInText, asciiDigits to isASCII
// and a look for a digit.
func checkFold(t testing.TB, s string) {
	t.Helper()
	if got, want := statusInFold(s), statusInText(lowerASCII(s)); got != want {
		t.Fatalf("statusInFold(%q) = %q, statusInText of it lower-cased says %q", s, got, want)
	}
	ascii, digits := asciiDigits(s)
	if ascii != isASCII(s) || ascii && digits != strings.ContainsAny(s, "0123456789") {
		t.Fatalf("asciiDigits(%q) = %v, %v", s, ascii, digits)
	}
}

func TestFoldSameAsLowered(t *testing.T) {
	for _, s := range []string{"", "HTTP 401", "Http:503", "STATUS CODE: 503", "Status Code 503", "sTaTuS: 429",
		"status codes 503", "ERROR 429", "Error429", "xError 429", "error 4290", "Error 429_", "ERROR 429.",
		"Error:\t\n 504 x", "é HTTP 503", "\xffERROR 503", "HTTP/1.1 503", "a9", "9", "é9", "abcdefgh9", "abcdefghi",
		"/:;@[`{", strings.Repeat("x", 15) + "0", strings.Repeat("y", 16) + "\x80", "error :: 503", "error: :503",
		"status  code 503", "xstatus 503", "status code: 503x", "ERROR\t:\t503", "http503", "HTTP:503", ": 503", "503",
		"error 503 error 429", "status code 429 http 503", "x 429 status 503", "_error 503", "error 5030 status 401",
		"status code:\n408", "status code : 504", "codes 503", "error_503", "error-503", "(error) 503"} {
		checkFold(t, s)
		checkFold(t, strings.ToUpper(s))
	}
	for c := 0; c < 256; c++ {
		for pad := 0; pad < 9; pad++ {
			checkFold(t, strings.Repeat("a", pad)+string(rune(c)))
			checkFold(t, strings.Repeat("a", pad)+string([]byte{byte(c)}))
		}
	}
}

func FuzzFoldSameAsLowered(f *testing.F) {
	for _, s := range []string{"HTTP 401", "Status Code: 503", "ERROR429", "x9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFold(t, s) })
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestStatusInFoldEveryPlace: statusInFold, which reads the 4s and 5s of
// each eight bytes from a word's mask (the last word where the text
// ends), finds what statusInText of the text lower-cased finds with
// statuses, words before them and digits around them at every place of
// texts of every length around its words.
func TestStatusInFoldEveryPlace(t *testing.T) {
	for n := 0; n < 34; n++ {
		for p := 0; p <= n; p++ {
			for _, ins := range []string{"HTTP 401", "error:503", "Status Code 429", "5", "45", "503", "4034", "x504",
				"error 502 http 408", "status 500"} {
				if p+len(ins) > n {
					continue
				}
				for _, fill := range []string{"a", "4", " ", "5"} {
					checkFold(t, strings.Repeat(fill, p)+ins+strings.Repeat("b", n-p-len(ins)))
					checkFold(t, strings.Repeat("c", p)+ins+strings.Repeat(fill, n-p-len(ins)))
				}
			}
		}
	}
}
