package kafkasrc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/segmentio/kafka-go"
)

// Config configures a Consumer.
type Config struct {
	Brokers []string
	Topics  []string
	Group   string
	Dialer  *kafka.Dialer // nil: kafka.DefaultDialer (no TLS, no SASL)
	// Transport, for requests outside the group protocol (the group's
	// offsets): nil is kafka.DefaultTransport; give it the Dialer's TLS
	// and SASL settings.
	Transport *kafka.Transport
	// SessionTimeout, HeartbeatInterval and RebalanceTimeout are the group
	// membership timings (kafka-go's defaults, 30 s, 3 s and 30 s, when 0).
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	RebalanceTimeout  time.Duration
	// MaxBytes caps one fetch response per partition (0: 1 MiB); MaxWait is
	// how long a fetch waits for new messages (0: 500 ms).
	MaxBytes int
	MaxWait  time.Duration
	// Buffer is how many messages the generation's channel holds (0: 1,024):
	// with the pipeline's own bound, what is read ahead of the pipeline.
	Buffer int
	// Stall restarts a partition's reader that has made no progress this
	// long although the broker reported more messages (0: 30 s): kafka-go
	// readers have stalled after broker restarts (#955, #847, #387).
	Stall time.Duration
	Log   zerolog.Logger
	// OnDrop, when set, is called for each message dropped because it lies
	// below the position its partition is read from (a redelivery, #1398).
	OnDrop func(TopicPartition)
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Message is one Kafka record of an owned partition.
type Message struct {
	TopicPartition
	Offset    int64
	HighWater int64 // the partition's high watermark when the message was fetched
	Key       []byte
	Value     []byte
	Time      time.Time
	// Control marks a transaction marker (a commit or abort control
	// record): no data, but an offset. kafka-go hands them over as
	// messages; they are recognised by their key (version 0, type 0 or 1)
	// and value (version 0, coordinator epoch).
	Control bool
}

// isControl recognises a transaction marker's key and value.
func isControl(key, value []byte) bool {
	return len(key) == 4 && key[0] == 0 && key[1] == 0 && key[2] == 0 && key[3] <= 1 &&
		len(value) == 6 && value[0] == 0 && value[1] == 0
}

// Lag is how many messages of its partition follow this one.
func (m *Message) Lag() int64 { return max(m.HighWater-m.Offset-1, 0) }

// Consumer is one member of a consumer group. Next returns each
// generation's assignment in turn.
type Consumer struct {
	cfg Config
	cg  *kafka.ConsumerGroup

	mu   sync.Mutex
	ends map[TopicPartition]int64 // end offset when the partition was first assigned to this member
}

// New joins the consumer group (in the background: Next returns the first
// generation once the group has assigned partitions).
func New(cfg Config) (*Consumer, error) {
	if len(cfg.Brokers) == 0 || len(cfg.Topics) == 0 || cfg.Group == "" {
		return nil, errors.New("kafka: -kafka-brokers, -kafka-topic and -kafka-group are all needed")
	}
	if cfg.Dialer == nil {
		cfg.Dialer = kafka.DefaultDialer
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 20
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 500 * time.Millisecond
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 1024
	}
	if cfg.Stall <= 0 {
		cfg.Stall = 30 * time.Second
	}
	gcfg := kafka.ConsumerGroupConfig{
		ID:                cfg.Group,
		Brokers:           cfg.Brokers,
		Dialer:            cfg.Dialer,
		Topics:            cfg.Topics,
		SessionTimeout:    cfg.SessionTimeout,
		HeartbeatInterval: cfg.HeartbeatInterval,
		RebalanceTimeout:  cfg.RebalanceTimeout,
		// Range alone: partition n of every topic goes to the same member
		// (co-partitioned client and server topics meet in one consumer).
		GroupBalancers:   []kafka.GroupBalancer{kafka.RangeGroupBalancer{}},
		StartOffset:      kafka.FirstOffset,
		JoinGroupBackoff: time.Second,
		ErrorLogger:      kafka.LoggerFunc(func(f string, a ...any) { cfg.Log.Debug().Msgf("kafka-go: "+f, a...) }),
	}
	cg, err := kafka.NewConsumerGroup(gcfg)
	if err != nil {
		return nil, fmt.Errorf("kafka: joining group %s: %w", cfg.Group, err)
	}
	return &Consumer{cfg: cfg, cg: cg, ends: map[TopicPartition]int64{}}, nil
}

// Next waits for the member's next generation. Errors joining the group
// (a broker down, say) are returned; the caller logs them and calls Next
// again: the group keeps trying to join.
func (c *Consumer) Next(ctx context.Context) (*Generation, error) {
	gen, err := c.cg.Next(ctx)
	if err != nil {
		return nil, err
	}
	g := &Generation{c: c, gen: gen, ID: gen.ID, release: make(chan struct{}), started: make(chan struct{}),
		committed: map[TopicPartition]int64{}}
	for topic, parts := range gen.Assignments {
		for _, p := range parts {
			tp := TopicPartition{topic, p.ID}
			g.Assigned = append(g.Assigned, Assignment{TopicPartition: tp, Committed: p.Offset})
			if p.Offset >= 0 {
				g.committed[tp] = p.Offset
			}
		}
	}
	sort.Slice(g.Assigned, func(i, j int) bool {
		a, b := g.Assigned[i], g.Assigned[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	// The holder keeps the generation from ending (kafka-go waits for every
	// function Start launched) until the caller has made durable what it
	// could and committed it: the commit still carries this generation.
	gen.Start(func(ctx context.Context) {
		<-ctx.Done()
		<-g.release
	})
	g.done = genDone{gen}.done()
	return g, nil
}

// Close leaves the group. Call it after the last generation's End.
func (c *Consumer) Close() error { return c.cg.Close() }

// endOffset is the partition's end offset when it was first assigned to
// this member (queried then).
func (c *Consumer) endOffset(ctx context.Context, tp TopicPartition) (int64, error) {
	c.mu.Lock()
	end, ok := c.ends[tp]
	c.mu.Unlock()
	if ok {
		return end, nil
	}
	first, last, err := c.bounds(ctx, tp)
	if err != nil {
		return 0, err
	}
	_ = first
	c.mu.Lock()
	c.ends[tp] = last
	c.mu.Unlock()
	return last, nil
}

// bounds queries a partition's first and end offsets from its leader.
func (c *Consumer) bounds(ctx context.Context, tp TopicPartition) (first, last int64, err error) {
	var lastErr error
	for _, b := range c.cfg.Brokers {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := c.cfg.Dialer.DialLeader(dctx, "tcp", b, tp.Topic, tp.Partition)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		first, last, err = conn.ReadOffsets()
		conn.Close()
		if err == nil {
			return first, last, nil
		}
		lastErr = err
	}
	return 0, 0, fmt.Errorf("kafka: reading the offsets of %s: %w", tp, lastErr)
}

// Assignment is one partition of a generation and the offset the group
// had committed for it (negative: none).
type Assignment struct {
	TopicPartition
	Committed int64
}

// Partition is an owned partition being read: where reading started and
// the end offset the member saw when the partition was first assigned.
type Partition struct {
	TopicPartition
	Start int64
	End   int64
}

// Generation is one assignment of partitions to this member, from a join
// of the group to the next rebalance.
type Generation struct {
	ID       int32
	Assigned []Assignment

	c       *Consumer
	gen     *kafka.Generation
	release chan struct{}
	relOnce sync.Once
	started chan struct{}
	done    <-chan struct{}

	msgs  chan Message
	wg    sync.WaitGroup
	parts []Partition

	mu        sync.Mutex
	committed map[TopicPartition]int64
}

// Done is closed when the generation ends: a rebalance revoked the
// assignment, the member lost the group (a broker down), or the group
// was closed.
func (g *Generation) Done() <-chan struct{} { return g.done }

type genDone struct{ g *kafka.Generation }

// done reaches the generation's context through a function Start runs at
// once (kafka-go keeps the channel private).
func (d genDone) done() <-chan struct{} {
	ch := make(chan chan struct{}, 1)
	d.g.Start(func(ctx context.Context) {
		done := make(chan struct{})
		ch <- done
		<-ctx.Done()
		close(done)
	})
	return <-ch
}

// Start reads the assigned partitions, each from start[tp] (the position
// the caller's dataset is durable to, or the group's committed offset,
// whichever is later; kafka.FirstOffset when neither is known), into
// Messages. Messages below a partition's position are dropped (a
// redelivery). The readers stop when the generation ends or ctx ends;
// Stop joins them.
func (g *Generation) Start(ctx context.Context, start map[TopicPartition]int64) ([]Partition, error) {
	g.msgs = make(chan Message, g.c.cfg.Buffer)
	for _, a := range g.Assigned {
		end, err := g.c.endOffset(ctx, a.TopicPartition)
		if err != nil {
			return nil, err
		}
		from, ok := start[a.TopicPartition]
		if !ok || from < 0 {
			first, _, err := g.c.bounds(ctx, a.TopicPartition)
			if err != nil {
				return nil, err
			}
			from = first
		}
		g.parts = append(g.parts, Partition{TopicPartition: a.TopicPartition, Start: from, End: end})
	}
	done := g.Done()
	for _, p := range g.parts {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.read(ctx, done, p)
		}()
	}
	close(g.started)
	return g.parts, nil
}

// Messages delivers the owned partitions' messages, each partition's in
// offset order.
func (g *Generation) Messages() <-chan Message { return g.msgs }

// read fetches one partition from p.Start until the generation or ctx
// ends, restarting its reader after an error or a stall.
func (g *Generation) read(ctx context.Context, done <-chan struct{}, p Partition) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-done:
			cancel()
		case <-rctx.Done():
		}
	}()
	log := g.c.cfg.Log.With().Str("partition", p.String()).Logger()
	next := p.Start
	backoff := 100 * time.Millisecond
	for rctx.Err() == nil {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:   g.c.cfg.Brokers,
			Topic:     p.Topic,
			Partition: p.Partition,
			Dialer:    g.c.cfg.Dialer,
			// Records of open transactions wait until they are decided.
			// (kafka-go does not filter aborted records out: see README.)
			IsolationLevel: kafka.ReadCommitted,
			MinBytes:       1,
			MaxBytes:       g.c.cfg.MaxBytes,
			MaxWait:        g.c.cfg.MaxWait,
			// Errors are retried here, with a fresh reader.
			MaxAttempts:    1,
			ReadBackoffMin: 50 * time.Millisecond,
			ReadBackoffMax: time.Second,
			ErrorLogger:    kafka.LoggerFunc(func(f string, a ...any) { log.Debug().Msgf("kafka-go: "+f, a...) }),
		})
		if err := r.SetOffset(next); err != nil {
			r.Close()
			log.Warn().Err(err).Msg("kafka: cannot position the reader; retrying")
			sleep(rctx, backoff)
			continue
		}
		err := g.fetch(rctx, r, p, &next, log)
		r.Close()
		if rctx.Err() != nil {
			return
		}
		log.Warn().Err(err).Int64("offset", next).Msg("kafka: reading a partition failed; reconnecting")
		sleep(rctx, backoff)
		backoff = min(backoff*2, 5*time.Second)
	}
}

// fetch reads with one reader until an error, a stall, or the end of ctx.
func (g *Generation) fetch(ctx context.Context, r *kafka.Reader, p Partition, next *int64, log zerolog.Logger) error {
	var highWater int64 = -1
	for {
		fctx, cancel := context.WithTimeout(ctx, g.c.cfg.Stall)
		m, err := r.FetchMessage(fctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				if highWater > *next {
					return fmt.Errorf("no progress for %s although the broker has messages up to offset %d (a stalled reader)", g.c.cfg.Stall, highWater)
				}
				continue // quiet partition
			}
			return err
		}
		highWater = m.HighWaterMark
		if m.Offset < *next {
			if g.c.cfg.OnDrop != nil {
				g.c.cfg.OnDrop(p.TopicPartition)
			}
			continue // redelivered below the position (kafka-go #1398)
		}
		if m.Offset > *next && *next >= 0 {
			// Offsets not present: compaction and transaction markers leave
			// gaps; so does retention that removed records before they were
			// read (kafka-go then skips to the first offset, #365).
			log.Info().Int64("from", *next).Int64("to", m.Offset-1).
				Msg("kafka: offsets not in the partition (compacted, transaction markers, or deleted by retention before they were read)")
		}
		*next = m.Offset + 1
		msg := Message{TopicPartition: p.TopicPartition, Offset: m.Offset, HighWater: m.HighWaterMark, Key: m.Key, Value: m.Value, Time: m.Time,
			Control: isControl(m.Key, m.Value)}
		select {
		case g.msgs <- msg:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// StopReading stops the partition readers and joins them; Messages is not
// closed (a reader may have been blocked on it) but receives nothing more.
func (g *Generation) StopReading() {
	select {
	case <-g.started:
	default:
		return
	}
	// The readers' context is the caller's; the generation's end or the
	// caller's cancel stops them. Drain so none stays blocked on a send.
	stop := make(chan struct{})
	go func() { g.wg.Wait(); close(stop) }()
	for {
		select {
		case <-stop:
			return
		case <-g.msgs:
		}
	}
}

// Commit commits offsets (the next offset to read, per partition) with
// this generation's id: the broker refuses a commit of an old generation.
// An offset never moves backwards: one at or below the last committed is
// left out.
func (g *Generation) Commit(offsets map[TopicPartition]int64) error {
	g.mu.Lock()
	req := map[string]map[int]int64{}
	for tp, off := range offsets {
		if prev, ok := g.committed[tp]; ok && off <= prev {
			continue
		}
		if req[tp.Topic] == nil {
			req[tp.Topic] = map[int]int64{}
		}
		req[tp.Topic][tp.Partition] = off
	}
	g.mu.Unlock()
	if len(req) == 0 {
		return nil
	}
	if err := g.gen.CommitOffsets(req); err != nil {
		return fmt.Errorf("kafka: committing offsets of group %s generation %d: %w", g.c.cfg.Group, g.ID, err)
	}
	g.mu.Lock()
	for topic, parts := range req {
		for p, off := range parts {
			g.committed[TopicPartition{topic, p}] = off
		}
	}
	g.mu.Unlock()
	return nil
}

// Committed is the last offset committed for a partition in this
// generation or before it (-1: none).
func (g *Generation) Committed(tp TopicPartition) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if off, ok := g.committed[tp]; ok {
		return off
	}
	return -1
}

// End lets the generation finish (after the caller's last commit of it).
func (g *Generation) End() {
	g.relOnce.Do(func() { close(g.release) })
}

// GroupCaughtUp reports whether the group has committed, on every partition
// of its topics, at least the end offset this member saw when it first met
// the partition (queried now for partitions it never owned): the group as a
// whole has caught up. A member that caught up on its own partitions asks
// this before it exits, so that partitions of a member that died (still in
// the group until its session times out) are not left behind.
func (c *Consumer) GroupCaughtUp(ctx context.Context) (bool, error) {
	var tr kafka.RoundTripper = kafka.DefaultTransport
	if c.cfg.Transport != nil {
		tr = c.cfg.Transport
	}
	client := &kafka.Client{Addr: kafka.TCP(c.cfg.Brokers...), Transport: tr, Timeout: 10 * time.Second}
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: c.cfg.Topics})
	if err != nil {
		return false, fmt.Errorf("kafka: reading the topics' partitions: %w", err)
	}
	parts := map[string][]int{}
	for _, t := range meta.Topics {
		if t.Error != nil {
			return false, fmt.Errorf("kafka: topic %s: %w", t.Name, t.Error)
		}
		for _, p := range t.Partitions {
			parts[t.Name] = append(parts[t.Name], p.ID)
		}
	}
	committed, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: c.cfg.Group, Topics: parts})
	if err != nil {
		return false, fmt.Errorf("kafka: reading the group's offsets: %w", err)
	}
	if committed.Error != nil {
		return false, fmt.Errorf("kafka: reading the group's offsets: %w", committed.Error)
	}
	got := map[TopicPartition]int64{}
	for topic, ps := range committed.Topics {
		for _, p := range ps {
			got[TopicPartition{topic, p.Partition}] = p.CommittedOffset
		}
	}
	for topic, ps := range parts {
		for _, p := range ps {
			tp := TopicPartition{topic, p}
			end, err := c.endOffset(ctx, tp)
			if err != nil {
				return false, err
			}
			if end > 0 && got[tp] < end {
				return false, nil
			}
		}
	}
	return true, nil
}
