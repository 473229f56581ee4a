package decode

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"mcptrace/internal/jsonstr"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"mcptrace/schema"
)

// WireDecoder decodes wire-log lines in one pass each (see "One pass" in
// the package documentation), with scratch memory of its own that it
// reuses from line to line. It is not safe for concurrent use: give each
// goroutine its own (WireLine takes one from a pool).
type WireDecoder struct {
	// Fold folds each run of notifications of one method on an event
	// stream (other than notifications/cancelled) into its first (schema.Message.Folded), so
	// that a stream of a million progress events is not a million
	// messages. Whoever reads the observations must count Folded.
	Fold bool
	// Limits are the record limits (recordlimits.go); zero fields are the
	// defaults. A line past one is an error (ReasonBodyTooLarge,
	// ReasonTooManyEvents), as the general decoder says it.
	Limits Limits

	over       *LineError // the record limit the line being read went past
	overEvents bool       // the stream being read has more events than the limit
	s          scanner
	w          wireScan
	r          msgReader
	msgs       []schema.Message
	rpcs       []schema.RPC
	times      []time.Time
	// Event-stream scratch: the current line, the event's data, type and
	// id buffers, the stream's last event id.
	line, data, typ, id, held, tmp []byte
	unesc                          []byte // a stream's literal, unescaped a piece at a time when the scanner did not decode it (ssefast.go)
	// The values of the body strings (request, response, stdio line),
	// written by the scanner as it validates them (scanBody).
	dec   [3][]byte
	names map[string]string
	// recent is a cache in front of names, one string a slot (recentSlot):
	// most strings interned are the few a log repeats on every line
	// (client and server names and versions, methods), found here by a
	// hash of a few bytes and one comparison instead of a map lookup.
	recent [1 << recentBits]string
}

const recentBits = 8

// NewWireDecoder returns a decoder that does not fold notifications.
func NewWireDecoder() *WireDecoder {
	d := &WireDecoder{}
	d.r.intern = d.intern
	return d
}

var wirePool = sync.Pool{New: func() any { return NewWireDecoder() }}

// maxScratch: scratch grown past this by one huge line is dropped rather
// than kept for the next.
const maxScratch = 1 << 20

func (d *WireDecoder) trim() {
	for _, b := range []*[]byte{&d.line, &d.data, &d.typ, &d.id, &d.held, &d.tmp, &d.dec[0], &d.dec[1], &d.dec[2]} {
		if cap(*b) > maxScratch {
			*b = nil
		}
	}
	if cap(d.msgs) > 4096 {
		d.msgs = nil
	}
	if cap(d.rpcs) > 4096 {
		d.rpcs = nil
	}
	if cap(d.times) > 4096 {
		d.times = nil
	}
}

const (
	internMax = 128  // longer strings get a copy of their own, not a table entry
	internCap = 8192 // entries before the table starts again
)

// intern gives b memory of its own, shared with every earlier equal string
// (session ids, URLs, client names, ids and methods repeat from line to
// line).
func (d *WireDecoder) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	slot := &d.recent[recentSlot(b)]
	if *slot == string(b) {
		return *slot
	}
	s, ok := d.names[string(b)]
	if !ok {
		if d.names == nil {
			d.names = make(map[string]string, 256)
		} else if len(d.names) >= internCap {
			clear(d.names)
		}
		s = string(b)
		d.names[s] = s
	}
	*slot = s
	return s
}

// recentSlot is where b goes in WireDecoder.recent: a hash of its length
// and its first and last eight bytes.
func recentSlot(b []byte) int {
	n := len(b)
	x := uint64(n)
	if n >= 8 {
		x ^= binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	return int((x * 0x9E3779B97F4A7C15) >> (64 - recentBits))
}

func (d *WireDecoder) internStr(s string) string {
	if len(s) > internMax {
		return strings.Clone(s)
	}
	return d.intern(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// text is the string value t of the line, with memory of its own.
func (d *WireDecoder) text(t tok) string {
	if t.kind != schema.JSONString {
		return ""
	}
	lit := d.s.b[t.start+1 : t.end-1]
	if !t.esc {
		return d.intern(lit)
	}
	d.tmp = jsonstr.AppendUnescaped(d.tmp[:0], lit)
	return d.intern(d.tmp)
}

// wireScan is what the one pass over a line recorded: the members every
// later step reads, as positions in the line.
type wireScan struct {
	format, ts, endTS, side, transport, conn, session, version, trigger, scenario tok
	clientName, clientVersion, serverName, serverVersion                          tok
	http, stdio                                                                   tok
	req, resp, fail                                                               tok
	method, url, reqBody                                                          tok
	reqHdr                                                                        [3]tok // Last-Event-ID, Mcp-Session-Id, MCP-Protocol-Version
	status, ctype, streamEnd, respBody, eventTimes                                tok
	respHdr                                                                       [3]tok // Content-Type, Retry-After, Mcp-Session-Id
	failKind, failMsg                                                             tok
	dir, stdioLine                                                                tok
	// The values of reqBody, respBody and stdioLine when strings (scanBody).
	reqDec, respDec, lineDec []byte
}

var (
	reqHeaders  = [3]string{"Last-Event-ID", "Mcp-Session-Id", "MCP-Protocol-Version"}
	respHeaders = [3]string{"Content-Type", "Retry-After", "Mcp-Session-Id"}
)

// Line decodes one line of the mcptrace wire log, as WireLine does.
func (d *WireDecoder) Line(line []byte, pos schema.Position) (*schema.Observation, error) {
	defer d.trim()
	d.s = scanner{b: line, utf8: true}
	d.w = wireScan{}
	d.times = d.times[:0]
	d.over, d.overEvents = nil, false
	if d.scanLine() {
		if o, ok := d.build(pos); ok {
			if d.over != nil {
				// Past a record limit: what was built is dropped.
				err := d.over
				d.over = nil
				return nil, err
			}
			return o, nil
		}
	}
	d.over = nil
	// Anything the one pass does not settle (an invalid line, a value out
	// of the ordinary, a member given twice) is decoded the general way,
	// which also says why a line is quarantined.
	o, err := wireLineGJSON(line, pos, d.Limits)
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// The top-level members of a wire record.
const (
	wFormat = iota
	wTS
	wEndTS
	wSide
	wTransport
	wClient
	wServer
	wConn
	wSession
	wVersion
	wHTTP
	wStdio
	wTrigger
	wScenario
)

func topMember(k []byte) int {
	switch string(k) {
	case "mcptrace":
		return wFormat
	case "ts":
		return wTS
	case "end_ts":
		return wEndTS
	case "side":
		return wSide
	case "transport":
		return wTransport
	case "client":
		return wClient
	case "server":
		return wServer
	case "connection":
		return wConn
	case "session_id":
		return wSession
	case "protocol_version":
		return wVersion
	case "http":
		return wHTTP
	case "stdio":
		return wStdio
	case "trigger":
		return wTrigger
	case "scenario":
		return wScenario
	}
	return -1
}

// scanLine validates the line and records its members. False: the line is
// invalid, or holds something the general way must decide.
func (d *WireDecoder) scanLine() bool {
	s, w := &d.s, &d.w
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.enter()
	var seen uint32
	for n := 0; ; n++ {
		key, esc, done, ok := s.key(n)
		if !ok || esc {
			return false
		}
		if done {
			break
		}
		f := topMember(key)
		if f < 0 {
			if _, ok := s.value(); !ok {
				return false
			}
			continue
		}
		if seen&(1<<f) != 0 {
			return false // the last one counts there: the general way
		}
		seen |= 1 << f
		c := s.b[s.i]
		start := s.i
		switch f {
		case wClient, wServer:
			if c != '{' {
				return false
			}
			nm, ver := &w.clientName, &w.clientVersion
			if f == wServer {
				nm, ver = &w.serverName, &w.serverVersion
			}
			ok = d.members(implKeys, func(i int) bool {
				if i == 0 {
					return d.scanTo(nm)
				}
				return d.scanTo(ver)
			})
		case wHTTP:
			if c != '{' {
				return false
			}
			ok = d.members(httpKeys, d.scanHTTPMember)
			w.http = tok{kind: schema.JSONObject, start: start, end: s.i}
		case wStdio:
			if c != '{' {
				return false
			}
			ok = d.members(stdioKeys, func(i int) bool {
				if i == 0 {
					return d.scanTo(&w.dir)
				}
				return d.scanBody(&w.stdioLine, &w.lineDec, 2)
			})
			w.stdio = tok{kind: schema.JSONObject, start: start, end: s.i}
		default:
			ok = d.scanTo(w.topTok(f))
		}
		if !ok {
			return false
		}
	}
	s.ws()
	return s.i == len(s.b)
}

func (w *wireScan) topTok(f int) *tok {
	switch f {
	case wFormat:
		return &w.format
	case wTS:
		return &w.ts
	case wEndTS:
		return &w.endTS
	case wSide:
		return &w.side
	case wTransport:
		return &w.transport
	case wConn:
		return &w.conn
	case wSession:
		return &w.session
	case wVersion:
		return &w.version
	case wTrigger:
		return &w.trigger
	}
	return &w.scenario
}

// scanTo scans the value at the scanner's position into *t.
func (d *WireDecoder) scanTo(t *tok) bool {
	v, ok := d.s.value()
	*t = v
	return ok
}

// scanBody is scanTo for a body: a string's value is written to d.dec[k]
// in the same pass that validates it (scanner.strInto), and *dec is it.
// Past scanDecodeMax bytes of line left, where scratch that size would
// cost more memory than it saves work, *dec stays nil and the body is
// unescaped from its literal later, as before (bodyMessages, stream).
func (d *WireDecoder) scanBody(t *tok, dec *[]byte, k int) bool {
	s := &d.s
	if s.i >= len(s.b) || s.b[s.i] != '"' || len(s.b)-s.i > scanDecodeMax {
		return d.scanTo(t)
	}
	buf := d.dec[k]
	if cap(buf) < len(s.b)-s.i {
		buf = make([]byte, len(s.b)-s.i)
		d.dec[k] = buf
	}
	start := s.i
	n, ok := s.strInto(buf[:cap(buf)])
	*t = tok{kind: schema.JSONString, start: start, end: s.i, esc: s.esc}
	*dec = buf[:n]
	return ok
}

// scanDecodeMax: see scanBody (a variable for the tests of both ways).
var scanDecodeMax = maxScratch

var (
	httpKeys     = []string{"request", "response", "failure"}
	stdioKeys    = []string{"direction", "line"}
	requestKeys  = []string{"method", "url", "body", "headers"}
	responseKeys = []string{"status", "content_type", "stream_end", "body", "event_times", "headers"}
	failureKeys  = []string{"kind", "message"}
)

// members walks the object at the scanner's position as gjson's Get reads
// one: member(i) scans the value of the first member named keys[i]; every
// other value is skipped. A key with an escape stops the pass.
func (d *WireDecoder) members(keys []string, member func(i int) bool) bool {
	s := &d.s
	if !s.enter() {
		return false
	}
	var seen uint32
	for n := 0; ; n++ {
		key, esc, done, ok := s.key(n)
		if !ok || esc {
			return false
		}
		if done {
			return true
		}
		f := -1
		for i, k := range keys {
			if string(key) == k {
				f = i
				break
			}
		}
		if f >= 0 && seen&(1<<f) == 0 {
			seen |= 1 << f
			if !member(f) {
				return false
			}
			continue
		}
		if _, ok := s.value(); !ok {
			return false
		}
	}
}

func (d *WireDecoder) scanHTTPMember(i int) bool {
	s, w := &d.s, &d.w
	if s.b[s.i] != '{' {
		return false // not what a record holds: the general way says why
	}
	start := s.i
	var ok bool
	var t *tok
	switch i {
	case 0:
		t, ok = &w.req, d.members(requestKeys, d.scanRequestMember)
	case 1:
		t, ok = &w.resp, d.members(responseKeys, d.scanResponseMember)
	default:
		t, ok = &w.fail, d.members(failureKeys, d.scanFailureMember)
	}
	*t = tok{kind: schema.JSONObject, start: start, end: s.i}
	return ok
}

func (d *WireDecoder) scanRequestMember(i int) bool {
	w := &d.w
	switch i {
	case 0:
		return d.scanTo(&w.method)
	case 1:
		return d.scanTo(&w.url)
	case 2:
		return d.scanBody(&w.reqBody, &w.reqDec, 0)
	}
	return d.scanHeaders(&reqHeaders, &w.reqHdr)
}

func (d *WireDecoder) scanResponseMember(i int) bool {
	w := &d.w
	switch i {
	case 0:
		return d.scanTo(&w.status)
	case 1:
		return d.scanTo(&w.ctype)
	case 2:
		return d.scanTo(&w.streamEnd)
	case 3:
		return d.scanBody(&w.respBody, &w.respDec, 1)
	case 4:
		return d.scanTo(&w.eventTimes)
	}
	return d.scanHeaders(&respHeaders, &w.respHdr)
}

func (d *WireDecoder) scanFailureMember(i int) bool {
	if i == 0 {
		return d.scanTo(&d.w.failKind)
	}
	return d.scanTo(&d.w.failMsg)
}

// scanHeaders reads a header object for the headers named, as HeaderValue
// finds them: the first header of a name (case-insensitive), an array
// giving its first element.
func (d *WireDecoder) scanHeaders(names *[3]string, out *[3]tok) bool {
	s := &d.s
	if s.b[s.i] != '{' {
		return false
	}
	s.enter()
	for n := 0; ; n++ {
		key, esc, done, ok := s.key(n)
		if !ok || esc {
			return false
		}
		if done {
			return true
		}
		want := -1
		for i, name := range names {
			// A key shorter than the (ASCII) name cannot fold to it:
			// each of the name's letters is at least one byte of it.
			if out[i].kind == schema.JSONAbsent && len(key) >= len(name) && strings.EqualFold(bstr(key), name) {
				want = i
				break
			}
		}
		if want < 0 {
			if _, ok := s.value(); !ok {
				return false
			}
			continue
		}
		switch s.b[s.i] {
		case '"':
			t, ok := s.value()
			if !ok {
				return false
			}
			out[want] = t
		case '[':
			s.enter()
			for e := 0; ; e++ {
				done, ok := s.elem(e)
				if !ok {
					return false
				}
				if done {
					break
				}
				t, ok := s.value()
				if !ok || t.kind != schema.JSONString {
					return false
				}
				if e == 0 {
					out[want] = t
				}
			}
		default:
			return false
		}
	}
}

// isString: t is a string, or absent.
func isString(t tok) bool { return t.kind == schema.JSONString || t.kind == schema.JSONAbsent }

func (d *WireDecoder) timeOf(t tok) (time.Time, bool) {
	if t.kind != schema.JSONString || t.esc {
		return time.Time{}, false
	}
	lit := d.s.b[t.start+1 : t.end-1]
	if v, ok := utcStamp(lit); ok {
		return v, true
	}
	v, err := time.Parse(time.RFC3339Nano, bstr(lit))
	if err != nil {
		return time.Time{}, false
	}
	return v.UTC(), true
}

// utcStamp reads the common form of a wire log's timestamps,
// "2006-01-02T15:04:05Z" with up to nine digits of fraction, as
// time.Parse(time.RFC3339Nano, ...).UTC() reads it (the same Time); ok
// false for anything else, and for a day past the 28th (the month's length
// is time.Parse's to check), which the caller leaves to time.Parse.
func utcStamp(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := b[19 : len(b)-1]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		for _, c := range frac[1:] {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			nsec = nsec*10 + int(c-'0')
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	// Days since 1970-01-01 of a proleptic Gregorian date, counted in
	// 400-year eras from a year starting in March (so that February,
	// and its leap day, ends the year).
	y := year
	if month <= 2 {
		y--
	}
	era := y
	if y < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	doy := (153*((month+9)%12)+2)/5 + day - 1
	days := era*146097 + yoe*365 + yoe/4 - yoe/100 + doy - 719468
	return time.Unix(int64(days)*86400+int64(hour*3600+minute*60+sec), int64(nsec)).UTC(), true
}

// is reports whether t is the string value want.
func (d *WireDecoder) is(t tok, want string) bool {
	return t.kind == schema.JSONString && !t.esc && string(d.s.b[t.start+1:t.end-1]) == want
}

// wireObsN is one allocation for an observation, its HTTP evidence and N
// messages with their RPC values (most records have one to three).
type (
	wireObs1 struct {
		o schema.Observation
		h schema.HTTPEvidence
		m [1]schema.Message
		r [1]schema.RPC
	}
	wireObs2 struct {
		o schema.Observation
		h schema.HTTPEvidence
		m [2]schema.Message
		r [2]schema.RPC
	}
	wireObs3 struct {
		o schema.Observation
		h schema.HTTPEvidence
		m [3]schema.Message
		r [3]schema.RPC
	}
	wireObs4 struct {
		o schema.Observation
		h schema.HTTPEvidence
		m [4]schema.Message
		r [4]schema.RPC
	}
	wireObsN struct {
		o schema.Observation
		h schema.HTTPEvidence
	}
)

// place allocates an observation with room for n messages (and their RPC
// values) in one piece when n is small.
func place(n int) (*schema.Observation, *schema.HTTPEvidence, []schema.Message, []schema.RPC) {
	switch n {
	case 0:
		x := new(wireObsN)
		return &x.o, &x.h, nil, nil
	case 1:
		x := new(wireObs1)
		return &x.o, &x.h, x.m[:], x.r[:]
	case 2:
		x := new(wireObs2)
		return &x.o, &x.h, x.m[:], x.r[:]
	case 3:
		x := new(wireObs3)
		return &x.o, &x.h, x.m[:], x.r[:]
	case 4:
		x := new(wireObs4)
		return &x.o, &x.h, x.m[:], x.r[:]
	}
	x := new(wireObsN)
	return &x.o, &x.h, make([]schema.Message, n), nil
}

// build makes the observation from what scanLine recorded; false when the
// general way must decide (an error to report, a value out of the
// ordinary).
func (d *WireDecoder) build(pos schema.Position) (*schema.Observation, bool) {
	w := &d.w
	var o schema.Observation
	if !d.is(w.format, schema.WireFormat) {
		return nil, false
	}
	o.Pos = pos
	o.Format = string(FormatWire)
	var ok bool
	if o.Time, ok = d.timeOf(w.ts); !ok {
		return nil, false
	}
	if w.endTS.kind != schema.JSONAbsent {
		if o.EndTime, ok = d.timeOf(w.endTS); !ok {
			return nil, false
		}
	}
	switch {
	case d.is(w.side, "client"):
		o.Side = schema.SideClient
	case d.is(w.side, "server"):
		o.Side = schema.SideServer
	default:
		return nil, false
	}
	for _, t := range []tok{w.clientName, w.clientVersion, w.serverName, w.serverVersion, w.conn, w.session, w.version, w.trigger, w.scenario} {
		if !isString(t) {
			return nil, false
		}
	}
	o.ClientName, o.ClientVersion = d.text(w.clientName), d.text(w.clientVersion)
	o.ServerName, o.ServerVersion = d.text(w.serverName), d.text(w.serverVersion)
	o.Connection = d.text(w.conn)
	o.SessionID = d.text(w.session)
	o.ProtocolVersion = d.text(w.version)
	switch t := d.text(w.trigger); t {
	case "", schema.TriggerSDK, schema.TriggerApplication, schema.TriggerManual:
		o.Trigger = t
	default:
		return nil, false
	}
	o.Scenario = d.text(w.scenario)
	switch {
	case w.transport.kind == schema.JSONAbsent || d.is(w.transport, ""):
		o.Transport = schema.TransportStreamableHTTP
		if w.stdio.kind != schema.JSONAbsent {
			o.Transport = schema.TransportStdio
		}
	case d.is(w.transport, "streamable-http"):
		o.Transport = schema.TransportStreamableHTTP
	case d.is(w.transport, "http+sse"):
		o.Transport = schema.TransportHTTPSSE
	case d.is(w.transport, "stdio"):
		o.Transport = schema.TransportStdio
	default:
		return nil, false
	}
	d.msgs, d.rpcs = d.msgs[:0], d.rpcs[:0]
	var a arena
	var h schema.HTTPEvidence
	switch {
	case w.http.kind != schema.JSONAbsent && w.stdio.kind != schema.JSONAbsent:
		return nil, false
	case w.http.kind == schema.JSONObject:
		if !d.buildHTTP(&o, &h, &a) {
			return nil, false
		}
		if d.over != nil {
			// Past a record limit (Line reports it): nothing is kept.
			clear(d.msgs)
			clear(d.rpcs)
			return nil, true
		}
	case w.stdio.kind == schema.JSONObject:
		switch {
		case d.is(w.dir, schema.DirClientToServer):
			o.Stdio = schema.DirClientToServer
		case d.is(w.dir, schema.DirServerToClient):
			o.Stdio = schema.DirServerToClient
		case d.is(w.dir, schema.DirStderr):
			o.Stdio = schema.DirStderr
		default:
			return nil, false
		}
		if w.stdioLine.kind != schema.JSONString {
			return nil, false
		}
		if o.Stdio != schema.DirStderr {
			a.hint = bodyLen(w.stdioLine, w.lineDec)
			d.bodyMessages(&a, w.stdioLine, w.lineDec, schema.InStdio, o.Time)
		}
	default:
		return nil, false
	}
	// One allocation for the observation, its HTTP evidence, and its
	// messages and their RPC values.
	out, outH, msgs, slab := place(len(d.msgs))
	*out = o
	if w.http.kind == schema.JSONObject {
		*outH = h
		out.HTTP = outH
	}
	if len(msgs) > 0 {
		copy(msgs, d.msgs)
		out.Messages = msgs
		placeRPC(msgs, d.rpcs, slab)
	}
	clear(d.msgs)
	clear(d.rpcs)
	return out, true
}

func (d *WireDecoder) buildHTTP(o *schema.Observation, h *schema.HTTPEvidence, a *arena) bool {
	w := &d.w
	if w.req.kind != schema.JSONObject || w.method.kind != schema.JSONString || w.method.end-w.method.start < 3 || !isString(w.url) {
		return false
	}
	for _, t := range w.reqHdr {
		if !isString(t) {
			return false
		}
	}
	h.Method = strings.ToUpper(d.text(w.method))
	h.URL = d.text(w.url)
	h.LastEventID = d.text(w.reqHdr[0])
	if o.SessionID == "" {
		o.SessionID = d.text(w.reqHdr[1])
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = d.text(w.reqHdr[2])
	}
	// The arena holds the bodies as decoded (of an event stream, only the
	// messages are kept).
	a.hint = 0
	if w.reqBody.kind == schema.JSONString {
		a.hint += bodyLen(w.reqBody, w.reqDec)
	}
	switch {
	case w.resp.kind == schema.JSONObject && w.fail.kind != schema.JSONAbsent:
		return false
	case w.resp.kind == schema.JSONObject:
		if w.status.kind != schema.JSONNumber {
			return false
		}
		st := w.status.gj(d.s.b).Int()
		if st < 100 || st > 999 {
			return false
		}
		if !isString(w.ctype) || !isString(w.streamEnd) {
			return false
		}
		for _, t := range w.respHdr {
			if !isString(t) {
				return false
			}
		}
		switch end := d.text(w.streamEnd); end {
		case "", schema.StreamComplete, schema.StreamReset, schema.StreamTimeout, schema.StreamClientClosed:
			h.StreamEnd = end
		default:
			return false
		}
		if !d.eventTimes() {
			return false
		}
		h.Responded, h.Status = true, int(st)
		ct := d.text(w.ctype)
		if ct == "" {
			ct = d.text(w.respHdr[0])
		}
		h.ContentType = d.mediaType(ct)
		h.RetryAfter = d.text(w.respHdr[1])
		h.RespSessionID = d.text(w.respHdr[2])
		h.SSE = h.ContentType == "text/event-stream"
		if w.respBody.kind == schema.JSONString {
			if n := bodyLen(w.respBody, w.respDec); h.SSE {
				a.hint += min(n, arenaChunk)
			} else {
				a.hint += n
			}
		}
		if w.reqBody.kind == schema.JSONString {
			if d.overBody(w.reqBody, w.reqDec, "request") {
				return true
			}
			h.RequestHasBody = true
			d.bodyMessages(a, w.reqBody, w.reqDec, schema.InRequestBody, o.Time)
		}
		if w.respBody.kind == schema.JSONString {
			if d.overBody(w.respBody, w.respDec, "response") {
				return true
			}
			h.BodyRecorded = true
			lit := d.s.b[w.respBody.start+1 : w.respBody.end-1]
			if h.SSE {
				h.BodyEmpty = litIsSpace(lit)
				d.stream(o, h, a, lit, w.respDec)
				if d.overEvents {
					d.over = d.Limits.eventsErr(h.SSEEvents)
					return true
				}
			} else {
				h.BodyEmpty = d.bodyMessages(a, w.respBody, w.respDec, schema.InResponseBody, o.EndTime)
			}
		}
	case w.fail.kind == schema.JSONObject:
		if !isString(w.failMsg) {
			return false
		}
		switch k := d.text(w.failKind); k {
		case schema.FailureConnectionRefused, schema.FailureReset, schema.FailureTimeout, schema.FailureClientAbort:
			h.Failure = k
		default:
			return false
		}
		h.FailureMessage = d.text(w.failMsg)
		if w.reqBody.kind == schema.JSONString {
			if d.overBody(w.reqBody, w.reqDec, "request") {
				return true
			}
			h.RequestHasBody = true
			d.bodyMessages(a, w.reqBody, w.reqDec, schema.InRequestBody, o.Time)
		}
	default:
		return false
	}
	if o.SessionID == "" {
		o.SessionID = h.RespSessionID
	}
	if o.SessionID == "" {
		if s := sessionFromURL(h.URL); s != "" {
			o.SessionID = d.internStr(s)
		}
	}
	return true
}

// overBody reports whether the body string t is longer, decoded, than the
// body limit, and then sets d.over. dec is its value if the scanner
// decoded it (scanBody). A literal is never shorter than what it decodes
// to, so only one longer than the limit is decoded to measure it.
func (d *WireDecoder) overBody(t tok, dec []byte, which string) bool {
	lit := d.s.b[t.start+1 : t.end-1]
	limit := d.Limits.Body()
	if int64(len(lit)) <= limit {
		return false
	}
	n := int64(len(lit))
	if dec != nil {
		n = int64(len(dec))
	} else if t.esc {
		n = unescapedLen(lit)
	}
	if n <= limit {
		return false
	}
	d.over = d.Limits.bodyErr(which, n)
	return true
}

// eventTimes reads response.event_times into d.times.
func (d *WireDecoder) eventTimes() bool {
	t := d.w.eventTimes
	switch t.kind {
	case schema.JSONAbsent:
		return true
	case schema.JSONArray:
	default:
		return false
	}
	s := scanner{b: d.s.b, i: t.start}
	s.enter()
	for n := 0; ; n++ {
		done, _ := s.elem(n)
		if done {
			return true
		}
		if n == maxEventTimes {
			return true // the rest stay unknown
		}
		v, _ := s.value()
		switch v.kind {
		case schema.JSONNull:
			d.times = append(d.times, time.Time{})
		case schema.JSONString:
			at, ok := d.timeOf(v)
			if !ok {
				return false
			}
			d.times = append(d.times, at)
		default:
			return false
		}
	}
}

// mediaType is mediaType(ct), interned, without parsing the common forms.
func (d *WireDecoder) mediaType(ct string) string {
	switch ct {
	case "", "application/json", "text/event-stream":
		return ct
	}
	return d.internStr(mediaType(ct))
}

// bodyLen is the size the body string t takes in the arena: its value's
// length if the scanner decoded it (dec, see scanBody), otherwise its
// literal's, which is never shorter.
func bodyLen(t tok, dec []byte) int {
	if dec != nil {
		return len(dec)
	}
	return t.end - t.start
}

// bodyMessages puts the value of the body string t of the line in the
// arena (copying dec, its value if the scanner decoded it, or unescaping
// its literal) and appends its messages, dated at (when not already
// dated). It reports whether the body is empty once white space is
// trimmed.
func (d *WireDecoder) bodyMessages(a *arena, t tok, dec []byte, where schema.Where, at time.Time) bool {
	var region, body []byte
	if dec != nil {
		region = a.take(len(dec))
		body = region
		copy(body, dec)
	} else {
		lit := d.s.b[t.start+1 : t.end-1]
		region = a.take(len(lit))
		body = region[:len(lit)]
		if t.esc {
			body = region[:jsonstr.UnescapeInto(region, lit)]
		} else {
			copy(body, lit)
		}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		a.give(region, 0)
		return true
	}
	a.give(region, len(body))
	d.appendMessages(a, trimmed, region, where, 0, at)
	return false
}

// appendMessages reads the messages of body (trimmed, non-empty, in the
// arena: region is its last allocation) into d.msgs.
func (d *WireDecoder) appendMessages(a *arena, body, region []byte, where schema.Where, event int, at time.Time) {
	n := len(d.msgs)
	var ok bool
	d.msgs, d.rpcs, ok = d.r.readBody(d.msgs, d.rpcs, body, where, event)
	if !ok {
		m := invalidBody(body, where, event) // a copy of its head, not the whole
		a.give(region, 0)
		d.msgs = append(d.msgs, m)
	}
	for i := n; i < len(d.msgs); i++ {
		if d.msgs[i].At.IsZero() {
			d.msgs[i].At = at
		}
	}
}

// litIsSpace reports whether the string literal lit (escapes validated)
// decodes to white space only, as strings.TrimSpace sees it.
func litIsSpace(lit []byte) bool {
	var buf [8]byte
	for len(lit) > 0 {
		var r rune
		if lit[0] == '\\' {
			e, n := jsonstr.AppendEscape(buf[:0], lit)
			r, _ = utf8.DecodeRune(e)
			lit = lit[n:]
		} else {
			var n int
			r, n = utf8.DecodeRune(lit)
			lit = lit[n:]
		}
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// arena is the owned memory of one observation's messages: Raw and the RPC
// strings are pieces of it. It is allocated once, at the size the bodies
// need (hint), and grows by chunks for long streams.
type arena struct {
	buf  []byte
	hint int
}

const arenaChunk = 16 << 10

// take returns n bytes of the arena, the caller's for good unless given
// back.
func (a *arena) take(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		size := max(n, a.hint)
		if a.buf != nil {
			size = max(n, arenaChunk) // a long stream: grow by chunks
		}
		a.buf = make([]byte, 0, size)
		a.hint = 0
	}
	l := len(a.buf)
	a.buf = a.buf[:l+n]
	return a.buf[l : l+n : l+n]
}

// give gives back the end of region (the last take) past its first keep
// bytes.
func (a *arena) give(region []byte, keep int) {
	if len(region) == 0 || len(a.buf) < len(region) || &a.buf[len(a.buf)-len(region)] != &region[0] {
		return
	}
	a.buf = a.buf[:len(a.buf)-len(region)+keep]
}
