package correlate_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// The history of a conversation keeps a summary of each judged request
// once its row is out, not the exchange (history.go). These tests run the
// same input through correlators that read the summaries and through
// correlators that read the exchanges themselves, as before
// (correlate.KeepExchanges), and require the same rows, column for column,
// in the same order, and the same stats. Each input runs with the default
// history and with a history of 2 and of 5 requests, so that requests are
// forgotten, and looked up after being summarized, all the time.

// historyRun correlates obs with New, or with the sharded wiring when
// shards > 0, reading summaries or (keep) the exchanges.
func historyRun(t testing.TB, obs []*schema.Observation, history, shards int, keep bool) ([]schema.Exchange, correlate.Stats) {
	t.Helper()
	correlate.KeepExchanges(keep)
	defer correlate.KeepExchanges(false)
	in := make([]*schema.Observation, len(obs))
	for i, o := range obs {
		in[i] = cloneObservation(o)
	}
	if shards > 0 {
		return shardedRunHistory(t, in, shards, 3, history)
	}
	var rows []schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
	c.IdleTimeout, c.Lateness, c.History = sampleIdle, sampleLateness, history
	for _, o := range in {
		c.Add(o)
	}
	c.Flush()
	return rows, c.Stats
}

// sameHistoryRows requires the same rows and stats from summaries and
// from exchanges, for each history bound and wiring.
func sameHistoryRows(t *testing.T, what string, obs []*schema.Observation, wirings []int) int {
	t.Helper()
	rows := 0
	for _, history := range []int{0, 2, 5} {
		for _, shards := range wirings {
			got, gotStats := historyRun(t, obs, history, shards, false)
			want, wantStats := historyRun(t, obs, history, shards, true)
			how := fmt.Sprintf("%s, history %d, shards %d", what, history, shards)
			if !reflect.DeepEqual(got, want) {
				diffRows(t, how+": summaries against exchanges", got, want)
			}
			if gotStats != wantStats {
				t.Fatalf("%s: stats %+v, from the exchanges %+v", how, gotStats, wantStats)
			}
			rows += len(got)
		}
	}
	return rows
}

func TestHistorySameRowsSamples(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	if n := sameHistoryRows(t, "samples", obs, []int{0, 3}); n == 0 {
		t.Fatal("no rows")
	}
}

// generated decodes a generated wire log as the decode stage does.
func generated(t testing.TB, opt traffic.Options) []*schema.Observation {
	t.Helper()
	var log bytes.Buffer
	if _, err := traffic.Write(&log, opt); err != nil {
		t.Fatal(err)
	}
	d := decode.NewWireDecoder()
	d.Fold = true
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	sc.Buffer(nil, 16<<20)
	var obs []*schema.Observation
	line := int64(0)
	for sc.Scan() {
		line++
		o, err := d.Line(bytes.Clone(sc.Bytes()), schema.Position{Source: "gen.ndjson", ID: "gen.ndjson", Line: line})
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		obs = append(obs, o)
	}
	return obs
}

func TestHistorySameRowsGenerated(t *testing.T) {
	for _, opt := range []traffic.Options{
		{Seed: 7, Exchanges: 5000, Sessions: 30},
		{Seed: 8, Exchanges: 4000, Sessions: 20, Side: "server"},
		{Seed: 9, Exchanges: 3000, Sessions: 4},
		{Seed: 10, Shape: traffic.ShapeOpenConversations, Conversations: 800},
	} {
		obs := generated(t, opt)
		n := sameHistoryRows(t, fmt.Sprintf("%+v", opt), obs, []int{0, 2})
		t.Logf("%+v: %d rows", opt, n)
	}
}

// fuzzCorpus is the inputs of FuzzCorrelate: its corpus under testdata,
// the samples it is seeded with, and its grammar seeds, with 200 more
// random programs of the grammar.
func fuzzCorpus(t testing.TB) [][]byte {
	t.Helper()
	var ins [][]byte
	files, _ := filepath.Glob("testdata/fuzz/FuzzCorrelate/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a corpus entry of one []byte", f)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ins = append(ins, []byte(s))
	}
	if len(ins) == 0 {
		t.Fatal("no corpus under testdata/fuzz/FuzzCorrelate")
	}
	for _, p := range sampleFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := decode.Detect(b[:min(len(b), decode.SniffBytes)]); ok && len(b) <= 32<<10 {
			ins = append(ins, b)
		}
	}
	ins = append(ins, grammarSeeds()...)
	r := rand.New(rand.NewPCG(17, 5))
	for range 200 {
		prog := make([]byte, 40+r.IntN(400))
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		ins = append(ins, prog)
	}
	return ins
}

func TestHistorySameRowsFuzzCorpus(t *testing.T) {
	rows := 0
	for i, in := range fuzzCorpus(t) {
		rows += sameHistoryRows(t, fmt.Sprintf("input %d", i), fuzzObservations(t, in), []int{0, 3})
	}
	if rows == 0 {
		t.Fatal("no rows")
	}
	t.Logf("%d rows", rows)
}

// FuzzHistorySameRows: whatever the input (a log, or a program of
// FuzzCorrelate's grammar), summaries and exchanges give the same rows.
func FuzzHistorySameRows(f *testing.F) {
	for _, in := range fuzzCorpus(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return
		}
		sameHistoryRows(t, "fuzz", fuzzObservations(t, in), []int{0, 3})
	})
}

// shardedRunHistory is shardedRun (round observations a round) with the
// correlators' History set.
func shardedRunHistory(t testing.TB, obs []*schema.Observation, shards, round, history int) ([]schema.Exchange, correlate.Stats) {
	shardHistory = history
	defer func() { shardHistory = 0 }()
	return shardedRun(t, obs, shards, round, false, 0)
}
