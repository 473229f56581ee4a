package traffic

import (
	"bufio"
	"bytes"
	"strconv"
)

func writeShape(w *bufio.Writer, o Options) (Stats, error) {
	s := newSim(o, w, wireRenderer{})
	if o.Shape == ShapeLongSSE {
		return s.stats, s.longSSE()
	}
	return s.stats, s.openConversations()
}

// shapeCall starts a tools/call on ss at t and returns its post, with both
// views answered as an event stream carrying events progress notifications
// and the result.
func (s *sim) shapeCall(ss *session, t int64, events int, lat int64) *post {
	g := s.g
	id := ss.nextID
	ss.nextID++
	tl := ss.srv.pickTool(g)
	c := &s.ctx
	c.reset()
	o := openObj(s.args[:0], ss.cli.esc)
	tl.args(g, &o, c)
	s.args = o.close()
	s.buf = append(s.buf[:0], `{"name":"`...)
	s.buf = append(s.buf, tl.name...)
	s.buf = append(s.buf, `","arguments":`...)
	s.buf = append(s.buf, s.args...)
	s.buf = append(s.buf, `,"_meta":{"progressToken":`...)
	s.buf = appendInt(s.buf, id)
	s.buf = append(s.buf, "}}"...)
	s.req = s.request(s.req[:0], ss, id, "tools/call", s.buf)
	s.text = tl.ok(g, s.text[:0], c)
	s.buf = toolResult(s.buf[:0], ss.srv, tl, c, s.text, false)
	s.msg = response(s.msg[:0], ss.srv, id, "result", s.buf)
	p := s.newPost()
	p.method, p.sid, p.version, p.body = "POST", ss.sid, ss.version, s.req
	s.answer(p, ss, s.msg, true, events, id, id, t, t+lat)
	return p
}

// openConversations writes Conversations sessions, one millisecond apart,
// each an initialize and a tools/call that is never answered, and no
// DELETE: the even ones' event streams are cut after one progress event
// (both sides log the cut); the odd ones' clients give up waiting after
// 30 s (a timeout failure), and the server, still working when its log
// ended, logged nothing of them.
func (s *sim) openConversations() error {
	n := s.o.Conversations
	if n <= 0 {
		n = 1000
	}
	t := s.o.Start.UnixMicro()
	for i := 0; i < n && s.werr == nil; i++ {
		s.flush(t + s.lead)
		ss := s.newSession(i, t, nil)
		s.planInit(ss, t)
		ss.getOpen = false // never written: the client's log ended first
		at := t + 20*ms + s.g.span(1*ms, 30*ms)
		p := s.shapeCall(ss, at, 1, s.g.span(2*sec, 20*sec))
		if i%2 == 0 {
			p.c.final, p.c.streamEnd = nil, "reset"
			p.s.final, p.s.streamEnd = nil, "reset"
			s.count(outStreamIncomplete, outStreamIncomplete)
		} else {
			p.c.status, p.c.hasBody, p.c.sse, p.c.ctype = 0, false, false, ""
			p.c.fail, p.c.failMsg = "timeout", "The operation was aborted due to timeout"
			p.c.end = at + 30*sec
			p.seen = false
			s.count(outNoResponse, "")
		}
		s.emit(ss)
		t += 1 * ms
	}
	s.flush(1 << 62)
	return s.werr
}

// longSSE writes one session whose tools/call is answered on an event
// stream of Events progress notifications and then the result, written
// as it is generated (the record is never held whole).
func (s *sim) longSSE() error {
	n := s.o.Events
	if n <= 0 {
		n = 1000
	}
	t := s.o.Start.UnixMicro()
	ss := s.newSession(0, t, nil)
	ss.cli = clients[0] // asks for progress
	ss.left = 0
	t = s.planInit(ss, t) + 20*ms
	ss.getOpen = false
	dur := int64(n) * 20 * ms
	if dur > 10*60*sec {
		dur = 10 * 60 * sec
	}
	p := s.shapeCall(ss, t, 0, dur+50*ms)
	s.flush(1 << 62)
	// The record with an empty stream, cut where the stream goes.
	v, mode := &p.c, escPlain
	if s.server {
		v, mode = &p.s, escHTML
	}
	final := v.final
	v.final = nil
	var rec []byte
	if s.server {
		rec = wireRenderer{}.serverRecord(s, ss, p, s.getBuf())
	} else {
		rec = wireRenderer{}.clientRecord(s, ss, p, s.getBuf())
	}
	cut := bytes.LastIndex(rec, []byte(`","stream_end":"`))
	s.write(rec[:cut])
	nl := `\n`
	if ss.srv.lang == "python" {
		nl = `\r\n`
	}
	b := s.buf[:0]
	ev := func(msg []byte, k int) {
		b = append(b, "event: message"...)
		b = append(b, nl...)
		if v.streamID != "" {
			b = append(b, "id: "...)
			b = append(b, v.streamID...)
			b = append(b, '_')
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, nl...)
		}
		b = append(b, "data: "...)
		b = appendEsc(b, msg, mode)
		b = append(b, nl...)
		b = append(b, nl...)
	}
	for k := 0; k < n && s.werr == nil; k++ {
		s.text = progressMsg(s.text[:0], ss.srv, v.token, k, n, n)
		ev(s.text, k+1)
		if len(b) > 64<<10 {
			s.write(b)
			b = b[:0]
		}
	}
	ev(final, n+1)
	s.write(b)
	s.write(rec[cut:])
	s.buf = b
	s.stats.Records++
	s.posts = s.posts[:0]
	s.count(outToolSuccess, outToolSuccess)
	s.deleteSession(ss, p.c.end+5*ms)
	s.flush(1 << 62)
	return s.werr
}
