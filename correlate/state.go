package correlate

import (
	"slices"
	"strings"

	"mcptrace/classify"
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
const DefaultHistory = 256

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
// that the record can be freed), and makes it the newest entry of its
// conversation's history, forgetting the oldest beyond the bound.
func (c *Correlator) forgetLive(cv *conversation, ex *exchange) {
	if ex.exLive == nil {
		return
	}
	ex.exLive = nil
	ex.id.Text = strings.Clone(ex.id.Text)
	ex.method = internMethod(ex.method)
	ex.reqVersion = internVersion(ex.reqVersion)
	if ex.requestState != "" {
		ex.requestState = strings.Clone(ex.requestState)
	}
	if c.flushing || cv.byID == nil {
		return // its conversation is closing: nothing will look at it again
	}
	limit := c.historyOf(cv)
	if limit <= 0 {
		return
	}
	cv.past.push(ex)
	for cv.past.len() > limit {
		cv.unremember(cv.past.pop())
	}
}

// unremember forgets a judged exchange: later requests with its id or its
// call no longer find it. The latest request of a call answered
// input_required stays the call's latest (a continuation may come at any
// time; its chain's rows are held anyway).
func (cv *conversation) unremember(ex *exchange) {
	k := keyOf(ex.id)
	if list := cv.byID[k]; len(list) > 0 {
		if i := slices.Index(list, ex); i >= 0 {
			list = slices.Delete(list, i, i+1)
			if len(list) == 0 {
				delete(cv.byID, k)
			} else {
				cv.byID[k] = list
			}
		}
	}
	if cv.calls[ex.callHash] == ex && ex.outcome != classify.InputRequired {
		delete(cv.calls, ex.callHash)
	}
}

// addByID adds a request to the exchanges of its id (the maps of a
// conversation are made when first needed: most conversations park no
// response and no cancel).
func (cv *conversation) addByID(k idKey, ex *exchange) {
	if cv.byID == nil {
		cv.byID = map[idKey][]*exchange{}
	}
	cv.byID[k] = compactIDList(append(cv.byID[k], ex))
}

// park keeps a response that arrived before its request.
func (cv *conversation) park(k idKey, p pendingResp) {
	if cv.pending == nil {
		cv.pending = map[idKey][]pendingResp{}
	}
	cv.pending[k] = append(cv.pending[k], p)
}

// parkCancel counts a cancellation that arrived before its request.
func (cv *conversation) parkCancel(k dirKey) {
	if cv.cancels == nil {
		cv.cancels = map[dirKey]int{}
	}
	cv.cancels[k]++
}

// exRing is a FIFO of exchanges.
type exRing struct {
	buf  []*exchange
	head int // index of the oldest
	n    int
}

func (r *exRing) len() int { return r.n }

func (r *exRing) push(ex *exchange) {
	if r.n == len(r.buf) {
		grown := make([]*exchange, max(8, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = ex
	r.n++
}

func (r *exRing) pop() *exchange {
	ex := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return ex
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

// internMethod returns the MCP method names without keeping the text they
// were read from; other names are copied.
func internMethod(m string) string {
	for _, k := range knownMethods {
		if m == k {
			return k
		}
	}
	return strings.Clone(m)
}

var knownMethods = []string{
	"tools/call", "tools/list", "initialize", "resources/read", "resources/list", "resources/templates/list",
	"prompts/get", "prompts/list", "ping", "completion/complete", "logging/setLevel", "resources/subscribe",
	"resources/unsubscribe", "sampling/createMessage", "elicitation/create", "roots/list", "server/discover",
	"tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
}

// internVersion does the same for protocol versions.
func internVersion(v string) string {
	switch v {
	case "":
		return ""
	case "2024-11-05":
		return "2024-11-05"
	case "2025-03-26":
		return "2025-03-26"
	case "2025-06-18":
		return "2025-06-18"
	case "2025-11-25":
		return "2025-11-25"
	case "2026-07-28":
		return "2026-07-28"
	}
	return strings.Clone(v)
}
