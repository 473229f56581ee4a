package correlate

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/classify"
	"mcptrace/schema"
)

// RetryWindow is how long after a failed call a repeat in the same
// session still counts as its retry.
const RetryWindow = 10 * time.Minute

// NextSessionWindow is how long after a failed call a repeat in the
// client's next session still counts as its retry.
const NextSessionWindow = 10 * time.Minute

// DuplicateWindow is how close two sends of the same call must be, with no
// failure between them, to count as one call dispatched twice.
const DuplicateWindow = 50 * time.Millisecond

// toolHints are a tool's annotations as tools/list stated them. Absent hints
// take the specification's defaults: not read-only, not idempotent.
type toolHints struct {
	readOnly, idempotent bool
}

// learnTools records the annotations of the tools a tools/list result lists.
func (cv *conversation) learnTools(tools gjson.Result) {
	tools.ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").String()
		if name == "" {
			return true
		}
		if cv.tools == nil {
			cv.tools = map[string]toolHints{}
		}
		a := t.Get("annotations")
		cv.tools[name] = toolHints{readOnly: a.Get("readOnlyHint").Bool(), idempotent: a.Get("idempotentHint").Bool()}
		return true
	})
}

// safeToRepeat says whether sending a request again cannot do harm: methods
// other than tools/call read, and a tool is safe when it is read-only or
// idempotent. A tool never listed takes the defaults, so it is not safe.
func (cv *conversation) safeToRepeat(tool string) bool {
	if tool == "" {
		return true
	}
	h := cv.tools[tool]
	return h.readOnly || h.idempotent
}

// uncertainAttempt: after this attempt nobody can tell whether the server
// acted (5xx, a connection lost after sending, a stream cut before the
// response). A refused connection never reached the server.
func uncertainAttempt(at *classify.Attempt) bool {
	switch {
	case !at.Responded:
		return at.Failure != schema.FailureConnectionRefused
	case at.Status >= 500:
		return true
	case at.SSE && at.StreamEnd != "" && at.StreamEnd != schema.StreamComplete:
		return true
	}
	return false
}

// retryAfterSeconds reads a Retry-After header: delay seconds, or an HTTP
// date taken relative to when the response ended. 0 means none.
func retryAfterSeconds(h string, at time.Time) float64 {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(h, 64); err == nil && n > 0 {
		return n
	}
	if t, err := http.ParseTime(h); err == nil && t.After(at) {
		return t.Sub(at).Seconds()
	}
	return 0
}

// judgeRetryAfter fills retry_after_s and retry_after_respected for a repeat
// sent at now after an attempt that ended at prevEnd asking to wait s
// seconds.
func judgeRetryAfter(r *schema.Exchange, s float64, prevEnd, now time.Time) {
	if s <= 0 || prevEnd.IsZero() {
		return
	}
	waited := now.Sub(prevEnd).Seconds()
	ok := waited >= s-0.001
	r.RetryAfterS, r.RetryAfterOK = &s, &ok
}

func isSuccess(outcome string) bool {
	return outcome == classify.ToolSuccess || outcome == classify.Success
}

// link relates a new client request to the latest earlier request of the
// same call (same method, target and arguments) in its conversation:
//
//   - it continues an MRTR chain when it carries inputResponses or
//     requestState and the earlier request was answered input_required (with
//     the same requestState, when one was given): continues, mrtr_round; a
//     continuation is not a retry;
//   - it is a duplicate (duplicate_of) when it was sent within
//     DuplicateWindow of the earlier one and no failure came between;
//   - it is a retry (retry_origin application, or manual when the log says a
//     person sent it; retry_basis same_call_after_failure or
//     same_call_while_open) when the earlier one failed or had not finished.
//
// A retry of a tool that is neither read-only nor idempotent after an outcome
// that leaves side effects uncertain is flagged retry_unsafe.
//
// A client request with no earlier request of its call in its conversation
// may repeat one of the client's previous session (same_call_next_session):
// that is for the Linker to say, which is told of every client request
// here (Item kind itemAttach) and of the changes that matter to it.
func (c *Correlator) link(cv *conversation, ex *exchange, o *schema.Observation, params reqParams) {
	if o.Reported != nil && !params.hasArguments {
		return // a log that reports the call without its arguments cannot say it was repeated
	}
	prev := cv.idx.call(ex.callHash)
	cv.idx.setCall(ex.callHash, remRef{ex: ex})
	ex.indexed = true
	if o.Side == schema.SideClient {
		// Server logs are never linked across sessions: they interleave
		// many clients.
		c.tellAttach(cv, ex, o, !prev.ok() && (cv.session() != "" || cv.tracksInstances()))
	}
	if !prev.ok() {
		return
	}
	const basis = "same_call_after_failure"
	r := ex.getRow()
	if params.continuation {
		state := params.requestState
		if prev.isInputRequired() && (prev.ex == nil || prev.ex.cv == cv) && (prev.requestState() == "" || prev.requestState() == state) {
			round := max(prev.round(), 1) + 1
			m := ex.morePart()
			m.round, m.chain = round, prev.chain()
			r.Continues, r.MRTRRound = schema.Str(prev.exIDText()), &round
			return
		}
	}
	if r.RetryOrigin != "none" {
		if r.RetryOf != nil && *r.RetryOf == prev.exIDText() {
			ex.noteRepeat(prev) // the same id sent again after it failed, or by the application
		}
		return // already a repeat of the same id
	}
	prevStart := prev.startedAt()
	if o.Time.Sub(prevStart) > RetryWindow {
		return // too long ago to be a retry of it
	}
	failed, uncertain := prev.failedSoFar()
	stillOpen := !prev.final() || prev.endedAt().After(o.Time)
	if !failed && stillOpen && o.Time.Sub(prevStart) >= 0 && o.Time.Sub(prevStart) <= DuplicateWindow {
		r.DuplicateOf = schema.Str(prev.exIDText())
		ex.noteRepeat(prev)
		return
	}
	if !failed && prev.final() {
		return // a new call that happens to repeat an earlier success
	}
	if prev.instOf() != ex.inst && isHandshake(ex.method()) {
		return // the handshake that says the client started again (ids.go)
	}
	open := !prev.final() && !failed
	r.RetryOrigin = schema.TriggerApplication
	if o.Trigger == schema.TriggerManual {
		r.RetryOrigin = schema.TriggerManual
	}
	r.RetryOf = schema.Str(prev.exIDText())
	ex.noteRepeat(prev)
	r.RetryBasis = schema.Str(basis)
	if open {
		r.RetryBasis = schema.Str("same_call_while_open")
	}
	if prev.instOf() != ex.inst {
		r.RetryBasis = schema.Str(basisNextInstance) // the client started again (ids.go)
	}
	if (uncertain || open) && !cv.safeToRepeat(ex.tool()) {
		r.RetryUnsafe = true
	}
	judgeRetryAfter(r, prev.retryAfter(), prev.lastEndAt(), o.Time)
}

// emitChained hands a judged exchange on, holding back the rounds of an MRTR
// chain until its last round, so every row of the chain gets chain_outcome.
//
// Its callers drop ex's live part (forgetLive) right after: the row of an
// exchange outside a chain goes out as it is (emitRowOf).
func (c *Correlator) emitChained(cv *conversation, ex *exchange) {
	ch := ex.chain()
	if ex.outcome() != classify.InputRequired && ch == nil {
		c.emitRowOf(cv, ex, ex.getRow(), false)
		return
	}
	row := *ex.getRow()
	if ex.outcome() == classify.InputRequired {
		m := ex.morePart()
		if m.round == 0 {
			m.round = 1
		}
		round := m.round
		row.MRTRRound = &round
		if m.chain == nil {
			m.chain = &chain{}
			r := cv.more()
			r.held = append(r.held, m.chain)
		}
		m.chain.rows = append(m.chain.rows, row)
		m.chain.refs = append(m.chain.refs, ex.ref)
		return
	}
	ch.rows = append(ch.rows, row)
	ch.refs = append(ch.refs, ex.ref)
	c.releaseChain(cv, ch, ex.outcome())
	for i, h := range cv.ro().held {
		if h == ch {
			cv.rare.held = append(cv.rare.held[:i], cv.rare.held[i+1:]...)
			break
		}
	}
}

// releaseChain emits every row of a chain with the chain's final outcome.
func (c *Correlator) releaseChain(cv *conversation, ch *chain, outcome string) {
	for i := range ch.rows {
		o := outcome
		ch.rows[i].ChainOutcome = &o
		c.emitRow(cv, ch.rows[i], ch.refs[i], false)
	}
	ch.rows, ch.refs = nil, nil
}

// failedSoFar says whether an exchange has failed by now (judged a failure,
// or its last attempt got an error status or no response while it waits
// for a possible re-POST), and whether that failure leaves side effects
// uncertain.
func (ex *exchange) failedSoFar() (failed, uncertain bool) {
	if ex.final {
		failed = !isSuccess(ex.outcome()) && ex.outcome() != classify.InputRequired
		return failed, ex.uncertain
	}
	if n := len(ex.attempts); n > 0 {
		last := &ex.attempts[n-1]
		if !last.Responded || last.Status < 200 || last.Status > 299 {
			return true, uncertainAttempt(last)
		}
		if last.SSE && last.BodyRecorded && last.StreamEnd != "" {
			// A stream that ended without the response (the exchange would
			// be final otherwise): cut, or closed by the client.
			return true, true
		}
	}
	return false, false
}

// lineageMemory is how many distinct calls a log remembers for retries
// across its sessions.
const lineageMemory = 4096

func clientOf(r *schema.Exchange) string {
	if r.ClientName == nil {
		return ""
	}
	return *r.ClientName
}

// sameClient: two conversations of one log come from the same client, as
// far as the log says (clientInfo or the logger's client name).
func sameClient(a, b string) bool {
	return a == "" || b == "" || a == b
}
