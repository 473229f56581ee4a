package classify

import (
	"mcptrace/internal/jsonstr"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Suspect reasons: the suspect_reason vocabulary (a contract, like the
// outcomes). Each names the pattern that made a TOOL_SUCCESS suspect; the
// text itself is never echoed.
const (
	SuspectErrorPrefix = "error_prefix"      // starts by saying it is an error: "Error: …", "ERROR #5002: …", "An error occurred …", "Database error: …", "fatal: …"
	SuspectTraceback   = "traceback"         // starts with a stack trace: Python "Traceback (most recent call last):", Go "panic: …", Rust "thread '…' panicked at"
	SuspectException   = "exception"         // starts with an exception: "KeyError: 'x'", "java.net.ConnectException: …", "NotFoundError(404, …)", "Exception in thread …"
	SuspectFailedTo    = "failed_to"         // starts with "Failed to …", "Unable to …", "Could not …", "Cannot …", "Upload failed: …"
	SuspectHTTPStatus  = "http_status"       // an HTTP error status: "404 Not Found", "HTTP 500", "status code 503", an HTML error page
	SuspectErrorField  = "error_field"       // a JSON error envelope (error/errors/detail set) or an XML <Error> document
	SuspectStatusField = "status_field"      // a JSON envelope with success:false, ok:false, status "error"/"failed", or a 4xx/5xx status
	SuspectPermission  = "permission_denied" // permission denied, access denied, unauthorized, forbidden, invalid API key, expired token
	SuspectNotFound    = "not_found"         // "… not found", "no such file or directory", "does not exist", "unknown tool"
	SuspectNetwork     = "network_error"     // connection refused or reset, no such host, TLS verification failed, no healthy upstream
	SuspectTimeout     = "timeout"           // timed out, deadline exceeded
	SuspectRateLimited = "rate_limited"      // rate limit exceeded, too many requests, quota exceeded
	SuspectInvalid     = "invalid_input"     // starts with "Invalid …", "Missing required …", "Validation failed", "validating \"…\""
)

// SuspectReasons lists the suspect_reason vocabulary.
var SuspectReasons = []string{SuspectErrorPrefix, SuspectTraceback, SuspectException, SuspectFailedTo,
	SuspectHTTPStatus, SuspectErrorField, SuspectStatusField, SuspectPermission, SuspectNotFound,
	SuspectNetwork, SuspectTimeout, SuspectRateLimited, SuspectInvalid}

const (
	// hiddenHead is how much of a text the rules read.
	hiddenHead = 512
	// hiddenShort: only texts up to this long are judged on a phrase inside
	// their first line; longer ones only on how they start.
	hiddenShort = 600
	// hiddenEnvelope: a JSON error envelope is small; a larger JSON value
	// is a payload and is not judged.
	hiddenEnvelope = 16 << 10
)

// HiddenFailure judges a tool result that the protocol calls a success (a
// tools/call result, the object under "result"): it reports whether its
// content says the tool failed, and which pattern says so. It reads the
// first text block of content, then structuredContent. Pure and cheap: it
// reads the first few hundred bytes of the text and the top-level keys of a
// small JSON value.
func HiddenFailure(result gjson.Result) (suspect bool, reason string) {
	// One pass over the raw result: gjson would measure a long content
	// several times and unescape a long text whole.
	content, sc := members(result.Raw, "content", "structuredContent")
	raw, ok := firstText(content)
	return hiddenFailure(raw, ok, sc)
}

// hiddenFailure judges a tool result from the raw string literal of its
// first text block (ok: there is one) and the raw JSON of its
// structuredContent ("" when absent).
func hiddenFailure(raw string, ok bool, sc string) (suspect bool, reason string) {
	if ok {
		if len(raw) > hiddenEnvelope {
			suspect, reason = judgeText(headOfString(raw), true)
		} else if longPlain(raw) || plainLiteral(raw) {
			// judgeText would find nothing: not unescaped (plain.go)
		} else if jsonHeadPlain(raw) {
			// a long JSON payload judgeText would find nothing in (jsonhead.go)
		} else if head, bp, ok := unescapeHead(raw); ok {
			suspect, reason = judgeText(head, true) // the rest cannot change it (plain.go)
			releaseScratch(head, bp, &reason)
		} else if text, bp, ok := unescapeLiteral(raw); ok {
			suspect, reason = judgeText(text, false)
			releaseScratch(text, bp, &reason)
		} else {
			suspect, reason = judgeText(stringValue(raw), false)
		}
		if suspect {
			return true, reason
		}
	}
	if len(sc) > 0 && sc[0] == '{' && len(sc) <= hiddenEnvelope {
		return judgeEnvelope(gjson.Parse(sc))
	}
	return false, ""
}

// stringValue is the value of the JSON string literal raw (gjson's
// Parse(raw).Str): a literal without escapes is its inside, shared, not
// copied; one with escapes is unescaped by gjson.
func stringValue(raw string) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if in := raw[1 : n-1]; strings.IndexByte(in, '\\') < 0 && strings.IndexByte(in, '"') < 0 {
			return in
		}
	}
	return gjson.Parse(raw).Str
}

// scratchPool holds buffers for unescaped texts judged and then dropped.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, hiddenEnvelope); return &b }}

// unescapeLiteral is stringValue(raw) for a literal with escapes, written
// into a pooled buffer instead of a new string: gjson's result exactly
// (invalid escapes and control characters end the text, a \u with bad hex
// is U+0000, a lone surrogate U+FFFD). ok is false when raw is not one
// whole literal with escapes; the caller then uses stringValue. A true
// result must be handed back with releaseScratch.
func unescapeLiteral(raw string) (string, *[]byte, bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return "", nil, false
	}
	in := raw[1 : n-1]
	if strings.IndexByte(in, '\\') < 0 {
		return "", nil, false
	}
	// The literal must end at raw's last byte: no unescaped quote inside
	// (one after an even run of backslashes) and the last quote not
	// escaped.
	for off := 0; ; {
		j := strings.IndexByte(in[off:], '"')
		if j < 0 {
			break
		}
		j += off
		k := j
		for k > 0 && in[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return "", nil, false
		}
		off = j + 1
	}
	// in ends with an odd run of backslashes: the last quote is escaped.
	k := len(in)
	for k > 0 && in[k-1] == '\\' {
		k--
	}
	if (len(in)-k)%2 == 1 {
		return "", nil, false
	}
	bp := scratchPool.Get().(*[]byte)
	out := jsonstr.AppendUnescapedText((*bp)[:0], unsafe.Slice(unsafe.StringData(in), len(in)))
	*bp = out
	if len(out) == 0 {
		return "", bp, true
	}
	return unsafe.String(&out[0], len(out)), bp, true
}

// releaseScratch hands text's buffer back to the pool, first copying
// *reason if it is a part of text.
func releaseScratch(text string, bp *[]byte, reason *string) {
	if r := *reason; r != "" && text != "" {
		lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
		p := uintptr(unsafe.Pointer(unsafe.StringData(r)))
		if p >= lo && p < lo+uintptr(len(text)) {
			*reason = strings.Clone(r)
		}
	}
	scratchPool.Put(bp)
}

// firstText returns the raw text (a string literal) of the first text
// block of a content array.
func firstText(arr string) (string, bool) {
	if len(arr) < 2 || arr[0] != '[' {
		return "", false
	}
	for i := 1; i < len(arr); {
		for i < len(arr) && (arr[i] <= ' ' || arr[i] == ',') {
			i++
		}
		if i >= len(arr) || arr[i] == ']' {
			break
		}
		n := skipValue(arr[i:])
		if n == 0 {
			break
		}
		if el := arr[i : i+n]; el[0] == '{' {
			if typ, text := members(el, "type", "text"); typ == `"text"` {
				return text, len(text) >= 2 && text[0] == '"'
			}
		}
		i += n
	}
	return "", false
}

// members returns the raw JSON (string literals still escaped) of two
// top-level members of the object obj, "" for a missing one.
func members(obj, k1, k2 string) (v1, v2 string) {
	i := 0
	for i < len(obj) && obj[i] <= ' ' {
		i++
	}
	if i >= len(obj) || obj[i] != '{' {
		return "", ""
	}
	for i++; i < len(obj); {
		for i < len(obj) && (obj[i] <= ' ' || obj[i] == ',') {
			i++
		}
		if i >= len(obj) || obj[i] != '"' {
			break
		}
		k := scanString(obj[i:])
		if k == "" {
			break
		}
		i += len(k)
		for i < len(obj) && (obj[i] <= ' ' || obj[i] == ':') {
			i++
		}
		n := skipValue(obj[i:])
		if n == 0 {
			break
		}
		switch k = k[1 : len(k)-1]; k {
		case k1:
			v1 = obj[i : i+n]
		case k2:
			v2 = obj[i : i+n]
		}
		i += n
	}
	return v1, v2
}

// skipValue returns the length of the JSON value s starts with (0 if it is
// cut short).
func skipValue(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '"':
		return len(scanString(s))
	case '{', '[':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"':
				n := len(scanString(s[i:]))
				if n == 0 {
					return 0
				}
				i += n - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return 0
	}
	i := 0
	for i < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

// scanString returns the string literal s starts with ("" if unterminated).
func scanString(s string) string {
	for i := 1; i < len(s); {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return ""
		}
		i += j
		k := i - 1
		for s[k] == '\\' { // s[0] is the opening quote, so k stops there
			k--
		}
		if (i-1-k)%2 == 0 {
			return s[:i+1]
		}
		i++
	}
	return ""
}

// HiddenFailureText judges one text block of a successful tool result.
func HiddenFailureText(text string) (suspect bool, reason string) {
	if len(text) > hiddenEnvelope {
		return judgeText(text[:hiddenHead], true)
	}
	return judgeText(text, false)
}

// headOfString unescapes the first bytes of a long JSON string literal.
func headOfString(raw string) string {
	n := 2 * hiddenHead
	if n > len(raw)-1 {
		n = len(raw) - 1
	}
	cut := raw[:n]
	// Do not end inside an escape (\n, \", \uXXXX).
	for i := len(cut) - 1; i >= 0 && i >= len(cut)-6; i-- {
		if cut[i] != '\\' {
			continue
		}
		j := i
		for j >= 0 && cut[j] == '\\' {
			j--
		}
		if (i-j)%2 == 1 { // cut[i] starts an escape
			if esc := cut[i+1:]; esc == "" || esc[0] == 'u' && len(esc) < 5 {
				cut = cut[:i]
			}
		}
		break
	}
	return gjson.Parse(cut + `"`).Str
}

// judgeText applies the text rules. cut: text is only the head of a longer
// text (no JSON rule, no phrase rules).
func judgeText(text string, cut bool) (bool, string) {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	if t == "" {
		return false, ""
	}
	switch t[0] {
	case '{', '[':
		if cut {
			return false, ""
		}
		// A JSON text is judged as JSON when it is valid and by its first
		// line when it is not. The line rules are cheap (a head), so they
		// come first: when they find nothing, a list is no failure either
		// way, and neither is an object whose first members already rule
		// out an envelope (notEnvelope); only otherwise is the whole text
		// validated and walked.
		ls, lr := judgeLines(t, linesWhole)
		if !ls && (t[0] == '[' || notEnvelope(t)) {
			return false, ""
		}
		if gjson.Valid(t) {
			if t[0] == '[' {
				return false, "" // a list of results, whatever its items say
			}
			return judgeEnvelope(gjson.Parse(t))
		}
		return ls, lr
	case '<':
		return judgeMarkup(t)
	}
	if cut {
		return judgeLines(t, linesHead)
	}
	return judgeLines(t, linesWhole)
}

// How much of a text judgeLines is given.
const (
	linesWhole   = iota // the whole text
	linesHead           // the head of a longer text (no phrase rules) of more than one line
	linesHeadOne        // the head of a longer text that is one line
)

// judgeLines applies the rules of the first line to t (the text trimmed
// on the left, as judgeText trims it), of which mode says how much it is.
func judgeLines(t string, mode int) (bool, string) {
	t = stripDecoration(t)
	head := t
	if len(head) > hiddenHead {
		head = head[:hiddenHead]
	}
	line, next := head, ""
	if i := strings.IndexByte(head, '\n'); i >= 0 {
		line, next = head[:i], head[i+1:]
		if j := strings.IndexByte(next, '\n'); j >= 0 {
			next = next[:j]
		}
	}
	line = strings.TrimRight(line, " \t\r")
	if line == "" || isLogLine(line) || isLocation(line) {
		return false, "" // a log excerpt or a listing of matches, not the tool's own word
	}
	if plainLine(line) {
		return false, "" // no rule below can fire (plain.go)
	}
	var lowBuf [hiddenHead]byte // line is at most hiddenHead bytes: no copy on the heap
	l := lineCtx{line: line, low: lowerASCIIInto(lowBuf[:], line), next: next,
		oneLine: mode == linesHeadOne || mode == linesWhole && !strings.Contains(strings.TrimRight(t, " \t\r\n"), "\n"),
		short:   mode == linesWhole && len(t) <= hiddenShort}
	if r := l.start(); r != "" {
		return true, r
	}
	if !l.short || l.prose() {
		return false, ""
	}
	if r := l.httpInside(); r != "" {
		return true, r
	}
	if r := l.phrases(false); r != "" {
		return true, r
	}
	if r := l.invalidStart(); r != "" {
		return true, r
	}
	// "<program>: <message>" (ls: cannot access …, curl: (7) Failed to …,
	// json: cannot unmarshal …): the message is judged as a start.
	if sub, ok := l.afterProgram(); ok {
		if r := sub.start(); r != "" {
			return true, r
		}
		if r := sub.phrases(false); r != "" {
			return true, r
		}
	}
	return false, ""
}

// lineCtx is the first line of a text, with what the rules need around it.
type lineCtx struct {
	line, low string
	next      string // the second line, if any
	oneLine   bool   // the whole text is this line
	short     bool   // the text is short enough for phrase rules
	// proseKnown, isProse cache prose(): two rules ask it of one line.
	proseKnown, isProse bool
}

// start applies the rules about how a text starts.
func (l *lineCtx) start() string {
	line, low := l.line, l.low
	switch {
	case strings.HasPrefix(line, "Traceback (most recent call last)"),
		strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "fatal error: "),
		strings.HasPrefix(line, "goroutine ") && len(line) > 10 && isDigit(line[10]),
		strings.HasPrefix(line, "thread '") && strings.Contains(line, "' panicked at"):
		return SuspectTraceback
	}
	if l.errorPrefix() {
		return SuspectErrorPrefix
	}
	if l.exception() {
		return SuspectException
	}
	for _, p := range failedStarts {
		if strings.HasPrefix(low, p) {
			return SuspectFailedTo
		}
	}
	if l.failedAfterSubject() {
		return SuspectFailedTo
	}
	if r := l.httpStart(); r != "" {
		return r
	}
	return ""
}

var failedStarts = []string{"failed to ", "failed:", "failure:", "unable to ", "could not ", "couldn't ",
	"cannot ", "can't ", "can not "}

// errorNouns are the words that, after "Error ", make a heading or a
// metric's name, not a failure ("Error handling: …", "Error rate: 0.01").
var errorNouns = map[string]bool{"handling": true, "handler": true, "handlers": true, "reporting": true,
	"report": true, "reports": true, "logging": true, "log": true, "logs": true, "tracking": true,
	"monitoring": true, "code": true, "codes": true, "message": true, "messages": true, "rate": true,
	"rates": true, "budget": true, "budgets": true, "count": true, "counts": true, "type": true,
	"types": true, "analysis": true, "correction": true, "detection": true, "bars": true, "boundary": true,
	"boundaries": true, "page": true, "pages": true, "recovery": true, "propagation": true, "classes": true,
	"distribution": true, "metrics": true, "summary": true, "threshold": true, "level": true, "levels": true,
	"and": true, "&": true, "states": true, "state": true, "values": true, "value": true}

func (l *lineCtx) errorPrefix() bool {
	line, low := l.line, l.low
	if strings.HasPrefix(low, "error") {
		c := line[5:]
		switch {
		case c == "" || c == "." || c == "!":
			return l.oneLine
		case c[0] == ':':
			return !trivialValue(c[1:])
		case strings.HasPrefix(c, " :"), strings.HasPrefix(c, " - "), strings.HasPrefix(c, " – "), c[0] == '!':
			return true
		case strings.HasPrefix(c, " #") && len(c) > 2 && isDigit(c[2]):
			return true // InterSystems IRIS: ERROR #5002: …
		case len(c) > 1 && c[0] == ' ' && isDigit(c[1]):
			// MySQL: ERROR 1146 (42S02): …
			i := 1
			for i < len(c) && isDigit(c[i]) {
				i++
			}
			k := strings.IndexByte(c[i:], ':')
			return k >= 0 && k <= 12
		case c[0] == ' ':
			w := c[1:]
			if i := strings.IndexAny(w, " :,.(\t"); i >= 0 {
				w = w[:i]
			}
			return w != "" && !errorNouns[lowerASCII(w)] && strings.Contains(c, ":") && !trivialValue(after(c, ':'))
		}
		return false
	}
	for _, p := range []string{"[error]", "[err]", "[fatal]"} {
		if strings.HasPrefix(low, p) {
			return l.next == "" || l.next[0] != '[' // a build log tags every line
		}
	}
	for _, p := range []string{"npm err!", "fatal:", "fatal error", "unexpected error", "unknown error",
		"internal error", "something went wrong"} {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	if strings.HasPrefix(low, "sorry") {
		for _, w := range []string{"error", "failed", "unable", "could not", "couldn't"} {
			if strings.Contains(low, w) {
				return true
			}
		}
	}
	if anError(low) {
		return true
	}
	if strings.HasPrefix(low, "msg ") && strings.Contains(low, ", level ") {
		return true // SQL Server: Msg 208, Level 16, State 1
	}
	return wordsThenError(low)
}

// anError: "An error occurred", "An unexpected error occurred (…)".
func anError(low string) bool {
	var rest string
	switch {
	case strings.HasPrefix(low, "an error"):
		rest = low[8:]
	case strings.HasPrefix(low, "an ") || strings.HasPrefix(low, "a "):
		w := low[strings.IndexByte(low, ' ')+1:]
		i := strings.IndexByte(w, ' ')
		if i < 0 || !strings.HasPrefix(w[i:], " error") {
			return false
		}
		rest = w[i+6:]
	default:
		return false
	}
	if rest == "" || rest[0] == ':' || rest[0] == '(' || rest[0] == '.' {
		return true
	}
	for _, w := range []string{" occurred", " occured", " has ", " was ", " happened", " while", " when", " during", " (", ":"} {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

// wordsThenError: up to four words, then "error:" ("Database error: …",
// "MCP error -32603: …", "Kimai API error (400): …"), unless the value is a
// number ("Standard error: 0.12").
func wordsThenError(low string) bool {
	words := 0
	for i := 0; i < len(low) && i < 60; {
		j := strings.IndexByte(low[i:], ' ')
		var w string
		if j < 0 {
			w = low[i:]
		} else {
			w = low[i : i+j]
		}
		if strings.HasPrefix(w, "error") && words > 0 {
			c := low[i+5:]
			if c != "" && c[0] == ' ' && len(c) > 1 && (c[1] == '(' || c[1] == '-' || isDigit(c[1])) {
				// a code between "error" and the colon
				k := strings.IndexByte(c, ':')
				if k < 0 || k > 16 {
					return false
				}
				c = c[k:]
			}
			return c != "" && c[0] == ':' && !trivialValue(c[1:])
		}
		if strings.IndexByte(w, ':') >= 0 || strings.IndexByte(w, '"') >= 0 || words >= 4 {
			return false
		}
		words++
		if j < 0 {
			return false
		}
		i += j + 1
	}
	return false
}

// failedAfterSubject: "Upload failed: …", "Tool 'x' failed: …", "Task
// failed after 3 attempts: …", or a one-line "Upload failed.".
func (l *lineCtx) failedAfterSubject() bool {
	low := l.low
	words := 0
	for i := 0; i < len(low); {
		j := strings.IndexByte(low[i:], ' ')
		w := low[i:]
		if j >= 0 {
			w = low[i : i+j]
		}
		if words > 0 && (w == "failed" || w == "failed:" || w == "failed." || strings.HasPrefix(w, "failed:")) {
			rest := low[i+6:]
			return strings.HasPrefix(rest, ":") || strings.Contains(rest, ": ") ||
				(l.oneLine && (rest == "" || rest == "."))
		}
		if words == 0 && w != "" && isDigit(w[0]) {
			return false // "3 failed, 211 passed"
		}
		if strings.IndexByte(w, ':') >= 0 || words >= 3 || j < 0 {
			return false
		}
		words++
		i += j + 1
	}
	return false
}

// exception: a text that starts with an exception's name.
func (l *lineCtx) exception() bool {
	line, low := l.line, l.low
	for _, p := range []string{"exception in thread", "unhandled exception", "unhandled rejection",
		"unhandledpromiserejection", "uncaught "} {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	// pydantic: "1 validation error for SearchParams"
	i := 0
	for i < len(low) && isDigit(low[i]) {
		i++
	}
	if i > 0 && (strings.HasPrefix(low[i:], " validation error for ") || strings.HasPrefix(low[i:], " validation errors for ")) {
		return true
	}
	i = 0
	for i < len(line) && isTokenChar(line[i]) {
		i++
	}
	if i == 0 || !isLetter(line[0]) {
		return false
	}
	tok, rest := line[:i], line[i:]
	switch {
	case rest == "" || rest == ".":
		if !l.oneLine {
			return false
		}
	case rest[0] == ':' || rest[0] == '(':
	default:
		return false
	}
	// The last component (and, for a Java inner class, the one before).
	// tok is token characters only (ASCII): its non-empty fields between
	// '.' and '$' are read from the end, without a slice of them.
	var last [2]string
	n, fields, end := 0, 0, len(tok)
	for j := len(tok) - 1; j >= -1; j-- {
		if j < 0 || tok[j] == '.' || tok[j] == '$' {
			if j+1 < end {
				if n < len(last) {
					last[n] = tok[j+1 : end]
					n++
				}
				fields++
			}
			end = j
		}
	}
	for _, p := range last[:n] {
		if strings.HasSuffix(p, "Error") || strings.HasSuffix(p, "Exception") ||
			(strings.HasSuffix(p, "Timeout") && len(p) > len("Timeout")) {
			return p != "Error" || fields > 1 // a bare "Error" is the error_prefix rule's
		}
	}
	return false
}

var invalidStarts = []string{"invalid ", "missing required", "validation failed", "validating \"", "required parameter"}

func (l *lineCtx) invalidStart() string {
	for _, p := range invalidStarts {
		if strings.HasPrefix(l.low, p) {
			return SuspectInvalid
		}
	}
	return ""
}

// httpReasons are HTTP error reason phrases, lower case.
var httpReasons = []string{"bad request", "unauthorized", "payment required", "forbidden", "not found",
	"method not allowed", "not acceptable", "request timeout", "conflict", "gone", "payload too large",
	"unsupported media type", "unprocessable entity", "unprocessable content", "too many requests",
	"internal server error", "not implemented", "bad gateway", "service unavailable", "gateway timeout",
	"gateway time-out", "client error", "server error"}

// httpStart: "HTTP 500 …", "HTTP/1.1 503 …", "HTTP Error 429: …", "404 Not
// Found", "Service Unavailable: …", "Gateway Timeout".
func (l *lineCtx) httpStart() string {
	// The rules look at the first bytes only; prose (a pass over the
	// line) is asked only of a line they match.
	if r := httpStartRule(l.low); r != "" && !l.prose() {
		return r
	}
	return ""
}

// httpStartRule is httpStart's rules, on a lower-cased line: "http …" and
// "<status> <reason>" start with 'h' and a digit, no reason phrase with
// either.
func httpStartRule(low string) string {
	if low == "" {
		return ""
	}
	switch c := low[0]; {
	case c == 'h':
		for _, p := range []string{"http error ", "http/1.0 ", "http/1.1 ", "http/2 ", "http/3 ", "http "} {
			if strings.HasPrefix(low, p) && errorStatusAt(low, len(p)) {
				return SuspectHTTPStatus
			}
		}
		return ""
	case c == '4' || c == '5':
		if errorStatusAt(low, 0) && reasonAt(low, 4) {
			return SuspectHTTPStatus
		}
		return ""
	}
	for _, r := range httpReasons {
		if r[0] == low[0] && strings.HasPrefix(low, r) && terminator(low[len(r):]) && r != "not found" && r != "unauthorized" && r != "forbidden" && r != "conflict" && r != "gone" {
			if r == "too many requests" {
				return SuspectRateLimited
			}
			return SuspectHTTPStatus
		}
	}
	return ""
}

// httpInside: an error status inside the first line of a short text,
// after a word that introduces one ("status code 503", "returned 502") or
// followed by its reason phrase ("… 504 Gateway Timeout …").
func (l *lineCtx) httpInside() string {
	low := l.low
	for i := 0; i+3 <= len(low); i++ {
		if low[i] != '4' && low[i] != '5' || i > 0 && isDigit(low[i-1]) || !errorStatusAt(low, i) || quoted(low, i) {
			continue
		}
		before := low[:i]
		for _, p := range statusIntros {
			if strings.HasSuffix(before, p) {
				return SuspectHTTPStatus
			}
		}
		if i+4 < len(low) && low[i+3] == ' ' && reasonAt(low, i+4) {
			return SuspectHTTPStatus
		}
	}
	return ""
}

var statusIntros = []string{"status code ", "status: ", "status ", "returned ", "responded with ", "(http ", " http ", "http error "}

// errorStatusAt: a 4xx or 5xx status at low[i:], not part of a longer number.
func errorStatusAt(low string, i int) bool {
	if i+3 > len(low) || (low[i] != '4' && low[i] != '5') || !isDigit(low[i+1]) || !isDigit(low[i+2]) {
		return false
	}
	if i+3 == len(low) {
		return true
	}
	if c := low[i+3]; c == '.' || c == ',' {
		return i+4 == len(low) || !isDigit(low[i+4]) // "503." ends a sentence; "503.2" is a number
	}
	return !isDigit(low[i+3])
}

func reasonAt(low string, i int) bool {
	if i > len(low) {
		return false
	}
	for _, r := range httpReasons {
		if i < len(low) && r[0] == low[i] && strings.HasPrefix(low[i:], r) {
			return true
		}
	}
	return false
}

// terminator: what may follow a phrase that is the whole message.
func terminator(rest string) bool {
	if rest == "" {
		return true
	}
	switch rest[0] {
	case ':', '.', ',', ';', '!', '(':
		return true
	case ' ':
		return strings.HasPrefix(rest, " - ") || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, " – ")
	}
	return false
}

// prose: a definition or an explanation of an error, not an error (the
// line holds " is a ", " means ", " indicates ", " refers to " or "what
// does "). One pass over the spaces of the line, remembered.
func (l *lineCtx) prose() bool {
	if !l.proseKnown {
		l.proseKnown, l.isProse = true, proseLine(l.low)
	}
	return l.isProse
}

func proseLine(low string) bool {
	for i := 0; ; {
		j := strings.IndexByte(low[i:], ' ')
		if j < 0 {
			break
		}
		i += j
		if r := low[i+1:]; r != "" {
			switch r[0] { // the words' first letters, so most spaces need no comparison
			case 'i':
				if strings.HasPrefix(r, "is a ") || strings.HasPrefix(r, "indicates ") {
					return true
				}
			case 'm':
				if strings.HasPrefix(r, "means ") {
					return true
				}
			case 'r':
				if strings.HasPrefix(r, "refers to ") {
					return true
				}
			}
		}
		i++
	}
	return strings.Contains(low, "what does ")
}

// phrase classes, lower case, in the order they are tried.
var hiddenPhrases = []struct {
	reason  string
	phrases []string
}{
	{SuspectPermission, []string{"permission denied", "access denied", "not authorized", "unauthorized",
		"forbidden", "insufficient permission", "insufficient scope", "invalid api key", "invalid token",
		"token has expired", "token expired", "expired token", "token is invalid", "bad credentials",
		"authentication failed", "authentication required", "not accessible by", "eacces", "eperm",
		"operation not permitted", "invalid credentials", "credentials not found", "not allowed to"}},
	{SuspectRateLimited, []string{"rate limit exceeded", "rate limited", "rate-limited", "too many requests",
		"quota exceeded", "exceeded your", "limit reached", "throttl"}},
	{SuspectTimeout, []string{"timed out", "timeout exceeded", "context deadline exceeded", "deadline exceeded", "etimedout", "timeout of ",
		"ms exceeded", "aborted due to timeout", "read timeout"}},
	{SuspectNetwork, []string{"connection refused", "econnrefused", "connection reset", "econnreset",
		"socket hang up", "no such host", "enotfound", "name or service not known", "could not resolve host",
		"network is unreachable", "ehostunreach", "certificate verify failed", "certificate signed by unknown authority",
		"net::err_", "connection closed", "failed to establish a new connection", "no healthy upstream",
		"upstream connect error", "broken pipe", "unexpected eof"}},
	{SuspectNotFound, []string{"no such file or directory", "enoent", "not found", "does not exist",
		"doesn't exist", "no such table", "no such container", "no such key", "no such index", "no such bucket",
		"unknown tool", "command not found", "no rows in result set"}},
	{SuspectHTTPStatus, []string{"service unavailable", "temporarily unavailable", "bad gateway", "gateway timeout",
		"internal server error"}},
}

type phraseEntry struct {
	text  string
	class int // index in hiddenPhrases
}

// phraseIndex holds the phrases by their first byte.
var phraseIndex = func() (ix [256][]phraseEntry) {
	for c, class := range hiddenPhrases {
		for _, p := range class.phrases {
			ix[p[0]] = append(ix[p[0]], phraseEntry{p, c})
		}
	}
	return ix
}()

// phrases finds a failure phrase where the line states it: in its first
// clause (before the first ": " or ". "), or right after a ": " (Go's
// "open x: permission denied"). anywhere: any unquoted place (the message
// of a JSON error envelope). A phrase starts a word and is not quoted; of
// several, the earliest class in hiddenPhrases wins.
func (l *lineCtx) phrases(anywhere bool) string {
	low := l.low
	clause := len(low)
	for _, sep := range []string{": ", ". ", "; "} {
		// Only a place before clause counts: one ends by clause+len(sep)-1.
		if i := strings.Index(low[:min(len(low), clause+len(sep)-1)], sep); i >= 0 && i < clause {
			clause = i
		}
	}
	if i := indexSpacedDash(low); i >= 0 && i < clause {
		clause = i
	}
	best := len(hiddenPhrases)
	for at := 0; at < len(low); at++ {
		cands := phraseIndex[low[at]]
		if len(cands) == 0 || at > 0 && isLetter(low[at-1]) {
			continue
		}
		if !anywhere && at >= clause && (at < 2 || low[at-2:at] != ": ") {
			continue
		}
		for _, p := range cands {
			if p.class < best && strings.HasPrefix(low[at:], p.text) && !quoted(low, at) {
				best = p.class
			}
		}
		if best == 0 {
			break
		}
	}
	if best < len(hiddenPhrases) {
		return hiddenPhrases[best].reason
	}
	return ""
}

// indexSpacedDash is strings.Index(s, " — ") without stopping at every
// space: it looks for the dash (a rare first byte), then the space before.
func indexSpacedDash(s string) int {
	for off := 0; ; {
		j := strings.Index(s[off:], "— ")
		if j < 0 {
			return -1
		}
		if j += off; j > 0 && s[j-1] == ' ' {
			return j - 1
		}
		off = j + 1
	}
}

// hasByteOf: s holds one of the (ASCII) bytes of set.
func hasByteOf(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) >= 0 {
			return true
		}
	}
	return false
}

// afterProgram splits "<program>: <message>" (a single word before the
// first ": "), dropping curl's "(7) " exit code.
func (l *lineCtx) afterProgram() (lineCtx, bool) {
	i := strings.Index(l.line, ": ")
	if i <= 0 || i > 40 || hasByteOf(l.line[:i], " \t\"'") {
		return lineCtx{}, false
	}
	rest := strings.TrimLeft(l.line[i+2:], " ")
	if len(rest) > 2 && rest[0] == '(' {
		if j := strings.Index(rest, ") "); j > 0 && j < 6 {
			rest = rest[j+2:]
		}
	}
	if rest == "" {
		return lineCtx{}, false
	}
	// rest is a suffix of l.line, so its lower-cased form is the same suffix of l.low.
	sub := lineCtx{line: rest, low: l.low[len(l.line)-len(rest):], next: l.next, oneLine: l.oneLine, short: l.short}
	return sub, true
}

// quoted: the phrase at low[at:] is inside quotes (a message named, not
// said): right after a quote, or after an odd number of double quotes or
// backticks.
func quoted(low string, at int) bool {
	if at == 0 {
		return false
	}
	switch low[at-1] {
	case '"', '\'', '`':
		return true
	}
	return strings.Count(low[:at], `"`)%2 == 1 || strings.Count(low[:at], "`")%2 == 1
}

// trivialValue: the value after "Error:" says there was none ("none", "0").
func trivialValue(v string) bool {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimRight(v, ". ")
	switch lowerASCII(v) {
	case "none", "null", "nil", "n/a", "false", "no", "-", "ok", "0":
		return true
	case "":
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) && !strings.ContainsRune(".,-+%eE ", rune(v[i])) {
			return false
		}
	}
	return true
}

func after(s string, c byte) string {
	if i := strings.IndexByte(s, c); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// stripDecoration drops what precedes the message: an emoji or symbol
// (❌, ⚠️, ✖), markdown bold.
func stripDecoration(t string) string {
	for range 4 {
		switch {
		case strings.HasPrefix(t, "**"), strings.HasPrefix(t, "__"):
			t = t[2:]
		case len(t) > 0 && t[0] >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(t)
			if !isDecoration(r) {
				return t
			}
			t = strings.TrimLeft(t[n:], " \ufe0f")
		default:
			return t
		}
	}
	return t
}

func isDecoration(r rune) bool {
	switch r {
	case '❌', '✖', '✗', '✘', '⚠', '🚫', '⛔', '‼', '❗', '🔴', '💥', '🛑':
		return true
	}
	return false
}

// isLogLine: a line that starts like a log record (a timestamp, a syslog or
// klog header, a level followed by a date), or an access log line.
func isLogLine(line string) bool {
	n := len(line)
	switch {
	case n >= 10 && isDigit(line[0]) && isDigit(line[1]) && isDigit(line[2]) && isDigit(line[3]) &&
		(line[4] == '-' || line[4] == '/') && isDigit(line[5]) && isDigit(line[6]):
		return true // 2026-11-12…
	case n >= 8 && isDigit(line[0]) && isDigit(line[1]) && line[2] == ':' && isDigit(line[3]) && isDigit(line[4]):
		return true // 09:12:03 …
	case n >= 6 && strings.ContainsRune("IWEF", rune(line[0])) && isDigit(line[1]) && isDigit(line[2]) &&
		isDigit(line[3]) && isDigit(line[4]) && line[5] == ' ':
		return true // klog: E1112 09:12:03
	case n >= 2 && line[0] == '[' && (isDigit(line[1]) || monthOrDay(line[1:])):
		return true
	case monthOrDay(line) && n > 4 && line[3] == ' ' && (isDigit(line[4]) || line[4] == ' '):
		return true // syslog: Nov 12 09:12:01
	case strings.HasPrefix(line, "level=") || strings.HasPrefix(line, "time=") || strings.HasPrefix(line, "ts="):
		return true
	}
	for _, lv := range []string{"ERROR", "WARN", "WARNING", "INFO", "DEBUG", "TRACE", "FATAL", "CRITICAL"} {
		if strings.HasPrefix(line, lv) {
			rest := strings.TrimLeft(line[len(lv):], " ")
			if len(rest) < len(line)-len(lv) && rest != "" && (rest[0] == '[' || isLogLine(rest)) {
				return true // ERROR [2026-11-12 …] …
			}
		}
	}
	// 203.0.113.9 - - [12/Nov/2026 …
	// (The first " - " at 15 or before is the first of line[:18].)
	if line != "" && isDigit(line[0]) {
		if i := strings.Index(line[:min(len(line), 18)], " - "); i >= 7 && i <= 15 && strings.Count(line[:i], ".") == 3 {
			return true
		}
	}
	return false
}

func monthOrDay(s string) bool {
	if len(s) < 3 {
		return false
	}
	switch s[:3] {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
		"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
		return true
	}
	return false
}

// isLocation: a line that starts with a file location, as grep, compilers
// and linters print them (path:12: …, path(14,9): …).
func isLocation(line string) bool {
	i := 0
	for i < len(line) && line[i] != ' ' && line[i] != ':' && line[i] != '(' && line[i] != '\t' {
		i++
	}
	if i == 0 || i+2 > len(line) {
		return false
	}
	rest := line[i+1:]
	switch line[i] {
	case ':':
		j := 0
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		return j > 0 && j < len(rest) && rest[j] == ':'
	case '(':
		j := strings.Index(rest, "):")
		if j <= 0 {
			return false
		}
		for _, c := range rest[:j] {
			if !isDigit(byte(c)) && c != ',' {
				return false
			}
		}
		return true
	}
	return false
}

// judgeMarkup: an HTML error page (its title is an error status) or an XML
// <Error> document (S3 and its kin).
func judgeMarkup(t string) (bool, string) {
	head := t
	if len(head) > hiddenHead {
		head = head[:hiddenHead]
	}
	low := lowerASCII(head)
	root := low
	if strings.HasPrefix(root, "<?xml") {
		if i := strings.Index(root, "?>"); i >= 0 {
			root = strings.TrimLeft(root[i+2:], " \t\r\n")
		}
	}
	if strings.HasPrefix(root, "<error>") {
		return true, SuspectErrorField
	}
	i := strings.Index(low, "<title>")
	if i < 0 {
		return false, ""
	}
	title := low[i+7:]
	if j := strings.Index(title, "</title>"); j >= 0 {
		title = title[:j]
	}
	for k := 0; k+3 <= len(title); k++ {
		if (k == 0 || !isDigit(title[k-1])) && errorStatusAt(title, k) {
			rest := title[k+3:]
			if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " ") && reasonAt(rest, 1) {
				return true, SuspectHTTPStatus
			}
		}
	}
	return false, ""
}

// envelopeKeys are the keys an error envelope is made of (lower case).
var envelopeKeys = map[string]bool{"error": true, "err": true, "errors": true, "error_message": true,
	"errormessage": true, "errormessages": true, "error_description": true, "error_code": true,
	"errorcode": true, "error_type": true, "errortype": true, "error_details": true, "exception": true,
	"fault": true, "message": true, "msg": true, "messages": true, "detail": true, "details": true,
	"reason": true, "code": true, "status": true, "statuscode": true, "status_code": true,
	"statustext": true, "status_text": true, "http_status": true, "httpstatus": true, "success": true,
	"ok": true, "type": true, "title": true, "instance": true, "hint": true, "help": true,
	"documentation_url": true, "doc_url": true, "docs_url": true, "more_info": true, "help_url": true,
	"link": true, "request_id": true, "requestid": true, "trace_id": true, "traceid": true,
	"correlation_id": true, "correlationid": true, "timestamp": true, "time": true, "path": true,
	"method": true, "url": true, "retry_after": true, "retryafter": true, "headers": true, "body": true,
	"query": true, "tool": true, "cause": true, "stack": true, "stacktrace": true, "object": true,
	"warning": true, "warnings": true}

// errorKeys are the envelope keys that carry the error itself.
var errorKeys = map[string]bool{"error": true, "err": true, "error_message": true, "errormessage": true,
	"errormessages": true, "error_description": true, "exception": true, "fault": true}

// judgeEnvelope judges a JSON object: is it an error envelope? A strong
// sign (error set, success or ok false, status "error") counts with at
// most two other keys of data; a weak one (errors listed, status "failed",
// a 4xx/5xx status, a lone detail or message) only when every key belongs
// to an envelope. "error": null, false, "" or {}, and "errors": [] are not
// set; a key whose value is empty carries no data.
func judgeEnvelope(v gjson.Result) (bool, string) {
	var (
		domain                       int
		strongErr, strongStatus      bool
		weakErr, weakStatus, dataSet bool
		detail, message              string
	)
	v.ForEach(func(k, x gjson.Result) bool {
		key := k.Str
		if !isLowerASCII(key) {
			key = lowerASCII(key)
		}
		if emptyValue(x) {
			return true
		}
		if !envelopeKeys[key] {
			if key == "data" {
				dataSet = true
			}
			domain++
			return true
		}
		switch {
		case errorKeys[key]:
			if errorSet(x) {
				strongErr = true
			}
		case key == "errors":
			if errorSet(x) {
				weakErr = true
			}
		case key == "success" || key == "ok":
			if x.Type == gjson.False {
				strongStatus = true
			}
		case key == "status" || key == "state" || key == "result":
			if x.Type == gjson.String {
				switch lowerASCII(x.Str) {
				case "error", "err":
					strongStatus = true
				case "failed", "failure", "fail":
					weakStatus = true
				}
			}
			if statusValue(x) {
				weakStatus = true
			}
		case key == "statuscode" || key == "status_code" || key == "http_status" || key == "httpstatus" || key == "code":
			if statusValue(x) {
				weakStatus = true
			}
		case key == "object" || key == "type":
			if x.Type == gjson.String && strings.EqualFold(x.Str, "error") {
				strongErr = true
			}
		case key == "detail":
			if x.Type == gjson.String || x.IsArray() {
				detail = x.Raw
			}
		case key == "message" || key == "msg":
			if x.Type == gjson.String {
				message = x.Str
			}
		}
		return true
	})
	switch {
	case strongErr && domain <= 2:
		return true, SuspectErrorField
	case strongStatus && domain <= 2:
		return true, SuspectStatusField
	case domain > 0:
		return false, ""
	case weakErr && !dataSet:
		return true, SuspectErrorField
	case weakStatus:
		return true, SuspectStatusField
	case detail != "":
		return true, SuspectErrorField // FastAPI, Django REST: {"detail": "Not Found"}
	case message != "":
		if ok, _ := judgeMessage(message); ok {
			return true, SuspectErrorField
		}
	}
	return false, ""
}

// judgeMessage: the lone message of an envelope ({"message":"Forbidden"}),
// judged as a text whose failure phrases may stand anywhere.
func judgeMessage(m string) (bool, string) {
	if len(m) > hiddenShort {
		m = m[:hiddenShort]
	}
	if i := strings.IndexByte(m, '\n'); i >= 0 {
		m = m[:i]
	}
	m = strings.TrimSpace(m)
	if m == "" {
		return false, ""
	}
	l := lineCtx{line: m, low: lowerASCII(m), oneLine: true, short: true}
	if r := l.start(); r != "" {
		return true, r
	}
	if r := l.phrases(true); r != "" {
		return true, r
	}
	for _, r := range httpReasons {
		if strings.HasPrefix(l.low, r) && terminator(l.low[len(r):]) {
			return true, SuspectHTTPStatus
		}
	}
	return false, ""
}

// emptyValue: null, "", [], {}, or an object whose values are all null.
func emptyValue(x gjson.Result) bool {
	switch {
	case x.Type == gjson.Null:
		return true
	case x.Type == gjson.String:
		return x.Str == ""
	case x.IsArray():
		return len(strings.TrimSpace(x.Raw)) <= 2 || !x.Get("0").Exists()
	case x.IsObject():
		empty := true
		x.ForEach(func(_, y gjson.Result) bool {
			if y.Type != gjson.Null {
				empty = false
			}
			return empty
		})
		return empty
	}
	return false
}

// errorSet: an error value that says there was an error (not false, 0,
// "none").
func errorSet(x gjson.Result) bool {
	switch x.Type {
	case gjson.True:
		return true
	case gjson.String:
		switch lowerASCII(x.Str) {
		case "", "none", "null", "nil", "false", "0", "ok", "n/a":
			return false
		}
		return true
	case gjson.JSON:
		return !emptyValue(x)
	}
	return false // numbers are counts, false is false
}

// statusValue: a 4xx or 5xx status, as a number or a numeric string.
func statusValue(x gjson.Result) bool {
	var n int64
	switch x.Type {
	case gjson.Number:
		n = x.Int()
	case gjson.String:
		if len(x.Str) != 3 || !isDigit(x.Str[0]) || !isDigit(x.Str[1]) || !isDigit(x.Str[2]) {
			return false
		}
		n = x.Int()
	default:
		return false
	}
	return n >= 400 && n <= 599
}

// lowerASCII lower-cases ASCII letters only, so that byte offsets stay
// the same as in s.
func lowerASCII(s string) string {
	if isLowerASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lowerASCIIInto is lowerASCII written into buf when s fits, so that the
// caller's stack holds the copy. The result aliases buf: it must not outlive
// it (escape analysis moves buf to the heap if it does).
func lowerASCIIInto(buf []byte, s string) string {
	if isLowerASCII(s) {
		return s
	}
	if len(s) > len(buf) {
		return lowerASCII(s)
	}
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return unsafe.String(&b[0], len(b))
}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isTokenChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '$'
}
