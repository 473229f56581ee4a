package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Config says what to read, where to write and how.
type Config struct {
	Inputs []string // files, directories, glob patterns, "-" for standard input
	Format string   // force this format for every input; "" detects each by content
	// Merge says whether client-side and server-side rows of the same
	// exchanges are merged: "on", "off", or "auto" ("" too): on when the
	// inputs hold logs of both sides. Merging holds the rows (never the
	// bodies) of the run in memory until the end.
	Merge        string
	OutDir       string
	Workers      int   // decode workers and correlator shards; 0: GOMAXPROCS
	MaxLineBytes int   // longer lines are quarantined; 0: 16 MiB
	RowGroupRows int64 // rows per Parquet row group; 0: 65,536
	// IdleTimeout ends a conversation idle this long in event time;
	// Lateness flags exchanges of observations this far behind the newest
	// (see correlate.Correlator). 0 leaves each off.
	IdleTimeout, Lateness time.Duration
	Pseudonyms            *redact.Pseudonymizer
	Policy                *redact.Policy // nil: redact.DefaultPolicy()
	Log                   zerolog.Logger
	// Progress, when set, receives a progress line every ProgressEvery.
	Progress      func(p Progress)
	ProgressEvery time.Duration
	// Now gives the run's clock (quarantine rows record when they were seen).
	Now func() time.Time
}

// Progress is a snapshot of a running ingest.
type Progress struct {
	Records, Bytes int64
	Elapsed        time.Duration
}

// Summary is what a run did. Records = Skipped + Quarantined + Observations,
// where a record is a line of a line-oriented log, an entry of a JSON
// document (a HAR entry, a span), or a whole file that matched no format.
type Summary struct {
	Files         []string
	ByFormat      map[string]int // files per detected format
	Records       int64
	Bytes         int64
	Skipped       map[string]int64 // records deliberately not used, by why (blank, lifecycle, ...)
	Observations  int64
	Quarantined   int64
	ByReason      map[string]int64
	Exchanges     int64
	ByOutcome     map[string]int64
	Correlation   correlate.Stats
	FalseSuccess  int64            // HTTP 2xx on the final attempt but not a success outcome
	Redactions    map[string]int64 // values each detector rule replaced (never the values)
	Merging       bool             // client and server views were merged
	Merged        int64            // pairs of rows merged into one
	ExchangeFiles []string
	QuarantineOut []string
	Elapsed       time.Duration
}

// Balanced reports whether every line is accounted for, every observation
// reached a correlator, and every exchange the correlators formed was written.
func (s *Summary) Balanced() bool {
	return s.Records == s.SkippedTotal()+s.Quarantined+s.Observations && s.Observations == s.Correlation.Observations &&
		s.Exchanges+s.Merged == s.Correlation.Exchanges
}

// SkippedTotal is the number of records skipped on purpose.
func (s *Summary) SkippedTotal() int64 {
	var n int64
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// Run ingests cfg.Inputs and writes the dataset. An input that is missing or
// unreadable is an error before anything is written; bad lines are
// quarantined and the run goes on.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	start := time.Now()
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = 16 << 20
	}
	if cfg.RowGroupRows <= 0 {
		cfg.RowGroupRows = 65536
	}
	if cfg.Pseudonyms == nil {
		cfg.Pseudonyms = redact.RandomPseudonymizer()
	}
	if cfg.Policy == nil {
		cfg.Policy = redact.DefaultPolicy()
	}
	rd := &redact.Redactor{Policy: cfg.Policy, Pseud: cfg.Pseudonyms, Stats: &redact.Stats{}}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	files, err := ExpandInputs(cfg.Inputs)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no input files found in %s", strings.Join(cfg.Inputs, ", "))
	}
	if cfg.Format != "" {
		if _, ok := decode.DecoderFor(decode.Format(cfg.Format)); !ok {
			return nil, fmt.Errorf("unknown format %q: use one of %v", cfg.Format, decode.Formats())
		}
	}
	merging, err := mergeWanted(cfg, files)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Merging: merging, Files: files, ByFormat: map[string]int{}, Skipped: map[string]int64{}, ByReason: map[string]int64{}, ByOutcome: map[string]int64{}}
	name := datasetName(files)
	runTime := cfg.Now().UTC()

	exSink := newParquetSink[schema.Exchange](cfg.OutDir, "exchanges", name, cfg.RowGroupRows,
		func(e *schema.Exchange) time.Time { return e.StartedAt })
	qSink := newParquetSink[schema.Quarantine](cfg.OutDir, "quarantine", name, cfg.RowGroupRows,
		func(q *schema.Quarantine) time.Time { return q.ObservedAt })

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}

	jobs := make(chan job, cfg.Workers*2)
	results := make(chan handle, cfg.Workers*2)
	src := &source{cfg: &cfg, jobs: jobs, runTime: runTime, rd: rd}

	// Source: one goroutine opens inputs in order, detects each format, and
	// cuts line logs into chunks; other formats become one job per file.
	go func() {
		defer close(jobs)
		for _, path := range files {
			if err := src.read(ctx, path); err != nil {
				if ctx.Err() != nil {
					return
				}
				fail(err)
				return
			}
		}
	}()

	// Decode: fan out over the cores.
	var dwg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		dwg.Add(1)
		go func() {
			defer dwg.Done()
			for j := range jobs {
				// Announce the job's output channel first: jobs are taken in
				// order, so the one the sequencer waits for is always running.
				parts := make(chan decoded, 4)
				select {
				case results <- handle{seq: j.sequence(), parts: parts}:
				case <-ctx.Done():
					return
				}
				err := j.run(ctx, parts, runTime)
				close(parts)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return
				}
			}
		}()
	}
	go func() { dwg.Wait(); close(results) }()

	// Correlate, classify and redact: one shard per worker.
	shardIn := make([]chan []*schema.Observation, cfg.Workers)
	rowsOut := make(chan []schema.Exchange, cfg.Workers*2)
	shardStats := make([]correlate.Stats, cfg.Workers)
	var swg sync.WaitGroup
	for i := range shardIn {
		shardIn[i] = make(chan []*schema.Observation, 4)
		swg.Add(1)
		go func(i int) {
			defer swg.Done()
			var batch []schema.Exchange
			c := correlate.New(func(e *schema.Exchange) {
				if merging {
					batch = append(batch, *e) // redacted after the merge
				} else {
					batch = append(batch, RedactExchange(*e, rd))
				}
			})
			c.IdleTimeout, c.Lateness = cfg.IdleTimeout, cfg.Lateness
			flush := func() {
				if len(batch) > 0 {
					select {
					case rowsOut <- batch:
					case <-ctx.Done():
					}
					batch = nil
				}
			}
			for obs := range shardIn[i] {
				for _, o := range obs {
					c.Add(o)
				}
				if len(batch) >= 1024 {
					flush()
				}
			}
			c.Flush()
			flush()
			shardStats[i] = c.Stats
		}(i)
	}
	go func() { swg.Wait(); close(rowsOut) }()

	// Sequencer: restore input order and route by conversation.
	quarRows := make(chan []schema.Quarantine, 16)
	go func() {
		defer func() {
			for _, ch := range shardIn {
				close(ch)
			}
			close(quarRows)
		}()
		var seed = maphash.MakeSeed()
		pending := map[int64]handle{} // jobs announced before their turn
		var next int64
		for h := range results {
			pending[h.seq] = h
			for {
				h, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				for d := range h.parts {
					if d.format != "" {
						sum.ByFormat[d.format]++
					}
					sum.Records += d.records
					sum.Bytes += d.bytes
					for k, v := range d.skipped {
						sum.Skipped[k] += v
					}
					sum.Observations += int64(len(d.obs))
					if len(d.quar) > 0 {
						for _, q := range d.quar {
							sum.ByReason[q.Reason]++
						}
						sum.Quarantined += int64(len(d.quar))
						select {
						case quarRows <- d.quar:
						case <-ctx.Done():
							return
						}
					}
					routed := make([][]*schema.Observation, cfg.Workers)
					for _, o := range d.obs {
						s := maphash.String(seed, correlate.LineageKey(o)) % uint64(cfg.Workers)
						routed[s] = append(routed[s], o)
					}
					for s, r := range routed {
						if len(r) == 0 {
							continue
						}
						select {
						case shardIn[s] <- r:
						case <-ctx.Done():
							return
						}
					}
				}
			}
		}
	}()

	// Sinks: exchanges and quarantine, written from this goroutine.
	var ticker <-chan time.Time
	if cfg.Progress != nil {
		every := cfg.ProgressEvery
		if every <= 0 {
			every = time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		ticker = t.C
	}
	var held []schema.Exchange // rows kept for the merge
	writeRows := func(rows []schema.Exchange) error {
		for i := range rows {
			sum.ByOutcome[rows[i].Outcome]++
			if falseSuccess(&rows[i]) {
				sum.FalseSuccess++
			}
		}
		sum.Exchanges += int64(len(rows))
		return exSink.Write(rows)
	}
	for rowsOut != nil || quarRows != nil {
		select {
		case rows, ok := <-rowsOut:
			if !ok {
				rowsOut = nil
				continue
			}
			if merging {
				held = append(held, rows...)
				continue
			}
			if err := writeRows(rows); err != nil {
				fail(err)
			}
		case q, ok := <-quarRows:
			if !ok {
				quarRows = nil
				continue
			}
			for i := range q {
				cfg.Log.Warn().Str("source", q[i].Source).Int64("line", q[i].Line).Str("reason", q[i].Reason).
					Str("detail", q[i].Detail).Msg("record quarantined")
			}
			if err := qSink.Write(q); err != nil {
				fail(err)
			}
		case <-ticker:
			cfg.Progress(Progress{Records: src.records.Load(), Bytes: src.bytes.Load(), Elapsed: time.Since(start)})
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		exSink.Abort()
		qSink.Abort()
		return sum, firstErr
	}
	for _, st := range shardStats {
		sum.Correlation.Add(st)
	}
	if merging {
		before := len(held)
		merged := correlate.MergeViews(held)
		sum.Merged = int64(before - len(merged))
		for i := range merged {
			merged[i] = RedactExchange(merged[i], rd)
		}
		if err := writeRows(merged); err != nil {
			exSink.Abort()
			qSink.Abort()
			return sum, err
		}
	}
	var err1, err2 error
	sum.ExchangeFiles, err1 = exSink.Close()
	sum.QuarantineOut, err2 = qSink.Close()
	sum.Redactions = rd.Stats.Counts()
	sum.Elapsed = time.Since(start)
	return sum, errors.Join(err1, err2)
}

// falseSuccess: the HTTP status said 2xx but the exchange did not succeed.
func falseSuccess(e *schema.Exchange) bool {
	n := len(e.HTTPStatuses)
	if n == 0 || e.HTTPStatuses[n-1] < 200 || e.HTTPStatuses[n-1] > 299 {
		return false
	}
	return e.Outcome != "TOOL_SUCCESS" && e.Outcome != "SUCCESS"
}

func datasetName(files []string) string {
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f)
		h.Write([]byte{0})
	}
	return "part-" + hex.EncodeToString(h.Sum(nil)[:6])
}

// RedactExchange applies the redaction policy to one row, before anything
// is written: every text field that can carry input is kept, pseudonymized,
// masked, truncated or dropped as the policy says; tool arguments become a
// keyed hash and, if the policy keeps it, their shape; the arguments
// themselves are never written.
func RedactExchange(e schema.Exchange, rd *redact.Redactor) schema.Exchange {
	rd.Optional("exchanges.session_id", &e.SessionID)
	rd.Required("exchanges.source", &e.Source)
	rd.Optional("exchanges.client_name", &e.ClientName)
	rd.Optional("exchanges.client_version", &e.ClientVersion)
	rd.Optional("exchanges.server_name", &e.ServerName)
	rd.Optional("exchanges.server_version", &e.ServerVersion)
	rd.Required("exchanges.method", &e.Method)
	rd.Optional("exchanges.tool_name", &e.ToolName)
	rd.Optional("exchanges.jsonrpc_id", &e.JSONRPCID)
	if e.URL != nil && rd.Policy.Action("exchanges.url").Kind != redact.Keep {
		u := redact.SanitizeURL(*e.URL, rd.Pseud, rd.Stats)
		e.URL = &u
	}
	rd.Optional("exchanges.url", &e.URL)
	rd.Optional("exchanges.content_type", &e.ContentType)
	rd.Optional("exchanges.protocol_version", &e.ProtocolVersion)
	rd.Optional("exchanges.result_type", &e.ResultType)
	rd.Optional("exchanges.error_message", &e.ErrorMessage)
	rd.Optional("exchanges.error_data", &e.ErrorData)
	rd.Optional("exchanges.error_type", &e.ErrorType)
	rd.Optional("exchanges.tool_error_text", &e.ToolErrorText)
	rd.Required("exchanges.reason", &e.Reason)
	rd.Optional("exchanges.retry_after", &e.RetryAfter)
	rd.Optional("exchanges.scenario", &e.Scenario)
	if e.Arguments != nil {
		h := rd.Pseud.HashJSON(e.Arguments)
		e.ArgumentsHash = &h
		sh := redact.Shape(e.Arguments, rd.Stats)
		e.ArgumentsShape = &sh
		rd.Optional("exchanges.arguments_shape", &e.ArgumentsShape)
		e.Arguments = nil
	}
	return e
}

// Outcomes returns the outcome counts in a stable order.
func (s *Summary) Outcomes() []struct {
	Outcome string
	Count   int64
} {
	var out []struct {
		Outcome string
		Count   int64
	}
	for k, v := range s.ByOutcome {
		out = append(out, struct {
			Outcome string
			Count   int64
		}{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Outcome < out[j].Outcome
	})
	return out
}
