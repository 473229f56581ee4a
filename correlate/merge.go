package correlate

import (
	"sort"
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
	method, idType, id string
	hash               uint64
}

func keyOfRow(r *schema.Exchange) (mergeKey, bool) {
	if r.JSONRPCID == nil || r.JSONRPCIDType == nil || r.Initiator != "client" {
		return mergeKey{}, false
	}
	return mergeKey{r.Method, *r.JSONRPCIDType, *r.JSONRPCID, r.MatchHash}, true
}

type convPair struct{ client, server string }

// MergeViews merges the client-side and server-side rows of the same
// exchanges into one row with sides "both". Rows match on JSON-RPC id (type
// and value), method and a hash of the params, within the same MCP session
// when both know it, and at start times that agree once the clock skew
// between the two logs is allowed for. The skew is estimated per pair of
// conversations as the median difference of the matches that are unique on
// both sides, and recorded in clock_skew_ms. The merged row keeps the
// client's view (what the agent saw) and adds client_post_count,
// server_post_count, server_outcome and server_http_statuses; where the
// client's log lacks the evidence (UNKNOWN) the server's verdict is used.
// failed_hop says where the failure happened. Rows that find no partner keep
// their single-side view; a client request the server never saw, in a
// conversation the server's log does cover, failed on the network (or never
// left the client when no POST carried it).
func MergeViews(rows []schema.Exchange) []schema.Exchange {
	var client, server []int
	for i := range rows {
		switch rows[i].Sides {
		case string(schema.SideClient):
			client = append(client, i)
		case string(schema.SideServer):
			server = append(server, i)
		}
	}
	byKey := map[mergeKey][]int{}
	for _, i := range server {
		if k, ok := keyOfRow(&rows[i]); ok {
			byKey[k] = append(byKey[k], i)
		}
	}
	clientCount := map[mergeKey]int{}
	for _, i := range client {
		if k, ok := keyOfRow(&rows[i]); ok {
			clientCount[k]++
		}
	}
	// Pass 1: estimate the skew of each pair of conversations.
	samples := map[convPair][]time.Duration{}
	for _, i := range client {
		c := &rows[i]
		k, ok := keyOfRow(c)
		if !ok || clientCount[k] != 1 || len(byKey[k]) != 1 {
			continue
		}
		s := &rows[byKey[k][0]]
		d := s.StartedAt.Sub(c.StartedAt)
		if d > -skewWindow && d < skewWindow && sameSession(c, s) {
			p := convPair{c.ConvKey, s.ConvKey}
			samples[p] = append(samples[p], d)
		}
	}
	skew := map[convPair]time.Duration{}
	for p, ds := range samples {
		sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
		skew[p] = ds[len(ds)/2]
	}
	// Pass 2: pair each client row with the closest unused server row.
	sort.SliceStable(client, func(a, b int) bool { return rows[client[a]].StartedAt.Before(rows[client[b]].StartedAt) })
	used := map[int]bool{}
	partner := map[int]int{}
	covered := map[string]bool{} // client conversations the server's log covers
	// Conversations pair one to one: once a client conversation has matched
	// a server conversation, its other rows match only there.
	convOf := map[string]string{}
	taken := map[string]bool{}
	for _, i := range client {
		c := &rows[i]
		k, ok := keyOfRow(c)
		if !ok {
			continue
		}
		best, bestD := -1, time.Duration(0)
		for _, j := range byKey[k] {
			s := &rows[j]
			if used[j] || !sameSession(c, s) {
				continue
			}
			if sc, ok := convOf[c.ConvKey]; ok && sc != s.ConvKey {
				continue
			}
			if _, ok := convOf[c.ConvKey]; !ok && taken[s.ConvKey] {
				continue
			}
			d := s.StartedAt.Sub(c.StartedAt) - skew[convPair{c.ConvKey, s.ConvKey}]
			if d < 0 {
				d = -d
			}
			if d <= MergeTolerance && (best < 0 || d < bestD) {
				best, bestD = j, d
			}
		}
		if best >= 0 {
			used[best] = true
			partner[i] = best
			covered[c.ConvKey] = true
			convOf[c.ConvKey] = rows[best].ConvKey
			taken[rows[best].ConvKey] = true
		}
	}
	out := make([]schema.Exchange, 0, len(rows)-len(partner))
	for i := range rows {
		r := rows[i]
		if used[i] {
			continue // merged into its client row
		}
		if j, ok := partner[i]; ok {
			r = mergeRows(r, rows[j], skew[convPair{r.ConvKey, rows[j].ConvKey}])
		} else if r.Sides == string(schema.SideClient) && covered[r.ConvKey] && !succeeded(r.Outcome) && r.Outcome != classify.ToolError {
			// The server's log covers this conversation and never saw it.
			if r.PostCount == 0 && r.Transport != string(schema.TransportStdio) {
				r.FailedHop = HopClient
			} else {
				r.FailedHop = HopNetwork
			}
		}
		out = append(out, r)
	}
	return out
}

func sameSession(c, s *schema.Exchange) bool {
	return c.SessionID == nil || s.SessionID == nil || *c.SessionID == *s.SessionID
}

func mergeRows(c, s schema.Exchange, skew time.Duration) schema.Exchange {
	m := c
	m.Sides = "both"
	cp, sp := c.PostCount, s.PostCount
	m.ClientPostCount, m.ServerPostCount = &cp, &sp
	so := s.Outcome
	m.ServerOutcome = &so
	m.ServerStatuses = append([]int32{}, s.HTTPStatuses...)
	ms := float64(skew.Microseconds()) / 1000
	m.ClockSkewMS = &ms
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
	}
	m.FailedHop = mergedHop(&c, &s)
	return m
}

// mergedHop diagnoses the failing hop from both views.
func mergedHop(c, s *schema.Exchange) string {
	switch {
	case succeeded(c.Outcome):
		return HopNone
	case c.Outcome == classify.ToolError:
		return HopTool
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
	if c.Outcome == s.Outcome {
		return HopServer
	}
	return HopUnknown
}
