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
	initiator, method, idType, id string
	hash                          uint64
}

func keyOfRow(r *schema.Exchange) (mergeKey, bool) {
	if r.JSONRPCID == nil || r.JSONRPCIDType == nil {
		return mergeKey{}, false
	}
	return mergeKey{r.Initiator, r.Method, *r.JSONRPCIDType, *r.JSONRPCID, r.MatchHash}, true
}

type convPair struct{ client, server string }

// candidatesNear calls fn with the indexes of list (sorted by start time)
// whose start lies within [at-window, at+window], nearest first, at most
// limit of them.
func candidatesNear(rows []schema.Exchange, list []int, at time.Time, window time.Duration, limit int, fn func(j int)) {
	k := sort.Search(len(list), func(n int) bool { return !rows[list[n]].StartedAt.Before(at) })
	lo, hi := k-1, k
	for seen := 0; seen < limit; seen++ {
		var dl, dh time.Duration = -1, -1
		if lo >= 0 {
			dl = at.Sub(rows[list[lo]].StartedAt)
		}
		if hi < len(list) {
			dh = rows[list[hi]].StartedAt.Sub(at)
		}
		switch {
		case dl >= 0 && dl <= window && (dh < 0 || dh > window || dl <= dh):
			fn(list[lo])
			lo--
		case dh >= 0 && dh <= window:
			fn(list[hi])
			hi++
		default:
			return
		}
	}
}

// MergeViews merges the client-side and server-side rows of the same
// exchanges into one row with sides "both". Rows match on JSON-RPC id (type
// and value), initiator, method and a hash of the params, within the same
// MCP session when both know it. Conversations are paired first, one to
// one: each client conversation goes with the server conversation whose
// candidate matches are most numerous and agree best on the time
// difference, whose median is the clock skew between the two logs
// (clock_skew_ms). Rows then pair within paired conversations at start times
// that agree, once the skew is allowed for, within MergeTolerance. The
// merged row keeps the client's view (what the agent saw) and adds
// client_post_count, server_post_count, server_outcome and
// server_http_statuses; where the client's log lacks the evidence (UNKNOWN)
// the server's verdict is used. failed_hop says where the failure happened.
// Rows that find no partner keep their single-side view; a client request
// the server never saw, in a conversation the server's log does cover,
// failed on the network (or never left the client when no POST carried it).
func MergeViews(rows []schema.Exchange) []schema.Exchange {
	var client []int
	byKey := map[mergeKey][]int{}
	for i := range rows {
		switch rows[i].Sides {
		case string(schema.SideClient):
			client = append(client, i)
		case string(schema.SideServer):
			if k, ok := keyOfRow(&rows[i]); ok {
				byKey[k] = append(byKey[k], i)
			}
		}
	}
	for _, list := range byKey {
		sort.Slice(list, func(a, b int) bool { return rows[list[a]].StartedAt.Before(rows[list[b]].StartedAt) })
	}
	// Pass 1: pair conversations and estimate each pair's skew from the
	// nearest candidates of every client row.
	samples := map[convPair][]time.Duration{}
	for _, i := range client {
		c := &rows[i]
		k, ok := keyOfRow(c)
		if !ok {
			continue
		}
		candidatesNear(rows, byKey[k], c.StartedAt, skewWindow, 16, func(j int) {
			if s := &rows[j]; sameSession(c, s) {
				p := convPair{c.ConvKey, s.ConvKey}
				samples[p] = append(samples[p], s.StartedAt.Sub(c.StartedAt))
			}
		})
	}
	type scored struct {
		p      convPair
		n      int
		spread time.Duration
		median time.Duration
	}
	var pairs []scored
	for p, ds := range samples {
		sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
		pairs = append(pairs, scored{p, len(ds), ds[len(ds)-1] - ds[0], ds[len(ds)/2]})
	}
	sort.Slice(pairs, func(a, b int) bool {
		if pairs[a].n != pairs[b].n {
			return pairs[a].n > pairs[b].n
		}
		if pairs[a].spread != pairs[b].spread {
			return pairs[a].spread < pairs[b].spread
		}
		return pairs[a].p.client+pairs[a].p.server < pairs[b].p.client+pairs[b].p.server
	})
	convOf := map[string]string{}
	skewOf := map[string]time.Duration{}
	taken := map[string]bool{}
	for _, sc := range pairs {
		if _, done := convOf[sc.p.client]; done || taken[sc.p.server] {
			continue
		}
		convOf[sc.p.client], skewOf[sc.p.client] = sc.p.server, sc.median
		taken[sc.p.server] = true
	}
	// Pass 2: pair rows within paired conversations, nearest first.
	sort.SliceStable(client, func(a, b int) bool { return rows[client[a]].StartedAt.Before(rows[client[b]].StartedAt) })
	used := map[int]bool{}
	partner := map[int]int{}
	for _, i := range client {
		c := &rows[i]
		k, ok := keyOfRow(c)
		sconv, paired := convOf[c.ConvKey]
		if !ok || !paired {
			continue
		}
		best := -1
		candidatesNear(rows, byKey[k], c.StartedAt.Add(skewOf[c.ConvKey]), MergeTolerance, 64, func(j int) {
			if best < 0 && !used[j] && rows[j].ConvKey == sconv && sameSession(c, &rows[j]) {
				best = j
			}
		})
		if best >= 0 {
			used[best] = true
			partner[i] = best
		}
	}
	out := make([]schema.Exchange, 0, len(rows)-len(partner))
	for i := range rows {
		r := rows[i]
		if used[i] {
			continue // merged into its client row
		}
		if j, ok := partner[i]; ok {
			r = mergeRows(r, rows[j], skewOf[r.ConvKey])
		} else if _, covered := convOf[r.ConvKey]; covered && r.Sides == string(schema.SideClient) && !succeeded(r.Outcome) && r.Outcome != classify.ToolError {
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
	case c.Outcome == classify.Cancelled:
		return HopClient // the client gave up on it
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
