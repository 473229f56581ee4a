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
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Config says what to read, where to write and how.
type Config struct {
	Inputs       []string // files and directories
	OutDir       string
	Workers      int   // decode workers and correlator shards; 0: GOMAXPROCS
	MaxLineBytes int   // longer lines are quarantined; 0: 16 MiB
	RowGroupRows int64 // rows per Parquet row group; 0: 65,536
	Pseudonyms   *redact.Pseudonymizer
	Log          zerolog.Logger
	// Progress, when set, receives a progress line every ProgressEvery.
	Progress      func(p Progress)
	ProgressEvery time.Duration
	// Now gives the run's clock (quarantine rows record when they were seen).
	Now func() time.Time
}

// Progress is a snapshot of a running ingest.
type Progress struct {
	Lines, Bytes int64
	Elapsed      time.Duration
}

// Summary is what a run did. Lines = Blank + Quarantined + Observations.
type Summary struct {
	Files         []string
	Lines         int64
	Bytes         int64
	Blank         int64
	Observations  int64
	Quarantined   int64
	ByReason      map[string]int64
	Exchanges     int64
	ByOutcome     map[string]int64
	Correlation   correlate.Stats
	FalseSuccess  int64 // HTTP 2xx on the final attempt but not a success outcome
	ExchangeFiles []string
	QuarantineOut []string
	Elapsed       time.Duration
}

// Balanced reports whether every line is accounted for, every observation
// reached a correlator, and every exchange the correlators formed was written.
func (s *Summary) Balanced() bool {
	return s.Lines == s.Blank+s.Quarantined+s.Observations && s.Observations == s.Correlation.Observations &&
		s.Exchanges == s.Correlation.Exchanges
}

type lineItem struct {
	line   []byte // nil when too long or unreadable
	reason string // set when the reader already knows the line is bad
	detail string
	head   []byte // the start of a bad line, for its excerpt
	size   int64
	lineNo int64
}

type chunk struct {
	seq    int64
	source string
	items  []lineItem
}

type decoded struct {
	seq   int64
	obs   []*schema.Observation
	quar  []schema.Quarantine
	blank int64
	lines int64
	bytes int64
}

const chunkLines = 2048
const chunkBytes = 4 << 20

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
	sum := &Summary{Files: files, ByReason: map[string]int64{}, ByOutcome: map[string]int64{}}
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

	chunks := make(chan chunk, cfg.Workers*2)
	results := make(chan decoded, cfg.Workers*2)
	var linesRead, bytesRead atomic.Int64

	// Source: one goroutine reads files in order and cuts them into chunks.
	go func() {
		defer close(chunks)
		var seq int64
		for _, path := range files {
			if err := readFile(ctx, path, cfg.MaxLineBytes, &seq, chunks, &linesRead, &bytesRead); err != nil {
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
			for c := range chunks {
				d := decodeChunk(c, runTime)
				select {
				case results <- d:
				case <-ctx.Done():
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
				batch = append(batch, RedactExchange(*e, cfg.Pseudonyms))
			})
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
		pending := map[int64]decoded{}
		var next int64
		for d := range results {
			pending[d.seq] = d
			for {
				d, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				sum.Lines += d.lines
				sum.Bytes += d.bytes
				sum.Blank += d.blank
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
					s := maphash.String(seed, correlate.ConversationKey(o)) % uint64(cfg.Workers)
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
	for rowsOut != nil || quarRows != nil {
		select {
		case rows, ok := <-rowsOut:
			if !ok {
				rowsOut = nil
				continue
			}
			for i := range rows {
				sum.ByOutcome[rows[i].Outcome]++
				if falseSuccess(&rows[i]) {
					sum.FalseSuccess++
				}
			}
			sum.Exchanges += int64(len(rows))
			if err := exSink.Write(rows); err != nil {
				fail(err)
			}
		case q, ok := <-quarRows:
			if !ok {
				quarRows = nil
				continue
			}
			for i := range q {
				cfg.Log.Warn().Str("source", q[i].Source).Int64("line", q[i].Line).Str("reason", q[i].Reason).
					Str("detail", q[i].Detail).Msg("line quarantined")
			}
			if err := qSink.Write(q); err != nil {
				fail(err)
			}
		case <-ticker:
			cfg.Progress(Progress{Lines: linesRead.Load(), Bytes: bytesRead.Load(), Elapsed: time.Since(start)})
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
	var err1, err2 error
	sum.ExchangeFiles, err1 = exSink.Close()
	sum.QuarantineOut, err2 = qSink.Close()
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

func readFile(ctx context.Context, path string, maxLine int, seq *int64, out chan<- chunk, lines, bytes *atomic.Int64) error {
	r, closeFn, err := openInput(path)
	var ce *corruptError
	if errors.As(err, &ce) {
		lines.Add(1)
		select {
		case out <- chunk{seq: *seq, source: path, items: []lineItem{{reason: decode.ReasonReadError, lineNo: 1,
			detail: ce.Error() + "; the file was skipped"}}}:
			*seq++
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	defer closeFn()
	lr := decode.NewLineReader(r, maxLine)
	c := chunk{seq: *seq, source: path}
	size := 0
	send := func() bool {
		if len(c.items) == 0 {
			return true
		}
		select {
		case out <- c:
		case <-ctx.Done():
			return false
		}
		*seq++
		c = chunk{seq: *seq, source: path}
		size = 0
		return true
	}
	for {
		line, tooLong, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A read error (a corrupt gzip stream, say) ends this file; it is
			// quarantined at the line where it happened and the run goes on.
			c.items = append(c.items, lineItem{reason: decode.ReasonReadError, lineNo: lr.LineNo() + 1,
				detail: fmt.Sprintf("reading stopped: %v; the rest of the file was not read", err)})
			lines.Add(1)
			break
		}
		lines.Add(1)
		it := lineItem{lineNo: lr.LineNo()}
		if tooLong {
			it.reason = decode.ReasonLineTooLong
			it.size = lr.TooLongSize()
			it.detail = lr.TooLongDetail()
			it.head = append([]byte(nil), lr.Head()...)
		} else {
			it.line = append([]byte(nil), line...)
			it.size = int64(len(line)) + 1
		}
		bytes.Add(it.size)
		c.items = append(c.items, it)
		size += len(it.line)
		if len(c.items) >= chunkLines || size >= chunkBytes {
			if !send() {
				return ctx.Err()
			}
		}
	}
	if !send() {
		return ctx.Err()
	}
	return nil
}

func decodeChunk(c chunk, runTime time.Time) decoded {
	d := decoded{seq: c.seq}
	for _, it := range c.items {
		d.lines++
		d.bytes += it.size
		if it.reason != "" {
			d.quar = append(d.quar, schema.Quarantine{Source: c.source, Line: it.lineNo, ObservedAt: runTime,
				Reason: it.reason, Detail: redact.Mask(it.detail), Bytes: it.size, Excerpt: redact.Excerpt(it.head, 160)})
			continue
		}
		if decode.IsBlank(it.line) {
			d.blank++
			continue
		}
		o, err := decode.WireLine(it.line, schema.Position{Source: c.source, Line: it.lineNo})
		if err != nil {
			reason, detail := "decode_error", err.Error()
			var le *decode.LineError
			if errors.As(err, &le) {
				reason, detail = le.Reason, le.Detail
			}
			d.quar = append(d.quar, schema.Quarantine{Source: c.source, Line: it.lineNo, ObservedAt: runTime,
				Reason: reason, Detail: redact.Mask(detail), Bytes: it.size, Excerpt: redact.Excerpt(it.line, 160)})
			continue
		}
		d.obs = append(d.obs, &o)
	}
	return d
}

// RedactExchange applies the output policy to one row: the session id
// becomes a keyed pseudonym and free text is masked.
func RedactExchange(e schema.Exchange, p *redact.Pseudonymizer) schema.Exchange {
	if e.SessionID != nil {
		s := p.Pseudonym(*e.SessionID)
		e.SessionID = &s
	}
	if e.ErrorMessage != nil {
		s := redact.Mask(*e.ErrorMessage)
		e.ErrorMessage = &s
	}
	e.Reason = redact.Mask(e.Reason)
	if e.ToolName != nil {
		s := redact.Mask(*e.ToolName)
		e.ToolName = &s
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
