package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"mcptrace/pipeline"
	"mcptrace/schema"
)

// fuzzCorpusInputs writes every []byte and string argument of every entry
// of the repository's fuzz corpora (testdata/fuzz, the crashers kept) to a
// file of its own under dir, and returns their paths.
func fuzzCorpusInputs(t *testing.T, dir string) []string {
	t.Helper()
	var entries []string
	for _, pat := range []string{"../*/testdata/fuzz/*/*", "../*/*/testdata/fuzz/*/*"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, m...)
	}
	var paths []string
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for n := 0; sc.Scan(); n++ {
			line := sc.Text()
			var lit string
			switch {
			case strings.HasPrefix(line, "[]byte(") && strings.HasSuffix(line, ")"):
				lit = line[len("[]byte(") : len(line)-1]
			case strings.HasPrefix(line, "string(") && strings.HasSuffix(line, ")"):
				lit = line[len("string(") : len(line)-1]
			default:
				continue
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			p := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", filepath.Base(filepath.Dir(e)), filepath.Base(e), n))
			if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	return paths
}

// The ledger balances for every input of every sample, every hostile-input
// file and every fuzz corpus entry: each input's records are its
// observations, quarantined and skipped records (each by reason), the
// totals are their sums and the summary's, and the file in the dataset is
// what the run returned.
func TestLedgerBalancesForEveryInput(t *testing.T) {
	corpus := fuzzCorpusInputs(t, t.TempDir())
	runs := map[string][]string{"samples": {"../samples"}, "hostile": {"../samples/hostile"}}
	if len(corpus) > 0 {
		runs["fuzz corpora"] = corpus
	}
	t.Logf("%d fuzz corpus entries", len(corpus))
	for name, inputs := range runs {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: inputs, OutDir: out, Pseudonyms: testKey(t), Workers: 2, Log: zerolog.Nop()})
			if err != nil {
				t.Fatalf("ingest %s: %v", name, err)
			}
			l := sum.Ledger
			if !l.Balanced || !l.Complete || l.Version != schema.LedgerVersion {
				t.Errorf("ledger: balanced %v, complete %v, version %d", l.Balanced, l.Complete, l.Version)
			}
			if len(l.Inputs) != len(sum.Files) || len(l.Inputs) == 0 {
				t.Fatalf("%d inputs in the ledger, %d read", len(l.Inputs), len(sum.Files))
			}
			var total schema.LedgerCounts
			for _, in := range l.Inputs {
				if !in.Balanced() {
					t.Errorf("%s: %d records = %d observations + %d quarantined %v + %d skipped %v does not hold", in.Name, in.Records, in.Observations, in.Quarantined, in.QuarantinedBy, in.Skipped, in.SkippedBy)
				}
				total.Add(&in.LedgerCounts)
			}
			if total.Records != sum.Records || total.Observations != sum.Observations || total.Quarantined != sum.Quarantined || total.Skipped != sum.SkippedTotal() {
				t.Errorf("the inputs' lines add up to %+v; the summary says %d records, %d observations, %d quarantined, %d skipped", total, sum.Records, sum.Observations, sum.Quarantined, sum.SkippedTotal())
			}
			if l.Totals.Records != sum.Records || l.Out.Exchanges != sum.Exchanges || l.Out.QuarantineRows != sum.Quarantined || l.Out.Notifications != sum.Correlation.Notifications {
				t.Errorf("ledger totals %+v and out %+v differ from the summary", l.Totals, l.Out)
			}
			for k, v := range sum.ByReason {
				if l.Totals.QuarantinedBy[k] != v {
					t.Errorf("quarantined %s: ledger %d, summary %d", k, l.Totals.QuarantinedBy[k], v)
				}
			}
			b, err := os.ReadFile(filepath.Join(out, ".mcptrace", "ledger.json"))
			if err != nil {
				t.Fatalf("the dataset has no ledger: %v", err)
			}
			var file schema.Ledger
			if err := json.Unmarshal(b, &file); err != nil {
				t.Fatalf("ledger.json: %v", err)
			}
			file.EndedAt, l.EndedAt = l.StartedAt, l.StartedAt // written at the commit, returned after it
			fb, _ := json.Marshal(file)
			lb, _ := json.Marshal(l)
			if !bytes.Equal(fb, lb) {
				t.Errorf("ledger.json differs from the run's ledger:\n%s\n%s", fb, lb)
			}
			if name == "hostile" && l.Totals.Quarantined == 0 {
				t.Error("the hostile inputs quarantined nothing: the test proves less than it says")
			}
		})
	}
}
