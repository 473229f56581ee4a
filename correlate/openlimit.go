package correlate

import (
	"cmp"
	"strconv"
)

// The open-conversation limit (Correlator.MaxOpen, ingest
// -max-open-conversations): each open conversation holds its open
// exchanges, indexes and remembered requests, so an input that opens
// conversations without ever ending them (no DELETE, no idle gap in its
// own time) would grow memory without bound. Past the limit, the least
// recently active conversation (the one whose latest record is oldest in
// input order) is ended early, as the idle timeout ends one: what it has
// open is judged on what came so far, its rows marked hold_cut and their
// reason naming the limit, and its later records, if any, start a new
// conversation. Nothing is quarantined: every record stays an observation
// of some conversation. The order is a list threaded through the
// conversations (lruPrev, lruNext), most recent first, moved on every
// record: O(1) per record and per eviction.

// lruTouch makes cv the most recently active conversation.
func (c *Correlator) lruTouch(cv *conversation) {
	if c.lruHead == cv {
		return
	}
	c.lruUnlink(cv)
	cv.lruNext = c.lruHead
	if c.lruHead != nil {
		c.lruHead.lruPrev = cv
	}
	c.lruHead = cv
	if c.lruTail == nil {
		c.lruTail = cv
	}
}

// lruUnlink takes cv out of the order (a closed conversation).
func (c *Correlator) lruUnlink(cv *conversation) {
	if cv.lruPrev != nil {
		cv.lruPrev.lruNext = cv.lruNext
	} else if c.lruHead == cv {
		c.lruHead = cv.lruNext
	}
	if cv.lruNext != nil {
		cv.lruNext.lruPrev = cv.lruPrev
	} else if c.lruTail == cv {
		c.lruTail = cv.lruPrev
	}
	cv.lruPrev, cv.lruNext = nil, nil
}

// evictForNew ends the least recently active conversations until a new
// one fits within MaxOpen.
func (c *Correlator) evictForNew() {
	for c.MaxOpen > 0 && len(c.convs) >= c.MaxOpen && c.lruTail != nil {
		cv := c.lruTail
		cv.cut = true
		c.evicting = true
		c.close(cv)
		c.evicting = false
		c.Stats.Evicted++
	}
}

// evictedReason is what the reason of a row judged because its
// conversation was ended at the limit ends with.
func (c *Correlator) evictedReason() string {
	return "; conversation ended early: more than -max-open-conversations " + strconv.Itoa(cmp.Or(c.MaxOpenTotal, c.MaxOpen)) + " open"
}
