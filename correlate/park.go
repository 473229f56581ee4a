package correlate

import (
	"reflect"
	"time"

	"mcptrace/schema"
)

// A request still waiting once the observation that attached it is done
// (never answered, answered 202, a cut stream) keeps its row parked: the
// few columns a row has before it is judged, in a parkedRow of 384
// bytes instead of the 1,008-byte rowBox (issue 11: an open conversation
// takes at most 2 KiB). The row is built again, column for column the
// same, the first time it is needed (getRow): another attempt, its
// answer, its judgement. A row with any other column set is not parked.

// parkedRow is a row's columns before it is judged.
type parkedRow struct {
	// Its exchange_id, method and started_at are its exchange's (exID,
	// method, startedAt): a row whose are not is not parked.
	source, sides, initiator, transport, retryOrigin, format string
	sourceLine                                               int64
	endedAt                                                  time.Time
	httpStatuses                                             []int32 // when it does not start in its box
	arguments                                                []byte
	opt                                                      [parkedOpts]string
	optSet                                                   uint16 // which of opt the row set
	postCount                                                int32
	status1                                                  int32 // HTTPStatuses[0] when it starts in its box
	statusN                                                  int8  // -1: httpStatuses; else 0 or 1, the length of the box's
	late, idConflict, retryUnsafe                            bool
}

// The optional text columns a parked row keeps, in opt's order.
const (
	optSessionID = iota
	optJSONRPCID
	optJSONRPCIDType
	optRetryOf
	optRetryBasis
	optScenario
	optClientName
	optClientVersion
	optServerName
	optServerVersion
	optToolName
	optURL
	parkedOpts
)

// optional returns the addresses of a row's optional text columns, in
// opt's order.
func optional(r *schema.Exchange) [parkedOpts]**string {
	return [parkedOpts]**string{&r.SessionID, &r.JSONRPCID, &r.JSONRPCIDType, &r.RetryOf, &r.RetryBasis, &r.Scenario,
		&r.ClientName, &r.ClientVersion, &r.ServerName, &r.ServerVersion, &r.ToolName, &r.URL}
}

// noPark turns parking off (the package's tests compare the rows of a run
// with and without it).
var noPark bool

// checkPark makes every park verify that the row built again is the row
// parked (set by the package's tests).
var checkPark bool

// park parks the row of a waiting exchange, unless it has columns a
// parked row does not keep.
func (ex *exchange) park() {
	l := ex.exLive
	if l == nil || l.row == nil || l.parked != nil || noPark {
		return
	}
	r := l.row
	if r.ExchangeID != ex.exID || r.Method != ex.method || r.StartedAt != ex.startedAt {
		return
	}
	p := &parkedRow{source: r.Source, sides: r.Sides, initiator: r.Initiator, transport: r.Transport,
		retryOrigin: r.RetryOrigin, format: r.Format, sourceLine: r.SourceLine,
		endedAt: r.EndedAt, arguments: r.Arguments, postCount: r.PostCount, late: r.Late, idConflict: r.IDConflict, retryUnsafe: r.RetryUnsafe}
	switch s := r.HTTPStatuses; {
	case len(s) <= 1 && cap(s) == 1: // in its box (attach): a longer one has an array of its own
		p.statusN = int8(len(s))
		if len(s) == 1 {
			p.status1 = s[0]
		}
	default:
		if s == nil {
			return // a row's statuses are never nil before it is judged
		}
		p.httpStatuses, p.statusN = s, -1
	}
	for i, f := range optional(r) {
		if *f != nil {
			p.opt[i] = **f
			p.optSet |= 1 << i
		}
	}
	// Every other column must be unset.
	rest := *r
	rest.ExchangeID, rest.Source, rest.Sides, rest.Initiator, rest.Transport = "", "", "", "", ""
	rest.Method, rest.RetryOrigin, rest.Format, rest.SourceLine = "", "", "", 0
	rest.StartedAt, rest.EndedAt, rest.Arguments, rest.PostCount = time.Time{}, time.Time{}, nil, 0
	rest.Late, rest.IDConflict, rest.RetryUnsafe, rest.HTTPStatuses = false, false, false, nil
	for _, f := range optional(&rest) {
		*f = nil
	}
	if !reflect.ValueOf(&rest).Elem().IsZero() {
		return
	}
	if checkPark {
		back := p.build(ex)
		if !reflect.DeepEqual(&back.row, r) {
			panic("correlate: a parked row is not the row parked")
		}
	}
	l.parked, l.row = p, nil
}

// build makes a row box from the parked row of ex.
func (p *parkedRow) build(ex *exchange) *rowBox {
	box := &rowBox{}
	r := &box.row
	r.ExchangeID, r.Source, r.Sides, r.Initiator, r.Transport = ex.exID, p.source, p.sides, p.initiator, p.transport
	r.Method, r.RetryOrigin, r.Format, r.SourceLine = ex.method, p.retryOrigin, p.format, p.sourceLine
	r.StartedAt, r.EndedAt, r.Arguments, r.PostCount = ex.startedAt, p.endedAt, p.arguments, p.postCount
	r.Late, r.IDConflict, r.RetryUnsafe = p.late, p.idConflict, p.retryUnsafe
	if p.statusN < 0 {
		r.HTTPStatuses = p.httpStatuses
	} else {
		box.statuses[0] = p.status1
		r.HTTPStatuses = box.statuses[:p.statusN:1]
	}
	for i, f := range optional(r) {
		if p.optSet&(1<<i) != 0 {
			*f = box.put(p.opt[i])
		}
	}
	return box
}

// parkAfter is how many observations after the one that attached it a
// request still waiting has its row parked: most that wait are answered
// soon after (a response stream, a GET stream), and they are left as they
// are.
const parkAfter = 1024

// parkWaiting parks the rows of the requests that have waited parkAfter
// observations; those settled since are passed over.
func (c *Correlator) parkWaiting() {
	for c.waitHead < len(c.waiting) {
		ex := c.waiting[c.waitHead]
		if ex.ref.seq > c.seq-parkAfter {
			break
		}
		ex.park()
		c.waiting[c.waitHead] = nil
		c.waitHead++
	}
	if c.waitHead == len(c.waiting) {
		c.waiting, c.waitHead = c.waiting[:0], 0
	} else if c.waitHead >= 1024 && 2*c.waitHead >= len(c.waiting) {
		n := copy(c.waiting, c.waiting[c.waitHead:])
		clear(c.waiting[n:])
		c.waiting, c.waitHead = c.waiting[:n], 0
	}
}

// getRow is the exchange's row, built again if it was parked.
func (ex *exchange) getRow() *schema.Exchange {
	if l := ex.exLive; l.row == nil && l.parked != nil {
		l.row, l.parked = &l.parked.build(ex).row, nil
	}
	return ex.row
}
