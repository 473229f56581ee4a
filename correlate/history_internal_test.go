package correlate

import (
	"testing"
	"unsafe"
)

// KeepExchanges sets keepExchanges for the package's external tests
// (history_test.go): on, later requests read every judged exchange
// itself, as before rems summarized it.
func KeepExchanges(on bool) { keepExchanges = on }

// A summary fits the 96-byte size class (history.go).
func TestRemSize(t *testing.T) {
	if n := unsafe.Sizeof(rem{}); n > 96 {
		t.Errorf("a rem takes %d bytes, more than 96", n)
	}
}
