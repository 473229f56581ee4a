package decode

import (
	"bytes"
	"mcptrace/internal/jsonstr"
	"time"

	"mcptrace/schema"
)

// The wire decoder reads a text/event-stream body from its value, which
// the line's scanner wrote to scratch memory as it validated the string
// literal (scanner.strInto, see scanBody), and cuts it into lines there: a
// CR or LF byte is a line break, and nothing else is. An event's data lives
// in scratch memory until its messages are read. On a line too long for
// that scratch, the body is never copied whole: the literal is unescaped
// sseChunk bytes at a time (jsonstr.UnescapeSome) into scratch memory and
// cut into lines there (a JSON string cannot hold a raw line break, so the
// stream's line breaks are all escapes, and once unescaped a CR or LF byte
// is one).

// sseStream is the state of one stream being read (the WHATWG rules, as
// ParseSSEStream follows them).
type sseStream struct {
	d     *WireDecoder
	o     *schema.Observation
	h     *schema.HTTPEvidence
	a     *arena
	where schema.Where
	lines int // data lines of the event being built
	n     int // events dispatched
	// The last dispatched event that was a message event: its index, and
	// the messages it added.
	last             int
	lastFrom, lastTo int
}

// stream reads the events of the response's body: lit, its literal in the
// line, and dec, its value if the scanner decoded it (nil if not).
func (d *WireDecoder) stream(o *schema.Observation, h *schema.HTTPEvidence, a *arena, lit, dec []byte) {
	where := schema.InPostStream
	if h.Method == "GET" {
		where = schema.InGetStream
		if h.LastEventID != "" {
			where = schema.InResumedStream
		}
	}
	st := sseStream{d: d, o: o, h: h, a: a, where: where, last: -1}
	d.data, d.typ, d.id, d.held = d.data[:0], d.typ[:0], d.id[:0], d.held[:0]
	line := d.line[:0]
	first := true
	var buf []byte
	if dec == nil {
		if cap(d.unesc) < sseChunk+11 {
			d.unesc = make([]byte, sseChunk+11)
		}
		buf = d.unesc[:cap(d.unesc)]
	}
	cr := false // the last line ended at a CR: a LF right after it belongs to it
	for len(lit) > 0 {
		// The next piece of the value: all of it when decoded already.
		var u []byte
		if dec != nil {
			u, lit = dec, nil
		} else {
			w, r := jsonstr.UnescapeSome(buf, lit, sseChunk)
			u, lit = buf[:w], lit[r:]
		}
		for len(u) > 0 {
			if cr {
				cr = false
				if u[0] == '\n' {
					u = u[1:]
					continue
				}
			}
			k := bytes.IndexByte(u, '\n')
			if k < 0 {
				k = len(u)
			}
			if j := bytes.IndexByte(u[:k], '\r'); j >= 0 {
				k = j
			}
			if k == len(u) {
				line = append(line, u...)
				break
			}
			// A line within the piece is read where it is.
			ln := u[:k]
			if len(line) > 0 {
				line = append(line, ln...)
				ln = line
			}
			cr = u[k] == '\r'
			u = u[k+1:]
			if first {
				ln = bytes.TrimPrefix(ln, bom)
				first = false
			}
			if len(ln) == 0 {
				st.dispatch()
			} else {
				st.field(ln)
			}
			line = line[:0]
		}
	}
	if first {
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) > 0 {
		st.field(line) // the unterminated last line
	}
	if h.StreamEnd == "" || h.StreamEnd == schema.StreamComplete {
		st.dispatch()
	}
	d.line = line[:0]
	h.StreamLastEventID = d.intern(d.held)
	// The last event of a POST's stream came at the end of the record,
	// when the log does not say.
	if where == schema.InPostStream && st.last >= 0 && st.last == st.n-1 {
		for i := st.lastFrom; i < st.lastTo; i++ {
			if d.msgs[i].At.IsZero() {
				d.msgs[i].At = o.EndTime
			}
		}
	}
}

var bom = []byte("\ufeff")

// sseChunk is how much of a stream's literal is unescaped at a time when
// the scanner did not decode it.
const sseChunk = 32 << 10

func (st *sseStream) field(line []byte) {
	d := st.d
	if line[0] == ':' {
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if st.lines > 0 {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
		st.lines++
	case "event":
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.id = append(d.id[:0], value...)
		}
	}
}

func (st *sseStream) dispatch() {
	d := st.d
	d.held = append(d.held[:0], d.id...)
	if st.lines > 0 && len(d.data) > 0 {
		st.event()
	}
	st.lines = 0
	d.data, d.typ = d.data[:0], d.typ[:0]
}

// event reads one dispatched event's messages (BuildHTTP's loop).
func (st *sseStream) event() {
	d, o := st.d, st.o
	i := st.n
	st.n++
	if string(d.typ) == "endpoint" && o.SessionID == "" {
		if s := sessionFromURL(bstr(d.data)); s != "" {
			o.SessionID = d.internStr(s) // legacy HTTP+SSE
		}
	}
	if len(d.typ) > 0 && string(d.typ) != "message" {
		return
	}
	st.h.SSEEvents++
	if st.h.SSEEvents > d.Limits.SSEEvents() {
		// Past the event limit: the line is quarantined (buildHTTP); the
		// rest of the stream is counted, not read into messages.
		d.overEvents = true
		return
	}
	st.last, st.lastFrom, st.lastTo = i, len(d.msgs), len(d.msgs)
	body := bytes.TrimSpace(d.data)
	if len(body) == 0 {
		return
	}
	var at time.Time
	if i < len(d.times) {
		at = d.times[i]
	}
	region := st.a.take(len(body))
	copy(region, body)
	n := len(d.msgs)
	d.appendMessages(st.a, region, region, st.where, i+1, at)
	st.lastTo = len(d.msgs)
	if d.Fold && len(d.msgs) == n+1 && n > 0 && st.foldable(&d.msgs[n]) && st.foldable(&d.msgs[n-1]) && d.msgs[n].Method == d.msgs[n-1].Method {
		// One more notification of a run: counted on the first, not kept.
		d.msgs[n-1].Folded++
		if d.msgs[n].RPC == pendingRPC {
			d.rpcs = d.rpcs[:len(d.rpcs)-1]
		}
		d.msgs[n] = schema.Message{}
		d.msgs = d.msgs[:n]
		st.a.give(region, 0)
		st.last = -1
	}
}

// foldable: a notification of this stream, alone in its event, that
// nothing reads but its count (a run folds only notifications of one method).
func (st *sseStream) foldable(m *schema.Message) bool {
	return m.Where == st.where && m.Kind == schema.MsgNotification && m.BatchIndex < 0 && m.Method != "notifications/cancelled"
}
