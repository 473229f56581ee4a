package pipeline

import (
	"context"
	"math"
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

// roundOut is one stream's output for one round, or a part of it: a
// shard's items (rows and the events the Linker needs), or the sequencer's
// quarantine rows. A round of a shard may come in several parts (partial
// set on all but the last) so that a round that closes many conversations
// at once (the end of input, an idle sweep) is handed on in bounded pieces;
// the last part carries the round's marker and the oldest seq the stream
// still holds open.
type roundOut struct {
	items    []correlate.Item
	partial  bool // more parts of this round follow
	quar     []item
	mark     marker
	lowWater int64
	open     int // the shard's open conversations after the round
	// lowBy is lowWater per input name (Kafka runs, which commit each
	// partition up to its own), nil otherwise.
	lowBy map[string]int64
	// free takes items back, cleared, once the orderer has passed them,
	// for the shard to fill again (nil: nobody wants them back).
	free chan<- []correlate.Item
}

// recycle hands items back to the shard that sent them, cleared (they
// point to rows the writer may keep), unless its pool is full.
func (r *roundOut) recycle() {
	if r.free == nil || cap(r.items) == 0 {
		return
	}
	clear(r.items)
	select {
	case r.free <- r.items[:0]:
	default:
	}
}

// partItems is how many items a shard hands on at most in one part of a
// round, and how many items the orderer hands the writer at once: what a
// round that closes many conversations holds in memory between stages
// (each shard's queue holds up to four parts, and the orderer and the
// writer one more each). 1,024 rather than 4,096: when the end of input
// closes 200,000 open conversations at once, the rows in flight took some
// 20 MB more of live heap at the peak (355-359 against 337-338 MB, peak
// RSS 472 against 448 MiB, 2 alternated pairs), with no change in CPU or
// collections on the 1 GiB wire log.
const partItems = 1024

// shard runs one correlator: it pairs and classifies the conversations
// routed to it and emits their items in key order.
type shard struct {
	c     *correlate.Correlator
	items []correlate.Item
	// free holds item slices the orderer has passed and handed back
	// (roundOut.recycle): a round's items reuse them instead of growing
	// a new slice from nothing every round (issue 11: that growth was a
	// tenth of the allocations of a wire log's run). grow is the
	// capacity of a new one: the most items a round has had.
	free  chan []correlate.Item
	grow  int
	stats correlate.Stats
	byIn  bool // report low-water marks per input

	// While run runs: where parts go, and whether the run was cancelled
	// while a part waited (the rest of the round is then dropped).
	ctx  context.Context
	out  chan<- roundOut
	dead bool
}

func newShard(cfg *Config) *shard {
	s := &shard{byIn: cfg.lowWaterByInput, free: make(chan []correlate.Item, 4), grow: 64}
	s.c = correlate.NewShard(s.add)
	s.c.IdleTimeout, s.c.Lateness, s.c.MaxHold = cfg.IdleTimeout, cfg.Lateness, cfg.MaxHold
	if n := cfg.MaxOpenConversations; n > 0 {
		// The run's bound, shared evenly by the shards (rounded up): a
		// conversation lives on one shard (ShardKey), so which ones end at
		// the bound depends on the number of shards (-workers).
		s.c.MaxOpen, s.c.MaxOpenTotal = (n+cfg.Workers-1)/cfg.Workers, n
	}
	if w := cfg.MergeWindow / 2; w > 0 && w < correlate.SameIDWindow && (cfg.Lateness <= 0 || w < cfg.Lateness) {
		// A server row held for a same-id repeat must still reach the
		// Merger within the window its client partner waits.
		s.c.SameIDHold = w
	}
	return s
}

// fresh is an empty slice for the next items: one the orderer handed back,
// or a new one.
func (s *shard) fresh() []correlate.Item {
	select {
	case b := <-s.free:
		return b
	default:
		return make([]correlate.Item, 0, s.grow)
	}
}

// add takes an item from the correlator; a full part goes on at once.
func (s *shard) add(it correlate.Item) {
	if s.dead {
		return
	}
	s.items = append(s.items, it)
	if len(s.items) >= partItems && s.out != nil {
		select {
		case s.out <- roundOut{items: s.items, partial: true, free: s.free}:
		case <-s.ctx.Done():
			s.dead = true
		}
		s.items = s.fresh()
	}
}

func (s *shard) run(ctx context.Context, in <-chan shardMsg, out chan<- roundOut) {
	s.ctx, s.out = ctx, out
	defer func() { s.ctx, s.out = nil, nil }()
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
		if s.dead {
			return
		}
		r := roundOut{items: s.items, mark: msg.mark, lowWater: s.c.LowWater(), open: s.c.OpenConversations(), free: s.free}
		if s.byIn {
			r.lowBy = map[string]int64{}
			s.c.LowWaterBy(r.lowBy)
		}
		s.grow = min(max(s.grow, len(s.items)), partItems)
		s.items = s.fresh()
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

	heads []roundOut // each stream's part being merged
	at    []int      // the next item of each head
	batch []correlate.Item
}

// next reads one round from every stream and hands its items, in key
// order, to each in batches of at most partItems (a shard's items come in
// key order, and keys are unique in a run, so merging the streams orders
// the round); it returns the round's quarantine rows, with the round's
// marker and the lowest low-water mark. ok is false when the streams have
// closed (or ctx is done); an error of each ends the round.
func (o *orderer) next(ctx context.Context, each func([]correlate.Item) error) (quar []item, mark marker, lowWater int64, ok bool, err error) {
	lowWater = math.MaxInt64
	o.open = 0
	clear(o.lowBy)
	if o.heads == nil {
		o.heads, o.at = make([]roundOut, len(o.streams)), make([]int, len(o.streams))
	}
	recv := func(i int) bool {
		var r roundOut
		var ok bool
		select {
		case r, ok = <-o.streams[i]:
		case <-ctx.Done():
			return false
		}
		if !ok {
			return false
		}
		o.heads[i].recycle() // passed whole, or the zero roundOut
		o.heads[i], o.at[i] = r, 0
		if r.partial {
			return true
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
		quar = append(quar, r.quar...)
		return true
	}
	for i := range o.streams {
		if !recv(i) {
			return nil, marker{}, 0, false, nil
		}
	}
	flush := func() error {
		if len(o.batch) == 0 {
			return nil
		}
		err := each(o.batch)
		clear(o.batch)
		o.batch = o.batch[:0]
		return err
	}
	for {
		best := -1
		for i := range o.heads {
			h := &o.heads[i]
			for o.at[i] == len(h.items) && h.partial {
				if !recv(i) {
					return nil, marker{}, 0, false, nil
				}
			}
			if o.at[i] < len(h.items) && (best < 0 || h.items[o.at[i]].Key.Compare(o.heads[best].items[o.at[best]].Key) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		o.batch = append(o.batch, o.heads[best].items[o.at[best]])
		o.at[best]++
		if len(o.batch) >= partItems {
			if err := flush(); err != nil {
				return nil, marker{}, 0, false, err
			}
		}
	}
	for i := range o.heads {
		o.heads[i].recycle()
		o.heads[i] = roundOut{}
	}
	if err := flush(); err != nil {
		return nil, marker{}, 0, false, err
	}
	return quar, mark, lowWater, true, nil
}
