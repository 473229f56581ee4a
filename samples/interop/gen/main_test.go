package main

import (
	"strings"
	"testing"
	"time"
)

// A HAR with every kind of timestamp gen moves, and look-alikes it must not
// touch (a body quoting a time, a header other than Date, a "time" in ms).
const har = `{"log": {"pages": [{"startedDateTime": "2026-12-02T04:02:44.957Z"}],
 "entries": [{"startedDateTime": "2026-12-02T04:02:44.957Z", "time": 4.203,
  "request": {"headers": [{"value": "Wed, 02 Dec 2026 04:02:44 GMT", "name": "Date"}, {"name": "x-at", "value": "Wed, 02 Dec 2026 04:02:44 GMT"}],
   "postData": {"text": "{\"at\":\"2026-12-02T04:02:44.957Z\"}"}},
  "response": {"headers": [{"name": "date", "value": "Wed, 02 Dec 2026 04:02:45 GMT"}],
   "_eventSourceMessages": [{"time": 1796184164.5, "data": "x"}, {"time": 1796184164500.25}, {"time": "2026-12-02T04:02:44.9+01:00"}]}}]}}`

const wire = `{"ts":"2026-12-02T04:02:44.958Z","end_ts":"2026-12-02T04:02:44.961123Z","http":{"request":{"headers":{"DATE":"Wed, 02 Dec 2026 04:02:44 GMT"},"body":"{\"ts\":\"2026-12-02T04:02:44.958Z\"}"},"response":{"headers":{"X":"Wed, 02 Dec 2026 04:02:44 GMT"},"event_times":["2026-12-02T04:02:44.959Z",null]}}}
{"ts":"2026-12-02T04:02:46Z"}
`

func TestShiftMovesOnlyTimestamps(t *testing.T) {
	off := 48*time.Hour + 3*time.Second
	cases := []struct {
		name, in string
		want     []string // the moved values, in the text
		kept     []string // values that must stay
		n        int      // how many timestamps are seen
	}{
		{"a.har", har,
			[]string{`"2026-12-04T04:02:47.957Z"`, `"Fri, 04 Dec 2026 04:02:47 GMT"`, `"Fri, 04 Dec 2026 04:02:48 GMT"`,
				`1796356967.5`, `1796356967500.25`, `"2026-12-04T04:02:47.9+01:00"`},
			[]string{`"time": 4.203`, `"x-at", "value": "Wed, 02 Dec 2026 04:02:44 GMT"`, `{\"at\":\"2026-12-02T04:02:44.957Z\"}`},
			7},
		{"a.ndjson", wire,
			[]string{`"ts":"2026-12-04T04:02:47.958Z"`, `"end_ts":"2026-12-04T04:02:47.961123Z"`, `"DATE":"Fri, 04 Dec 2026 04:02:47 GMT"`,
				`["2026-12-04T04:02:47.959Z",null]`, `{"ts":"2026-12-04T04:02:49Z"}`},
			[]string{`{\"ts\":\"2026-12-02T04:02:44.958Z\"}`, `"X":"Wed, 02 Dec 2026 04:02:44 GMT"`},
			5},
	}
	for _, c := range cases {
		n := 0
		out, err := shiftFile(c.name, []byte(c.in), off, func(time.Time) { n++ })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range append(c.want, c.kept...) {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output lacks %s:\n%s", c.name, w, out)
			}
		}
		if n != c.n {
			t.Errorf("%s: saw %d timestamps, want %d", c.name, n, c.n)
		}
		back, err := shiftFile(c.name, out, -off, nil)
		if err != nil {
			t.Fatalf("%s back: %v", c.name, err)
		}
		if string(back) != c.in {
			t.Errorf("%s: shifting back does not give the input:\n%s", c.name, back)
		}
	}
}

func TestShiftRejectsBadInput(t *testing.T) {
	for _, in := range []string{`{"ts":"yesterday"}`, `{"ts":`, `{"http":{"response":{"headers":{"Date":"soon"}}}}`} {
		if _, err := shiftFile("x.ndjson", []byte(in+"\n"), time.Hour, nil); err == nil {
			t.Errorf("%s: no error", in)
		} else if !strings.Contains(err.Error(), "x.ndjson:1") {
			t.Errorf("%s: error does not name the line: %v", in, err)
		}
	}
}
