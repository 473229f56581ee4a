package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"mcptrace/decode"
	"mcptrace/redact"
	"mcptrace/schema"
)

// decoded is one part of a unit's output. A unit's parts go, in order, on a
// channel of its own (closed when the unit is decoded); the sequencer reads
// the units' channels in run order, so a unit that runs ahead waits once
// its small channel is full, and memory stays bounded.
type decoded struct {
	obs     []*schema.Observation
	quar    []schema.Quarantine
	skipped map[string]int64
	records int64
	bytes   int64
}

// handle is a unit being decoded: its output, in the order units were cut.
type handle struct {
	unit  *Unit
	parts <-chan decoded
}

type lineItem struct {
	line []byte    // nil when too long or unreadable
	slab *lineSlab // what line is a slice of (nil: an allocation of its own)
	// release frees a long line held outside the heap (decode.Line.Release),
	// nil otherwise.
	release func()
	reason  string // set when the reader already knows the record is bad
	detail  string
	head    []byte // the start of a bad record, for its excerpt
	size    int64
	lineNo  int64
}

// decoder is the decode stage: it turns units into observations,
// quarantine rows and skips.
type decoder struct {
	rd      *redact.Redactor
	runTime time.Time
	stop    <-chan struct{} // closed on a soft stop: file decoders end early
	stats   *progressCounters
	// For Kafka messages, which carry no file of their own.
	format  string // -format, "" detects each message
	maxLine int
	maxDoc  int64
	limits  decode.Limits // record limits (-max-body, -max-sse-events)
}

func (d *decoder) run(ctx context.Context, u *Unit, out chan<- decoded) error {
	switch {
	case u.note != nil:
		return d.lines(ctx, u, []lineItem{*u.note}, out)
	case u.file != nil:
		return d.file(ctx, u, out)
	case u.msgs != nil:
		return d.messages(ctx, u, out)
	default:
		// The lines are done with once decoded: their slabs are reused
		// while the observations go on.
		err := d.lines(ctx, u, u.lines, out)
		releaseLines(u.lines)
		reuseItems(u.lines)
		u.lines = nil
		return err
	}
}

// lines decodes a chunk of a wire log.
func (d *decoder) lines(ctx context.Context, u *Unit, items []lineItem, out chan<- decoded) error {
	src := u.Input.Name
	p := decoded{}
	for _, it := range items {
		p.records++
		p.bytes += it.size
		if it.reason != "" {
			p.quar = append(p.quar, quarantineRow(d.rd, src, it.lineNo, d.runTime, it.reason, it.detail, it.size, it.head))
			continue
		}
		if decode.IsBlank(it.line) {
			if p.skipped == nil {
				p.skipped = map[string]int64{}
			}
			p.skipped["blank"]++
			continue
		}
		o, reason, detail := wireRecordWith(it.line, schema.Position{Source: src, Line: it.lineNo}, d.limits)
		if reason != "" {
			p.quar = append(p.quar, quarantineRow(d.rd, src, it.lineNo, d.runTime, reason, detail, it.size, it.line))
			continue
		}
		p.obs = append(p.obs, o)
	}
	select {
	case out <- p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wireDecoders are the decode workers' one-pass wire decoders (scratch
// memory reused from line to line); they fold runs of notifications on
// event streams, which the correlator counts.
var wireDecoders = sync.Pool{New: func() any {
	d := decode.NewWireDecoder()
	d.Fold = true
	return d
}}

// wireRecord decodes one wire-log line with the default record limits, or
// says why it is quarantined.
func wireRecord(line []byte, pos schema.Position) (o *schema.Observation, reason, detail string) {
	return wireRecordWith(line, pos, decode.Limits{})
}

// wireRecordWith decodes one wire-log line within the record limits lim, or
// says why it is quarantined.
func wireRecordWith(line []byte, pos schema.Position, lim decode.Limits) (o *schema.Observation, reason, detail string) {
	d := wireDecoders.Get().(*decode.WireDecoder)
	d.Limits = lim
	ob, err := d.Line(line, pos)
	d.Limits = decode.Limits{}
	wireDecoders.Put(d)
	if err != nil {
		reason, detail = "decode_error", err.Error()
		var le *decode.LineError
		if errors.As(err, &le) {
			reason, detail = le.Reason, le.Detail
		}
		return nil, reason, detail
	}
	return ob, "", ""
}

// quarantineRow builds a quarantine row, redacted by the policy before it
// goes anywhere (the sink, or the log line that reports it).
func quarantineRow(rd *redact.Redactor, source string, line int64, runTime time.Time, reason, detail string, size int64, raw []byte) schema.Quarantine {
	q := schema.Quarantine{Source: source, Line: line, ObservedAt: runTime, Reason: reason, Detail: detail, Bytes: size}
	if reason == ReasonUnknownFormat {
		// A whole file (or message) that is no log: perhaps a .pgpass or
		// a .env that sat in the walked directory.
		q.Excerpt = redact.FileExcerpt(source, raw, 480, rd.Stats)
	} else {
		q.Excerpt = redact.ExcerptWith(raw, 480, rd.Stats)
	}
	rd.Required("quarantine.source", &q.Source)
	rd.Required("quarantine.detail", &q.Detail)
	rd.Required("quarantine.excerpt", &q.Excerpt)
	return q
}

// fileJob is a whole input for its format's decoder.
type fileJob struct {
	maxLine int
	maxDoc  int64
	in      *Input
	format  decode.Format
	dec     decode.FileDecoder
	r       *countingReader
	close   func() error
}

const partObservations = 2048

// file decodes a whole input with its format's decoder, streaming parts of
// its output as it goes.
func (d *decoder) file(ctx context.Context, u *Unit, out chan<- decoded) error {
	f := u.file
	defer f.close()
	em := &emitter{d: d, in: f.in, maxLine: f.maxLine, maxDoc: f.maxDoc, ctx: ctx, out: out}
	err := f.dec(f.in.Name, f.r, em)
	if em.err != nil {
		return em.err
	}
	switch {
	case errors.Is(err, decode.ErrStopped) || em.Stopped():
		// A soft stop: what was decoded stands, the rest is not read.
	case errors.Is(err, decode.ErrLimit):
		// The decoder quarantined the record that ran past the limit; the
		// rest of the input (perhaps endless) is not read.
		f.in.Finished.Store(true)
	case err != nil:
		// The reader failed (a corrupt compressed stream): what was decoded
		// stands, the failure is quarantined where it happened.
		em.Quarantine(schema.Position{Source: f.in.Name, Line: em.records + 1}, decode.ReasonReadError,
			fmt.Sprintf("reading stopped: %v; the rest of the input was not read", err), nil)
		f.in.Finished.Store(true)
	default:
		// Drain what the decoder did not read, so byte counts are whole.
		io.Copy(io.Discard, f.r)
		f.in.Finished.Store(true)
	}
	em.cur.bytes = f.r.n
	u.Last = max(em.records, 1)
	return em.send()
}

// emitter collects a file decoder's output into parts.
type emitter struct {
	d       *decoder
	in      *Input
	maxLine int
	maxDoc  int64
	ctx     context.Context
	out     chan<- decoded
	cur     decoded
	records int64
	err     error
}

func (e *emitter) count() {
	e.cur.records++
	e.records++
	e.d.stats.records.Add(1)
	e.in.Records.Add(1)
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
	e.cur.quar = append(e.cur.quar, quarantineRow(e.d.rd, pos.Source, pos.Line, e.d.runTime, reason, detail, int64(len(raw)), raw))
	if len(e.cur.quar) >= partObservations && e.err == nil {
		e.err = e.send()
	}
}

// MaxLineBytes is the configured line limit (decode.LineLimiter).
func (e *emitter) MaxLineBytes() int { return e.maxLine }

// MaxDocumentBytes is the configured document limit (decode.DocumentLimiter).
func (e *emitter) MaxDocumentBytes() int64 { return e.maxDoc }

// RecordLimits are the configured record limits (decode.RecordLimiter).
func (e *emitter) RecordLimits() decode.Limits { return e.d.limits }

// Stopped reports a soft stop or a cancelled run: the decoder ends early.
func (e *emitter) Stopped() bool {
	if e.err != nil || e.ctx.Err() != nil {
		return true
	}
	select {
	case <-e.d.stop:
		return true
	default:
		return false
	}
}

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
