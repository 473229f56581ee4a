package correlate_test

import (
	"bytes"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// benchCorrelateBytes is the size of the wire log whose observations the
// throughput benchmark correlates.
const benchCorrelateBytes = 8 << 20

// benchObservations decodes a wire log of about size bytes into
// observations, in log order, and returns them with the log's size. It is
// the one place the benchmark's input is made: internal/traffic: a realistic client-side wire log of 400 interleaved sessions (seed 1).
func benchObservations(tb testing.TB, size int64) ([]*schema.Observation, int64) {
	tb.Helper()
	var log bytes.Buffer
	if _, err := traffic.Write(&log, traffic.Options{Seed: 1, Bytes: size, Sessions: 400}); err != nil {
		tb.Fatal(err)
	}
	n := int64(log.Len())
	c := &obsCollector{}
	dec, _ := decode.DecoderFor(decode.FormatWire)
	if err := dec("bench.ndjson", &log, c); err != nil {
		tb.Fatal(err)
	}
	if c.other != 0 || len(c.obs) == 0 {
		tb.Fatalf("the benchmark log decoded into %d observations and %d other records", len(c.obs), c.other)
	}
	return c.obs, n
}

type obsCollector struct {
	obs   []*schema.Observation
	other int
}

func (c *obsCollector) Observation(o *schema.Observation)                  { c.obs = append(c.obs, o) }
func (c *obsCollector) Quarantine(schema.Position, string, string, []byte) { c.other++ }
func (c *obsCollector) Skip(schema.Position, string)                       { c.other++ }

// copyObservations gives each iteration observations of its own (the
// correlator keeps what it is given), sharing only the immutable bytes.
func copyObservations(tmpl []*schema.Observation) []*schema.Observation {
	out := make([]*schema.Observation, len(tmpl))
	for i, t := range tmpl {
		o := *t
		if t.HTTP != nil {
			h := *t.HTTP
			o.HTTP = &h
		}
		o.Messages = append([]schema.Message(nil), t.Messages...)
		out[i] = &o
	}
	return out
}

// BenchmarkCorrelatorThroughput feeds the observations of a wire log of
// many interleaved sessions through Correlator.Add: pairing, retries, SSE
// answers, and the classification and row building each finished exchange
// gets (the correlator calls classify.Classify). Input bytes are the wire
// log's (so MB/s compares with decode and ingest); records/s counts
// observations added, exchanges/s rows emitted.
//
//   - pipeline: the wiring ingest uses (see the package documentation and
//     drive_test.go): Seq and Clock.Stamp, one NewShard correlator (one
//     core's share), Advance every 2,048 observations (the pipeline's
//     chunk), the round's items through a Linker, Finish at the end.
//   - self-driven: correlate.New, which keeps its own clock and advances
//     after every Add.
func BenchmarkCorrelatorThroughput(b *testing.B) {
	tmpl, size := benchObservations(b, benchCorrelateBytes)
	for _, wiring := range []string{"pipeline", "self-driven"} {
		b.Run(wiring, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var rows, added int
			for b.Loop() {
				b.StopTimer()
				obs := copyObservations(tmpl)
				b.StartTimer()
				var n int
				if wiring == "pipeline" {
					n = correlatePipeline(obs, 2048)
				} else {
					n = correlateSelfDriven(obs)
				}
				if n == 0 {
					b.Fatal("no exchanges")
				}
				rows += n
				added += len(obs)
			}
			b.ReportMetric(float64(added)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "exchanges/s")
		})
	}
}

// Ingest's defaults.
const (
	benchIdle     = 30 * time.Minute
	benchLateness = 10 * time.Minute
)

func correlateSelfDriven(obs []*schema.Observation) (rows int) {
	c := correlate.New(func(*schema.Exchange) { rows++ })
	c.IdleTimeout, c.Lateness = benchIdle, benchLateness
	for _, o := range obs {
		c.Add(o)
	}
	c.Flush()
	return rows
}

// correlatePipeline is the pipeline's wiring with one shard (shardedRun in
// drive_test.go is the checked reference; this one only counts rows).
func correlatePipeline(obs []*schema.Observation, round int) (rows int) {
	clock := correlate.NewClock()
	var items []correlate.Item
	c := correlate.NewShard(func(it correlate.Item) { items = append(items, it) })
	c.IdleTimeout, c.Lateness = benchIdle, benchLateness
	linker := correlate.NewLinker(func(correlate.Row) { rows++ })
	linker.IdleTimeout = benchIdle
	closeRound := func(m correlate.Mark, final bool) {
		if final {
			c.Finish(m)
		} else {
			c.Advance(m)
		}
		for _, it := range items {
			linker.Add(it)
		}
		items = items[:0]
		if final {
			linker.Finish(m)
		} else {
			linker.Advance(m)
		}
	}
	var seq int64
	for _, o := range obs {
		seq++
		o.Seq = seq
		clock.Stamp(o)
		c.Add(o)
		if seq%int64(round) == 0 {
			closeRound(clock.Mark(seq), false)
		}
	}
	if len(obs) > 0 {
		clock.End(obs[len(obs)-1].Pos.Source)
	}
	closeRound(clock.Mark(seq+1), true)
	return rows
}
