package correlate

import (
	"strconv"
	"testing"
	"time"

	"mcptrace/schema"
)

// The parked rows' text table holds 65,535 texts besides "": the last
// numbered 65,535, the next refused, none read back as another.
func TestReviewTextsAtBound(t *testing.T) {
	var tab texts
	for i := 1; i < textsMax; i++ {
		n, ok := tab.number("t" + strconv.Itoa(i))
		if !ok || int(n) != i {
			t.Fatalf("text %d numbered %d (%v)", i, n, ok)
		}
	}
	if _, ok := tab.number("one more"); ok {
		t.Fatal("a text past the bound was numbered")
	}
	if n, ok := tab.number("t65535"); !ok || n != 65535 || tab.list[n] != "t65535" {
		t.Fatalf("the last text reads back as %d %v", n, ok)
	}
	if n, ok := tab.number(""); !ok || n != 0 {
		t.Fatal("empty text")
	}
}

// impls starting again when full leaves every conversation's client as it
// was.
func TestReviewImplsRestart(t *testing.T) {
	var tab impls
	var got []*schema.Implementation
	for i := range 3 * namesCap {
		got = append(got, tab.of(schema.Implementation{Name: "c" + strconv.Itoa(i%(namesCap+7)), Version: strconv.Itoa(i)}))
	}
	for i, p := range got {
		if want := (schema.Implementation{Name: "c" + strconv.Itoa(i%(namesCap+7)), Version: strconv.Itoa(i)}); *p != want {
			t.Fatalf("client %d reads back as %+v", i, *p)
		}
	}
}

// A conversation's times read back as the same instants at nanosecond
// precision, in any location, and across a stamp's bounds.
func TestReviewConvTimes(t *testing.T) {
	loc := time.FixedZone("Z", -(23*3600 + 59*60))
	for _, tc := range [][2]time.Time{
		{time.Date(2261, 12, 31, 23, 59, 59, 999999999, loc), time.Date(2026, 1, 1, 0, 0, 0, 1, loc)},
		{time.Date(1679, 1, 1, 0, 0, 0, 0, time.FixedZone("E", 14*3600)), {}},
		{time.Date(1678, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Unix(0, 0), time.Unix(0, -1)},
	} {
		cv := &conversation{last: zeroStamp, started: zeroStamp}
		cv.setTimes(tc[0], tc[1])
		if !cv.lastAt().Equal(tc[0]) || !cv.startedAt().Equal(tc[1]) || cv.startedAt().IsZero() != tc[1].IsZero() {
			t.Errorf("%v %v read back as %v %v", tc[0], tc[1], cv.lastAt(), cv.startedAt())
		}
	}
}
