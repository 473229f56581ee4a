package correlate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"mcptrace/classify"
	"mcptrace/schema"
)

// Stats counts what the correlator saw. Every observation lands in exactly one
// of Contributing, NotificationOnly, Stray, Stderr, Other or (until Flush)
// Parked.
type Stats struct {
	Observations     int64
	Contributing     int64 // carried a request or a response of an exchange
	NotificationOnly int64 // carried only notifications
	Stray            int64 // carried only messages that paired with nothing
	Stderr           int64 // stdio stderr lines
	Other            int64 // e.g. a GET answered 405, a DELETE
	Parked           int64 // carried only responses waiting for their request (0 after Flush)
	Notifications    int64 // notification messages
	StrayMessages    int64 // responses with no request, unattributable frames
	Exchanges        int64
	Closed           int64 // conversations ended (DELETE, idle timeout, end of input)
	HoldCuts         int64 // conversations closed by MaxHold while still active
	Evicted          int64 // conversations ended early by MaxOpen (openlimit.go)
}

// Add sums two Stats.
func (s *Stats) Add(o Stats) {
	s.Observations += o.Observations
	s.Contributing += o.Contributing
	s.NotificationOnly += o.NotificationOnly
	s.Stray += o.Stray
	s.Stderr += o.Stderr
	s.Other += o.Other
	s.Parked += o.Parked
	s.Notifications += o.Notifications
	s.StrayMessages += o.StrayMessages
	s.Exchanges += o.Exchanges
	s.Closed += o.Closed
	s.HoldCuts += o.HoldCuts
	s.Evicted += o.Evicted
}

// Correlator pairs and classifies the messages of the conversations routed
// to it. It is not safe for concurrent use: the pipeline gives each
// goroutine its own and routes every conversation to exactly one of them
// (ShardKey).
type Correlator struct {
	// IdleTimeout ends a conversation with no activity for this long in
	// event time (0: conversations end only on DELETE or at the end).
	IdleTimeout time.Duration
	// Lateness is how far behind the newest event time of its log an
	// observation may be before its exchanges are flagged late (0: never).
	Lateness time.Duration
	// MaxHold closes a conversation still active this long, in event time,
	// after its first activity, so that a consumer's commit is never held
	// back further (0: never). Its rows are marked HoldCut; the log's next
	// records of the same session start a new conversation.
	MaxHold time.Duration
	// SameIDHold is how long, in its log's event time, a server row of a
	// session before 2026-07-28 waits after it was answered for another
	// attempt of its id (ids.go). 0: SameIDWindow, but no longer than
	// Lateness when that is set (a run that tolerates little lateness
	// merges and writes within that); negative: rows do not wait.
	SameIDHold time.Duration
	// History is how many judged requests a conversation keyed by a
	// session or a connection remembers for the requests that follow
	// (state.go): 0, DefaultHistory; negative: no bound.
	History int
	// MaxOpen bounds the conversations this correlator holds open at once
	// (0: no bound): a new conversation past it ends the least recently
	// active one early (openlimit.go), its rows marked HoldCut and their
	// reason naming the limit. MaxOpenTotal is the run's limit that
	// MaxOpen is this shard's share of, for that reason (0: MaxOpen).
	MaxOpen, MaxOpenTotal int

	lruHead, lruTail *conversation // open conversations, most recently active first (openlimit.go)
	evicting         bool          // close is ending a conversation at MaxOpen

	late bool // the observation being added is late

	convs    map[string]*conversation
	byLog    map[logKey]*logSet // open conversations by the logs they have seen
	clocks   logClocks          // every log's event time, from Marks
	out      func(Item)
	key      Key   // of the next item emitted
	seq      int64 // Seq of the observation being added
	attachN  int32 // requests attached by the observation being added
	Stats    Stats
	tally    *parkTally // of the observation being added
	flushing bool
	cutting  bool                       // close is judging what MaxHold cut: its rows are marked HoldCut
	holding  map[*conversation]struct{} // conversations with held exchanges (cancel.go)
	marks    markCount                  // Marks with the same Seq, for Key.Again
	fresh    []*exchange                // requests attached by the observation being added (state.go, keepOwn)
	waiting  []*exchange                // requests that were still waiting when their observation was done, oldest first (park.go)
	waitHead int                        // waiting[:waitHead] are parked or done
	names    names                      // text shared by the rows of every conversation (state.go)
	impls    impls                      // clients and servers shared by conversations (state.go)
	poss     poss                       // the logs conversations start in, shared (seen)
	texts    texts                      // the texts of parked rows (park.go)

	// Ids (ids.go).
	heldByLog map[logKey]*heldHeap // server rows held for a same-id repeat, by log
	wm        time.Time            // the watermark of the observation being added

	slabs       rowSlabs         // what judged rows point to (slab.go)
	idScratch   []byte           // exchangeID's
	keyBuf      []byte           // the conversation key of the observation being added
	respScratch []schema.Message // addHTTP's

	self *selfDriven // New's correlator, which keeps its own clock and Linker
}

// selfDriven is what a correlator made by New adds to a shard: its own
// Seq counter, Clock and Linker, advanced after every observation.
type selfDriven struct {
	seq    int64
	clock  *Clock
	linker *Linker
}

// parkTally follows an observation whose only use was parking responses, so
// its label moves to Contributing when one pairs, or to Stray when none does.
type parkTally struct {
	remaining int  // parked responses not yet paired or given up
	labelled  bool // the observation was counted as Parked
	paired    bool
	notes     bool // it also carried notifications
}

// New returns a correlator for a whole run in one goroutine: it hands each
// finished exchange to emit, with the links across conversations already
// made (it runs its own Clock and Linker, advanced after every observation;
// it numbers observations itself unless they carry increasing Seqs). Flush
// ends the input. Pipelines that
// spread conversations over goroutines use NewShard instead.
func New(emit func(*schema.Exchange)) *Correlator {
	l := NewLinker(func(r Row) { emit(r.Exchange) })
	c := NewShard(l.Add)
	c.self = &selfDriven{clock: NewClock(), linker: l}
	return c
}

// NewShard returns a correlator for one shard of a run: it hands out, in
// increasing Key order, the items the Linker needs (judged rows and the
// events that relate conversations), for the pipeline to merge with the
// other shards' by Key and feed to one Linker. Observations must carry
// their Seq and a Watermark stamped by the run's Clock; the pipeline calls
// Add for each observation routed here (ShardKey), in Seq order; Advance
// with every Mark of the Clock, after the Adds of the observations with Seq
// up to Mark.Seq; and Finish with the last Mark at the end of input.
func NewShard(out func(Item)) *Correlator {
	return &Correlator{convs: map[string]*conversation{}, byLog: map[logKey]*logSet{}, out: out}
}

// LineageKey names the log an observation comes from (its side, format and
// source): one client's successive sessions live in one log, and retries
// across sessions are found within it (by the Linker). Kept for pipelines
// that route whole logs; ShardKey routes by conversation.
func LineageKey(o *schema.Observation) string {
	return string(o.Side) + "|" + o.Format + "|" + o.Pos.Source
}

// ConversationKey returns the key of the conversation an observation belongs
// to.
func ConversationKey(o *schema.Observation) string {
	return string(appendConversationKey(nil, o))
}

// appendConversationKey appends ConversationKey(o) to b: the correlator
// looks conversations up by it without making a string for every record.
func appendConversationKey(b []byte, o *schema.Observation) []byte {
	b = append(b, o.Side...)
	b = append(b, '|')
	b = append(b, o.Format...)
	switch {
	case o.SessionID != "":
		b = append(b, "|s|"...)
		return append(b, o.SessionID...)
	case o.Connection != "":
		b = append(b, "|c|"...)
		b = append(b, o.Pos.Source...)
		b = append(b, '|')
		return append(b, o.Connection...)
	}
	b = append(b, "|f|"...)
	return append(b, o.Pos.Source...)
}

type idKey struct {
	t    schema.IDType
	text string
}

// keyOf is what ids are looked up by: classify.IDKey, so that the lookup
// agrees with classify.SameID (1 and 1.0 are one id; 9007199254740992 and
// 9007199254740993 are two).
func keyOf(id schema.ID) idKey { return idKey{id.Type, classify.IDKey(id)} }

type conversation struct {
	key string
	// Its requests by id, oldest first, and its latest client request per
	// call hash (index.go).
	idx      remIndex
	client   *schema.Implementation // shared among the correlator's conversations (impls); never nil
	server   *schema.Implementation // the same
	openList []*exchange            // exchanges not yet final, plus finished ones not yet pruned
	diag     convDiag               // what the diagnosis columns need (diagnose.go)
	first    int64                  // Seq of its first observation: its id in order keys and link events
	log0     *logKey                // the log of its first observation (lin), shared with the correlator's byLog
	toldCl   *schema.Implementation // the client the Linker last heard of (told)
	// The latest observation's position in its first log (by Pos.ID) it
	// has seen: that log's (pos0, shared through the correlator's poss,
	// its Line 0) and the line (line0); in each, in its rare part, once it
	// has seen two (lastPos).
	pos0  *schema.Position
	line0 int64
	tools map[string]toolHints // annotations learned from tools/list (most conversations list their tools)
	// Its latest and its first activity, in event time (lastAt, startedAt;
	// in its rare part when a stamp cannot hold them: wideTimes).
	last, started stamp

	// What few conversations need (parked responses and cancels, MRTR
	// chains, held rows, client instances, a second log): made when first
	// needed (more), read through ro.
	rare *convRare

	past exRing // its judged requests still remembered, oldest first (state.go)

	lruPrev, lruNext *conversation // the order of activity (openlimit.go)

	open     int32  // how many of openList are not final
	pastHead int32  // where past starts (state.go)
	sessOff  uint32 // where its MCP session id starts in key, when it is keyed by one (session)
	ver      uint8  // its protocol version (version): its number in knownVersions, verRare: its rare part's

	sawInit  bool // the log showed its session's initialize (diagnose.go)
	answered bool // a request on it got a JSON-RPC answer of its own: the session worked (diagnose.go)

	lostGet bool // a GET event stream whose body was not recorded
	ended   bool // its session was deleted
	expired bool // a request on its session got 404
	linked  bool // it has told the Linker about a request (client side only)
	cut     bool // closed by MaxHold (or MaxOpen) while still active: its rows say so
	byFile  bool // keyed by its source file: no session, no connection (ids.go)
	// closingNow: it closes at the Mark being applied (ids.go).
	closingNow  bool
	toldExpired bool // the expiry the Linker last heard of (told)
	wideTimes   bool // last and started are in its rare part
}

// session is its MCP session id, when it is keyed by one.
func (cv *conversation) session() string {
	if cv.sessOff == 0 {
		return ""
	}
	return cv.key[cv.sessOff:]
}

// told is what the Linker last heard of it.
func (cv *conversation) told() convState {
	return convState{cv.toldExpired, cv.toldCl.Name}
}

// setTold records st (its expiry and client cl) as what the Linker heard.
func (cv *conversation) setTold(expired bool, cl *schema.Implementation) {
	cv.toldExpired, cv.toldCl = expired, cl
}

// lastAt is its latest activity, in event time.
func (cv *conversation) lastAt() time.Time {
	if cv.wideTimes {
		return cv.rare.last
	}
	return cv.last.time()
}

// startedAt is its first activity, in event time.
func (cv *conversation) startedAt() time.Time {
	if cv.wideTimes {
		return cv.rare.started
	}
	return cv.started.time()
}

// setTimes sets its latest and first activity.
func (cv *conversation) setTimes(last, started time.Time) {
	if !cv.wideTimes {
		l, ok1 := toStamp(last)
		s, ok2 := toStamp(started)
		if ok1 && ok2 {
			cv.last, cv.started = l, s
			return
		}
		cv.wideTimes = true
	}
	r := cv.more()
	r.last, r.started = last, started
}

// logList is the logs it has seen, the log of its first observation first.
func (cv *conversation) logList() []logKey {
	if r := cv.rare; r != nil && len(r.logs) > 0 {
		return r.logs
	}
	return unsafe.Slice(cv.log0, 1)
}

// convRare is the part of a conversation that most never use (state.go,
// issue 11: an open conversation takes at most 2 KiB).
type convRare struct {
	version string            // its protocol version, when not one of knownVersions
	lastPos []schema.Position // the latest observation's position in each log (by Pos.ID) it has seen, once more than one
	logs    []logKey          // every log it has seen, once it has seen more than one (logList)
	deadAt  time.Time         // when its session was first answered 404 (zero: never, or it answered as alive since; diagnose.go)
	// last, started: its times, when a stamp cannot hold one (wideTimes).
	last, started time.Time
	pending       map[idKey][]pendingResp
	cancels       map[dirKey]int // cancellations that arrived before their request
	held          []*chain       // open MRTR chains, in order
	// cancelAt holds when each cancel counted in cancels was sent, oldest
	// first; settling, the answered exchanges held for a cancel sent
	// before their response (cancel.go).
	cancelAt map[dirKey][]time.Time
	settling []*exchange

	// Ids (ids.go).
	inst       *instance   // the current client instance (a client's log without sessions)
	sameIDHeld []*exchange // judged server rows waiting SameIDWindow for another attempt, in order (and stale ones)
	nHeld      int         // how many of sameIDHeld are held
	holdN      int64       // rows held so far: their holdSeq
	dueRows    []*exchange // held rows due at the Mark being applied
}

// noRare is what ro reads for a conversation without its rare part; it
// is never written.
var noRare convRare

// ro is the conversation's rare part for reading.
func (cv *conversation) ro() *convRare {
	if cv.rare == nil {
		return &noRare
	}
	return cv.rare
}

// more is the conversation's rare part for writing, made when first
// needed.
func (cv *conversation) more() *convRare {
	if cv.rare == nil {
		cv.rare = &convRare{}
	}
	return cv.rare
}

// lin is the log of the conversation's first observation.
func (cv *conversation) lin() logKey { return *cv.log0 }

// convState is what the Linker mirrors of a conversation.
type convState struct {
	expired bool
	client  string
}

type dirKey struct {
	id         idKey
	fromServer bool // direction of the request
}

type pendingResp struct {
	msg      schema.Message
	end      time.Time
	toServer bool
	tally    *parkTally
}

type exchange struct {
	// What only an exchange still being built or judged needs (its row,
	// attempts, response, ...): nil once it is judged and its row emitted
	// (state.go, forgetLive). Its fields are promoted: they must not be
	// read on an exchange whose row has gone out.
	*exLive

	exID       string // its exchange_id, kept after row is dropped
	id         schema.ID
	paramsHash uint64

	// Kept after the exchange is judged, for the exchanges that follow
	// (in an order that leaves no padding: a conversation keeps many).
	cv          *conversation
	ref         exRef // its name in link events
	fromServer  bool  // initiator is the server
	final       bool
	linked      bool      // the Linker remembers it: its state changes are told
	uncertain   bool      // its outcome leaves side effects uncertain (5xx, cut stream, no response)
	held        bool      // answered, held until the log passes respAt (cancel.go)
	heldSameID  bool      // judged, its row held for another attempt of its id (ids.go)
	ran         uint16    // attempts that ran or may have run, once judged, at most 65,535 (diagnose.go)
	inst        int32     // the client instance that sent it (0 where conversations are not divided; ids.go)
	lastEndN    int32     // with lastEndS, when its last attempt ended (lastEndAt)
	endedAt     time.Time // when it was settled
	callHash    uint64
	startedAt   time.Time
	lastEndS    int64
	retryAfterS float64 // Retry-After of its last attempt, in seconds (0: none)
	// What few exchanges need (its MRTR round, chain and requestState, a
	// protocol version or an outcome not among the known ones): made when
	// first needed (an exchange of 208 bytes, not 256: issue 11).
	more *exMore
	// Its protocol version (reqVersion), its outcome once judged
	// (outcome) and its method (method): their numbers in knownVersions,
	// knownOutcomes and knownMethods, or oddText (in more; a method code
	// rather than its text: an exchange of 192 bytes, not 208, issue 11).
	verCode, outCode, methCode uint8

	// Read only while it is live (exLive), kept here where they take no
	// room (issue 11).
	cancelled    bool
	onSession    bool
	truncated    bool
	noEnd        bool // the log gives no end time: no latency
	lateResponse bool
	// Its conversation's index holds it (addByID, link): its summary
	// takes its place there once its row is out (forgetLive).
	indexed   bool
	dflags    diagFlags // its diagnosis flags (diagnose.go): an exLive of 208 bytes, not 224 (issue 11)
	sseEvents int32     // events of the final attempt's stream
}

// exMore is the part of an exchange that few need.
type exMore struct {
	// The requestState its input_required result asked to echo.
	requestState string
	chain        *chain // MRTR chain it belongs to, while the chain is open
	round        int32  // MRTR round, 1-based; 0 outside a chain
	// Its protocol version, outcome and method when not among the known
	// ones (verCode, outCode, methCode oddText).
	version, outcome, method string
}

// morePart is ex's rare part, made when first needed.
func (ex *exchange) morePart() *exMore {
	if ex.more == nil {
		ex.more = &exMore{}
	}
	return ex.more
}

// oddText is the code of a text kept in an exchange's rare part.
const oddText = 0xff

// knownOutcomes are the outcomes an exchange keeps as a number.
var knownOutcomes = [...]string{"", classify.ToolSuccess, classify.ToolError, classify.Success, classify.InputRequired,
	classify.Cancelled, classify.JSONRPCError, classify.MalformedJSON, classify.InvalidEnvelope, classify.InvalidToolResult,
	classify.InvalidResult, classify.HTTPError, classify.StreamIncomplete, classify.NoResponse, classify.Unknown}

// method is its request's method.
func (ex *exchange) method() string {
	if ex.methCode == oddText {
		return ex.more.method
	}
	return knownMethods[ex.methCode]
}

// textCode is the place of s in known, or oddText when it is not there
// (its text is then kept in the exchange's rare part).
func textCode(known []string, s string) uint8 {
	for i, k := range known {
		if s == k {
			return uint8(i)
		}
	}
	return oddText
}

// setOdd keeps s in *field of the rare part when code says it is not a
// known text, and clears that field of a rare part there is otherwise.
func (ex *exchange) setOdd(code uint8, field func(*exMore) *string, s string) {
	switch {
	case code == oddText:
		*field(ex.morePart()) = s
	case ex.more != nil:
		*field(ex.more) = ""
	}
}

// setMethod sets its method, keeping the text of one not among
// knownMethods as it is given.
func (ex *exchange) setMethod(m string) {
	ex.methCode = textCode(knownMethods[:], m)
	ex.setOdd(ex.methCode, func(x *exMore) *string { return &x.method }, m)
}

// reqVersion is the protocol version its request gave ("" none).
func (ex *exchange) reqVersion() string {
	if ex.verCode == oddText {
		return ex.more.version
	}
	return knownVersions[ex.verCode]
}

func (ex *exchange) setReqVersion(v string) {
	ex.verCode = textCode(knownVersions[:], v)
	ex.setOdd(ex.verCode, func(x *exMore) *string { return &x.version }, v)
}

// outcome is its outcome once judged ("" before).
func (ex *exchange) outcome() string {
	if ex.outCode == oddText {
		return ex.more.outcome
	}
	return knownOutcomes[ex.outCode]
}

func (ex *exchange) setOutcome(o string) {
	ex.outCode = textCode(knownOutcomes[:], o)
	ex.setOdd(ex.outCode, func(x *exMore) *string { return &x.outcome }, o)
}

// round is ex's MRTR round, 1-based; 0 outside a chain.
func (ex *exchange) round() int32 {
	if ex.more == nil {
		return 0
	}
	return ex.more.round
}

// chain is the MRTR chain ex belongs to, while the chain is open.
func (ex *exchange) chain() *chain {
	if ex.more == nil {
		return nil
	}
	return ex.more.chain
}

// requestState is the requestState ex's input_required result asked to
// echo.
func (ex *exchange) requestState() string {
	if ex.more == nil {
		return ""
	}
	return ex.more.requestState
}

// An instant kept in 12 bytes rather than a time.Time's 24: seconds since
// the zero time (so that zero is the zero time) and nanoseconds. Only
// compared and subtracted: its location is not kept.

// unixToZero is the seconds from the zero time to 1970.
const unixToZero = 62135596800

func toInstant(t time.Time) (int64, int32) {
	if t.IsZero() {
		return 0, 0
	}
	return t.Unix() + unixToZero, int32(t.Nanosecond())
}

func instantTime(s int64, n int32) time.Time {
	if s == 0 && n == 0 {
		return time.Time{}
	}
	return time.Unix(s-unixToZero, int64(n))
}

// lastEndAt is when ex's last attempt ended.
func (ex *exchange) lastEndAt() time.Time { return instantTime(ex.lastEndS, ex.lastEndN) }

func (ex *exchange) setLastEnd(t time.Time) { ex.lastEndS, ex.lastEndN = toInstant(t) }

// exLive is the part of an exchange that is dropped once its row has gone
// out: the row being built and the evidence it is judged on.
type exLive struct {
	row      *schema.Exchange // nil once judged and emitted, or while parked (park.go): read it with getRow
	parked   *parkedRow       // its row while it waits (park.go)
	attempts []classify.Attempt
	att1     [1]classify.Attempt // where attempts starts: most exchanges make one
	response *schema.Message
	diag     exDiag
	told     exState
	log      *logKey // the log of its latest request record (ids.go; logRef)
	lx       *linkEx // the Linker's record of it, once told (tellAttach; only the Linker reads it)
	// What an exchange cancelled or held needs (cancel.go, ids.go): made
	// when first needed (holding), read through holdRO.
	holdPart *exHold
	// Its stream's events and its flags (sseEvents, cancelled, onSession,
	// truncated, noEnd, lateResponse, dflags) are the exchange's fields,
	// where they take no room; like these, they are read only while it
	// is live.
}

// exHold is the part of a live exchange that only one cancelled or held
// needs, or one whose log reports its outcome or whose last attempt was
// answered with a Retry-After, or the only open exchange of a stdio
// response without a request, or one sent on a session after its 404
// (an exLive of 208 bytes, not 408: issue 11).
type exHold struct {
	reported   *schema.Reported // what the log reports of it
	retryAfter string           // its last attempt's Retry-After
	stray      []schema.Message // stdio responses it is the only open exchange for
	cancelAt   time.Time        // when the cancel that marked it was sent (zero: not known)
	respAt     time.Time        // when its response arrived, while held
	heldLog    logKey           // the log of the record that carried its response, while held
	unjudged   *schema.Exchange // its row as it was before it was judged, while it may be held
	holdSeq    int64            // its place among its conversation's held rows (ids.go)
	stuckSince time.Time        // sent on a session after its 404 at this time (diagnose.go)
}

// noHold is what holdRO reads for an exchange without its hold part; it
// is never written.
var noHold exHold

// holdRO is the live exchange's hold part for reading.
func (l *exLive) holdRO() *exHold {
	if l.holdPart == nil {
		return &noHold
	}
	return l.holdPart
}

// holding is the live exchange's hold part for writing, made when first
// needed.
func (l *exLive) holding() *exHold {
	if l.holdPart == nil {
		l.holdPart = &exHold{}
	}
	return l.holdPart
}

// chain is an MRTR chain whose last round asked for more input: its rows are
// held back until a round ends it, so that every row carries the chain's
// final outcome.
type chain struct {
	rows []schema.Exchange
	refs []exRef
}

func (c *Correlator) conv(o *schema.Observation) *conversation {
	c.keyBuf = appendConversationKey(c.keyBuf[:0], o)
	cv := c.convs[string(c.keyBuf)]
	if cv == nil {
		k := string(c.keyBuf)
		lk := logOf(o)
		cv = &conversation{key: k, first: c.seq, byFile: o.SessionID == "" && o.Connection == "", client: &noImpl, server: &noImpl, toldCl: &noImpl,
			last: zeroStamp, started: zeroStamp}
		if o.SessionID != "" {
			cv.sessOff = uint32(len(k) - len(o.SessionID))
		}
		c.convs[k] = cv
		c.joinLog(cv, lk)
		return cv
	}
	if cv.log0.source != o.Pos.Source && !slices.ContainsFunc(cv.logList(), func(l logKey) bool { return l.source == o.Pos.Source }) {
		c.joinLog(cv, logOf(o)) // one session logged in two files
	}
	return cv
}

// logRef is the log of o as its conversation keeps it (byLog's key).
func (c *Correlator) logRef(o *schema.Observation) *logKey {
	if set := c.byLog[logOf(o)]; set != nil {
		return &set.key
	}
	lk := new(logKey)
	*lk = logOf(o)
	return lk
}

// logSet is the open conversations of a log, and the log's key, which
// they share (conversation.log0).
type logSet struct {
	key   logKey
	convs map[*conversation]struct{}
}

func (c *Correlator) joinLog(cv *conversation, lk logKey) {
	set := c.byLog[lk]
	if set == nil {
		set = &logSet{key: lk, convs: map[*conversation]struct{}{}}
		c.byLog[lk] = set
	}
	set.convs[cv] = struct{}{}
	if cv.log0 == nil {
		cv.log0 = &set.key
		return
	}
	r := cv.more()
	if len(r.logs) == 0 {
		r.logs = append(r.logs, *cv.log0)
	}
	r.logs = append(r.logs, lk)
}

// Add feeds one observation. A correlator made by New numbers the
// observations and keeps the clock itself; one made by NewShard needs
// o.Seq and o.Watermark set (Clock.Stamp) and observations in Seq order.
func (c *Correlator) Add(o *schema.Observation) {
	s := c.self
	if s == nil {
		c.add(o, o.Seq, o.Watermark)
		return
	}
	// The caller's Seq when it numbers observations, else our own count.
	s.seq = max(o.Seq, s.seq+1)
	c.add(o, s.seq, s.clock.observe(o))
	m := s.clock.Mark(s.seq)
	c.Advance(m)
	s.linker.IdleTimeout = c.IdleTimeout
	s.linker.Advance(m)
}

// seen records the latest position of the conversation in a log.
func (cv *conversation) seen(pos schema.Position, ps *poss) {
	if cv.pos0 == nil {
		cv.pos0, cv.line0 = ps.of(pos), pos.Line
		return
	}
	id := cmp.Or(pos.ID, pos.Source)
	if r := cv.rare; r != nil && len(r.lastPos) > 0 {
		for i := range r.lastPos {
			if cmp.Or(r.lastPos[i].ID, r.lastPos[i].Source) == id {
				r.lastPos[i].Line = max(r.lastPos[i].Line, pos.Line)
				return
			}
		}
		r.lastPos = append(r.lastPos, pos)
		return
	}
	if cmp.Or(cv.pos0.ID, cv.pos0.Source) == id {
		cv.line0 = max(cv.line0, pos.Line)
		return
	}
	cv.more().lastPos = append(cv.lastPos(), pos)
}

// lastPos is the latest observation's position in each log (by Pos.ID)
// it has seen.
func (cv *conversation) lastPos() []schema.Position {
	if r := cv.rare; r != nil && len(r.lastPos) > 0 {
		return r.lastPos
	}
	if cv.pos0 == nil {
		return nil
	}
	p := *cv.pos0
	p.Line = cv.line0
	return []schema.Position{p}
}

// poss shares the positions conversations start at, but their lines (the
// log they are in: its source and identity, and the sub-record), with a
// bound: the table starts again when full.
type poss struct {
	m map[schema.Position]*schema.Position
}

// of is pos without its line, shared.
func (ps *poss) of(pos schema.Position) *schema.Position {
	pos.Line = 0
	if p := ps.m[pos]; p != nil {
		return p
	}
	p := &pos
	if ps.m == nil {
		ps.m = make(map[schema.Position]*schema.Position, 16)
	} else if len(ps.m) >= namesCap {
		clear(ps.m)
	}
	ps.m[pos] = p
	return p
}

// knownVersions are the protocol versions a conversation keeps as a
// number (ver); verRare says its rare part holds another.
var knownVersions = [...]string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

const verRare = 255

// version is its protocol version.
func (cv *conversation) version() string {
	if cv.ver == verRare {
		return cv.rare.version
	}
	return knownVersions[cv.ver]
}

// setVersion sets its protocol version (text of its own).
func (cv *conversation) setVersion(v string) {
	for i, k := range knownVersions {
		if v == k {
			cv.ver = uint8(i)
			if cv.rare != nil {
				cv.rare.version = ""
			}
			return
		}
	}
	cv.more().version = strings.Clone(v)
	cv.ver = verRare
}

func (c *Correlator) add(o *schema.Observation, seq int64, watermark time.Time) {
	c.seq, c.key, c.attachN = seq, Key{Seq: seq}, 0
	c.Stats.Observations++
	defer c.keepOwn()
	internObservation(o)
	t := o.EndOrStart()
	c.keyBuf = appendConversationKey(c.keyBuf[:0], o)
	if old := c.convs[string(c.keyBuf)]; old != nil && c.overAt(old, t) {
		// The record comes after its conversation's idle timeout or
		// MaxHold: the conversation ends here, whether or not a sweep
		// has ended it already (sweeps run at Marks, which depend on how
		// the input was cut into units), so the same records always cut
		// the same way.
		c.close(old)
	}
	if c.MaxOpen > 0 && c.convs[string(c.keyBuf)] == nil {
		c.evictForNew() // a new conversation: the oldest end past MaxOpen
	}
	cv := c.conv(o)
	if c.MaxOpen > 0 {
		c.lruTouch(cv)
	}
	stampSent(o)
	c.release(cv, o)
	c.wm = watermark
	c.late = c.Lateness > 0 && !watermark.IsZero() && t.Before(watermark.Add(-c.Lateness))
	last, started := cv.lastAt(), cv.startedAt()
	if t.After(last) {
		last = t
	}
	if started.IsZero() || t.Before(started) {
		started = t
	}
	cv.setTimes(last, started)
	cv.seen(o.Pos, &c.poss)
	defer func() {
		if o.HTTP != nil && o.HTTP.Method == "DELETE" && cv.sessOff != 0 && o.HTTP.Status >= 200 && o.HTTP.Status <= 299 {
			// The session ended. Records of streams that were still open are
			// written when they end, so the conversation closes after a
			// grace period rather than at once.
			cv.ended = true
		}
		c.tellConv(cv)
	}()
	if o.ProtocolVersion != "" && cv.ver == 0 {
		cv.setVersion(o.ProtocolVersion)
	}
	if o.ClientName != "" {
		cv.client = c.impls.of(schema.Implementation{Name: o.ClientName, Version: o.ClientVersion})
		c.tellConv(cv)
	}
	if o.ServerName != "" {
		cv.server = c.impls.of(schema.Implementation{Name: o.ServerName, Version: o.ServerVersion})
	}
	var used, notes, strays int
	c.tally = nil // made when a response parks
	if o.Paired {
		used, notes, strays = c.addPaired(cv, o)
	} else if o.HTTP == nil {
		used, notes, strays = c.addStdio(cv, o)
		if o.Stdio == schema.DirStderr {
			c.Stats.Stderr++
			return
		}
	} else {
		used, notes, strays = c.addHTTP(cv, o)
	}
	switch {
	case used > 0:
		c.Stats.Contributing++
	case c.tally != nil && c.tally.remaining > 0:
		c.Stats.Parked++
		c.tally.labelled, c.tally.notes = true, notes > 0
	case notes > 0:
		c.Stats.NotificationOnly++
	case strays > 0:
		c.Stats.Stray++
	default:
		c.Stats.Other++
	}
}

// pairing says what became of a response.
type pairing int

const (
	paired pairing = iota
	parked
	stray
)

func (c *Correlator) count(p pairing, used, strays *int) {
	switch p {
	case paired:
		*used++
	case stray:
		*strays++
	}
}

func (c *Correlator) addHTTP(cv *conversation, o *schema.Observation) (used, notes, strays int) {
	h := o.HTTP
	var reqs []*schema.Message
	// The response's messages, in a buffer kept for the next record: no
	// message is kept by its address (attach, pairResponse, park and the
	// attempts copy them), and they are cleared when done, so that the
	// buffer does not keep their bodies alive.
	respMsgs := c.respScratch[:0]
	c.respScratch = nil
	defer func() {
		clear(respMsgs)
		c.respScratch = respMsgs[:0]
	}()
	for i := range o.Messages {
		m := &o.Messages[i]
		if m.Where == schema.InRequestBody {
			switch m.Kind {
			case schema.MsgRequest:
				reqs = append(reqs, m)
			case schema.MsgNotification:
				notes++
				c.notification(cv, m, false)
			case schema.MsgResponse:
				// The client answering a server request.
				c.count(c.pairResponse(cv, m, o, true), &used, &strays)
			default:
				strays++
				c.Stats.StrayMessages++
			}
			continue
		}
		if h.Status == 202 && (m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther) {
			continue // a 202 may say "Accepted" in plain text: not a message
		}
		respMsgs = append(respMsgs, *m)
	}
	onStream := h.Method == "GET"
	if onStream && h.SSE && !h.BodyRecorded {
		cv.lostGet = true
	}
	batch := len(reqs) > 1
	var attached []bool // which respMsgs some request took, for a batch
	if batch {
		attached = make([]bool, len(respMsgs))
	}
	for _, rq := range reqs {
		ex := c.attach(cv, o, rq, false)
		ex.log = c.logRef(o)
		used++
		at := classify.Attempt{Responded: h.Responded, Status: h.Status, Failure: h.Failure, ContentType: h.ContentType,
			SSE: h.SSE, StreamEnd: h.StreamEnd, BodyRecorded: h.BodyRecorded, BodyEmpty: h.BodyEmpty}
		junk := false
		for j, m := range respMsgs {
			switch {
			case !batch:
				if m.Kind == schema.MsgResponse || m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther {
					at.Messages = append(at.Messages, m)
				}
			case m.Kind == schema.MsgResponse:
				// A batch member takes its own response, and an error
				// without an id that rejects the whole batch.
				if classify.SameID(m.ID, rq.ID) || (m.ID.Type == schema.IDNull || m.ID.Type == schema.IDAbsent) {
					at.Messages = append(at.Messages, m)
					attached[j] = true
				}
			case (m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther) && !junk:
				at.Messages = append(at.Messages, m) // one example is enough to judge
				attached[j] = true
				junk = true
			}
		}
		if ex.attempts == nil {
			ex.attempts = ex.att1[:0:1]
		}
		ex.attempts = append(ex.attempts, at)
		st := int32(0)
		if h.Responded {
			st = int32(h.Status)
		}
		ex.getRow().HTTPStatuses = append(ex.getRow().HTTPStatuses, st)
		ex.getRow().PostCount++
		ex.getRow().EndedAt = o.EndOrStart()
		if h.RetryAfter != "" || ex.holdPart != nil {
			ex.holding().retryAfter = h.RetryAfter
		}
		ex.retryAfterS = retryAfterSeconds(h.RetryAfter, o.EndOrStart())
		ex.setLastEnd(o.EndOrStart())
		ex.sseEvents = int32(h.SSEEvents)
		// 2026-07-28 has no sessions: a leftover Mcp-Session-Id is ignored
		// by servers, and a 404 there is never a session expiry.
		ex.onSession = o.SessionID != "" && !classify.Stateless(ex.versionOf(cv))
		if h.Responded && h.Status == 404 && ex.onSession {
			cv.expired = true
			c.tellConv(cv)
		}
		c.tellState(ex)
		c.noteAttempt(cv, ex, o)
		if attemptDecides(&at, rq.ID) || ex.response != nil {
			// A cancel already counted (logged on an earlier record, even
			// before the request's own) was logged before this record.
			c.answered(cv, ex, o, ownResponse(ex, &at), ex.cancelled)
		}
	}
	if onStream {
		c.noteGet(cv, o) // a reconnect after a cut stream, before its responses pair
	}
	// Messages of a response stream that are not the POST's own response:
	// server requests, notifications, and responses delivered on a GET stream.
	for i := range respMsgs {
		m := &respMsgs[i]
		switch m.Kind {
		case schema.MsgNotification:
			notes++
			c.notification(cv, m, true)
		case schema.MsgRequest:
			c.attach(cv, o, m, true)
			used++
		case schema.MsgResponse:
			switch {
			case onStream || len(reqs) == 0:
				c.count(c.pairResponse(cv, m, o, false), &used, &strays)
			case batch && !attached[i]:
				c.Stats.StrayMessages++ // answers no member of the batch
			}
		default:
			if len(reqs) == 0 || (batch && !attached[i]) {
				strays++
				c.Stats.StrayMessages++
			}
		}
	}
	return used, notes, strays
}

// addPaired takes a record that the log already paired (an Inspector
// history entry, an OTLP span): its request starts an exchange, its response
// (if kept) or what the log reports settles it at once.
func (c *Correlator) addPaired(cv *conversation, o *schema.Observation) (used, notes, strays int) {
	var ex *exchange
	for i := range o.Messages {
		m := &o.Messages[i]
		switch m.Kind {
		case schema.MsgRequest:
			if ex == nil {
				ex = c.attach(cv, o, m, false)
				if o.Reported != nil {
					ex.holding().reported = o.Reported
				}
				used++
				continue
			}
			strays++
			c.Stats.StrayMessages++
		case schema.MsgNotification:
			notes++
			c.notification(cv, m, false)
		default:
			if ex != nil && ex.response == nil {
				mm := *m
				ex.response = &mm
				continue
			}
			strays++
			c.Stats.StrayMessages++
		}
	}
	if ex != nil {
		ex.getRow().EndedAt = o.EndOrStart()
		ex.noEnd = o.EndTime.IsZero()
		c.finish(cv, ex)
	}
	return used, notes, strays
}

// attemptDecides reports whether an attempt settles its exchange: a response
// with the request's id, or a definite 2xx body that is not a 202.
func attemptDecides(at *classify.Attempt, id schema.ID) bool {
	for i := range at.Messages {
		if at.Messages[i].Kind == schema.MsgResponse && classify.SameID(at.Messages[i].ID, id) {
			return true
		}
	}
	if !at.Responded || at.Status < 200 || at.Status > 299 || at.Status == 202 || !at.BodyRecorded || at.SSE {
		return false
	}
	return true
}

func (c *Correlator) addStdio(cv *conversation, o *schema.Observation) (used, notes, strays int) {
	fromServer := o.Stdio == schema.DirServerToClient
	for i := range o.Messages {
		m := &o.Messages[i]
		switch m.Kind {
		case schema.MsgRequest:
			ex := c.attach(cv, o, m, fromServer)
			if ex.response != nil {
				c.finish(cv, ex)
			}
			used++
		case schema.MsgNotification:
			notes++
			c.notification(cv, m, fromServer)
		case schema.MsgResponse:
			c.count(c.pairResponse(cv, m, o, !fromServer), &used, &strays)
		default:
			// A frame that is not JSON-RPC: blame the one open request of the
			// other side, if there is exactly one.
			var only *exchange
			n := 0
			for _, ex := range cv.openList {
				if ex != nil && !ex.final && ex.fromServer != fromServer {
					only = ex
					n++
				}
			}
			if n == 1 {
				h := only.holding()
				h.stray = append(h.stray, *m)
				only.getRow().EndedAt = o.EndOrStart()
				used++
			} else {
				strays++
				c.Stats.StrayMessages++
			}
		}
	}
	return used, notes, strays
}

// attach finds the exchange a request belongs to, or starts one.
func (c *Correlator) attach(cv *conversation, o *schema.Observation, m *schema.Message, fromServer bool) *exchange {
	k := keyOf(m.ID)
	var buf [8]remRef
	list := cv.idx.ids(k, buf[:0])
	inst := c.instanceOf(cv, o, m, fromServer, list)
	prevRem := latestIn(list, fromServer, inst)
	if prevRem.ex != nil {
		c.reopenSameID(cv, prevRem.ex, o, m) // a held server row takes another attempt
	}
	retryOrigin, retryOf, basis := "none", "", ""
	if prevRem.ok() && prevRem.params() == m.ParamsHash && m.ID.Valid() {
		switch o.Trigger {
		case schema.TriggerApplication, schema.TriggerManual:
			retryOrigin, retryOf = o.Trigger, prevRem.exIDText()
			basis = "log_trigger"
		default:
			if prev := prevRem.ex; !prevRem.final() && o.HTTP != nil {
				if n := len(prev.attempts); n > 0 {
					prev.getRow().RetryOrigin = "sdk"
					prev.getRow().RetryBasis = schema.Str("same_id")
					last := &prev.attempts[n-1]
					if uncertainAttempt(last) && !cv.safeToRepeat(prev.tool()) {
						prev.getRow().RetryUnsafe = true
					}
					judgeRetryAfter(prev.getRow(), prev.retryAfterS, prev.lastEndAt(), o.Time)
				} else {
					// A log that wrote the frame first and the HTTP outcome
					// of sending it later (VS Code): the same send.
					prev.getRow().Transport = string(o.Transport)
				}
				return prev
			}
			if prev := prevRem.ex; !prevRem.final() && o.HTTP == nil && !o.Paired {
				// The same frame sent again on stdio: one request, but
				// nothing says who repeated it.
				prev.getRow().RetryOrigin, prev.getRow().RetryBasis = "unknown", schema.Str("same_id")
				return prev
			}
			if failed, _ := prevRem.failedSoFar(); (failed || sameRequestAgain(cv, prevRem, o)) && (o.HTTP != nil || o.Trigger != "") {
				retryOrigin, retryOf, basis = orSDK(o.Trigger), prevRem.exIDText(), "same_id"
			}
		}
	}
	conflict := idConflict(cv, list, m, o, fromServer, inst)
	ex := &exchange{id: m.ID, paramsHash: m.ParamsHash, fromServer: fromServer, cv: cv,
		ref: exRef{c.seq, c.attachN}, inst: inst, exLive: &exLive{log: c.logRef(o)}}
	ex.setMethod(m.Method)
	box := &rowBox{}
	ex.row = &box.row
	c.attachN++
	r := ex.getRow()
	r.ExchangeID, c.idScratch = exchangeID(o.Pos, m, c.idScratch)
	ex.exID = r.ExchangeID
	r.Source = o.Pos.Source
	r.SourceLine = o.Pos.Line
	r.Sides = string(o.Side)
	r.Initiator = "client"
	if fromServer {
		r.Initiator = "server"
	}
	r.StartedAt = o.Time
	r.EndedAt = o.EndOrStart()
	r.Transport = string(o.Transport)
	r.SessionID = box.str(o.SessionID)
	r.Method = m.Method
	r.HTTPStatuses = box.statuses[:0:1]
	if m.ID.Valid() {
		r.JSONRPCID = box.str(m.ID.Text)
		r.JSONRPCIDType = box.put(m.ID.Type.String())
	}
	r.RetryOrigin = retryOrigin
	r.RetryOf = box.str(retryOf)
	r.RetryBasis = box.str(basis)
	r.Scenario = box.str(o.Scenario)
	r.Format = o.Format
	r.Late = c.late
	r.IDConflict = conflict
	ex.truncated = m.Truncated
	if o.ClientName != "" {
		r.ClientName, r.ClientVersion = box.str(o.ClientName), box.str(o.ClientVersion)
	}
	if o.ServerName != "" {
		r.ServerName, r.ServerVersion = box.str(o.ServerName), box.str(o.ServerVersion)
	}
	p := paramsOf(m) // repeated keys: the last wins, as in JSON.parse
	if m.Method == "tools/call" || m.Method == "prompts/get" {
		if p.hasName {
			r.ToolName = box.str(p.name) // of a tools/call, what retry safety looks up among the tools (tool)
		}
	}
	ex.callHash = m.CallHash
	ex.startedAt = o.Time
	if p.arguments != "" && len(p.arguments) <= 1<<20 {
		r.Arguments = rawBytes(p.arguments)
	}
	if o.HTTP != nil {
		r.URL = box.str(o.HTTP.URL)
	}
	if !fromServer && m.ID.Valid() && m.CallHash != 0 {
		c.link(cv, ex, o, p)
	}
	if v := o.ProtocolVersion; v != "" {
		ex.setReqVersion(v)
	} else {
		ex.setReqVersion(p.metaVersion)
	}
	if m.Method == "initialize" && !fromServer {
		// The Linker releases the held rows of this client's expired
		// sessions: it re-initialized.
		c.emit(Item{kind: itemInit, conv: cv.first, ev: c.linkEv(linkEvent{log: cv.lin(), client: owned(p.clientInfoName), time: o.Time})})
	}
	if m.Method == "initialize" {
		if p.clientInfo.Object {
			cv.client = c.impls.of(implementation(p.clientInfo))
			c.tellConv(cv)
		}
	} else if p.metaClientInfo.Object && cv.client.Name == "" {
		cv.client = c.impls.of(implementation(p.metaClientInfo))
		c.tellConv(cv)
	}
	cv.own(ex, &c.names)
	c.fresh = append(c.fresh, ex)
	cv.addByID(keyOf(ex.id), ex) // keyed by its own copy of the id
	cv.openList = append(cv.openList, ex)
	cv.open++
	if dk := (dirKey{k, fromServer}); cv.ro().cancels[dk] > 0 {
		ex.cancelled = true // the cancel was logged before the request
		cv.rare.cancels[dk]--
		if t := cv.takeCancelAt(dk); !t.IsZero() {
			ex.holding().cancelAt = t
		}
	}
	// A response that arrived before its request.
	if pend := cv.ro().pending[k]; len(pend) > 0 {
		for i, p := range pend {
			if p.toServer == fromServer {
				msg := p.msg
				ex.response = &msg
				ex.getRow().EndedAt = p.end
				cv.rare.pending[k] = append(pend[:i:i], pend[i+1:]...)
				c.unpark(p.tally, true)
				break
			}
		}
	}
	return ex
}

func orSDK(t string) string {
	if t == "" {
		return "sdk"
	}
	return t
}

// exchangeID names an exchange by where its request was read: the first
// 12 bytes of the SHA-256 of the record's source, line (and sub-record),
// the id's type and text, the batch index and the SSE event, in hex. The
// text hashed is built in scratch, which it returns for the next call: one
// allocation, the id itself.
func exchangeID(pos schema.Position, m *schema.Message, scratch []byte) (string, []byte) {
	src := pos.ID // the canonical identity, when the pipeline set it
	if src == "" {
		src = pos.Source
	}
	b := append(scratch[:0], src...)
	b = append(b, 0)
	b = strconv.AppendInt(b, pos.Line, 10)
	if pos.Sub != 0 {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(pos.Sub), 10)
	}
	b = append(b, 0, byte(m.ID.Type))
	b = append(b, m.ID.Text...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(m.BatchIndex), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(m.Event), 10)
	sum := sha256.Sum256(b)
	var out [24]byte
	hex.Encode(out[:], sum[:12])
	return string(out[:]), b
}

// pairResponse pairs a response with the newest open request of its id sent
// by the other side (an abandoned earlier send is less likely to be
// answered than the latest). toServer says the response travels client to
// server (it answers a server-initiated request). A response whose id
// matches only finished exchanges is a duplicate, counted as stray; one
// whose request has not been seen yet is parked until it appears.
func (c *Correlator) pairResponse(cv *conversation, m *schema.Message, o *schema.Observation, toServer bool) pairing {
	k := keyOf(m.ID)
	var buf [8]remRef
	list := cv.idx.ids(k, buf[:0])
	seen := false
	for i := len(list) - 1; i >= 0; i-- {
		x := list[i]
		if x.server() != toServer {
			continue
		}
		seen = true
		ex := x.ex
		if x.final() || ex.held {
			continue
		}
		mm := *m
		ex.response = &mm
		ex.getRow().EndedAt = o.EndOrStart()
		c.answered(cv, ex, o, &mm, true)
		return paired
	}
	if seen || !m.ID.Valid() {
		c.Stats.StrayMessages++
		return stray
	}
	if c.tally == nil {
		c.tally = &parkTally{}
	}
	c.tally.remaining++
	cv.park(k, pendingResp{msg: *m, end: o.EndOrStart(), toServer: toServer, tally: c.tally})
	return parked
}

// unpark settles one parked response: paired, or given up at Flush.
func (c *Correlator) unpark(t *parkTally, pairedNow bool) {
	t.remaining--
	if !t.labelled || t.paired {
		return
	}
	switch {
	case pairedNow:
		t.paired = true
		c.Stats.Parked--
		c.Stats.Contributing++
	case t.remaining == 0:
		c.Stats.Parked--
		if t.notes {
			c.Stats.NotificationOnly++
		} else {
			c.Stats.Stray++
		}
	}
}

func (c *Correlator) notification(cv *conversation, m *schema.Message, fromServer bool) {
	c.Stats.Notifications += 1 + int64(m.Folded) // a folded run counts every notification in it
	if m.Method != "notifications/cancelled" {
		return
	}
	id, ok := cancelledID(m)
	if !ok {
		return
	}
	var buf [8]remRef
	list := cv.idx.ids(keyOf(id), buf[:0])
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].server() == fromServer {
			if !list[i].final() {
				c.cancel(cv, list[i].ex, m.At)
			}
			return
		}
	}
	cv.parkCancel(dirKey{keyOf(id), fromServer}) // its request may be logged later
	cv.noteCancelAt(dirKey{keyOf(id), fromServer}, m.At)
}

// finish judges an exchange and emits it.
func (c *Correlator) finish(cv *conversation, ex *exchange) {
	if ex.final {
		return
	}
	ex.final = true
	ex.held = false // settled: a later attempt (a reopened same-id row) is no longer an attempt of a held answer
	cv.open--
	c.Stats.Exchanges++ // counted when judged: what a stop leaves open is rebuilt by the replay, not written
	c.keepUnjudged(cv, ex)
	r := ex.getRow()
	version := ex.reqVersion()
	if version == "" {
		version = cv.version()
	}
	ev := classify.Evidence{Method: ex.method(), ProtocolVersion: version, ID: ex.id, Attempts: ex.attempts,
		Response: ex.response, Stray: ex.holdRO().stray, Cancelled: ex.cancelled, OnSession: ex.onSession, Reported: ex.holdRO().reported,
		StreamNotRecorded: cv.lostGet, LateResponse: ex.lateResponse}
	v := classify.Classify(&ev)
	r.Outcome, r.Layer, r.Reason, r.RetryAdvice = v.Outcome, v.Layer, v.Reason, v.RetryAdvice
	r.ErrorCode = v.ErrorCode
	r.ErrorMessage = c.slabs.str(v.ErrorMessage)
	if v.Judged != nil && !v.Judged.Truncated {
		if d, ok := errorData(v.Judged); ok && v.ErrorCode != nil {
			r.ErrorData = c.slabs.str(d)
		}
		if v.Outcome == classify.ToolError {
			r.ToolErrorText = c.slabs.str(classify.ToolText(v.Judged))
		}
	}
	r.ErrorType = c.slabs.str(v.ErrorType)
	r.ErrorKind, r.RPCStatusCode, r.ServerError = c.slabs.str(v.ErrorKind), c.slabs.str(v.RPCStatusCode), v.ServerError
	r.ResultType = c.slabs.str(v.ResultType)
	r.IsError = v.IsError
	r.SuspectHiddenError, r.SuspectReason = v.Suspect, c.slabs.str(v.SuspectReason)
	r.Cancelled = ex.cancelled
	r.Truncated = ex.truncated || (v.Judged != nil && v.Judged.Truncated)
	r.ProtocolVersion = c.slabs.str(version)
	if classify.Stateless(version) {
		r.SessionID = nil // no sessions from 2026-07-28 on (OpenTelemetry: mcp.session.id MUST NOT be set)
	}
	if n := len(ex.attempts); n > 0 {
		last := &ex.attempts[n-1]
		r.ContentType = c.slabs.str(last.ContentType)
		r.TransportFail = c.slabs.str(last.Failure)
		if last.SSE {
			r.SSEEvents = c.slabs.i32s.put(ex.sseEvents)
			r.StreamComplete = c.slabs.bools.put(v.Judged != nil && v.Judged.Where == schema.InPostStream)
			r.StreamEnd = c.slabs.str(last.StreamEnd)
		}
	}
	if v.Judged != nil {
		r.ResponseWhere = c.slabs.strs.put(v.Judged.Where.String())
		if ex.method() == "initialize" && v.Outcome == classify.Success {
			version, server, hasServer := initializeResult(v.Judged)
			cv.setVersion(version)
			if r.ProtocolVersion == nil && cv.ver != 0 {
				// The handshake's own row carries the version it negotiated.
				r.ProtocolVersion = c.slabs.str(cv.version())
			}
			if hasServer {
				cv.server = c.impls.of(server)
			}
		}
	}
	if !ex.noEnd && ((v.Outcome != classify.NoResponse && v.Outcome != classify.Cancelled && v.Outcome != classify.Unknown) || ex.response != nil) && !r.EndedAt.Before(r.StartedAt) {
		// A log clock that went back between the first attempt and the
		// response (a retry logged by another host, a clock step) gives no
		// latency rather than a negative one.
		r.LatencyMS = c.slabs.f64s.put(float64(r.EndedAt.Sub(r.StartedAt).Microseconds()) / 1000)
	}
	r.RetryAfter = c.slabs.str(ex.holdRO().retryAfter)
	if r.ClientName == nil && cv.client.Name != "" {
		r.ClientName, r.ClientVersion = c.slabs.str(cv.client.Name), c.slabs.str(cv.client.Version)
	}
	if r.ServerName == nil && cv.server.Name != "" {
		r.ServerName, r.ServerVersion = c.slabs.str(cv.server.Name), c.slabs.str(cv.server.Version)
	}
	r.LateResponse = ex.lateResponse
	r.MatchHash, r.ConvKey = ex.paramsHash, cv.key
	r.ServerStatuses = []int32{}
	r.FailedHop = singleHop(r)
	ex.setOutcome(v.Outcome)
	if n := len(ex.attempts); n > 0 {
		ex.uncertain = uncertainAttempt(&ex.attempts[n-1])
	}
	ex.uncertain = ex.uncertain || v.Outcome == classify.StreamIncomplete || v.Outcome == classify.NoResponse
	if v.Outcome == classify.HTTPError && v.ErrorType == "404" && ex.onSession {
		r.SessionExpired = true
		cv.expired = true
		c.tellConv(cv)
	}
	c.diagnose(cv, ex, &v, version)
	ex.endedAt = r.EndedAt
	c.tellState(ex)
	if r.SessionExpired && ex.chain() == nil {
		// Held by the Linker until the log shows whether the client
		// re-initialized.
		c.emitRowOf(cv, ex, r, true)
		c.forgetLive(cv, ex)
		c.prune(cv)
		return
	}
	if v.Judged != nil && v.Outcome == classify.Success && ex.method() == "tools/list" {
		cv.learnToolsOf(v.Judged)
	}
	if v.Outcome == classify.InputRequired && v.Judged != nil {
		ex.morePart().requestState = resultRequestState(v.Judged)
	}
	if c.holdSameID(cv, ex) {
		c.prune(cv) // written when no other attempt can come (ids.go)
		return
	}
	c.emitChained(cv, ex)
	// Once judged, keep only what later requests are matched against (the
	// id, the hashes and the exchange id for retry_of).
	c.forgetLive(cv, ex)
	c.prune(cv)
}

// prune drops finished exchanges from the open list once they are most of
// it, so the work stays proportional to what is open.
func (c *Correlator) prune(cv *conversation) {
	if c.flushing || len(cv.openList) < 64 || 2*int(cv.open) > len(cv.openList) {
		return
	}
	keep := cv.openList[:0]
	for _, ex := range cv.openList {
		if ex != nil && !ex.final {
			keep = append(keep, ex)
		}
	}
	for i := len(keep); i < len(cv.openList); i++ {
		cv.openList[i] = nil
	}
	cv.openList = keep
}

// Flush ends the input of a correlator made by New: every exchange still
// open is judged, responses that never found their request are counted,
// and the rows the Linker held go out.
func (c *Correlator) Flush() {
	if s := c.self; s != nil {
		m := s.clock.Mark(math.MaxInt64)
		c.Finish(m)
		s.linker.IdleTimeout = c.IdleTimeout
		s.linker.Finish(m)
		return
	}
	c.Finish(Mark{Seq: math.MaxInt64})
}

// Advance moves the correlator to Mark m: the pipeline calls it with every
// Mark of the run's Clock, in order, once it has Added every observation
// routed here with Seq <= m.Seq. Conversations whose logs' event time has
// moved past their idle limits close (in the order of their first Seq),
// their items keyed Key{m.Seq, conversation's first Seq, n}. Whether a
// conversation closes depends only on its own observations and the Marks,
// never on the other conversations of the shard.
func (c *Correlator) Advance(m Mark) { c.advance(&m, false) }

// Finish ends the input: it applies the last Mark, then judges every
// exchange still open and closes every conversation, in the order of their
// first Seq, keyed like Advance's. The correlator may be used again after
// it (a new input), with later Seqs.
func (c *Correlator) Finish(m Mark) { c.advance(&m, true) }

func (c *Correlator) advance(m *Mark, final bool) {
	period := c.IdleTimeout
	if c.MaxHold > 0 && (period == 0 || c.MaxHold < period) {
		period = c.MaxHold
	}
	due := c.clocks.apply(m, period)
	again := c.marks.next(m)
	var closing []*conversation
	if final {
		for _, cv := range c.convs {
			// Past its deadline by the logs' last time, it ends as a
			// sweep would have ended it (cut when MaxHold's).
			c.overAt(cv, c.logsNow(cv))
			closing = append(closing, cv)
		}
	} else if len(due) > 0 {
		var seen map[*conversation]bool // of the conversations in more than one log: most are in one set
		for _, lk := range due {
			set := c.byLog[lk]
			if set == nil {
				continue
			}
			for cv := range set.convs {
				if len(due) > 1 && cv.rare != nil && len(cv.rare.logs) > 1 {
					if seen[cv] {
						continue
					}
					if seen == nil {
						seen = map[*conversation]bool{}
					}
					seen[cv] = true
				}
				if c.over(cv) {
					closing = append(closing, cv)
				}
			}
		}
	}
	if !final {
		closing = append(closing, c.sameIDDue(m, closing)...) // open ones with held rows due (ids.go)
	}
	slices.SortFunc(closing, func(a, b *conversation) int { return cmpInt64(a.first, b.first) })
	for _, st := range c.heldDue(m, closing) { // closing, and the conversations that release held exchanges, by first Seq
		c.key = Key{Seq: m.Seq, Again: again, Conv: st.cv.first}
		switch {
		case !st.close:
			c.releaseHeld(st.cv)
		case len(st.cv.ro().dueRows) > 0:
			// Open, with same-id rows due (ids.go): write them, then what
			// its log has passed of the answers held for a cancel.
			c.releaseDueSameID(st.cv)
			if len(st.cv.ro().settling) > 0 {
				c.releaseHeld(st.cv)
			}
		default:
			c.close(st.cv)
		}
	}
	if final {
		c.heldByLog = nil
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LowWater is the smallest Seq an open conversation of this correlator
// still needs (its first observation: replaying input from there rebuilds
// it whole), or math.MaxInt64 when it holds none. For a correlator made by
// New it covers its Linker too, and is in the callers' Seq when they set
// it.
func (c *Correlator) LowWater() int64 {
	lw := int64(math.MaxInt64)
	if c.self != nil {
		lw = c.self.linker.LowWater()
	}
	for _, cv := range c.convs {
		lw = min(lw, cv.first)
	}
	return lw
}

// LowWaterBy is LowWater per log source (Position.Source): into[source]
// is lowered to the smallest Seq an open conversation that has seen that
// log still needs. A consumer commits each input up to its own low-water
// mark, so a conversation held open on one input does not hold the others.
func (c *Correlator) LowWaterBy(into map[string]int64) {
	for _, cv := range c.convs {
		for _, lk := range cv.logList() {
			lowerTo(into, lk.source, cv.first)
		}
	}
}

func lowerTo(m map[string]int64, k string, v int64) {
	if cur, ok := m[k]; !ok || v < cur {
		m[k] = v
	}
}

// close ends a conversation: every exchange still open is judged on what the
// log holds, held MRTR chains go out, responses that never found their
// request are counted, and the conversation's state is dropped.
func (c *Correlator) close(cv *conversation) {
	c.releaseAllSameID(cv)
	// What is still open is judged now; when MaxHold ends the
	// conversation, those rows (and the MRTR chains it held) say so. Rows
	// judged before, whenever they go out, do not: they would have been
	// the same had the conversation gone on.
	c.flushing = true
	for _, ex := range cv.openList {
		if ex == nil {
			continue // judged, its row out (state.go, vacate)
		}
		// An answer held for a cancel (cancel.go) had its response: it
		// would have gone out as it is when its log moved on.
		c.cutting = cv.cut && !ex.held
		c.finish(cv, ex)
	}
	c.flushing = false
	c.cutting = cv.cut
	for _, ch := range cv.ro().held {
		if len(ch.rows) > 0 {
			c.releaseChain(cv, ch, ch.rows[len(ch.rows)-1].Outcome)
		}
	}
	c.cutting = false
	if cv.rare != nil {
		cv.rare.held = nil
	}
	for _, list := range cv.ro().pending {
		for _, p := range list {
			c.Stats.StrayMessages++
			c.unpark(p.tally, false)
		}
	}
	// Every close is reported (the Linker forgets a linked conversation;
	// a consumer that replays its input learns which records are used up).
	c.emit(Item{kind: itemConvEnd, conv: cv.first, end: &ConvEnd{Key: cv.key, First: cv.first, Last: cv.lastPos()}})
	if cv.rare != nil {
		cv.rare.pending, cv.rare.cancels = nil, nil
	}
	cv.openList = nil
	cv.idx = remIndex{}
	delete(c.convs, cv.key)
	c.lruUnlink(cv)
	for _, lk := range cv.logList() {
		if set := c.byLog[lk]; set != nil {
			delete(set.convs, cv)
			if len(set.convs) == 0 {
				delete(c.byLog, lk)
			}
		}
	}
	c.Stats.Closed++
}

// A conversation ends at the first of two deadlines, both from its own
// records: idle, IdleTimeout after its latest activity (four times that
// while a response is awaited on a stream; a minute, or IdleTimeout if
// shorter, after a DELETE of its session), and held, MaxHold after its
// first activity. It ends at whichever comes first, marked cut when that
// is MaxHold's. The same rule is applied when a record comes (overAt),
// at the sweeps of Marks (over) and at the end (Finish), so where a
// conversation is cut never depends on how the input was cut into rounds
// (a Kafka consumer's follow its fetches).

// deadline is when cv ends by its records so far, and whether that end is
// MaxHold's (ok false: neither bound applies), as far as asking at t
// needs: whether an exchange waits on a stream (which makes the idle
// deadline four times later) is looked at only once t is past the plain
// one, since before it neither the end nor whose it is can change (a
// record's path, so not a scan of the open list per record).
func (c *Correlator) deadline(cv *conversation, t time.Time) (at time.Time, cut, ok bool) {
	if c.IdleTimeout > 0 {
		wait := c.IdleTimeout
		if cv.ended {
			wait = min(c.IdleTimeout, time.Minute)
		}
		at, ok = cv.lastAt().Add(wait), true
		if !cv.ended && t.After(at) && cv.waitsOnStream() {
			at = cv.lastAt().Add(4 * c.IdleTimeout)
		}
	}
	if started := cv.startedAt(); c.MaxHold > 0 && !started.IsZero() {
		if held := started.Add(c.MaxHold); !ok || held.Before(at) {
			at, cut, ok = held, true, true
		}
	}
	return at, cut, ok
}

// overAt reports that a record at t no longer belongs to cv: t is past
// cv's deadline. When MaxHold's, cv is marked cut.
func (c *Correlator) overAt(cv *conversation, t time.Time) bool {
	at, cut, ok := c.deadline(cv, t)
	if !ok || !t.After(at) {
		return false
	}
	if cut && !cv.cut {
		cv.cut = true
		c.Stats.HoldCuts++
	}
	return true
}

// logsNow is the newest event time of cv's logs.
func (c *Correlator) logsNow(cv *conversation) time.Time {
	var now time.Time
	for _, lk := range cv.logList() {
		if t := c.clocks.now(lk); t.After(now) {
			now = t
		}
	}
	return now
}

// over says, at a sweep, whether cv has ended by its logs' event time. One
// that stays open forgets what is too old to be matched again.
func (c *Correlator) over(cv *conversation) bool {
	now := c.logsNow(cv)
	if c.overAt(cv, now) {
		return true
	}
	if c.IdleTimeout > 0 {
		cv.forget(now.Add(-c.IdleTimeout))
	}
	return false
}

// waitsOnStream says whether an open exchange of the conversation expects
// its response on a stream: answered 202, or an event stream that ended
// without it.
func (cv *conversation) waitsOnStream() bool {
	for _, ex := range cv.openList {
		if ex == nil || ex.final || ex.held {
			continue
		}
		if n := len(ex.attempts); n > 0 {
			if at := &ex.attempts[n-1]; at.Status == 202 || at.SSE {
				return true
			}
		}
	}
	return false
}

// forget drops, from a long-lived conversation, the finished exchanges that
// started before cutoff: an id or a call that old is no longer matched.
func (cv *conversation) forget(cutoff time.Time) {
	if cv.idx.len() < 64 {
		return
	}
	cv.idx.filter(func(x remRef) bool { return !x.final() || !x.startedAt().Before(cutoff) })
	// Those at the head of its history are now in no index: they leave it
	// too (issue 11: a conversation that just stopped while a stream was
	// open stays open four times IdleTimeout, and kept its latest 128
	// summaries all along). Popping them later would have found nothing
	// to unremember, so what is remembered, and when, is unchanged.
	for cv.past.len() > 0 {
		if x := cv.oldestPast().ref(); !x.final() || !x.startedAt().Before(cutoff) {
			break
		}
		cv.popPast()
	}
	if cv.past.len() == 0 {
		cv.past, cv.pastHead = exRing{}, 0
	}
}

// OpenConversations is how many conversations hold state now.
func (c *Correlator) OpenConversations() int { return len(c.convs) }
