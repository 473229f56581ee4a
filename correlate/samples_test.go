package correlate_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// The settings ingest runs with by default.
const (
	sampleIdle     = 30 * time.Minute
	sampleLateness = 10 * time.Minute
)

var updateToday = flag.Bool("update-today", false, "rewrite testdata/samples-verdicts.txt from one correlator per log (New)")

type sampleEmitter struct{ obs []*schema.Observation }

func (e *sampleEmitter) Observation(o *schema.Observation)                  { e.obs = append(e.obs, o) }
func (e *sampleEmitter) Quarantine(schema.Position, string, string, []byte) {}
func (e *sampleEmitter) Skip(schema.Position, string)                       {}

// sampleFiles lists the logs under samples/, in the order a walk gives
// them (as ingest reads a directory).
func sampleFiles(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) != ".md" && filepath.Ext(p) != ".go" {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) < 20 {
		t.Fatalf("samples: %d files, %v", len(files), err)
	}
	return files
}

// decodeSamples decodes files in order, undoing compression as ingest does.
func decodeSamples(t testing.TB, files []string) []*schema.Observation {
	var all []*schema.Observation
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader
		switch {
		case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
			r, err = gzip.NewReader(bytes.NewReader(b))
		case len(b) >= 4 && bytes.Equal(b[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
			r, err = zstd.NewReader(bytes.NewReader(b))
		case len(b) >= 2 && b[0] == 0x78 && (b[1] == 0x01 || b[1] == 0x5e || b[1] == 0x9c || b[1] == 0xda):
			r, err = zlib.NewReader(bytes.NewReader(b))
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if r != nil {
			if b, err = io.ReadAll(bufio.NewReader(r)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		format, ok := decode.Detect(b[:min(len(b), decode.SniffBytes)])
		if !ok {
			t.Fatalf("%s: no format detected", f)
		}
		dec, _ := decode.DecoderFor(format)
		e := &sampleEmitter{}
		if err := dec(f, bytes.NewReader(b), e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, e.obs...)
	}
	return all
}

// perLog correlates every log with a correlator of its own (New), as
// pipelines did before correlation was sharded by conversation, and returns
// the rows in the order they came out.
func perLog(obs []*schema.Observation) []schema.Exchange {
	cs := map[string]*correlate.Correlator{}
	var order []string
	var rows []schema.Exchange
	for _, o := range obs {
		k := correlate.LineageKey(o)
		c := cs[k]
		if c == nil {
			c = correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
			c.IdleTimeout, c.Lateness = sampleIdle, sampleLateness
			cs[k] = c
			order = append(order, k)
		}
		c.Add(o)
	}
	for _, k := range order {
		cs[k].Flush()
	}
	return rows
}

func optS(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func optB(p *bool) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func optF(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func optI(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// verdict is one row's verdict columns on one line: what correlation,
// linking and merging decide.
func verdict(r *schema.Exchange) string {
	return strings.Join([]string{r.ExchangeID, r.Sides, fmt.Sprintf("%s:%d", filepath.ToSlash(r.Source), r.SourceLine), r.Initiator, r.Method,
		optS(r.JSONRPCID), r.Outcome, r.Layer, r.RetryAdvice, optS(r.ErrorType),
		"retry=" + r.RetryOrigin, optS(r.RetryOf), optS(r.RetryBasis), optS(r.DuplicateOf), fmt.Sprint(r.RetryUnsafe), optF(r.RetryAfterS), optB(r.RetryAfterOK),
		"mrtr=" + optS(r.Continues), optI(r.MRTRRound), optS(r.ChainOutcome),
		fmt.Sprintf("posts=%d", r.PostCount), fmt.Sprint(r.HTTPStatuses),
		fmt.Sprintf("expired=%v", r.SessionExpired), optB(r.Reinitialized), fmt.Sprintf("late=%v/%v", r.Late, r.LateResponse), fmt.Sprint(r.Cancelled),
		"latency=" + optF(r.LatencyMS), "hop=" + r.FailedHop, optI(r.ClientPostCount), optI(r.ServerPostCount), optS(r.ServerOutcome),
		fmt.Sprint(r.ServerStatuses), optF(r.ClockSkewMS), optS(r.ClientName), optS(r.ProtocolVersion)}, " ")
}

// verdicts returns the sorted verdict lines of rows.
func verdicts(rows []schema.Exchange) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = verdict(&rows[i])
	}
	slices.Sort(out)
	return out
}

const todayFile = "testdata/samples-verdicts.txt"

// todayVerdicts reads the verdicts every sample had when correlation ran
// one correlator per log (written at commit c31c0cf by TestSamplesPerLog
// with -update-today), for the whole samples/ tree as one run: the rows of
// the correlators, then the rows merged (MergeViews).
func todayVerdicts(t *testing.T) (rows, merged []string) {
	b, err := os.ReadFile(todayFile)
	if err != nil {
		t.Fatal(err)
	}
	part := &rows
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case l == "# rows":
			part = &rows
		case l == "# merged":
			part = &merged
		case strings.HasPrefix(l, "#"):
		default:
			*part = append(*part, l)
		}
	}
	return rows, merged
}

// TestSamplesPerLog pins the verdicts of the per-log path (New, one
// correlator per log) to testdata/samples-verdicts.txt.
func TestSamplesPerLog(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	rows := perLog(obs)
	merged := correlate.MergeViews(append([]schema.Exchange(nil), rows...))
	if *updateToday {
		var b strings.Builder
		b.WriteString("# Verdicts of every sample (samples/ as one run, idle 30m, lateness 10m), one correlator per log.\n")
		b.WriteString("# Regenerate: go test ./correlate -run TestSamplesPerLog -update-today\n# rows\n")
		for _, l := range verdicts(rows) {
			b.WriteString(l + "\n")
		}
		b.WriteString("# merged\n")
		for _, l := range verdicts(merged) {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(todayFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantRows, wantMerged := todayVerdicts(t)
	diffLines(t, "per-log rows", verdicts(rows), wantRows)
	diffLines(t, "per-log merged", verdicts(merged), wantMerged)
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: nothing to compare with", what)
	}
	g, w := map[string]bool{}, map[string]bool{}
	for _, l := range got {
		g[l] = true
	}
	for _, l := range want {
		w[l] = true
	}
	n := 0
	for _, l := range want {
		if !g[l] && n < 10 {
			t.Errorf("%s: missing  %s", what, l)
			n++
		}
	}
	for _, l := range got {
		if !w[l] && n < 20 {
			t.Errorf("%s: unexpected %s", what, l)
			n++
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
}
