package decode

import "strings"

// Event is one dispatched server-sent event.
type Event struct {
	Type string // the event field; "" means "message"
	ID   string
	Data string
}

// SSEStream is what a client holds after reading an event stream body.
type SSEStream struct {
	Events []Event // the dispatched events with data, in order
	// LastEventID is the event source's last event ID string: the value of
	// the latest "id" field as of the latest dispatch (a blank line),
	// priming events with empty data included; an id in an event that the
	// stream cut before its blank line does not count. "" when the stream
	// set none: the client has nothing to resume from (Last-Event-ID).
	LastEventID string
}

// ParseSSE parses a text/event-stream body following the WHATWG rules: lines
// end in CRLF, LF or CR; lines starting with ':' are comments; "data" fields
// accumulate with newlines; a blank line dispatches the event, and an event
// whose data is empty (such as a priming event carrying only an id) is not
// dispatched. The spec discards an event left unterminated at the end of the
// stream; when complete is true (the logger says the stream ended normally) a
// trailing unterminated event is dispatched instead, since some loggers drop
// the final blank line.
func ParseSSE(text string, complete bool) []Event {
	return ParseSSEStream(text, complete).Events
}

// ParseSSEStream is ParseSSE that also returns the stream's last event ID,
// found in the same pass: every dispatch sets it from the last event ID
// buffer, whether or not the event has data, so a priming event counts;
// with complete, the trailing unterminated event's id counts too.
//
// An event's Type, ID and (when it has one data line) Data are pieces of
// text; only data of several lines is joined into a new string.
func ParseSSEStream(text string, complete bool) SSEStream {
	var st sseText
	text = strings.TrimPrefix(text, "\ufeff")
	for len(text) > 0 {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			st.field(text) // the unterminated last line
			break
		}
		line := text[:i]
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			text = text[i+2:]
		} else {
			text = text[i+1:]
		}
		if line == "" {
			st.dispatch()
			continue
		}
		st.field(line)
	}
	if complete {
		st.dispatch()
	}
	// A copy, so that keeping the id does not keep the whole body.
	return SSEStream{Events: st.events, LastEventID: strings.Clone(st.held)}
}

// sseText is the event-stream parser's state between lines.
type sseText struct {
	events []Event
	// The data buffer: its first line, and once it has more, all of them
	// joined by newlines in more.
	data  string
	more  []byte
	lines int
	typ   string
	id    string // the last event ID buffer
	held  string // the last event ID string, set at each dispatch
}

func (st *sseText) dispatch() {
	st.held = st.id
	if st.lines > 0 {
		d := st.data
		if st.lines > 1 {
			d = string(st.more)
		}
		if d != "" {
			st.events = append(st.events, Event{Type: st.typ, ID: st.id, Data: d})
		}
	}
	st.lines, st.typ = 0, ""
}

func (st *sseText) field(line string) {
	if line[0] == ':' {
		return
	}
	field, value := line, ""
	if i := strings.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		value = strings.TrimPrefix(value, " ")
	}
	switch field {
	case "data":
		switch st.lines {
		case 0:
			st.data = value
		case 1:
			st.more = append(append(append(st.more[:0], st.data...), '\n'), value...)
		default:
			st.more = append(append(st.more, '\n'), value...)
		}
		st.lines++
	case "event":
		st.typ = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			st.id = value
		}
	}
}
