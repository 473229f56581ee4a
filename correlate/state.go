package correlate

import (
	"bytes"
	"strings"

	"mcptrace/schema"
)

// This file keeps the state of a conversation compact: what an exchange
// keeps once its row has gone out, and how much of its conversation's past
// is remembered (doc.go, "State and time").

// DefaultHistory is how many judged requests a conversation keyed by a
// session or a connection remembers for the requests that follow (id
// matching, retries, duplicates, id conflicts): its latest ones, in the
// order they were written. A conversation keyed by its file (no session,
// no connection: a stdio log, a log that interleaves many clients)
// remembers 16 times as many. Open requests are always remembered.
const DefaultHistory = 128

// historyOf is how many judged requests cv remembers (0: no bound).
func (c *Correlator) historyOf(cv *conversation) int {
	n := c.History
	switch {
	case n < 0:
		return 0
	case n == 0:
		n = DefaultHistory
	}
	if cv.byFile {
		n *= 16
	}
	return n
}

// forgetLive drops what a judged exchange no longer needs once its row has
// gone out (its row, attempts, response, ...), keeps its own copies of the
// few strings it still needs (not views into the record it came from, so
// that the record can be freed), and, when its conversation indexed it,
// puts its summary (a rem) in its place in the index and makes that the
// newest entry of its conversation's history, forgetting the oldest beyond
// the bound. The summary lets go of the exchange (history.go): nothing of
// the conversation points to it any longer (its place in the open list is
// left empty).
func (c *Correlator) forgetLive(cv *conversation, ex *exchange) {
	if ex.exLive == nil {
		return
	}
	ex.exLive = nil // its id, method and version are its own already (own)
	if m := ex.more; m != nil && m.requestState != "" {
		m.requestState = strings.Clone(m.requestState)
	}
	if c.flushing {
		return // its conversation is closing: nothing will look at it again
	}
	var x *rem
	if ex.indexed {
		x = summarize(ex)
		cv.idx.summarized(idHash(keyOf(ex.id)), ex, x)
		cv.idx.summarized(callSlotHash(ex.callHash), ex, x)
	}
	if !keepExchanges {
		cv.vacate(ex)
	}
	limit := c.historyOf(cv)
	if limit <= 0 || x == nil {
		return
	}
	cv.pushPast(x)
	for cv.past.len() > limit {
		cv.unremember(cv.popPast())
	}
}

// vacate empties ex's place in the open list: the list keeps its length,
// so that it is pruned when it was before (and a request taken back,
// reopenSameID, takes the place it did).
func (cv *conversation) vacate(ex *exchange) {
	for i := len(cv.openList) - 1; i >= 0; i-- {
		if cv.openList[i] == ex {
			cv.openList[i] = nil
			return
		}
	}
}

// unremember forgets a judged request: later requests with its id or its
// call no longer find it. The latest request of a call answered
// input_required stays the call's latest (a continuation may come at any
// time; its chain's rows are held anyway).
func (cv *conversation) unremember(x *rem) {
	r := x.ref()
	cv.idx.delID(r.key(), r)
	if cv.idx.call(x.callHash) == r && !r.isInputRequired() {
		cv.idx.delCall(x.callHash)
	}
}

// addByID adds a request to the requests of its id. Once an id has 8, it
// keeps of them those still open and the latest finished one: all that
// later pairing and retries look at.
func (cv *conversation) addByID(k idKey, ex *exchange) {
	ex.indexed = true
	cv.idx.addID(k, remRef{ex: ex})
	var buf [8]remRef
	if list := cv.idx.ids(k, buf[:0]); len(list) >= 8 {
		lastFinal := -1
		for i, x := range list {
			if x.final() {
				lastFinal = i
			}
		}
		for i, x := range list {
			if x.final() && i != lastFinal {
				cv.idx.delID(k, x)
			}
		}
	}
}

// park keeps a response that arrived before its request.
func (cv *conversation) park(k idKey, p pendingResp) {
	r := cv.more()
	if r.pending == nil {
		r.pending = map[idKey][]pendingResp{}
	}
	r.pending[k] = append(r.pending[k], p)
}

// parkCancel counts a cancellation that arrived before its request.
func (cv *conversation) parkCancel(k dirKey) {
	r := cv.more()
	if r.cancels == nil {
		r.cancels = map[dirKey]int{}
	}
	r.cancels[k]++
}

// own makes an exchange just attached, and its row, share their text with
// its conversation, or keep copies of their own, rather than pieces of the
// record and the message they were read from: an open exchange would
// otherwise keep those alive for as long as it waits (a never-answered
// request of a conversation that never ends, for the whole run). The text
// a conversation keeps (its URL, target and tool) is shared with the other
// conversations of the correlator through nm (most go to a few servers).
// The arguments are made the row's own by keepOwn once the observation is
// done, and only for a row still waiting then.
func (cv *conversation) own(ex *exchange, nm *names) {
	r := ex.getRow()
	if ex.methCode == oddText {
		ex.more.method = strings.Clone(ex.more.method)
	}
	r.Method = ex.method()
	ex.id.Text = ownIDText(ex.id.Text)
	if r.JSONRPCID != nil {
		*r.JSONRPCID = ex.id.Text
	}
	if ex.verCode == oddText {
		ex.more.version = strings.Clone(ex.more.version)
	}
	if r.ToolName != nil {
		*r.ToolName = nm.intern(*r.ToolName)
	}
	if r.SessionID != nil && *r.SessionID == cv.session() {
		*r.SessionID = cv.session()
	}
	if r.URL != nil {
		*r.URL = nm.intern(*r.URL)
	}
	if r.ClientName != nil && *r.ClientName == cv.client.Name {
		*r.ClientName = cv.client.Name
	}
	if r.ClientVersion != nil && *r.ClientVersion == cv.client.Version {
		*r.ClientVersion = cv.client.Version
	}
	if r.ServerName != nil && *r.ServerName == cv.server.Name {
		*r.ServerName = cv.server.Name
	}
	if r.ServerVersion != nil && *r.ServerVersion == cv.server.Version {
		*r.ServerVersion = cv.server.Version
	}
}

// keepOwn runs when an observation is done: a request it attached whose
// row still waits (not answered, or held) gets its own copy of its
// arguments, which were a view into the body the decoder unescaped. Until
// then it shares them, so an exchange answered in its own record (most)
// costs no copy; a waiting one no longer keeps its whole record's bodies
// alive (the request's envelope and a response stream's events). Its row
// is parked if it still waits parkAfter observations later (park.go).
func (c *Correlator) keepOwn() {
	for i, ex := range c.fresh {
		c.fresh[i] = nil
		if ex.exLive == nil || ex.row == nil {
			continue // its row has gone out
		}
		if r := ex.row; len(r.Arguments) > 0 {
			args := bytes.Clone(r.Arguments)
			if u := ex.holdRO().unjudged; u != nil && len(u.Arguments) == len(args) && &u.Arguments[0] == &r.Arguments[0] {
				u.Arguments = args
			}
			r.Arguments = args
		}
		c.waiting = append(c.waiting, ex)
	}
	c.fresh = c.fresh[:0]
	c.parkWaiting()
}

// names interns text that repeats across conversations (URLs, targets,
// tool names), with a bound: the table starts again when full, and long
// text gets a copy of its own.
type names struct {
	m map[string]string
}

const (
	namesMax = 512  // longer text is copied, not interned
	namesCap = 4096 // entries before the table starts again
)

func (nm *names) intern(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > namesMax {
		return strings.Clone(s)
	}
	if v, ok := nm.m[s]; ok {
		return v
	}
	if nm.m == nil {
		nm.m = make(map[string]string, 64)
	} else if len(nm.m) >= namesCap {
		clear(nm.m)
	}
	v := strings.Clone(s)
	nm.m[v] = v
	return v
}

// targetOf is targetOf(o) as the conversations keep it.
func (cv *conversation) targetOf(o *schema.Observation, nm *names) string {
	return nm.intern(targetOf(o))
}

// noImpl is the client or server of a conversation that has not named it;
// never written.
var noImpl schema.Implementation

// impls shares the clients and servers conversations name (most name a
// few), with memory of their own, with a bound: the table starts again
// when full, and long text gets a copy of its own.
type impls struct {
	m map[schema.Implementation]*schema.Implementation
}

func (t *impls) of(i schema.Implementation) *schema.Implementation {
	if i == (schema.Implementation{}) {
		return &noImpl
	}
	if p := t.m[i]; p != nil {
		return p
	}
	p := &schema.Implementation{Name: strings.Clone(i.Name), Version: strings.Clone(i.Version)}
	if len(i.Name)+len(i.Version) > namesMax {
		return p
	}
	if t.m == nil {
		t.m = make(map[schema.Implementation]*schema.Implementation, 16)
	} else if len(t.m) >= namesCap {
		clear(t.m)
	}
	t.m[*p] = p
	return p
}

// exRing is a FIFO of remembered requests: its len(buf) entries, from
// the index its conversation keeps (pastHead, where it takes no room: a
// conversation of 240 bytes, not 248, issue 11) on, cyclic in
// buf[:cap(buf)].
type exRing struct {
	buf []*rem
}

func (r *exRing) len() int { return len(r.buf) }

// pushPast makes x the newest of its history.
func (cv *conversation) pushPast(x *rem) {
	r, n := &cv.past, len(cv.past.buf)
	if n == cap(r.buf) {
		size := 2 * n
		switch {
		case size == 0:
			size = 2 // most conversations judge a few requests
		case size < 8:
			size = 8 // and those that judge more, many
		}
		grown := make([]*rem, n, size)
		all := r.buf[:cap(r.buf)]
		for i := 0; i < n; i++ {
			grown[i] = all[(int(cv.pastHead)+i)%len(all)]
		}
		r.buf, cv.pastHead = grown, 0
	}
	all := r.buf[:cap(r.buf)]
	all[(int(cv.pastHead)+n)%len(all)] = x
	r.buf = r.buf[:n+1]
}

// oldestPast is the oldest of its history (it must not be empty).
func (cv *conversation) oldestPast() *rem { return cv.past.buf[:cap(cv.past.buf)][cv.pastHead] }

// popPast forgets the oldest of its history (it must not be empty).
func (cv *conversation) popPast() *rem {
	all := cv.past.buf[:cap(cv.past.buf)]
	x := all[cv.pastHead]
	all[cv.pastHead] = nil
	cv.pastHead = int32((int(cv.pastHead) + 1) % len(all))
	cv.past.buf = cv.past.buf[:len(cv.past.buf)-1]
	return x
}

// internObservation makes the observation's side and transport the
// package's constants: a decoder may hand out pieces of the record's text
// for them, which every row and key of its conversation would then keep
// alive.
func internObservation(o *schema.Observation) {
	switch o.Side {
	case schema.SideClient:
		o.Side = schema.SideClient
	case schema.SideServer:
		o.Side = schema.SideServer
	}
	switch o.Transport {
	case schema.TransportStreamableHTTP:
		o.Transport = schema.TransportStreamableHTTP
	case schema.TransportStdio:
		o.Transport = schema.TransportStdio
	case schema.TransportHTTPSSE:
		o.Transport = schema.TransportHTTPSSE
	}
}

// knownMethods are the methods an exchange keeps as a number (methCode):
// the MCP methods, without the text they were read from.
var knownMethods = [...]string{"", "tools/call", "tools/list", "initialize", "resources/read", "resources/list", "resources/templates/list",
	"prompts/get", "prompts/list", "ping", "completion/complete", "logging/setLevel", "resources/subscribe",
	"resources/unsubscribe", "sampling/createMessage", "elicitation/create", "roots/list", "server/discover",
	"tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
}
