package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"mcptrace/decode"
	"mcptrace/redact"
	"mcptrace/schema"
)

// decoded is one part of a job's output. A job sends its parts in order on
// a channel of its own (closed when the job ends); the sequencer reads the
// jobs' channels in input order, so a job that runs ahead waits once its
// small channel is full, and memory stays bounded.
type decoded struct {
	format  string // set on the first part of a file
	obs     []*schema.Observation
	quar    []schema.Quarantine
	skipped map[string]int64
	records int64
	bytes   int64
}

// job is a unit of decoding work: a chunk of a line log, or a whole file of
// another format.
type job interface {
	sequence() int64
	run(ctx context.Context, out chan<- decoded, runTime time.Time) error
}

// handle is a running job's output, in the order jobs were cut.
type handle struct {
	seq   int64
	parts <-chan decoded
}

type lineItem struct {
	line   []byte // nil when too long or unreadable
	reason string // set when the reader already knows the record is bad
	detail string
	head   []byte // the start of a bad record, for its excerpt
	size   int64
	lineNo int64
}

// lineChunk is a run of whole wire-log lines.
type lineChunk struct {
	rd     *redact.Redactor
	seq    int64
	source string
	format string // set on the first chunk of a file
	items  []lineItem
}

func (c *lineChunk) sequence() int64 { return c.seq }

func (c *lineChunk) run(ctx context.Context, out chan<- decoded, runTime time.Time) error {
	d := decoded{format: c.format}
	for _, it := range c.items {
		d.records++
		d.bytes += it.size
		if it.reason != "" {
			d.quar = append(d.quar, quarantineRow(c.rd, c.source, it.lineNo, runTime, it.reason, it.detail, it.size, it.head))
			continue
		}
		if decode.IsBlank(it.line) {
			if d.skipped == nil {
				d.skipped = map[string]int64{}
			}
			d.skipped["blank"]++
			continue
		}
		o, err := decode.WireLine(it.line, schema.Position{Source: c.source, Line: it.lineNo})
		if err != nil {
			reason, detail := "decode_error", err.Error()
			var le *decode.LineError
			if errors.As(err, &le) {
				reason, detail = le.Reason, le.Detail
			}
			d.quar = append(d.quar, quarantineRow(c.rd, c.source, it.lineNo, runTime, reason, detail, it.size, it.line))
			continue
		}
		d.obs = append(d.obs, &o)
	}
	select {
	case out <- d:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// quarantineRow builds a quarantine row, redacted by the policy before it
// goes anywhere (the sink, or the log line that reports it).
func quarantineRow(rd *redact.Redactor, source string, line int64, runTime time.Time, reason, detail string, size int64, raw []byte) schema.Quarantine {
	q := schema.Quarantine{Source: source, Line: line, ObservedAt: runTime, Reason: reason, Detail: detail, Bytes: size,
		Excerpt: redact.ExcerptWith(raw, 480, rd.Stats)}
	rd.Required("quarantine.source", &q.Source)
	rd.Required("quarantine.detail", &q.Detail)
	rd.Required("quarantine.excerpt", &q.Excerpt)
	return q
}

// fileJob decodes a whole file with its format's decoder, streaming parts
// of its output as it goes.
type fileJob struct {
	rd      *redact.Redactor
	seq     int64
	maxLine int
	source  string
	format  decode.Format
	dec     decode.FileDecoder
	r       *countingReader
	close   func() error
}

const partObservations = 2048

func (f *fileJob) sequence() int64 { return f.seq }

func (f *fileJob) run(ctx context.Context, out chan<- decoded, runTime time.Time) error {
	defer f.close()
	em := &emitter{rd: f.rd, maxLine: f.maxLine, ctx: ctx, out: out, runTime: runTime, cur: decoded{format: string(f.format)}, src: f.r.src}
	err := f.dec(f.source, f.r, em)
	if em.err != nil {
		return em.err
	}
	if err != nil {
		// The reader failed (a corrupt compressed stream): what was decoded
		// stands, the failure is quarantined where it happened.
		em.Quarantine(schema.Position{Source: f.source, Line: em.records + 1}, decode.ReasonReadError,
			fmt.Sprintf("reading stopped: %v; the rest of the file was not read", err), nil)
	}
	// Drain what the decoder did not read, so byte counts are whole.
	io.Copy(io.Discard, f.r)
	em.cur.bytes = f.r.n
	return em.send()
}

// emitter collects a file decoder's output into parts.
type emitter struct {
	rd      *redact.Redactor
	maxLine int
	ctx     context.Context
	out     chan<- decoded
	runTime time.Time
	cur     decoded
	records int64
	src     *source
	err     error
}

func (e *emitter) count() {
	e.cur.records++
	e.records++
	e.src.records.Add(1)
}

func (e *emitter) Observation(o *schema.Observation) {
	e.count()
	e.cur.obs = append(e.cur.obs, o)
	if len(e.cur.obs) >= partObservations && e.err == nil {
		e.err = e.send()
	}
}

func (e *emitter) Quarantine(pos schema.Position, reason, detail string, raw []byte) {
	e.count()
	e.cur.quar = append(e.cur.quar, quarantineRow(e.rd, pos.Source, pos.Line, e.runTime, reason, detail, int64(len(raw)), raw))
	if len(e.cur.quar) >= partObservations && e.err == nil {
		e.err = e.send()
	}
}

// MaxLineBytes is the configured line limit (decode.LineLimiter).
func (e *emitter) MaxLineBytes() int { return e.maxLine }

func (e *emitter) Skip(pos schema.Position, why string) {
	e.count()
	if e.cur.skipped == nil {
		e.cur.skipped = map[string]int64{}
	}
	e.cur.skipped[why]++
}

func (e *emitter) send() error {
	select {
	case e.out <- e.cur:
		e.cur = decoded{}
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}
