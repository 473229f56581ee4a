package pipeline

import (
	"context"
	"errors"
	"strings"
	"time"

	"mcptrace/dataset"
	"mcptrace/schema"
)

// Sink receives the run's rows in their final order, from one goroutine,
// and makes them durable. Rows are attributed to the input they came from,
// so a rerun can replace exactly that input's rows. Commit makes what was
// written for the inputs it names durable and visible (a stream's rows are
// committed as the run goes); the final Commit also ends the sink. After an
// error from any method the run calls Abort, which leaves the dataset as it
// was before the run (but for streams' earlier commits).
type Sink interface {
	WriteExchanges(ctx context.Context, in *Input, rows []schema.Exchange) error
	WriteQuarantine(ctx context.Context, in *Input, rows []schema.Quarantine) error
	Commit(ctx context.Context, inputs []*Input, final bool) error
	Abort()
}

// datasetSink writes the dataset directory through package dataset: rows
// are staged in rolling files per (table, date partition, input), and a
// commit publishes them and replaces what the same inputs wrote before.
type datasetSink struct {
	ds        *dataset.Dataset
	txn       *dataset.Txn
	ex        *dataset.Table[schema.Exchange]
	q         *dataset.Table[schema.Quarantine]
	exFiles   *[]string
	quarFiles *[]string
	kept      func(*Input)           // reports an input read in part whose earlier complete rows stay
	committed map[string]bool        // identities committed in this run
	ledger    func() ([]byte, error) // the run's ledger, written with the final commit
}

// openDataset opens (and locks) the dataset of cfg.OutDir and starts the
// run's transaction.
func openDataset(ctx context.Context, cfg Config, sum *Summary, kept func(*Input)) (Sink, error) {
	ds, err := dataset.Open(ctx, cfg.OutDir, dataset.Options{WaitLock: cfg.WaitLock})
	if err != nil {
		return nil, err
	}
	txn, err := ds.Begin("", cfg.Now())
	if err != nil {
		ds.Close()
		return nil, err
	}
	roll := cfg.Roll
	roll.RowGroupRows = cfg.RowGroupRows
	s := &datasetSink{ds: ds, txn: txn, exFiles: &sum.ExchangeFiles, quarFiles: &sum.QuarantineOut, committed: map[string]bool{}, kept: kept}
	s.ex = dataset.NewTable[schema.Exchange](txn, "exchanges", func(e *schema.Exchange) time.Time { return e.StartedAt }, roll)
	s.q = dataset.NewTable[schema.Quarantine](txn, "quarantine", func(q *schema.Quarantine) time.Time { return q.ObservedAt }, roll)
	return s, nil
}

func (s *datasetSink) WriteExchanges(_ context.Context, in *Input, rows []schema.Exchange) error {
	return s.ex.Write(dataset.Source{ID: in.ID}, rows)
}

func (s *datasetSink) WriteQuarantine(_ context.Context, in *Input, rows []schema.Quarantine) error {
	return s.q.Write(dataset.Source{ID: in.ID}, rows)
}

// Commit publishes the rows of the inputs named that were opened (an input a
// soft stop left unopened keeps what an earlier run wrote); the final commit
// then ends the run's transaction and releases the dataset.
func (s *datasetSink) Commit(_ context.Context, inputs []*Input, final bool) error {
	var states []dataset.SourceState
	seen := map[string]bool{}
	man := s.ds.Manifest()
	for _, in := range inputs {
		if !in.Opened.Load() || in.ID == "" || seen[in.ID] {
			continue
		}
		seen[in.ID] = true
		if final && !in.Finished.Load() && !s.committed[in.ID] {
			// Read in part (a stop): an earlier complete run of the same
			// input is worth more than fewer rows of this one.
			if e := man.Sources[in.ID]; e != nil && e.Complete {
				s.kept(in)
				continue
			}
		}
		s.committed[in.ID] = true
		states = append(states, dataset.SourceState{ID: in.ID, Complete: final && in.Finished.Load(),
			Position: dataset.Position{Unit: "record", Start: 1, End: in.commitAt.Load()}})
	}
	if final {
		// Merged rows of an earlier run that involved an input read now are
		// replaced too (by this run's merged rows, or by nothing), so a rerun
		// of one side never leaves a merged row beside its own new row.
		for _, id := range s.ds.Manifest().SourceIDs() {
			if seen[id] || !strings.HasPrefix(id, "merged:") {
				continue
			}
			for _, member := range strings.Split(strings.TrimPrefix(id, "merged:"), "\x00") {
				if seen[member] {
					seen[id] = true
					states = append(states, dataset.SourceState{ID: id, Complete: true})
					break
				}
			}
		}
	}
	files, err := s.txn.Commit(states)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := s.ds.Path(f.Path)
		switch f.Table {
		case "exchanges":
			*s.exFiles = append(*s.exFiles, p)
		case "quarantine":
			*s.quarFiles = append(*s.quarFiles, p)
		}
	}
	if !final {
		return nil
	}
	err = s.txn.Close()
	if err == nil && s.ledger != nil {
		var b []byte
		if b, err = s.ledger(); err == nil {
			err = s.ds.WriteLedger(b)
		}
	}
	return errors.Join(err, s.ds.Close())
}

func (s *datasetSink) Abort() {
	s.txn.Abort()
	s.ds.Close()
}
