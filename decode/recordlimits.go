package decode

import (
	"bytes"

	"mcptrace/internal/jsonstr"
)

// Record limits: what one HTTP record may hold beyond the line and document
// limits (lines.go). A record past one is quarantined whole, the limit and
// its flag named in the detail, rather than kept cut: a body is what names
// the exchange and says how it ended (the JSON-RPC id, the result or the
// error), so an exchange kept without it, or with its stream cut after N
// events, would be judged on evidence the log does have but ingest threw
// away (no response, a cut stream), a verdict that is not the log's.
const (
	// ReasonBodyTooLarge: a request or response body is longer than
	// Limits.MaxBody (ingest -max-body).
	ReasonBodyTooLarge = "body_too_large"
	// ReasonTooManyEvents: an event-stream body dispatches more message
	// events than Limits.MaxSSEEvents (ingest -max-sse-events).
	ReasonTooManyEvents = "too_many_sse_events"
)

// DefaultMaxBody is the body limit unless configured otherwise (ingest
// -max-body): 64 MiB, four times the default line limit, so that it bounds
// the bodies of whole-document formats (a HAR entry may hold up to
// -max-document) without refusing any body a wire line can hold by default.
const DefaultMaxBody = 64 << 20

// DefaultMaxSSEEvents is the event limit unless configured otherwise
// (ingest -max-sse-events): 1,048,576 message events on one stream, above
// the million-event stream of the benchmarks; a stream's events cost a
// time each (and, past a run of one notification method, nothing more when
// folded), so the limit bounds what one record holds.
const DefaultMaxSSEEvents = 1 << 20

// Limits are the record limits a decoder applies; a zero field is its
// default.
type Limits struct {
	MaxBody      int64 // most bytes of one HTTP body, request or response, as decoded (not escaped)
	MaxSSEEvents int   // most message events (ones that carry data) of one event-stream body
}

// Body is the body limit in force.
func (l Limits) Body() int64 {
	if l.MaxBody > 0 {
		return l.MaxBody
	}
	return DefaultMaxBody
}

// SSEEvents is the event limit in force.
func (l Limits) SSEEvents() int {
	if l.MaxSSEEvents > 0 {
		return l.MaxSSEEvents
	}
	return DefaultMaxSSEEvents
}

// RecordLimiter is implemented by an Emitter that knows the configured
// record limits (ingest -max-body, -max-sse-events); decoders ask it
// through LimitsOf.
type RecordLimiter interface {
	RecordLimits() Limits
}

// LimitsOf returns the record limits an Emitter asks for (zero fields are
// the defaults).
func LimitsOf(e Emitter) Limits {
	if l, ok := e.(RecordLimiter); ok {
		return l.RecordLimits()
	}
	return Limits{}
}

// bodyErr is the error of a body of n bytes past the limit.
func (l Limits) bodyErr(which string, n int64) *LineError {
	return lineErr(ReasonBodyTooLarge, "%s body of %d bytes is over -max-body %d bytes; the record is quarantined whole (its exchange is not judged on a body cut or dropped)", which, n, l.Body())
}

// eventsErr is the error of a stream of n message events, more than the
// limit.
func (l Limits) eventsErr(n int) *LineError {
	return lineErr(ReasonTooManyEvents, "event stream of %d message events is over -max-sse-events %d; the record is quarantined whole (its exchange is not judged on a stream cut at the limit); the events past the limit were counted, not read", n, l.SSEEvents())
}

// unescapedLen is the length of the JSON string literal lit (without its
// quotes, escapes validated) once decoded.
func unescapedLen(lit []byte) int64 {
	var n int64
	var buf [8]byte
	for len(lit) > 0 {
		i := bytes.IndexByte(lit, '\\')
		if i < 0 {
			return n + int64(len(lit))
		}
		n += int64(i)
		e, k := jsonstr.AppendEscape(buf[:0], lit[i:])
		if k == 0 {
			// Not an escape the scanner validated: count it as it is.
			return n + int64(len(lit)-i)
		}
		n += int64(len(e))
		lit = lit[i+k:]
	}
	return n
}
