package pipeline

import (
	"context"
	"math"
	"slices"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// marker closes a round: every record of the round has a seq at most
// mark.Seq. The sequencer sends one to every shard after each part of
// decoded input, so every shard's output is cut into the same rounds, which
// the orderer merges into one order that does not depend on the number of
// shards.
type marker struct {
	mark  correlate.Mark
	final bool // end of input: correlators flush everything they hold
	// last ends a run that keeps what is open (a Kafka generation that
	// ends, a stop of a consumer): rows of open conversations are not
	// written, the commit stays at or before their first records, and a
	// replay rebuilds them. Shards treat it as an ordinary round.
	last bool
	// mergeNow, when set (Kafka, merging), is the event time the Merger is
	// advanced to: the oldest of the partitions' newest times, among those
	// with records still to come, so that a partition read ahead does not
	// decide rows before the other side's partition has caught up.
	mergeNow time.Time
}

// item is one quarantine row on its way to the sink, with the input it
// belongs to.
type item struct {
	in *Input
	q  *schema.Quarantine
}

// shardMsg is what the sequencer sends a shard: observations, and the
// marker that ends the round.
type shardMsg struct {
	obs  []*schema.Observation
	mark marker
}

// roundOut is one stream's output for one round: a shard's items (rows and
// the events the Linker needs), or the sequencer's quarantine rows, ending
// with the round's marker and the oldest seq the stream still holds open.
type roundOut struct {
	items    []correlate.Item
	quar     []item
	mark     marker
	lowWater int64
	open     int // the shard's open conversations after the round
	// lowBy is lowWater per input name (Kafka runs, which commit each
	// partition up to its own), nil otherwise.
	lowBy map[string]int64
}

// shard runs one correlator: it pairs and classifies the conversations
// routed to it and emits their items in key order.
type shard struct {
	c     *correlate.Correlator
	items []correlate.Item
	stats correlate.Stats
	byIn  bool // report low-water marks per input
}

func newShard(cfg *Config) *shard {
	s := &shard{byIn: cfg.lowWaterByInput}
	s.c = correlate.NewShard(func(it correlate.Item) { s.items = append(s.items, it) })
	s.c.IdleTimeout, s.c.Lateness, s.c.MaxHold = cfg.IdleTimeout, cfg.Lateness, cfg.MaxHold
	if w := cfg.MergeWindow / 2; w > 0 && w < correlate.SameIDWindow && (cfg.Lateness <= 0 || w < cfg.Lateness) {
		// A server row held for a same-id repeat must still reach the
		// Merger within the window its client partner waits.
		s.c.SameIDHold = w
	}
	return s
}

func (s *shard) run(ctx context.Context, in <-chan shardMsg, out chan<- roundOut) {
	for msg := range in {
		for _, o := range msg.obs {
			s.c.Add(o)
		}
		if msg.mark.final {
			s.c.Finish(msg.mark.mark)
			s.stats = s.c.Stats
		} else {
			s.c.Advance(msg.mark.mark)
			if msg.mark.last {
				s.stats = s.c.Stats
			}
		}
		r := roundOut{items: s.items, mark: msg.mark, lowWater: s.c.LowWater(), open: s.c.OpenConversations()}
		if s.byIn {
			r.lowBy = map[string]int64{}
			s.c.LowWaterBy(r.lowBy)
		}
		s.items = nil
		select {
		case out <- r:
		case <-ctx.Done():
			return
		}
	}
}

// orderer merges the streams' rounds into one stream in key order.
type orderer struct {
	streams []<-chan roundOut
	open    int              // open conversations after the last round, over every shard
	lowBy   map[string]int64 // the shards' low-water marks per input after the last round (Kafka)
}

// next reads one round from every stream and returns its items in key
// order and its quarantine rows, with the round's marker and the lowest
// low-water mark; ok is false when the streams have closed (or ctx is
// done).
func (o *orderer) next(ctx context.Context) (items []correlate.Item, quar []item, mark marker, lowWater int64, ok bool) {
	lowWater = math.MaxInt64
	o.open = 0
	clear(o.lowBy)
	for i, ch := range o.streams {
		var r roundOut
		select {
		case r, ok = <-ch:
		case <-ctx.Done():
			return nil, nil, marker{}, 0, false
		}
		if !ok {
			return nil, nil, marker{}, 0, false
		}
		if i == 0 {
			mark = r.mark
		}
		lowWater = min(lowWater, r.lowWater)
		o.open += r.open
		for k, v := range r.lowBy {
			if o.lowBy == nil {
				o.lowBy = map[string]int64{}
			}
			if cur, ok := o.lowBy[k]; !ok || v < cur {
				o.lowBy[k] = v
			}
		}
		items = append(items, r.items...)
		quar = append(quar, r.quar...)
	}
	slices.SortFunc(items, func(a, b correlate.Item) int { return a.Key.Compare(b.Key) })
	return items, quar, mark, lowWater, true
}
