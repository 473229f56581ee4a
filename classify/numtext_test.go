package classify

import (
	"strconv"
	"testing"
)

// TestNumTexts: the made texts are strconv's, inside the ranges and
// around them.
func TestNumTexts(t *testing.T) {
	for _, c := range []int64{-32769, -32768, -32700, -32602, -32001, -32000, -31999, -1, 0, 1, 408, 32600, 1 << 40} {
		if got, want := codeText(c), strconv.FormatInt(c, 10); got != want {
			t.Errorf("codeText(%d) = %q, want %q", c, got, want)
		}
		if got, want := codeReason(c), "JSON-RPC error "+strconv.FormatInt(c, 10); got != want {
			t.Errorf("codeReason(%d) = %q, want %q", c, got, want)
		}
	}
	for _, s := range []int{-1, 0, 99, 100, 202, 404, 503, 599, 600, 1000} {
		if got, want := statusText(s), strconv.Itoa(s); got != want {
			t.Errorf("statusText(%d) = %q, want %q", s, got, want)
		}
		if got, want := statusReason(s), "HTTP "+strconv.Itoa(s); got != want {
			t.Errorf("statusReason(%d) = %q, want %q", s, got, want)
		}
	}
}
