package traffic

import "strconv"

// wireRenderer writes the mcptrace wire log: the client's logger (lower-case
// headers as the client sent them, JSON.stringify escapes, event times) or
// the server's wirelog middleware (Go's encoding/json: canonical header
// names in sorted order, HTML-safe escapes, credentials dropped, no event
// times). A record is written when its transaction ends.
type wireRenderer struct{}

func (wireRenderer) begin(*sim) {}
func (wireRenderer) end(*sim)   {}

func (w wireRenderer) post(s *sim, ss *session, p *post) {
	if s.server {
		s.push(p.s.end, w.serverRecord(s, ss, p, s.getBuf()))
	} else {
		s.push(p.c.end, w.clientRecord(s, ss, p, s.getBuf()))
	}
}

func (w wireRenderer) getStream(s *sim, ss *session, p *post) { w.post(s, ss, p) }

var progressVerbs = []string{"Scanning", "Reading", "Indexing", "Fetching page", "Parsing", "Resolving", "Uploading", "Comparing"}

// progressMsg appends a notifications/progress message (level 1).
func progressMsg(dst []byte, srv *serverProfile, token int64, k, n, total int) []byte {
	prog := (k + 1) * total / (n + 1)
	if srv.lang == "ts" {
		dst = append(dst, `{"method":"notifications/progress","params":{"progressToken":`...)
	} else {
		dst = append(dst, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	}
	dst = appendInt(dst, token)
	dst = append(dst, `,"progress":`...)
	dst = strconv.AppendInt(dst, int64(prog), 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, `,"message":"`...)
	dst = append(dst, progressVerbs[(k+int(token))%len(progressVerbs)]...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(k+1), 10)
	dst = append(dst, " of "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, '"', '}')
	if srv.lang == "ts" {
		dst = append(dst, `,"jsonrpc":"2.0"}`...)
	} else {
		dst = append(dst, '}')
	}
	return dst
}

// eventTime is when the k-th dispatched event of a stream came: progress
// events spread from the first event on, the final one at the end.
func eventTime(v *view, k int) int64 {
	if v.final != nil && k == v.events {
		return v.end
	}
	return v.t0 + (v.end-v.t0)*int64(k)/int64(v.events+1)
}

// appendSSE appends a stream's text, escaped as mode says (level 2).
func appendSSE(dst []byte, s *sim, ss *session, v *view, mode int, crlf bool) []byte {
	nl := `\n`
	if crlf {
		nl = `\r\n`
	}
	return appendStream(dst, s, ss, v, nl, func(dst, msg []byte) []byte { return appendEsc(dst, msg, mode) })
}

// appendStream appends a stream's text with line ends nl (as written at
// the level the caller writes) and each event's data through data.
func appendStream(dst []byte, s *sim, ss *session, v *view, nl string, data func(dst, msg []byte) []byte) []byte {
	for i := 0; i < v.keepalive; i++ {
		dst = append(dst, ": ping - "...)
		dst = s.ts.append(dst, v.start+int64(i+1)*15*sec)
		dst = append(dst, nl...)
		dst = append(dst, nl...)
	}
	n := 0
	event := func(msg []byte) {
		dst = append(dst, "event: message"...)
		dst = append(dst, nl...)
		if v.streamID != "" {
			dst = append(dst, "id: "...)
			dst = append(dst, v.streamID...)
			dst = append(dst, '_')
			dst = strconv.AppendInt(dst, int64(n+1), 10)
			dst = append(dst, nl...)
		}
		dst = append(dst, "data: "...)
		dst = data(dst, msg)
		dst = append(dst, nl...)
		dst = append(dst, nl...)
		n++
	}
	if v.prime {
		dst = append(dst, "id: "...)
		dst = append(dst, v.streamID...)
		dst = append(dst, "_0"...)
		dst = append(dst, nl...)
		dst = append(dst, "data: "...)
		dst = append(dst, nl...)
		dst = append(dst, nl...)
	}
	for k := 0; k < v.events; k++ {
		s.text = progressMsg(s.text[:0], ss.srv, v.token, k, v.events, v.total)
		event(s.text)
	}
	if v.final != nil {
		event(v.final)
	}
	return dst
}

func (w wireRenderer) clientRecord(s *sim, ss *session, p *post, b []byte) []byte {
	v := &p.c
	b = append(b, `{"mcptrace":"wire/1","ts":"`...)
	b = s.ts.append(b, v.start)
	b = append(b, `","end_ts":"`...)
	b = s.ts.append(b, v.end)
	b = append(b, `","side":"client","transport":"streamable-http","client":{"name":"`...)
	b = append(b, ss.cli.name...)
	b = append(b, `","version":"`...)
	b = append(b, ss.cli.version...)
	b = append(b, `"},"server":{"name":"`...)
	b = append(b, ss.srv.name...)
	b = append(b, `","version":"`...)
	b = append(b, ss.srv.version...)
	b = append(b, `"},"connection":"`...)
	b = append(b, ss.conn...)
	b = append(b, '"')
	sid := p.sid
	if p.init {
		sid = v.sessionHdr
	}
	if sid != "" {
		b = append(b, `,"session_id":"`...)
		b = append(b, sid...)
		b = append(b, '"')
	}
	b = append(b, `,"protocol_version":"`...)
	b = append(b, ss.version...)
	b = append(b, `","http":{"request":{"method":"`...)
	b = append(b, p.method...)
	b = append(b, `","url":"`...)
	b = append(b, ss.srv.url...)
	b = append(b, `","headers":{`...)
	switch p.method {
	case "POST":
		b = append(b, `"content-type":"application/json","accept":"application/json, text/event-stream",`...)
	case "GET":
		b = append(b, `"accept":"text/event-stream",`...)
	}
	b = append(b, `"user-agent":"`...)
	b = append(b, ss.cli.ua...)
	b = append(b, '"')
	if p.sid != "" {
		b = append(b, `,"mcp-session-id":"`...)
		b = append(b, p.sid...)
		b = append(b, '"')
	}
	if !p.init {
		b = append(b, `,"mcp-protocol-version":"`...)
		b = append(b, ss.version...)
		b = append(b, '"')
	}
	if ss.auth != "" {
		b = append(b, `,"authorization":"`...)
		b = append(b, ss.auth...)
		b = append(b, '"')
	}
	if ss.apiKey != "" {
		b = append(b, `,"x-api-key":"`...)
		b = append(b, ss.apiKey...)
		b = append(b, '"')
	}
	b = append(b, '}')
	if p.body != nil {
		b = append(b, `,"body":"`...)
		b = appendEsc(b, p.body, escPlain)
		b = append(b, '"')
	}
	b = append(b, '}')
	if v.fail != "" {
		b = append(b, `,"failure":{"kind":"`...)
		b = append(b, v.fail...)
		b = append(b, `","message":`...)
		b = appendStr(b, v.failMsg, escPlain)
		b = append(b, "}}"...)
	} else {
		b = append(b, `,"response":{"status":`...)
		b = strconv.AppendInt(b, int64(v.status), 10)
		if v.ctype != "" || v.sessionHdr != "" || v.retryAfter != "" {
			b = append(b, `,"headers":{`...)
			first := true
			hdr := func(k, val string) {
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, '"')
				b = append(b, k...)
				b = append(b, `":"`...)
				b = append(b, val...)
				b = append(b, '"')
			}
			if v.ctype != "" {
				hdr("content-type", v.ctype)
			}
			if v.sse {
				hdr("cache-control", "no-cache")
			}
			if v.sessionHdr != "" {
				hdr("mcp-session-id", v.sessionHdr)
			}
			if v.retryAfter != "" {
				hdr("retry-after", v.retryAfter)
			}
			b = append(b, '}')
		}
		if v.ctype != "" {
			b = append(b, `,"content_type":"`...)
			b = append(b, v.ctype...)
			b = append(b, '"')
		}
		switch {
		case v.sse:
			b = append(b, `,"body":"`...)
			b = appendSSE(b, s, ss, v, escPlain, ss.srv.lang == "python")
			b = append(b, `","stream_end":"`...)
			b = append(b, v.streamEnd...)
			b = append(b, '"')
			if n := v.events + btoi(v.final != nil); n > 0 && p.method == "POST" {
				b = append(b, `,"event_times":[`...)
				for k := 0; k < n; k++ {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, '"')
					b = s.ts.append(b, eventTime(v, k))
					b = append(b, '"')
				}
				b = append(b, ']')
			}
		case v.hasBody:
			b = append(b, `,"body":"`...)
			b = appendEsc(b, v.body, escPlain)
			b = append(b, '"')
		}
		b = append(b, "}}"...)
	}
	if p.trigger != "" {
		b = append(b, `,"trigger":"`...)
		b = append(b, p.trigger...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// clientIP is the address the server's proxy names in X-Forwarded-For.
func clientIP(ss *session) string {
	n := ss.n*2654435761 + 17
	return "198.51.100." + strconv.FormatInt(n%250+2, 10)
}

func (w wireRenderer) serverRecord(s *sim, ss *session, p *post, b []byte) []byte {
	v := &p.s
	b = append(b, `{"mcptrace":"wire/1","ts":"`...)
	b = s.ts.append(b, v.start)
	b = append(b, `","end_ts":"`...)
	b = s.ts.append(b, v.end)
	b = append(b, `","side":"server","transport":"streamable-http","server":{"name":"`...)
	b = append(b, ss.srv.name...)
	b = append(b, `","version":"`...)
	b = append(b, ss.srv.version...)
	b = append(b, `"}`...)
	sid := p.sid
	if sid == "" {
		sid = v.sessionHdr
	}
	if sid != "" {
		b = append(b, `,"session_id":"`...)
		b = append(b, sid...)
		b = append(b, '"')
	}
	if !p.init {
		b = append(b, `,"protocol_version":"`...)
		b = append(b, ss.version...)
		b = append(b, '"')
	}
	b = append(b, `,"http":{"request":{"method":"`...)
	b = append(b, p.method...)
	b = append(b, `","url":"`...)
	b = append(b, ss.srv.internal...)
	b = append(b, `","headers":{`...)
	switch p.method {
	case "POST":
		b = append(b, `"Accept":"application/json, text/event-stream",`...)
	case "GET":
		b = append(b, `"Accept":"text/event-stream",`...)
	}
	if ss.auth != "" {
		b = append(b, `"Authorization":"[dropped]",`...)
	}
	if p.body != nil {
		b = append(b, `"Content-Length":"`...)
		b = strconv.AppendInt(b, int64(len(p.body)), 10)
		b = append(b, `","Content-Type":"application/json",`...)
	}
	if !p.init {
		b = append(b, `"Mcp-Protocol-Version":"`...)
		b = append(b, ss.version...)
		b = append(b, `",`...)
	}
	if p.sid != "" {
		b = append(b, `"Mcp-Session-Id":"`...)
		b = append(b, p.sid...)
		b = append(b, `",`...)
	}
	b = append(b, `"User-Agent":"`...)
	b = append(b, ss.cli.ua...)
	b = append(b, '"')
	if ss.apiKey != "" {
		b = append(b, `,"X-Api-Key":"`...)
		b = append(b, ss.apiKey...)
		b = append(b, '"')
	}
	b = append(b, `,"X-Forwarded-For":"`...)
	b = append(b, clientIP(ss)...)
	b = append(b, `","X-Forwarded-Proto":"https"}`...)
	if p.body != nil {
		b = append(b, `,"body":"`...)
		b = appendEsc(b, p.body, escHTML)
		b = append(b, '"')
	}
	b = append(b, '}')
	if v.fail != "" {
		b = append(b, `,"failure":{"kind":"`...)
		b = append(b, v.fail...)
		b = append(b, `","message":`...)
		b = appendStr(b, v.failMsg, escHTML)
		b = append(b, "}}}\n"...)
		return b
	}
	b = append(b, `,"response":{"status":`...)
	b = strconv.AppendInt(b, int64(v.status), 10)
	if v.ctype != "" || v.sessionHdr != "" {
		b = append(b, `,"headers":{`...)
		first := true
		hdr := func(k, val string) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":"`...)
			b = append(b, val...)
			b = append(b, '"')
		}
		if v.sse {
			hdr("Cache-Control", "no-cache")
		}
		if v.ctype != "" {
			hdr("Content-Type", v.ctype)
		}
		if v.sessionHdr != "" {
			hdr("Mcp-Session-Id", v.sessionHdr)
		}
		if v.retryAfter != "" {
			hdr("Retry-After", v.retryAfter)
		}
		b = append(b, '}')
		b = append(b, `,"content_type":"`...)
		b = append(b, v.ctype...)
		b = append(b, '"')
	}
	switch {
	case v.sse:
		b = append(b, `,"body":"`...)
		b = appendSSEServer(b, s, ss, v)
		b = append(b, `","stream_end":"`...)
		b = append(b, v.streamEnd...)
		b = append(b, '"')
	case v.hasBody:
		b = append(b, `,"body":"`...)
		b = appendEsc(b, v.body, escHTML)
		b = append(b, '"')
	}
	return append(b, "}}}\n"...)
}

// appendSSEServer is appendSSE escaped as Go's encoding/json escapes: the
// stream is built at level 1 first, then escaped with HTML-safe escapes.
func appendSSEServer(b []byte, s *sim, ss *session, v *view) []byte {
	raw := appendSSERaw(s.buf[:0], s, ss, v, ss.srv.lang == "python")
	b = appendEsc(b, raw, escHTML)
	s.buf = raw
	return b
}

// appendSSERaw appends a stream's text unescaped (level 1).
func appendSSERaw(dst []byte, s *sim, ss *session, v *view, crlf bool) []byte {
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	return appendStream(dst, s, ss, v, nl, func(dst, msg []byte) []byte { return append(dst, msg...) })
}
