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
// a rem for each, in its indexes (byID, calls) and its history (past).
// While the request is open, and judged until its row has gone out, the
// rem points to its exchange and everything is read from there. Once its
// row is out (forgetLive) the rem keeps a summary of the few things later
// requests consult (80 bytes: its id, hashes, times, outcome, the id of
// its row) and lets go of the exchange, which is freed with its row
// (issue 11: a judged exchange took some 400 bytes of the history, 256 of
// them the exchange itself and 24 its exchange id).
type rem struct {
	ex *exchange // the request until its row has gone out; nil after

	// Set when the rem is made (attach): the exchange's, which never
	// change. Its client instance is read with instOf: its exchange's,
	// then its more's (0 unless the conversation is divided; a summary of
	// 80 bytes, not 88, so 80 in memory rather than 96: issue 11).
	paramsHash uint64
	callHash   uint64
	fromServer bool

	// The summary, set by forget.
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

// remOf is the rem of an exchange still live, made when first needed.
func (ex *exchange) remOf() *rem {
	if ex.rem == nil {
		ex.rem = &rem{ex: ex, paramsHash: ex.paramsHash, callHash: ex.callHash, fromServer: ex.fromServer}
	}
	return ex.rem
}

// forget makes the summary of a judged exchange whose row has gone out and
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
	s := *x
	s.ex = nil
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
		math.Float64bits(s.retryAfter()) != math.Float64bits(ex.retryAfterS) || s.key() != keyOf(ex.id) || s.paramsHash != ex.paramsHash || s.callHash != ex.callHash ||
		s.instOf() != ex.inst || s.fromServer != ex.fromServer || s.isInputRequired() != (ex.outcome() == classify.InputRequired) ||
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

// instOf is the client instance that sent it (0 where conversations are
// not divided).
func (x *rem) instOf() int32 {
	switch {
	case x.ex != nil:
		return x.ex.inst
	case x.more != nil:
		return x.more.inst
	}
	return 0
}

func (x *rem) final() bool { return x.ex == nil || x.ex.final }

func (x *rem) startedAt() time.Time {
	switch {
	case x.ex != nil:
		return x.ex.startedAt
	case x.more != nil && x.more.times != nil:
		return x.more.times[0]
	}
	return x.started.time()
}

func (x *rem) endedAt() time.Time {
	switch {
	case x.ex != nil:
		return x.ex.endedAt
	case x.more != nil && x.more.times != nil:
		return x.more.times[1]
	}
	return x.ended.time()
}

// lastEndAt is when its last attempt ended; of a summary, only with a
// Retry-After (retryAfter not 0), which is all that reads it
// (judgeRetryAfter).
func (x *rem) lastEndAt() time.Time {
	switch {
	case x.ex != nil:
		return x.ex.lastEndAt()
	case x.more != nil:
		return x.more.lastEnd
	}
	return time.Time{}
}

func (x *rem) retryAfter() float64 {
	switch {
	case x.ex != nil:
		return x.ex.retryAfterS
	case x.more != nil:
		return x.more.retryAfterS
	}
	return 0
}

// key is the key of its id (keyOf).
func (x *rem) key() idKey {
	if x.ex != nil {
		return keyOf(x.ex.id)
	}
	return idKey{x.idType, x.idKey}
}

// exIDText is the exchange id of its row.
func (x *rem) exIDText() string {
	switch {
	case x.ex != nil:
		return x.ex.exID
	case x.more != nil && x.more.exID != "":
		if x.more.exID == "\x00" {
			return ""
		}
		return x.more.exID
	}
	return hex.EncodeToString(x.exID[:])
}

func (x *rem) failedSoFar() (failed, uncertain bool) {
	if x.ex != nil {
		return x.ex.failedSoFar()
	}
	return x.flags&(remSuccess|remInputRequired) == 0, x.flags&remUncertain != 0
}

func (x *rem) ranSoFar() bool {
	if x.ex != nil {
		return x.ex.ranSoFar()
	}
	return x.flags&remRan != 0
}

// idsUnique is idsUniquePerSession of the version it was sent under.
func (x *rem) idsUnique(cv *conversation) bool {
	if x.ex != nil {
		return idsUniquePerSession(x.ex.versionOf(cv))
	}
	if x.unique == 0 {
		return idsUniquePerSession(cv.version())
	}
	return x.unique > 0
}

func (x *rem) isInputRequired() bool {
	if x.ex != nil {
		return x.ex.final && x.ex.outcome() == classify.InputRequired
	}
	return x.flags&remInputRequired != 0
}

// The MRTR part: read only of a request judged input_required.

func (x *rem) requestState() string {
	if x.ex != nil {
		return x.ex.requestState()
	}
	return x.more.requestState
}

func (x *rem) round() int32 {
	if x.ex != nil {
		return x.ex.round()
	}
	return x.more.round
}

func (x *rem) chain() *chain {
	if x.ex != nil {
		return x.ex.chain()
	}
	return x.more.chain
}

// inFlight is the exchange's inFlight: a summarized one is judged.
func (x *rem) inFlight(cv *conversation) bool { return x.ex != nil && x.ex.inFlight(cv) }
