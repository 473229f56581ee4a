package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Values of the source_kind label of mcptrace_records_in_total and
// mcptrace_bytes_in_total.
const (
	KindKafka = "kafka"
	KindFile  = "file"
	KindStdin = "stdin"
)

// Values of the why label of mcptrace_duplicates_dropped_total.
const (
	// DupRedelivered: a Kafka record at an offset below the partition's
	// committed offset (a redelivery after a rebalance, kafka-go #1398).
	DupRedelivered = "redelivered"
	// DupAlreadyWritten: a row whose exchange_id the dataset already holds
	// (a replay of records whose rows were durable before the crash).
	DupAlreadyWritten = "already_written"
)

// Values of the kind label of mcptrace_commits_total and
// mcptrace_commit_errors_total.
const (
	CommitDataset = "dataset" // files published in the dataset (fsync and rename)
	CommitKafka   = "kafka"   // offsets committed to the consumer group
	CommitUpload  = "upload"  // objects uploaded to object storage
)

const namespace = "mcptrace"

// flushBuckets span 1 ms (a small local file) to 60 s (a large upload over a
// slow link); past 60 s a flush lands in +Inf.
var flushBuckets = []float64{
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60,
}

// Metrics holds mcptrace's collectors and the registry they are exported
// from. Make one with New; every method is safe for concurrent use, and every
// method of a nil *Metrics (and of the nil handles it returns) does nothing,
// so a run without -metrics-addr passes nil and needs no checks.
type Metrics struct {
	reg *prometheus.Registry

	mu    sync.Mutex // guards parts
	parts map[partKey]*Partition

	recordsIn     *prometheus.CounterVec // source_kind, topic, partition
	bytesIn       *prometheus.CounterVec // source_kind, topic, partition
	exchangesOut  *prometheus.CounterVec // outcome
	quarantined   *prometheus.CounterVec // reason
	duplicates    *prometheus.CounterVec // why
	openConvs     prometheus.Gauge
	uncommitted   prometheus.Gauge
	lag           *prometheus.GaugeVec // topic, partition
	committed     *prometheus.GaugeVec // topic, partition
	flushSeconds  prometheus.Histogram
	commits       *prometheus.CounterVec // kind
	commitErrors  *prometheus.CounterVec // kind
	rebalances    prometheus.Counter
	assignedParts prometheus.Gauge
}

// New returns Metrics registered in a registry of their own (never the
// global one, so tests and several runs in one process do not collide),
// together with the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		parts: map[partKey]*Partition{},
		recordsIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "records_in_total",
			Help: "Input records read, by source kind (kafka, file, stdin), topic and partition (both empty for files and stdin).",
		}, []string{"source_kind", "topic", "partition"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "bytes_in_total",
			Help: "Bytes of input records read, by source kind, topic and partition.",
		}, []string{"source_kind", "topic", "partition"}),
		exchangesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "exchanges_out_total",
			Help: "Exchange rows written, by outcome (the verdict: SUCCESS, TOOL_ERROR, JSONRPC_ERROR, HTTP_ERROR, ...).",
		}, []string{"outcome"}),
		quarantined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "quarantined_total",
			Help: "Input records quarantined, by reason.",
		}, []string{"reason"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "duplicates_dropped_total",
			Help: "Records or rows dropped as duplicates: redelivered (offset below the committed one) or already_written (exchange_id already in the dataset).",
		}, []string{"why"}),
		openConvs: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "open_conversations",
			Help: "Conversations the correlator holds open (waiting for more records).",
		}),
		uncommitted: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "records_uncommitted",
			Help: "Records read whose offsets (or, for files, ledger positions) are not yet committed.",
		}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "partition_lag",
			Help: "Records behind the high watermark on an owned partition: high watermark - offset - 1 of the last message read.",
		}, []string{"topic", "partition"}),
		committed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "committed_offset",
			Help: "Offset last committed to the consumer group on an owned partition (the next offset to read).",
		}, []string{"topic", "partition"}),
		flushSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "file_flush_seconds",
			Help:    "Time to make a batch of files durable: roll, fsync and rename, or upload, up to the commit.",
			Buckets: flushBuckets,
		}),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "commits_total",
			Help: "Successful commits, by kind: dataset (files published), kafka (offsets), upload (objects stored).",
		}, []string{"kind"}),
		commitErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "commit_errors_total",
			Help: "Failed commits, by kind: dataset, kafka, upload.",
		}, []string{"kind"}),
		rebalances: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "rebalances_total",
			Help: "Consumer group generations this member joined (each assignment after a rebalance).",
		}),
		assignedParts: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "assigned_partitions",
			Help: "Partitions this member owns in the current generation.",
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.recordsIn, m.bytesIn, m.exchangesOut, m.quarantined, m.duplicates,
		m.openConvs, m.uncommitted, m.lag, m.committed, m.flushSeconds,
		m.commits, m.commitErrors, m.rebalances, m.assignedParts,
	)
	// Series whose label values are known up front exist from the first
	// scrape at 0, so rate() and alerts see them before the first event.
	for _, why := range []string{DupRedelivered, DupAlreadyWritten} {
		m.duplicates.WithLabelValues(why)
	}
	for _, kind := range []string{CommitDataset, CommitKafka, CommitUpload} {
		m.commits.WithLabelValues(kind)
		m.commitErrors.WithLabelValues(kind)
	}
	return m
}

// Registry returns the registry the metrics are exported from (nil for a
// nil *Metrics), for callers that mount their own handler or gather in tests.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Input is a handle on the input counters of one non-Kafka source kind
// (file or stdin). Its methods are cheap (atomic adds) and a nil *Input
// does nothing.
type Input struct {
	records, bytes prometheus.Counter
}

// Input returns the handle for records of the given source kind (KindFile,
// KindStdin) whose series have empty topic and partition labels. Resolve it
// once per input, not per record.
func (m *Metrics) Input(kind string) *Input {
	if m == nil {
		return nil
	}
	return &Input{
		records: m.recordsIn.WithLabelValues(kind, "", ""),
		bytes:   m.bytesIn.WithLabelValues(kind, "", ""),
	}
}

// Read counts records input records of bytes bytes in all. Counts of zero
// or less are ignored.
func (in *Input) Read(records, bytes int) {
	if in == nil {
		return
	}
	add(in.records, records)
	add(in.bytes, bytes)
}

// Partition is a handle on the series of one Kafka topic partition: its
// input counters, its lag and its committed offset. Its methods are cheap
// (atomic operations once a series exists) and a nil *Partition does
// nothing.
//
// The lag and committed-offset series appear with their first value (not
// at 0 on assignment, which would claim a caught-up partition or a commit
// that never happened) and disappear on RevokePartition. After that the
// handle keeps accepting calls, but they no longer reach the exported
// series: a goroutine of an old generation cannot bring a revoked
// partition's lag back. Metrics.Partition returns a new handle when the
// partition is assigned again.
type Partition struct {
	m              *Metrics
	topic, part    string
	records, bytes prometheus.Counter
	lag, committed gaugeSlot
}

// gaugeSlot is a gauge series made on first use, unless revoked.
type gaugeSlot struct {
	g       atomic.Pointer[gaugeBox]
	mu      sync.Mutex // held to make the series and to revoke it
	revoked bool
}

type gaugeBox struct{ prometheus.Gauge }

// get returns the slot's gauge, making the series of vec on first use, or
// nil once the slot is revoked.
func (s *gaugeSlot) get(vec *prometheus.GaugeVec, lvs ...string) prometheus.Gauge {
	if b := s.g.Load(); b != nil {
		return b.Gauge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked {
		return nil
	}
	if b := s.g.Load(); b != nil {
		return b.Gauge
	}
	b := &gaugeBox{vec.WithLabelValues(lvs...)}
	s.g.Store(b)
	return b.Gauge
}

// revoke deletes the slot's series; a gauge loaded before keeps working
// on a series that is no longer exported.
func (s *gaugeSlot) revoke(vec *prometheus.GaugeVec, lvs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
	vec.DeleteLabelValues(lvs...)
}

type partKey struct {
	topic     string
	partition int
}

// Partition returns the handle for a topic partition this member owns
// (source_kind "kafka"): the same handle until RevokePartition, a new one
// after. Resolve it once per assignment, not per message.
func (m *Metrics) Partition(topic string, partition int) *Partition {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := partKey{topic, partition}
	if p := m.parts[key]; p != nil {
		return p
	}
	ps := strconv.Itoa(partition)
	p := &Partition{
		m: m, topic: topic, part: ps,
		records: m.recordsIn.WithLabelValues(KindKafka, topic, ps),
		bytes:   m.bytesIn.WithLabelValues(KindKafka, topic, ps),
	}
	m.parts[key] = p
	return p
}

// Read counts records messages of bytes bytes in all, without touching the
// lag. Counts of zero or less are ignored.
func (p *Partition) Read(records, bytes int) {
	if p == nil {
		return
	}
	add(p.records, records)
	add(p.bytes, bytes)
}

// Message counts one message of bytes bytes read at offset and sets the lag
// from the high watermark the fetch reported with it (kafka-go's
// Message.HighWaterMark): highWaterMark - offset - 1, never below 0.
func (p *Partition) Message(offset, highWaterMark int64, bytes int) {
	if p == nil {
		return
	}
	p.records.Inc()
	add(p.bytes, bytes)
	p.SetLag(highWaterMark - offset - 1)
}

// SetLag sets the partition's lag in records; a negative value is set as 0.
func (p *Partition) SetLag(lag int64) {
	if p == nil {
		return
	}
	if g := p.lag.get(p.m.lag, p.topic, p.part); g != nil {
		g.Set(float64(max(lag, 0)))
	}
}

// SetCommitted sets the offset last committed for the partition (the next
// offset to read, as Kafka stores it).
func (p *Partition) SetCommitted(offset int64) {
	if p == nil {
		return
	}
	if g := p.committed.get(p.m.committed, p.topic, p.part); g != nil {
		g.Set(float64(offset))
	}
}

// RevokePartition deletes the lag and committed-offset series of a topic
// partition this member no longer owns, so no stale value lingers (lag is
// reported for owned partitions only), and retires its handle. The input
// counters stay: they are totals of what this process read.
func (m *Metrics) RevokePartition(topic string, partition int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := partKey{topic, partition}
	p := m.parts[key]
	delete(m.parts, key)
	ps := strconv.Itoa(partition)
	if p == nil {
		// Never assigned through Partition, or already revoked: make
		// sure no series is left all the same.
		m.lag.DeleteLabelValues(topic, ps)
		m.committed.DeleteLabelValues(topic, ps)
		return
	}
	p.lag.revoke(m.lag, topic, ps)
	p.committed.revoke(m.committed, topic, ps)
}

// ExchangesOut counts n exchange rows written with the given outcome.
func (m *Metrics) ExchangesOut(outcome string, n int) {
	if m == nil {
		return
	}
	add(m.exchangesOut.WithLabelValues(outcome), n)
}

// Quarantined counts n records quarantined for reason.
func (m *Metrics) Quarantined(reason string, n int) {
	if m == nil {
		return
	}
	add(m.quarantined.WithLabelValues(reason), n)
}

// DuplicatesDropped counts n records or rows dropped as duplicates; why is
// DupRedelivered or DupAlreadyWritten.
func (m *Metrics) DuplicatesDropped(why string, n int) {
	if m == nil {
		return
	}
	add(m.duplicates.WithLabelValues(why), n)
}

// SetOpenConversations sets the number of open conversations.
func (m *Metrics) SetOpenConversations(n int) {
	if m == nil {
		return
	}
	m.openConvs.Set(float64(n))
}

// AddOpenConversations adds delta (negative to subtract) to the number of
// open conversations, for shards that each report their own changes.
func (m *Metrics) AddOpenConversations(delta int) {
	if m == nil {
		return
	}
	m.openConvs.Add(float64(delta))
}

// SetUncommitted sets the number of records read but not yet committed.
func (m *Metrics) SetUncommitted(n int) {
	if m == nil {
		return
	}
	m.uncommitted.Set(float64(n))
}

// AddUncommitted adds delta to the number of records read but not yet
// committed: +n when records are read, -n when their commit succeeds or
// they are dropped on revocation.
func (m *Metrics) AddUncommitted(delta int) {
	if m == nil {
		return
	}
	m.uncommitted.Add(float64(delta))
}

// ObserveFlush records how long one flush (roll, fsync and rename or
// upload, up to the commit) took.
func (m *Metrics) ObserveFlush(d time.Duration) {
	if m == nil {
		return
	}
	m.flushSeconds.Observe(d.Seconds())
}

// Commit counts one commit of kind (CommitDataset, CommitKafka,
// CommitUpload): in mcptrace_commits_total when err is nil, in
// mcptrace_commit_errors_total otherwise. Pass the commit's result directly:
// m.Commit(metrics.CommitKafka, err).
func (m *Metrics) Commit(kind string, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.commitErrors.WithLabelValues(kind).Inc()
		return
	}
	m.commits.WithLabelValues(kind).Inc()
}

// Rebalance counts one rebalance: a new generation assigned to this member.
func (m *Metrics) Rebalance() {
	if m == nil {
		return
	}
	m.rebalances.Inc()
}

// SetAssignedPartitions sets the number of partitions this member owns.
func (m *Metrics) SetAssignedPartitions(n int) {
	if m == nil {
		return
	}
	m.assignedParts.Set(float64(n))
}

// add adds n to c when n is positive: a counter only goes up, and a bad
// count from a caller must not panic the run (prometheus panics on a
// negative Add).
func add(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}
