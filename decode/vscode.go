package decode

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// VS Code writes what it does with one MCP server to the output channel
// "MCP: NAME" (one channel per server). Each entry starts with a local
// timestamp without a zone and a level:
//
//	2026-05-12 14:03:51.241 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"initialize",...}
//	2026-05-12 14:03:52.402 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"result":{...}}
//	2025-03-21 10:15:02.117 [debug] [Client Says] {...}        builds of March 2025
//	2026-05-13 09:52:31.004 [info] Connection state: Error 429 status sending message to https://…/mcp: {…}
//
// Frames are logged at the request log level (debug; info in dev mode), so
// a channel at the default level shows none. The timestamps are local time
// and the log does not say which zone: they are read as UTC.
//
//   - Frames become observations with Stdio c2s or s2c, like stdio frames.
//   - "[server stderr] ..." lines are the server's stderr (Stdio "stderr").
//   - "Starting server NAME" begins a new connection (Connection "NAME#n", n
//     counting starts; request ids restart at 1). It and the other state
//     lines are skipped as "lifecycle"; other entries as "log".
//   - "NNN status sending message to URL[: body]" (also after "Connection
//     state: Error ", and with ", will attempt to fall back to legacy SSE")
//     is the HTTP status of a POST that failed. It becomes an HTTP
//     observation: POST to URL, that status, the body after the colon, and
//     as request body the most recent request frame sent on this connection
//     that has not been answered (and not already blamed); with no such
//     frame it is skipped as "status". "Error sending message to URL: err"
//     is a POST that got no response (failure kind from the error text when
//     it names one). Status lines of GETs (the SSE streams) are skipped as
//     "status".
//   - Lines without a timestamp continue the entry before them (a stack, a
//     multi-line error body) and are skipped as "continuation"; the lines
//     after a status line are added to its response body.
//
// The transport of a connection is what its lines show: a URL in a status
// or trace line means streamable HTTP, and after VS Code says it falls back
// to legacy SSE what follows is HTTP+SSE (the failed POST itself stays
// streamable HTTP); "[server stderr]" lines or a command line mean stdio;
// with no sign at all it is taken to be stdio. To name it on the frames
// logged before the first sign, the decoder reads ahead from each "Starting
// server" (up to 8 MiB or 50,000 lines); a sign found only beyond that
// changes the transport from there on.
//
// A status line does not say which request failed. VS Code sends the first
// request of a connection alone, so a failed initialize is found exactly;
// later, with several requests in flight, the most recent unanswered one is
// an assumption.

func init() {
	register(FormatVSCode, 41, sniffVSCode, decodeVSCodeFile)
}

var vscodeLevels = map[string]bool{"trace": true, "debug": true, "info": true, "warning": true, "error": true, "warn": true, "critical": true}

var vscodeMarkers = []string{"[editor -> server]", "[server -> editor]", "[Client Says]", "[Server Says]",
	"Starting server ", "Connection state: ", "status sending message to", "[server stderr]",
	"Waiting for server to respond to `initialize`", "Discovered ", "Server exited", "Stopping server "}

// vscodeTimestamp reads "YYYY-MM-DD HH:MM:SS.mmm " at the start of a line.
func vscodeTimestamp(line []byte) (time.Time, int, bool) {
	if len(line) < 20 || line[4] != '-' || line[7] != '-' || line[10] != ' ' || line[13] != ':' || line[16] != ':' {
		return time.Time{}, 0, false
	}
	end := 19
	if line[19] == '.' {
		end = 20
		for end < len(line) && line[end] >= '0' && line[end] <= '9' {
			end++
		}
	}
	if end >= len(line) || line[end] != ' ' {
		return time.Time{}, 0, false
	}
	t, err := time.Parse("2006-01-02 15:04:05", string(line[:end]))
	if err != nil {
		return time.Time{}, 0, false
	}
	return t.UTC(), end + 1, true
}

// vscodeEntry splits a timestamped line into its level and text.
func vscodeEntry(rest []byte) (level string, text []byte, ok bool) {
	lv, i, ok := readBracket(rest, 0)
	if !ok || !vscodeLevels[strings.ToLower(lv)] {
		return "", nil, false
	}
	if i < len(rest) && rest[i] == ' ' {
		i++
	}
	return lv, rest[i:], true
}

func sniffVSCode(head []byte) bool {
	found := false
	headLines(head, func(line []byte) bool {
		_, k, ok := vscodeTimestamp(line)
		if !ok {
			return true
		}
		if _, text, ok := vscodeEntry(line[k:]); ok {
			for _, m := range vscodeMarkers {
				if bytes.Contains(text, []byte(m)) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

var (
	vsFrameC2S = [][]byte{[]byte("[editor -> server]"), []byte("[Client Says]")}
	vsFrameS2C = [][]byte{[]byte("[server -> editor]"), []byte("[Server Says]")}
	vsStderr   = []byte("[server stderr]")

	vsStatusSend    = regexp.MustCompile(`^(\d{3}) status sending message to (.*)$`)
	vsStatusConnect = regexp.MustCompile(`^(\d{3}) status connecting to `)
	vsHTTPSign      = regexp.MustCompile(`(?:sending message to|connecting to|Fetching|Fetched) https?://`)
	vsStartFrom     = regexp.MustCompile(`^Starting server from \S+ extension host$`)
)

const (
	vsFallback    = ", will attempt to fall back to legacy SSE"
	vsRetrySuffix = "; will retry with new session ID"
	maxStatusBody = 64 << 10
)

var vscodeLifecycle = []string{"Stopping server ", "Server command line", "Server exited before responding", "Waiting for server to respond",
	"Discovered ", "Connection state: "}

// vsLine is one input line, read ahead or not.
type vsLine struct {
	no      int64
	text    []byte
	tooLong bool
	reason  string // of a too-long line
	head    []byte
	detail  string
}

type vsOut struct {
	id  schema.ID
	raw string
}

type vsStatus struct {
	pos       schema.Position
	ts        time.Time
	url       string
	status    int // 0: no response
	failMsg   string
	body      []byte
	hasBody   bool
	reqBody   string
	fallback  bool
	transport schema.Transport
}

type vscodeDecoder struct {
	source      string
	e           Emitter
	lr          *LineReader
	stop        func() bool
	ahead       []vsLine
	aheadErr    error // a read error met while reading ahead
	name        string
	starts      int
	transport   schema.Transport
	lastTS      time.Time
	outstanding []vsOut        // unanswered request frames, oldest first
	openIDs     map[idKeyT]int // entries of outstanding by id
	answeredIDs map[idKeyT]int // answered ids still in outstanding, removed lazily
	pending     *vsStatus
	vt          versionTracker
}

func decodeVSCodeFile(source string, r io.Reader, e Emitter) error {
	return decodeVSCode(source, r, e, MaxLine(e))
}

func decodeVSCode(source string, r io.Reader, e Emitter, maxLine int) error {
	opt := LineOptionsFor(e)
	opt.MaxLine = maxLine
	d := &vscodeDecoder{source: source, e: e, lr: newLineReader(r, opt), stop: opt.Stop, vt: newVersionTracker()}
	if err := d.decideTransport(); err != nil {
		return err
	}
	for {
		if d.stop() {
			d.flush() // the status line already read is accounted for
			return ErrStopped
		}
		l, err := d.next()
		if err == io.EOF {
			d.flush()
			return nil
		}
		if err != nil {
			d.flush()
			return err
		}
		pos := schema.Position{Source: source, Line: l.no}
		if l.tooLong {
			d.flush()
			e.Quarantine(pos, l.reason, l.detail, l.head)
			continue
		}
		if pos.Line == 1 {
			l.text = trimBOM(l.text)
		}
		if err := d.line(pos, l.text); err != nil {
			return err
		}
	}
}

// read takes the next line from the reader; keep copies it (for reading
// ahead).
func (d *vscodeDecoder) read(keep bool) (vsLine, error) {
	text, tooLong, err := d.lr.Next()
	if err != nil {
		return vsLine{}, err
	}
	l := vsLine{no: d.lr.LineNo(), text: text, tooLong: tooLong}
	if tooLong {
		l.text = nil
		l.head = append([]byte(nil), d.lr.Head()...)
		l.detail = d.lr.TooLongDetail()
		l.reason = ReasonLineTooLong
		if d.lr.Abandoned() {
			l.reason = ReasonDocumentTooLarge
		}
	} else if keep {
		l.text = append([]byte(nil), text...)
	}
	return l, nil
}

func (d *vscodeDecoder) next() (vsLine, error) {
	if len(d.ahead) > 0 {
		l := d.ahead[0]
		d.ahead[0] = vsLine{}
		d.ahead = d.ahead[1:]
		return l, nil
	}
	if d.aheadErr != nil {
		return vsLine{}, d.aheadErr
	}
	return d.read(false)
}

// decideTransport names the transport of the connection that starts here by
// reading ahead to the first sign of one, the next "Starting server", or the
// read-ahead limit.
func (d *vscodeDecoder) decideTransport() error {
	d.transport = schema.TransportStdio
	budget, lines := 8<<20, 0
	for i := 0; budget > 0 && lines < 50000; i++ {
		if i == len(d.ahead) {
			if d.stop() {
				return nil // the loop in decodeVSCode stops before the first line
			}
			l, err := d.read(true)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				// Lines already read ahead are still decoded; the error
				// surfaces when they are used up.
				d.aheadErr = err
				return nil
			}
			d.ahead = append(d.ahead, l)
		}
		l := d.ahead[i]
		budget -= len(l.text) + len(l.head)
		lines++
		_, k, ok := vscodeTimestamp(l.text)
		if !ok {
			continue
		}
		_, text, ok := vscodeEntry(l.text[k:])
		if !ok {
			continue
		}
		if bytes.HasPrefix(text, []byte("Starting server ")) && !vsStartFrom.Match(text) {
			return nil
		}
		if t, ok := transportSign(text); ok {
			d.transport = t
			return nil
		}
	}
	return nil
}

func transportSign(text []byte) (schema.Transport, bool) {
	switch {
	case vsHTTPSign.Match(text):
		return schema.TransportStreamableHTTP, true
	case bytes.HasPrefix(text, vsStderr) || bytes.HasPrefix(text, []byte("Server command line")):
		return schema.TransportStdio, true
	}
	return "", false
}

func (d *vscodeDecoder) conn() string { return d.name + "#" + strconv.Itoa(d.starts) }

func (d *vscodeDecoder) obs(pos schema.Position, ts time.Time) *schema.Observation {
	return &schema.Observation{Pos: pos, Side: schema.SideClient, Transport: d.transport, Time: ts,
		ServerName: d.name, Connection: d.conn(), Format: string(FormatVSCode), ProtocolVersion: d.vt.version(d.conn())}
}

func hasAnyPrefix(b []byte, ps [][]byte) ([]byte, bool) {
	for _, p := range ps {
		if bytes.HasPrefix(b, p) {
			return b[len(p):], true
		}
	}
	return nil, false
}

func (d *vscodeDecoder) line(pos schema.Position, line []byte) error {
	ts, k, stamped := vscodeTimestamp(line)
	if !stamped {
		switch {
		case d.pending != nil && d.pending.hasBody:
			if len(d.pending.body) < maxStatusBody {
				d.pending.body = append(append(d.pending.body, '\n'), line...)
			}
			d.e.Skip(pos, "continuation")
		case IsBlank(line):
			d.e.Skip(pos, "blank")
		default:
			d.e.Skip(pos, "continuation")
		}
		return nil
	}
	d.flush()
	d.lastTS = ts
	_, text, ok := vscodeEntry(line[k:])
	if !ok {
		d.e.Quarantine(pos, ReasonBadValue, "a timestamped line without the [level] of a VS Code output channel entry", line)
		return nil
	}
	if t, ok := transportSign(text); ok && t != schema.TransportStdio && d.transport == schema.TransportStdio {
		d.transport = t // a sign beyond the read-ahead limit
	}
	if rest, ok := hasAnyPrefix(text, vsFrameC2S); ok {
		d.frame(pos, ts, schema.DirClientToServer, rest, line)
		return nil
	}
	if rest, ok := hasAnyPrefix(text, vsFrameS2C); ok {
		d.frame(pos, ts, schema.DirServerToClient, rest, line)
		return nil
	}
	if bytes.HasPrefix(text, vsStderr) {
		o := d.obs(pos, ts)
		o.Stdio = schema.DirStderr
		d.e.Observation(o)
		return nil
	}
	if bytes.HasPrefix(text, []byte("Starting server ")) && !vsStartFrom.Match(text) {
		d.name = strings.TrimSpace(string(text[len("Starting server "):]))
		d.starts++
		d.outstanding, d.openIDs, d.answeredIDs = nil, nil, nil
		d.e.Skip(pos, "lifecycle")
		return d.decideTransport()
	}
	if d.statusLine(pos, ts, text) {
		return nil
	}
	for _, p := range vscodeLifecycle {
		if bytes.HasPrefix(text, []byte(p)) {
			d.e.Skip(pos, "lifecycle")
			return nil
		}
	}
	if vsStartFrom.Match(text) {
		d.e.Skip(pos, "lifecycle")
		return nil
	}
	d.e.Skip(pos, "log")
	return nil
}

func (d *vscodeDecoder) frame(pos schema.Position, ts time.Time, dir string, payload, line []byte) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 {
		d.e.Quarantine(pos, ReasonMissingField, "a frame entry without a JSON-RPC message", line)
		return
	}
	o := d.obs(pos, ts)
	o.Stdio = dir
	o.Messages = AppendMessages(nil, payload, schema.InStdio, 0)
	stampAt(o.Messages, ts) // the line's time: when the frame passed
	d.vt.observe(d.conn(), dir, o)
	for i := range o.Messages {
		m := &o.Messages[i]
		switch {
		case dir == schema.DirClientToServer && m.Kind == schema.MsgRequest && m.ID.Valid():
			d.outstanding = append(d.outstanding, vsOut{id: m.ID, raw: string(payload)})
			if d.openIDs == nil {
				d.openIDs = map[idKeyT]int{}
			}
			d.openIDs[idKeyT(m.ID)]++
		case dir == schema.DirServerToClient && m.Kind == schema.MsgResponse:
			d.answered(m.ID)
		case dir == schema.DirClientToServer && m.Kind == schema.MsgNotification && m.Method == "notifications/cancelled":
			if id := cancelledID(m.Raw); id.Valid() {
				d.answered(id)
			}
		}
	}
	d.e.Observation(o)
}

// idKeyT is an id usable as a map key.
type idKeyT schema.ID

// answered marks a request answered. It is removed from outstanding
// lazily (when a status line looks for the newest unanswered one, or when
// most of the list is answered), so a long log stays linear.
func (d *vscodeDecoder) answered(id schema.ID) {
	k := idKeyT(id)
	if d.openIDs[k] <= d.answeredIDs[k] {
		return // not an outstanding request
	}
	if d.answeredIDs == nil {
		d.answeredIDs = map[idKeyT]int{}
	}
	d.answeredIDs[k]++
	if len(d.outstanding) >= 64 && 2*len(d.answeredIDs) >= len(d.outstanding) {
		d.compact()
	}
}

// compact drops answered requests from outstanding, keeping the order.
func (d *vscodeDecoder) compact() {
	out := d.outstanding[:0]
	for _, r := range d.outstanding {
		if n := d.answeredIDs[idKeyT(r.id)]; n > 0 {
			d.answeredIDs[idKeyT(r.id)] = n - 1
			d.openIDs[idKeyT(r.id)]--
			continue
		}
		out = append(out, r)
	}
	clear(d.outstanding[len(out):])
	d.outstanding = out
	d.answeredIDs = nil
}

// popUnanswered takes the newest unanswered request.
func (d *vscodeDecoder) popUnanswered() (vsOut, bool) {
	for len(d.outstanding) > 0 {
		last := d.outstanding[len(d.outstanding)-1]
		d.outstanding = d.outstanding[:len(d.outstanding)-1]
		d.openIDs[idKeyT(last.id)]--
		if n := d.answeredIDs[idKeyT(last.id)]; n > 0 {
			d.answeredIDs[idKeyT(last.id)] = n - 1
			continue
		}
		return last, true
	}
	return vsOut{}, false
}

// statusLine handles the HTTP lines VS Code writes for remote servers;
// it returns false for any other line.
func (d *vscodeDecoder) statusLine(pos schema.Position, ts time.Time, text []byte) bool {
	s := string(text)
	s = strings.TrimPrefix(s, "Connection state: ")
	s = strings.TrimPrefix(s, "Error ")
	st := &vsStatus{pos: pos, ts: ts}
	switch {
	case vsStatusSend.MatchString(s):
		m := vsStatusSend.FindStringSubmatch(s)
		st.status, _ = strconv.Atoi(m[1])
		rest := m[2]
		if u, ok := strings.CutSuffix(rest, vsFallback); ok {
			st.url, st.fallback = u, true
		} else if u, body, ok := strings.Cut(rest, ": "); ok {
			st.url, st.hasBody = u, true
			st.body = []byte(body)
		} else {
			st.url = rest
		}
	case strings.HasPrefix(s, "Error sending message to ") || strings.HasPrefix(s, "sending message to "):
		rest := s[strings.Index(s, "sending message to ")+len("sending message to "):]
		u, msg, _ := strings.Cut(rest, ": ")
		st.url, st.failMsg = u, msg
	case vsStatusConnect.MatchString(s) || strings.HasPrefix(s, "Error connecting to "):
		d.e.Skip(pos, "status") // a GET for an event stream: no request of ours
		return true
	default:
		return false
	}
	st.transport = d.transport
	if st.transport == schema.TransportStdio {
		st.transport = schema.TransportStreamableHTTP
	}
	if st.fallback {
		// What VS Code sends from now on goes over legacy HTTP+SSE.
		d.transport = schema.TransportHTTPSSE
	}
	last, ok := d.popUnanswered()
	if !ok {
		d.e.Skip(pos, "status")
		return true
	}
	st.reqBody = last.raw
	d.pending = st
	return true
}

// flush emits the status line waiting for its continuation lines.
func (d *vscodeDecoder) flush() {
	st := d.pending
	if st == nil {
		return
	}
	d.pending = nil
	o := d.obs(st.pos, st.ts)
	o.Transport = st.transport
	p := HTTPParts{Method: "POST", URL: st.url, ReqBody: &st.reqBody}
	if st.status > 0 {
		p.Responded, p.Status = true, st.status
		if st.hasBody {
			body := strings.TrimSuffix(string(st.body), vsRetrySuffix)
			p.RespBody = &body
		}
	} else {
		p.Failure, p.FailureMessage = FailureKind(st.failMsg), st.failMsg
	}
	p.Limits = LimitsOf(d.e)
	if err := BuildHTTP(o, &p); err != nil {
		le := err.(*LineError)
		d.e.Quarantine(st.pos, le.Reason, le.Detail, nil)
		return
	}
	// The frames of this connection carry no session id: keep the status on
	// their conversation even when the URL names a legacy session.
	o.SessionID = ""
	d.e.Observation(o)
}

// cancelledID reads params.requestId of a notifications/cancelled.
func cancelledID(raw []byte) schema.ID {
	return idOf(jsonobj.Path(gjson.ParseBytes(raw), "params", "requestId"))
}
