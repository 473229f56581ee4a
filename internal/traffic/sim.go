package traffic

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"strconv"
)

const (
	ms  = int64(1000)
	sec = 1000 * ms
	day = 86400 * sec
)

// Outcome names, as package classify writes them.
const (
	outToolSuccess      = "TOOL_SUCCESS"
	outSuccess          = "SUCCESS"
	outToolError        = "TOOL_ERROR"
	outJSONRPCError     = "JSONRPC_ERROR"
	outHTTPError        = "HTTP_ERROR"
	outNoResponse       = "NO_RESPONSE"
	outStreamIncomplete = "STREAM_INCOMPLETE"
	outCancelled        = "CANCELLED"
	outUnknown          = "UNKNOWN"
)

// view is one side's view of an HTTP transaction's answer.
type view struct {
	start, end    int64 // this side's clock
	fail, failMsg string
	status        int
	ctype         string
	body          []byte // a JSON or text body (level 1)
	hasBody       bool   // a body was recorded (maybe empty)
	sse           bool
	events        int    // progress notifications before the final message
	token         int64  // their progressToken
	total         int    // their total
	final         []byte // the message that ends the stream, nil: none
	streamID      string // event ids "<streamID>_<n>", "" none
	prime         bool   // a priming event (an id and empty data) opens the stream
	keepalive     int    // comment lines (GET streams)
	streamEnd     string
	retryAfter    string
	sessionHdr    string // Mcp-Session-Id response header
	t0            int64  // first event
}

// post is one HTTP transaction of a unit.
type post struct {
	method    string
	sid       string // Mcp-Session-Id request header
	version   string // MCP-Protocol-Version request header
	body      []byte // request body, nil: none
	trigger   string
	init      bool
	seen      bool // the server's log holds it
	c, s      view
	preflight bool // HAR: the browser sent a CORS preflight first
}

type savedCall struct {
	t    *tool
	args []byte
	ctx  *callCtx
}

type session struct {
	n            int64
	slot         int
	cli          *clientProfile
	srv          *serverProfile
	sid, conn    string
	version      string
	nextID       int64
	left         int
	phase        int
	next         int64
	getOpen      bool
	getStart     int64
	getSid       string
	auth, apiKey string
	cookie       string
	repeat       *savedCall
}

const (
	phaseInit = iota
	phaseList
	phaseRun
)

// pending is a rendered record waiting for its turn in the output.
type pending struct {
	key, seq int64
	b        []byte
}

// renderer turns posts into records of one format and side.
type renderer interface {
	begin(s *sim)
	post(s *sim, ss *session, p *post)
	getStream(s *sim, ss *session, p *post)
	end(s *sim)
}

type sim struct {
	o      Options
	g      *gen
	server bool
	rend   renderer
	lead   int64 // no future record's key is below the next unit's start plus lead

	sess  []*session // a heap on next
	pend  []pending  // a heap on key, seq
	seq   int64
	free  [][]byte
	day   int
	nsess int64

	exchanges int64 // planned (client-side) exchanges
	generated int64
	stats     Stats
	w         *bufio.Writer
	werr      error
	ts        tsFormatter

	skew  int64
	sep   string // written between records (HAR entries)
	lines bool   // a queued item may hold several lines, each a record (claude)
	posts []post
	ctx   callCtx
	msg   []byte // the final message of the current unit
	buf   []byte // scratch
	text  []byte
	req   []byte
	args  []byte
}

func newSim(o Options, w *bufio.Writer, rend renderer) *sim {
	s := &sim{o: o, g: newGen(o.Seed), server: o.Side == "server", rend: rend, w: w}
	s.stats.ByOutcome = map[string]int64{}
	s.skew = 30*ms + int64(s.g.intn(400))*ms // the server's clock is ahead of the client's
	switch {
	case s.server:
		s.lead = s.skew
	case o.Format == "har":
		s.lead = -50 * ms // a CORS preflight starts before its POST
	}
	return s
}

// ---- output ----

func (s *sim) getBuf() []byte {
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 4096)
}

// push queues a record to be written once nothing can come before it.
func (s *sim) push(key int64, b []byte) {
	s.generated += int64(len(b))
	s.seq++
	s.pend = append(s.pend, pending{key, s.seq, b})
	i := len(s.pend) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&s.pend[i], &s.pend[p]) {
			break
		}
		s.pend[i], s.pend[p] = s.pend[p], s.pend[i]
		i = p
	}
}

func less(a, b *pending) bool { return a.key < b.key || a.key == b.key && a.seq < b.seq }

func (s *sim) popPending() pending {
	top := s.pend[0]
	n := len(s.pend) - 1
	s.pend[0] = s.pend[n]
	s.pend = s.pend[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && less(&s.pend[l], &s.pend[m]) {
			m = l
		}
		if r < n && less(&s.pend[r], &s.pend[m]) {
			m = r
		}
		if m == i {
			break
		}
		s.pend[i], s.pend[m] = s.pend[m], s.pend[i]
		i = m
	}
	return top
}

// flush writes every queued record whose key is at most until.
func (s *sim) flush(until int64) {
	for len(s.pend) > 0 && s.pend[0].key <= until {
		p := s.popPending()
		if s.sep != "" && s.stats.Records > 0 {
			s.write([]byte(s.sep))
		}
		s.write(p.b)
		if s.lines {
			s.stats.Records += int64(bytes.Count(p.b, []byte{'\n'}))
		} else {
			s.stats.Records++
		}
		s.free = append(s.free, p.b)
	}
}

func (s *sim) write(b []byte) {
	if s.werr != nil {
		return
	}
	n, err := s.w.Write(b)
	s.stats.Bytes += int64(n)
	s.werr = err
}

// ---- sessions ----

func (s *sim) sessLess(i, j int) bool {
	a, b := s.sess[i], s.sess[j]
	return a.next < b.next || a.next == b.next && a.n < b.n
}

func (s *sim) sessUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.sessLess(i, p) {
			break
		}
		s.sess[i], s.sess[p] = s.sess[p], s.sess[i]
		i = p
	}
}

func (s *sim) sessDown(i int) {
	n := len(s.sess)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s.sessLess(l, m) {
			m = l
		}
		if r < n && s.sessLess(r, m) {
			m = r
		}
		if m == i {
			return
		}
		s.sess[i], s.sess[m] = s.sess[m], s.sess[i]
		i = m
	}
}

var serverWeights = []int{30, 30, 15, 15, 10}

func (s *sim) newSession(slot int, at int64, cli *clientProfile) *session {
	g := s.g
	ss := &session{n: s.nsess, slot: slot, next: at, cli: cli}
	s.nsess++
	if ss.cli == nil {
		ss.cli = pick(g, clients)
	}
	x := g.intn(100)
	for i, w := range serverWeights {
		if x < w {
			ss.srv = servers[i]
			break
		}
		x -= w
	}
	ss.version = ss.cli.protocol
	if ss.srv.protocol < ss.version {
		ss.version = ss.srv.protocol
	}
	ss.left = 1 + int(g.expo(60))
	if ss.left > 1500 {
		ss.left = 1500
	}
	if g.chance(0.65) {
		if ss.srv.key == "github" {
			ss.auth = "Bearer ghp_" + string(g.alnum(nil, 36))
		} else {
			ss.auth = "Bearer " + jwtLike(g)
		}
	}
	if g.chance(0.15) {
		if ss.srv.key == "brave-search" {
			ss.apiKey = "BSA" + string(g.alnum(nil, 27))
		} else {
			ss.apiKey = "sk-live-" + string(g.alnum(nil, 32))
		}
	}
	if ss.cli == browserClient && g.chance(0.8) {
		ss.cookie = "_ga=GA1.1." + strconv.Itoa(g.between(100000000, 999999999)) + ".1760" + strconv.Itoa(g.between(100000, 999999)) +
			"; acme_session=" + string(g.hex(nil, 32)) + "; theme=dark"
	}
	ss.conn = connPrefix(ss.cli.name) + "-" + strconv.FormatInt(ss.n, 36)
	return ss
}

func jwtLike(g *gen) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT","kid":"` + string(g.hex(nil, 8)) + `"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"user-` + strconv.Itoa(g.between(1000, 99999)) +
		`","aud":"mcp.acme-labs.example","scope":"mcp:tools mcp:resources","exp":` + strconv.Itoa(1792000000+g.intn(9000000)) + `}`))
	return head + "." + body + "." + string(g.alnum(nil, 43))
}

func connPrefix(name string) string {
	b := make([]byte, 0, 4)
	for i := 0; i < len(name) && len(b) < 4; i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' {
			b = append(b, c)
		}
	}
	return string(b)
}

// newSid draws a session id as the server's SDK makes them.
func (s *sim) newSid(srv *serverProfile) string {
	switch srv.lang {
	case "go":
		const b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
		b := make([]byte, 26)
		for i := range b {
			b[i] = b32[s.g.intn(32)]
		}
		return string(b)
	case "python":
		return string(s.g.hex(nil, 32))
	}
	return string(s.g.uuid(nil))
}

// streamID is a stream's id for its SSE event ids: derived, not drawn.
func streamID(ss *session, id int64) string {
	x := uint64(ss.n)*0x9E3779B97F4A7C15 ^ uint64(id+1)*0xC2B2AE3D27D4EB4F
	x ^= x >> 29
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 32
	b := make([]byte, 16)
	for i := range b {
		b[i] = hexDigits[x>>(4*i)&15]
	}
	return string(b)
}

// ---- the run ----

func (s *sim) stop() bool {
	return s.o.Exchanges > 0 && s.exchanges >= s.o.Exchanges || s.o.Bytes > 0 && s.generated >= s.o.Bytes
}

// dayIndex says which of Days slices the run has reached.
func (s *sim) dayIndex() int {
	if s.o.Days <= 1 {
		return 0
	}
	var d int64
	if s.o.Exchanges > 0 {
		d = s.exchanges * int64(s.o.Days) / s.o.Exchanges
	} else {
		d = s.generated * int64(s.o.Days) / s.o.Bytes
	}
	if d >= int64(s.o.Days) {
		d = int64(s.o.Days) - 1
	}
	return int(d)
}

func (s *sim) run() error {
	start := s.o.Start.UnixMicro()
	s.rend.begin(s)
	var cli *clientProfile
	if s.o.Format == "har" {
		cli = browserClient
	}
	for i := 0; i < s.o.Sessions; i++ {
		ss := s.newSession(i, start+s.g.span(0, 3*sec+int64(s.o.Sessions)*5*ms), cli)
		s.sess = append(s.sess, ss)
		s.sessUp(len(s.sess) - 1)
	}
	for !s.stop() && s.werr == nil {
		if d := s.dayIndex(); d > s.day {
			jump := int64(d-s.day) * day
			for _, ss := range s.sess {
				ss.next += jump
			}
			s.day = d
		}
		ss := s.sess[0]
		t := ss.next
		s.flush(t + s.lead)
		next, done := s.step(ss, t)
		if done {
			ns := s.newSession(ss.slot, next+s.g.span(50*ms, 4*sec), cli)
			s.sess[0] = ns
		} else {
			ss.next = next
		}
		s.sessDown(0)
	}
	s.flush(1 << 62)
	s.rend.end(s)
	return s.werr
}

// count adds one exchange's outcome: the client's view, and the server's
// ("" when the server never saw it).
func (s *sim) count(client, server string) {
	s.exchanges++
	o := client
	if s.server {
		o = server
	}
	if o != "" {
		s.stats.Exchanges++
		s.stats.ByOutcome[o]++
	}
}

// harEmpty: in a HAR, a stream that was cut before its first byte has an
// empty content.text, which is also how DevTools writes a stream whose body
// it did not keep; ingest reports UNKNOWN for it (the body was not
// recorded), never a guessed failure.
func (s *sim) harEmpty(v *view, outcome string) string {
	if s.o.Format == "har" && v.sse && v.events == 0 && v.final == nil && !v.prime && v.keepalive == 0 {
		return outUnknown
	}
	return outcome
}

func (s *sim) newPost() *post {
	s.posts = append(s.posts, post{})
	return &s.posts[len(s.posts)-1]
}

// emit renders the unit's posts.
func (s *sim) emit(ss *session) {
	for i := range s.posts {
		p := &s.posts[i]
		if s.server && !p.seen {
			continue
		}
		s.rend.post(s, ss, p)
	}
	s.posts = s.posts[:0]
}

// owd is a one-way network delay.
func (s *sim) owd() int64 { return 400 + int64(s.g.intn(2600)) }

// times sets both views' times from the client's.
func (s *sim) times(p *post, start, end int64) {
	p.c.start, p.c.end = start, end
	p.s.start = start + s.skew + s.owd()
	p.s.end = end + s.skew - s.owd()
	if p.s.end < p.s.start+200 {
		p.s.end = p.s.start + 200
	}
}

// ---- request and response bodies ----

func (s *sim) request(dst []byte, ss *session, id int64, method string, params []byte) []byte {
	if ss.cli.lang == "ts" {
		dst = append(dst, `{"method":"`...)
		dst = append(dst, method...)
		dst = append(dst, '"')
		if params != nil {
			dst = append(dst, `,"params":`...)
			dst = append(dst, params...)
		}
		dst = append(dst, `,"jsonrpc":"2.0"`...)
		if id >= 0 {
			dst = append(dst, `,"id":`...)
			dst = appendInt(dst, id)
		}
		return append(dst, '}')
	}
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id >= 0 {
		dst = append(dst, `,"id":`...)
		dst = appendInt(dst, id)
	}
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// response appends a response message: key is "result" or "error".
func response(dst []byte, srv *serverProfile, id int64, key string, val []byte) []byte {
	if srv.lang == "ts" {
		dst = append(dst, `{"`...)
		dst = append(dst, key...)
		dst = append(dst, `":`...)
		dst = append(dst, val...)
		dst = append(dst, `,"jsonrpc":"2.0","id":`...)
		dst = appendInt(dst, id)
		return append(dst, '}')
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendInt(dst, id)
	dst = append(dst, `,"`...)
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	dst = append(dst, val...)
	return append(dst, '}')
}

func rpcError(dst []byte, code int, msg []byte, esc int) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendStr(dst, msg, esc)
	return append(dst, '}')
}

// toolResult appends a tools/call result object holding text.
func toolResult(dst []byte, srv *serverProfile, t *tool, c *callCtx, text []byte, isError bool) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	if t != nil && t.resource && !isError {
		dst = append(dst, `"successfully downloaded text file"},{"type":"resource","resource":{"uri":"repo://`...)
		dst = append(dst, c.owner...)
		dst = append(dst, '/')
		dst = append(dst, c.repo...)
		dst = append(dst, "/refs/heads/main/contents/"...)
		dst = appendEsc(dst, c.path, srv.esc)
		dst = append(dst, `","mimeType":"text/plain; charset=utf-8","text":`...)
	}
	dst = appendStr(dst, text, srv.esc)
	if t != nil && t.resource && !isError {
		dst = append(dst, '}')
	}
	dst = append(dst, "}]"...)
	switch {
	case isError:
		dst = append(dst, `,"isError":true`...)
	case srv.lang == "python":
		dst = append(dst, `,"isError":false`...)
	}
	return append(dst, '}')
}

// ---- units ----

// step runs one unit of a session at t: it returns when the session acts
// next, or that it ended (at that time).
func (s *sim) step(ss *session, t int64) (int64, bool) {
	g := s.g
	var end int64
	switch ss.phase {
	case phaseInit:
		end = s.planInit(ss, t)
		if ss.repeat != nil {
			ss.phase = phaseRun
		} else {
			ss.phase = phaseList
		}
	case phaseList:
		end = s.planSimple(ss, t, "tools/list")
		ss.phase = phaseRun
	default:
		if ss.left <= 0 {
			return s.planEnd(ss, t), true
		}
		ss.left--
		switch x := g.intn(100); {
		case ss.repeat != nil || x < 86:
			var reinit bool
			end, reinit = s.planCall(ss, t)
			if reinit {
				ss.phase = phaseInit
				return end + g.span(20*ms, 300*ms), false
			}
		case x < 91 && len(ss.srv.resources) > 0:
			end = s.planSimple(ss, t, "resources/read")
		case x < 94 && len(ss.srv.prompts) > 0:
			end = s.planSimple(ss, t, "prompts/get")
		case x < 98:
			end = s.planSimple(ss, t, "ping")
		default:
			end = s.planSimple(ss, t, "tools/list")
		}
	}
	think := 40*ms + g.expo(1500*ms)
	if ss.repeat != nil {
		think = g.span(300*ms, 3*sec)
	}
	return end + think, false
}

// answer fills both views with a 200 answer carrying msg, as JSON or as an
// event stream (progress events first when the request asked for them).
func (s *sim) answer(p *post, ss *session, msg []byte, sse bool, events int, token int64, id int64, start, end int64) {
	s.times(p, start, end)
	p.seen = true
	for _, v := range []*view{&p.c, &p.s} {
		v.status = 200
		v.hasBody = true
		if sse {
			v.sse = true
			v.ctype = "text/event-stream"
			v.final = msg
			v.events = events
			v.token = token
			v.total = 100
			v.streamEnd = "complete"
			if ss.srv.eventIDs {
				v.streamID = streamID(ss, id)
				v.prime = ss.version >= "2025-11-25"
			}
		} else {
			v.ctype = "application/json"
			v.body = msg
		}
	}
	p.c.t0 = start + (end-start)/8 + 1*ms
	p.s.t0 = p.c.t0 + s.skew - s.owd()
}

func (s *sim) planInit(ss *session, t int64) int64 {
	g := s.g
	id := ss.nextID
	ss.nextID++
	sid := s.newSid(ss.srv)
	o := openObj(s.args[:0], ss.cli.esc)
	o.ss("protocolVersion", ss.cli.protocol)
	o.raw("capabilities", `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`)
	o.raw("clientInfo", `{"name":"`+ss.cli.name+`","version":"`+ss.cli.version+`"}`)
	s.args = o.close()
	s.req = s.request(s.req[:0], ss, id, "initialize", s.args)

	r := openObj(s.buf[:0], ss.srv.esc)
	r.ss("protocolVersion", ss.version)
	init := ss.srv.initResult
	// initResult starts {"protocolVersion":"…", — keep the rest of it.
	rest := init[len(`{"protocolVersion":"`)+len(ss.srv.protocol)+2:]
	s.buf = append(r.b, ',')
	s.buf = append(s.buf, rest...)
	s.msg = response(s.msg[:0], ss.srv, id, "result", s.buf)

	p := s.newPost()
	p.method, p.body, p.init = "POST", s.req, true
	p.preflight = true
	s.answer(p, ss, s.msg, g.chance(ss.srv.sse), 0, -1, id, t, t+g.span(8*ms, 160*ms))
	p.c.sessionHdr, p.s.sessionHdr = sid, sid
	ss.sid = sid

	n := s.newPost()
	n.method, n.sid, n.version, n.seen = "POST", sid, ss.version, true
	n.body = s.request(nil, ss, -1, "notifications/initialized", nil)
	nt := p.c.end + g.span(1*ms, 6*ms)
	s.times(n, nt, nt+g.span(2*ms, 15*ms))
	for _, v := range []*view{&n.c, &n.s} {
		v.status, v.hasBody = 202, true
	}
	s.count(outSuccess, outSuccess)
	s.emit(ss)
	if g.chance(ss.cli.getStream) {
		ss.getOpen, ss.getSid = true, sid
		ss.getStart = n.c.end + g.span(1*ms, 4*ms)
	}
	return s.lastEnd(n)
}

func (s *sim) lastEnd(p *post) int64 { return p.c.end }

// planSimple runs a request that succeeds (or, for resources/read and
// prompts/get, sometimes fails with a JSON-RPC error).
func (s *sim) planSimple(ss *session, t int64, method string) int64 {
	g := s.g
	id := ss.nextID
	ss.nextID++
	srv := ss.srv
	var params []byte
	outcome := outSuccess
	s.buf = s.buf[:0]
	switch method {
	case "tools/list":
		params = []byte(`{}`)
		s.msg = response(s.msg[:0], srv, id, "result", srv.toolsList)
	case "ping":
		s.msg = response(s.msg[:0], srv, id, "result", []byte(`{}`))
	case "resources/read":
		owner, repo := pick(g, orgs), pick(g, repos)
		tmpl := pick(g, srv.resources)
		uri := tmpl
		if srv.key == "postgres" {
			uri = replaceVerb(tmpl, pick(g, sqlTables), "")
		} else {
			uri = replaceVerb(tmpl, owner, repo)
		}
		o := openObj(s.args[:0], ss.cli.esc)
		o.ss("uri", uri)
		params = o.close()
		s.args = params
		if g.chance(0.1) {
			outcome = outJSONRPCError
			s.text = append(append(s.text[:0], "Resource not found: "...), uri...)
			s.buf = rpcError(s.buf, -32002, s.text, srv.esc)
			s.msg = response(s.msg[:0], srv, id, "error", s.buf)
			break
		}
		s.text = g.sourceFile(s.text[:0], ".md", g.textLines())
		s.buf = append(s.buf, `{"contents":[{"uri":`...)
		s.buf = appendStr(s.buf, uri, srv.esc)
		s.buf = append(s.buf, `,"mimeType":"text/markdown","text":`...)
		s.buf = appendStr(s.buf, s.text, srv.esc)
		s.buf = append(s.buf, "}]}"...)
		s.msg = response(s.msg[:0], srv, id, "result", s.buf)
	case "prompts/get":
		pr := pick(g, srv.prompts)
		o := openObj(s.args[:0], ss.cli.esc)
		o.ss("name", pr.name)
		o.key("arguments")
		o.b = append(o.b, `{"context":`...)
		s.text = g.phrase(s.text[:0], g.between(4, 20))
		o.b = appendStr(o.b, s.text, ss.cli.esc)
		o.b = append(o.b, '}')
		params = o.close()
		s.args = params
		if g.chance(0.05) {
			outcome = outJSONRPCError
			s.buf = rpcError(s.buf, -32602, []byte("Missing required argument: issue_number"), srv.esc)
			s.msg = response(s.msg[:0], srv, id, "error", s.buf)
			break
		}
		o = openObj(s.buf, srv.esc)
		o.ss("description", pr.desc)
		o.key("messages")
		o.b = append(o.b, `[{"role":"user","content":{"type":"text","text":`...)
		o.b = appendStr(o.b, pr.text+"\n\nContext: "+string(s.text), srv.esc)
		o.b = append(o.b, "}}]"...)
		s.buf = o.close()
		s.msg = response(s.msg[:0], srv, id, "result", s.buf)
	}
	s.req = s.request(s.req[:0], ss, id, method, params)
	p := s.newPost()
	p.method, p.sid, p.version, p.body = "POST", ss.sid, ss.version, s.req
	lat := g.span(4*ms, 250*ms)
	if method == "ping" {
		lat = g.span(2*ms, 40*ms)
	}
	s.answer(p, ss, s.msg, g.chance(srv.sse), 0, -1, id, t, t+lat)
	s.count(outcome, outcome)
	s.emit(ss)
	return s.lastEnd(p)
}

// replaceVerb fills the %s of a URI template.
func replaceVerb(t, a, b string) string {
	out := make([]byte, 0, len(t)+len(a)+len(b))
	k := 0
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+1 < len(t) && t[i+1] == 's' {
			if k == 0 {
				out = append(out, a...)
			} else {
				out = append(out, b...)
			}
			k++
			i++
			continue
		}
		out = append(out, t[i])
	}
	return string(out)
}

// planEnd ends a session: most clients DELETE it (closing their GET
// stream first); the others just stop.
func (s *sim) planEnd(ss *session, t int64) int64 {
	if !s.g.chance(0.8) {
		return t
	}
	return s.deleteSession(ss, t)
}

// deleteSession writes the client's DELETE of its session (closing its
// GET stream first).
func (s *sim) deleteSession(ss *session, t int64) int64 {
	g := s.g
	if ss.getOpen {
		s.closeGet(ss, t, "client_closed", "client_closed")
		t += g.span(1*ms, 3*ms)
	}
	p := s.newPost()
	p.method, p.sid, p.version, p.seen = "DELETE", ss.sid, ss.version, true
	s.times(p, t, t+g.span(3*ms, 40*ms))
	status := 200
	if ss.srv.lang == "go" {
		status = 204
	}
	for _, v := range []*view{&p.c, &p.s} {
		v.status, v.hasBody = status, true
	}
	s.emit(ss)
	return p.c.end
}

// closeGet writes the session's standalone GET stream, which ends at t.
func (s *sim) closeGet(ss *session, t int64, clientEnd, serverEnd string) {
	ss.getOpen = false
	p := &post{method: "GET", sid: ss.getSid, version: ss.version, seen: true}
	s.times(p, ss.getStart, t)
	for i, v := range []*view{&p.c, &p.s} {
		v.status, v.hasBody, v.sse, v.ctype = 200, true, true, "text/event-stream"
		v.streamEnd = clientEnd
		if i == 1 {
			v.streamEnd = serverEnd
		}
		if ss.srv.lang == "python" {
			v.keepalive = int((t - ss.getStart) / (15 * sec))
			if v.keepalive > 200 {
				v.keepalive = 200
			}
		}
	}
	if s.server && !p.seen {
		return
	}
	s.rend.getStream(s, ss, p)
}

// Outcome classes of a tools/call, per thousand calls.
const (
	wJSONOK  = 478
	wSSEOK   = 330
	wToolErr = 85
	wRPCErr  = 35
	w429     = 20
	w503     = 20
	w500     = 4
	wNetFail = 10
	wCut     = 10
	wCancel  = 5
	wExpire  = 3
)

var gatewayBodies = []string{
	"upstream connect error or disconnect/reset before headers. reset reason: connection termination",
	"<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n",
	"no healthy upstream",
}

// planCall runs one tools/call with everything that can happen to it. It
// reports whether the session must initialize again (its session expired).
func (s *sim) planCall(ss *session, t int64) (int64, bool) {
	g := s.g
	srv := ss.srv
	id := ss.nextID
	ss.nextID++
	var tl *tool
	c := &s.ctx
	if ss.repeat != nil {
		tl = ss.repeat.t
		s.args = append(s.args[:0], ss.repeat.args...)
		*c = *ss.repeat.ctx
		ss.repeat = nil
	} else {
		tl = srv.pickTool(g)
		c.reset()
		o := openObj(s.args[:0], ss.cli.esc)
		tl.args(g, &o, c)
		s.args = o.close()
	}
	token := int64(-1)
	// params: name, arguments, then _meta when the client wants progress.
	s.buf = append(s.buf[:0], `{"name":"`...)
	s.buf = append(s.buf, tl.name...)
	s.buf = append(s.buf, `","arguments":`...)
	s.buf = append(s.buf, s.args...)
	if ss.cli.progress {
		token = id
		s.buf = append(s.buf, `,"_meta":{"progressToken":`...)
		s.buf = appendInt(s.buf, id)
		s.buf = append(s.buf, '}')
	}
	s.buf = append(s.buf, '}')
	s.req = s.request(s.req[:0], ss, id, "tools/call", s.buf)

	lat := g.span(12*ms, 900*ms)
	if tl.slow {
		lat = g.span(250*ms, 7*sec)
	}
	sse := g.chance(srv.sse)
	if tl.slow && g.chance(0.5) {
		sse = true
	}
	events := 0
	if sse && token >= 0 {
		events = g.between(1, 5)
	}

	x := g.intn(1000)
	save := func() {
		ss.repeat = &savedCall{t: tl, args: clone(s.args), ctx: c.clone()}
	}
	p := s.newPost()
	p.method, p.sid, p.version, p.body = "POST", ss.sid, ss.version, s.req
	final := func(isErr bool) {
		// 1% of the successes are failures the server reports as an
		// ordinary result (isError false): still TOOL_SUCCESS, which
		// ingest flags suspect_hidden_error when the text gives it away.
		if isErr || g.chance(0.01) {
			s.text = tl.fail(g, s.text[:0], c)
		} else {
			s.text = tl.ok(g, s.text[:0], c)
		}
		s.buf = toolResult(s.buf[:0], srv, tl, c, s.text, isErr)
		s.msg = response(s.msg[:0], srv, id, "result", s.buf)
	}
	switch {
	case x < wJSONOK+wSSEOK:
		final(false)
		s.answer(p, ss, s.msg, sse, events, token, id, t, t+lat)
		s.count(outToolSuccess, outToolSuccess)
	case x < wJSONOK+wSSEOK+wToolErr:
		final(true)
		s.answer(p, ss, s.msg, sse, events, token, id, t, t+lat)
		s.count(outToolError, outToolError)
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr:
		code := -32602
		switch y := g.intn(100); {
		case y < 55:
			s.text = tl.invalid(g, s.text[:0], c)
		case y < 85:
			code = -32603
			switch z := g.intn(6); {
			case z == 0: // servers leak what they should not: a DSN with its password
				s.text = append(s.text[:0], "Internal error: failed to connect to `postgres://billing_app:"...)
				s.text = g.alnum(s.text, 20)
				s.text = append(s.text, "@db-primary.internal:5432/billing?sslmode=require`: server closed the connection unexpectedly"...)
			case z == 1:
				s.text = g.expand(s.text[:0], "Internal error: mailbox @e is over quota (552 5.2.2)")
			default:
				s.text = g.expand(s.text[:0], pick(g, []string{"Internal error: connection pool exhausted (size=10, waiting=@n)",
					"Internal error: dial tcp @h:5432: connect: connection refused", "Internal error", "runtime error: invalid memory address or nil pointer dereference"}))
			}
		default:
			code = -32001
			s.text = append(s.text[:0], "Request timed out"...)
		}
		s.buf = rpcError(s.buf[:0], code, s.text, srv.esc)
		s.msg = response(s.msg[:0], srv, id, "error", s.buf)
		s.answer(p, ss, s.msg, sse, 0, token, id, t, t+g.span(3*ms, 200*ms))
		s.count(outJSONRPCError, outJSONRPCError)
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr+w429+w503:
		gateway := x >= wJSONOK+wSSEOK+wToolErr+wRPCErr+w429
		out := s.throttled(ss, p, gateway, t, lat, sse, events, token, id, final)
		if out == outHTTPError && g.chance(0.4) {
			save()
		}
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr+w429+w503+w500:
		s.times(p, t, t+g.span(5*ms, 300*ms))
		p.seen = true
		s.buf = rpcError(s.buf[:0], -32603, []byte("Internal server error"), srv.esc)
		s.msg = append(append(append(s.msg[:0], `{"jsonrpc":"2.0","error":`...), s.buf...), `,"id":null}`...)
		for _, v := range []*view{&p.c, &p.s} {
			v.status, v.ctype, v.body, v.hasBody = 500, "application/json", s.msg, true
		}
		s.count(outHTTPError, outHTTPError)
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr+w429+w503+w500+wNetFail:
		final(false)
		s.answer(p, ss, s.msg, false, 0, token, id, t, t+lat)
		p.c.status, p.c.hasBody, p.c.body, p.c.ctype = 0, false, nil, ""
		srvOut := outToolSuccess
		switch y := g.intn(10); {
		case y < 5:
			p.c.fail, p.c.failMsg = "reset", pick(g, []string{"read ECONNRESET", "socket hang up", "fetch failed: other side closed"})
		case y < 8:
			p.c.fail, p.c.failMsg = "timeout", "Headers Timeout Error (UND_ERR_HEADERS_TIMEOUT)"
			p.c.end = t + 30*sec
			p.s.end = p.c.end + s.skew + g.span(100*ms, 20*sec)
		default:
			p.c.fail, p.c.failMsg = "connection_refused", "connect ECONNREFUSED 10.0.3.7:443"
			p.c.end = t + g.span(1*ms, 5*ms)
			p.seen = false
			srvOut = ""
		}
		s.count(outNoResponse, srvOut)
		if g.chance(0.6) {
			save()
		}
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr+w429+w503+w500+wNetFail+wCut:
		final(false)
		if events == 0 && token >= 0 {
			events = g.between(1, 3)
		}
		s.answer(p, ss, s.msg, true, events, token, id, t, t+lat)
		cut := g.intn(events + 1) // progress events the client received
		p.c.events, p.c.final = cut, nil
		p.c.streamEnd = "reset"
		if g.chance(0.3) {
			p.c.streamEnd = "timeout"
			p.c.end = t + 60*sec
		}
		srvOut := outToolSuccess
		if g.chance(0.5) { // the server's write failed too
			p.s.events, p.s.final, p.s.streamEnd = cut, nil, "reset"
			srvOut = outStreamIncomplete
		}
		s.count(s.harEmpty(&p.c, outStreamIncomplete), srvOut)
		if g.chance(0.6) {
			save()
		}
	case x < wJSONOK+wSSEOK+wToolErr+wRPCErr+w429+w503+w500+wNetFail+wCut+wCancel && ss.cli.cancels:
		// A person interrupts a long call: the client sends
		// notifications/cancelled and drops the response.
		final(false)
		if lat < 2*sec {
			lat = 2*sec + lat
		}
		s.answer(p, ss, s.msg, sse, events, token, id, t, t+lat)
		tc := t + lat/2
		cut := p.c.events / 2
		if sse {
			p.c.events, p.c.final, p.c.streamEnd = cut, nil, "client_closed"
			p.s.events, p.s.final, p.s.streamEnd = cut, nil, "client_closed"
		} else {
			p.c.status, p.c.hasBody, p.c.body, p.c.ctype = 0, false, nil, ""
			p.c.fail, p.c.failMsg = "client_abort", "This operation was aborted"
			p.s.body = nil // the server answered nothing: its handler saw the context end
			p.s.hasBody, p.s.status, p.s.ctype = false, 0, ""
			p.s.fail, p.s.failMsg = "client_abort", "the client went away before the handler wrote a response"
		}
		p.c.end = tc + g.span(1*ms, 4*ms)
		p.s.end = p.c.end + s.skew
		n := s.newPost()
		n.method, n.sid, n.version, n.seen = "POST", ss.sid, ss.version, true
		o := openObj(s.text[:0], ss.cli.esc)
		o.i("requestId", id)
		o.ss("reason", pick(g, []string{"User interrupted", "AbortError: This operation was aborted", "The user cancelled the request"}))
		s.text = o.close()
		n.body = s.request(nil, ss, -1, "notifications/cancelled", s.text)
		s.times(n, tc, tc+g.span(2*ms, 12*ms))
		for _, v := range []*view{&n.c, &n.s} {
			v.status, v.hasBody = 202, true
		}
		s.count(s.harEmpty(&p.c, outCancelled), outCancelled)
	case x >= 1000-wExpire && ss.sid != "":
		// The server no longer knows the session: 404, then the client
		// initializes again and repeats the call.
		s.times(p, t, t+g.span(2*ms, 30*ms))
		p.seen = true
		for _, v := range []*view{&p.c, &p.s} {
			v.status, v.hasBody = 404, true
			switch srv.lang {
			case "go":
				v.ctype, v.body = "text/plain; charset=utf-8", []byte("session not found\n")
			case "python":
				v.ctype, v.body = "application/json", []byte(`{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`)
			default:
				v.ctype, v.body = "application/json", []byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)
			}
		}
		s.count(outHTTPError, outHTTPError)
		save()
		s.emit(ss)
		if ss.getOpen {
			s.closeGet(ss, t+1, "complete", "complete")
		}
		ss.sid = ""
		return p.c.end, true
	default:
		final(false)
		s.answer(p, ss, s.msg, sse, events, token, id, t, t+lat)
		s.count(outToolSuccess, outToolSuccess)
	}
	end := s.posts[len(s.posts)-1].c.end
	s.emit(ss)
	return end, false
}

// throttled runs a call answered 429 (by the server's own limiter) or 503
// (by the gateway in front of it, which the server's log never sees), with
// Retry-After, that the SDK sends again with the same id: up to three
// attempts.
func (s *sim) throttled(ss *session, p *post, gateway bool, t, lat int64, sse bool, events int, token, id int64, final func(bool)) string {
	g := s.g
	attempts := 2
	if !g.chance(0.85) {
		attempts = 3
	}
	success := attempts == 2 || g.chance(0.7)
	req := p.body
	at := t
	for i := 0; i < attempts; i++ {
		if i > 0 {
			p = s.newPost()
			p.method, p.sid, p.version, p.body, p.trigger = "POST", ss.sid, ss.version, req, "sdk"
		}
		if i == attempts-1 && success {
			final(false)
			s.answer(p, ss, s.msg, sse, events, token, id, at, at+lat)
			break
		}
		s.times(p, at, at+g.span(2*ms, 40*ms))
		retry := int64(g.between(1, 3))
		for _, v := range []*view{&p.c, &p.s} {
			v.hasBody, v.retryAfter = true, strconv.FormatInt(retry, 10)
			if gateway {
				v.status, v.ctype, v.body = 503, "text/plain", []byte(pick(g, gatewayBodies))
			} else {
				v.status, v.ctype = 429, "application/json"
				v.body = []byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Too many requests: limit 120/min per token, retry in ` + strconv.FormatInt(retry, 10) + ` s"},"id":null}`)
			}
		}
		p.seen = !gateway
		at = p.c.end + retry*sec + g.span(5*ms, 400*ms)
	}
	out := outToolSuccess
	if !success {
		out = outHTTPError
	}
	srvOut := out
	if gateway && !success {
		srvOut = "" // every attempt stopped at the gateway
	}
	s.count(out, srvOut)
	return out
}
