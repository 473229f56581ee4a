package correlate

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/classify"
	"mcptrace/schema"
)

// This file fills the diagnosis columns that correlation decides:
// session_stuck and session_stuck_reason, resume_problem and
// duplicate_side_effect (the rules are stated in doc.go, "Stuck sessions,
// broken resumption and side effects done twice").

// session_stuck_reason and resume_problem values. A status other than 404
// answering an unknown session gives "status_<code>_for_unknown_session".
const (
	StuckNoReinitialize      = "no_reinitialize"
	StuckDeadSessionReused   = "dead_session_reused"
	StuckJSONRPCErrorUnknown = "jsonrpc_error_for_unknown_session"
	ResumeNoLastEventID      = "no_last_event_id"
	ResumeNotReplayed        = "not_replayed"
)

const (
	stuckStatusPrefix     = "status_"
	stuckStatusSuffix     = "_for_unknown_session"
	maxEventIDs           = 8      // event ids an exchange remembers for matching a Last-Event-ID
	maxRejectionText      = 1024   // how much of a plain-text rejection body is read for its words
	sessionNotFoundCodeTS = -32001 // TS1's "Session not found"
	invalidRequestCode    = -32600
)

// exDiag is what the diagnosis columns need of one exchange: resumption,
// its SSE event ids and its latest cut, made with its first event id (an
// exDiag of 8 bytes, not 56: issue 11). Its flags are the exchange's
// (diag), where they take no room. Session: when it was sent on a session
// after its 404, the time of the 404 is its hold part's stuckSince (the
// Linker refines the reason).
type exDiag struct {
	resume *exResume
}

// diagFlags are an exchange's diagnosis flags, read only while it is live.
type diagFlags uint8

const (
	diagWaiting    diagFlags = 1 << iota // it waits for a reconnect (it is in its conversation's waiting list)
	diagNoLEID                           // a reconnect after a cut omitted Last-Event-ID
	diagUnreplayed                       // a resumed stream ended without the response, and none brought it since
	// Side effects.
	diagRepeats // it repeats an earlier request of the same call (retry_of, duplicate_of)
	diagPrevRan // that earlier request ran, or may have run, on the server
)

func (ex *exchange) is(f diagFlags) bool { return ex.dflags&f != 0 }

func (ex *exchange) setFlag(f diagFlags, on bool) {
	if on {
		ex.dflags |= f
	} else {
		ex.dflags &^= f
	}
}

// convDiag is what the diagnosis columns need of one conversation.
type convDiag struct {
	// When its session was first answered 404 is its rare part's deadAt;
	// whether the log showed its initialize, and whether a request on it
	// was answered, its sawInit and answered.
	waiting []*exchange // exchanges whose cut stream awaits a reconnect
}

// resumable says whether a cut stream of this exchange may be resumed
// (GET with Last-Event-ID): Streamable HTTP before 2026-07-28, which
// removed resumption.
func resumable(o *schema.Observation, version string) bool {
	return o.Transport == schema.TransportStreamableHTTP && !classify.Stateless(version)
}

// noteAttempt follows a POST attempt of a client request, in input order,
// before it may settle the exchange. For the session: a request sent at or
// after a 404 on its session is sent on a dead session; a 404 makes the
// session dead, an answer of its own to a request sent after that makes it
// alive again. For resumption: the event ids its stream gave, and whether
// it was cut (reset or timeout) after at least one id, with the request
// still unanswered, so a reconnect is due; a new POST of the request
// supersedes an awaited reconnect.
func (c *Correlator) noteAttempt(cv *conversation, ex *exchange, o *schema.Observation) {
	h := o.HTTP
	if ex.fromServer || h == nil || h.Method != "POST" || len(ex.attempts) == 0 {
		return
	}
	version := ex.reqVersion()
	if version == "" {
		version = cv.version()
	}
	c.noteSession(cv, ex, o, version)
	c.stopWaiting(cv, ex)
	if h.SSE && h.StreamLastEventID != "" {
		ex.diag.addEventID(h.StreamLastEventID)
	}
	decides := attemptDecides(&ex.attempts[len(ex.attempts)-1], ex.id) || ex.response != nil
	if decides || !h.SSE || (h.StreamEnd != schema.StreamReset && h.StreamEnd != schema.StreamTimeout) ||
		len(ex.diag.eventIDs()) == 0 || !resumable(o, version) {
		return
	}
	ex.diag.setCutAt(o.EndOrStart())
	ex.setFlag(diagWaiting, true)
	cv.diag.waiting = append(cv.diag.waiting, ex)
}

// noteSession keeps the conversation's session dead or alive, in the
// order the attempts were sent (their exchanges are judged later, the
// failed ones only when the conversation ends).
func (c *Correlator) noteSession(cv *conversation, ex *exchange, o *schema.Observation, version string) {
	if o.SessionID == "" || classify.Stateless(version) || ex.method() == "initialize" {
		return
	}
	h := o.HTTP
	dead := cv.ro().deadAt
	after := !dead.IsZero() && !o.Time.Before(dead)
	if after && ex.holdRO().stuckSince.IsZero() {
		ex.holding().stuckSince = dead
	}
	switch {
	case h.Responded && h.Status == 404:
		if dead.IsZero() {
			cv.more().deadAt = o.EndOrStart()
		}
	case after && h.Responded && h.Status >= 200 && h.Status <= 299 && answersAlive(o, ex.id):
		cv.rare.deadAt = time.Time{} // the session answered after all: it was not dead
		if ex.holdPart != nil {
			ex.holdPart.stuckSince = time.Time{}
		}
	}
}

// answersAlive says whether an observation carries an answer to the
// request from a server that knows its session: a response with its id
// that is not an error saying the session is unknown.
func answersAlive(o *schema.Observation, id schema.ID) bool {
	for i := range o.Messages {
		m := &o.Messages[i]
		if m.Where == schema.InRequestBody || m.Kind != schema.MsgResponse || !classify.SameID(m.ID, id) {
			continue
		}
		if e := errorOf(m); e.object && saysSessionUnknown(e.message) {
			return false
		}
		return true
	}
	return false
}

// exResume is what the resumption diagnosis keeps of an exchange whose
// streams gave the client event ids.
type exResume struct {
	eventIDs []string  // SSE event ids its streams gave the client, newest last
	id1      [1]string // where eventIDs starts: most streams give one id
	// The end of its latest stream that ended without the response, while
	// a reconnect is awaited (cutAt).
	cutS int64
	cutN int32
}

// eventIDs are the SSE event ids d's streams gave the client, newest
// last.
func (d *exDiag) eventIDs() []string {
	if d.resume == nil {
		return nil
	}
	return d.resume.eventIDs
}

// cutAt is the end of d's latest stream that ended without the response,
// while a reconnect is awaited.
func (d *exDiag) cutAt() time.Time {
	if d.resume == nil {
		return time.Time{}
	}
	return instantTime(d.resume.cutS, d.resume.cutN)
}

// setCutAt sets cutAt (only of an exchange with event ids).
func (d *exDiag) setCutAt(t time.Time) {
	d.resume.cutS, d.resume.cutN = toInstant(t)
}

func (d *exDiag) addEventID(id string) {
	if d.resume == nil {
		d.resume = &exResume{}
		d.resume.eventIDs = d.resume.id1[:0]
	}
	r := d.resume
	if slices.Contains(r.eventIDs, id) {
		return
	}
	if len(r.eventIDs) == maxEventIDs {
		r.eventIDs = append(r.eventIDs[:0], r.eventIDs[1:]...)
	}
	r.eventIDs = append(r.eventIDs, id)
}

func (c *Correlator) stopWaiting(cv *conversation, ex *exchange) {
	if !ex.is(diagWaiting) {
		return
	}
	ex.setFlag(diagWaiting, false)
	cv.diag.waiting = slices.DeleteFunc(cv.diag.waiting, func(w *exchange) bool { return w == ex })
}

// noteGet looks at a GET on the conversation as the reconnect of every
// exchange whose cut stream awaits one, when it started after the cut: one
// without Last-Event-ID did not resume it (no_last_event_id); one whose
// Last-Event-ID names an event of its stream resumed it, and replayed the
// response or not (a resumed stream that ends without it leaves the
// exchange waiting for the next reconnect); one naming another stream's
// event is not its reconnect. It runs before the GET's messages are paired.
func (c *Correlator) noteGet(cv *conversation, o *schema.Observation) {
	if len(cv.diag.waiting) == 0 {
		return
	}
	h := o.HTTP
	keep := cv.diag.waiting[:0]
	for _, ex := range cv.diag.waiting {
		if ex.final {
			if ex.exLive != nil {
				ex.setFlag(diagWaiting, false)
			}
			continue
		}
		d := &ex.diag
		if o.Time.Before(d.cutAt()) {
			keep = append(keep, ex) // a stream opened before the cut is not its reconnect
			continue
		}
		switch {
		case h.LastEventID == "":
			ex.setFlag(diagNoLEID, true)
			ex.setFlag(diagWaiting, false)
			continue
		case !slices.Contains(d.eventIDs(), h.LastEventID):
			keep = append(keep, ex) // another stream's resumption
			continue
		}
		if carriesResponse(o, ex.id) {
			ex.setFlag(diagUnreplayed, false)
			ex.setFlag(diagWaiting, false)
			continue
		}
		ex.setFlag(diagUnreplayed, true)
		if h.SSE && h.StreamLastEventID != "" {
			d.addEventID(h.StreamLastEventID)
		}
		d.setCutAt(o.EndOrStart())
		keep = append(keep, ex) // the client may reconnect again
	}
	clear(cv.diag.waiting[len(keep):])
	cv.diag.waiting = keep
}

// carriesResponse says whether an observation's response side holds a
// response with the id.
func carriesResponse(o *schema.Observation, id schema.ID) bool {
	for i := range o.Messages {
		m := &o.Messages[i]
		if m.Where != schema.InRequestBody && m.Kind == schema.MsgResponse && classify.SameID(m.ID, id) {
			return true
		}
	}
	return false
}

// diagnose fills the diagnosis columns of an exchange being judged, and
// keeps what later exchanges of the conversation are judged against. It
// runs in finish, after the verdict and session_expired.
func (c *Correlator) diagnose(cv *conversation, ex *exchange, v *classify.Verdict, version string) {
	r := ex.getRow()
	c.stopWaiting(cv, ex)
	switch {
	case ex.is(diagNoLEID):
		r.ResumeProblem = schema.Str(ResumeNoLastEventID)
	case ex.is(diagUnreplayed):
		r.ResumeProblem = schema.Str(ResumeNotReplayed)
	}
	answerSaysUnknown := c.judgeSession(cv, ex, v, version)
	ex.ran = uint16(min(ranCount(ex, v, answerSaysUnknown), math.MaxUint16))
	if tool := ex.tool(); tool != "" && !cv.safeToRepeat(tool) &&
		(ex.ran >= 2 || (ex.is(diagRepeats) && ex.is(diagPrevRan) && ex.ran >= 1)) {
		r.DuplicateSideEffect = true
	}
}

// judgeSession sets session_stuck: a request sent on its session after the
// session was answered 404 (the client carried on instead of
// re-initializing), or a request on a session the server answered as
// unknown with something other than 404.
//
// It reports whether the answer itself said the session is unknown.
func (c *Correlator) judgeSession(cv *conversation, ex *exchange, v *classify.Verdict, version string) (answerSaysUnknown bool) {
	r := ex.getRow()
	if ex.method() == "initialize" && !ex.fromServer {
		cv.sawInit = true
	}
	if !ex.onSession || ex.fromServer || classify.Stateless(version) || ex.method() == "initialize" {
		return false
	}
	reason := unknownSessionAnswer(cv, ex, v)
	answerSaysUnknown = reason != ""
	live := reason == "" && !r.SessionExpired && answeredOwn(ex, v)
	if live {
		cv.answered = true
	}
	switch {
	case !ex.holdRO().stuckSince.IsZero() && !live:
		reason = StuckNoReinitialize // the Linker may make it dead_session_reused
	default:
		if ex.holdPart != nil {
			ex.holdPart.stuckSince = time.Time{}
		}
	}
	if reason != "" {
		r.SessionStuck, r.SessionStuckReason = true, schema.Str(reason)
	}
	return answerSaysUnknown
}

// answeredOwn says whether the server answered the request itself: a
// JSON-RPC response with its id, whatever it says.
func answeredOwn(ex *exchange, v *classify.Verdict) bool {
	if v.Judged == nil || v.Judged.Kind != schema.MsgResponse || !classify.SameID(v.Judged.ID, ex.id) {
		return false
	}
	return v.Outcome != classify.HTTPError
}

// unknownSessionAnswer recognises an answer that says the request's session
// is unknown without the 404 the specification asks for: a non-2xx status
// other than 404, or a 2xx carrying a JSON-RPC error, whose text says the
// session is unknown, invalid, expired or not found (TS1's "Session not
// found", PY1's "Invalid or expired session ID", the TypeScript example
// servers' "No valid session ID provided", "No active session", ...).
// Without such words: a 2xx -32600 "Invalid Request" that is not tied to
// the request's id (a transport-level rejection: a well-formed request is
// no invalid request, so what was rejected is outside the body: the
// session), and a bare 400 on a session this log never saw initialized or
// answering. It returns the reason, or "".
func unknownSessionAnswer(cv *conversation, ex *exchange, v *classify.Verdict) string {
	n := len(ex.attempts)
	if n == 0 {
		return ""
	}
	last := &ex.attempts[n-1]
	if !last.Responded || last.Status == 404 {
		return ""
	}
	if last.Status >= 200 && last.Status <= 299 && v.Outcome != classify.JSONRPCError && v.Outcome != classify.InvalidEnvelope {
		return "" // a result (not read again: it may be large)
	}
	text, code, hasCode, ownID := rejection(ex, last, v)
	says := saysSessionUnknown(text)
	if last.Status < 200 || last.Status > 299 {
		if says || (last.Status == 400 && genericRejection(text) && !cv.sawInit && !cv.answered) {
			return stuckStatusPrefix + strconv.Itoa(last.Status) + stuckStatusSuffix
		}
		return ""
	}
	if !hasCode {
		return ""
	}
	switch {
	case says && (!ownID || code == invalidRequestCode || code == sessionNotFoundCodeTS || namesMCPSession(text)):
		return StuckJSONRPCErrorUnknown
	case code == invalidRequestCode && !ownID && genericRejection(text):
		return StuckJSONRPCErrorUnknown
	}
	return ""
}

// rejection reads what an answer says: the JSON-RPC error's message and
// code (and whether it carries the request's id), or the text of a body
// that is not JSON.
func rejection(ex *exchange, last *classify.Attempt, v *classify.Verdict) (text string, code int64, hasCode, ownID bool) {
	if m := v.Judged; m != nil && m.Kind == schema.MsgResponse && !m.Truncated {
		if e := errorOf(m); e.object {
			text = e.message
			if e.codeNumber {
				code, hasCode = e.code, true
			}
			return text, code, hasCode, classify.SameID(m.ID, ex.id)
		}
	}
	for i := range last.Messages {
		m := &last.Messages[i]
		if m.Kind == schema.MsgResponse {
			if e := errorOf(m); e.object {
				text = e.message
				if e.codeNumber {
					code, hasCode = e.code, true
				}
				return text, code, hasCode, classify.SameID(m.ID, ex.id)
			}
		}
		if m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther {
			raw := m.Raw
			if len(raw) > maxRejectionText {
				raw = raw[:maxRejectionText]
			}
			if s := gjson.ParseBytes(raw); s.Type == gjson.String {
				return s.Str, 0, false, false
			}
			return string(raw), 0, false, false
		}
	}
	return "", 0, false, false
}

// saysSessionUnknown: the text says the session is unknown, invalid,
// expired or not found. "Missing session ID" is not among them: it says
// the header did not arrive, which is another fault.
func saysSessionUnknown(text string) bool {
	t := strings.ToLower(text)
	if strings.Contains(t, "server not initialized") {
		return true // TS1 after a restart: a session id it never issued
	}
	if !strings.Contains(t, "session") {
		return false
	}
	for _, w := range []string{"not found", "unknown", "invalid", "expired", "no valid", "no active", "does not exist",
		"doesn't exist", "no longer exists", "not exist", "terminated", "unrecognized", "not recognized"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// namesMCPSession: the text names the MCP session itself rather than some
// session of the tool's (a browser's, a database's).
func namesMCPSession(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "mcp-session-id") || strings.Contains(t, "mcp session") || strings.Contains(t, "session id") ||
		strings.Contains(t, "session-id")
}

// genericRejection: a rejection that says nothing of its cause.
func genericRejection(text string) bool {
	t := strings.Trim(strings.ToLower(strings.TrimSpace(text)), ".!:")
	switch t {
	case "", "bad request", "invalid request", "bad request: invalid request":
		return true
	}
	return false
}

// mayHaveRun says whether, after this attempt, the server may have run the
// request: it answered 2xx (it took it) or 5xx (it may have failed part
// way), or no answer came over a connection that was made (lost, timed
// out, cut, aborted: nobody can tell). A refused connection, a 1xx, 3xx or
// 4xx answer (429, 401, 403, 400, 404, ...) means it did not.
func mayHaveRun(at *classify.Attempt) bool {
	if !at.Responded {
		return at.Failure != schema.FailureConnectionRefused
	}
	return (at.Status >= 200 && at.Status <= 299) || at.Status >= 500
}

// refusedCodes are JSON-RPC errors by which a server says it did not run
// the request: the caller's mistakes and the version and capability
// refusals.
var refusedCodes = []int64{-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022, -32042}

// refusedByAnswer says whether the judged answer says the request was not
// run: a JSON-RPC error of refusedCodes, one not tied to the request's id
// (a transport-level rejection), or an answer for an unknown session.
func refusedByAnswer(ex *exchange, v *classify.Verdict, unknownSession bool) bool {
	if unknownSession {
		return true
	}
	m := v.Judged
	if m == nil || m.Kind != schema.MsgResponse || (v.Outcome != classify.JSONRPCError && v.Outcome != classify.InvalidEnvelope) {
		return false
	}
	e := errorOf(m)
	if !e.object {
		return false
	}
	if !classify.SameID(m.ID, ex.id) {
		return true
	}
	return slices.Contains(refusedCodes, e.code)
}

// ranCount counts the attempts of an exchange that ran or may have run on
// the server. A request that no POST carried (stdio, a log that pairs
// request and response itself) ran once unless its answer refused it.
func ranCount(ex *exchange, v *classify.Verdict, unknownSession bool) int32 {
	refused := refusedByAnswer(ex, v, unknownSession)
	if len(ex.attempts) == 0 {
		if refused {
			return 0
		}
		return 1
	}
	var n int32
	for i := range ex.attempts {
		if mayHaveRun(&ex.attempts[i]) {
			n++
		}
	}
	if last := &ex.attempts[len(ex.attempts)-1]; refused && mayHaveRun(last) && last.Responded && last.Status <= 299 {
		n-- // the answer to the last attempt says it did not run
	}
	return n
}

// ranSoFar says whether an exchange ran or may have run so far: judged, by
// its count; still open, when it is in flight (no attempt logged yet, as
// on stdio) or an attempt may have run.
func (ex *exchange) ranSoFar() bool {
	if ex.final {
		return ex.ran > 0
	}
	if len(ex.attempts) == 0 {
		return true
	}
	for i := range ex.attempts {
		if mayHaveRun(&ex.attempts[i]) {
			return true
		}
	}
	return false
}

// noteRepeat records that ex repeats prev, an earlier request of the same
// call (a retry or a duplicate dispatch), for duplicate_side_effect.
func (ex *exchange) noteRepeat(prev remRef) {
	ex.setFlag(diagRepeats, true)
	ex.setFlag(diagPrevRan, prev.ranSoFar())
}

// mergedDuplicate is duplicate_side_effect of a merged row. The server's
// own log saying it ran twice stands. A client's judgement from its own
// POSTs of one request (post_count 2 or more, no retry_of or duplicate_of)
// is replaced by the server's count when the server saw only one of them
// (a proxy answered the other). A judgement across two exchanges stays the
// client's: the merged row does not look at the earlier exchange's
// partner.
func mergedDuplicate(c, s *schema.Exchange) bool {
	if s.DuplicateSideEffect {
		return true
	}
	if !c.DuplicateSideEffect {
		return false
	}
	sameRow := c.PostCount >= 2 && c.RetryOf == nil && c.DuplicateOf == nil
	return !(sameRow && s.PostCount <= 1)
}
