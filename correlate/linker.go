package correlate

import (
	"math"
	"time"

	"mcptrace/schema"
)

// Item is what a correlator emits: a judged row, or an event the Linker
// needs to relate conversations (a client request started, its retry state
// changed, its conversation expired or changed client, a client sent
// initialize, a conversation ended). Only Key is for the pipeline, which
// merges the shards' items by it and hands them, in that order, to one
// Linker; the rest is the Linker's. Items may be copied.
type Item struct {
	Key  Key
	kind itemKind
	hold bool // a row of an expired session: held until the log shows what the client did
	// A row's: how many of its attempts ran or may have run on the server
	// (a repeat in the next session is a side effect done twice only if
	// it ran). When the row was sent on a session after that session's
	// 404, ev.stuckSince says when the 404 came (did the client initialize
	// since?): kept out of Item, which every row and event is.
	ran  int32
	conv int64 // the conversation's first Seq
	ref  exRef // the exchange
	row  *schema.Exchange
	ev   *linkEvent
	st   *stateEvent // itemState's event: most events are these
	end  *ConvEnd
}

// stateEvent is what itemState tells: a request's new retry state, and
// the Linker's record of it (linkEvent's state and lx). Its own type, of
// 32 bytes rather than linkEvent's 240 (issue 11: most link events are
// state changes).
type stateEvent struct {
	state exState
	lx    *linkEx
}

// ConvEnd reports a closed conversation: its key (ConversationKey), the Seq
// of its first observation, and its latest position in each log it has
// seen. Every row of it was emitted before this item.
type ConvEnd struct {
	Key   string
	First int64
	Last  []schema.Position
}

// Ended returns the closed conversation an item reports (nil for other
// items).
func (it *Item) Ended() *ConvEnd { return it.end }

// IsRow says whether the item carries a row (the rest are events).
func (it *Item) IsRow() bool { return it.kind == itemRow }

type itemKind uint8

const (
	itemRow     itemKind = iota // a judged exchange
	itemAttach                  // a client request the log remembers for retries across sessions
	itemState                   // a remembered request's retry state changed
	itemConv                    // a conversation's expiry or client changed
	itemConvEnd                 // a conversation closed
	itemInit                    // a client sent initialize
)

// exRef names an exchange in a run: the Seq of the observation that started
// it and the number of the request among those that observation attached.
type exRef struct {
	seq int64
	n   int32
}

// exState is what a retry in another session looks at in the request it
// repeats: whether it failed so far, and its Retry-After.
type exState struct {
	final, failed, uncertain bool
	ran                      bool // it ran, or may have run, on the server
	// When its last attempt ended, as an instant (lastEnd): 24 bytes in
	// all rather than 40 (every open exchange keeps the state it told).
	lastEndN    int32
	retryAfterS float64
	lastEndS    int64
}

// lastEnd is when its last attempt ended.
func (s exState) lastEnd() time.Time { return instantTime(s.lastEndS, s.lastEndN) }

func (ex *exchange) state() exState {
	failed, uncertain := ex.failedSoFar()
	return exState{final: ex.final, failed: failed, uncertain: uncertain, ran: ex.ranSoFar(), retryAfterS: ex.retryAfterS, lastEndS: ex.lastEndS, lastEndN: ex.lastEndN}
}

// linkEvent is the payload of the events.
type linkEvent struct {
	log logKey // the conversation's log (attach, init, held rows)
	// stuckSince: a row sent on its session after the session's 404 at
	// this time (diagnose.go).
	stuckSince time.Time
	callHash   uint64    // attach
	exID       string    // attach
	time       time.Time // attach: the request's time; init: the initialize's
	session    string    // attach
	target     string    // attach: the server it went to (targetOf)
	opens      bool      // attach: an initialize or server/discover (a client starting)
	client     string    // init: the clientInfo name
	conv       convState // attach, conv
	state      exState   // attach (later changes: stateEvent)
	// attach: the Linker's record of the request, made by the
	// correlator (empty) when it tells the attach and filled by the
	// Linker: the request's state changes find it without a map of the
	// open requests by exRef (issue 11). Only the Linker reads or writes
	// what it points to.
	lx *linkEx
	// attach: look for the call in the client's previous session; the
	// request is not already a repeat of the same id; a person sent it;
	// its tool is not safe to repeat.
	lookup, originNone, manual, unsafeTool bool
}

func (c *Correlator) emit(it Item) {
	it.Key = c.key
	c.key.N++
	c.out(it)
}

// markCut marks a row emitted while the correlator cuts its holds short
// (hold_cut), with why when it is evicting.
func (c *Correlator) markCut(row *schema.Exchange) {
	if c.cutting {
		row.HoldCut = true
		if c.evicting {
			row.Reason += c.evictedReason()
		}
	}
}

func (c *Correlator) emitRow(cv *conversation, row schema.Exchange, ref exRef, hold bool) {
	c.markCut(&row)
	it := Item{kind: itemRow, conv: cv.first, ref: ref, row: c.emitted(&row), hold: hold}
	if hold {
		it.ev = c.linkEv(linkEvent{log: cv.lin()})
	}
	c.emit(it)
}

// emitRowOf emits the row of a judged exchange with what the Linker needs
// of it beyond the row (diagnose.go). The row is handed on as it is, not
// copied: it is ex's own (its rowBox, attach), and the caller drops ex's
// live part right after (forgetLive), so nothing of the correlator reads
// or writes it again and it is the Item's, as a copy from the slab was
// (issue 11: one copy of every row, 840 bytes, less).
func (c *Correlator) emitRowOf(cv *conversation, ex *exchange, row *schema.Exchange, hold bool) {
	c.markCut(row)
	it := Item{kind: itemRow, conv: cv.first, ref: ex.ref, row: row, hold: hold, ran: int32(ex.ran)}
	if stuck := ex.holdRO().stuckSince; hold || !stuck.IsZero() {
		it.ev = c.linkEv(linkEvent{log: cv.lin(), stuckSince: stuck})
	}
	c.emit(it)
}

// tellAttach tells the Linker of a client request: it remembers it as the
// latest of its call in the log and, when lookup is set, looks for the
// call in the client's previous, expired session.
func (c *Correlator) tellAttach(cv *conversation, ex *exchange, o *schema.Observation, lookup bool) {
	cv.linked, ex.linked = true, true
	cv.setTold(cv.expired, cv.client)
	ex.told = ex.state()
	ex.lx = &linkEx{}
	c.emit(Item{kind: itemAttach, conv: cv.first, ref: ex.ref, ev: c.linkEv(linkEvent{lx: ex.lx, log: cv.lin(), callHash: ex.callHash, exID: ex.exID,
		time: ex.startedAt, session: cv.session(), target: cv.targetOf(o, &c.names), opens: isHandshake(ex.method()), conv: cv.told(), state: ex.told, lookup: lookup,
		originNone: ex.getRow().RetryOrigin == "none", manual: o.Trigger == schema.TriggerManual, unsafeTool: !cv.safeToRepeat(ex.tool())})})
}

// tellState tells the Linker that a remembered request's retry state
// changed.
func (c *Correlator) tellState(ex *exchange) {
	if !ex.linked || ex.exLive == nil {
		return
	}
	if st := ex.state(); st != ex.told {
		ex.told = st
		c.emit(Item{kind: itemState, conv: ex.cv.first, ref: ex.ref, st: c.slabs.states.put(stateEvent{state: st, lx: ex.lx})})
	}
}

// tellConv tells the Linker that a conversation it knows expired or
// changed client.
func (c *Correlator) tellConv(cv *conversation) {
	if !cv.linked {
		return
	}
	if st := (convState{cv.expired, cv.client.Name}); st != cv.told() {
		cv.setTold(cv.expired, cv.client)
		c.emit(Item{kind: itemConv, conv: cv.first, ev: c.linkEv(linkEvent{conv: st})})
	}
}

// Row is a finished row on its way out of the Linker (and the Merger).
type Row struct {
	// Key orders rows: a row that went through at once keeps its item's
	// key; a held row takes the key of what released it (the initialize's
	// item, or Key{Seq: Mark.Seq, Again: a, Conv: math.MaxInt64} for
	// Advance and Finish). Keys do not decrease along the Linker's output;
	// they are not unique.
	Key Key
	// Conv is the Seq of the first observation of the row's conversation:
	// replaying input from there rebuilds the row.
	Conv     int64
	Exchange *schema.Exchange
}

// Linker makes the links between conversations of one log that the
// correlators cannot see from one conversation: a call repeated in the
// client's next session after the previous one expired (retry_basis
// same_call_next_session), and whether a client re-initialized after its
// session expired (reinitialized, for which it holds those rows). It runs
// in one goroutine over the items of every correlator of a run, merged in
// Key order, and emits the final rows in that order (held rows when
// released). It is not safe for concurrent use.
//
// Bounds: per log, the latest request of at most 4,096 distinct calls
// (lineageMemory) and the latest initialize per client name; the requests
// still open; the rows of expired sessions, each until the log shows an
// initialize by its client, or IdleTimeout of the log's event time passes
// (at the next Mark), or Finish; with IdleTimeout 0 they wait for an
// initialize or Finish.
type Linker struct {
	// IdleTimeout releases a held row of an expired session, with
	// reinitialized false, once its log's event time is this far past it
	// (0: only an initialize or Finish releases it). Use the correlators'.
	IdleTimeout time.Duration

	emit    func(Row)
	logs    map[logKey]*linkLog
	convs   map[int64]*linkConv // conversations still open
	decided map[exRef]*decision // links made, waiting for their row
	held    []heldRow           // rows of expired sessions, in arrival order
	expired []*linkConv         // expired conversations whose requests a next session may still repeat
	earlier []*linkConv         // sessionless conversations with a failed request a next instance may still repeat (ids.go)
	clocks  logClocks
	marks   markCount // Marks with the same Seq, for Key.Again
}

type linkLog struct {
	key      logKey // the log's, where its conversations point (linkConv.log)
	recent   map[uint64]*linkEx
	order    []uint64
	lastInit map[string]time.Time   // the latest initialize request in the log, per client name
	inits    map[string][]time.Time // the latest initHistory initialize requests, per client name
}

// initHistory is how many initialize requests per client of a log the
// Linker keeps for telling whether a client initialized between two times.
const initHistory = 8

type linkConv struct {
	id      int64
	session string
	client  string  // its state's client (convState, read with expired through state)
	log     *logKey // its log's key (linkLog.key): a conversation of 80 bytes, not 160
	// When its latest and its first remembered request started
	// (lastStartAt, firstStartAt): stamps, or in wide when a stamp cannot
	// hold one.
	lastStart, firstStart stamp
	wide                  *[2]time.Time
	repeatable            bool // in Linker.earlier
	fresh                 bool // its first remembered request was a handshake
	expired               bool // its state's expiry
}

func (cv *linkConv) setState(st convState) { cv.expired, cv.client = st.expired, st.client }

func (cv *linkConv) lastStartAt() time.Time {
	if cv.wide != nil {
		return cv.wide[0]
	}
	return cv.lastStart.time()
}

func (cv *linkConv) firstStartAt() time.Time {
	if cv.wide != nil {
		return cv.wide[1]
	}
	return cv.firstStart.time()
}

func (cv *linkConv) setStarts(last, first time.Time) {
	if cv.wide == nil {
		l, ok1 := toStamp(last)
		f, ok2 := toStamp(first)
		if ok1 && ok2 {
			cv.lastStart, cv.firstStart = l, f
			return
		}
		cv.wide = &[2]time.Time{}
	}
	cv.wide[0], cv.wide[1] = last, first
}

type linkEx struct {
	conv      *linkConv
	exID      string
	started   stamp      // when it started (startedAt)
	wideStart *time.Time // when a stamp cannot hold it
	state     exState
	target    string
}

func (x *linkEx) startedAt() time.Time {
	if x.wideStart != nil {
		return *x.wideStart
	}
	return x.started.time()
}

// newLinkEx fills the record the correlator made for the request (ev.lx),
// or a new one.
func newLinkEx(cv *linkConv, ev *linkEvent) *linkEx {
	x := ev.lx
	if x == nil {
		x = &linkEx{}
	}
	*x = linkEx{conv: cv, exID: ev.exID, state: ev.state, target: ev.target}
	s, ok := toStamp(ev.time)
	if ok {
		x.started = s
	} else {
		t := ev.time
		x.wideStart = &t
	}
	return x
}

type heldRow struct {
	row Row
	log logKey
}

type decision struct {
	origin, retryOf, basis string
	unsafe                 bool
	dup                    bool // the repeated request ran or may have: a side effect done twice if this one runs too
	retryAfterS            float64
	prevEnd, at            time.Time
}

// NewLinker returns a Linker that hands every final row to emit.
func NewLinker(emit func(Row)) *Linker {
	return &Linker{emit: emit, logs: map[logKey]*linkLog{}, convs: map[int64]*linkConv{}, decided: map[exRef]*decision{}}
}

func (l *Linker) log(k logKey) *linkLog {
	lg := l.logs[k]
	if lg == nil {
		lg = &linkLog{key: k, recent: map[uint64]*linkEx{}}
		l.logs[k] = lg
	}
	return lg
}

// Add takes the next item, in Key order over all correlators.
func (l *Linker) Add(it Item) {
	switch it.kind {
	case itemAttach:
		l.attach(&it)
	case itemState:
		// A request's record takes its state changes until it is final
		// (its attach's state is never final).
		if x := it.st.lx; x != nil && x.conv != nil && !x.state.final {
			x.state = it.st.state
			l.noteFailed(x)
		}
	case itemConv:
		if cv := l.convs[it.conv]; cv != nil {
			if it.ev.conv.expired && !cv.expired {
				l.expired = append(l.expired, cv)
			}
			cv.setState(it.ev.conv)
		}
	case itemConvEnd:
		delete(l.convs, it.conv)
	case itemInit:
		lg := l.log(it.ev.log)
		if lg.lastInit == nil {
			lg.lastInit = map[string]time.Time{}
		}
		lg.lastInit[it.ev.client] = it.ev.time
		lg.noteInit(it.ev.client, it.ev.time)
		l.releaseExpired(it.Key, it.ev.log, it.ev.client)
	case itemRow:
		r := it.row
		if d := l.decided[it.ref]; d != nil {
			delete(l.decided, it.ref)
			d.apply(r)
			if d.dup && it.ran > 0 {
				r.DuplicateSideEffect = true
			}
		}
		if it.ev != nil && !it.ev.stuckSince.IsZero() && r.Sides == string(schema.SideClient) &&
			l.log(it.ev.log).initBetween(clientOf(r), it.ev.stuckSince, r.StartedAt) {
			r.SessionStuckReason = schema.Str(StuckDeadSessionReused)
		}
		row := Row{Key: it.Key, Conv: it.conv, Exchange: r}
		if it.hold {
			l.holdExpired(it.ev.log, row)
			return
		}
		l.emit(row)
	}
}

// attach remembers a client request as the latest of its call in its log
// and, when its own conversation has no earlier request of the call,
// relates it to the call in the client's previous session: after a 404 a
// client re-initializes and repeats the call. Only sessions count (a log of
// separate clients without session ids is not one client's history), only
// an expired one of the same client, followed by an initialize, and only a
// recent one.
func (l *Linker) attach(it *Item) {
	ev := it.ev
	lg := l.log(ev.log)
	cv := l.convs[it.conv]
	if cv == nil {
		cv = &linkConv{id: it.conv, session: ev.session, log: &lg.key, fresh: ev.opens}
		cv.setStarts(time.Time{}, ev.time)
		l.convs[it.conv] = cv
	}
	if ev.conv.expired && !cv.expired {
		l.expired = append(l.expired, cv)
	}
	cv.setState(ev.conv)
	if ev.time.After(cv.lastStartAt()) {
		cv.setStarts(ev.time, cv.firstStartAt())
	}
	var prev *linkEx
	nextInstance := false
	if ev.lookup {
		if p := lg.recent[ev.callHash]; p != nil && p.conv != cv && p.conv.session != "" && ev.session != "" && p.conv.expired &&
			sameClient(p.conv.client, ev.conv.client) && lg.initAfter(ev.conv.client, p.startedAt()) && ev.time.Sub(p.startedAt()) <= NextSessionWindow {
			prev = p
		} else if p != nil && laterInstance(p, cv, ev) {
			prev, nextInstance = p, true
		}
	}
	x := newLinkEx(cv, ev)
	lg.remember(ev.callHash, x)
	l.noteFailed(x)
	if prev == nil || !ev.originNone || ev.time.Sub(prev.startedAt()) > RetryWindow {
		return
	}
	st := prev.state
	if !st.failed && st.final {
		return // a new call that happens to repeat an earlier success
	}
	open := !st.final && !st.failed
	d := &decision{origin: schema.TriggerApplication, retryOf: prev.exID, basis: "same_call_next_session",
		unsafe: (st.uncertain || open) && ev.unsafeTool, dup: st.ran && ev.unsafeTool, retryAfterS: st.retryAfterS, prevEnd: st.lastEnd(), at: ev.time}
	if ev.manual {
		d.origin = schema.TriggerManual
	}
	if open {
		d.basis = "same_call_while_open"
	}
	if nextInstance {
		d.basis = basisNextInstance
	}
	l.decided[it.ref] = d
}

// apply writes a link into its row. The correlator may have changed the
// row's retry columns after the request started (the same id POSTed again
// makes it "sdk"); those later values stand, as they did when the link was
// made in the correlator.
func (d *decision) apply(r *schema.Exchange) {
	if r.RetryOrigin == "none" {
		r.RetryOrigin = d.origin
	}
	if r.RetryOf == nil {
		r.RetryOf = schema.Str(d.retryOf)
	}
	if r.RetryBasis == nil {
		r.RetryBasis = schema.Str(d.basis)
	}
	if d.unsafe {
		r.RetryUnsafe = true
	}
	if r.RetryAfterS == nil {
		judgeRetryAfter(r, d.retryAfterS, d.prevEnd, d.at)
	}
}

// remember makes x the latest request of its call in the log.
func (lg *linkLog) remember(h uint64, x *linkEx) {
	if _, ok := lg.recent[h]; !ok {
		lg.order = append(lg.order, h)
		if len(lg.order) > lineageMemory {
			delete(lg.recent, lg.order[0])
			lg.order = lg.order[1:]
		}
	}
	lg.recent[h] = x
}

// stampPrecision is the precision of the times logs give a request's start.
const stampPrecision = time.Millisecond

// initAfter says whether the client (any client, when unknown) sent an
// initialize after t.
func (lg *linkLog) initAfter(client string, t time.Time) bool {
	for who, at := range lg.lastInit {
		// Within the logs' time precision counts: logs stamp requests in
		// milliseconds (HAR startedDateTime, wire logs), so a client that
		// re-initializes at once may seem to start up to a millisecond
		// before the 404 it reacts to ended.
		if (client == "" || who == "" || who == client) && !at.Before(t.Add(-stampPrecision)) {
			return true
		}
	}
	return false
}

// noteInit records an initialize of a client in the log's history.
func (lg *linkLog) noteInit(client string, at time.Time) {
	if lg.inits == nil {
		lg.inits = map[string][]time.Time{}
	}
	h := lg.inits[client]
	if len(h) == initHistory {
		h = append(h[:0], h[1:]...)
	}
	lg.inits[client] = append(h, at)
}

// initBetween says whether the client (any client, when unknown) sent an
// initialize after from and before to.
func (lg *linkLog) initBetween(client string, from, to time.Time) bool {
	for who, h := range lg.inits {
		if client != "" && who != "" && who != client {
			continue
		}
		for _, at := range h {
			if at.After(from) && at.Before(to) {
				return true
			}
		}
	}
	return false
}

// holdExpired keeps the row of an exchange that got 404 on its session until
// the log shows whether the client re-initialized; when an initialize has
// already followed it, the row goes out at once.
func (l *Linker) holdExpired(lk logKey, row Row) {
	if l.log(lk).initAfter(clientOf(row.Exchange), row.Exchange.EndedAt) {
		t := true
		row.Exchange.Reinitialized = &t
		l.emit(row)
		return
	}
	l.held = append(l.held, heldRow{row, lk})
}

// releaseExpired releases the held rows of a client of the log that has
// just sent an initialize: it re-initialized after its session expired.
func (l *Linker) releaseExpired(at Key, lk logKey, client string) {
	keep := l.held[:0]
	for _, h := range l.held {
		if who := clientOf(h.row.Exchange); h.log != lk || (who != "" && client != "" && who != client) {
			keep = append(keep, h)
			continue
		}
		t := true
		h.row.Exchange.Reinitialized = &t
		h.row.Key = at
		l.emit(h.row)
	}
	clear(l.held[len(keep):])
	l.held = keep
}

// Advance moves the Linker to Mark m, once every item with a Key below
// Key{Seq: m.Seq + 1} has been added: the held rows of a log whose event
// time is IdleTimeout past them go out with reinitialized false.
func (l *Linker) Advance(m Mark) {
	due := l.clocks.apply(&m, l.IdleTimeout)
	again := l.marks.next(&m)
	for _, lk := range due {
		cutoff := l.clocks.now(lk).Add(-l.IdleTimeout)
		keep := l.held[:0]
		for _, h := range l.held {
			if h.log == lk && h.row.Exchange.EndedAt.Before(cutoff) {
				f := false
				h.row.Exchange.Reinitialized = &f
				h.row.Key = Key{Seq: m.Seq, Again: again, Conv: math.MaxInt64}
				l.emit(h.row)
				continue
			}
			keep = append(keep, h)
		}
		clear(l.held[len(keep):])
		l.held = keep
	}
	keep := l.expired[:0]
	for _, cv := range l.expired {
		if l.clocks.now(*cv.log).Sub(cv.lastStartAt()) <= NextSessionWindow {
			keep = append(keep, cv)
		}
	}
	clear(l.expired[len(keep):])
	l.expired = keep
	l.forgetEarlier()
}

// Finish ends the input, after the items of every correlator's Finish: the
// rows still held go out with reinitialized false, in the order they
// arrived.
func (l *Linker) Finish(m Mark) {
	l.clocks.apply(&m, 0)
	again := l.marks.next(&m)
	for _, h := range l.held {
		f := false
		h.row.Exchange.Reinitialized = &f
		h.row.Key = Key{Seq: m.Seq, Again: again, Conv: math.MaxInt64}
		l.emit(h.row)
	}
	l.held = nil
	l.expired = nil
	l.earlier = nil
}

// LowWater is the smallest Seq the Linker still needs: the first
// observation of the conversation of every held row, and of every expired
// conversation whose requests a next session may still repeat (replay from
// there makes the same links). math.MaxInt64 when it needs none.
func (l *Linker) LowWater() int64 {
	lw := int64(math.MaxInt64)
	for _, h := range l.held {
		lw = min(lw, h.row.Conv)
	}
	for _, e := range l.expired {
		lw = min(lw, e.id)
	}
	for _, e := range l.earlier {
		lw = min(lw, e.id)
	}
	return lw
}

// LowWaterBy is LowWater per log source (see Correlator.LowWaterBy).
func (l *Linker) LowWaterBy(into map[string]int64) {
	for _, h := range l.held {
		lowerTo(into, h.log.source, h.row.Conv)
	}
	for _, e := range l.expired {
		lowerTo(into, e.log.source, e.id)
	}
	for _, e := range l.earlier {
		lowerTo(into, e.log.source, e.id)
	}
}

// Held is how many rows the Linker holds now.
func (l *Linker) Held() int { return len(l.held) }
