package correlate

import (
	"container/heap"
	"slices"
	"strconv"
	"strings"
	"time"

	"mcptrace/schema"
)

// This file holds who a request belongs to and when the same id is the same
// request: client instances of a conversation without a session, the
// server's view of an id POSTed again in a session, and id conflicts. The
// rules are stated in doc.go ("Conversations", "Pairing").

// SameIDWindow is how long, in its log's event time, a server-side row of
// a session (before 2026-07-28) waits after it was answered before it is
// written: a POST of the same id with the same params within it is
// another attempt of the same request and joins the row (post_count,
// http_statuses). A client that did not get the answer (a proxy's 502, a
// connection lost on the way back, its own timeout) sends it again within
// seconds or after its request timeout, typically a minute.
const SameIDWindow = 2 * time.Minute

// instance is one client instance of a conversation without a session:
// one process's run of requests, from its first request (or handshake)
// until the next instance starts.
type instance struct {
	n     int32     // its number in the conversation; exchanges carry it
	sent  int       // client requests it has sent
	hi    int64     // the highest integer id it has sent
	hasHi bool      // it has sent an integer id
	hiAt  time.Time // when the request with id hi started
}

// tracksInstances says whether a conversation is divided into client
// instances for id matching: a client's log without a session id (2026-07-28
// traffic, or a log that does not record one). A session is one instance;
// a server's log without sessions interleaves many clients, whose id
// sequences cannot be told apart.
func (cv *conversation) tracksInstances() bool {
	return cv.session() == "" && cv.lin().side == schema.SideClient
}

// targetOf names the server a request went to, as far as the record says:
// the server's name the logger gives, else the URL without its query.
func targetOf(o *schema.Observation) string {
	if o.ServerName != "" || o.HTTP == nil {
		return o.ServerName
	}
	u := o.HTTP.URL
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

// intID returns an id's value when it is an integer that fits in 64 bits.
func intID(id schema.ID) (int64, bool) {
	if id.Type != schema.IDNumber {
		return 0, false
	}
	n, err := strconv.ParseInt(id.Text, 10, 64)
	return n, err == nil
}

// isHandshake: the request a client instance starts with (initialize
// before 2026-07-28, server/discover in 2026-07-28).
func isHandshake(method string) bool { return method == "initialize" || method == "server/discover" }

// latestIn returns the latest request of list sent in one direction by one
// instance.
func latestIn(list []remRef, fromServer bool, inst int32) remRef {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].server() == fromServer && list[i].instOf() == inst {
			return list[i]
		}
	}
	return remRef{}
}

// repeatOf says whether a request is the same request as prev sent again
// (same id, same params) while prev has not succeeded: an SDK re-POST, a
// frame written twice, or the log's trigger naming who repeated it. The
// rules of attach then apply to it.
func repeatOf(prev remRef, m *schema.Message) bool {
	if !prev.ok() || prev.params() != m.ParamsHash || !m.ID.Valid() {
		return false
	}
	failed, _ := prev.failedSoFar()
	return !prev.final() || failed
}

// instanceOf returns the client instance a request belongs to (0 in
// conversations that are not divided), starting a new instance when the
// request shows one: a handshake (initialize, server/discover) whose id
// does not carry on the instance's sequence, or an integer id lower than
// one the instance sent before it (its sequence started again) that is
// not held by a request still in flight. The same request sent again
// (repeatOf) never starts one.
func (c *Correlator) instanceOf(cv *conversation, o *schema.Observation, m *schema.Message, fromServer bool, list []remRef) int32 {
	if !cv.tracksInstances() {
		return 0
	}
	r := cv.more()
	in := r.inst
	if in == nil {
		in = &instance{}
		r.inst = in
	}
	if fromServer {
		return in.n // a request of the server, answered by this instance
	}
	id, isInt := intID(m.ID)
	if in.sent > 0 && !repeatOf(latestIn(list, false, in.n), m) {
		fresh := false
		switch {
		case isHandshake(m.Method):
			fresh = !isInt || !in.hasHi || id <= in.hi
		case isInt && in.hasHi && id < in.hi && in.hiAt.Before(o.Time):
			fresh = !slices.ContainsFunc(list, func(x remRef) bool {
				return !x.server() && x.instOf() == in.n && x.inFlight(cv)
			})
		}
		if fresh {
			in = &instance{n: in.n + 1}
			r.inst = in
		}
	}
	in.sent++
	if isInt && (!in.hasHi || id > in.hi) {
		in.hi, in.hasHi, in.hiAt = id, true, o.Time
	}
	return in.n
}

// versionOf is the protocol version an exchange was sent under.
func (ex *exchange) versionOf(cv *conversation) string {
	if v := ex.reqVersion(); v != "" {
		return v
	}
	return cv.version()
}

// idsUniquePerSession: before 2026-07-28 an id is never reused within a
// session; from 2026-07-28 it need only differ from the requests in
// flight.
func idsUniquePerSession(version string) bool { return version < "2026-07-28" }

// inFlight says whether a request is still awaiting its response: not
// judged, and either nothing says how its sending went (stdio, a request
// of the server, a frame whose POST is logged later) or the server took it
// and the response is still to come (202, or before 2026-07-28 an event
// stream that ended without it: resumable). A request whose last attempt
// failed (an error status, no response, in 2026-07-28 a closed stream) is
// not in flight; it may be sent again.
func (ex *exchange) inFlight(cv *conversation) bool {
	if ex.final {
		return false
	}
	n := len(ex.attempts)
	if n == 0 {
		return true
	}
	at := &ex.attempts[n-1]
	switch {
	case !at.Responded || at.Status < 200 || at.Status > 299:
		return false
	case at.Status == 202:
		return true
	case at.SSE:
		return idsUniquePerSession(ex.versionOf(cv))
	}
	return false
}

// checksIDConflicts says whether the requests of a conversation come from
// one sender each way, so that an id reused while in flight is a conflict:
// a client's log, or a server's conversation keyed by a session or a
// connection (a server's log without either interleaves many clients,
// whose ids collide by nature).
func (cv *conversation) checksIDConflicts() bool {
	return cv.lin().side == schema.SideClient || !cv.byFile
}

// idConflict says whether a new request (its record from start to end)
// and a different request (other params) of the same sender and instance
// with the same id were open at the same time: one started while the
// other was open. An exchange is open from its start until it was
// answered (endedAt), or, not judged yet, for as long as it is in flight,
// else until its last attempt ended. Records are written when they end,
// so the earlier request may come second: the pair is found either way,
// and the row of the two that comes second in the log is the one flagged.
func idConflict(cv *conversation, list []remRef, m *schema.Message, o *schema.Observation, fromServer bool, inst int32) bool {
	if !m.ID.Valid() || !cv.checksIDConflicts() {
		return false
	}
	start, end := o.Time, o.EndOrStart()
	return slices.ContainsFunc(list, func(x remRef) bool {
		if x.server() != fromServer || x.instOf() != inst || x.params() == m.ParamsHash {
			return false
		}
		exEnd, open := x.endedAt(), false
		if !x.final() {
			if open = x.ex.inFlight(cv); !open {
				exEnd = x.ex.lastEndAt()
			}
		}
		exStart := x.startedAt()
		startedWhileOpen := !start.Before(exStart) && (open || start.Before(exEnd))
		openedWhileOpen := exStart.After(start) && exStart.Before(end)
		return startedWhileOpen || openedWhileOpen
	})
}

// sameRequestAgain: on the server's side of a session before 2026-07-28, a
// request with the id and params of an earlier one is that request sent
// again, even after it was answered (the client may never have got the
// answer): an SDK-level repeat, retry_basis same_id.
func sameRequestAgain(cv *conversation, prev remRef, o *schema.Observation) bool {
	return cv.lin().side == schema.SideServer && cv.session() != "" && o.HTTP != nil && !prev.server() &&
		prev.idsUnique(cv)
}

// sameIDHold is the wait of Correlator.SameIDHold.
func (c *Correlator) sameIDHold() time.Duration {
	switch {
	case c.SameIDHold != 0:
		return c.SameIDHold
	case c.Lateness > 0:
		return min(SameIDWindow, c.Lateness)
	}
	return SameIDWindow
}

// mayHoldSameID says whether a judged exchange waits sameIDHold for
// another attempt of its id before it is written: a client request on the
// server's side of a session before 2026-07-28, carried by HTTP.
func (c *Correlator) mayHoldSameID(cv *conversation, ex *exchange) bool {
	return !c.flushing && c.sameIDHold() > 0 && !ex.fromServer && ex.id.Valid() && len(ex.attempts) > 0 && cv.lin().side == schema.SideServer &&
		cv.session() != "" && idsUniquePerSession(ex.versionOf(cv))
}

// keepUnjudged keeps, before an exchange is judged, its row as it was, so
// that another attempt can reopen it (finish calls it first).
func (c *Correlator) keepUnjudged(cv *conversation, ex *exchange) {
	if c.mayHoldSameID(cv, ex) {
		pre := *ex.getRow()
		ex.holding().unjudged = &pre
	}
}

// holdSameID holds a judged exchange (finish calls it instead of writing
// the row) when it may still get another attempt of its id.
func (c *Correlator) holdSameID(cv *conversation, ex *exchange) bool {
	if ex.holdRO().unjudged == nil || !c.mayHoldSameID(cv, ex) || ex.chain() != nil || ex.getRow().SessionExpired {
		if ex.holdPart != nil {
			ex.holdPart.unjudged = nil
		}
		return false
	}
	r := cv.more()
	r.holdN++
	ex.heldSameID, ex.holdPart.holdSeq = true, r.holdN
	if r.nHeld++; len(r.sameIDHeld) > 2*r.nHeld+8 {
		r.sameIDHeld = slices.DeleteFunc(r.sameIDHeld, func(x *exchange) bool { return !x.heldSameID })
	}
	r.sameIDHeld = append(r.sameIDHeld, ex)
	if c.heldByLog == nil {
		c.heldByLog = map[logKey]*heldHeap{}
	}
	h := c.heldByLog[*ex.log]
	if h == nil {
		h = &heldHeap{}
		c.heldByLog[*ex.log] = h
	}
	heap.Push(h, heldEntry{ex: ex, seq: ex.holdPart.holdSeq, end: ex.endedAt})
	return true
}

// reopenSameID takes a held exchange back for another attempt: the same id
// and params POSTed again in its session, logged in the same log, started
// within sameIDHold of its answer, and logged before that log's time
// passed the window (the record's watermark, the newest time of the log
// before it, is within it too). Whether a row is still held when such a
// repeat comes depends only on the log: it is written at a Mark only once
// its log's time is past the window or its log has ended, after which no
// record of the log can join it. Its row goes back to how it was before
// it was judged; the attempt is added to it and it is judged again on all
// of them.
func (c *Correlator) reopenSameID(cv *conversation, prev *exchange, o *schema.Observation, m *schema.Message) {
	if !prev.heldSameID || o.HTTP == nil || o.Trigger != "" || prev.paramsHash != m.ParamsHash || logOf(o) != *prev.log ||
		o.Time.Sub(prev.endedAt) > c.sameIDHold() || c.wm.Sub(prev.endedAt) > c.sameIDHold() {
		return
	}
	prev.heldSameID = false // its entries in sameIDHeld and heldByLog are dropped when met
	cv.more().nHeld--
	*prev.getRow() = *prev.holdPart.unjudged
	prev.holdPart.unjudged = nil
	prev.final, prev.response, prev.lateResponse = false, nil, false
	cv.open++
	c.Stats.Exchanges-- // judged again below, and counted again then (finish)
	if !slices.Contains(cv.openList, prev) {
		cv.openList = append(cv.openList, prev)
	}
}

// writeHeld writes a held row.
func (c *Correlator) writeHeld(cv *conversation, ex *exchange) {
	ex.heldSameID = false
	if ex.holdPart != nil {
		ex.holdPart.unjudged = nil
	}
	cv.more().nHeld--
	c.emitChained(cv, ex)
	c.forgetLive(cv, ex)
}

// releaseAllSameID writes every row a closing conversation still holds, in
// the order they were held.
func (c *Correlator) releaseAllSameID(cv *conversation) {
	if cv.rare == nil {
		return
	}
	for _, ex := range cv.rare.sameIDHeld {
		if ex.heldSameID {
			c.writeHeld(cv, ex)
		}
	}
	cv.rare.sameIDHeld, cv.rare.dueRows = nil, nil
}

// heldEntry is a held row in its log's heap; seq tells a stale entry (the
// row was since reopened, written, or held again) from a live one. end is
// the exchange's end when it was held, the heap's key: a reopened exchange
// ends later, and a key that moved under the heap would leave its order,
// and so which rows a Mark finds due, to depend on the other conversations
// sharing the correlator (the number of shards).
type heldEntry struct {
	ex  *exchange
	seq int64
	end time.Time
}

// heldHeap orders the held rows of one log by the end of their exchange:
// the order in which its time makes them due.
type heldHeap []heldEntry

func (h heldHeap) Len() int           { return len(h) }
func (h heldHeap) Less(i, j int) bool { return h[i].end.Before(h[j].end) }
func (h heldHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *heldHeap) Push(x any)        { *h = append(*h, x.(heldEntry)) }
func (h *heldHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = heldEntry{}
	*h = old[:len(old)-1]
	return x
}

// sameIDDue returns the open conversations, not among closing, with held
// rows due at Mark m, each with those rows in dueRows. A row is due when
// its log's time is past its wait (sameIDHold), when its log has ended
// (Clock.End), or when its log has stood still for longer than the wait
// while the run's newest time went past it too: a log that stopped (a
// server's stream with nothing more to say, a file whose end the pipeline
// did not signal) while other logs go on, whose rows their partners on
// the other side are waiting for. A log that is read behind the others by
// more than the wait (a partition consumed late) may so have a row written
// before a repeat of its id comes: the repeat is then a row of its own
// with retry_of (reopenSameID finds the row no longer held). Every log
// with held rows is looked at: a log that stands still is not in the
// Mark.
func (c *Correlator) sameIDDue(m *Mark, closing []*conversation) []*conversation {
	var due []*conversation
	hold := c.sameIDHold()
	for _, cv := range closing {
		cv.closingNow = true
	}
	defer func() {
		for _, cv := range closing {
			cv.closingNow = false
		}
	}()
	for lk, h := range c.heldByLog {
		now, ended, stood := c.clocks.now(lk), c.clocks.ended(lk), c.clocks.quiet(lk, m.Now) > hold
		for h.Len() > 0 {
			end := (*h)[0].end
			if !ended && now.Sub(end) <= hold && (!stood || m.Now.Sub(end) <= hold) {
				break
			}
			e := heap.Pop(h).(heldEntry)
			ex := e.ex
			if !ex.heldSameID || ex.holdPart.holdSeq != e.seq || ex.cv.closingNow {
				continue
			}
			r := ex.cv.more()
			if len(r.dueRows) == 0 {
				due = append(due, ex.cv)
			}
			r.dueRows = append(r.dueRows, ex)
		}
		if h.Len() == 0 {
			delete(c.heldByLog, lk)
		}
	}
	return due
}

// releaseDueSameID writes the rows sameIDDue found due in a conversation,
// in the order they were held.
func (c *Correlator) releaseDueSameID(cv *conversation) {
	if cv.rare == nil {
		return
	}
	r := cv.rare
	rows := r.dueRows
	r.dueRows = nil
	slices.SortFunc(rows, func(a, b *exchange) int { return cmpInt64(a.holdPart.holdSeq, b.holdPart.holdSeq) })
	for _, ex := range rows {
		if ex.heldSameID {
			c.writeHeld(cv, ex)
		}
	}
	if r.nHeld == 0 {
		r.sameIDHeld = nil
	}
}

// basisNextInstance is the retry_basis of a call repeated by a later
// instance of a client without sessions.
const basisNextInstance = "same_call_next_instance"

// laterInstance says whether a client request, the first of its call in
// its conversation, repeats p, a request of an earlier conversation of the
// same client log where neither has a session: the new conversation (a
// new connection of the log) began with a handshake, after the earlier
// one's latest request (the client started again), the same client as far
// as the log says, the same target, within RetryWindow. Conversations that
// overlap in time (a pool of connections) or one that starts without a
// handshake (another connection of the same running client, or a
// separate run that the log does not relate) are not linked, nor is the
// handshake itself (it is what says the client started again).
func laterInstance(p *linkEx, cv *linkConv, ev *linkEvent) bool {
	return cv.fresh && !ev.opens && p.conv != cv && p.conv.session == "" && ev.session == "" && sameClient(p.conv.client, ev.conv.client) &&
		p.target == ev.target && !cv.firstStartAt().Before(p.conv.lastStartAt()) && ev.time.Sub(p.startedAt()) <= RetryWindow
}

// noteFailed keeps a sessionless conversation with a failed request in
// Linker.earlier (its LowWater) while a later instance may still repeat it.
func (l *Linker) noteFailed(x *linkEx) {
	if x.state.failed && x.conv.session == "" && !x.conv.repeatable {
		x.conv.repeatable = true
		l.earlier = append(l.earlier, x.conv)
	}
}

// forgetEarlier drops from Linker.earlier the conversations whose latest
// request is RetryWindow behind their log's time.
func (l *Linker) forgetEarlier() {
	keep := l.earlier[:0]
	for _, cv := range l.earlier {
		if l.clocks.now(*cv.log).Sub(cv.lastStartAt()) <= RetryWindow {
			keep = append(keep, cv)
		} else {
			cv.repeatable = false
		}
	}
	clear(l.earlier[len(keep):])
	l.earlier = keep
}
