package traffic

import (
	"bufio"
	"strconv"
	"strings"
)

// A Claude Desktop per-server log (mcp-server-NAME.log): one stdio server
// started again and again (each start a conversation whose ids restart at
// 0), Claude's frames as "Message from client/server: <json> { metadata:
// undefined }", the Node-inspect block of the launch command, the server's
// stderr copied in without timestamps, tool calls one to three at a time.
// What happens, per tools/call: TOOL_SUCCESS, TOOL_ERROR, JSONRPC_ERROR
// (-32602, -32603); CANCELLED: Claude gives up after 60 s and sends
// notifications/cancelled "Request timed out" (half the time the answer
// comes anyway, late); NO_RESPONSE: the server process dies with the call
// in flight; UNKNOWN: an answer longer than claudeCut characters is logged
// cut ("[N chars truncated]") and nothing that survives says how it ended.

// claudeCut models Claude Desktop's cut of long frames (the real limit is
// not documented): a frame of more characters keeps its first claudeHead
// and last claudeTail characters around "...[N chars truncated]...".
const (
	claudeCut  = 20000
	claudeHead = 8000
	claudeTail = 2000
)

func writeClaude(w *bufio.Writer, o Options) (Stats, error) {
	s := newSim(o, w, nil)
	s.lines = true
	return s.stats, s.runClaude()
}

// claudeLine queues one timestamped entry of the log.
func (s *sim) claudeLine(at int64, srv *serverProfile, level, msg string, payload []byte) {
	b := s.getBuf()
	b = s.ts.append(b, at)
	b = append(b, " ["...)
	b = append(b, srv.key...)
	b = append(b, "] ["...)
	b = append(b, level...)
	b = append(b, "] "...)
	b = append(b, msg...)
	if payload != nil {
		b = append(b, payload...)
	}
	b = append(b, " { metadata: undefined }\n"...)
	s.push(at, b)
}

// claudeRaw queues lines as they are (stderr, blocks), dated at.
func (s *sim) claudeRaw(at int64, text string) {
	b := append(s.getBuf(), text...)
	s.push(at, b)
}

// claudeFrame queues a frame, cut as Claude Desktop cuts long ones. It
// reports whether it was cut.
func (s *sim) claudeFrame(at int64, srv *serverProfile, fromClient bool, msg []byte) bool {
	m := "Message from server: "
	if fromClient {
		m = "Message from client: "
	}
	n := runeCount(msg)
	if n <= claudeCut {
		s.claudeLine(at, srv, "info", m, msg)
		return false
	}
	head := runeOffset(msg, claudeHead)
	tail := runeOffset(msg, n-claudeTail)
	cut := append(s.buf[:0], msg[:head]...)
	cut = append(cut, "...["...)
	cut = strconv.AppendInt(cut, int64(n-claudeHead-claudeTail), 10)
	cut = append(cut, " chars truncated]..."...)
	cut = append(cut, msg[tail:]...)
	s.buf = cut
	s.claudeLine(at, srv, "info", m, cut)
	return true
}

func runeCount(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// runeOffset is the byte offset of the k-th character.
func runeOffset(b []byte, k int) int {
	n := 0
	for i, c := range b {
		if c&0xC0 != 0x80 {
			if n == k {
				return i
			}
			n++
		}
	}
	return len(b)
}

var claudeClient = &clientProfile{name: "claude-ai", version: "0.1.0", lang: "ts", esc: escPlain, protocol: "2025-06-18"}

func (s *sim) runClaude() error {
	g := s.g
	srv := servers[g.intn(len(servers))]
	ss := &session{cli: claudeClient, srv: srv, version: "2025-06-18"}
	t := s.o.Start.UnixMicro()
	for proc := 0; !s.stop() && s.werr == nil; proc++ {
		t = s.claudeProcess(ss, t)
		t += g.span(20*sec, 3*3600*sec)
	}
	s.flush(1 << 62)
	return s.werr
}

// claudeProcess writes one start of the server, from t; it returns when it
// ended.
func (s *sim) claudeProcess(ss *session, t int64) int64 {
	g := s.g
	srv := ss.srv
	ss.nextID = 0
	s.flush(t)
	s.claudeLine(t, srv, "info", "Initializing server...", nil)
	t += g.span(2*ms, 40*ms)
	b := s.getBuf()
	b = s.ts.append(b, t)
	b = append(b, " ["...)
	b = append(b, srv.key...)
	b = append(b, "] [info] Using MCP server command: "...)
	b = append(b, srv.command...)
	b = append(b, " with args and path: {\n  metadata: {\n    args: [\n      "...)
	b = append(b, srv.args...)
	b = append(b, "\n      [length]: "...)
	b = strconv.AppendInt(b, int64(strings.Count(srv.args, "',")), 10)
	b = append(b, "\n    ],\n    paths: [\n      '/usr/local/bin',\n      '/opt/homebrew/bin',\n      '/usr/bin',\n      '/bin',\n      [length]: 4\n    ]\n  }\n} %o\n"...)
	s.push(t, b)
	t += g.span(2*ms, 20*ms)
	s.claudeLine(t, srv, "info", "Server started and connected successfully", nil)
	t += g.span(5*ms, 30*ms)

	// initialize
	s.args = append(s.args[:0], `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}}`...)
	s.req = s.request(s.req[:0], ss, 0, "initialize", s.args)
	ss.nextID = 1
	s.claudeFrame(t, srv, true, s.req)
	for _, l := range srv.banner {
		s.claudeRaw(t, l+"\n")
	}
	t += g.span(300*ms, 2500*ms)
	init := srv.initResult
	rest := init[len(`{"protocolVersion":"`)+len(srv.protocol)+2:]
	s.buf = append(append(s.buf[:0], `{"protocolVersion":"2025-06-18",`...), rest...)
	s.msg = response(s.msg[:0], srv, 0, "result", s.buf)
	s.claudeFrame(t, srv, false, s.msg)
	s.count(outSuccess, outSuccess)
	t += g.span(2*ms, 10*ms)
	s.claudeFrame(t, srv, true, s.request(s.req[:0], ss, -1, "notifications/initialized", nil))
	t += 1 * ms
	t = s.claudeSimple(ss, t, "tools/list", srv.toolsList)
	if len(srv.resources) > 0 {
		s.buf = append(s.buf[:0], `{"resources":[{"uri":"`...)
		s.buf = append(s.buf, replaceVerb(srv.resources[0], "acme-labs", "billing-api")...)
		s.buf = append(s.buf, `","name":"README.md","mimeType":"text/markdown"}]}`...)
		t = s.claudeSimple(ss, t, "resources/list", s.buf)
	}
	if len(srv.prompts) > 0 {
		p := srv.prompts[0]
		o := openObj(s.buf[:0], srv.esc)
		o.key("prompts")
		o.b = append(o.b, `[{"name":`...)
		o.b = appendStr(o.b, p.name, srv.esc)
		o.b = append(o.b, `,"description":`...)
		o.b = appendStr(o.b, p.desc, srv.esc)
		o.b = append(o.b, `,"arguments":[{"name":"context","required":false}]}]`...)
		s.buf = o.close()
		t = s.claudeSimple(ss, t, "prompts/list", s.buf)
	}

	calls := 1 + int(g.expo(40))
	crash := g.chance(0.04)
	for calls > 0 && !s.stop() && s.werr == nil {
		t += 1*sec + g.expo(12*sec)
		if d := s.dayIndex(); d > s.day {
			t += int64(d-s.day) * day
			s.day = d
		}
		s.flush(t)
		n := 1
		if g.chance(0.2) {
			n = g.between(2, 3)
		}
		if n > calls {
			n = calls
		}
		calls -= n
		end := t
		for i := 0; i < n; i++ {
			at := t + int64(i)*g.span(1*ms, 30*ms)
			if crash && calls == 0 && i == n-1 {
				return s.claudeCrash(ss, at)
			}
			if e := s.claudeCall(ss, at, n == 1); e > end {
				end = e
			}
		}
		t = end
	}
	if s.stop() {
		return t
	}
	t += g.span(10*sec, 1800*sec)
	s.claudeLine(t, srv, "info", "Client transport closed", nil)
	s.claudeLine(t+2*ms, srv, "info", "Server transport closed", nil)
	return t + 2*ms
}

// claudeSimple writes a request answered with result.
func (s *sim) claudeSimple(ss *session, t int64, method string, result []byte) int64 {
	g := s.g
	id := ss.nextID
	ss.nextID++
	s.claudeFrame(t, ss.srv, true, s.request(s.req[:0], ss, id, method, []byte(`{}`)))
	t += g.span(3*ms, 60*ms)
	s.msg = response(s.msg[:0], ss.srv, id, "result", result)
	if s.claudeFrame(t, ss.srv, false, s.msg) {
		s.count(outUnknown, outUnknown)
	} else {
		s.count(outSuccess, outSuccess)
	}
	return t + g.span(1*ms, 5*ms)
}

// claudeCall writes one tools/call from t; alone says whether it is the
// turn's only call (only those time out). It returns when its turn may go on.
func (s *sim) claudeCall(ss *session, t int64, alone bool) int64 {
	g := s.g
	srv := ss.srv
	id := ss.nextID
	ss.nextID++
	tl := srv.pickTool(g)
	c := &s.ctx
	c.reset()
	o := openObj(s.args[:0], escPlain)
	tl.args(g, &o, c)
	s.args = o.close()
	s.buf = append(s.buf[:0], `{"name":"`...)
	s.buf = append(s.buf, tl.name...)
	s.buf = append(s.buf, `","arguments":`...)
	s.buf = append(s.buf, s.args...)
	s.buf = append(s.buf, '}')
	s.req = s.request(s.req[:0], ss, id, "tools/call", s.buf)
	s.claudeFrame(t, srv, true, s.req)
	lat := g.span(30*ms, 4*sec)
	if tl.slow {
		lat = g.span(400*ms, 25*sec)
	}
	out := outToolSuccess
	switch x := g.intn(1000); {
	case x < 90:
		out = outToolError
		s.text = tl.fail(g, s.text[:0], c)
		s.buf = toolResult(s.buf[:0], srv, tl, c, s.text, true)
		s.msg = response(s.msg[:0], srv, id, "result", s.buf)
	case x < 130:
		out = outJSONRPCError
		code := -32602
		if x < 100 {
			code = -32603
			s.text = append(s.text[:0], "Internal error: "...)
			s.text = g.expand(s.text, "@s (@w)")
		} else {
			s.text = tl.invalid(g, s.text[:0], c)
		}
		s.buf = rpcError(s.buf[:0], code, s.text, srv.esc)
		s.msg = response(s.msg[:0], srv, id, "error", s.buf)
	case x < 140 && alone:
		// Claude gives up after 60 s.
		out = outCancelled
		tc := t + 60*sec + int64(g.intn(5))*ms
		s.text = append(s.text[:0], `{"requestId":`...)
		s.text = appendInt(s.text, id)
		s.text = append(s.text, `,"reason":"Error: MCP error -32001: Request timed out"}`...)
		s.claudeFrame(tc, srv, true, s.request(s.req[:0], ss, -1, "notifications/cancelled", s.text))
		s.count(out, out)
		if g.chance(0.5) {
			s.text = tl.ok(g, s.text[:0], c)
			s.buf = toolResult(s.buf[:0], srv, tl, c, s.text, false)
			s.msg = response(s.msg[:0], srv, id, "result", s.buf)
			s.claudeFrame(tc+g.span(200*ms, 8*sec), srv, false, s.msg)
		}
		return tc
	default:
		s.text = tl.ok(g, s.text[:0], c)
		s.buf = toolResult(s.buf[:0], srv, tl, c, s.text, false)
		s.msg = response(s.msg[:0], srv, id, "result", s.buf)
	}
	if s.claudeFrame(t+lat, srv, false, s.msg) {
		switch out {
		case outToolSuccess:
			out = outUnknown
		}
	}
	s.count(out, out)
	return t + lat
}

// claudeCrash: the server dies while a call is in flight.
func (s *sim) claudeCrash(ss *session, t int64) int64 {
	g := s.g
	srv := ss.srv
	id := ss.nextID
	ss.nextID++
	tl := srv.pickTool(g)
	c := &s.ctx
	c.reset()
	o := openObj(s.args[:0], escPlain)
	tl.args(g, &o, c)
	s.args = o.close()
	s.buf = append(append(append(append(s.buf[:0], `{"name":"`...), tl.name...), `","arguments":`...), s.args...)
	s.buf = append(s.buf, '}')
	s.claudeFrame(t, srv, true, s.request(s.req[:0], ss, id, "tools/call", s.buf))
	s.count(outNoResponse, outNoResponse)
	t += g.span(100*ms, 5*sec)
	s.claudeLine(t, srv, "info", "Message from server: ", []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"heap limit reached, exiting"}}`))
	s.claudeRaw(t, "\n<--- Last few GCs --->\n\n[48211:0x7f8b5c008000]    91234 ms: Mark-Compact 4047.9 (4130.6) -> 4032.1 (4131.1) MB, 1911.20 / 0.00 ms  (average mu = 0.132, current mu = 0.021) allocation failure; scavenge might not succeed\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")
	t += g.span(5*ms, 50*ms)
	s.claudeLine(t, srv, "info", "Server transport closed unexpectedly, this is likely due to the process exiting early. If you are developing this MCP server you can add output to stderr (i.e. `console.error('...')` in JavaScript, `print('...', file=sys.stderr)` in python) and it will appear in this log.", nil)
	b := s.getBuf()
	b = s.ts.append(b, t+1*ms)
	b = append(b, " ["...)
	b = append(b, srv.key...)
	b = append(b, "] [error] Server disconnected. For troubleshooting guidance, please visit our [debugging documentation](https://modelcontextprotocol.io/docs/tools/debugging) { metadata: { context: 'connection', stack: undefined } }\n"...)
	s.push(t+1*ms, b)
	return t + 1*ms
}
