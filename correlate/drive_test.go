package correlate_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// shardedRun is the reference wiring of sharded correlation, the one the
// pipeline follows (see the package documentation):
//
//  1. the sequencer numbers observations in input order (Seq from 1) and
//     stamps each with the run's Clock;
//  2. it routes each to correlator ShardKey(o) % shards, which Adds it;
//     when it has stamped an input's last observation it ends that input
//     (Clock.End);
//  3. every round observations, and at the end, it takes m :=
//     clock.Mark(last Seq) and calls Advance(m) on every correlator
//     (Finish(m) at the end);
//  4. the round's items of all correlators, merged by Key (each
//     correlator's are increasing, keys are unique), go to one Linker,
//     followed by Linker.Advance(m) (Finish(m) at the end);
//  5. the Linker's rows (Key non-decreasing) go to the Merger when merging,
//     followed by Merger.Advance(m) (Finish at the end).
//
// It checks the order guarantees on the way and returns the final rows in
// output order (the Merger's order when merging), and the summed
// correlator stats.
func shardedRun(t testing.TB, obs []*schema.Observation, shards, round int, merging bool, window time.Duration) ([]schema.Exchange, correlate.Stats) {
	return shardedRunHold(t, obs, shards, round, merging, window, 0)
}

// shardHistory is the History of shardedRun's correlators (history_test.go).
var shardHistory int

// shardedRunHold is shardedRun with the correlators' MaxHold set, as the
// Kafka path sets it.
func shardedRunHold(t testing.TB, obs []*schema.Observation, shards, round int, merging bool, window, maxHold time.Duration) ([]schema.Exchange, correlate.Stats) {
	clock := correlate.NewClock()
	outs := make([][]correlate.Item, shards)
	cs := make([]*correlate.Correlator, shards)
	for i := range cs {
		cs[i] = correlate.NewShard(func(it correlate.Item) { outs[i] = append(outs[i], it) })
		cs[i].IdleTimeout, cs[i].Lateness, cs[i].MaxHold = sampleIdle, sampleLateness, maxHold
		cs[i].History = shardHistory
	}
	var rows []schema.Exchange
	write := func(r correlate.Row) { rows = append(rows, *r.Exchange) }
	var merge *correlate.Merger
	if merging {
		merge = correlate.NewMerger(write)
		merge.Window = window
	}
	var last correlate.Key
	linker := correlate.NewLinker(func(r correlate.Row) {
		if r.Key.Less(last) {
			t.Fatalf("the Linker's rows out of order: %+v after %+v", r.Key, last)
		}
		last = r.Key
		if merge != nil {
			merge.Add(r)
		} else {
			write(r)
		}
	})
	linker.IdleTimeout = sampleIdle
	var prev correlate.Key
	closeRound := func(m correlate.Mark, final bool) {
		var items []correlate.Item
		for i, c := range cs {
			if final {
				c.Finish(m)
			} else {
				c.Advance(m)
			}
			for j := 1; j < len(outs[i]); j++ {
				if !outs[i][j-1].Key.Less(outs[i][j].Key) {
					t.Fatalf("shard %d: keys not increasing: %+v then %+v", i, outs[i][j-1].Key, outs[i][j].Key)
				}
			}
			items = append(items, outs[i]...)
			outs[i] = outs[i][:0]
		}
		slices.SortFunc(items, func(a, b correlate.Item) int { return a.Key.Compare(b.Key) })
		for _, it := range items {
			if !prev.Less(it.Key) {
				t.Fatalf("key %+v not above %+v: keys of two shards collide or go back", it.Key, prev)
			}
			prev = it.Key
			linker.Add(it)
		}
		if final {
			linker.Finish(m)
		} else {
			linker.Advance(m)
		}
		if merge != nil {
			if final {
				merge.Finish()
			} else {
				merge.Advance(m)
			}
		}
	}
	lastOf := map[string]int{} // the last observation of each input, after which it ends
	for i, o := range obs {
		lastOf[o.Pos.Source] = i
	}
	var seq int64
	for i, o := range obs {
		seq++
		o.Seq = seq
		clock.Stamp(o)
		if lastOf[o.Pos.Source] == i {
			clock.End(o.Pos.Source)
		}
		cs[correlate.ShardKey(o)%uint64(shards)].Add(o)
		if seq%int64(round) == 0 {
			closeRound(clock.Mark(seq), false)
		}
	}
	seq++ // the final Mark has a Seq of its own, as the pipeline's does
	closeRound(clock.Mark(seq), true)
	var st correlate.Stats
	for _, c := range cs {
		if c.OpenConversations() != 0 || c.LowWater() != 1<<63-1 {
			t.Errorf("a correlator still holds %d conversations after Finish", c.OpenConversations())
		}
		st.Add(c.Stats)
	}
	if linker.LowWater() != 1<<63-1 || linker.Held() != 0 {
		t.Errorf("the Linker still holds %d rows after Finish", linker.Held())
	}
	if merge != nil && (merge.LowWater() != 1<<63-1 || merge.Held() != 0) {
		t.Errorf("the Merger still holds %d rows after Finish", merge.Held())
	}
	return rows, st
}

// TestShardedSamplesAgree runs every sample log (samples/ as one run, as
// ingest reads it) through the sharded wiring with 1, 2, 4 and 7
// correlators and several round sizes: the rows are identical, in the same
// order, whatever the number of shards, and their verdicts are those of
// one correlator per log.
func TestShardedSamplesAgree(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	wantRows, _ := todayVerdicts(t)
	for _, round := range []int{1, 5, 64, 1 << 20} {
		var first []schema.Exchange
		var firstStats correlate.Stats
		for _, n := range []int{1, 2, 4, 7} {
			rows, st := shardedRun(t, obs, n, round, false, 0)
			if n == 1 {
				first, firstStats = rows, st
				diffLines(t, "sharded rows", verdicts(rows), wantRows)
				continue
			}
			if !reflect.DeepEqual(rows, first) {
				for i := range min(len(rows), len(first)) {
					if !reflect.DeepEqual(rows[i], first[i]) {
						t.Fatalf("round %d, %d shards: row %d differs from 1 shard:\n%s\n%s", round, n, i, verdict(&rows[i]), verdict(&first[i]))
					}
				}
				t.Fatalf("round %d, %d shards: %d rows, 1 shard %d", round, n, len(rows), len(first))
			}
			if st != firstStats {
				t.Errorf("round %d, %d shards: stats %+v, 1 shard %+v", round, n, st, firstStats)
			}
		}
	}
}

// A quiet stream: Pass lets event time go by with no record, so an idle
// conversation ends and its open exchange is written.
func TestClockPassEndsIdleConversations(t *testing.T) {
	clock := correlate.NewClock()
	var got []correlate.Item
	c := correlate.NewShard(func(it correlate.Item) { got = append(got, it) })
	c.IdleTimeout = time.Minute
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	req := &schema.Observation{Seq: 1, Side: schema.SideClient, Transport: schema.TransportStdio, Format: "stdio-jsonl", Time: at,
		Pos: schema.Position{Source: "s", Line: 1}, Stdio: schema.DirClientToServer,
		Messages: []schema.Message{{Where: schema.InStdio, BatchIndex: -1, Kind: schema.MsgRequest, ID: schema.ID{Type: schema.IDNumber, Text: "1"}, Method: "tools/call",
			Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)}}}
	clock.Stamp(req)
	c.Add(req)
	c.Advance(clock.Mark(1))
	rows := func() int {
		n := 0
		for i := range got {
			if got[i].IsRow() {
				n++
			}
		}
		return n
	}
	if rows() != 0 {
		t.Fatalf("an open request was written before its conversation went idle")
	}
	clock.Pass(2*time.Minute, func(string) bool { return false })
	c.Advance(clock.Mark(1))
	if rows() != 0 {
		t.Fatalf("Pass moved a log it was told to leave")
	}
	clock.Pass(2*time.Minute, nil)
	c.Advance(clock.Mark(1))
	if rows() != 1 || c.OpenConversations() != 0 {
		t.Errorf("after two idle minutes: %d rows, %d conversations open", rows(), c.OpenConversations())
	}
}
