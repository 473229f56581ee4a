// Command gen copies three scenarios' captures from a directory kept by the
// interop suite into samples/interop/, with every timestamp moved by one
// constant offset per scenario.
//
//	go test ./interop -run 'TestInterop/(gosdk-gosdk-legacy-503-dropped-after-status|gosdk-gosdk-legacy-cut-resumed|gosdk-mcpgo-legacy-gateway-hides-error)$' -interop-keep /tmp/interop
//	go run ./samples/interop/gen -from /tmp/interop
//
// A capture is dated the day it was made; the samples are moved to one day,
// 2026-05-08, that no other sample uses and that is before every other
// sample's last day (the windowed-merge tests over samples/ rely on
// samples/correlation being the newest). Scenario N (in the order of
// scenarios below) starts in hour 10+N of that day: the offset is that hour
// minus the scenario's earliest timestamp truncated to the second, the same
// for its client and its server file, so every gap, the skew between the
// sides and the HTTP Date headers (whole seconds) stay exact.
//
// What moves: in a HAR, log.pages[].startedDateTime,
// log.entries[].startedDateTime, log.entries[].response._eventSourceMessages[].time
// (RFC 3339 text, or seconds or milliseconds since the epoch as a number) and
// the value of a Date header of a request or response; in a wire log, ts,
// end_ts, http.response.event_times[] and an http.request or http.response
// header named Date. The bytes are rewritten in place: nothing else in the
// files changes (key order, spacing, escapes, bodies, session ids, the random
// loopback ports of the URLs are those of the capture).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// scenarios are copied in this order; names are those of interop/scenarios_test.go.
var scenarios = []string{
	"gosdk-gosdk-legacy-503-dropped-after-status",
	"gosdk-gosdk-legacy-cut-resumed",
	"gosdk-mcpgo-legacy-gateway-hides-error",
}

// day is the date the samples are moved to.
var day = time.Date(2026, 5, 8, 0, 0, 0, 0, time.UTC)

func main() {
	from := flag.String("from", "", "a directory written by go test ./interop -interop-keep DIR")
	to := flag.String("to", "samples/interop", "where to write the shifted copies")
	flag.Parse()
	if *from == "" {
		fail(errors.New("-from is required: run go test ./interop -interop-keep DIR first (see the package comment)"))
	}
	for i, sc := range scenarios {
		if err := copyScenario(filepath.Join(*from, sc, "capture"), *to, sc, day.Add(time.Duration(10+i)*time.Hour)); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// copyScenario shifts the capture files of one scenario so that its earliest
// timestamp falls in the second start and writes them as <to>/<scenario>.<file>.
func copyScenario(dir, to, scenario string, start time.Time) error {
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("%s: no capture files; keep the scenario with -interop-keep", dir)
	}
	files := map[string][]byte{}
	var earliest time.Time
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		files[n] = b
		// A zero offset finds the timestamps without changing anything.
		var first time.Time
		if _, err := shiftFile(n, b, 0, func(t time.Time) {
			if first.IsZero() || t.Before(first) {
				first = t
			}
		}); err != nil {
			return err
		}
		if !first.IsZero() && (earliest.IsZero() || first.Before(earliest)) {
			earliest = first
		}
	}
	if earliest.IsZero() {
		return fmt.Errorf("%s: no timestamps found", dir)
	}
	offset := start.Sub(earliest.Truncate(time.Second))
	for _, n := range names {
		out, err := shiftFile(n, files[n], offset, nil)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, scenario+"."+filepath.Base(n))
		if err := os.WriteFile(dst, out, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %s (moved by %s)\n", dst, filepath.Base(n), offset)
	}
	return nil
}

// shiftFile rewrites the timestamps of a .har file or of a wire log (.ndjson,
// one record a line) moved by offset; seen, when not nil, gets each
// timestamp as read.
func shiftFile(name string, b []byte, offset time.Duration, seen func(time.Time)) ([]byte, error) {
	if strings.HasSuffix(name, ".har") {
		out, err := shiftJSON(b, offset, harTime, seen)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return out, nil
	}
	var out bytes.Buffer
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			out.Write(line)
			continue
		}
		l, err := shiftJSON(line, offset, wireTime, seen)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		out.Write(l)
	}
	return out.Bytes(), nil
}

// A kind says how a value at a path is a timestamp.
type kind int

const (
	notTime  kind = iota
	rfc3339       // "2026-05-08T10:00:00.123Z"
	httpDate      // "Fri, 08 May 2026 10:00:00 GMT"
	epoch         // seconds or milliseconds since the epoch, or RFC 3339 text
)

// harTime says which values of a HAR are timestamps. path holds the keys
// from the root, "[]" for an array element; header is the name of the
// header object the value is in, if any.
func harTime(path []string, header string) kind {
	p := strings.Join(path, ".")
	switch {
	case p == "log.pages.[].startedDateTime", p == "log.entries.[].startedDateTime":
		return rfc3339
	case p == "log.entries.[].response._eventSourceMessages.[].time":
		return epoch
	case (p == "log.entries.[].request.headers.[].value" || p == "log.entries.[].response.headers.[].value") &&
		strings.EqualFold(header, "date"):
		return httpDate
	}
	return notTime
}

// wireTime says which values of a wire log record are timestamps.
func wireTime(path []string, _ string) kind {
	p := strings.Join(path, ".")
	switch {
	case p == "ts", p == "end_ts", p == "http.response.event_times.[]":
		return rfc3339
	case len(path) == 4 && path[0] == "http" && (path[1] == "request" || path[1] == "response") &&
		path[2] == "headers" && strings.EqualFold(path[3], "date"):
		return httpDate
	}
	return notTime
}

// frame is one open object or array of the walk.
type frame struct {
	array  bool
	key    string // the current key of an object
	wantK  bool   // an object expects a key next
	name   string // the "name" member of a HAR header object
	values []span // its "value" members, decided when the object ends
}

type span struct {
	start, end int
	path       []string
}

// shiftJSON walks one JSON text, finds the values isTime names and replaces
// their bytes by the moved time. It errors on text that is not JSON or on a
// timestamp it cannot read.
func shiftJSON(b []byte, offset time.Duration, isTime func([]string, string) kind, seen func(time.Time)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*frame
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	path := func() []string {
		p := make([]string, 0, len(stack))
		for _, f := range stack {
			if f.array {
				p = append(p, "[]")
			} else {
				p = append(p, f.key)
			}
		}
		return p
	}
	apply := func(start, end int, k kind) error {
		raw := string(b[start:end])
		moved, t, err := move(raw, k, offset)
		if err != nil {
			return fmt.Errorf("offset %d: %w", start, err)
		}
		if seen != nil {
			seen(t)
		}
		edits = append(edits, edit{start, end, moved})
		return nil
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return nil, fmt.Errorf("offset %d: the JSON text ends inside an object or array", before)
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("offset %d: %w", before, err)
		}
		end := int(dec.InputOffset())
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && !top.array {
					top.wantK = true // the object's value is this container
				}
				stack = append(stack, &frame{array: d == '[', wantK: d == '{'})
			case '}', ']':
				for _, v := range top.values {
					if k := isTime(v.path, top.name); k != notTime {
						if err := apply(v.start, v.end, k); err != nil {
							return nil, err
						}
					}
				}
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && !top.array && top.wantK {
			top.key, top.wantK = tok.(string), false
			continue
		}
		if top != nil && !top.array {
			top.wantK = true
		}
		// A scalar value ends at end; find where its bytes start.
		start := int(before)
		for start < end && (b[start] == ' ' || b[start] == '\t' || b[start] == '\n' || b[start] == '\r' || b[start] == ',' || b[start] == ':') {
			start++
		}
		p := path()
		if top != nil && !top.array && top.key == "name" {
			if s, ok := tok.(string); ok {
				top.name = s
			}
		}
		if top != nil && !top.array && top.key == "value" {
			// A header's value: decided when its object ends (name may come later).
			top.values = append(top.values, span{start, end, p})
			continue
		}
		if tok == nil {
			continue // a null time (an event without one) stays null
		}
		if k := isTime(p, ""); k != notTime {
			if err := apply(start, end, k); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(b[last:e.start])
		out.WriteString(e.text)
		last = e.end
	}
	out.Write(b[last:])
	return out.Bytes(), nil
}

// move returns raw (a JSON string or number) moved by offset, keeping its
// form: the same layout and precision.
func move(raw string, k kind, offset time.Duration) (string, time.Time, error) {
	if k == epoch && !strings.HasPrefix(raw, `"`) {
		return moveNumber(raw, offset)
	}
	s, err := strconv.Unquote(raw)
	if err != nil || strconv.Quote(s) != raw {
		return "", time.Time{}, fmt.Errorf("timestamp %s is not a plain JSON string", raw)
	}
	if k == httpDate {
		t, err := http.ParseTime(s)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("Date %q: %w", s, err)
		}
		return strconv.Quote(t.Add(offset).UTC().Format(http.TimeFormat)), t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	// Keep the number of fraction digits and the zone of the original.
	layout := "2006-01-02T15:04:05"
	if i := strings.IndexByte(s, '.'); i >= 0 {
		n := 0
		for _, c := range s[i+1:] {
			if c < '0' || c > '9' {
				break
			}
			n++
		}
		layout += "." + strings.Repeat("0", n)
	}
	if strings.HasSuffix(s, "Z") {
		layout += "Z07:00"
	} else {
		layout += "-07:00"
	}
	moved := t.Add(offset).In(t.Location()).Format(layout)
	if back, err := time.Parse(time.RFC3339Nano, moved); err != nil || !back.Equal(t.Add(offset)) {
		return "", time.Time{}, fmt.Errorf("timestamp %q does not move exactly", s)
	}
	return strconv.Quote(moved), t, nil
}

// moveNumber moves a time since the epoch in seconds (or, above 1e11,
// milliseconds), keeping its digits after the point.
func moveNumber(raw string, offset time.Duration) (string, time.Time, error) {
	whole, frac, _ := strings.Cut(raw, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || strings.ContainsAny(frac, "eE+-") {
		return "", time.Time{}, fmt.Errorf("event time %s is not a plain number", raw)
	}
	unit := time.Second
	if w > 1e11 {
		unit = time.Millisecond
	}
	if offset%unit != 0 {
		return "", time.Time{}, fmt.Errorf("offset %s is not whole %s", offset, unit)
	}
	f, _ := strconv.ParseFloat("0."+frac, 64)
	t := time.Unix(0, 0).Add(time.Duration(w)*unit + time.Duration(f*float64(unit))).UTC()
	moved := strconv.FormatInt(w+int64(offset/unit), 10)
	if frac != "" || strings.HasSuffix(raw, ".") {
		moved += "." + frac
	}
	return moved, t, nil
}
