package traffic

import (
	"net/http"
	"strconv"
	"time"
)

// harRenderer writes a HAR 1.2 document as Chrome DevTools exports it
// ("Export HAR (with sensitive data)"): pretty-printed with two spaces,
// pages first, entries in start order, HTTP/2 pseudo-headers, timings,
// CORS preflights and the page's own documents and scripts (which ingest
// skips as not_mcp), event streams as content.text plus
// _eventSourceMessages with each event's time, as CDP-based recorders add
// them. Failed requests are status 0 with Chrome's net::ERR_* in _error.
type harRenderer struct {
	pages int
	jw    jw
}

const (
	harOrigin = "https://console.acme-labs.example"
	harScript = harOrigin + "/assets/index-4f2a9c.js"
)

// jw writes pretty-printed JSON as JSON.stringify(value, null, 2) does.
type jw struct {
	b     []byte
	depth int
	first bool
}

func (w *jw) nl() {
	w.b = append(w.b, '\n')
	for i := 0; i < w.depth; i++ {
		w.b = append(w.b, ' ', ' ')
	}
}

func (w *jw) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.nl()
	if k != "" {
		w.b = append(w.b, '"')
		w.b = append(w.b, k...)
		w.b = append(w.b, '"', ':', ' ')
	}
}

func (w *jw) open(k string, c byte) {
	w.key(k)
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *jw) close(c byte) {
	w.depth--
	if !w.first {
		w.nl()
	}
	w.b = append(w.b, c)
	w.first = false
}

func (w *jw) str(k, v string)           { w.key(k); w.b = appendStr(w.b, v, escPlain) }
func (w *jw) strb(k string, v []byte)   { w.key(k); w.b = appendStr(w.b, v, escPlain) }
func (w *jw) num(k string, v int64)     { w.key(k); w.b = strconv.AppendInt(w.b, v, 10) }
func (w *jw) millis(k string, us int64) { w.key(k); w.b = appendMillis(w.b, us) }
func (w *jw) raw(k, v string)           { w.key(k); w.b = append(w.b, v...) }

func (w *jw) header(name, value string) {
	w.open("", '{')
	w.str("name", name)
	w.str("value", value)
	w.close('}')
}

// mix is a hash for the renderer's jitter: the renderer draws nothing, so
// a seed's traffic is the same in every format.
func mix(a, b int64) int64 {
	x := uint64(a)*0x9E3779B97F4A7C15 + uint64(b)*0xC2B2AE3D27D4EB4F
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	return int64(x >> 1)
}

func (h *harRenderer) begin(s *sim) {
	h.pages = 1 + (s.o.Sessions-1)/50
	start := s.o.Start.UnixMicro()
	w := &h.jw
	w.b, w.depth, w.first = append(w.b[:0], '{'), 1, true
	w.open("log", '{')
	w.str("version", "1.2")
	w.open("creator", '{')
	w.str("name", "WebInspector")
	w.str("version", "537.36")
	w.close('}')
	w.open("pages", '[')
	for i := 0; i < h.pages; i++ {
		at := h.pageStart(start, i)
		w.open("", '{')
		w.key("startedDateTime")
		w.b = append(s.ts.append(append(w.b, '"'), at), '"')
		w.str("id", "page_"+strconv.Itoa(i+1))
		w.str("title", harOrigin+"/agents?workspace="+strconv.Itoa(i+1))
		w.open("pageTimings", '{')
		w.millis("onContentLoad", 180*ms+mix(int64(i), 1)%200*ms)
		w.millis("onLoad", 420*ms+mix(int64(i), 2)%300*ms)
		w.close('}')
		w.close('}')
	}
	w.close(']')
	w.key("entries")
	w.b = append(w.b, '[')
	s.write(w.b)
	s.sep = ","
	// The pages' own requests come first.
	for i := 0; i < h.pages; i++ {
		at := h.pageStart(start, i)
		h.asset(s, i, at, "GET", harOrigin+"/agents", "document", "text/html", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Agents · Acme Console</title><script type="module" src="/assets/index-4f2a9c.js"></script></head><body><div id="root"></div></body></html>`)
		h.asset(s, i, at+40*ms, "GET", harScript, "script", "application/javascript", `import{c as e}from"./vendor-9b1e.js";const t=new URL("/mcp",location.href);export async function send(n){return fetch(t,{method:"POST",body:JSON.stringify(n)})}`)
		h.asset(s, i, at+60*ms, "GET", harOrigin+"/favicon.ico", "other", "image/x-icon", "")
	}
}

func (h *harRenderer) pageStart(start int64, i int) int64 { return start - 3*sec + int64(i)*120*ms }

func (h *harRenderer) end(s *sim) {
	s.sep = ""
	s.write([]byte("\n    ]\n  }\n}\n"))
}

func (h *harRenderer) getStream(*sim, *session, *post) {}

// asset writes one of the page's own (not MCP) entries.
func (h *harRenderer) asset(s *sim, page int, at int64, method, url, kind, mime, text string) {
	w := &h.jw
	w.b, w.depth, w.first = s.getBuf(), 3, true
	w.open("", '{')
	w.open("_initiator", '{')
	w.str("type", "other")
	w.close('}')
	w.str("_priority", "VeryHigh")
	w.str("_resourceType", kind)
	w.raw("cache", "{}")
	w.str("connection", strconv.Itoa(52100+page))
	w.str("pageref", "page_"+strconv.Itoa(page+1))
	w.open("request", '{')
	w.str("method", method)
	w.str("url", url)
	w.str("httpVersion", "http/2.0")
	w.open("headers", '[')
	w.header(":authority", "console.acme-labs.example")
	w.header(":method", method)
	w.header(":path", url[len(harOrigin):])
	w.header(":scheme", "https")
	w.header("accept", "*/*")
	w.header("user-agent", browserClient.ua)
	w.close(']')
	w.raw("queryString", "[]")
	w.raw("cookies", "[]")
	w.num("headersSize", -1)
	w.num("bodySize", 0)
	w.close('}')
	w.open("response", '{')
	w.num("status", 200)
	w.str("statusText", "")
	w.str("httpVersion", "http/2.0")
	w.open("headers", '[')
	w.header("content-type", mime)
	w.header("cache-control", "max-age=31536000, immutable")
	w.close(']')
	w.raw("cookies", "[]")
	w.open("content", '{')
	w.num("size", int64(len(text)))
	w.str("mimeType", mime)
	if text != "" {
		w.str("text", text)
	}
	w.close('}')
	w.str("redirectURL", "")
	w.num("headersSize", -1)
	w.num("bodySize", -1)
	w.num("_transferSize", int64(len(text)+310))
	w.raw("_error", "null")
	w.raw("_fetchedViaServiceWorker", "false")
	w.close('}')
	w.str("serverIPAddress", "203.0.113.10")
	w.key("startedDateTime")
	w.b = append(s.ts.append(append(w.b, '"'), at), '"')
	w.millis("time", 12*ms+mix(at, 3)%30*ms)
	w.open("timings", '{')
	w.millis("blocked", 300+mix(at, 4)%900)
	w.raw("dns", "-1")
	w.raw("ssl", "-1")
	w.raw("connect", "-1")
	w.millis("send", 60)
	w.millis("wait", 10*ms)
	w.millis("receive", 1*ms)
	w.close('}')
	w.close('}')
	s.push(at, w.b)
}

var harErrors = map[string]string{
	"reset":              "net::ERR_CONNECTION_RESET",
	"timeout":            "net::ERR_TIMED_OUT",
	"connection_refused": "net::ERR_CONNECTION_REFUSED",
	"client_abort":       "net::ERR_ABORTED",
	"client_closed":      "net::ERR_ABORTED",
}

func (h *harRenderer) post(s *sim, ss *session, p *post) {
	if p.preflight {
		h.preflight(s, ss, p)
	}
	v := &p.c
	w := &h.jw
	w.b, w.depth, w.first = s.getBuf(), 3, true
	page := "page_" + strconv.Itoa(ss.slot%h.pages+1)
	w.open("", '{')
	w.open("_initiator", '{')
	w.str("type", "script")
	w.raw("stack", `{"callFrames": [{"functionName": "send", "scriptId": "41", "url": "`+harScript+`", "lineNumber": 0, "columnNumber": 48211}]}`)
	w.close('}')
	w.str("_priority", "High")
	w.str("_resourceType", "fetch")
	w.raw("cache", "{}")
	w.str("connection", strconv.FormatInt(53000+ss.n%4000, 10))
	w.str("pageref", page)

	w.open("request", '{')
	w.str("method", p.method)
	w.str("url", ss.srv.url)
	w.str("httpVersion", "http/2.0")
	w.open("headers", '[')
	host := ss.srv.url[len("https://"):]
	path := host
	for i := 0; i < len(host); i++ {
		if host[i] == '/' {
			host, path = host[:i], host[i:]
			break
		}
	}
	w.header(":authority", host)
	w.header(":method", p.method)
	w.header(":path", path)
	w.header(":scheme", "https")
	switch p.method {
	case "POST":
		w.header("accept", "application/json, text/event-stream")
	default:
		w.header("accept", "*/*")
	}
	w.header("accept-encoding", "gzip, deflate, br, zstd")
	w.header("accept-language", "en-US,en;q=0.9,de;q=0.8")
	if ss.auth != "" {
		w.header("authorization", ss.auth)
	}
	if p.body != nil {
		w.header("content-length", strconv.Itoa(len(p.body)))
		w.header("content-type", "application/json")
	}
	if ss.cookie != "" {
		w.header("cookie", ss.cookie)
	}
	if !p.init {
		w.header("mcp-protocol-version", ss.version)
	}
	if p.sid != "" {
		w.header("mcp-session-id", p.sid)
	}
	w.header("origin", harOrigin)
	w.header("priority", "u=1, i")
	w.header("referer", harOrigin+"/agents")
	w.header("sec-ch-ua", `"Chromium";v="141", "Not?A_Brand";v="8"`)
	w.header("sec-ch-ua-mobile", "?0")
	w.header("sec-ch-ua-platform", `"Linux"`)
	w.header("sec-fetch-dest", "empty")
	w.header("sec-fetch-mode", "cors")
	w.header("sec-fetch-site", "same-site")
	w.header("user-agent", ss.cli.ua)
	if ss.apiKey != "" {
		w.header("x-api-key", ss.apiKey)
	}
	w.close(']')
	w.raw("queryString", "[]")
	w.raw("cookies", "[]")
	w.num("headersSize", -1)
	w.num("bodySize", int64(len(p.body)))
	if p.body != nil {
		w.open("postData", '{')
		w.str("mimeType", "application/json")
		w.strb("text", p.body)
		w.close('}')
	}
	w.close('}')

	// The response.
	errText := ""
	w.open("response", '{')
	if v.fail != "" {
		errText = harErrors[v.fail]
		w.num("status", 0)
		w.str("statusText", "")
		w.str("httpVersion", "")
		w.raw("headers", "[]")
		w.raw("cookies", "[]")
		w.open("content", '{')
		w.num("size", 0)
		w.str("mimeType", "x-unknown")
		w.close('}')
	} else {
		w.num("status", int64(v.status))
		w.str("statusText", "")
		w.str("httpVersion", "http/2.0")
		w.open("headers", '[')
		w.header("access-control-allow-origin", harOrigin)
		w.header("access-control-expose-headers", "mcp-session-id, retry-after")
		if v.sse {
			w.header("cache-control", "no-cache")
		}
		if v.ctype != "" {
			w.header("content-type", v.ctype)
		}
		w.header("date", time.UnixMicro(v.start+(v.end-v.start)/4).UTC().Format(http.TimeFormat))
		if v.sessionHdr != "" {
			w.header("mcp-session-id", v.sessionHdr)
		}
		if v.retryAfter != "" {
			w.header("retry-after", v.retryAfter)
		}
		w.header("vary", "Origin")
		w.close(']')
		w.raw("cookies", "[]")
		w.open("content", '{')
		switch {
		case v.sse:
			s.buf = appendSSERaw(s.buf[:0], s, ss, v, ss.srv.lang == "python")
			w.num("size", int64(len(s.buf)))
			w.str("mimeType", "text/event-stream")
			w.strb("text", s.buf)
			if v.streamEnd != "complete" {
				errText = harErrors[v.streamEnd]
				if errText == "" {
					errText = "net::ERR_INCOMPLETE_CHUNKED_ENCODING"
				}
				if v.streamEnd == "timeout" {
					errText = "net::ERR_TIMED_OUT"
				}
			}
		case len(v.body) > 0:
			w.num("size", int64(len(v.body)))
			w.str("mimeType", mediaOf(v.ctype))
			w.strb("text", v.body)
		default:
			w.num("size", 0)
			w.str("mimeType", "x-unknown")
			w.str("text", "")
		}
		w.close('}')
	}
	w.str("redirectURL", "")
	w.num("headersSize", -1)
	w.num("bodySize", -1)
	w.num("_transferSize", int64(len(v.body)+len(s.buf)*btoi(v.sse)+420))
	if errText == "" {
		w.raw("_error", "null")
	} else {
		w.str("_error", errText)
	}
	w.raw("_fetchedViaServiceWorker", "false")
	w.close('}')
	w.str("serverIPAddress", "203.0.113.24")
	w.key("startedDateTime")
	w.b = append(s.ts.append(append(w.b, '"'), v.start), '"')
	elapsed := v.end - v.start
	w.millis("time", elapsed)
	// Timings: blocked, send and wait before the first byte, receive after.
	blocked := 200 + mix(v.start, ss.n)%1500
	send := 40 + mix(v.start, 7)%200
	wait := elapsed - blocked - send
	if v.sse && v.t0 > v.start {
		wait = v.t0 - v.start - blocked - send
	} else if v.fail == "" {
		wait = wait * 9 / 10
	}
	if wait < 0 {
		wait = 0
	}
	receive := elapsed - blocked - send - wait
	if receive < 0 {
		receive = 0
	}
	w.open("timings", '{')
	w.millis("blocked", blocked)
	w.raw("dns", "-1")
	w.raw("ssl", "-1")
	w.raw("connect", "-1")
	w.millis("send", send)
	w.millis("wait", wait)
	w.millis("receive", receive)
	w.millis("_blocked_queueing", blocked*3/4)
	w.close('}')
	if v.sse && p.method == "POST" && v.events+btoi(v.final != nil) > 0 {
		w.open("_eventSourceMessages", '[')
		for k := 0; k < v.events+btoi(v.final != nil); k++ {
			w.open("", '{')
			w.key("time")
			w.b = appendEpochSeconds(w.b, eventTime(v, k))
			w.str("eventName", "message")
			if v.streamID != "" {
				w.str("eventId", v.streamID+"_"+strconv.Itoa(k+1))
			} else {
				w.str("eventId", "")
			}
			if k < v.events {
				s.text = progressMsg(s.text[:0], ss.srv, v.token, k, v.events, v.total)
				w.strb("data", s.text)
			} else {
				w.strb("data", v.final)
			}
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
	s.push(v.start, w.b)
}

func mediaOf(ct string) string {
	for i := 0; i < len(ct); i++ {
		if ct[i] == ';' {
			return ct[:i]
		}
	}
	return ct
}

// preflight writes the CORS preflight Chrome sends before a session's
// first POST (it carries nothing of MCP: ingest skips it).
func (h *harRenderer) preflight(s *sim, ss *session, p *post) {
	w := &h.jw
	w.b, w.depth, w.first = s.getBuf(), 3, true
	at := p.c.start - 30*ms
	w.open("", '{')
	w.open("_initiator", '{')
	w.str("type", "other")
	w.close('}')
	w.str("_priority", "High")
	w.str("_resourceType", "preflight")
	w.raw("cache", "{}")
	w.str("connection", strconv.FormatInt(53000+ss.n%4000, 10))
	w.str("pageref", "page_"+strconv.Itoa(ss.slot%h.pages+1))
	w.open("request", '{')
	w.str("method", "OPTIONS")
	w.str("url", ss.srv.url)
	w.str("httpVersion", "http/2.0")
	w.open("headers", '[')
	w.header("accept", "*/*")
	w.header("access-control-request-headers", "authorization,content-type,mcp-protocol-version,mcp-session-id")
	w.header("access-control-request-method", "POST")
	w.header("origin", harOrigin)
	w.header("sec-fetch-mode", "cors")
	w.header("user-agent", ss.cli.ua)
	w.close(']')
	w.raw("queryString", "[]")
	w.raw("cookies", "[]")
	w.num("headersSize", -1)
	w.num("bodySize", 0)
	w.close('}')
	w.open("response", '{')
	w.num("status", 204)
	w.str("statusText", "")
	w.str("httpVersion", "http/2.0")
	w.open("headers", '[')
	w.header("access-control-allow-headers", "authorization,content-type,mcp-protocol-version,mcp-session-id,last-event-id")
	w.header("access-control-allow-methods", "GET, POST, DELETE, OPTIONS")
	w.header("access-control-allow-origin", harOrigin)
	w.header("access-control-max-age", "86400")
	w.close(']')
	w.raw("cookies", "[]")
	w.open("content", '{')
	w.num("size", 0)
	w.str("mimeType", "x-unknown")
	w.str("text", "")
	w.close('}')
	w.str("redirectURL", "")
	w.num("headersSize", -1)
	w.num("bodySize", -1)
	w.num("_transferSize", 260)
	w.raw("_error", "null")
	w.raw("_fetchedViaServiceWorker", "false")
	w.close('}')
	w.str("serverIPAddress", "203.0.113.24")
	w.key("startedDateTime")
	w.b = append(s.ts.append(append(w.b, '"'), at), '"')
	w.millis("time", 21*ms+mix(at, 5)%9*ms)
	w.open("timings", '{')
	w.millis("blocked", 410)
	w.millis("dns", 1*ms+mix(at, 6)%20*ms)
	w.millis("ssl", 9*ms)
	w.millis("connect", 14*ms)
	w.millis("send", 80)
	w.millis("wait", 5*ms)
	w.millis("receive", 300)
	w.close('}')
	w.close('}')
	s.push(at, w.b)
}
