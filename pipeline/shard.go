package pipeline

import (
	"context"
	"math"
	"sort"

	"mcptrace/correlate"
	"mcptrace/redact"
	"mcptrace/schema"
)

// marker closes a round: every record of the round has a seq at most seq.
// The sequencer sends one to every shard after each part of decoded input,
// so every shard's output is cut into the same rounds, which the orderer
// merges into one order that does not depend on the number of shards.
type marker struct {
	round  int64
	seq    int64
	final  bool // end of input: correlators flush everything they hold
	commit bool // publish what is durable after this round (a stream's periodic commit)
}

// orderKey orders output rows: by the seq of the record whose arrival
// emitted the row (or of the round for rows emitted by time or at the end),
// then by the conversation's first seq, then by emission order.
type orderKey struct {
	seq, conv int64
	n         int32
}

func (a orderKey) less(b orderKey) bool {
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	if a.conv != b.conv {
		return a.conv < b.conv
	}
	return a.n < b.n
}

// item is one output row on its way to the sink, with the input it belongs
// to.
type item struct {
	key orderKey
	in  *Input
	ex  *schema.Exchange
	q   *schema.Quarantine
}

// shardMsg is what the sequencer sends a shard: observations, and the
// marker that ends the round.
type shardMsg struct {
	obs  []*schema.Observation
	mark marker
}

// roundOut is one stream's output for one round: a shard's rows, or the
// sequencer's quarantine rows, ending with the round's marker and the
// oldest seq the stream still holds open.
type roundOut struct {
	items    []item
	mark     marker
	lowWater int64
}

// shard runs one correlator: it pairs and classifies the conversations
// routed to it and emits their rows in key order.
type shard struct {
	c      *correlate.Correlator
	inputs map[string]*Input // by name: which input a row came from
	items  []item
	key    orderKey
	stats  correlate.Stats
	redact *redact.Redactor // nil when rows are redacted after the merge
}

func newShard(cfg *Config, inputs map[string]*Input) *shard {
	s := &shard{inputs: inputs}
	s.c = correlate.New(func(e *schema.Exchange) {
		k := s.key
		s.key.n++
		in := s.inputs[e.Source]
		r := *e
		if s.redact != nil {
			r = RedactExchange(r, s.redact)
		}
		e = &r
		s.items = append(s.items, item{key: k, in: in, ex: e})
	})
	s.c.IdleTimeout, s.c.Lateness = cfg.IdleTimeout, cfg.Lateness
	return s
}

func (s *shard) run(ctx context.Context, in <-chan shardMsg, out chan<- roundOut) {
	for msg := range in {
		for _, o := range msg.obs {
			s.key = orderKey{seq: o.Seq}
			s.c.Add(o)
		}
		s.key = orderKey{seq: msg.mark.seq}
		if msg.mark.final {
			s.c.Flush()
			s.stats = s.c.Stats
		}
		r := roundOut{items: s.items, mark: msg.mark, lowWater: s.lowWater()}
		s.items = nil
		select {
		case out <- r:
		case <-ctx.Done():
			return
		}
	}
}

// lowWater is the oldest seq the correlator still needs (math.MaxInt64:
// none). A correlator that cannot say holds everything since the start.
func (s *shard) lowWater() int64 {
	if lw, ok := any(s.c).(interface{ LowWater() int64 }); ok {
		return lw.LowWater()
	}
	if s.c.OpenConversations() == 0 {
		return math.MaxInt64
	}
	return 0
}

// orderer merges the streams' rounds into one stream in key order.
type orderer struct {
	streams []<-chan roundOut
}

// next reads one round from every stream and returns its rows in order,
// with the round's marker and the lowest low-water mark; ok is false when
// the streams have closed (or ctx is done).
func (o *orderer) next(ctx context.Context) (items []item, mark marker, lowWater int64, ok bool) {
	lowWater = math.MaxInt64
	for i, ch := range o.streams {
		var r roundOut
		select {
		case r, ok = <-ch:
		case <-ctx.Done():
			return nil, marker{}, 0, false
		}
		if !ok {
			return nil, marker{}, 0, false
		}
		if i == 0 {
			mark = r.mark
		}
		lowWater = min(lowWater, r.lowWater)
		items = append(items, r.items...)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].key.less(items[j].key) })
	return items, mark, lowWater, true
}
