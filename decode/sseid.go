package decode

import "strings"

// StreamLastEventID returns the last event ID a client holds after reading
// an event stream body: the value of the latest "id" field as of the latest
// dispatch (a blank line), as the WHATWG rules keep it, priming events
// with empty data included; an id in an event that the stream cut before
// its blank line does not count (complete=false), unless the logger says
// the stream ended normally (complete=true: a missing final blank line is
// forgiven, as in ParseSSE). "" when the stream set none: the client has
// nothing to resume from (Last-Event-ID).
func StreamLastEventID(text string, complete bool) string {
	var buf, last string
	text = strings.TrimPrefix(text, "\ufeff")
	for len(text) > 0 {
		i := strings.IndexAny(text, "\r\n")
		line := text
		if i < 0 {
			text = ""
		} else {
			line = text[:i]
			if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				text = text[i+2:]
			} else {
				text = text[i+1:]
			}
		}
		if line == "" {
			if i >= 0 {
				last = buf // dispatch
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		if field != "id" {
			continue
		}
		value = strings.TrimPrefix(value, " ")
		if !strings.ContainsRune(value, 0) {
			buf = value
		}
	}
	if complete {
		last = buf
	}
	return strings.Clone(last)
}
