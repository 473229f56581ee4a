package correlate

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"mcptrace/classify"
	"mcptrace/schema"
)

// Merger merges client-side and server-side rows of the same exchanges as
// a stream (MergeViews holds them all; the rules are the same and are
// documented there). It takes the Linker's rows in order and holds each for
// Window of event time after it arrived (the Now of the Marks it is
// advanced with), waiting for its partner from the other side; then it is
// written, merged or single-sided. Its memory is the rows that arrived
// within the last Window (and an eighth: rows are decided in batches) plus
// the pairing of the conversations seen within twice Window, not the run.
// It is not safe for concurrent use.
//
// Decisions use every held row, so a row has Window of look-ahead:
//
//   - conversations pair one to one, for good, when one of them has a row
//     due (held Window): the pairing that MergeViews would choose among the
//     held rows of the conversations not yet paired;
//   - rows pair one to one within paired conversations: first the rows
//     whose views agree (the client's final status is one the server
//     sent) and start within
//     mergeAgreeWindow of each other after the skew, then the others,
//     nearest first (then in client start order); a pair is written as
//     soon as one of its rows is due (the merged row takes the client
//     row's place in the output);
//   - a due row with no partner is written single-sided; a client row of a
//     paired conversation that failed and that the server never saw gets
//     failed_hop network (or client when no POST carried it).
//
// Rows go out in the order they arrived, except that a server row merged
// into a client row goes out with it. With Window 0 every row waits for
// Finish and the result is MergeViews' over the whole input.
type Merger struct {
	// Window is how long, in event time, a row waits for its partner
	// (the pipeline uses -lateness). 0: until Finish.
	Window time.Duration

	emit   func(Row)
	held   []heldMerge
	oldest time.Time // the earliest arrival held
	now    time.Time
	pairs  mergePairs
	seen   map[string]time.Time // conversation -> the Now its latest row arrived at
}

type heldMerge struct {
	row     Row
	arrived time.Time
}

// mergePairs is the pairing of conversations decided so far.
type mergePairs struct {
	convOf map[string]string        // client conversation -> server conversation
	skewOf map[string]time.Duration // client conversation -> skew (server minus client)
	taken  map[string]string        // server conversation -> client conversation
}

// NewMerger returns a Merger with no window that hands every row to emit.
func NewMerger(emit func(Row)) *Merger {
	return &Merger{emit: emit, pairs: mergePairs{convOf: map[string]string{}, skewOf: map[string]time.Duration{}, taken: map[string]string{}},
		seen: map[string]time.Time{}}
}

// Add takes the next row, in the Linker's order.
func (m *Merger) Add(r Row) {
	// It arrived when the stream's event time reached its end (the Marks
	// lag the rows of their round).
	at := m.now
	if r.Exchange.EndedAt.After(at) {
		at = r.Exchange.EndedAt
	}
	if len(m.held) == 0 || at.Before(m.oldest) {
		m.oldest = at
	}
	m.held = append(m.held, heldMerge{r, at})
	if m.Window > 0 {
		m.seen[r.Exchange.ConvKey] = at
	}
}

// Advance moves the Merger to Mark mk (after the Linker's rows up to it):
// rows held Window are decided and written.
func (m *Merger) Advance(mk Mark) {
	if mk.Now.After(m.now) {
		m.now = mk.Now
	}
	if m.Window <= 0 || len(m.held) == 0 {
		return
	}
	if m.now.Sub(m.oldest) < m.Window+m.Window/8 {
		return
	}
	m.decide(func(h *heldMerge) bool { return m.now.Sub(h.arrived) >= m.Window })
	// Forget the pairing of conversations gone quiet, so that it does not
	// grow with the run.
	for k, at := range m.seen {
		if m.now.Sub(at) > 2*m.Window {
			delete(m.seen, k)
			if s, ok := m.pairs.convOf[k]; ok {
				delete(m.pairs.convOf, k)
				delete(m.pairs.skewOf, k)
				delete(m.pairs.taken, s)
			}
			if c, ok := m.pairs.taken[k]; ok {
				delete(m.pairs.taken, k)
				delete(m.pairs.convOf, c)
				delete(m.pairs.skewOf, c)
			}
		}
	}
}

// Finish writes every row still held.
func (m *Merger) Finish() {
	m.decide(func(*heldMerge) bool { return true })
	m.held = nil
}

// Held is how many rows the Merger holds now.
func (m *Merger) Held() int { return len(m.held) }

// LowWater is the smallest conversation Seq (Row.Conv) of the rows held,
// or math.MaxInt64.
func (m *Merger) LowWater() int64 {
	lw := int64(math.MaxInt64)
	for i := range m.held {
		lw = min(lw, m.held[i].row.Conv)
	}
	return lw
}

// LowWaterBy is LowWater per source (the held row's Source; see
// Correlator.LowWaterBy).
func (m *Merger) LowWaterBy(into map[string]int64) {
	for i := range m.held {
		lowerTo(into, m.held[i].row.Exchange.Source, m.held[i].row.Conv)
	}
}

type convPair struct{ client, server string }

// mergeAgreeWindow is how close, after the skew, a client row and a server
// row whose views agree must start to be paired before the nearest rows
// that disagree. The skew is estimated from start differences, which hold
// each request's way through the network and intermediaries (milliseconds
// to hundreds of them) and are logged to the millisecond: within this
// window, time alone cannot tell two repeats of one call apart.
const mergeAgreeWindow = time.Second

// viewsAgree says whether the client received a status the server sent:
// the client's final HTTP status (0 for none) is among the server's. When a
// call is repeated with the same id (a new sessionless client instance,
// 2026-07-28) and one of its attempts was answered by something in between
// (a proxy's 503 that the server never sent), the server's row belongs to
// the attempt that received its answer.
func viewsAgree(c, s *schema.Exchange) bool {
	if len(c.HTTPStatuses) == 0 {
		return false
	}
	return slices.Contains(s.HTTPStatuses, c.HTTPStatuses[len(c.HTTPStatuses)-1])
}

// candidatesNear calls fn with the indexes of list (sorted by start time)
// whose start lies within [at-window, at+window], nearest first, at most
// limit of them.
func candidatesNear(rows []*schema.Exchange, list []int, at time.Time, window time.Duration, limit int, fn func(j int)) {
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

// decide settles the held rows that are due, with every held row as
// evidence, writes them in arrival order and keeps the rest.
func (m *Merger) decide(isDue func(*heldMerge) bool) {
	n := len(m.held)
	if n == 0 {
		return
	}
	rows := make([]*schema.Exchange, n)
	due := make([]bool, n)
	anyDue := false
	for i := range m.held {
		rows[i] = m.held[i].row.Exchange
		due[i] = isDue(&m.held[i])
		anyDue = anyDue || due[i]
	}
	if !anyDue {
		return
	}
	pr := &m.pairs
	var client []int
	byKey := map[mergeKey][]int{}
	dueConv := map[string]bool{}
	for i, r := range rows {
		switch r.Sides {
		case string(schema.SideClient):
			client = append(client, i)
		case string(schema.SideServer):
			if k, ok := keyOfRow(r); ok {
				byKey[k] = append(byKey[k], i)
			}
		}
		if due[i] {
			dueConv[r.ConvKey] = true
		}
	}
	for _, list := range byKey {
		sort.SliceStable(list, func(a, b int) bool { return rows[list[a]].StartedAt.Before(rows[list[b]].StartedAt) })
	}
	// Pass 1: pair conversations not yet paired and estimate each pair's
	// skew from the nearest candidates of every client row.
	samples := map[convPair][]time.Duration{}
	for _, i := range client {
		c := rows[i]
		if _, done := pr.convOf[c.ConvKey]; done {
			continue
		}
		k, ok := keyOfRow(c)
		if !ok {
			continue
		}
		candidatesNear(rows, byKey[k], c.StartedAt, skewWindow, 16, func(j int) {
			if s := rows[j]; sameSession(c, s) {
				if _, taken := pr.taken[s.ConvKey]; !taken {
					p := convPair{c.ConvKey, s.ConvKey}
					samples[p] = append(samples[p], s.StartedAt.Sub(c.StartedAt))
				}
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
		slices.Sort(ds)
		pairs = append(pairs, scored{p, len(ds), ds[len(ds)-1] - ds[0], ds[len(ds)/2]})
	}
	slices.SortFunc(pairs, func(a, b scored) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		if a.spread != b.spread {
			return cmp.Compare(a.spread, b.spread)
		}
		return cmp.Compare(a.p.client+a.p.server, b.p.client+b.p.server)
	})
	// Greedy, best first; a pairing is kept for good once one of its
	// conversations has a row due, the others are only this round's.
	tentClient, tentServer := map[string]bool{}, map[string]bool{}
	for _, sc := range pairs {
		if tentClient[sc.p.client] || tentServer[sc.p.server] {
			continue
		}
		if _, done := pr.convOf[sc.p.client]; done {
			continue
		}
		if _, done := pr.taken[sc.p.server]; done {
			continue
		}
		tentClient[sc.p.client], tentServer[sc.p.server] = true, true
		if dueConv[sc.p.client] || dueConv[sc.p.server] {
			pr.convOf[sc.p.client], pr.skewOf[sc.p.client] = sc.p.server, sc.median
			pr.taken[sc.p.server] = sc.p.client
		}
	}
	// Pass 2: pair rows within paired conversations, one to one: first the
	// pairs whose views agree within mergeAgreeWindow, then the others
	// within MergeTolerance, nearest first (then in client start order); a
	// pair is settled when one of its rows is due.
	slices.SortStableFunc(client, func(a, b int) int { return rows[a].StartedAt.Compare(rows[b].StartedAt) })
	type cand struct {
		i, j  int
		d     time.Duration
		agree bool
		order int
	}
	var cands []cand
	for ord, i := range client {
		c := rows[i]
		k, ok := keyOfRow(c)
		sconv, paired := pr.convOf[c.ConvKey]
		if !ok || !paired {
			continue
		}
		at := c.StartedAt.Add(pr.skewOf[c.ConvKey])
		candidatesNear(rows, byKey[k], at, MergeTolerance, 64, func(j int) {
			if rows[j].ConvKey == sconv && sameSession(c, rows[j]) {
				d := rows[j].StartedAt.Sub(at).Abs()
				cands = append(cands, cand{i, j, d, d <= mergeAgreeWindow && viewsAgree(c, rows[j]), ord})
			}
		})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.agree != b.agree {
			if a.agree {
				return -1
			}
			return 1
		}
		if a.d != b.d {
			return cmp.Compare(a.d, b.d)
		}
		return cmp.Compare(a.order, b.order)
	})
	used := make([]bool, n)
	partner := map[int]int{}
	for _, cd := range cands {
		if _, done := partner[cd.i]; done || used[cd.j] {
			continue
		}
		used[cd.j] = true
		partner[cd.i] = cd.j
	}
	settled := make([]bool, n)
	for i, j := range partner {
		if due[i] || due[j] {
			settled[i], settled[j] = true, true
		}
	}
	keep := m.held[:0]
	for i := range m.held {
		h := m.held[i]
		switch {
		case settled[i] && rows[i].Sides == string(schema.SideClient):
			j := partner[i]
			r := mergeRows(*rows[i], *rows[j], pr.skewOf[rows[i].ConvKey])
			h.row.Exchange = &r
			m.emit(h.row)
		case settled[i]:
			// merged into its client row
		case due[i]:
			r := rows[i]
			if _, covered := pr.convOf[r.ConvKey]; covered && r.Sides == string(schema.SideClient) && !succeeded(r.Outcome) && r.Outcome != classify.ToolError {
				// The server's log covers this conversation and never saw it.
				cp := *r
				if cp.PostCount == 0 && cp.Transport != string(schema.TransportStdio) {
					cp.FailedHop = HopClient
				} else {
					cp.FailedHop = HopNetwork
				}
				h.row.Exchange = &cp
			}
			m.emit(h.row)
		default:
			if len(keep) == 0 || h.arrived.Before(m.oldest) {
				m.oldest = h.arrived
			}
			keep = append(keep, h)
		}
	}
	clear(m.held[len(keep):])
	m.held = keep
}
