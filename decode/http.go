package decode

import (
	"mime"
	"strings"

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

	Failure        string // schema.Failure* when no response came
	FailureMessage string
}

// BuildHTTP fills obs.HTTP and appends the messages of both bodies. It also
// sets obs.SessionID (Mcp-Session-Id of the request or response, or the
// legacy sessionId query parameter) and obs.ProtocolVersion
// (MCP-Protocol-Version) when the caller left them empty.
func BuildHTTP(obs *schema.Observation, p *HTTPParts) {
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
		ev.RequestHasBody = true
		obs.Messages = AppendMessages(obs.Messages, []byte(*p.ReqBody), schema.InRequestBody, 0)
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
				for i, e := range ParseSSE(body, p.StreamEnd == "" || p.StreamEnd == schema.StreamComplete) {
					if e.Type == "endpoint" && obs.SessionID == "" {
						obs.SessionID = sessionFromURL(e.Data) // legacy HTTP+SSE
					}
					if e.Type != "" && e.Type != "message" {
						continue
					}
					ev.SSEEvents++
					obs.Messages = AppendMessages(obs.Messages, []byte(e.Data), where, i+1)
				}
				ev.StreamLastEventID = StreamLastEventID(body, p.StreamEnd == "" || p.StreamEnd == schema.StreamComplete)
			} else {
				obs.Messages = AppendMessages(obs.Messages, []byte(body), schema.InResponseBody, 0)
			}
		}
	} else {
		ev.Failure, ev.FailureMessage = p.Failure, p.FailureMessage
	}
	if obs.SessionID == "" {
		obs.SessionID = ev.RespSessionID
	}
	if obs.SessionID == "" {
		obs.SessionID = sessionFromURL(ev.URL)
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
// that got no response (mitmproxy's flow error, Chrome's net::ERR_*,
// Firefox's NS_ERROR_*, Node's ECONN*, undici's UND_ERR_*) to a failure
// kind. Text it does not recognise gives "": the kind stays unknown rather
// than guessed.
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
	case has("timed out", "timed_out", "timeout", "etimedout"):
		return schema.FailureTimeout
	case has("client disconnected"):
		return schema.FailureClientAbort // mitmproxy: the client went away
	case has("connection_closed", "closed connection", "connection_aborted", "connection aborted", "connection_reset", "econnreset", "socket hang up",
		"disconnected", "connection closed", "reset by peer", "empty_response", "ns_error_net_reset"):
		return schema.FailureReset // the network or the server ended the connection
	case has("err_aborted", "binding_aborted", "aborterror", "aborted", "abort", "cancelled", "canceled"):
		return schema.FailureClientAbort
	}
	return ""
}
