package decode

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestUTCStampMatchesParse holds utcStamp to time.Parse(time.RFC3339Nano)
// followed by UTC: where it reads a stamp, the same Time (==, so the same
// location too); it declines only what it is not meant to read. Stamps are
// made of fields in and out of range, fractions of zero to eleven digits
// and stray characters.
func TestUTCStampMatchesParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	two := func(max int) string {
		v := rng.IntN(max + 1)
		return string([]byte{byte('0' + v/10%10), byte('0' + v%10)})
	}
	read, declined := 0, 0
	for range 200000 {
		var s string
		if rng.IntN(2) == 0 { // fields in range
			s = pick("2026", "1999", "0000", "9999", "2024") + "-" + pick("01", "02", "09", "10", "12") + "-" + pick("01", "09", "15", "28") +
				"T" + two(23) + ":" + two(59) + ":" + two(59)
		} else {
			s = pick("2026", "1999", "0000", "9999", "2024", "20x6") + pick("-", "-", "/") + pick(two(13), "02", "12") + "-" +
				pick(two(32), "28", "29", "30", "31", "01") + pick("T", "T", "t", " ") + two(25) + ":" + two(61) + ":" + pick(two(61), "60", "59")
		}
		if rng.IntN(4) > 0 {
			n := rng.IntN(12)
			s += pick(".", ".", ",")
			for range n {
				s += string(byte('0' + rng.IntN(10)))
			}
		}
		s += pick("Z", "Z", "Z", "Z", "Z", "z", "+00:00", "+02:00", "")
		got, ok := utcStamp([]byte(s))
		want, err := time.Parse(time.RFC3339Nano, s)
		if !ok {
			declined++
			continue
		}
		read++
		if err != nil {
			t.Fatalf("%q: utcStamp read %v, time.Parse fails: %v", s, got, err)
		}
		if want = want.UTC(); got != want {
			t.Fatalf("%q: utcStamp %v, time.Parse %v", s, got, want)
		}
	}
	if read < 10000 || declined < 10000 {
		t.Fatalf("%d read, %d declined: the corpus does not probe both ways", read, declined)
	}
}

func BenchmarkUTCStamp(b *testing.B) {
	s := []byte("2026-10-17T10:00:00.003Z")
	b.Run("utcStamp", func(b *testing.B) {
		for b.Loop() {
			utcStamp(s)
		}
	})
	b.Run("time.Parse", func(b *testing.B) {
		for b.Loop() {
			v, _ := time.Parse(time.RFC3339Nano, string(s))
			_ = v.UTC()
		}
	})
}
