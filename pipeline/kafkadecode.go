package pipeline

import (
	"bytes"
	"context"
	"fmt"

	"mcptrace/decode"
	"mcptrace/schema"
)

// message is one Kafka record in a unit: its offset and value.
type message struct {
	offset  int64
	value   []byte
	control bool // a transaction marker: skipped, counted
}

// messages decodes a unit of Kafka messages: each value is one record in
// any format ingest reads record by record (a wire log line, an OTLP JSON
// document, a stdio JSONL frame), detected per message unless -format
// fixes it. Every observation and quarantine row of a message has the
// message's offset as its line, so exchange ids derive from topic,
// partition and offset.
func (d *decoder) messages(ctx context.Context, u *Unit, out chan<- decoded) error {
	src := u.Input.Name
	p := decoded{}
	c := &msgCollector{d: d, p: &p, maxLine: d.maxLine, maxDoc: d.maxDoc}
	for _, m := range u.msgs {
		p.bytes += int64(len(m.value))
		c.offset, c.emitted, c.multi = m.offset, 0, false
		pos := schema.Position{Source: src, Line: m.offset}
		switch {
		case m.control:
			c.Skip(pos, "kafka_transaction_marker")
			continue
		case len(m.value) > d.maxLine:
			c.Quarantine(pos, decode.ReasonLineTooLong, fmt.Sprintf("message of %d bytes is longer than the limit of %d bytes (-max-line)", len(m.value), d.maxLine), m.value[:min(len(m.value), 512)])
			continue
		case decode.IsBlank(m.value):
			c.Skip(pos, "blank")
			continue
		}
		format := decode.Format(d.format)
		if format == "" {
			f, ok := decode.Detect(m.value)
			if !ok {
				c.Quarantine(pos, ReasonUnknownFormat, fmt.Sprintf("message matches none of the formats %v; name one with -format if it is one of them", decode.Formats()), m.value)
				continue
			}
			format = f
		}
		if format == decode.FormatWire {
			line := bytes.TrimRight(m.value, "\r\n")
			o, reason, detail := wireRecordWith(line, pos, d.limits)
			if reason != "" {
				c.Quarantine(pos, reason, detail, line)
				continue
			}
			c.Observation(o)
			continue
		}
		dec, _ := decode.DecoderFor(format)
		c.multi = true
		err := dec(src, bytes.NewReader(m.value), c)
		switch {
		case err != nil && c.emitted == 0:
			c.Quarantine(pos, decode.ReasonReadError, fmt.Sprintf("decoding the message as %s failed: %v", format, err), m.value)
		case err != nil:
			// What was decoded stands; the failure is counted in the
			// message's records already emitted (the decoder quarantined
			// what it could not read).
		case c.emitted == 0:
			c.Skip(pos, "empty_message") // a document with no record in it
		}
	}
	select {
	case out <- p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// msgCollector is the Emitter of a message's decoder: it collects into the
// unit's part, with the message's offset as every record's line.
type msgCollector struct {
	d       *decoder
	p       *decoded
	offset  int64
	emitted int
	multi   bool // the message is a document of records (not a line)
	maxLine int
	maxDoc  int64
}

func (c *msgCollector) Observation(o *schema.Observation) {
	c.emitted++
	c.p.records++
	o.Pos.Line = c.offset
	if c.multi {
		o.Pos.Sub = int32(c.emitted) // one of the records of a document
	}
	c.p.obs = append(c.p.obs, o)
}

func (c *msgCollector) Quarantine(pos schema.Position, reason, detail string, raw []byte) {
	c.emitted++
	c.p.records++
	where := fmt.Sprintf(" (offset %d)", c.offset)
	if c.multi {
		where = fmt.Sprintf(" (offset %d, record %d of the message)", c.offset, c.emitted)
	}
	c.p.quar = append(c.p.quar, quarantineRow(c.d.rd, pos.Source, c.offset, c.d.runTime, reason, detail+where, int64(len(raw)), raw))
}

func (c *msgCollector) Skip(pos schema.Position, why string) {
	c.emitted++
	c.p.records++
	if c.p.skipped == nil {
		c.p.skipped = map[string]int64{}
	}
	c.p.skipped[why]++
}

// MaxLineBytes is the configured line limit (decode.LineLimiter).
func (c *msgCollector) MaxLineBytes() int { return c.maxLine }

// MaxDocumentBytes is the configured document limit (decode.DocumentLimiter).
func (c *msgCollector) MaxDocumentBytes() int64 { return c.maxDoc }

// RecordLimits are the configured record limits (decode.RecordLimiter).
func (c *msgCollector) RecordLimits() decode.Limits { return c.d.limits }
