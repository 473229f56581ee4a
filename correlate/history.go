package correlate

import (
	"encoding/hex"
	"math"
	"time"

	"mcptrace/classify"
	"mcptrace/schema"
)

// What a conversation remembers of its requests for the requests that
// follow (id matching, retries, duplicates, id conflicts, MRTR chains):
// each in its index (index.go: by id, and the latest of each call) and,
// once judged, its history (past). While the request is open, and judged
// until its row has gone out, the index holds its exchange and everything
// is read from there (no summary: issue 11, 80 bytes of each open
// request). Once its row is out (forgetLive) a rem takes its place: a
// summary of the few things later requests consult (80 bytes: its id,
// hashes, times, outcome, the id of its row), which lets go of the
// exchange, freed with its row (issue 11: a judged exchange took some 400
// bytes of the history, 256 of them the exchange itself and 24 its
// exchange id). A remRef is either, as the index gives them.
type rem struct {
	ex *exchange // its exchange, kept only with keepExchanges

	// The exchange's, which never change. Its client instance is read
	// with instOf: its more's (0 unless the conversation is divided; a
	// summary of 80 bytes, not 88, so 80 in memory rather than 96: issue
	// 11).
	paramsHash uint64
	callHash   uint64
	fromServer bool

	flags          remFlags
	unique         int8 // idsUniquePerSession of its own protocol version: 0 none (the conversation's), 1 yes, -1 no
	idType         schema.IDType
	exID           [12]byte
	idKey          string // its id's key text (keyOf)
	started, ended stamp
	more           *remMore // what few need: a Retry-After, an MRTR round's chain, times out of range, an odd exchange id
}

type remFlags uint8

const (
	remRan           remFlags = 1 << iota // attempts ran or may have run
	remUncertain                          // its outcome leaves side effects uncertain
	remSuccess                            // judged success or tool_success
	remInputRequired                      // judged input_required (MRTR)
)

// remMore is the part of a summary that few requests need.
type remMore struct {
	// Its last attempt's Retry-After and when that attempt ended (read
	// only together: lastEnd only when retryAfterS is not 0).
	retryAfterS  float64
	lastEnd      time.Time
	requestState string
	round        int32
	inst         int32 // its client instance, when not 0
	chain        *chain
	times        *[2]time.Time // started, ended: set when a stamp cannot hold one
	exID         string        // set when the exchange id is not 24 hex digits
}

// keepExchanges keeps every rem's exchange after its row has gone out, so
// that later requests read the exchange itself, as they did before rems
// summarized it (the package's tests compare the rows of the two).
var keepExchanges bool

// checkRem makes every summary verify, when it is made, that it reads
// back as the exchange it summarizes (set by the package's tests).
var checkRem bool

// remRef is a remembered request: its exchange while it is live (ex; x
// nil), else its summary (x; and with keepExchanges, ex, which is then
// read). Its accessors read the exchange while there is one, else the
// summary.
type remRef struct {
	ex *exchange
	x  *rem
}

// ref is the remRef of a summary.
func (x *rem) ref() remRef { return remRef{ex: x.ex, x: x} }

// ok says whether it is a request (the zero remRef is none).
func (r remRef) ok() bool { return r.ex != nil || r.x != nil }

// summarize makes the summary of a judged exchange whose row has gone out.
func summarize(ex *exchange) *rem {
	x := &rem{ex: ex, paramsHash: ex.paramsHash, callHash: ex.callHash, fromServer: ex.fromServer}
	x.forget(ex)
	return x
}

// forget fills the summary of a judged exchange whose row has gone out and
// lets go of the exchange.
func (x *rem) forget(ex *exchange) {
	x.flags = 0
	if ex.ran > 0 {
		x.flags |= remRan
	}
	if ex.uncertain {
		x.flags |= remUncertain
	}
	if isSuccess(ex.outcome()) {
		x.flags |= remSuccess
	}
	if ex.outcome() == classify.InputRequired {
		x.flags |= remInputRequired
	}
	switch {
	case ex.reqVersion() == "":
		x.unique = 0
	case idsUniquePerSession(ex.reqVersion()):
		x.unique = 1
	default:
		x.unique = -1
	}
	k := keyOf(ex.id)
	x.idType, x.idKey = k.t, k.text
	var m remMore
	if ex.retryAfterS != 0 {
		m.retryAfterS, m.lastEnd = ex.retryAfterS, ex.lastEndAt()
	}
	if n, err := hex.Decode(x.exID[:], []byte(ex.exID)); err != nil || n != len(x.exID) || len(ex.exID) != 2*len(x.exID) || hex.EncodeToString(x.exID[:]) != ex.exID {
		m.exID = ex.exID
		if m.exID == "" {
			m.exID = "\x00" // not "": an empty id is told by more.exID == "" below
		}
	}
	var ok [2]bool
	x.started, ok[0] = toStamp(ex.startedAt)
	x.ended, ok[1] = toStamp(ex.endedAt)
	if !ok[0] || !ok[1] {
		m.times = &[2]time.Time{ex.startedAt, ex.endedAt}
	}
	if x.flags&remInputRequired != 0 {
		m.requestState, m.round, m.chain = ex.requestState(), ex.round(), ex.chain()
	}
	m.inst = ex.inst
	if m != (remMore{}) {
		x.more = &m
	}
	if checkRem {
		x.check(ex)
	}
	if !keepExchanges {
		x.ex = nil
	}
}

// check panics unless the summary reads back as ex.
func (x *rem) check(ex *exchange) {
	c := *x
	c.ex = nil
	s := remRef{x: &c}
	f1, u1 := s.failedSoFar()
	f2, u2 := ex.failedSoFar()
	cv := &conversation{client: &noImpl, server: &noImpl, toldCl: &noImpl}
	for _, v := range []string{"", "2025-06-18", "2026-07-28"} {
		cv.setVersion(v)
		if s.idsUnique(cv) != idsUniquePerSession(ex.versionOf(cv)) {
			panic("correlate: a summary's protocol version is not its exchange's")
		}
	}
	if ex.retryAfterS != 0 && (!s.lastEndAt().Equal(ex.lastEndAt()) || s.lastEndAt().IsZero() != ex.lastEndAt().IsZero()) {
		panic("correlate: a summary's Retry-After attempt end is not its exchange's")
	}
	if !s.final() || !ex.final || !s.startedAt().Equal(ex.startedAt) || !s.endedAt().Equal(ex.endedAt) ||
		s.startedAt().IsZero() != ex.startedAt.IsZero() || s.endedAt().IsZero() != ex.endedAt.IsZero() ||
		s.exIDText() != ex.exID || f1 != f2 || u1 != u2 || s.ranSoFar() != ex.ranSoFar() ||
		math.Float64bits(s.retryAfter()) != math.Float64bits(ex.retryAfterS) || s.key() != keyOf(ex.id) || s.params() != ex.paramsHash || s.call() != ex.callHash ||
		s.instOf() != ex.inst || s.server() != ex.fromServer || s.isInputRequired() != (ex.outcome() == classify.InputRequired) ||
		(s.isInputRequired() && (s.requestState() != ex.requestState() || s.round() != ex.round() || s.chain() != ex.chain())) {
		panic("correlate: a summary does not read back as its exchange")
	}
}

// stamp is a time as nanoseconds since 1970 (zeroStamp: the zero time),
// for the times a stamp can hold (years 1679 to 2261).
type stamp int64

const zeroStamp stamp = math.MinInt64

func toStamp(t time.Time) (stamp, bool) {
	if t.IsZero() {
		return zeroStamp, true
	}
	if y := t.Year(); y < 1679 || y > 2261 {
		return 0, false
	}
	return stamp(t.UnixNano()), true
}

// time is the stamp's time (its instant: the location is not kept, and
// only compared, never written).
func (s stamp) time() time.Time {
	if s == zeroStamp {
		return time.Time{}
	}
	return time.Unix(0, int64(s))
}

// utc is the stamp's time in UTC (the zero time for zeroStamp).
func (s stamp) utc() time.Time {
	if s == zeroStamp {
		return time.Time{}
	}
	return time.Unix(0, int64(s)).UTC()
}

// The accessors read the exchange while there is one, else the summary.

func (r remRef) params() uint64 {
	if r.ex != nil {
		return r.ex.paramsHash
	}
	return r.x.paramsHash
}

func (r remRef) call() uint64 {
	if r.ex != nil {
		return r.ex.callHash
	}
	return r.x.callHash
}

// server says the server sent it (fromServer).
func (r remRef) server() bool {
	if r.ex != nil {
		return r.ex.fromServer
	}
	return r.x.fromServer
}

// instOf is the client instance that sent it (0 where conversations are
// not divided).
func (r remRef) instOf() int32 {
	switch {
	case r.ex != nil:
		return r.ex.inst
	case r.x.more != nil:
		return r.x.more.inst
	}
	return 0
}

func (r remRef) final() bool { return r.ex == nil || r.ex.final }

func (r remRef) startedAt() time.Time {
	switch {
	case r.ex != nil:
		return r.ex.startedAt
	case r.x.more != nil && r.x.more.times != nil:
		return r.x.more.times[0]
	}
	return r.x.started.time()
}

func (r remRef) endedAt() time.Time {
	switch {
	case r.ex != nil:
		return r.ex.endedAt
	case r.x.more != nil && r.x.more.times != nil:
		return r.x.more.times[1]
	}
	return r.x.ended.time()
}

// lastEndAt is when its last attempt ended; of a summary, only with a
// Retry-After (retryAfter not 0), which is all that reads it
// (judgeRetryAfter).
func (r remRef) lastEndAt() time.Time {
	switch {
	case r.ex != nil:
		return r.ex.lastEndAt()
	case r.x.more != nil:
		return r.x.more.lastEnd
	}
	return time.Time{}
}

func (r remRef) retryAfter() float64 {
	switch {
	case r.ex != nil:
		return r.ex.retryAfterS
	case r.x.more != nil:
		return r.x.more.retryAfterS
	}
	return 0
}

// key is the key of its id (keyOf).
func (r remRef) key() idKey {
	if r.ex != nil {
		return keyOf(r.ex.id)
	}
	return idKey{r.x.idType, r.x.idKey}
}

// exIDText is the exchange id of its row.
func (r remRef) exIDText() string {
	switch {
	case r.ex != nil:
		return r.ex.exID
	case r.x.more != nil && r.x.more.exID != "":
		if r.x.more.exID == "\x00" {
			return ""
		}
		return r.x.more.exID
	}
	return hex.EncodeToString(r.x.exID[:])
}

func (r remRef) failedSoFar() (failed, uncertain bool) {
	if r.ex != nil {
		return r.ex.failedSoFar()
	}
	return r.x.flags&(remSuccess|remInputRequired) == 0, r.x.flags&remUncertain != 0
}

func (r remRef) ranSoFar() bool {
	if r.ex != nil {
		return r.ex.ranSoFar()
	}
	return r.x.flags&remRan != 0
}

// idsUnique is idsUniquePerSession of the version it was sent under.
func (r remRef) idsUnique(cv *conversation) bool {
	if r.ex != nil {
		return idsUniquePerSession(r.ex.versionOf(cv))
	}
	if r.x.unique == 0 {
		return idsUniquePerSession(cv.version())
	}
	return r.x.unique > 0
}

func (r remRef) isInputRequired() bool {
	if r.ex != nil {
		return r.ex.final && r.ex.outcome() == classify.InputRequired
	}
	return r.x.flags&remInputRequired != 0
}

// The MRTR part: read only of a request judged input_required.

func (r remRef) requestState() string {
	if r.ex != nil {
		return r.ex.requestState()
	}
	return r.x.more.requestState
}

func (r remRef) round() int32 {
	if r.ex != nil {
		return r.ex.round()
	}
	return r.x.more.round
}

func (r remRef) chain() *chain {
	if r.ex != nil {
		return r.ex.chain()
	}
	return r.x.more.chain
}

// inFlight is the exchange's inFlight: a summarized one is judged.
func (r remRef) inFlight(cv *conversation) bool { return r.ex != nil && r.ex.inFlight(cv) }
