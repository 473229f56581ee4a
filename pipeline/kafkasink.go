package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"mcptrace/dataset"
	"mcptrace/kafkasrc"
	"mcptrace/metrics"
	"mcptrace/objstore"
	"mcptrace/schema"
)

// kafkaSink writes a consumer's partitions into one dataset that other
// consumers write too: each topic partition is a dataset scope (its own
// manifest, lock and staging; see package dataset), so members of a
// consumer group on many machines never write the same manifest. Files
// are named "<topic>+<partition>+<first offset>-NNNNN.parquet".
//
// Rows a replay meets again are dropped by key: each scope records in its
// manifest the keys (exchange ids, "q:<offset>" for quarantine rows) of
// the rows written for records at or past the committed position, and a
// row whose key is known is not written twice.
type kafkaSink struct {
	cfg     *Config
	sum     *Summary
	scopes  []*kafkaScope
	byName  map[string]*kafkaScope // input name (a pair's is its client's) → scope
	byID    map[string]*kafkaScope // input identity → scope
	publish func(ctx context.Context, sc *kafkaScope, files []dataset.FileInfo) error
	// The ledgers (kafkaledger.go): the accounting of the units a commit
	// at a position makes durable, the process's ledger, and where the
	// run stands.
	unitCounts func(in *Input, pos int64) (unitAcct, int64)
	proc       *kafkaLedger
	group      string
	gen        int32
	caughtUp   func() bool
}

// kafkaScope is one partition's part of the dataset.
type kafkaScope struct {
	name string
	in   *Input
	tp   kafkasrc.TopicPartition
	ds   *dataset.Dataset
	txn  *dataset.Txn
	ex   *dataset.Table[schema.Exchange]
	q    *dataset.Table[schema.Quarantine]
	// keys of rows written at or past the committed position → the line
	// (offset) they are pruned by.
	keys     map[string]int64
	position int64 // committed position at open (the next offset), 0: none
	pairs    map[string]bool
	replay   *replayDone      // what a replay of the partition skips (read by the sequencer)
	durable  int64            // position the last commit recorded (read after the run)
	ledger   schema.Ledger    // the partition's ledger as committed
	out      schema.LedgerOut // rows written since the last commit
}

// ScopeName is the dataset scope of a topic partition.
func ScopeName(tp kafkasrc.TopicPartition) string {
	return "kafka+" + tp.Topic + "+" + strconv.Itoa(tp.Partition)
}

// KafkaInputID is the dataset identity (and source column) of a topic
// partition.
func KafkaInputID(tp kafkasrc.TopicPartition) string { return "kafka:" + tp.String() }

// openKafkaSink opens the scopes of the inputs (waiting for an earlier
// owner to release them until ctx ends) and reads where each is durable.
func openKafkaSink(ctx context.Context, cfg *Config, sum *Summary, ins []*Input, tps []kafkasrc.TopicPartition, store *objstore.Store, proc *kafkaLedger) (*kafkaSink, error) {
	s := &kafkaSink{cfg: cfg, sum: sum, byName: map[string]*kafkaScope{}, byID: map[string]*kafkaScope{}, proc: proc}
	if proc != nil {
		s.group = proc.group
	}
	var pub *s3Publisher
	if store != nil {
		pub = &s3Publisher{store: store, dir: cfg.OutDir, empties: map[string]bool{}, versions: map[string]string{}, log: cfg.Log}
		s.publish = pub.publish
	}
	roll := cfg.Roll
	roll.RowGroupRows = cfg.RowGroupRows
	if roll.MaxOpen == 0 {
		roll.MaxOpen = 2 // per scope: a consumer owns many
	}
	for i, in := range ins {
		sc := &kafkaScope{name: ScopeName(tps[i]), in: in, tp: tps[i], keys: map[string]int64{}, pairs: map[string]bool{}}
		if pub != nil {
			// The scope's lock is local: on one machine it keeps the
			// previous owner out while the bucket's state is adopted.
			// Across machines the group's assignment does.
			lock, err := dataset.Open(ctx, cfg.OutDir, dataset.Options{Scope: sc.name, WaitLock: true})
			if err != nil {
				s.Abort()
				return nil, fmt.Errorf("opening the dataset's part for %s: %w", tps[i], err)
			}
			lock.Close()
			if err := pub.adopt(ctx, sc.name, stemPrefix(sc.tp)); err != nil {
				s.Abort()
				return nil, fmt.Errorf("reading the state of %s from %s: %w", tps[i], store.URL(""), err)
			}
		}
		ds, err := dataset.Open(ctx, cfg.OutDir, dataset.Options{Scope: sc.name, WaitLock: true})
		if err != nil {
			s.Abort()
			return nil, fmt.Errorf("opening the dataset's part for %s: %w", tps[i], err)
		}
		sc.ds = ds
		s.scopes = append(s.scopes, sc)
		if e := ds.Manifest().Sources[in.ID]; e != nil {
			sc.position = e.Position.End
			sc.durable = e.Position.End
			for _, k := range e.Keys {
				key, line := splitKey(k)
				sc.keys[key] = line
				if h, ok := strings.CutPrefix(key, "c:"); ok {
					if sc.replay == nil {
						sc.replay = &replayDone{convs: map[string]int64{}}
					}
					sc.replay.convs[h] = line
					sc.replay.maxLine = max(sc.replay.maxLine, line)
				}
			}
		}
		if l, ok := loadPartitionLedger(ds.Manifest().Ledger, sc); ok {
			sc.ledger = l
		} else {
			if len(ds.Manifest().Ledger) > 0 {
				cfg.Log.Warn().Str("scope", sc.name).Msg("kafka: the partition's ledger cannot be continued (another version, or damaged): a new one counts from the committed position")
			}
			sc.ledger = newPartitionLedger(sc, s.group)
		}
		txn, err := ds.Begin("", cfg.Now())
		if err != nil {
			s.Abort()
			return nil, err
		}
		sc.txn = txn
		sc.ex = dataset.NewTable[schema.Exchange](txn, "exchanges", func(e *schema.Exchange) time.Time { return e.StartedAt }, roll)
		sc.q = dataset.NewTable[schema.Quarantine](txn, "quarantine", func(q *schema.Quarantine) time.Time { return q.ObservedAt }, roll)
		s.byName[in.Name] = sc
		s.byID[in.ID] = sc
	}
	// A merged row's server key lives in the client's scope (see
	// WriteExchanges): the server's scope learns it here.
	byScope := map[string]*kafkaScope{}
	for _, sc := range s.scopes {
		byScope[sc.name] = sc
	}
	for _, sc := range s.scopes {
		for k, line := range sc.keys {
			if srv, id, ok := splitServerKey(k); ok && byScope[srv] != nil {
				byScope[srv].keys[id] = line
			}
		}
	}
	return s, nil
}

// serverKey is how a client scope keeps the key of a merged row's server
// row: "s:<server scope>:<exchange id>".
func serverKey(scope, id string) string { return "s:" + scope + ":" + id }

func splitServerKey(k string) (scope, id string, ok bool) {
	rest, ok := strings.CutPrefix(k, "s:")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// Keys are stored as "<key> <line>".
func joinKey(key string, line int64) string { return key + " " + strconv.FormatInt(line, 10) }

func splitKey(s string) (string, int64) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			n, _ := strconv.ParseInt(s[i+1:], 10, 64)
			return s[:i], n
		}
	}
	return s, 0
}

func (s *kafkaSink) scopeOf(in *Input) (*kafkaScope, error) {
	sc := s.byName[in.Name]
	if sc == nil {
		return nil, fmt.Errorf("kafka sink: rows of %s, which this consumer does not own (a bug)", in.Name)
	}
	if in != sc.in {
		sc.pairs[in.ID] = true
	}
	return sc, nil
}

// stem names a partition's files by their first row's offset; topic names
// hold no '+', so a partition's files share stemPrefix with no other's.
func stem(tp kafkasrc.TopicPartition, line int64) string {
	return stemPrefix(tp) + strconv.FormatInt(line, 10)
}

func stemPrefix(tp kafkasrc.TopicPartition) string {
	return tp.Topic + "+" + strconv.Itoa(tp.Partition) + "+"
}

func (s *kafkaSink) WriteExchanges(_ context.Context, in *Input, rows []schema.Exchange) error {
	sc, err := s.scopeOf(in)
	if err != nil {
		return err
	}
	// A merged row whose server row alone is written already (a replay
	// that merges what was written single-sided) is still written: the
	// client's view would be lost otherwise.
	return writeNew(s, sc, rows, func(r *schema.Exchange) (string, int64) { return r.ExchangeID, r.SourceLine },
		func(stem string, keep []schema.Exchange) error {
			return sc.ex.Write(dataset.Source{ID: in.ID, Stem: stem}, keep)
		},
		func(r *schema.Exchange) {
			if r.ServerExchangeID != "" {
				// A merged row stands for the server's row too: a replay of
				// the server's partition alone does not write it again. The
				// key is kept with the merged row, in this scope's commit (so
				// both are durable at once), and known to the server's scope.
				if srv := s.byName[r.ServerSource]; srv != nil && srv != sc {
					srv.keys[r.ServerExchangeID] = r.ServerLine
					sc.keys[serverKey(srv.name, r.ServerExchangeID)] = r.ServerLine
				}
			}
			s.cfg.Metrics.ExchangesOut(r.Outcome, 1)
			sc.countOut(r)
		})
}

func (s *kafkaSink) WriteQuarantine(_ context.Context, in *Input, rows []schema.Quarantine) error {
	sc, err := s.scopeOf(in)
	if err != nil {
		return err
	}
	return writeNew(s, sc, rows, func(q *schema.Quarantine) (string, int64) { return quarKey(q), q.Line },
		func(stem string, keep []schema.Quarantine) error {
			return sc.q.Write(dataset.Source{ID: in.ID, Stem: stem}, keep)
		},
		func(q *schema.Quarantine) { s.cfg.Metrics.Quarantined(q.Reason, 1); sc.out.QuarantineRows++ })
}

// writeNew writes the rows whose key the scope does not know yet (a replay
// meets the others again), named by the first one's line, and records
// their keys; written runs for each row written.
func writeNew[T any](s *kafkaSink, sc *kafkaScope, rows []T, key func(*T) (string, int64), write func(stem string, keep []T) error, written func(*T)) error {
	keep := rows[:0:0]
	for i := range rows {
		if k, _ := key(&rows[i]); !known(sc, k) {
			keep = append(keep, rows[i])
		}
	}
	if n := len(rows) - len(keep); n > 0 {
		s.dropped(n)
	}
	if len(keep) == 0 {
		return nil
	}
	_, first := key(&keep[0])
	if err := write(stem(sc.tp, first), keep); err != nil {
		return err
	}
	for i := range keep {
		k, line := key(&keep[i])
		sc.keys[k] = line
		written(&keep[i])
	}
	return nil
}

func known(sc *kafkaScope, k string) bool { _, ok := sc.keys[k]; return ok }

// quarKey identifies a quarantine row of a partition: its offset and
// reason (a message yields at most a few).
func quarKey(q *schema.Quarantine) string {
	h := fnv.New64a()
	h.Write([]byte(q.Reason))
	h.Write([]byte{0})
	h.Write([]byte(q.Detail)) // names the record within a message of several
	return "q:" + strconv.FormatInt(q.Line, 10) + ":" + strconv.FormatUint(h.Sum64(), 16)
}

func (s *kafkaSink) dropped(n int) {
	s.sum.Deduplicated += int64(n)
	s.cfg.Metrics.DuplicatesDropped(metrics.DupAlreadyWritten, n)
}

// Commit publishes, per scope, the rows of the inputs named, records the
// position each is durable to and the keys of rows written past it, and
// (with an object store) uploads the files and then the scope's manifest.
// The final commit also closes the scopes.
func (s *kafkaSink) Commit(ctx context.Context, inputs []*Input, final bool) error {
	named := map[*kafkaScope]bool{}
	for _, in := range inputs {
		if sc := s.byName[in.Name]; sc != nil {
			named[sc] = true
		}
	}
	var errs []error
	for _, sc := range s.scopes {
		if !named[sc] {
			continue
		}
		if err := s.commitScope(ctx, sc, final); err != nil {
			errs = append(errs, err)
			break // the caller aborts; later scopes keep what they had
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !final {
		return nil
	}
	for _, sc := range s.scopes {
		errs = append(errs, sc.txn.Close(), sc.ds.Close())
	}
	s.scopes = nil
	return errors.Join(errs...)
}

func (s *kafkaSink) commitScope(ctx context.Context, sc *kafkaScope, final bool) error {
	pos := sc.in.commitAt.Load()
	if pos < sc.position {
		pos = sc.position // nothing new is durable: the position stands
	}
	positions := map[string]int64{}
	for _, o := range s.scopes {
		positions[o.name] = o.position
	}
	var keys []string
	for k, line := range sc.keys {
		limit := pos
		if srv, _, ok := splitServerKey(k); ok {
			limit = positions[srv] // a server row's key: pruned by the server's position
		}
		if line < limit {
			delete(sc.keys, k) // its conversation started before the position: never replayed
			continue
		}
		keys = append(keys, joinKey(k, line))
	}
	sort.Strings(keys)
	states := []dataset.SourceState{{ID: sc.in.ID, Append: true, Keys: keys,
		Position: dataset.Position{Unit: "offset", Start: 0, End: pos}}}
	var pairIDs []string
	for id := range sc.pairs {
		pairIDs = append(pairIDs, id)
	}
	sort.Strings(pairIDs)
	for _, id := range pairIDs {
		states = append(states, dataset.SourceState{ID: id, Append: true})
	}
	// The ledger, committed with the rows: the units the commit makes
	// durable (positions up to pos), the rows written since the last one.
	d := &commitDelta{pos: pos, out: sc.out, gen: s.gen, at: time.Now().UTC(),
		complete: final && s.caughtUp != nil && s.caughtUp()}
	if s.unitCounts != nil {
		d.acct, d.first = s.unitCounts(sc.in, pos)
	}
	d.out.Notifications = d.acct.notes
	var next schema.Ledger
	sc.txn.SetLedger(func(files []dataset.FileInfo) ([]byte, error) {
		next = nextPartitionLedger(sc.ledger, d, s.proc.writerOf(), files)
		// The limits the committing process applies; the conversations
		// they ended are the process's, counted in its own ledger.
		next.Limits = ledgerLimits(s.cfg, 0)
		return json.Marshal(next)
	})
	files, err := sc.txn.Commit(states)
	if err != nil {
		return err
	}
	sc.ledger, sc.out = next, emptyOut()
	sc.position = pos
	for _, f := range files {
		p := sc.ds.Path(f.Path)
		switch f.Table {
		case "exchanges":
			s.sum.ExchangeFiles = append(s.sum.ExchangeFiles, p)
		case "quarantine":
			s.sum.QuarantineOut = append(s.sum.QuarantineOut, p)
		}
	}
	if s.publish != nil {
		err := s.publish(ctx, sc, files)
		s.cfg.Metrics.Commit(metrics.CommitUpload, err)
		if err != nil {
			return err // durable here, not in the bucket: the offsets stay
		}
	}
	sc.durable = pos // published: the offset to commit
	s.proc.fold(sc, d, files)
	return nil
}

// durable is the position the dataset holds an input's partition durable
// to (0: none): the offset to commit.
func (s *kafkaSink) durable(in *Input) int64 {
	if sc := s.byID[in.ID]; sc != nil {
		return sc.durable
	}
	return 0
}

func (s *kafkaSink) Abort() {
	for _, sc := range s.scopes {
		if sc.txn != nil {
			sc.txn.Abort()
		}
		sc.ds.Close()
	}
	s.scopes = nil
}
