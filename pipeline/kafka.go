package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/correlate"
	"mcptrace/kafkasrc"
	"mcptrace/metrics"
	"mcptrace/objstore"
	"mcptrace/redact"
	"mcptrace/schema"
)

// KafkaOptions configure RunKafka.
type KafkaOptions struct {
	Consumer kafkasrc.Config
	// UntilCaughtUp ends the run once every partition the member owns has
	// been read to the end offset it saw when the partition was first
	// assigned: what is open then is finished like a file's end, written,
	// committed, and RunKafka returns.
	UntilCaughtUp bool
	// MergeWindow is how long, in event time, a row waits for the other
	// side's view (0: 5 minutes). Co-partitioned client and server topics
	// arrive side by side, so the window needs to cover their clocks' skew
	// and lateness only.
	MergeWindow time.Duration
	// MaxHold bounds, in event time, how long an open conversation may
	// hold its partition's commit back (0: DefaultMaxHold; negative: no
	// bound): past it the conversation is closed, its rows are written
	// with hold_cut set, and the commit moves on.
	MaxHold time.Duration
	// Status, when set, is kept up to date for a readiness probe.
	Status *KafkaStatus
	// Store, when set, is where the dataset is published (an S3 bucket and
	// prefix); Config.OutDir is then the consumer's local working copy.
	Store *objstore.Store
}

// KafkaStatus is where a consumer stands, for /readyz.
type KafkaStatus struct {
	assigned atomic.Int64
	joined   atomic.Bool
}

// Ready is nil when the member is in the group with partitions to read.
func (s *KafkaStatus) Ready() error {
	switch {
	case !s.joined.Load():
		return errors.New("not yet a member of the consumer group")
	case s.assigned.Load() == 0:
		return errors.New("member of the group, but no partition is assigned to it")
	}
	return nil
}

// DefaultMaxHold is KafkaOptions.MaxHold's default.
const DefaultMaxHold = 15 * time.Minute

// DefaultKafkaMergeWindow is KafkaOptions.MergeWindow's default.
const DefaultKafkaMergeWindow = 5 * time.Minute

// RunKafka runs a member of a Kafka consumer group until cfg.Stop is
// closed, ctx ends, or (UntilCaughtUp) the member has caught up. Each
// generation of the group (an assignment of partitions, until the next
// rebalance) is one run of the engine over the owned partitions, read from
// where the dataset is durable: on revocation and on a stop, what is
// complete is written and committed and what conversations still hold is
// dropped, for the next owner to replay. The summary adds up every
// generation.
func RunKafka(ctx context.Context, cfg Config, ko KafkaOptions) (*Summary, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.OutDir == "" {
		return nil, errors.New("kafka: -out is needed")
	}
	switch cfg.Merge {
	case "on", "off", "", "auto":
	default:
		return nil, fmt.Errorf("merge mode %q: use auto, on or off", cfg.Merge)
	}
	switch {
	case ko.MaxHold == 0:
		cfg.MaxHold = DefaultMaxHold
	case ko.MaxHold > 0:
		cfg.MaxHold = ko.MaxHold
	}
	cfg.lowWaterByInput = true
	cons := ko.Consumer
	cons.Log = cfg.Log
	k := &kafkaRun{cfg: &cfg, ko: ko, ledger: newKafkaLedger(ko.Consumer.Group, start)}
	k.sum = &Summary{ByFormat: map[string]int{}, Skipped: map[string]int64{}, ByReason: map[string]int64{},
		ByOutcome: map[string]int64{}, SkippedEntries: map[string]int64{}, OpenLimit: max(cfg.MaxOpenConversations, 0)}
	k.sum.Merging = cfg.Merge == "on" || (cfg.Merge == "" || cfg.Merge == "auto") && len(cons.Topics) > 1
	cons.OnDrop = func(tp kafkasrc.TopicPartition) {
		k.redelivered.Add(1)
		cfg.Metrics.DuplicatesDropped(metrics.DupRedelivered, 1)
	}
	c, err := kafkasrc.New(cons)
	if err != nil {
		return nil, err
	}
	k.rd = &redact.Redactor{Policy: cfg.Policy, Pseud: cfg.Pseudonyms, Stats: &redact.Stats{}}
	// Waiting for a generation ends on a stop.
	nextCtx, cancelNext := context.WithCancel(ctx)
	var watch sync.WaitGroup
	defer watch.Wait()
	defer cancelNext()
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-cfg.Stop:
			cancelNext()
		case <-nextCtx.Done():
		}
	}()
	var runErr error
	for runErr == nil && !stopped(cfg.Stop) && ctx.Err() == nil {
		gen, err := c.Next(nextCtx)
		if err != nil {
			if nextCtx.Err() != nil {
				break
			}
			cfg.Log.Warn().Err(err).Msg("kafka: cannot join the consumer group yet; retrying")
			continue
		}
		k.sum.Rebalances++
		cfg.Metrics.Rebalance()
		var done bool
		done, runErr = k.generation(ctx, gen)
		if done && runErr == nil && ko.UntilCaughtUp && !stopped(cfg.Stop) && ctx.Err() == nil {
			// Caught up on what this member owns. A member that died
			// without leaving still holds its partitions until the group
			// evicts it: a session timeout, or, when a rebalance is under
			// way (this member's own join starts one), the rebalance
			// timeout, within which every member must rejoin. Unless the
			// whole group has caught up, wait that long for a rebalance
			// that hands them over.
			settle := ko.Consumer.SessionTimeout
			if settle <= 0 {
				settle = 30 * time.Second // kafka-go's default
			}
			rebalance := ko.Consumer.RebalanceTimeout
			if rebalance <= 0 {
				rebalance = 30 * time.Second // kafka-go's default
			}
			deadline := time.Now().Add(max(settle+settle/2, rebalance+settle))
			warned := false
			for {
				all, err := c.GroupCaughtUp(ctx)
				if err != nil && !warned {
					warned = true
					cfg.Log.Warn().Err(err).Msg("kafka: cannot tell whether the group has caught up; waiting a session timeout")
				}
				if !all && time.Now().After(deadline) {
					cfg.Log.Warn().Msg("kafka: the group has not caught up: partitions are still held by members that neither read nor left; ending with what this member owns")
				}
				if all || time.Now().After(deadline) {
					break
				}
				t := time.NewTimer(250 * time.Millisecond)
				select {
				case <-gen.Done():
					done = false // a rebalance: catch up on the new assignment
				case <-t.C:
				case <-cfg.Stop:
				case <-ctx.Done():
				}
				t.Stop()
				if !done || stopped(cfg.Stop) || ctx.Err() != nil {
					break
				}
			}
		}
		gen.End()
		if done {
			break
		}
	}
	closeErr := c.Close()
	k.sum.Redactions = k.rd.Stats.Counts()
	k.sum.Elapsed = time.Since(start)
	k.sum.Redelivered = k.redelivered.Load()
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	// What this process committed, for its last log line (each
	// partition's own ledger is in the dataset).
	k.sum.Ledger = k.ledger.ledger(time.Now(), ko.UntilCaughtUp && k.caughtUp && runErr == nil)
	k.sum.Ledger.Limits = ledgerLimits(&cfg, k.sum.Correlation.Evicted)
	if runErr == nil && closeErr != nil {
		cfg.Log.Warn().Err(closeErr).Msg("kafka: leaving the consumer group")
	}
	return k.sum, runErr
}

// kafkaRun is a consumer's state across generations.
type kafkaRun struct {
	cfg         *Config
	ko          KafkaOptions
	sum         *Summary
	ledger      *kafkaLedger // the process's own (kafkaledger.go)
	caughtUp    bool         // the last generation ended caught up, everything committed
	rd          *redact.Redactor
	redelivered atomic.Int64
}

// generation runs the engine over one generation's partitions. done says
// the consumer is to end (caught up, or stopped).
func (k *kafkaRun) generation(ctx context.Context, gen *kafkasrc.Generation) (done bool, err error) {
	cfg := k.cfg
	log := cfg.Log.With().Int32("generation", gen.ID).Logger()
	if len(gen.Assigned) == 0 {
		if k.ko.UntilCaughtUp {
			// More members than partitions: this one has nothing to catch up on.
			log.Info().Msg("kafka: no partition assigned to this member: nothing to catch up on")
			k.caughtUp = true
			return true, nil
		}
		log.Info().Msg("kafka: no partition assigned to this member; waiting for a rebalance")
		select {
		case <-gen.Done():
			return false, nil
		case <-cfg.Stop:
			return true, nil
		case <-ctx.Done():
			return true, nil
		}
	}
	// Work on the partitions ends when the generation does, or on a stop.
	gctx, cancel := context.WithCancel(ctx)
	var gwatch sync.WaitGroup
	defer gwatch.Wait()
	defer cancel()
	gwatch.Add(1)
	go func() {
		defer gwatch.Done()
		select {
		case <-gen.Done():
		case <-cfg.Stop:
		case <-gctx.Done():
		}
		cancel()
	}()
	tps := make([]kafkasrc.TopicPartition, len(gen.Assigned))
	inputs := make([]*Input, len(gen.Assigned))
	byName := map[string]*Input{}
	var names []string
	for i, a := range gen.Assigned {
		tps[i] = a.TopicPartition
		id := KafkaInputID(a.TopicPartition)
		in := &Input{Name: id, ID: id, Stream: true, Format: cfg.Format}
		in.Opened.Store(true)
		inputs[i] = in
		byName[id] = in
		names = append(names, id)
	}
	log.Info().Strs("partitions", names).Msg("kafka: partitions assigned")
	// A broker or store briefly unavailable (right after a restart) is
	// waited out while the generation lasts.
	var sink *kafkaSink
	err = retrying(gctx, log, "opening the dataset's parts", func() error {
		var err error
		sink, err = openKafkaSink(gctx, cfg, k.sum, inputs, tps, k.ko.Store, k.ledger)
		return err
	})
	if err != nil {
		if gctx.Err() != nil {
			return stopped(cfg.Stop), nil // revoked (or stopped) while an earlier owner still held a partition
		}
		return false, err
	}
	starts := map[kafkasrc.TopicPartition]int64{}
	for i, a := range gen.Assigned {
		from := a.Committed
		if pos := sink.scopes[i].position; pos > from {
			from = pos // the dataset is durable past the group's commit (a crash between the two)
		}
		if from >= 0 {
			starts[a.TopicPartition] = from
		}
	}
	// Where the dataset is durable past the group's commit, the group
	// learns it now (nothing may be read again to move it there).
	recovered := map[kafkasrc.TopicPartition]int64{}
	for i, a := range gen.Assigned {
		if pos := sink.scopes[i].position; pos > 0 && pos > a.Committed {
			recovered[a.TopicPartition] = pos
		}
	}
	if err := gen.Commit(recovered); err != nil {
		k.sum.CommitErrors++
		log.Warn().Err(err).Msg("kafka: committing the offsets the dataset is durable to failed; retried at the next commit")
	}
	var parts []kafkasrc.Partition
	err = retrying(gctx, log, "reading the partitions' offsets", func() error {
		var err error
		parts, err = gen.Start(gctx, starts)
		return err
	})
	if err != nil {
		sink.Abort()
		if gctx.Err() != nil {
			return stopped(cfg.Stop), nil
		}
		return false, err
	}
	defer func() { cancel(); gen.StopReading() }()
	ks := &kafkaState{gen: gen, sink: sink, parts: map[*Input]kafkasrc.TopicPartition{}, done: map[*Input]*replayDone{}, m: cfg.Metrics,
		latest: map[*Input]time.Time{}, processed: map[*Input]int64{}, partOf: map[*Input]*kafkaPart{}}
	src := &kafkaSource{cfg: cfg, gen: gen, parts: map[kafkasrc.TopicPartition]*kafkaPart{}, stats: nil,
		untilCaughtUp: k.ko.UntilCaughtUp, revoked: gen.Done()}
	for i, p := range parts {
		in := inputs[i]
		kp := &kafkaPart{in: in, tp: p.TopicPartition, end: p.End, next: p.Start}
		kp.read.Store(p.Start)
		kp.hw.Store(p.End)
		src.parts[p.TopicPartition] = kp
		ks.partOf[in] = kp
		ks.processed[in] = p.Start // positions are offset+1: everything before Start is done
		ks.parts[in] = p.TopicPartition
		ks.done[in] = sink.scopes[i].replay
		log.Debug().Str("partition", p.String()).Int64("from", p.Start).Int64("end", p.End).Msg("kafka: reading")
	}
	src.onDrop = func(*kafkaPart) {
		k.redelivered.Add(1)
		cfg.Metrics.DuplicatesDropped(metrics.DupRedelivered, 1)
	}
	pm := map[*kafkaPart]*metrics.Partition{}
	for _, p := range src.parts {
		pm[p] = cfg.Metrics.Partition(p.tp.Topic, p.tp.Partition)
	}
	src.onMessage = func(p *kafkaPart, m *kafkasrc.Message) { pm[p].Message(m.Offset, m.HighWater, len(m.Value)) }
	ks.metrics = pm
	cfg.Metrics.SetAssignedPartitions(len(parts))
	if st := k.ko.Status; st != nil {
		st.joined.Store(true)
		st.assigned.Store(int64(len(parts)))
		defer st.assigned.Store(0)
	}
	defer func() {
		for _, p := range src.parts {
			cfg.Metrics.RevokePartition(p.tp.Topic, p.tp.Partition)
		}
		cfg.Metrics.SetAssignedPartitions(0)
	}()
	ks.src = src
	window := k.ko.MergeWindow
	if window <= 0 {
		window = DefaultKafkaMergeWindow
	}
	p := &run{cfg: cfg, rd: k.rd, sum: k.sum, sink: sink, inputs: inputs, byName: byName, merging: k.sum.Merging,
		runTime: cfg.Now().UTC(), kept: map[*Input]bool{}, src: src, streamWindow: window, kafka: ks,
		keepOpen: func() bool { return !src.caughtUp.Load() }}
	src.stats = &p.counts
	p.afterCommit = func(ctx context.Context) error { ks.commitOffsets(log, k.sum); return nil }
	// The partitions' ledgers count, at each commit, the units it makes durable.
	sink.unitCounts, sink.gen, sink.caughtUp = p.acks.countsUpTo, gen.ID, src.caughtUp.Load
	k.sum.Files = append(k.sum.Files, names...)
	// The engine runs on ctx, not gctx: a revocation or a stop ends the
	// source (it watches both), and what is complete drains, is written
	// and committed; only ctx abandons the run.
	// A revoked member that drains for longer than the group waits would
	// be evicted and keep writing beside the new owner: past half the
	// rebalance timeout the drain is abandoned (nothing more is published;
	// the new owner replays).
	ectx, abandon := context.WithCancel(ctx)
	defer abandon()
	drained := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-gen.Done():
		case <-drained:
			return
		}
		limit := k.ko.Consumer.RebalanceTimeout
		if limit <= 0 {
			limit = 30 * time.Second // kafka-go's default
		}
		t := time.NewTimer(limit / 2)
		defer t.Stop()
		select {
		case <-t.C:
			log.Warn().Dur("after", limit/2).Msg("kafka: the drain after a revocation took too long; abandoned, the new owner replays it")
			abandon()
		case <-drained:
		}
	}()
	err = p.execute(ectx)
	close(drained)
	watch.Wait()
	if errors.Is(err, ErrStopped) || errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = nil // a stop, or a drain abandoned: what was committed stands
	}
	behind := func(warn bool) int {
		n := 0
		for i, a := range gen.Assigned {
			durable := max(inputs[i].Ckpt.Committable(), sink.durable(inputs[i]))
			if durable > 0 && gen.Committed(a.TopicPartition) < durable {
				n++
				if warn {
					log.Warn().Str("partition", a.String()).Int64("durable", durable).Int64("committed", gen.Committed(a.TopicPartition)).
						Msg("kafka: rows durable past the committed offset")
				}
			}
		}
		return n
	}
	// Once more: a commit that failed is retried, a few times while the
	// generation lasts (a broker that refuses every commit must not keep a
	// caught-up member waiting for a rebalance that never comes).
	for try := 0; ; try++ {
		ks.commitOffsets(log, k.sum)
		if behind(false) == 0 || try == commitRetries || stopped(cfg.Stop) || genEnded(gen) {
			break
		}
		select {
		case <-time.After(commitRetryWait):
		case <-gen.Done():
		case <-ctx.Done():
		}
	}
	uncommitted := behind(true)
	k.sum.Uncommitted = uncommitted
	k.caughtUp = err == nil && src.caughtUp.Load() && uncommitted == 0
	if err != nil {
		return true, err
	}
	if stopped(cfg.Stop) {
		return true, nil
	}
	// Caught up, but a commit was refused because the generation ended
	// during it: the next generation commits what is durable. Refused in a
	// generation that goes on, the member ends (ingest exits 4).
	return src.caughtUp.Load() && (uncommitted == 0 || !genEnded(gen)), nil
}

// commitRetries and commitRetryWait bound the final commit's retries.
const (
	commitRetries   = 3
	commitRetryWait = 500 * time.Millisecond
)

// genEnded says whether a generation has ended (a rebalance).
func genEnded(gen *kafkasrc.Generation) bool {
	select {
	case <-gen.Done():
		return true
	default:
		return false
	}
}

// retryFor bounds retrying: an error that lasts longer is not transient.
const retryFor = 2 * time.Minute

// retrying runs fn until it succeeds, ctx ends or retryFor has passed, backing off between
// tries (errors that may pass: a broker restarting, a store briefly
// refusing). Errors that cannot pass still end the generation's work when
// ctx ends (a revocation or a stop).
func retrying(ctx context.Context, log zerolog.Logger, what string, fn func() error) error {
	wait := 200 * time.Millisecond
	giveUp := time.Now().Add(retryFor)
	for {
		err := fn()
		if err == nil || ctx.Err() != nil || time.Now().After(giveUp) {
			return err
		}
		log.Warn().Err(err).Dur("retry_in", wait).Msg("kafka: " + what + " failed; retrying")
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(wait*2, 10*time.Second)
	}
}

// kafkaState is the Kafka side of one engine run: the generation whose
// offsets it commits and what a replay skips.
type kafkaState struct {
	gen   *kafkasrc.Generation
	sink  *kafkaSink
	parts map[*Input]kafkasrc.TopicPartition
	// done: per input, the conversations already written whose records a
	// replay meets again (read by the sequencer only).
	done    map[*Input]*replayDone
	ended   []*correlate.ConvEnd // closed conversations not yet below a commit's bound
	src     *kafkaSource
	metrics map[*kafkaPart]*metrics.Partition
	m       *metrics.Metrics
	// Per input, for the merge clock (the sequencer's): the newest event
	// time and the position processed.
	latest    map[*Input]time.Time
	processed map[*Input]int64
	partOf    map[*Input]*kafkaPart
}

// observed notes a part of a unit the sequencer has processed.
func (ks *kafkaState) observed(in *Input, obs []*schema.Observation, last int64) {
	t := ks.latest[in]
	for _, o := range obs {
		if ot := o.EndOrStart(); ot.After(t) {
			t = ot
		}
	}
	ks.latest[in] = t
	ks.processed[in] = max(ks.processed[in], last)
}

// mergeNow is the oldest newest-event-time of the partitions that still
// have records to come (read behind their high watermark); zero when none
// has (all caught up: the Merger follows the run's clock). Then every
// partition's logs stand where they are (Clock.Stand, before the round's
// Mark): a partition read to its end after another ran ahead in event
// time (a backlog replayed partition by partition) would otherwise hold
// the rows the Merger waits for (a server's rows wait for a same-id
// repeat) while the rows they pair with are already due, and both would
// be written single-sided.
func (ks *kafkaState) mergeNow(clock *correlate.Clock) time.Time {
	now := ks.behindNow()
	if now.IsZero() {
		clock.Stand(nil)
	}
	return now
}

// behindNow is mergeNow's time, without moving the clock.
func (ks *kafkaState) behindNow() time.Time {
	var now time.Time
	var behind bool
	for in, p := range ks.partOf {
		hw := p.hw.Load()
		if hw == 0 && p.read.Load() == 0 {
			continue // nothing in it, nothing seen yet
		}
		if ks.processed[in] >= hw {
			continue // caught up: its next records are new
		}
		t := ks.latest[in]
		if !behind || t.Before(now) {
			now, behind = t, true
		}
	}
	if behind && now.IsZero() {
		return time.Unix(0, 1) // a partition with records to come but none seen yet: hold
	}
	return now
}

// commitOffsets commits every partition's committable offset with the
// generation (a failure is logged and retried at the next commit; the
// broker refuses a commit of an old generation).
func (ks *kafkaState) commitOffsets(log zerolog.Logger, sum *Summary) {
	offsets := map[kafkasrc.TopicPartition]int64{}
	for in, tp := range ks.parts {
		if c := max(in.Ckpt.Committable(), ks.sink.durable(in)); c > 0 {
			offsets[tp] = c // positions are offset+1: the next offset to read
		}
	}
	err := ks.gen.Commit(offsets)
	ks.m.Commit(metrics.CommitKafka, err)
	if err != nil {
		sum.CommitErrors++
		log.Warn().Err(err).Msg("kafka: committing offsets failed; the rows are durable, and a replay of what was not committed writes nothing twice")
	}
	if ks.src == nil {
		return
	}
	// Records read whose offsets are not committed (their rows are not
	// all durable yet, or the commit failed).
	uncommitted := int64(0)
	for _, p := range ks.src.parts {
		c := ks.gen.Committed(p.tp)
		if c >= 0 {
			ks.metrics[p].SetCommitted(c)
		}
		uncommitted += max(p.read.Load()-max(c, 0), 0)
	}
	ks.m.SetUncommitted(int(uncommitted))
}

// convEnded notes a closed conversation (the writer sees every one).
func (ks *kafkaState) convEnded(e *correlate.ConvEnd) { ks.ended = append(ks.ended, e) }

// beforeCommit files, for a commit at bound, the closed conversations that
// started below it: their rows are all written (open state holds nothing
// below the bound), so their records past the committed position are
// used up and a replay skips them. Conversations that started at or past
// the bound are replayed whole, and their rows are known by key.
func (ks *kafkaState) beforeCommit(boundOf func(*Input) int64) {
	keep := ks.ended[:0]
	for _, e := range ks.ended {
		pending := false
		h := convHash(e.Key)
		for _, pos := range e.Last {
			sc := ks.sink.byID[pos.ID]
			if sc == nil {
				continue
			}
			if e.First >= boundOf(sc.in) {
				pending = true // its records past the bound are replayed with it
				continue
			}
			k := "c:" + h
			if pos.Line > sc.keys[k] {
				sc.keys[k] = pos.Line
			}
		}
		if pending {
			keep = append(keep, e)
		}
	}
	clear(ks.ended[len(keep):])
	ks.ended = keep
}

// convHash names a conversation in a scope's keys.
func convHash(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return strconv.FormatUint(h.Sum64(), 16)
}

// replayDone is what a replay of one partition skips: the conversations
// already written, with the last offset each used.
type replayDone struct {
	convs   map[string]int64
	maxLine int64
}

// used reports that an observation belongs to a conversation whose rows
// are already in the dataset.
func (r *replayDone) used(o *schema.Observation) bool {
	if r == nil || o.Pos.Line > r.maxLine {
		return false
	}
	last, ok := r.convs[convHash(correlate.ConversationKey(o))]
	return ok && o.Pos.Line <= last
}

func sortParts(ps []*kafkaPart) {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i].tp, ps[j].tp
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
}

// dropUsed removes, from a replayed part, the observations of conversations
// whose rows are already written; each counts as skipped
// ("already_written"), and still moves the event clock.
func (ks *kafkaState) dropUsed(in *Input, obs []*schema.Observation, sum *Summary, clock *correlate.Clock) []*schema.Observation {
	r := ks.done[in]
	if r == nil {
		return obs
	}
	keep := obs[:0]
	for _, o := range obs {
		if r.used(o) {
			sum.Skipped["already_written"]++
			o.Pos.ID = in.ID
			clock.Stamp(o)
			continue
		}
		keep = append(keep, o)
	}
	if len(obs) > 0 && obs[len(obs)-1].Pos.Line > r.maxLine {
		ks.done[in] = nil // past every used record: nothing more to skip
	}
	return keep
}
