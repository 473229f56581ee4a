package correlate_test

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// streamMerge feeds rows to a Merger in the order of their start times,
// advancing it to each row's start (the event time a pipeline would have
// reached), and returns what it wrote.
func streamMerge(rows []schema.Exchange, window time.Duration) []schema.Exchange {
	in := slices.Clone(rows)
	slices.SortStableFunc(in, func(a, b schema.Exchange) int { return a.StartedAt.Compare(b.StartedAt) })
	var out []schema.Exchange
	m := correlate.NewMerger(func(r correlate.Row) { out = append(out, *r.Exchange) })
	m.Window = window
	for i := range in {
		m.Advance(correlate.Mark{Seq: int64(i + 1), Now: in[i].StartedAt})
		m.Add(correlate.Row{Exchange: &in[i]})
	}
	m.Finish()
	return out
}

func mergeCases() map[string][]schema.Exchange {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	skew := 3*time.Second + 250*time.Millisecond
	cases := map[string][]schema.Exchange{
		"skew": {
			row("client", "a", "1", at(0), "TOOL_SUCCESS", 200), row("client", "a", "2", at(10), "HTTP_ERROR", 502),
			row("client", "a", "3", at(20), "HTTP_ERROR", 503), row("client", "a", "4", at(30), "NO_RESPONSE", 0),
			row("client", "a", "5", at(40), "TOOL_ERROR", 200), row("client", "a", "6", at(50), "NO_RESPONSE", 0, 0),
			row("server", "x", "1", at(0).Add(skew), "TOOL_SUCCESS", 200), row("server", "x", "2", at(10).Add(skew), "TOOL_SUCCESS", 200),
			row("server", "x", "3", at(20).Add(skew), "HTTP_ERROR", 503), row("server", "x", "5", at(40).Add(skew), "TOOL_ERROR", 200),
			row("server", "x", "6", at(50).Add(skew+time.Second), "NO_RESPONSE", 0), row("server", "y", "1", at(3600), "TOOL_SUCCESS", 200),
		},
	}
	var script []schema.Exchange
	for run := 0; run < 5; run++ {
		for call := 1; call <= 3; call++ {
			t := t0.Add(time.Duration(run)*time.Minute + time.Duration(call)*2*time.Second)
			id := fmt.Sprint(call)
			script = append(script, row("client", fmt.Sprint("run", run), id, t, "TOOL_SUCCESS", 200),
				row("server", fmt.Sprint("conn", run), id, t.Add(3*time.Minute+40*time.Millisecond), "TOOL_SUCCESS", 200))
		}
	}
	cases["same-script"] = script
	return cases
}

func sortedVerdicts(rows []schema.Exchange) []string { return verdicts(rows) }

// TestMergerWindowedMatchesMergeViews: with a window wider than the gap
// between partners, the streaming merge writes what MergeViews does, on the
// merge tests' rows and on every sample, sharded or not.
func TestMergerWindowedMatchesMergeViews(t *testing.T) {
	for name, rows := range mergeCases() {
		want := correlate.MergeViews(slices.Clone(rows))
		for _, w := range []time.Duration{0, 10 * time.Minute} {
			if got := streamMerge(rows, w); !reflect.DeepEqual(sortedVerdicts(got), sortedVerdicts(want)) {
				t.Errorf("%s, window %v: streaming merge differs from MergeViews:\n%v\n%v", name, w, sortedVerdicts(got), sortedVerdicts(want))
			}
		}
	}
	// samples/ as one run, files one after the other. cakewalk's client and
	// server logs each span an hour: with a window of two hours every
	// partner is still held when the other arrives, and the rows are
	// MergeViews'.
	obs := decodeSamples(t, sampleFiles(t))
	_, wantMerged := todayVerdicts(t)
	for _, window := range []time.Duration{2 * time.Hour, 0} {
		var first []schema.Exchange
		for _, n := range []int{1, 2, 4, 7} {
			got, _ := shardedRun(t, obs, n, 5, true, window)
			if n == 1 {
				first = got
				diffLines(t, fmt.Sprintf("merged samples, window %v", window), verdicts(got), wantMerged)
				continue
			}
			if !reflect.DeepEqual(got, first) {
				t.Fatalf("window %v, %d shards: merged rows differ from 1 shard", window, n)
			}
		}
	}
}

// TestMergerSamplesNarrowWindow: with the default window (10 minutes) the
// rows are still the same for any number of shards, and the only rows not
// merged as MergeViews merges them are cakewalk's, whose server log is read
// after its client log, an hour long: partners that arrive more than the
// window apart are written single-sided.
func TestMergerSamplesNarrowWindow(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	_, wantMerged := todayVerdicts(t)
	var first []schema.Exchange
	for _, n := range []int{1, 2, 4, 7} {
		got, _ := shardedRun(t, obs, n, 5, true, sampleLateness)
		if n > 1 {
			if !reflect.DeepEqual(got, first) {
				t.Fatalf("%d shards: merged rows differ from 1 shard", n)
			}
			continue
		}
		first = got
		want := map[string]bool{}
		for _, l := range wantMerged {
			want[l] = true
		}
		split := 0
		for _, r := range got {
			if want[verdict(&r)] {
				continue
			}
			if !strings.Contains(r.Source, "/cakewalk/") || r.Sides == "both" {
				t.Errorf("row differs from MergeViews: %s", verdict(&r))
			}
			split++
		}
		if split == 0 || len(got) != len(wantMerged)+split/2 {
			t.Errorf("%d rows (%d single-sided instead of merged), MergeViews %d", len(got), split, len(wantMerged))
		}
	}
}

// TestMergerWritesAfterTheWindow: a partner that comes later than the
// window finds its row already written single-sided; one within it merges.
func TestMergerWritesAfterTheWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var out []schema.Exchange
	m := correlate.NewMerger(func(r correlate.Row) { out = append(out, *r.Exchange) })
	m.Window = time.Minute
	c1, s1 := row("client", "a", "1", t0, "TOOL_SUCCESS", 200), row("server", "x", "1", t0, "TOOL_SUCCESS", 200)
	c2, s2 := row("client", "a", "2", t0.Add(time.Second), "TOOL_SUCCESS", 200), row("server", "x", "2", t0.Add(time.Second), "TOOL_SUCCESS", 200)
	m.Advance(correlate.Mark{Seq: 1, Now: t0})
	m.Add(correlate.Row{Exchange: &c1})
	m.Add(correlate.Row{Exchange: &c2})
	m.Advance(correlate.Mark{Seq: 2, Now: t0.Add(30 * time.Second)})
	m.Add(correlate.Row{Exchange: &s1}) // within the window
	m.Advance(correlate.Mark{Seq: 3, Now: t0.Add(2 * time.Minute)})
	if len(out) != 2 || out[0].Sides != "both" || out[1].Sides != "client" || m.Held() != 0 {
		t.Fatalf("after the window: %d rows written, held %d: %v", len(out), m.Held(), sortedVerdicts(out))
	}
	m.Add(correlate.Row{Exchange: &s2}) // its partner is gone
	m.Finish()
	if len(out) != 3 || out[2].Sides != "server" {
		t.Fatalf("late partner: %v", sortedVerdicts(out))
	}
}

// mergeStream feeds n exchanges seen by both sides, one every 100 ms, the
// server's row 40 ms after the client's, each pair in a conversation of its
// own every 10 calls; it returns the most rows the Merger held and how many
// rows came out merged.
func mergeStream(n int, window time.Duration, sample func()) (maxHeld, merged int) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	m := correlate.NewMerger(func(r correlate.Row) {
		if r.Exchange.Sides == "both" {
			merged++
		}
	})
	m.Window = window
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		conv := fmt.Sprint(i / 10)
		c, s := row("client", conv, fmt.Sprint(i%10), at, "TOOL_SUCCESS", 200), row("server", conv, fmt.Sprint(i%10), at.Add(40*time.Millisecond), "TOOL_SUCCESS", 200)
		m.Add(correlate.Row{Conv: int64(i + 1), Exchange: &c})
		m.Add(correlate.Row{Conv: int64(i + 1), Exchange: &s})
		m.Advance(correlate.Mark{Seq: int64(i + 1), Now: at.Add(40 * time.Millisecond)})
		maxHeld = max(maxHeld, m.Held())
		if sample != nil && i%20000 == 0 {
			sample()
		}
	}
	m.Finish()
	return maxHeld, merged
}

// TestMergerMemoryIsBoundedByTheWindow: over a long stream the Merger holds
// the rows of about one window (and an eighth), not the run, and merges
// every pair.
func TestMergerMemoryIsBoundedByTheWindow(t *testing.T) {
	const n = 100_000 // 10,000 s of traffic
	window := time.Minute
	maxHeld, merged := mergeStream(n, window, nil)
	perWindow := int(2 * (window + window/8) / (100 * time.Millisecond)) // rows arriving in a window and an eighth
	if maxHeld > perWindow+4 || maxHeld < perWindow/2 {
		t.Errorf("held at most %d rows, want about %d (one window's)", maxHeld, perWindow)
	}
	if merged != n {
		t.Errorf("%d of %d pairs merged", merged, n)
	}
}

// BenchmarkMergerStream reports the peak live heap of the streaming merge
// over 200,000 and 2,000,000 exchanges: flat as the input grows tenfold.
func BenchmarkMergerStream(b *testing.B) {
	for _, n := range []int{200_000, 2_000_000} {
		b.Run(fmt.Sprintf("exchanges=%d", n), func(b *testing.B) {
			for b.Loop() {
				var peak uint64
				var ms runtime.MemStats
				_, merged := mergeStream(n, time.Minute, func() {
					runtime.GC()
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				})
				if merged != n {
					b.Fatalf("%d of %d merged", merged, n)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			}
		})
	}
}
