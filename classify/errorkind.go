package classify

import (
	"encoding/binary"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"mcptrace/internal/jsonobj"
	"mcptrace/schema"
)

// Error kinds (column error_kind): what kind of failure an exchange was, the
// same whichever SDK or protocol version reported it (a validation failure
// is "validation" as a -32602, as the Go SDK's isError text and as
// FastMCP's). A fixed vocabulary; the package documentation has the table.
const (
	KindValidation          = "validation"
	KindUnknownTool         = "unknown_tool"
	KindUnknownMethod       = "unknown_method"
	KindNotFound            = "not_found"
	KindAuth                = "auth"
	KindRateLimit           = "rate_limit"
	KindTimeout             = "timeout"
	KindCancelled           = "cancelled"
	KindSession             = "session"
	KindVersion             = "version"
	KindHeaderMismatch      = "header_mismatch"
	KindCapability          = "capability"
	KindElicitationRequired = "elicitation_required"
	KindParse               = "parse"
	KindInvalidRequest      = "invalid_request"
	KindInternal            = "internal"
	KindUnavailable         = "unavailable"
	KindNetwork             = "network"
	KindNoResponse          = "no_response"
	KindInvalidResponse     = "invalid_response"
	KindTool                = "tool"
	KindOther               = "other"
)

// ErrorKinds lists every error kind.
var ErrorKinds = []string{KindValidation, KindUnknownTool, KindUnknownMethod, KindNotFound, KindAuth,
	KindRateLimit, KindTimeout, KindCancelled, KindSession, KindVersion, KindHeaderMismatch, KindCapability,
	KindElicitationRequired, KindParse, KindInvalidRequest, KindInternal, KindUnavailable, KindNetwork,
	KindNoResponse, KindInvalidResponse, KindTool, KindOther}

// KindFacts is what an error kind is read from.
type KindFacts struct {
	Outcome   string
	ErrorType string // the verdict's error_type: set when the exchange failed
	Code      *int64 // the JSON-RPC error code, also one riding on an HTTP error
	// HTTPStatus is the final attempt's status (or the one a log
	// reported); 0 when none came.
	HTTPStatus int
	// Failure is, for NO_RESPONSE, the transport failure kind (timeout,
	// connection_refused, reset, client_abort) and, for STREAM_INCOMPLETE,
	// how the stream ended (reset, timeout, client_closed, complete).
	Failure string
	// OnSession: the request carried a session id, in a version that has
	// sessions (before 2026-07-28).
	OnSession bool
	// Text is the JSON-RPC error message, the text of an isError result,
	// the body of an HTTP error that carried no JSON-RPC error, or the
	// message a log reported.
	Text string
}

// ErrorKind gives the kind of failure; "" for an exchange that did not
// fail (TOOL_SUCCESS, SUCCESS, INPUT_REQUIRED, and UNKNOWN without a
// reported failure). It is pure: the same facts always give the same kind.
func ErrorKind(f KindFacts) string {
	switch f.Outcome {
	case ToolSuccess, Success, InputRequired:
		return ""
	case Cancelled:
		return KindCancelled
	case MalformedJSON, InvalidEnvelope, InvalidToolResult, InvalidResult:
		return KindInvalidResponse
	case NoResponse:
		switch f.Failure {
		case schema.FailureTimeout:
			return KindTimeout
		case schema.FailureConnectionRefused, schema.FailureReset:
			return KindNetwork
		case schema.FailureClientAbort:
			return KindCancelled
		}
		if k := textKind(f.Text); k != "" {
			return k
		}
		return KindNoResponse
	case StreamIncomplete:
		switch f.Failure {
		case schema.StreamTimeout:
			return KindTimeout
		case schema.StreamReset:
			return KindNetwork
		case schema.StreamClientClosed:
			return KindCancelled
		}
		return KindNoResponse
	case ToolError:
		// TS1 turns an McpError thrown inside a tool into the text
		// "MCP error <code>: <message>": read it as that error.
		if code, rest, ok := embeddedCode(f.Text); ok {
			if k := codeKind(code, rest); k != KindOther {
				return k
			}
		}
		if k := textKind(f.Text); k != "" {
			return k
		}
		return KindTool
	case JSONRPCError:
		if f.Code != nil {
			return codeKind(*f.Code, f.Text)
		}
		return orDefault(textKind(f.Text), KindOther)
	case HTTPError:
		return httpKind(f)
	}
	// UNKNOWN: a kind only when the log reported a failure.
	if f.ErrorType == "" {
		return ""
	}
	if f.ErrorType == "timeout" {
		return KindTimeout
	}
	if f.Code != nil {
		return codeKind(*f.Code, f.Text)
	}
	return orDefault(textKind(f.Text), KindOther)
}

// codeKind is the kind of a JSON-RPC error code. Codes with one meaning
// decide alone; for the others the message decides, and the code gives the
// default.
func codeKind(code int64, text string) string {
	switch code {
	case -32700:
		return KindParse
	case -32601:
		return KindUnknownMethod
	case -32002: // resource not found, up to 2025-11-25
		return KindNotFound
	case -32020:
		return KindHeaderMismatch
	case -32021:
		return KindCapability
	case -32022:
		return KindVersion
	case -32042: // URL elicitation required (2025-11-25)
		return KindElicitationRequired
	case -32600:
		// The SDKs' transport rejections use -32600 for a missing or
		// unknown session (PY1 "Session not found").
		if textKind(text) == KindSession {
			return KindSession
		}
		return KindInvalidRequest
	case -32602:
		// Invalid params covers the unknown tool (Go SDK "unknown tool"),
		// the unknown prompt or resource (2026: resource not found), and
		// the legacy initialize's "Unsupported protocol version".
		switch k := textKind(text); k {
		case KindUnknownTool, KindNotFound, KindVersion:
			return k
		}
		return KindValidation
	case 408: // PY1's request timeout (a local McpError code)
		return KindTimeout
	}
	k := textKind(text)
	switch {
	case k != "":
		return k
	case code == -32603:
		return KindInternal
	case code == -32001: // TS1 and PY2 RequestTimeout
		return KindTimeout
	case code == 32600: // PY1's 404 "Session terminated" (a positive code, a bug)
		return KindSession
	}
	return KindOther
}

// httpKind is the kind of an HTTP_ERROR. Statuses with one meaning decide
// alone; other 4xx look at the body's JSON-RPC code, then its text.
func httpKind(f KindFacts) string {
	st := f.HTTPStatus
	switch {
	case st == 401 || st == 403 || st == 407:
		return KindAuth
	case st == 408 || st == 504:
		return KindTimeout
	case st == 429:
		return KindRateLimit
	case st == 404 && f.OnSession:
		return KindSession
	case st == 500:
		return KindInternal
	case st == 501:
		return KindUnknownMethod
	case st >= 500:
		return KindUnavailable
	}
	if f.Code != nil {
		if k := codeKind(*f.Code, f.Text); k != KindOther {
			return k
		}
	}
	if k := textKind(f.Text); k != "" {
		return k
	}
	switch {
	case st == 404 || st == 410:
		return KindNotFound
	case st == 422:
		return KindValidation
	case st >= 400 && st <= 499:
		return KindInvalidRequest
	}
	return KindOther
}

// kindPattern is one kind's error texts: phrases looked for as they are
// (in the lower-cased text), a regular expression for the few that need
// structure (run only on a text holding one of its needs, so most texts
// never reach a regular expression), and the HTTP statuses a text may name
// ("HTTP 401").
type kindPattern struct {
	kind     string
	phrases  []string
	re       *regexp.Regexp
	needs    []string
	statuses []string
}

// kindPatterns are the error texts of real SDKs and servers, tried in order
// on an error message or an isError result's text, lower-cased. The first
// match gives the kind.
var kindPatterns = []kindPattern{
	// TS1 "Tool X not found" (as isError text "MCP error -32602: Tool X not
	// found"), PY1 FastMCP "Unknown tool: x", Go SDK "unknown tool \"x\"",
	// mcp-go "tool 'x' not found".
	{kind: KindUnknownTool, phrases: []string{"unknown tool", "tool not found", "no such tool"},
		re:    regexp.MustCompile(`\btool\s+["'` + "`" + `]?[\w.:/-]+["'` + "`" + `]?\s+(?:not found|does not exist|is not (?:registered|available|defined))`),
		needs: []string{"not found", "does not exist", "is not "}},
	// Go SDK (PR #863) `validating "arguments": ...` and "invalid params",
	// TS1 "Input validation error: Invalid arguments for tool", pydantic
	// (FastMCP) "1 validation error for xArguments", JSON Schema
	// validators, mcp-go's WithInputSchemaValidation "input schema
	// validation failed" and the texts of its argument accessors
	// (RequireFloat and the like), which tools return as isError results:
	// `required argument "x" not found`, `argument "x" cannot be converted
	// to float64`, `argument "x" is not a string`, `item 0 in argument "x"
	// is not an int`.
	{kind: KindValidation, phrases: []string{`validating "arguments`, `validating \"arguments`, "unmarshaling arguments",
		"unmarshalling arguments", `unmarshaling "arguments`, "invalid param", "invalid argument", "validation error",
		"validation failed", "failed validation", "schema validation", "missing required argument",
		"missing required parameter", "missing required property", "missing required field", "additional propert",
		"unexpected argument", "unexpected parameter", "unexpected property", "unexpected keyword argument"},
		re: regexp.MustCompile(`does not match (?:the )?(?:input )?schema|required (?:argument|parameter|property|field)s? (?:is |are )?missing` +
			`|\brequired argument "[^"\n]{1,200}" not found|\bargument "[^"\n]{1,200}" (?:cannot be converted to|is not an?) ` +
			`(?:int|float64|bool|string)\b`),
		needs: []string{"schema", "missing", "argument \""}},
	// TS1 "Session not found", "Bad Request: No valid session ID provided",
	// "Bad Request: Server not initialized", "Mcp-Session-Id header is
	// required"; PY1 "Invalid or expired session ID", "Session terminated",
	// "Missing session ID"; Go SDK "session not found".
	{kind: KindSession, phrases: []string{"session not found", "unknown session", "invalid or expired session",
		"session expired", "session has expired", "session terminated", "missing session", "no valid session",
		"mcp-session-id", "server not initialized", "server not initialised", "session is closed"}},
	{kind: KindVersion, phrases: []string{"unsupported protocol version", "unsupported version", "unsupported mcp version"},
		re: regexp.MustCompile(`protocol version[^.\n]*not supported`), needs: []string{"protocol version"}},
	{kind: KindHeaderMismatch, phrases: []string{"header mismatch"}},
	{kind: KindCapability, phrases: []string{"missing required client capabilit", "requiredcapabilities"},
		re: regexp.MustCompile(`client capabilit[^.\n]*(?:required|missing)`), needs: []string{"client capabilit"}},
	{kind: KindAuth, phrases: []string{"unauthorized", "unauthorised", "not authorized", "not authorised", "forbidden",
		"permission denied", "access denied", "authentication failed", "authentication required", "authentication error",
		"invalid_token", "invalid token", "invalid api key", "invalid_api_key", "invalid credentials",
		"invalid_credentials", "insufficient_scope", "insufficient scope", "token expired", "token has expired"},
		statuses: []string{"401", "403"}},
	{kind: KindRateLimit, phrases: []string{"rate limit", "rate-limit", "ratelimit", "rate_limit", "too many requests",
		"quota exceeded", "throttl"}, statuses: []string{"429"}},
	// TS1 -32001 "Request timed out", Go "context deadline exceeded".
	{kind: KindTimeout, phrases: []string{"timeout", "timed out", "timedout", "time-out", "deadline exceeded"},
		re: regexp.MustCompile(`\btime out\b`), needs: []string{"time out"}, statuses: []string{"408", "504"}},
	// Go "context canceled", TS "AbortError", PY "Request cancelled".
	{kind: KindCancelled, phrases: []string{"context canceled", "aborterror"},
		re:    regexp.MustCompile(`\b(?:request|operation) (?:was )?cancel+ed|cancel+ed by (?:the )?(?:client|user|caller)|aborted by (?:the )?(?:client|user)`),
		needs: []string{"cancel", "aborted by"}},
	// TS1 "Resource x not found", "Prompt x not found".
	{kind: KindNotFound, phrases: []string{"unknown resource", "unknown prompt", "no such resource", "no such prompt"},
		re: regexp.MustCompile(`\b(?:resource|prompt)\b[^\n]*\bnot found`), needs: []string{"not found"}},
	{kind: KindUnavailable, phrases: []string{"service unavailable", "bad gateway", "temporarily unavailable",
		"upstream error", "upstream connect error", "overloaded"}, statuses: []string{"502", "503"}},
	// TS ConnectionClosed -32000 "Connection closed", Node's ECONNRESET.
	{kind: KindNetwork, phrases: []string{"connection refused", "connection reset", "connection closed", "econnrefused",
		"econnreset", "socket hang up", "broken pipe", "network error", "fetch failed", "no route to host"}},
	// PY1 FastMCP wraps any other exception as "Error executing tool x: ...".
	{kind: KindTool, phrases: []string{"error executing tool", "tool execution failed", "tool execution error", "error calling tool"}},
	{kind: KindInternal, phrases: []string{"internal error", "internal server error"}},
}

// statusInText finds an HTTP status a text names: "HTTP 401", "status code:
// 503", "error 429": the leftmost match of
// \b(?:http|status(?: code)?|error)\s*:?\s*(40[138]|429|50[234])\b
// (the regular expression the tests keep as its oracle), without one.
func statusInText(text string) string {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != 'h' && c != 's' && c != 'e' || i > 0 && isWordChar(text[i-1]) {
			continue
		}
		rest := text[i:]
		var ends []int // where the word may end
		switch {
		case strings.HasPrefix(rest, "http"):
			ends = []int{4}
		case strings.HasPrefix(rest, "status code"):
			ends = []int{11, 6}
		case strings.HasPrefix(rest, "status"):
			ends = []int{6}
		case strings.HasPrefix(rest, "error"):
			ends = []int{5}
		}
		for _, e := range ends {
			if st := statusAfter(rest[e:]); st != "" {
				return st
			}
		}
	}
	return ""
}

// statusAfter reads \s*:?\s*(40[138]|429|50[234])\b at the start of s.
func statusAfter(s string) string {
	i := 0
	for i < len(s) && isRESpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == ':' {
		i++
	}
	for i < len(s) && isRESpace(s[i]) {
		i++
	}
	if i+3 > len(s) || i+3 < len(s) && isWordChar(s[i+3]) {
		return ""
	}
	switch st := s[i : i+3]; st {
	case "401", "403", "408", "429", "502", "503", "504":
		return st
	}
	return ""
}

// isRESpace is \s of package regexp; isWordChar its \w (ASCII).
func isRESpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
func isWordChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// maxKindText bounds how much text the patterns read.
const maxKindText = 4096

// kindPhrase is one phrase of kindPatterns, with its pattern's index; a
// need is one of the pattern's needs instead.
type kindPhrase struct {
	text    string
	pattern int
	need    bool
}

// kindPhrases are the phrases and needs of kindPatterns, and kindGrams
// finds where they may start in a text (ASCII letters in any case), so
// that most places of a text are passed over with one look at every
// other one.
var kindPhrases, kindGrams = func() ([]kindPhrase, *gramIndex) {
	if len(kindPatterns) > 32 {
		panic("classify: more kind patterns than a need mask holds")
	}
	var list []kindPhrase
	var texts []string
	for i := range kindPatterns {
		add := func(ph string, need bool) {
			if len(ph) < 5 {
				panic("classify: kind phrase or need shorter than 5 bytes: " + ph)
			}
			list = append(list, kindPhrase{ph, i, need})
			texts = append(texts, ph)
		}
		for _, ph := range kindPatterns[i].phrases {
			add(ph, false)
		}
		for _, n := range kindPatterns[i].needs {
			add(n, true)
		}
	}
	return list, newGramIndex(texts, true)
}()

// textKind is the kind the first matching pattern gives, or "". It finds,
// in one pass over the text, the first pattern one of whose phrases the
// text holds, and which patterns' needs it holds; only the patterns before
// it try their regular expression (when the text holds one of its needs)
// and statuses, in the order of kindPatterns, so the result is that of
// trying every pattern in turn. The patterns are of the lower-cased text:
// an ASCII text is read as it is, its letters in any case, and only a
// regular expression gets it lower-cased; another is lower-cased first
// (Unicode lower-casing can make ASCII letters, the Kelvin sign a "k",
// and change lengths: as strings.ToLower does it).
func textKind(text string) string {
	if text == "" {
		return ""
	}
	if len(text) > maxKindText {
		text = text[:maxKindText]
	}
	ascii, digits := asciiDigits(text)
	if !ascii {
		text = strings.ToLower(text)
		digits = strings.ContainsAny(text, "0123456789")
	}
	first, needs := firstPhrasePattern(text)
	// Only the patterns before first whose needs the text holds, or that
	// name statuses (of a text with a digit), may match first: the others
	// are passed over at once, and the status is read only when one of
	// them is tried (it is "" in a text without digits).
	try := needs
	if digits {
		try |= statusPatterns
	}
	try &= 1<<first - 1
	status, statusRead := "", false
	for ; try != 0; try &= try - 1 {
		i := bits.TrailingZeros32(try)
		p := &kindPatterns[i]
		// The expression gets a copy of its own (it keeps its input in
		// pooled state); few texts hold a pattern's needs.
		if p.re != nil && needs&(1<<i) != 0 && p.re.MatchString(strings.Clone(lowerASCII(text))) {
			return p.kind
		}
		if len(p.statuses) > 0 && digits {
			if !statusRead {
				status, statusRead = statusInFold(text), true
			}
			for _, st := range p.statuses {
				if st == status {
					return p.kind
				}
			}
		}
	}
	if first < len(kindPatterns) {
		return kindPatterns[first].kind
	}
	return ""
}

// statusPatterns is a mask of the patterns of kindPatterns that name
// statuses.
var statusPatterns = func() (m uint32) {
	for i, p := range kindPatterns {
		if len(p.statuses) > 0 {
			m |= 1 << i
		}
	}
	return m
}()

// asciiDigits: text is ASCII, and holds an ASCII digit (when it is
// ASCII), read eight bytes at a time.
func asciiDigits(text string) (ascii, digits bool) {
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	var hi, dig uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		hi |= v
		// A digit (0x30 to 0x39): its high half is 3 and its low half,
		// plus 6, has no bit 4.
		d := (v & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030
		low := ((v & 0x0F0F0F0F0F0F0F0F) + 0x0606060606060606) & 0x1010101010101010
		dig |= zeroByte(d | low)
	}
	for ; i < len(b); i++ {
		hi |= uint64(b[i])
		if isDigit(b[i]) {
			dig = 1
		}
	}
	return hi&highBits == 0, dig != 0
}

// statusInFold is statusInText of the text lower-cased (ASCII letters),
// read in place and from the statuses back: each of the statuses the
// expression names, not followed by a word character, is looked at from
// right to left for the separators and a word before it. The first that
// has them is the leftmost match: a match's word starts before any later
// match's, as words and separators do not overlap a status.
func statusInFold(text string) string {
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	for p := 0; p+3 <= len(text); p++ {
		if p&7 == 0 && p+8 <= len(text) {
			// Eight bytes without a 4 or a 5 (as plainLine looks) are
			// passed at once.
			if v := binary.LittleEndian.Uint64(b[p:]); zeroByte((v^0x3434343434343434)&^lowBits) == 0 {
				p += 7
				continue
			}
		}
		if c := text[p]; c != '4' && c != '5' {
			continue
		}
		if p+3 < len(text) && isWordChar(text[p+3]) {
			continue
		}
		st := text[p : p+3]
		switch st {
		case "401", "403", "408", "429", "502", "503", "504":
		default:
			continue
		}
		q := p
		for q > 0 && isRESpace(text[q-1]) {
			q--
		}
		if q > 0 && text[q-1] == ':' {
			q--
		}
		for q > 0 && isRESpace(text[q-1]) {
			q--
		}
		for _, w := range [...]string{"http", "status code", "status", "error"} {
			if k := q - len(w); k >= 0 && equalLower(text[k:q], w) && (k == 0 || !isWordChar(text[k-1])) {
				return st
			}
		}
	}
	return ""
}

// firstPhrasePattern is the index of the first pattern of kindPatterns
// with a phrase the text (ASCII letters in any case) holds,
// len(kindPatterns) when none, and a mask of the patterns before it one
// of whose needs the text holds.
func firstPhrasePattern(text string) (int, uint32) {
	// kindGrams.scan, written out so that no place is looked at through
	// a function value.
	best := len(kindPatterns)
	var needs uint32
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	g := kindGrams
	n := len(b)
	i := 0
	for ; i+10 <= n; i += 8 {
		f0 := binary.LittleEndian.Uint64(b[i:]) & foldMask
		f2 := binary.LittleEndian.Uint64(b[i+2:]) & foldMask
		t0, t1, t2, t3 := g.marks(uint32(f0)), g.marks(uint32(f2)), g.marks(uint32(f0>>32)), g.marks(uint32(f2>>32))
		if t0|t1|t2|t3 == 0 {
			continue
		}
		for k, t := range [4]uint8{t0, t1, t2, t3} {
			if t != 0 {
				if best, needs = kindsNear(text, i+2*k, t, best, needs); best == 0 {
					return best, needs
				}
			}
		}
	}
	for ; i+4 <= n; i += 2 {
		if t := g.marks(binary.LittleEndian.Uint32(b[i:]) & foldMask32); t != 0 {
			if best, needs = kindsNear(text, i, t, best, needs); best == 0 {
				return best, needs
			}
		}
	}
	return best, needs
}

// kindsNear is firstPhrasePattern's look at the phrases and needs that may
// start near the even place p of text (t: its marks), given the best
// pattern and the needs found so far.
func kindsNear(text string, p int, t uint8, best int, needs uint32) (int, uint32) {
	for d := -1; d <= 1; d++ {
		if t&[3]uint8{gramBefore, gramHead, gramAfter}[d+1] == 0 {
			continue
		}
		at := p + d
		for _, k := range kindGrams.heads(text, at) {
			if ph := &kindPhrases[k]; ph.pattern < best && len(text)-at >= len(ph.text) &&
				lowerTab[text[at+len(ph.text)-1]] == ph.text[len(ph.text)-1] && equalLowerWords(text[at:], ph.text) {
				if ph.need {
					needs |= 1 << ph.pattern
				} else {
					best = ph.pattern
				}
			}
		}
	}
	return best, needs
}

var mcpErrorText = regexp.MustCompile(`^\s*(?:Error:\s*)?MCP error (-?\d{1,9}):\s*`)

// embeddedCode reads TS1's "MCP error <code>: <message>" at the start of a
// text.
func embeddedCode(text string) (int64, string, bool) {
	if !strings.Contains(text, "MCP error ") {
		return 0, "", false // what the expression needs: most texts never reach it
	}
	m := mcpErrorText.FindStringSubmatchIndex(text)
	if m == nil {
		return 0, "", false
	}
	code, err := strconv.ParseInt(text[m[2]:m[3]], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return code, text[m[1]:], true
}

// ToolText is the text of a tools/call result: its text content blocks,
// one per line (repeated keys resolve as JSON.parse resolves them). A
// message the log cut short gives its raw text: what survived is all there
// is to read.
func ToolText(m *schema.Message) string {
	if m == nil {
		return ""
	}
	if m.Truncated {
		return string(m.Raw)
	}
	if t, ok := toolTexts(m); ok {
		return t
	}
	var text []string
	jsonobj.Path(gjson.ParseBytes(m.Raw), "result", "content").ForEach(func(_, c gjson.Result) bool {
		if jsonobj.Get(c, "type").String() == "text" {
			text = append(text, jsonobj.Get(c, "text").String())
		}
		return true
	})
	return strings.Join(text, "\n")
}
