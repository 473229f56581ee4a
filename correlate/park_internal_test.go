package correlate

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// Every test of the package runs with parked rows checked: each row parked
// is built again at once and must be the row parked (park.go); and each
// summary of a judged request must read back as its exchange (history.go).
// Benchmarks run without the checks, as ingest does.
func TestMain(m *testing.M) {
	flag.Parse()
	checkPark = flag.Lookup("test.bench").Value.String() == ""
	checkRem = checkPark
	os.Exit(m.Run())
}

// TestParkSameRows runs generated client and server logs (normal traffic,
// and conversations that never finish) through a correlator with parking
// and one without, and requires the same rows, column for column, in the
// same order; and that rows of the client's logs were parked. It runs
// with rows parked parkAfter observations after their own, as ingest
// parks them, and one observation after (every row that waits past its
// own observation is parked, and built again when an attempt, its answer
// or its judgement needs it).
func TestParkSameRows(t *testing.T) {
	for _, after := range []int64{parkAfter, 1} {
		t.Run(fmt.Sprintf("after=%d", after), func(t *testing.T) {
			defer func(v int64) { parkAfter = v }(parkAfter)
			parkAfter = after
			testParkSameRows(t)
		})
	}
}

func testParkSameRows(t *testing.T) {
	cases := []traffic.Options{
		{Seed: 3, Exchanges: 6000, Sessions: 40},
		{Seed: 4, Exchanges: 4000, Sessions: 30, Side: "server"},
		{Seed: 5, Shape: traffic.ShapeOpenConversations, Conversations: 1500},
		{Seed: 6, Shape: traffic.ShapeOpenConversations, Conversations: 1000, Side: "server"},
	}
	for _, opt := range cases {
		var log bytes.Buffer
		if _, err := traffic.Write(&log, opt); err != nil {
			t.Fatal(err)
		}
		parks := 0
		run := func(off bool) []schema.Exchange {
			noPark = off
			defer func() { noPark = false }()
			var rows []schema.Exchange
			c := New(func(r *schema.Exchange) { rows = append(rows, *r) })
			c.IdleTimeout, c.Lateness = 30*time.Minute, 10*time.Minute
			d := decode.NewWireDecoder()
			d.Fold = true
			sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
			sc.Buffer(nil, 16<<20)
			line := int64(0)
			for sc.Scan() {
				line++
				o, err := d.Line(bytes.Clone(sc.Bytes()), schema.Position{Source: "gen.ndjson", Line: line})
				if err != nil {
					t.Fatalf("line %d: %v", line, err)
				}
				c.Add(o)
				if !off && line%64 == 0 {
					for _, cv := range c.convs {
						for _, ex := range cv.openList {
							if ex != nil && ex.exLive != nil && ex.parked != nil {
								parks++
							}
						}
					}
				}
			}
			c.Flush()
			return rows
		}
		with, without := run(false), run(true)
		if len(with) != len(without) || len(with) == 0 {
			t.Fatalf("%+v: %d rows parked, %d not", opt, len(with), len(without))
		}
		for i := range with {
			if !reflect.DeepEqual(with[i], without[i]) {
				t.Fatalf("%+v: row %d differs:\nparked   %+v\nunparked %+v", opt, i, with[i], without[i])
			}
		}
		if parks == 0 && opt.Side != "server" {
			t.Errorf("%+v: no row was parked", opt) // a server's log writes most waits in one record
		}
		t.Logf("%+v: %d rows, parked rows seen %d times", opt, len(with), parks)
	}
}

// SetParking is for the package's external tests (fuzz_test.go): rows are
// parked after observations instead of parkAfter, or never when off. It
// returns what puts the setting back.
func SetParking(after int64, off bool) (restore func()) {
	was, wasOff := parkAfter, noPark
	parkAfter, noPark = after, off
	return func() { parkAfter, noPark = was, wasOff }
}

// TestTextsBound: the table of parked texts numbers each text once, ""
// as 0, and refuses a text past its bounds (too long, too many bytes),
// while it still numbers the texts it has.
func TestTextsBound(t *testing.T) {
	var tab texts
	a, okA := tab.number("client")
	b, okB := tab.number("client")
	if !okA || !okB || a != b || a == 0 || tab.list[a] != "client" {
		t.Fatalf("number(client) = %d %v, then %d %v", a, okA, b, okB)
	}
	if n, ok := tab.number(""); n != 0 || !ok {
		t.Errorf("number(\"\") = %d %v", n, ok)
	}
	if _, ok := tab.number(string(make([]byte, textMaxLen+1))); ok {
		t.Error("a text over textMaxLen was numbered")
	}
	tab.bytes = textsMaxBytes - 3
	if _, ok := tab.number("wire"); ok {
		t.Error("a text past textsMaxBytes was numbered")
	}
	if n, ok := tab.number("sse"); !ok || tab.list[n] != "sse" {
		t.Error("a text that fits was refused")
	}
	if n, ok := tab.number("client"); !ok || n != a {
		t.Error("a text in the full table was refused")
	}
}
