package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/redact"
	"mcptrace/schema"
)

// memSink keeps every row and quarantine row a run writes.
type memSink struct {
	mu         sync.Mutex
	rows       []schema.Exchange
	quarantine []schema.Quarantine
}

func (s *memSink) WriteExchanges(_ context.Context, _ *Input, rows []schema.Exchange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, rows...)
	return nil
}

func (s *memSink) WriteQuarantine(_ context.Context, _ *Input, rows []schema.Quarantine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quarantine = append(s.quarantine, rows...)
	return nil
}

func (s *memSink) Commit(context.Context, []*Input, bool) error { return nil }
func (s *memSink) Abort()                                       {}

// FuzzIngest runs the whole pipeline (detection, decoding, correlation,
// classification, redaction) over any one input file, into memory:
//
//   - the run succeeds and its accounting balances (Summary.Balanced:
//     records read = observations + quarantined + skipped, every
//     observation correlated, every exchange written), and the sink got
//     exactly the rows and quarantine rows the summary counts;
//   - every quarantine row names the input, a line within it and a reason;
//   - the masked text columns hold no detector match (masking is a fixed
//     point);
//   - one worker and two give the same rows and the same quarantine rows.
func FuzzIngest(f *testing.F) {
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b[:min(len(b), 16<<10)])
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("not a log at all\n"))
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00}) // a gzip stream cut short
	pseud, err := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "input.log")
	now := func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 256<<10 {
			return
		}
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		run := func(workers int) (*Summary, *memSink) {
			sink := &memSink{}
			sum, err := Run(context.Background(), Config{Inputs: []string{path}, Workers: workers, Log: zerolog.Nop(),
				Pseudonyms: pseud, Now: now,
				newSink: func(context.Context, Config, *Summary, func(*Input)) (Sink, error) { return sink, nil }})
			if err != nil {
				t.Fatalf("workers %d: %v", workers, err)
			}
			if !sum.Balanced() {
				t.Fatalf("workers %d: the accounting does not balance: records %d = skipped %d + quarantined %d + observations %d; correlated %d; exchanges %d + merged %d = %d",
					workers, sum.Records, sum.SkippedTotal(), sum.Quarantined, sum.Observations, sum.Correlation.Observations, sum.Exchanges, sum.Merged, sum.Correlation.Exchanges)
			}
			if int64(len(sink.rows)) != sum.Exchanges || int64(len(sink.quarantine)) != sum.Quarantined {
				t.Fatalf("workers %d: %d rows and %d quarantine rows written, the summary says %d and %d",
					workers, len(sink.rows), len(sink.quarantine), sum.Exchanges, sum.Quarantined)
			}
			return sum, sink
		}
		sum, one := run(1)
		lines := int64(strings.Count(string(in), "\n") + 1)
		for _, q := range one.quarantine {
			if q.Reason == "" || q.Line < 0 || q.Line > max(lines, int64(len(in))) || !strings.HasSuffix(q.Source, "input.log") {
				t.Fatalf("quarantine row %+v for an input of %d bytes, %d lines", q, len(in), lines)
			}
		}
		for i := range one.rows {
			r := &one.rows[i]
			for name, v := range map[string]*string{"reason": &r.Reason, "error_message": r.ErrorMessage, "url": r.URL, "method": &r.Method, "tool_name": r.ToolName} {
				if v != nil && redact.Mask(*v) != *v {
					t.Fatalf("row %d: %s %q holds a detector match", i, name, *v)
				}
			}
		}
		sum2, two := run(2)
		byID := func(rows []schema.Exchange) []schema.Exchange {
			rows = slices.Clone(rows)
			slices.SortFunc(rows, func(a, b schema.Exchange) int { return strings.Compare(a.ExchangeID, b.ExchangeID) })
			return rows
		}
		if !reflect.DeepEqual(byID(one.rows), byID(two.rows)) || !reflect.DeepEqual(one.quarantine, two.quarantine) {
			t.Fatalf("one worker and two give other rows (%d and %d) or quarantine rows (%d and %d)",
				len(one.rows), len(two.rows), len(one.quarantine), len(two.quarantine))
		}
		if sum.Records != sum2.Records || sum.Observations != sum2.Observations || !reflect.DeepEqual(sum.ByOutcome, sum2.ByOutcome) {
			t.Fatalf("one worker and two count otherwise: %+v, %+v", sum, sum2)
		}
	})
}
