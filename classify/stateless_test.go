package classify

import "testing"

// oldStateless is Stateless as it was (a date, then compared as a
// string): the oracle of the byte-wise comparison.
func oldStateless(version string) bool {
	if !isDate(version) {
		return false
	}
	return version >= v20260728
}

func TestStatelessSameAsOracle(t *testing.T) {
	for _, v := range []string{"", "2026-07-28", "2026-07-29", "2026-07-2x", "2026-07-27", "2027-01-01", "3000-00-00",
		"2026-08-0", "2026-08-01x", "2026x07-28", "2026-07x28", "2025-11-25", "2024-11-05", "9999-99-99", "202a-07-28",
		"2026-07-28 ", "2026-07-3:", "2026-07-3/", "2026-1a-01"} {
		if got, want := Stateless(v), oldStateless(v); got != want {
			t.Errorf("Stateless(%q) = %v, the oracle says %v", v, got, want)
		}
	}
}

func FuzzStatelessSameAsOracle(f *testing.F) {
	f.Add("2026-07-28")
	f.Add("2027-1x-01")
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := Stateless(v), oldStateless(v); got != want {
			t.Errorf("Stateless(%q) = %v, the oracle says %v", v, got, want)
		}
	})
}
