package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/input"
	"mcptrace/metrics"
	"mcptrace/redact"
	"mcptrace/schema"
)

// ErrStopped is returned (with the summary) by a run that a soft stop
// (Config.Stop) ended before its inputs did: what was read is written.
var ErrStopped = errors.New("stopped before the end of the input")

// Run ingests cfg.Inputs and writes the dataset. An input that is missing or
// unreadable is an error before anything is written; bad records are
// quarantined and the run goes on. Cancelling ctx abandons the run: nothing
// of it is published. Closing cfg.Stop ends it softly: reading stops, what
// was read is drained, written and published, and Run returns ErrStopped.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	rd := &redact.Redactor{Policy: cfg.Policy, Pseud: cfg.Pseudonyms, Stats: &redact.Stats{}}
	ins, skipped, err := input.Expand(cfg.Inputs, input.Options{Exclude: []string{cfg.OutDir}})
	if err != nil {
		return nil, inputErr(err)
	}
	if len(ins) == 0 {
		return nil, inputErr(fmt.Errorf("no input files found in %s (%d entries skipped: %s)", strings.Join(cfg.Inputs, ", "), len(skipped), skipReasons(skipped)))
	}
	merging, allWire, err := mergeWanted(cfg, ins)
	if err != nil {
		return nil, inputErr(err)
	}
	interleave := merging && allWire && len(ins) <= maxInterleaved
	files := make([]string, len(ins))
	inputs := make([]*Input, len(ins))
	byName := make(map[string]*Input, len(ins))
	for i, in := range ins {
		files[i] = in.Name
		inputs[i] = &Input{Src: in, Name: in.Name, ID: in.ID, Stream: in.Kind != input.File}
		byName[in.Name] = inputs[i]
	}
	sum := &Summary{Merging: merging, Files: files, ByFormat: map[string]int{}, Skipped: map[string]int64{}, ByReason: map[string]int64{},
		ByOutcome: map[string]int64{}, SkippedEntries: map[string]int64{}, OpenLimit: max(cfg.MaxOpenConversations, 0)}
	for _, sk := range skipped {
		sum.SkippedEntries[sk.Reason]++
		cfg.Log.Info().Str("path", sk.Name).Str("reason", sk.Reason).Str("detail", sk.Detail).Msg("input entry skipped")
	}
	runTime := cfg.Now().UTC()
	// Waiting for the dataset's lock (-wait-lock) ends on a soft stop too.
	lockCtx, lockDone := context.WithCancel(ctx)
	defer lockDone()
	go func() {
		select {
		case <-cfg.Stop:
			lockDone()
		case <-lockCtx.Done():
		}
	}()
	kept := map[*Input]bool{}
	sink, err := cfg.newSink(lockCtx, cfg, sum, func(in *Input) { kept[in] = true })
	lockDone()
	if err != nil {
		if stopped(cfg.Stop) {
			return sum, fmt.Errorf("%w: while waiting for the dataset's lock (%v)", ErrStopped, err)
		}
		return nil, outputErr(err)
	}
	p := &run{cfg: &cfg, rd: rd, sum: sum, sink: sink, inputs: inputs, byName: byName, merging: merging, runTime: runTime, kept: kept,
		interleave: interleave, started: start}
	if ds, ok := sink.(*datasetSink); ok {
		// The ledger goes into the dataset with the final commit, while the
		// run still holds the lock.
		ds.ledger = func() ([]byte, error) { return json.MarshalIndent(p.buildLedger(time.Now()), "", "  ") }
	}
	err = p.execute(ctx)
	sum.Redactions = rd.Stats.Counts()
	sum.Elapsed = time.Since(start)
	p.ledger()
	sum.Ledger = p.buildLedger(time.Now())
	return sum, err
}

// run is one execution of the stages.
type run struct {
	started time.Time
	shards  []*shard
	cfg     *Config
	rd      *redact.Redactor
	sum     *Summary
	sink    Sink
	inputs  []*Input
	byName  map[string]*Input
	merging bool
	runTime time.Time
	acks    ackQueue
	counts  progressCounters
	stopped bool              // a soft stop ended reading early
	pairs   map[string]*Input // merged rows, by the pair of inputs
	kept    map[*Input]bool   // read in part, not published: an earlier complete run stays
	// interleave: the inputs (wire logs of both sides, merged) are read
	// side by side in event-time order, so the merge holds rows only for
	// its window.
	interleave bool
	// src is the run's source (nil: the file source over inputs).
	src Source
	// keepOpen, when set, is asked at the end of the source whether open
	// state is kept (true: a Kafka generation ended or was stopped: what
	// is open is replayed by the next owner) or finished like a file's end.
	keepOpen func() bool
	// afterCommit runs after every commit of the sink whose units have been
	// acknowledged (Kafka: commit the partitions' offsets).
	afterCommit func(ctx context.Context) error
	// streamWindow overrides the merge window of streams (Kafka's
	// -merge-window; 0 keeps the default).
	streamWindow time.Duration
	// kafka is the Kafka side of a consumer's run (nil otherwise).
	kafka *kafkaState
}

// group runs goroutines and keeps the first error; the first error cancels
// the run. Wait joins every goroutine.
type group struct {
	wg     sync.WaitGroup
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func (g *group) fail(err error) {
	g.once.Do(func() { g.err = err; g.cancel() })
}

func (g *group) Go(fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(); err != nil {
			g.fail(err)
		}
	}()
}

func (p *run) execute(parent context.Context) error {
	cfg := p.cfg
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	g := &group{cancel: cancel}
	W := cfg.Workers

	src := p.src
	if src == nil {
		fs := newFileSource(cfg, p.inputs, &p.counts)
		fs.interleave = p.interleave
		src = fs
	}
	units := make(chan *Unit, W)
	results := make(chan handle, W)
	dec := &decoder{rd: p.rd, runTime: p.runTime, stop: cfg.Stop, stats: &p.counts, format: cfg.Format, maxLine: cfg.MaxLineBytes, maxDoc: cfg.MaxDocumentBytes,
		limits: decode.Limits{MaxBody: cfg.MaxBodyBytes, MaxSSEEvents: cfg.MaxSSEEvents}}

	// Source: hands out units in order until the input ends, a soft stop,
	// or cancellation.
	g.Go(func() error {
		defer close(units)
		defer src.Close()
		var n int64
		for {
			u, err := src.Next(ctx) // after a soft stop: what is cut, then io.EOF
			if u == nil && err == nil {
				continue
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return inputErr(err)
			}
			u.seq = n
			n++
			select {
			case units <- u:
			case <-ctx.Done():
				u.discard()
				return nil
			}
		}
	})

	// Decode: fan out over the cores. A unit's output channel is announced
	// before it is decoded: units are taken in order, so the one the
	// sequencer waits for is always being decoded.
	var dwg sync.WaitGroup
	for range W {
		dwg.Add(1)
		g.Go(func() error {
			defer dwg.Done()
			for u := range units {
				parts := make(chan decoded, 4)
				select {
				case results <- handle{unit: u, parts: parts}:
				case <-ctx.Done():
					u.discard()
					continue // drain: close what the remaining units hold
				}
				err := dec.run(ctx, u, parts)
				close(parts)
				if err != nil && ctx.Err() == nil {
					return inputErr(err)
				}
			}
			return nil
		})
	}
	g.Go(func() error { dwg.Wait(); close(results); return nil })

	// Correlate and classify: one shard per worker, each in a goroutine.
	// A shard's input holds one part besides the one it works on: each
	// part buffered is decoded observations held (a unit's part is some
	// 340 observations, 1.8 MB of bodies and records on a wire log, source.go,
	// chunkBytes); four held 20 MB more at the peak for no more speed, when
	// parts were four times as large (issue 11).
	shardIn := make([]chan shardMsg, W)
	streams := make([]<-chan roundOut, W+1)
	shards := make([]*shard, W)
	for i := range W {
		shardIn[i] = make(chan shardMsg, 1)
		out := make(chan roundOut, 4)
		streams[i] = out
		shards[i] = newShard(cfg)
		g.Go(func() error {
			defer close(out)
			shards[i].run(ctx, shardIn[i], out)
			return nil
		})
	}
	qOut := make(chan roundOut, 4)
	streams[W] = qOut
	p.shards = shards // their stats are final once their last round is written (the ledger)

	// Sequencer: restores run order, gives every record its seq, and routes
	// each observation by its conversation to a shard.
	g.Go(func() error {
		defer func() {
			for _, ch := range shardIn {
				close(ch)
			}
			close(qOut)
		}()
		return p.sequence(ctx, results, shardIn, qOut)
	})

	// Progress lines, while the run goes.
	done := make(chan struct{})
	if cfg.Progress != nil {
		start := time.Now()
		total := int64(0)
		for _, in := range p.inputs {
			if in.Src.Size < 0 || total < 0 {
				total = -1
				continue
			}
			total += in.Src.Size
		}
		g.Go(func() error {
			t := time.NewTicker(cfg.ProgressEvery)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					cfg.Progress(Progress{Records: p.counts.records.Load(), Bytes: p.counts.bytes.Load(), Elapsed: time.Since(start),
						Read: p.counts.rawRead(), Total: total})
				case <-done:
					return nil
				}
			}
		})
	}

	// Order, merge, and write, in this goroutine.
	err := p.write(ctx, &orderer{streams: streams})
	close(done)
	if err != nil {
		g.fail(outputErr(err))
	}
	g.wg.Wait()
	if stopped(cfg.Stop) {
		for _, in := range p.inputs {
			if !in.Finished.Load() {
				p.stopped = true // the stop left input unread
			}
		}
	}
	if g.err == nil && parent.Err() != nil {
		g.err = parent.Err()
	}
	if g.err != nil {
		p.sink.Abort()
		p.acks.releaseAll(context.Background(), g.err)
		return g.err
	}
	for _, s := range shards {
		p.sum.Correlation.Add(s.stats)
	}
	if p.stopped {
		return ErrStopped
	}
	return nil
}

// discard releases what a unit that will not be decoded holds.
func (u *Unit) discard() {
	if u.file != nil {
		u.file.close()
	}
	releaseLines(u.lines)
	u.lines = nil
}

// sequence reads decoded units in run order, accounts for every record,
// numbers them, routes observations to shards and sends quarantine rows on
// as a stream of their own. Every part ends a round.
func (p *run) sequence(ctx context.Context, results <-chan handle, shardIn []chan shardMsg, qOut chan<- roundOut) error {
	W := uint64(len(shardIn))
	sum := p.sum
	clock := correlate.NewClock()
	pending := map[int64]handle{}
	var next, seq int64
	seen := map[*Input]bool{}
	send := func(routed [][]*schema.Observation, quar []item, m marker) bool {
		for i, ch := range shardIn {
			var obs []*schema.Observation
			if routed != nil {
				obs = routed[i]
			}
			select {
			case ch <- shardMsg{obs: obs, mark: m}:
			case <-ctx.Done():
				return false
			}
		}
		select {
		case qOut <- roundOut{quar: quar, mark: m, lowWater: math.MaxInt64}:
		case <-ctx.Done():
			return false
		}
		return true
	}
	// A live stream that goes quiet still moves: every flush interval
	// without input lets that much event time pass (correlate.Clock.Pass),
	// so idle conversations end and their rows are written.
	var tick <-chan time.Time
	if p.streaming() {
		t := time.NewTicker(p.cfg.FlushInterval)
		defer t.Stop()
		tick = t.C
	}
	lastInput := time.Now()
	for {
		var h handle
		select {
		case r, ok := <-results:
			if !ok {
				goto end
			}
			h = r
			lastInput = time.Now()
		case now := <-tick:
			if quiet := now.Sub(lastInput); quiet >= p.cfg.FlushInterval {
				clock.Pass(quiet, func(source string) bool { in := p.byName[source]; return in != nil && in.Stream })
				lastInput = now
				var mergeNow time.Time
				if p.kafka != nil && p.merging {
					mergeNow = p.kafka.mergeNow(clock)
				}
				m := marker{mark: clock.Mark(seq), mergeNow: mergeNow}
				if !send(nil, nil, m) {
					return nil
				}
			}
			continue
		case <-ctx.Done():
			return nil
		}
		pending[h.unit.seq] = h
		for {
			h, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			u := h.unit
			if !seen[u.Input] {
				seen[u.Input] = true
				if u.Input.Format != "" {
					sum.ByFormat[u.Input.Format]++
				}
			}
			var ua *unitAcct // a Kafka unit's ledger part (kafkaledger.go)
			if p.kafka != nil {
				ua = &unitAcct{counts: emptyCounts(), messages: int64(len(u.msgs))}
				u.acct = ua
			}
			for d := range h.parts {
				lastInput = time.Now()
				acct := u.Input.account()
				sum.Records += d.records
				sum.Bytes += d.bytes
				acct.Records += d.records
				acct.Bytes += d.bytes
				for k, v := range d.skipped {
					sum.Skipped[k] += v
					acct.SkippedBy[k] += v
					acct.Skipped += v
				}
				if p.kafka != nil {
					n := len(d.obs)
					d.obs = p.kafka.dropUsed(u.Input, d.obs, sum, clock)
					if used := int64(n - len(d.obs)); used > 0 {
						acct.SkippedBy["already_written"] += used
						acct.Skipped += used
						ua.counts.SkippedBy["already_written"] += used
						ua.counts.Skipped += used
					}
					ua.counts.Records += d.records
					ua.counts.Bytes += d.bytes
					for k, v := range d.skipped {
						ua.counts.SkippedBy[k] += v
						ua.counts.Skipped += v
					}
					ua.counts.Observations += int64(len(d.obs))
					ua.counts.Quarantined += int64(len(d.quar))
					for i := range d.quar {
						ua.counts.QuarantinedBy[d.quar[i].Reason]++
					}
					ua.notes += notifications(d.obs)
				}
				sum.Observations += int64(len(d.obs))
				acct.Observations += int64(len(d.obs))
				var routed [][]*schema.Observation
				if len(d.obs) > 0 {
					routed = make([][]*schema.Observation, W)
					for _, o := range d.obs {
						seq++
						o.Seq = seq
						o.Pos.ID = u.Input.ID
						clock.Stamp(o)
						s := correlate.ShardKey(o) % W
						routed[s] = append(routed[s], o)
					}
				}
				var quar []item
				for i := range d.quar {
					q := &d.quar[i]
					sum.ByReason[q.Reason]++
					acct.QuarantinedBy[q.Reason]++
					seq++
					quar = append(quar, item{in: u.Input, q: q})
				}
				sum.Quarantined += int64(len(d.quar))
				acct.Quarantined += int64(len(d.quar))
				var mergeNow time.Time
				if p.kafka != nil && p.merging {
					p.kafka.observed(u.Input, d.obs, u.Last)
					mergeNow = p.kafka.mergeNow(clock)
				}
				m := marker{mark: clock.Mark(seq), mergeNow: mergeNow}
				if !send(routed, quar, m) {
					return nil
				}
			}
			u.last = seq
			if u.Last >= u.First && u.First > 0 {
				release, err := u.Input.Ckpt.Track(u.First, u.Last)
				if err != nil {
					return err
				}
				ack := u.Ack
				u.Ack = func(ctx context.Context, err error) error {
					if err == nil {
						release()
					}
					return ack(ctx, err)
				}
			}
			u.lines, u.note, u.file, u.msgs = nil, nil, nil, nil // decoded: only the acknowledgement waits
			p.acks.push(u)
		}
	}
end:
	if ctx.Err() != nil {
		return nil
	}
	final := p.keepOpen == nil || !p.keepOpen()
	// The last Mark takes a Seq of its own: the round before may have
	// advanced the correlators to Mark(seq) and closed idle conversations
	// keyed {seq, first Seq}; what Finish closes must be keyed after them.
	seq++
	send(nil, nil, marker{mark: clock.Mark(seq), final: final, last: true})
	return nil
}

// write takes the ordered rounds through the Linker (links across the
// conversations of a log) and, when the run holds both sides, the Merger;
// it redacts the rows and writes them and the quarantine rows through the
// sink; at the end it publishes the dataset and acknowledges the units.
func (p *run) write(ctx context.Context, ord *orderer) error {
	var rows []schema.Exchange
	var ins []*Input
	collect := func(r correlate.Row) { rows = append(rows, *r.Exchange) }
	var merger *correlate.Merger
	if p.merging {
		merger = correlate.NewMerger(collect)
		merger.Window = p.mergeWindow()
	}
	linker := correlate.NewLinker(func(r correlate.Row) {
		if merger != nil {
			merger.Add(r)
		} else {
			collect(r)
		}
	})
	linker.IdleTimeout = p.cfg.IdleTimeout
	// flush redacts the rows collected so far and writes them, with the
	// round's quarantine rows at its end.
	flush := func(quar []item) error {
		ins = ins[:0]
		for i := range rows {
			ins = append(ins, p.inputOf(&rows[i])) // before redaction may change the source text
		}
		redactRows(rows, p.rd, p.cfg.Workers)
		if err := p.writeRows(ctx, rows, ins, quar); err != nil {
			return err
		}
		clear(rows)
		rows = rows[:0]
		return nil
	}
	// Items come in batches; without a merge, the rows of a round that
	// closes many conversations at once are written as they come, so that
	// they are never all held at once.
	addItems := func(items []correlate.Item) error {
		for _, it := range items {
			if e := it.Ended(); e != nil && p.kafka != nil {
				p.kafka.convEnded(e)
			}
			linker.Add(it)
		}
		if merger == nil && len(rows) >= partItems {
			return flush(nil)
		}
		return nil
	}
	lastCommit := time.Now()
	for {
		quar, mark, lowWater, ok, oerr := ord.next(ctx, addItems)
		if oerr != nil {
			return oerr
		}
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("pipeline: a stage ended before the end of input (a bug)")
		}
		p.cfg.Metrics.SetOpenConversations(ord.open)
		if mark.final {
			linker.Finish(mark.mark)
		} else {
			linker.Advance(mark.mark)
		}
		if merger != nil {
			before := len(rows)
			switch {
			case mark.final:
				merger.Finish()
			case !mark.mergeNow.IsZero():
				m := mark.mark
				m.Now = mark.mergeNow
				merger.Advance(m)
			default:
				merger.Advance(mark.mark)
			}
			for i := before; i < len(rows); i++ {
				if rows[i].Sides == "both" {
					p.sum.Merged++
				}
			}
			p.sum.MergeHeldMax = max(p.sum.MergeHeldMax, merger.Held())
		}
		if err := flush(quar); err != nil {
			return err
		}
		if !mark.final {
			last := mark.last // the run ends keeping what is open
			if last || p.streaming() && time.Since(lastCommit) >= p.cfg.CommitInterval {
				lowWater = min(lowWater, linker.LowWater())
				if merger != nil {
					lowWater = min(lowWater, merger.LowWater())
				}
				round := mark.mark.Seq + 1
				bound := min(round, lowWater)
				boundOf := func(*Input) int64 { return bound }
				if p.cfg.lowWaterByInput {
					// Each input up to what its own open state needs.
					by := map[string]int64{}
					for k, v := range ord.lowBy {
						by[k] = v
					}
					linker.LowWaterBy(by)
					if merger != nil {
						merger.LowWaterBy(by)
					}
					boundOf = func(in *Input) int64 {
						if v, ok := by[in.Name]; ok {
							return min(round, v)
						}
						return round
					}
				}
				if err := p.commitStreams(ctx, boundOf, last); err != nil {
					return err
				}
				lastCommit = time.Now()
			}
			if last {
				// Rows the Linker and the Merger still hold are dropped
				// with the open conversations, for the replay to rebuild.
				p.sum.HeldForReplay += int64(linker.Held())
				if merger != nil {
					p.sum.HeldForReplay += int64(merger.Held())
				}
				// What open state holds is not durable: its units are
				// acknowledged as such, and a replay rebuilds it.
				_, err := p.acks.releaseAll(ctx, errKeptOpen)
				return err
			}
			continue
		}
		final := append([]*Input(nil), p.inputs...)
		for _, pair := range p.pairs {
			final = append(final, pair)
		}
		for _, in := range final {
			if p.kafka != nil {
				in.commitAt.Store(p.acks.durableUpTo(in, math.MaxInt64)) // offsets: the last one read, plus 1
			} else {
				in.commitAt.Store(in.Records.Load()) // everything read is written now
			}
		}
		began := time.Now()
		err := p.sink.Commit(ctx, final, true)
		p.cfg.Metrics.ObserveFlush(time.Since(began))
		p.cfg.Metrics.Commit(metrics.CommitDataset, err)
		if err != nil {
			return err
		}
		if _, err := p.acks.releaseAll(ctx, nil); err != nil {
			return err
		}
		if p.afterCommit != nil {
			return p.afterCommit(ctx)
		}
		return nil
	}
}

// errKeptOpen acknowledges the units a run that ends keeping its open
// state did not make durable.
var errKeptOpen = errors.New("held by a conversation still open when the run ended: to be replayed")

// commitStreams publishes the streams' rows up to bound (the round's end,
// capped by the oldest seq open state still needs), acknowledges the units
// it covers, and runs afterCommit; final also ends the sink.
func (p *run) commitStreams(ctx context.Context, boundOf func(*Input) int64, final bool) error {
	// A stream's rows are published as it goes; files wait for the end,
	// so that a failed run leaves the dataset as it was.
	var streams []*Input
	for _, in := range p.inputs {
		if in.Stream && in.Opened.Load() {
			streams = append(streams, in)
		}
	}
	for _, pair := range p.pairs {
		if pair.Stream {
			streams = append(streams, pair) // merged rows of two streams
		}
	}
	for _, in := range streams {
		in.commitAt.Store(p.acks.durableUpTo(in, boundOf(in)))
	}
	if p.kafka != nil {
		p.kafka.beforeCommit(boundOf)
	}
	began := time.Now()
	err := p.sink.Commit(ctx, streams, final)
	p.cfg.Metrics.ObserveFlush(time.Since(began))
	p.cfg.Metrics.Commit(metrics.CommitDataset, err)
	if err != nil {
		return err
	}
	p.sum.StreamCommits++
	// Only the committed inputs' units: a file's rows are published at
	// the end.
	if _, err := p.acks.releaseBy(ctx, boundOf, func(in *Input) bool { return in.Stream }, nil); err != nil {
		return err
	}
	if p.afterCommit != nil {
		return p.afterCommit(ctx)
	}
	return nil
}

// inputOf is the input a row is filed under: its log, or for a merged row
// the pair of logs it was made from (a rerun of either replaces it).
func (p *run) inputOf(e *schema.Exchange) *Input {
	in := p.byName[e.Source]
	if e.Sides != "both" || e.ServerSource == "" {
		return in
	}
	srv := p.byName[e.ServerSource]
	if in == nil || srv == nil || srv == in {
		return in
	}
	key := in.ID + "\x00" + srv.ID
	pair := p.pairs[key]
	if pair == nil {
		pair = &Input{Name: in.Name, ID: MergedID(in.ID, srv.ID), Stream: in.Stream && srv.Stream}
		pair.Opened.Store(true)
		if p.pairs == nil {
			p.pairs = map[string]*Input{}
		}
		p.pairs[key] = pair
	}
	pair.Finished.Store(in.Finished.Load() && srv.Finished.Load())
	return pair
}

// MergedID is the dataset identity of the merged rows of a client log and
// a server log: "merged:" and both identities, NUL-separated (no path holds a NUL).
func MergedID(client, server string) string { return "merged:" + client + "\x00" + server }

// streaming says whether the run reads a stream (standard input, a pipe):
// then time moves on while the input is quiet, and the stream's rows are
// published every Config.CommitInterval.
func (p *run) streaming() bool {
	for _, in := range p.inputs {
		if in.Stream {
			return true
		}
	}
	return false
}

// mergeWindow is how long, in event time, a row waits for the other side's
// view: -lateness plus the largest clock skew the merge estimates, when the
// two sides arrive side by side (wire files read in event-time order, or
// streams); otherwise files are read one after another, a client log and a
// server log meet only at the end, and rows are held to the end (0).
func (p *run) mergeWindow() time.Duration {
	window := p.cfg.Lateness + correlate.MaxSkew // a skewed server log's rows arrive up to MaxSkew late
	if p.cfg.MergeWindow > 0 {
		window = p.cfg.MergeWindow
	} else if p.streamWindow > 0 {
		window = p.streamWindow
	}
	if p.interleave {
		return window
	}
	for _, in := range p.inputs {
		if !in.Stream {
			return 0
		}
	}
	return window
}

// writeRows hands rows and quarantine rows to the sink in order, grouping
// runs of one input into one call.
func (p *run) writeRows(ctx context.Context, rows []schema.Exchange, ins []*Input, quar []item) error {
	for i := 0; i < len(rows); {
		in := ins[i]
		j := i + 1
		for j < len(rows) && ins[j] == in {
			j++
		}
		for k := i; k < j; k++ {
			p.count(&rows[k])
		}
		if err := p.sink.WriteExchanges(ctx, in, rows[i:j]); err != nil {
			return err
		}
		i = j
	}
	for i := 0; i < len(quar); {
		j := i + 1
		for j < len(quar) && quar[j].in == quar[i].in {
			j++
		}
		qs := make([]schema.Quarantine, j-i)
		for k := i; k < j; k++ {
			q := quar[k].q
			qs[k-i] = *q
			if p.kafka == nil {
				p.cfg.Metrics.Quarantined(q.Reason, 1)
			}
			p.cfg.Log.Warn().Str("source", q.Source).Int64("line", q.Line).Str("reason", q.Reason).
				Str("detail", q.Detail).Msg("record quarantined")
		}
		if err := p.sink.WriteQuarantine(ctx, quar[i].in, qs); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (p *run) count(e *schema.Exchange) {
	if p.kafka == nil {
		p.cfg.Metrics.ExchangesOut(e.Outcome, 1) // the Kafka sink counts what it writes (a replay's known rows are not)
	}
	p.sum.ByOutcome[e.Outcome]++
	if falseSuccess(e) {
		p.sum.FalseSuccess++
	}
	if e.SuspectHiddenError {
		p.sum.SuspectHidden++
	}
	if e.SessionStuck {
		p.sum.SessionStuck++
	}
	if e.DuplicateSideEffect {
		p.sum.DuplicateSideEffects++
	}
	if e.ResumeProblem != nil {
		p.sum.ResumeProblems++
	}
	if e.IDConflict {
		p.sum.IDConflicts++
	}
	p.sum.Exchanges++
}

// redactRows redacts rows on up to workers goroutines, in place.
func redactRows(rows []schema.Exchange, rd *redact.Redactor, workers int) {
	if len(rows) < 256 || workers <= 1 {
		w := rd.Worker()
		for i := range rows {
			redactInPlace(&rows[i], w)
		}
		w.Release()
		return
	}
	var wg sync.WaitGroup
	per := (len(rows) + workers - 1) / workers
	for start := 0; start < len(rows); start += per {
		part := rows[start:min(start+per, len(rows))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := rd.Worker()
			defer w.Release()
			for i := range part {
				redactInPlace(&part[i], w)
			}
		}()
	}
	wg.Wait()
}

// ledger fills the summary's account of each input.
func (p *run) ledger() {
	for _, in := range p.inputs {
		switch {
		case !in.Opened.Load():
			p.sum.NotRead = append(p.sum.NotRead, in.Name)
		case !in.Finished.Load():
			what := "published"
			if p.kept[in] {
				what = "not published: the earlier complete run's rows were kept"
			}
			p.sum.Partial = append(p.sum.Partial, fmt.Sprintf("%s (durable up to record %d, %s)", in.Name, in.Ckpt.Committable(), what))
		}
	}
}

func (c *Config) defaults() error {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 16 << 20
	}
	if c.RowGroupRows <= 0 {
		c.RowGroupRows = 65536
	}
	if c.Pseudonyms == nil {
		c.Pseudonyms = redact.RandomPseudonymizer()
	}
	if c.Policy == nil {
		c.Policy = redact.DefaultPolicy()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxDocumentBytes <= 0 {
		c.MaxDocumentBytes = decode.DefaultMaxDocument
	}
	if c.MaxOpenConversations == 0 {
		c.MaxOpenConversations = DefaultMaxOpenConversations
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = time.Second
	}
	if c.CommitInterval <= 0 {
		c.CommitInterval = 30 * time.Second
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = time.Second
	}
	if c.newSink == nil {
		c.newSink = openDataset
	}
	if c.Format != "" {
		if _, ok := decode.DecoderFor(decode.Format(c.Format)); !ok {
			return fmt.Errorf("unknown format %q: use one of %v", c.Format, decode.Formats())
		}
	}
	return nil
}

// skipReasons lists skip reasons with their counts, for a message.
func skipReasons(skipped []input.Skipped) string {
	n := map[string]int{}
	var order []string
	for _, s := range skipped {
		if n[s.Reason] == 0 {
			order = append(order, s.Reason)
		}
		n[s.Reason]++
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%s %d", r, n[r]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
