package correlate

import (
	"cmp"
	"hash/fnv"
	"slices"
	"time"

	"mcptrace/schema"
)

// ShardKey names the correlator an observation must go to: observations
// with equal keys belong to one conversation (ConversationKey) and must
// reach the same Correlator, in input order. It is a stable 64-bit hash
// (FNV-1a), the same in every run and on every machine; route with
// ShardKey(o) % shards.
func ShardKey(o *schema.Observation) uint64 {
	h := fnv.New64a()
	h.Write([]byte(string(o.Side)))
	h.Write([]byte{0})
	h.Write([]byte(o.Format))
	switch {
	case o.SessionID != "":
		h.Write([]byte{0, 's', 0})
		h.Write([]byte(o.SessionID))
	case o.Connection != "":
		h.Write([]byte{0, 'c', 0})
		h.Write([]byte(o.Pos.Source))
		h.Write([]byte{0})
		h.Write([]byte(o.Connection))
	default:
		h.Write([]byte{0, 'f', 0})
		h.Write([]byte(o.Pos.Source))
	}
	return h.Sum64()
}

// Key orders what correlators emit, the same way whatever the number of
// shards:
//
//   - an item emitted while a correlator Adds observation o has Key{Seq:
//     o.Seq, Conv: 0, N: n}, n counting the items of that Add from 0;
//   - an item emitted by Advance(m) or Finish(m) (a conversation closed on
//     idle time or at the end, rows whose wait is over) has Key{Seq: m.Seq,
//     Again: a, Conv: the Seq of the conversation's first observation, N:
//     n}, a counting the earlier Marks with the same Seq (a quiet stream's
//     Marks, the final Mark after the last round's), n counting that
//     conversation's items of that call from 0.
//
// Keys are unique in a run (Seq values are unique, a conversation lives in
// one correlator), and each correlator emits them in increasing order, so
// a k-way merge of the shards' outputs by Key (Less) gives one order that
// does not depend on how conversations were spread over shards.
type Key struct {
	Seq   int64
	Again int32 // Marks with the same Seq before the one that emitted it
	Conv  int64
	N     int32
}

// Less orders keys: by Seq, then Again, then Conv, then N.
func (k Key) Less(o Key) bool { return k.Compare(o) < 0 }

// Compare returns -1, 0 or +1 as k sorts before, with or after o.
func (k Key) Compare(o Key) int {
	return cmp.Or(cmp.Compare(k.Seq, o.Seq), cmp.Compare(k.Again, o.Again), cmp.Compare(k.Conv, o.Conv), cmp.Compare(k.N, o.N))
}

// markCount counts the Marks with the same Seq a consumer was given (every
// consumer is given every Mark, so every one counts the same).
type markCount struct {
	seq  int64
	n    int32
	seen bool
}

// next takes in a Mark and returns how many Marks with its Seq came before.
func (mc *markCount) next(m *Mark) int32 {
	if mc.seen && m.Seq == mc.seq {
		mc.n++
	} else {
		mc.seq, mc.n, mc.seen = m.Seq, 0, true
	}
	return mc.n
}

// logKey names a log: the side, format and source of its observations
// (LineageKey without the string building).
type logKey struct {
	side   schema.Side
	format string
	source string
}

func logOf(o *schema.Observation) logKey { return logKey{o.Side, o.Format, o.Pos.Source} }

func (a logKey) compare(b logKey) int {
	return cmp.Or(cmp.Compare(a.side, b.side), cmp.Compare(a.format, b.format), cmp.Compare(a.source, b.source))
}

type logTime struct {
	log   logKey
	now   time.Time
	ended bool      // the log's input has no more records (Clock.End)
	moved time.Time // the newest time over all logs just after the log's latest observation
}

// Clock is a run's event-time clock, kept by the one goroutine that sees
// every observation in input order (the pipeline's sequencer): for every
// log (LineageKey) the newest event time (EndOrStart) seen so far, and the
// newest over all logs. It is not safe for concurrent use; the Marks it
// returns are immutable and may be shared by every goroutine.
type Clock struct {
	logs    map[logKey]time.Time
	changed map[logKey]bool
	ended   map[logKey]bool
	moved   map[logKey]time.Time // the newest time over all logs just after each log's latest observation
	now     time.Time
	// starts is every log's newest record start (o.Time), and
	// startsMoved the logs whose start moved since the last Mark: the
	// instant before which no more cancels can come (cancel.go).
	starts      map[logKey]time.Time
	startsMoved map[logKey]bool
}

// NewClock returns an empty clock.
func NewClock() *Clock {
	return &Clock{logs: map[logKey]time.Time{}, changed: map[logKey]bool{}, moved: map[logKey]time.Time{}}
}

// Stamp records o, in input order, before it is routed: it sets
// o.Watermark to the newest event time of o's log before o (zero for the
// log's first observation) and then counts o's own time. Correlators judge
// lateness on the stamp alone, so it is the same whichever shard o lands
// on.
func (k *Clock) Stamp(o *schema.Observation) { o.Watermark = k.observe(o) }

// observe counts o and returns the newest event time of its log before it.
func (k *Clock) observe(o *schema.Observation) time.Time {
	lk := logOf(o)
	prev, seen := k.logs[lk]
	t := o.EndOrStart()
	if !seen || t.After(prev) {
		k.logs[lk] = t
		k.changed[lk] = true
	}
	if t.After(k.now) {
		k.now = t
	}
	k.observeStart(lk, o.Time)
	if !k.moved[lk].Equal(k.now) {
		k.moved[lk] = k.now
		k.changed[lk] = true
	}
	return prev
}

// Pass lets d of event time pass with no record in the logs whose source
// (Position.Source) only accepts (every log when nil): a live stream that
// went quiet for d of wall time (the pipeline's idle tick), so that its
// idle conversations end and its rows are written. It depends on the wall
// clock, so only streams use it; files never go quiet, and their logs must
// not be moved by a stream's quiet.
func (k *Clock) Pass(d time.Duration, only func(source string) bool) {
	if d <= 0 {
		return
	}
	for lk, t := range k.logs {
		if only != nil && !only(lk.source) {
			continue
		}
		k.passLog(lk, t, d)
	}
}

// Stand says that the logs whose source only accepts (every log when
// nil) stand still where they are: Kafka partitions all read to their
// end, whose next records are new. A log read after others ran ahead in
// event time (a backlog replayed partition by partition) is then counted
// quiet since its own newest time rather than since the run's newest time
// when it was last read, so the rows its consumers hold only in case a
// later record of it comes (server rows waiting for a same-id repeat) go
// out once the run's time is past their wait, as they would had the logs
// been read side by side, instead of after the rows a merge pairs them
// with.
func (k *Clock) Stand(only func(source string) bool) {
	for lk, t := range k.logs {
		if only != nil && !only(lk.source) {
			continue
		}
		if k.moved[lk].After(t) {
			k.moved[lk] = t
			k.changed[lk] = true
		}
	}
}

// passLog lets d of event time pass in one log, whose time is t.
func (k *Clock) passLog(lk logKey, t time.Time, d time.Duration) {
	t = t.Add(d)
	k.logs[lk] = t
	k.changed[lk] = true
	if t.After(k.now) {
		k.now = t
	}
	k.passStart(lk, d)
}

// End says that an input has no more records (a file read to its end):
// the logs of that source (Position.Source) are marked ended in the next
// Mark, and what their consumers hold only in case a later record of the
// same log comes (server rows waiting SameIDWindow for a same-id repeat)
// is written then instead of at Finish. Streams never end; their quiet is
// Pass.
func (k *Clock) End(source string) {
	for lk := range k.logs {
		if lk.source == source && !k.ended[lk] {
			if k.ended == nil {
				k.ended = map[logKey]bool{}
			}
			k.ended[lk] = true
			k.changed[lk] = true
		}
	}
}

// Mark closes a round at seq: every observation with Seq <= seq has been
// stamped (and routed). It returns the Mark every correlator, the Linker
// and the Merger are then advanced with. Marks carry what changed since
// the previous Mark, so every consumer must be given every Mark, in order.
func (k *Clock) Mark(seq int64) Mark {
	m := Mark{Seq: seq, Now: k.now}
	if len(k.changed) > 0 {
		m.logs = make([]logTime, 0, len(k.changed))
		for lk := range k.changed {
			m.logs = append(m.logs, logTime{lk, k.logs[lk], k.ended[lk], k.moved[lk]})
		}
		slices.SortFunc(m.logs, func(a, b logTime) int { return a.log.compare(b.log) })
		clear(k.changed)
	}
	m.starts = k.markStarts()
	return m
}

// Mark is a point of the run's input order with the event times reached
// there: Seq (every observation with Seq <= Seq has been stamped), Now (the
// newest event time of all logs) and, unexported, the logs whose newest
// event time, or newest record start, moved since the previous Mark. Only
// Clock.Mark makes them.
type Mark struct {
	Seq    int64
	Now    time.Time
	logs   []logTime // sorted by log
	starts []logTime // logs whose newest record start moved, sorted by log
}

// logClocks is what a consumer of Marks knows of every log: its newest
// event time, and when it was last swept for idle state.
type logClocks struct {
	logs map[logKey]*logClock
}

type logClock struct {
	now       time.Time
	lastSweep time.Time
	start     time.Time // the newest record start (cancel.go)
	ended     bool
	movedAt   time.Time // the run's newest time just after the log's latest observation
}

func (lc *logClocks) get(k logKey) *logClock {
	if lc.logs == nil {
		lc.logs = map[logKey]*logClock{}
	}
	c := lc.logs[k]
	if c == nil {
		c = &logClock{}
		lc.logs[k] = c
	}
	return c
}

// apply takes in a Mark and returns, in log order, the logs due for an
// idle sweep: those whose time moved at least a tenth of idle since their
// last sweep (every consumer computes the same list from the same Marks).
func (lc *logClocks) apply(m *Mark, idle time.Duration) []logKey {
	var due []logKey
	for _, lt := range m.logs {
		c := lc.get(lt.log)
		if lt.now.After(c.now) {
			c.now = lt.now
		}
		c.movedAt = lt.moved // back only by Clock.Stand
		c.ended = c.ended || lt.ended
		if idle > 0 && c.now.Sub(c.lastSweep) >= idle/10 {
			c.lastSweep = c.now
			due = append(due, lt.log)
		}
	}
	return due
}

// ended says whether a log's input has no more records (Clock.End).
func (lc *logClocks) ended(k logKey) bool {
	if c := lc.logs[k]; c != nil {
		return c.ended
	}
	return false
}

// quiet is how far the run's newest time has gone since the log's latest
// observation (0 when unknown): how long, in input order, the log has
// stood still while others went on, whatever the Marks.
func (lc *logClocks) quiet(k logKey, now time.Time) time.Duration {
	if c := lc.logs[k]; c != nil && !c.movedAt.IsZero() {
		return now.Sub(c.movedAt)
	}
	return 0
}

// now is the newest event time of a log (zero when unknown).
func (lc *logClocks) now(k logKey) time.Time {
	if c := lc.logs[k]; c != nil {
		return c.now
	}
	return time.Time{}
}
