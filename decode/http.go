package decode

import (
	"mime"
	"strings"
	"time"

	"mcptrace/schema"
)

// Header is one HTTP header as logged; names compare without case and a
// header may repeat.
type Header struct {
	Name, Value string
}

// HeaderValue returns the first value of the named header.
func HeaderValue(hs []Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// HTTPParts is one HTTP transaction as any HTTP log format states it. Every
// decoder of an HTTP format fills one and calls BuildHTTP, so bodies, event
// streams, sessions and versions are read the same way whatever the format.
type HTTPParts struct {
	Method     string
	URL        string
	ReqHeaders []Header
	ReqBody    *string // nil: not recorded

	Responded   bool // a status was received
	Status      int
	RespHeaders []Header
	ContentType string  // as logged; else taken from RespHeaders
	RespBody    *string // nil: not recorded; for text/event-stream, the raw stream
	StreamEnd   string  // schema.Stream* for an event stream, "" when unknown

	// Failure is the schema.Failure* kind when no response came. With
	// Responded, it says why a body that is not an event stream did not
	// arrive whole (the connection was lost after the status line).
	Failure        string
	FailureMessage string

	// EventTimes are the arrival times of the stream's dispatched events
	// (ParseSSE order, every event type), as the log states them; a zero
	// or missing entry is unknown. ReceiveStart is when the first byte of
	// the body came (HAR timings), zero when unknown: events before the
	// last that have no time of their own are dated there, the earliest
	// they can have come.
	EventTimes   []time.Time
	ReceiveStart time.Time

	// Limits are the record limits (recordlimits.go): BuildHTTP refuses a
	// body or a stream past them.
	Limits Limits
}

// BuildHTTP fills obs.HTTP and appends the messages of both bodies. It also
// sets obs.SessionID (Mcp-Session-Id of the request or response, or the
// legacy sessionId query parameter) and obs.ProtocolVersion
// (MCP-Protocol-Version) when the caller left them empty.
//
// A body longer than p.Limits' body limit, or an event stream with more
// message events than its event limit, is an error (a *LineError,
// ReasonBodyTooLarge or ReasonTooManyEvents, the limit named): obs is then
// not to be used, and the caller quarantines the record.
func BuildHTTP(obs *schema.Observation, p *HTTPParts) error {
	ev := &schema.HTTPEvidence{Method: strings.ToUpper(p.Method), URL: p.URL}
	obs.HTTP = ev
	ev.LastEventID = HeaderValue(p.ReqHeaders, "Last-Event-ID")
	if obs.SessionID == "" {
		obs.SessionID = HeaderValue(p.ReqHeaders, "Mcp-Session-Id")
	}
	if obs.ProtocolVersion == "" {
		obs.ProtocolVersion = HeaderValue(p.ReqHeaders, "MCP-Protocol-Version")
	}
	if p.ReqBody != nil {
		if n := int64(len(*p.ReqBody)); n > p.Limits.Body() {
			return p.Limits.bodyErr("request", n)
		}
		ev.RequestHasBody = true
		n := len(obs.Messages)
		obs.Messages = AppendMessages(obs.Messages, []byte(*p.ReqBody), schema.InRequestBody, 0)
		stampAt(obs.Messages[n:], obs.Time)
	}
	if p.Responded {
		ev.Responded, ev.Status = true, p.Status
		ct := p.ContentType
		if ct == "" {
			ct = HeaderValue(p.RespHeaders, "Content-Type")
		}
		ev.ContentType = mediaType(ct)
		ev.RetryAfter = HeaderValue(p.RespHeaders, "Retry-After")
		ev.RespSessionID = HeaderValue(p.RespHeaders, "Mcp-Session-Id")
		ev.StreamEnd = p.StreamEnd
		ev.SSE = ev.ContentType == "text/event-stream"
		if p.RespBody != nil {
			body := *p.RespBody
			if n := int64(len(body)); n > p.Limits.Body() {
				return p.Limits.bodyErr("response", n)
			}
			ev.BodyRecorded = true
			ev.BodyEmpty = strings.TrimSpace(body) == ""
			if ev.SSE {
				where := schema.InPostStream
				if ev.Method == "GET" {
					where = schema.InGetStream
					if ev.LastEventID != "" {
						where = schema.InResumedStream
					}
				}
				stream := ParseSSEStream(body, p.StreamEnd == "" || p.StreamEnd == schema.StreamComplete)
				events := stream.Events
				for i, e := range events {
					if e.Type == "endpoint" && obs.SessionID == "" {
						obs.SessionID = strings.Clone(sessionFromURL(e.Data)) // legacy HTTP+SSE; Data is a piece of the body
					}
					if e.Type != "" && e.Type != "message" {
						continue
					}
					ev.SSEEvents++
					if ev.SSEEvents > p.Limits.SSEEvents() {
						// Counted to the end, not read.
						n := ev.SSEEvents
						for _, e := range events[i+1:] {
							if e.Type == "" || e.Type == "message" {
								n++
							}
						}
						return p.Limits.eventsErr(n)
					}
					n := len(obs.Messages)
					obs.Messages = AppendMessages(obs.Messages, []byte(e.Data), where, i+1)
					stampAt(obs.Messages[n:], eventTime(obs, p, where, i, len(events)))
				}
				ev.StreamLastEventID = stream.LastEventID
			} else {
				n := len(obs.Messages)
				obs.Messages = AppendMessages(obs.Messages, []byte(body), schema.InResponseBody, 0)
				stampAt(obs.Messages[n:], obs.EndTime) // the body is whole at the end
			}
		}
	}
	if !p.Responded || (!ev.SSE && p.Failure != "") {
		ev.Failure, ev.FailureMessage = p.Failure, p.FailureMessage
	}
	if obs.SessionID == "" {
		obs.SessionID = ev.RespSessionID
	}
	if obs.SessionID == "" {
		obs.SessionID = sessionFromURL(ev.URL)
	}
	return nil
}

// eventTime is when the i-th of n dispatched events of a stream arrived:
// the time the log gives it; else, on a POST's stream (which the server
// ends after the response), the end of the record for the last event and
// the start of the receive phase for the others; else unknown. A GET
// stream's end says nothing about when its events came.
func eventTime(obs *schema.Observation, p *HTTPParts, where schema.Where, i, n int) time.Time {
	if i < len(p.EventTimes) && !p.EventTimes[i].IsZero() {
		return p.EventTimes[i]
	}
	if where != schema.InPostStream {
		return time.Time{}
	}
	if i == n-1 {
		return obs.EndTime
	}
	return p.ReceiveStart
}

// stampAt dates messages that carry no time of their own yet.
func stampAt(msgs []schema.Message, t time.Time) {
	for i := range msgs {
		if msgs[i].At.IsZero() {
			msgs[i].At = t
		}
	}
}

func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
}

// FailureKind maps the error text a client or exporter wrote for a request
// that got no response, or whose body or stream broke off (mitmproxy's flow
// error, Chrome's net::ERR_*, Firefox's NS_ERROR_*, Node's ECONN*, undici's
// UND_ERR_*, Go's net/http and context errors) to a failure kind. Text it
// does not recognise gives "": the kind stays unknown rather than guessed.
//
// client_abort is the client's own doing: Chrome's net::ERR_ABORTED (the
// page aborted the fetch), Firefox's NS_BINDING_ABORTED, mitmproxy's
// "Client disconnected.", an AbortError, "context canceled". Everything
// that ended the connection from the server's or the network's side
// ("Server disconnected.", net::ERR_CONNECTION_RESET,
// net::ERR_INCOMPLETE_CHUNKED_ENCODING, undici's "other side closed", a
// killed or interrupted connection) is reset; a connection aborted by the
// network stack (net::ERR_CONNECTION_ABORTED) is reset too.
func FailureKind(msg string) string {
	m := strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("refused", "connect call failed", "could not connect", "name_not_resolved", "name not resolved",
		"unknown_host", "could not resolve", "getaddrinfo", "address_unreachable", "internet_disconnected", "enotfound"):
		return schema.FailureConnectionRefused
	case has("timed out", "timed_out", "timeout", "etimedout", "deadline exceeded"):
		return schema.FailureTimeout
	case has("client disconnected", "client closed"):
		return schema.FailureClientAbort // mitmproxy: the client went away
	case has("connection_closed", "closed connection", "connection_aborted", "connection aborted", "connection_reset", "econnreset", "socket hang up",
		"disconnected", "connection closed", "reset by peer", "empty_response", "ns_error_net_reset", "ns_error_net_interrupt",
		"ns_error_net_partial_transfer", "incomplete_chunked_encoding", "content_length_mismatch", "http2_protocol_error",
		"other side closed", "und_err_socket", "connection killed", "network_changed", "unexpected eof", "broken pipe"):
		return schema.FailureReset // the network or the server ended the connection
	case has("err_aborted", "binding_aborted", "aborterror", "aborted", "abort", "cancelled", "canceled"):
		return schema.FailureClientAbort
	}
	return ""
}
