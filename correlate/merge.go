package correlate

import (
	"time"

	"mcptrace/classify"
	"mcptrace/schema"
)

// Failed hops.
const (
	HopNone    = "none"
	HopClient  = "client"
	HopNetwork = "network"
	HopServer  = "server"
	HopTool    = "tool"
	HopUnknown = "unknown"
)

// MergeTolerance is how far apart, after the estimated clock skew, the
// client's and the server's start of one exchange may be.
const MergeTolerance = 5 * time.Second

// skewWindow bounds the time differences used to estimate a skew.
const skewWindow = time.Hour

// MaxSkew is the largest clock skew between a client's and a server's log
// that the merge estimates. A streaming merge must let rows wait at least
// this (plus the lateness) for the other side, or a skewed log's rows would
// be written single-sided before their partner arrives.
const MaxSkew = skewWindow

func succeeded(outcome string) bool {
	return outcome == classify.ToolSuccess || outcome == classify.Success || outcome == classify.InputRequired
}

// singleHop diagnoses which hop failed from one side's view alone.
func singleHop(r *schema.Exchange) string {
	switch r.Outcome {
	case classify.ToolSuccess, classify.Success, classify.InputRequired:
		return HopNone
	case classify.ToolError:
		return HopTool
	case classify.JSONRPCError, classify.InvalidEnvelope, classify.InvalidResult, classify.InvalidToolResult, classify.MalformedJSON:
		return HopServer // the answer came from the other end, wrong
	case classify.HTTPError:
		if r.Sides == string(schema.SideServer) {
			return HopServer
		}
	}
	return HopUnknown
}

type mergeKey struct {
	initiator, method, idType, id string
	hash                          uint64
}

func keyOfRow(r *schema.Exchange) (mergeKey, bool) {
	if r.JSONRPCID == nil || r.JSONRPCIDType == nil {
		return mergeKey{}, false
	}
	return mergeKey{r.Initiator, r.Method, *r.JSONRPCIDType, *r.JSONRPCID, r.MatchHash}, true
}

// MergeViews merges the client-side and server-side rows of the same
// exchanges into one row with sides "both". Rows match on JSON-RPC id (type
// and value), initiator, method and a hash of the params, within the same
// MCP session when both know it. Conversations are paired first, one to
// one: each client conversation goes with the server conversation whose
// candidate matches are most numerous and agree best on the time
// difference, whose median is the clock skew between the two logs
// (clock_skew_ms). Rows then pair one to one within paired conversations at
// start times that agree, once the skew is allowed for, within
// MergeTolerance: first the pairs in which the client received a status the
// server sent, starting within mergeAgreeWindow, then the nearest. The
// merged row keeps the client's view (what the agent saw) and adds
// client_post_count, server_post_count, server_outcome and
// server_http_statuses; where the client's log lacks the evidence (UNKNOWN)
// the server's verdict is used. failed_hop says where the failure happened.
// Rows that find no partner keep their single-side view; a client request
// the server never saw, in a conversation the server's log does cover,
// failed on the network (or never left the client when no POST carried it).
//
// MergeViews holds every row: it is a Merger with no window, fed rows in
// order and finished.
func MergeViews(rows []schema.Exchange) []schema.Exchange {
	out := make([]schema.Exchange, 0, len(rows))
	m := NewMerger(func(r Row) { out = append(out, *r.Exchange) })
	for i := range rows {
		m.Add(Row{Exchange: &rows[i]})
	}
	m.Finish()
	return out
}

func sameSession(c, s *schema.Exchange) bool {
	return c.SessionID == nil || s.SessionID == nil || *c.SessionID == *s.SessionID
}

func mergeRows(c, s schema.Exchange, skew time.Duration) schema.Exchange {
	m := c
	m.Sides = "both"
	m.ServerSource = s.Source
	m.ServerExchangeID, m.ServerLine = s.ExchangeID, s.SourceLine
	m.HoldCut = c.HoldCut || s.HoldCut
	cp, sp := c.PostCount, s.PostCount
	m.ClientPostCount, m.ServerPostCount = &cp, &sp
	so := s.Outcome
	m.ServerOutcome = &so
	m.ServerStatuses = append([]int32{}, s.HTTPStatuses...)
	ms := float64(skew.Microseconds()) / 1000
	m.ClockSkewMS = &ms
	if c.Outcome == classify.Unknown && s.Outcome == classify.ToolSuccess {
		m.SuspectHiddenError, m.SuspectReason = s.SuspectHiddenError, s.SuspectReason // the verdict comes from the server's log
	}
	if m.ServerName == nil {
		m.ServerName, m.ServerVersion = s.ServerName, s.ServerVersion
	}
	if m.Scenario == nil {
		m.Scenario = s.Scenario
	}
	if m.ProtocolVersion == nil {
		m.ProtocolVersion = s.ProtocolVersion
	}
	if c.Outcome == classify.Unknown && s.Outcome != classify.Unknown {
		// The client's log lacked the evidence; the server's has it.
		m.Outcome, m.Layer, m.Reason = s.Outcome, s.Layer, s.Reason+" (from the server's log)"
		m.ErrorCode, m.ErrorMessage, m.ErrorType = s.ErrorCode, s.ErrorMessage, s.ErrorType
		m.ResultType, m.IsError, m.RetryAdvice = s.ResultType, s.IsError, s.RetryAdvice
		m.ErrorKind, m.RPCStatusCode, m.ServerError = s.ErrorKind, s.RPCStatusCode, s.ServerError
	}
	m.FailedHop = mergedHop(&c, &s)
	m.DuplicateSideEffect = mergedDuplicate(&c, &s)
	return m
}

// mergedHop diagnoses the failing hop from both views.
func mergedHop(c, s *schema.Exchange) string {
	switch {
	case succeeded(c.Outcome) && serverAnsweredFailure(s):
		// The server answered with a failure (isError, a JSON-RPC error,
		// an error status) and the client was told it succeeded: something
		// between them (a gateway rewriting the answer) hid the failure.
		return HopNetwork
	case succeeded(c.Outcome):
		return HopNone
	case c.Outcome == classify.ToolError:
		return HopTool
	case c.Outcome == classify.Cancelled:
		return HopClient // the client gave up on it
	case clientGaveUp(c) && !clientGotAnswer(c) && !succeeded(s.Outcome) && s.Outcome != classify.ToolError:
		// The client abandoned it (its own log says so) before the server
		// answered, without a cancel: the client's hop, too. A client that
		// closed the stream once it had read the answer (a JSON-RPC error,
		// a bad result) did not give up on it: the answer decides below.
		return HopClient
	}
	if n := len(c.HTTPStatuses); n > 0 && c.HTTPStatuses[n-1] != 0 && (c.HTTPStatuses[n-1] < 200 || c.HTTPStatuses[n-1] > 299) {
		last := c.HTTPStatuses[n-1]
		for _, st := range s.HTTPStatuses {
			if st == last {
				return HopServer // the server sent that status itself
			}
		}
		return HopNetwork // a status the server never sent
	}
	if succeeded(s.Outcome) || s.Outcome == classify.ToolError {
		// The server answered; the client saw something else: an
		// intermediary (proxy, gateway, network) failed.
		return HopNetwork
	}
	if c.PostCount > s.PostCount && s.PostCount >= 0 && c.Outcome != classify.Cancelled {
		return HopNetwork // POSTs the server never saw
	}
	if brokeBetween(c, s) {
		return HopNetwork
	}
	if c.Outcome == s.Outcome {
		return HopServer
	}
	return HopUnknown
}

// clientGaveUp reports whether the client's own log says it abandoned the
// request: it aborted before a status, or closed the response stream.
func clientGaveUp(c *schema.Exchange) bool {
	is := func(p *string, v string) bool { return p != nil && *p == v }
	return is(c.TransportFail, schema.FailureClientAbort) || is(c.StreamEnd, schema.StreamClientClosed)
}

// serverAnsweredFailure reports whether the server's own log shows it sent a
// failure: a tool error, a JSON-RPC error, an error status of its own, or a
// bad answer. A server view without an answer (NO_RESPONSE,
// STREAM_INCOMPLETE, UNKNOWN: a stream the client left after reading the
// response, a log that lost the body) says nothing against the client's
// success.
func serverAnsweredFailure(s *schema.Exchange) bool {
	switch s.Outcome {
	case classify.ToolError, classify.JSONRPCError, classify.HTTPError, classify.InvalidEnvelope,
		classify.InvalidResult, classify.InvalidToolResult, classify.MalformedJSON:
		return true
	}
	return false
}

// clientGotAnswer reports whether the client's verdict comes from an answer
// it received: a JSON-RPC error or a response that was wrong. Such a client
// may still close the stream after it (go-sdk's client closes a POST's
// stream as soon as it has read the response, and a HAR then shows the
// entry aborted): that close is not giving up.
func clientGotAnswer(c *schema.Exchange) bool {
	switch c.Outcome {
	case classify.JSONRPCError, classify.InvalidEnvelope, classify.InvalidResult, classify.InvalidToolResult, classify.MalformedJSON:
		return true
	}
	return false
}

// brokeBetween reports whether each side saw the other end close the
// connection: the client's log says it broke (a reset stream or connection),
// the server's that the client went away (a stream closed by the client, a
// client abort). Neither end closed it: something between them did.
func brokeBetween(c, s *schema.Exchange) bool {
	is := func(p *string, v string) bool { return p != nil && *p == v }
	clientBroken := is(c.StreamEnd, schema.StreamReset) || is(c.TransportFail, schema.FailureReset)
	serverPeerGone := is(s.StreamEnd, schema.StreamClientClosed) || is(s.TransportFail, schema.FailureClientAbort)
	return clientBroken && serverPeerGone
}
