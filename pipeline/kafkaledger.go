package pipeline

import (
	"encoding/json"
	"maps"
	"os"
	"sort"
	"sync"
	"time"

	"mcptrace/dataset"
	"mcptrace/schema"
)

// The ledgers of a Kafka consumer (schema/README.md, "The ledger of a
// Kafka consumer"). Each topic partition's dataset scope keeps its own
// ledger in its manifest (and a copy in ledger.json next to it): what the
// dataset holds of the partition, over every consumer that owned it. A
// commit of the scope folds in the units it makes durable, so the ledger
// is never ahead of the commit and a record is counted once: by the commit
// whose position passes it (the next owner reads from that position). The
// consumer process keeps a ledger of what it committed itself, logged as
// its last line.

// unitAcct is a Kafka unit's part of its partition's ledger, counted by
// the sequencer; the commit that makes the unit durable folds it in.
type unitAcct struct {
	counts   schema.LedgerCounts
	messages int64
	notes    int64 // notification messages among its observations (1 + Folded each)
}

func (a *unitAcct) add(o *unitAcct) {
	a.counts.Add(&o.counts)
	a.messages += o.messages
	a.notes += o.notes
}

// notifications counts the notification messages of observations as the
// correlator does (correlate.Stats.Notifications).
func notifications(obs []*schema.Observation) int64 {
	var n int64
	for _, o := range obs {
		for i := range o.Messages {
			if o.Messages[i].Kind == schema.MsgNotification {
				n += 1 + int64(o.Messages[i].Folded)
			}
		}
	}
	return n
}

// countsUpTo sums the accounting of in's queued units up to position pos
// (the units a commit at pos makes durable: those it then releases), and
// returns the first position among them (0: none).
func (q *ackQueue) countsUpTo(in *Input, pos int64) (sum unitAcct, first int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, u := range q.units {
		if u.Input != in || u.acct == nil {
			continue
		}
		if u.Last > pos {
			break
		}
		if first == 0 {
			first = u.First
		}
		sum.add(u.acct)
	}
	return sum, first
}

// kafkaLedger is a consumer process's own ledger: what it committed, over
// every generation.
type kafkaLedger struct {
	mu      sync.Mutex
	started time.Time
	group   string
	writer  schema.LedgerWriter
	commits int64
	inputs  map[string]*schema.LedgerInput
	out     schema.LedgerOut
}

func newKafkaLedger(group string, started time.Time) *kafkaLedger {
	host, _ := os.Hostname()
	return &kafkaLedger{started: started.UTC(), group: group, inputs: map[string]*schema.LedgerInput{},
		writer: schema.LedgerWriter{Host: host, PID: os.Getpid(), StartedAt: started.UTC()}, out: emptyOut()}
}

func emptyOut() schema.LedgerOut { return schema.LedgerOut{ByOutcome: map[string]int64{}} }

func emptyCounts() schema.LedgerCounts {
	return schema.LedgerCounts{QuarantinedBy: map[string]int64{}, SkippedBy: map[string]int64{}}
}

// addOut adds o to out.
func addOut(out *schema.LedgerOut, o *schema.LedgerOut) {
	out.Exchanges += o.Exchanges
	out.MergedPairs += o.MergedPairs
	out.Notifications += o.Notifications
	out.FalseSuccesses += o.FalseSuccesses
	out.QuarantineRows += o.QuarantineRows
	out.ExchangeFiles += o.ExchangeFiles
	out.QuarantineFiles += o.QuarantineFiles
	if out.ByOutcome == nil {
		out.ByOutcome = map[string]int64{}
	}
	for k, v := range o.ByOutcome {
		out.ByOutcome[k] += v
	}
}

// commitDelta is what one commit of a scope adds to its ledgers.
type commitDelta struct {
	acct     unitAcct
	first    int64 // first position of the units folded (offset+1; 0: none)
	pos      int64 // the commit's position: the next offset
	out      schema.LedgerOut
	complete bool
	gen      int32
	at       time.Time
}

// foldInput adds a commit's counts to a ledger's line of the partition.
func foldInput(li *schema.LedgerInput, d *commitDelta) {
	if li.QuarantinedBy == nil {
		li.QuarantinedBy, li.SkippedBy = map[string]int64{}, map[string]int64{}
	}
	if d.acct.messages > 0 && li.Kafka.Messages == 0 {
		li.Kafka.FirstOffset = d.first - 1 // positions are offset+1
	}
	li.LedgerCounts.Add(&d.acct.counts)
	li.Kafka.Messages += d.acct.messages
	li.Kafka.NextOffset = max(li.Kafka.NextOffset, d.pos)
	li.Complete = d.complete
}

// newPartitionLedger is the ledger of a partition's scope before its first
// commit with one: it counts from the scope's position.
func newPartitionLedger(sc *kafkaScope, group string) schema.Ledger {
	return schema.Ledger{Version: schema.LedgerVersion, Balanced: true,
		Inputs: []schema.LedgerInput{{Name: sc.in.Name, ID: sc.in.ID, Format: sc.in.Format, LedgerCounts: emptyCounts(),
			Kafka: &schema.LedgerPartition{Topic: sc.tp.Topic, Partition: sc.tp.Partition, FirstOffset: sc.position, NextOffset: sc.position}}},
		Totals: emptyCounts(), Out: emptyOut(), Kafka: &schema.LedgerKafka{Group: group, Scope: sc.name}}
}

// loadPartitionLedger reads the ledger a scope's manifest holds; ok false
// when it has none or one this version cannot continue.
func loadPartitionLedger(raw json.RawMessage, sc *kafkaScope) (l schema.Ledger, ok bool) {
	if len(raw) == 0 || json.Unmarshal(raw, &l) != nil || l.Version != schema.LedgerVersion || l.Kafka == nil ||
		len(l.Inputs) != 1 || l.Inputs[0].ID != sc.in.ID || l.Inputs[0].Kafka == nil {
		return schema.Ledger{}, false
	}
	return l, true
}

// nextPartitionLedger is the scope's ledger after a commit: a copy of
// the committed one with the commit's delta folded in.
func nextPartitionLedger(prev schema.Ledger, d *commitDelta, writer schema.LedgerWriter, files []dataset.FileInfo) schema.Ledger {
	l := prev
	l.Inputs = []schema.LedgerInput{prev.Inputs[0]}
	li := &l.Inputs[0]
	li.QuarantinedBy, li.SkippedBy = cloneCounts(li.QuarantinedBy), cloneCounts(li.SkippedBy)
	k := *li.Kafka
	li.Kafka = &k
	foldInput(li, d)
	l.Totals = li.LedgerCounts
	l.Totals.QuarantinedBy, l.Totals.SkippedBy = maps.Clone(li.QuarantinedBy), maps.Clone(li.SkippedBy)
	l.Out.ByOutcome = cloneCounts(prev.Out.ByOutcome)
	out := d.out
	out.ExchangeFiles, out.QuarantineFiles = countFiles(files)
	addOut(&l.Out, &out)
	if l.StartedAt.IsZero() {
		l.StartedAt = d.at
	}
	l.EndedAt = d.at
	l.Complete = li.Complete
	l.Balanced = l.Totals.Balanced()
	kl := *prev.Kafka
	kl.Commits++
	writer.Generation = d.gen
	kl.Writer = writer
	l.Kafka = &kl
	return l
}

func countFiles(files []dataset.FileInfo) (ex, q int) {
	for _, f := range files {
		switch f.Table {
		case "exchanges":
			ex++
		case "quarantine":
			q++
		}
	}
	return ex, q
}

// writerOf names the process in a partition's ledger.
func (k *kafkaLedger) writerOf() schema.LedgerWriter {
	if k == nil {
		return schema.LedgerWriter{}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writer
}

// fold adds a scope's commit to the process's ledger.
func (k *kafkaLedger) fold(sc *kafkaScope, d *commitDelta, files []dataset.FileInfo) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.commits++
	k.writer.Generation = d.gen
	li := k.inputs[sc.in.ID]
	if li == nil {
		li = &schema.LedgerInput{Name: sc.in.Name, ID: sc.in.ID, Format: sc.in.Format, LedgerCounts: emptyCounts(),
			Kafka: &schema.LedgerPartition{Topic: sc.tp.Topic, Partition: sc.tp.Partition, FirstOffset: d.pos, NextOffset: d.pos}}
		k.inputs[sc.in.ID] = li
	}
	foldInput(li, d)
	out := d.out
	out.ExchangeFiles, out.QuarantineFiles = countFiles(files)
	addOut(&k.out, &out)
}

// ledger is the process's ledger: complete says it ended caught up.
func (k *kafkaLedger) ledger(now time.Time, complete bool) schema.Ledger {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := schema.Ledger{Version: schema.LedgerVersion, StartedAt: k.started, EndedAt: now.UTC(), Complete: complete, Balanced: true,
		Inputs: []schema.LedgerInput{}, Totals: emptyCounts(), Out: k.out,
		Kafka: &schema.LedgerKafka{Group: k.group, Commits: k.commits, Writer: k.writer}}
	l.Out.ByOutcome = cloneCounts(k.out.ByOutcome)
	ids := make([]string, 0, len(k.inputs))
	for id := range k.inputs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		li := *k.inputs[id]
		li.QuarantinedBy, li.SkippedBy = cloneCounts(li.QuarantinedBy), cloneCounts(li.SkippedBy)
		p := *li.Kafka
		li.Kafka = &p
		l.Balanced = l.Balanced && li.Balanced()
		l.Totals.Add(&li.LedgerCounts)
		l.Inputs = append(l.Inputs, li)
	}
	l.Balanced = l.Balanced && l.Totals.Balanced()
	return l
}

// countOut counts a row a scope writes, for its next commit's ledger.
func (sc *kafkaScope) countOut(r *schema.Exchange) {
	if sc.out.ByOutcome == nil {
		sc.out.ByOutcome = map[string]int64{}
	}
	sc.out.Exchanges++
	sc.out.ByOutcome[r.Outcome]++
	if r.Sides == "both" {
		sc.out.MergedPairs++
	}
	if falseSuccess(r) {
		sc.out.FalseSuccesses++
	}
}
