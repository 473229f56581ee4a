package correlate

import (
	"reflect"
	"strings"
	"time"

	"mcptrace/schema"
)

// A request still waiting once the observation that attached it is done
// (never answered, answered 202, a cut stream) keeps its row parked: the
// few columns a row has before it is judged, in a parkedRow of 128 bytes
// instead of the 1,008-byte rowBox (issue 11: an open conversation takes
// at most 2 KiB). Its texts that repeat across rows (source, format,
// transport, client, server, tool, URL, ...) are kept as numbers into its
// correlator's table of them (texts), its session as a flag when it is
// its conversation's (another session, and a retry_of, in a part of its
// own), its id as its exchange's. The row is built again, column for column the same,
// the first time it is needed (getRow): another attempt, its answer, its
// judgement. A row with any other column set is not parked, nor one with
// a text new to a full table.

// parkedRow is a row's columns before it is judged.
type parkedRow struct {
	// Its exchange_id, method and started_at are its exchange's (exID,
	// method, startedAt): a row whose are not is not parked.
	tab        *texts // what txt numbers
	sourceLine int64
	// Its ended_at, in UTC, when a stamp holds it as it is (a parkedRow
	// of 112 bytes, not 128); else in its more (wideEnd).
	ended stamp
	// The texts that are not in the table: its session when it is not
	// its conversation's (convSession), its retry_of. Its id is its
	// exchange's (a row whose is not is not parked).
	more                                       *parkedMore
	arguments                                  []byte
	httpStatuses                               *[]int32 // when it does not start in its box
	txt                                        [parkedTexts]uint16
	postCount                                  int32
	status1                                    int32  // HTTPStatuses[0] when it starts in its box
	optSet                                     uint16 // which optional columns the row set (opt's order)
	statusN                                    int8   // -1: httpStatuses; else 0 or 1, the length of the box's
	late, idConflict, retryUnsafe, convSession bool
	wideEnd                                    bool
}

// parkedMore is what few parked rows have: a session that is not their
// conversation's, a retry_of, an ended_at a stamp does not hold.
type parkedMore struct {
	session, retryOf string
	endedAt          time.Time
}

// setEnded keeps t as its ended_at.
func (p *parkedRow) setEnded(t time.Time) {
	if s, ok := toStamp(t); ok && s.utc() == t {
		p.ended = s
		return
	}
	p.wideEnd = true
	p.ensure().endedAt = t
}

// endedAt is its ended_at.
func (p *parkedRow) endedAt() time.Time {
	if p.wideEnd {
		return p.more.endedAt
	}
	return p.ended.utc()
}

// ensure is p's more, made when first needed.
func (p *parkedRow) ensure() *parkedMore {
	if p.more == nil {
		p.more = &parkedMore{}
	}
	return p.more
}

// get is p's more for reading.
func (p *parkedRow) get() parkedMore {
	if p.more == nil {
		return parkedMore{}
	}
	return *p.more
}

// The optional text columns of a row, in optional's order.
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

// The texts a parked row keeps in its table, in txt's order: the row's
// required ones, then the optional ones from optJSONRPCIDType on but
// optRetryOf (txtOf).
const (
	txtSource = iota
	txtSides
	txtInitiator
	txtTransport
	txtRetryOrigin
	txtFormat
	txtOpt      // optJSONRPCIDType's; the next ones follow txtOf
	parkedTexts = txtOpt + parkedOpts - 3
)

// txtOf is where txt keeps optional column i (optJSONRPCIDType and later,
// but optRetryOf).
func txtOf(i int) int {
	if i > optRetryOf {
		return txtOpt + i - 3
	}
	return txtOpt // optJSONRPCIDType
}

// optional returns the addresses of a row's optional text columns, in
// opt's order.
func optional(r *schema.Exchange) [parkedOpts]**string {
	return [parkedOpts]**string{&r.SessionID, &r.JSONRPCID, &r.JSONRPCIDType, &r.RetryOf, &r.RetryBasis, &r.Scenario,
		&r.ClientName, &r.ClientVersion, &r.ServerName, &r.ServerVersion, &r.ToolName, &r.URL}
}

// texts numbers the texts parked rows keep: each distinct text once, for
// the whole run (they are the few values of a column that repeat across
// rows: files, formats, transports, clients, servers, tools, URLs). It is
// bounded, in entries and bytes; past the bound a row with a text not in
// it is not parked.
type texts struct {
	m     map[string]uint16
	list  []string // list[0] is ""
	bytes int
}

const (
	textsMax      = 1 << 16  // entries (numbered in a uint16: list[0] is "")
	textsMaxBytes = 16 << 20 // bytes of text
	textMaxLen    = 2048     // a longer text is not numbered
)

// number is s's number in the table, added when there is room.
func (t *texts) number(s string) (uint16, bool) {
	if s == "" {
		return 0, true
	}
	if n, ok := t.m[s]; ok {
		return n, true
	}
	if len(s) > textMaxLen || len(t.list) >= textsMax || t.bytes+len(s) > textsMaxBytes {
		return 0, false
	}
	if t.m == nil {
		t.m = make(map[string]uint16, 64)
		t.list = append(t.list, "")
	}
	v := strings.Clone(s)
	n := uint16(len(t.list))
	t.list = append(t.list, v)
	t.m[v] = n
	t.bytes += len(v)
	return n, true
}

// noPark turns parking off (the package's tests compare the rows of a run
// with and without it).
var noPark bool

// checkPark makes every park verify that the row built again is the row
// parked (set by the package's tests).
var checkPark bool

// park parks the row of a waiting exchange, unless it has columns a
// parked row does not keep, or texts the table has no room for.
func (ex *exchange) park(tab *texts) {
	l := ex.exLive
	if l == nil || l.row == nil || l.parked != nil || noPark {
		return
	}
	r := l.row
	if r.ExchangeID != ex.exID || r.Method != ex.method() || r.StartedAt != ex.startedAt {
		return
	}
	p := &parkedRow{tab: tab, sourceLine: r.SourceLine, arguments: r.Arguments, postCount: r.PostCount,
		late: r.Late, idConflict: r.IDConflict, retryUnsafe: r.RetryUnsafe}
	p.setEnded(r.EndedAt)
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
		p.httpStatuses, p.statusN = &s, -1
	}
	ok := true
	num := func(at int, s string) {
		n, in := tab.number(s)
		p.txt[at] = n
		ok = ok && in
	}
	num(txtSource, r.Source)
	num(txtSides, r.Sides)
	num(txtInitiator, r.Initiator)
	num(txtTransport, r.Transport)
	num(txtRetryOrigin, r.RetryOrigin)
	num(txtFormat, r.Format)
	for i, f := range optional(r) {
		if *f == nil {
			continue
		}
		p.optSet |= 1 << i
		switch s := **f; i {
		case optSessionID:
			if s == ex.cv.session() {
				p.convSession = true
			} else {
				p.ensure().session = s
			}
		case optJSONRPCID:
			if s != ex.id.Text {
				return // its id is its exchange's
			}
		case optRetryOf:
			p.ensure().retryOf = s
		default:
			num(txtOf(i), s)
		}
	}
	if !ok {
		return
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
	t := p.tab.list
	r.ExchangeID, r.Source, r.Sides = ex.exID, t[p.txt[txtSource]], t[p.txt[txtSides]]
	r.Initiator, r.Transport = t[p.txt[txtInitiator]], t[p.txt[txtTransport]]
	r.Method, r.RetryOrigin, r.Format, r.SourceLine = ex.method(), t[p.txt[txtRetryOrigin]], t[p.txt[txtFormat]], p.sourceLine
	r.StartedAt, r.EndedAt, r.Arguments, r.PostCount = ex.startedAt, p.endedAt(), p.arguments, p.postCount
	r.Late, r.IDConflict, r.RetryUnsafe = p.late, p.idConflict, p.retryUnsafe
	if p.statusN < 0 {
		r.HTTPStatuses = *p.httpStatuses
	} else {
		box.statuses[0] = p.status1
		r.HTTPStatuses = box.statuses[:p.statusN:1]
	}
	for i, f := range optional(r) {
		if p.optSet&(1<<i) == 0 {
			continue
		}
		var s string
		switch i {
		case optSessionID:
			s = p.get().session
			if p.convSession {
				s = ex.cv.session()
			}
		case optJSONRPCID:
			s = ex.id.Text
		case optRetryOf:
			s = p.get().retryOf
		default:
			s = t[p.txt[txtOf(i)]]
		}
		*f = box.put(s)
	}
	return box
}

// parkAfter is how many observations after the one that attached it a
// request still waiting has its row parked: most that wait are answered
// soon after (a response stream, a GET stream), and they are left as they
// are.
var parkAfter int64 = 1024

// parkWaiting parks the rows of the requests that have waited parkAfter
// observations; those settled since are passed over.
func (c *Correlator) parkWaiting() {
	for c.waitHead < len(c.waiting) {
		ex := c.waiting[c.waitHead]
		if ex.ref.seq > c.seq-parkAfter {
			break
		}
		ex.park(&c.texts)
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

// tool is the tool a tools/call of a live exchange calls, what retry
// safety looks up among the tools: its row's tool_name, read from the
// parked row without building it again.
func (ex *exchange) tool() string {
	if ex.method() != "tools/call" {
		return ""
	}
	l := ex.exLive
	if l.row != nil {
		if l.row.ToolName != nil {
			return *l.row.ToolName
		}
		return ""
	}
	if p := l.parked; p != nil && p.optSet&(1<<optToolName) != 0 {
		return p.tab.list[p.txt[txtOf(optToolName)]]
	}
	return ""
}

// getRow is the exchange's row, built again if it was parked.
func (ex *exchange) getRow() *schema.Exchange {
	if l := ex.exLive; l.row == nil && l.parked != nil {
		l.row, l.parked = &l.parked.build(ex).row, nil
	}
	return ex.row
}
