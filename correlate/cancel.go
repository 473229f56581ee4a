package correlate

import (
	"slices"
	"time"

	"mcptrace/classify"
	"mcptrace/schema"
)

// Cancellation against the log's own clock. Whether a response came after
// the client's notifications/cancelled (late_response) is decided on the
// times the log gives each message (schema.Message.At: when the cancel was
// sent, when the response arrived), not on the order of the records: a
// POST's stream is written when it ends, after the cancel sent meanwhile,
// while a HAR sorted by start time lists the stream first.
//
// An exchange answered on its own POST's event stream (the case of a client
// that cancels and keeps the stream open) a second or more after its
// request (minHeldAnswer), not yet cancelled, whose request could still be
// cancelled by notification (a client request other than initialize,
// before 2026-07-28), is held open: a cancel sent before the
// response may still be read. It is settled by a cancel for it, by the
// first record of its log that started after the response arrived (in a
// log ordered by start or by end time, nothing sent before that instant can
// come later: records of its own conversation as they are added, those of
// the log's other conversations through the Marks, which carry every log's
// newest record start), or when its conversation ends. Stdio frames are
// logged in the order they pass, and a JSON body is not held (a cancel
// logged after it is not seen as before it); neither is ever held.

// minHeldAnswer is how long after its request an answer must come to be
// held for a cancel: a cancel takes a person or a timeout, which take
// seconds, and holding every answer would delay every row of a quiet log
// until its next record.
const minHeldAnswer = time.Second

// stampSent dates the messages an observation sent (request bodies, stdio
// frames, the request and notifications of a record that pairs them) that
// the decoder left undated: at the observation's time.
func stampSent(o *schema.Observation) {
	for i := range o.Messages {
		m := &o.Messages[i]
		sent := m.Where == schema.InRequestBody || m.Where == schema.InStdio ||
			(m.Where == schema.InRecord && (m.Kind == schema.MsgRequest || m.Kind == schema.MsgNotification))
		if m.At.IsZero() && sent {
			m.At = o.Time
		}
	}
}

// ownResponse is the response that settles an exchange whose attempt has
// just been added: the attempt's own, or one paired before the request was
// seen.
func ownResponse(ex *exchange, at *classify.Attempt) *schema.Message {
	for i := range at.Messages {
		if m := &at.Messages[i]; m.Kind == schema.MsgResponse && classify.SameID(m.ID, ex.id) {
			return m
		}
	}
	return ex.response
}

// answered settles an exchange whose response (resp; nil when a body that
// is not a response decides it) has just been found. cancelFirst says the
// cancel, if any, was logged before the record carrying the response: the
// order that decides when the log does not date both.
func (c *Correlator) answered(cv *conversation, ex *exchange, o *schema.Observation, resp *schema.Message, cancelFirst bool) {
	var at time.Time
	if resp != nil {
		at = resp.At
	}
	switch {
	case ex.held:
		// Another attempt of a held exchange (the same id POSTed again
		// while it was open): the last attempt's response decides.
		if !at.IsZero() {
			ex.holding().respAt = at
		}
		return
	case ex.cancelled:
		switch {
		case at.IsZero() || ex.holdRO().cancelAt.IsZero() || at.Equal(ex.holdRO().cancelAt):
			ex.lateResponse = cancelFirst
		case ex.holdRO().cancelAt.Before(at):
			ex.lateResponse = true
		default:
			// The cancel was sent after the response had arrived: like a
			// cancel of a finished request, it does not count.
			ex.cancelled = false
			if ex.holdPart != nil {
				ex.holdPart.cancelAt = time.Time{}
			}
		}
	case resp != nil && resp.Where == schema.InPostStream && !at.IsZero() && at.Sub(o.Time) >= minHeldAnswer && cv.cancellable(ex):
		h := ex.holding()
		ex.held, h.respAt, h.heldLog = true, at, logOf(o)
		r := cv.more()
		r.settling = append(r.settling, ex)
		if c.holding == nil {
			c.holding = map[*conversation]struct{}{}
		}
		c.holding[cv] = struct{}{}
		return
	}
	c.finish(cv, ex)
}

// cancellable says whether a notifications/cancelled for the exchange may
// still be logged: a client request other than initialize (which must not
// be cancelled), before 2026-07-28 (where HTTP has no cancel notification:
// closing the stream is the cancellation).
func (cv *conversation) cancellable(ex *exchange) bool {
	return !ex.fromServer && ex.method() != "initialize" && !classify.Stateless(ex.versionOf(cv))
}

// cancel marks an open exchange cancelled by a notification sent at t. A
// held exchange is settled: its response is late when it arrived after t.
// A cancel sent after a held exchange's response arrived does not count
// (as for a finished request); the exchange stays held.
func (c *Correlator) cancel(cv *conversation, ex *exchange, t time.Time) {
	if !ex.held {
		if cancelAt := ex.holdRO().cancelAt; !ex.cancelled || cancelAt.IsZero() || (!t.IsZero() && t.Before(cancelAt)) {
			if !t.IsZero() || ex.holdPart != nil {
				ex.holding().cancelAt = t // the first cancel counts
			}
		}
		ex.cancelled = true
		return
	}
	h := ex.holding() // held: made already
	if t.IsZero() || t.After(h.respAt) {
		return
	}
	ex.cancelled, h.cancelAt = true, t
	ex.lateResponse = t.Before(h.respAt)
	c.finish(cv, ex)
}

// release settles the held exchanges of a conversation whose response
// arrived before t, the start of the record of it being added: no cancel
// sent before their response can come after it.
func (c *Correlator) release(cv *conversation, o *schema.Observation) {
	if cv.rare == nil || len(cv.rare.settling) == 0 {
		return
	}
	lk := logOf(o)
	c.releaseAt(cv, func(l logKey) time.Time {
		if l == lk {
			return o.Time
		}
		return time.Time{}
	})
}

// noteCancelAt remembers when a cancel logged before its request was sent.
func (cv *conversation) noteCancelAt(k dirKey, t time.Time) {
	r := cv.more()
	if r.cancelAt == nil {
		r.cancelAt = map[dirKey][]time.Time{}
	}
	r.cancelAt[k] = append(r.cancelAt[k], t)
}

// takeCancelAt hands out the time of the oldest cancel of k noted so far.
func (cv *conversation) takeCancelAt(k dirKey) time.Time {
	ts := cv.ro().cancelAt[k]
	if len(ts) == 0 {
		return time.Time{}
	}
	t := ts[0]
	if len(ts) == 1 {
		delete(cv.rare.cancelAt, k)
	} else {
		cv.rare.cancelAt[k] = ts[1:]
	}
	return t
}

// releaseAt settles the held exchanges of a conversation that their log has
// passed: their response arrived before now(log), a record start of it.
func (c *Correlator) releaseAt(cv *conversation, now func(logKey) time.Time) {
	if cv.rare == nil {
		delete(c.holding, cv)
		return
	}
	r := cv.rare
	keep := r.settling[:0]
	for _, ex := range r.settling {
		switch {
		case ex.final:
		case now(ex.holdRO().heldLog).After(ex.holdRO().respAt):
			c.finish(cv, ex)
		default:
			keep = append(keep, ex)
		}
	}
	clear(r.settling[len(keep):])
	r.settling = keep
	if len(keep) == 0 {
		delete(c.holding, cv)
	}
}

// releaseHeld settles what the Marks say the log has passed.
func (c *Correlator) releaseHeld(cv *conversation) {
	c.releaseAt(cv, c.clocks.start)
}

// heldStep is one conversation's turn in advance: close it, or release its
// held exchanges.
type heldStep struct {
	cv    *conversation
	close bool
}

// heldDue takes in the Mark's record starts and returns the conversations
// advance closes (closing, sorted by first Seq) merged, in first-Seq
// order, with those that are not closing but hold exchanges their log has
// now passed, so that the keys of what they emit keep increasing.
func (c *Correlator) heldDue(m *Mark, closing []*conversation) []heldStep {
	c.clocks.applyStarts(m)
	var due []*conversation
	if len(m.starts) > 0 && len(c.holding) > 0 {
		closes := make(map[*conversation]bool, len(closing))
		for _, cv := range closing {
			closes[cv] = true
		}
		for cv := range c.holding {
			if c.convs[cv.key] != cv {
				delete(c.holding, cv) // closed meanwhile
				continue
			}
			if closes[cv] {
				continue
			}
			open := false
			for _, ex := range cv.ro().settling {
				if ex.final {
					continue
				}
				open = true
				if h := ex.holdRO(); c.clocks.start(h.heldLog).After(h.respAt) {
					due = append(due, cv)
					break
				}
			}
			if !open {
				if cv.rare != nil {
					cv.rare.settling = nil // settled by their cancels
				}
				delete(c.holding, cv)
			}
		}
		slices.SortFunc(due, func(a, b *conversation) int { return cmpInt64(a.first, b.first) })
	}
	steps := make([]heldStep, 0, len(closing)+len(due))
	i, j := 0, 0
	for i < len(closing) || j < len(due) {
		if j == len(due) || (i < len(closing) && closing[i].first < due[j].first) {
			steps = append(steps, heldStep{closing[i], true})
			i++
		} else {
			steps = append(steps, heldStep{due[j], false})
			j++
		}
	}
	return steps
}

// observeStart counts a record's start in its log's newest start.
func (k *Clock) observeStart(lk logKey, t time.Time) {
	if k.starts == nil {
		k.starts, k.startsMoved = map[logKey]time.Time{}, map[logKey]bool{}
	}
	if prev, ok := k.starts[lk]; !ok || t.After(prev) {
		k.starts[lk] = t
		k.startsMoved[lk] = true
	}
}

// passStart moves a quiet log's newest start by d, as Pass moves its
// time: an answer held for a cancel is written once its stream has been
// quiet past it.
func (k *Clock) passStart(lk logKey, d time.Duration) {
	if t, ok := k.starts[lk]; ok {
		k.starts[lk] = t.Add(d)
		k.startsMoved[lk] = true
	}
}

// markStarts lists, sorted by log, the logs whose newest start moved since
// the last Mark.
func (k *Clock) markStarts() []logTime {
	if len(k.startsMoved) == 0 {
		return nil
	}
	out := make([]logTime, 0, len(k.startsMoved))
	for lk := range k.startsMoved {
		out = append(out, logTime{log: lk, now: k.starts[lk]})
	}
	slices.SortFunc(out, func(a, b logTime) int { return a.log.compare(b.log) })
	clear(k.startsMoved)
	return out
}

// applyStarts takes in a Mark's record starts.
func (lc *logClocks) applyStarts(m *Mark) {
	for _, lt := range m.starts {
		if c := lc.get(lt.log); lt.now.After(c.start) {
			c.start = lt.now
		}
	}
}

// start is the newest record start of a log (zero when unknown).
func (lc *logClocks) start(k logKey) time.Time {
	if c := lc.logs[k]; c != nil {
		return c.start
	}
	return time.Time{}
}
