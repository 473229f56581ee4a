package classify

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// Layers.
const (
	LayerApplication = "application"
	LayerInteraction = "interaction"
	LayerProtocol    = "protocol"
	LayerTransport   = "transport"
	LayerUnknown     = "unknown"
)

// Outcomes.
const (
	ToolSuccess       = "TOOL_SUCCESS"
	ToolError         = "TOOL_ERROR"
	Success           = "SUCCESS"
	InputRequired     = "INPUT_REQUIRED"
	Cancelled         = "CANCELLED"
	JSONRPCError      = "JSONRPC_ERROR"
	MalformedJSON     = "MALFORMED_JSON"
	InvalidEnvelope   = "INVALID_ENVELOPE"
	InvalidToolResult = "INVALID_TOOL_RESULT"
	InvalidResult     = "INVALID_RESULT"
	HTTPError         = "HTTP_ERROR"
	StreamIncomplete  = "STREAM_INCOMPLETE"
	NoResponse        = "NO_RESPONSE"
	Unknown           = "UNKNOWN"
)

// Retry advice values.
const (
	AdviceRetryIfIdempotent        = "retry_if_idempotent"
	AdviceRespectRetryAfter        = "respect_retry_after"
	AdviceFixArguments             = "fix_arguments"
	AdviceInspectToolState         = "inspect_tool_state"
	AdviceInvestigateCompatibility = "investigate_compatibility"
	AdviceProvideInput             = "provide_input"
	AdviceReinitializeSession      = "reinitialize_session"
	AdviceNone                     = "none"
)

// LayerOf returns the layer an outcome belongs to.
func LayerOf(outcome string) string {
	switch outcome {
	case ToolSuccess, ToolError, Success:
		return LayerApplication
	case InputRequired, Cancelled:
		return LayerInteraction
	case JSONRPCError, MalformedJSON, InvalidEnvelope, InvalidToolResult, InvalidResult:
		return LayerProtocol
	case HTTPError, StreamIncomplete, NoResponse:
		return LayerTransport
	}
	return LayerUnknown
}

// Outcomes lists every outcome, in the order reports show them.
var Outcomes = []string{ToolSuccess, Success, ToolError, InputRequired, Cancelled, JSONRPCError,
	MalformedJSON, InvalidEnvelope, InvalidToolResult, InvalidResult, HTTPError, StreamIncomplete,
	NoResponse, Unknown}

// Attempt is one HTTP POST that carried the request, with the messages found
// in its response body or response stream.
type Attempt struct {
	Responded    bool
	Status       int
	Failure      string // failure kind when !Responded; with Responded, why a body that is not a stream was cut
	ContentType  string
	SSE          bool
	StreamEnd    string
	BodyRecorded bool
	BodyEmpty    bool
	Messages     []schema.Message
}

// Evidence is everything known about one exchange.
type Evidence struct {
	Method          string
	ProtocolVersion string // "" when unknown: version rules are then lenient
	ID              schema.ID
	// Attempts are the HTTP POSTs carrying the request, in order. Empty for
	// stdio and for requests the server sent to the client.
	Attempts []Attempt
	// Response is a response matched by id outside the final attempt's own
	// body: on a GET or resumed stream, or a stdio frame.
	Response *schema.Message
	// Stray are messages attributed to the exchange that are not a matching
	// response (a malformed stdio frame while only this request was open).
	Stray []schema.Message
	// Cancelled: the requester sent notifications/cancelled for it.
	Cancelled bool
	// OnSession: the request carried an MCP session id.
	OnSession bool
	// StreamNotRecorded: the conversation has a GET event stream whose body
	// the log did not keep, so a response may have gone there unseen.
	StreamNotRecorded bool
	// LateResponse: the response arrived after the requester had cancelled.
	LateResponse bool
	// Reported is what an already-correlated log (an OTLP span, an
	// Inspector entry) states when it kept no response body.
	Reported *schema.Reported
}

// Verdict is the judgement of one exchange.
type Verdict struct {
	Outcome string
	Layer   string
	Reason  string
	// ErrorCode and IsError may point to values shared by many verdicts
	// (verdictvalues.go): read them, never write through them.
	ErrorCode    *int64
	ErrorMessage string
	ErrorType    string
	ResultType   string
	IsError      *bool
	RetryAdvice  string
	Judged       *schema.Message // the message the verdict rests on, if any
	// Suspect: a TOOL_SUCCESS whose content says the tool failed;
	// SuspectReason names the pattern (see HiddenFailure).
	Suspect       bool
	SuspectReason string

	// ErrorKind is what kind of failure it was (see ErrorKinds); "" on
	// success.
	ErrorKind string
	// RPCStatusCode is OpenTelemetry rpc.response.status_code: the JSON-RPC
	// error code as text whenever the judged response carried one (also
	// one riding on an HTTP error); "" otherwise.
	RPCStatusCode string
	// ServerError: the server side counts the exchange as its own error
	// (see "OpenTelemetry names" in the package documentation).
	ServerError bool
}

const v20260728 = "2026-07-28"

// Classify judges one exchange.
func Classify(ev *Evidence) (v Verdict) {
	classify(ev, &v)
	if ev.LateResponse && ev.Cancelled {
		// Cancelled first; the response that came anyway is kept as detail.
		v.Reason = "cancelled before any response; a late response then said " + v.Outcome
		v.Outcome, v.RetryAdvice = Cancelled, AdviceNone
	}
	if v.Outcome == ToolSuccess {
		// The common case, told at once: LayerOf, advice and name give
		// it the application layer, no advice and no names.
		v.Layer = LayerApplication
		if v.Judged != nil && !v.Judged.Truncated {
			v.Suspect, v.SuspectReason = hiddenFailureOf(v.Judged)
		}
		if v.RetryAdvice == "" {
			v.RetryAdvice = AdviceNone
		}
		v.RPCStatusCode = ""
		if v.ErrorCode != nil {
			v.RPCStatusCode = codeText(*v.ErrorCode)
		}
		v.ErrorType, v.ServerError, v.ErrorKind = "", false, ""
		return v
	}
	v.Layer = LayerOf(v.Outcome)
	if v.RetryAdvice == "" {
		v.RetryAdvice = advice(&v, ev)
	}
	name(&v, ev)
	return v
}

// classify judges the exchange into v (a zero Verdict): the rules, before
// what Classify adds.
func classify(ev *Evidence, v *Verdict) {
	var last *Attempt
	if n := len(ev.Attempts); n > 0 {
		last = &ev.Attempts[n-1]
	}
	if last != nil {
		if !last.Responded {
			if ev.Response != nil {
				judgeMatched(ev, ev.Response, v)
				return
			}
			if last.Failure == schema.FailurePending {
				*v = Verdict{Outcome: Unknown, Reason: "no response yet when the capture was written"}
				return
			}
			if ev.Cancelled || (last.Failure == schema.FailureClientAbort && Stateless(ev.ProtocolVersion)) {
				*v = Verdict{Outcome: Cancelled, Reason: "client cancelled before any response"}
				return
			}
			*v = Verdict{Outcome: NoResponse, Reason: noHTTPResponse(last.Failure), ErrorType: orDefault(last.Failure, "_OTHER")}
			return
		}
		if last.Status < 200 || last.Status > 299 {
			if mappedProtocolError(ev, last, v) {
				return
			}
			*v = Verdict{Outcome: HTTPError, Reason: statusReason(last.Status), ErrorType: statusText(last.Status)}
			// Keep a JSON-RPC error carried by the error response as detail.
			for i := range last.Messages {
				m := &last.Messages[i]
				if m.Kind != schema.MsgResponse {
					continue
				}
				if e := envelopeOf(m); e.errv == schema.JSONObject {
					if e.codeInteger {
						v.ErrorCode = codePtr(e.codeInt)
					}
					if e.message == schema.JSONString {
						v.ErrorMessage = e.messageText
					}
					v.Judged = m
					break
				}
			}
			return
		}
		if last.Failure != "" && !last.SSE && ev.Response == nil {
			cutBody(ev, last, v)
			return
		}
		if m := matchIn(last.Messages, ev.ID); m != nil {
			judgeResponse(ev, m, v, true)
			return
		}
	}
	if ev.Response != nil {
		judgeMatched(ev, ev.Response, v)
		return
	}
	var own []schema.Message
	if last != nil {
		own = last.Messages
	} else {
		own = ev.Stray
	}
	// Rule 3: the body itself is wrong.
	for i := range own {
		if own[i].Kind == schema.MsgInvalidJSON {
			if own[i].Truncated {
				*v = Verdict{Outcome: Unknown, Reason: "a frame the log cut short, with nothing recoverable", Judged: &own[i]}
				return
			}
			*v = Verdict{Outcome: MalformedJSON, Reason: "response is not valid JSON", Judged: &own[i]}
			return
		}
	}
	for i := range own {
		switch own[i].Kind {
		case schema.MsgResponse:
			judgeMatched(ev, &own[i], v)
			return // fails the id check: INVALID_ENVELOPE
		case schema.MsgOther:
			*v = Verdict{Outcome: InvalidEnvelope, Reason: "response body is not a JSON-RPC message", Judged: &own[i]}
			return
		}
	}
	// Rule 4: evidence missing.
	if last != nil {
		if !last.BodyRecorded && last.Status != 202 {
			*v = Verdict{Outcome: Unknown, Reason: "response body not recorded"}
			return
		}
		if last.SSE {
			if last.StreamEnd == schema.StreamClientClosed && Stateless(ev.ProtocolVersion) {
				*v = Verdict{Outcome: Cancelled, Reason: "client closed the response stream (2026-07-28 cancellation)"}
				return
			}
			if last.StreamEnd == schema.StreamClientClosed && ev.Cancelled {
				// The client let go of the stream itself and cancelled the
				// request: its own doing, not a cut.
				*v = Verdict{Outcome: Cancelled, Reason: "client closed the response stream and cancelled the request"}
				return
			}
			if ev.Cancelled {
				*v = Verdict{Outcome: StreamIncomplete, Reason: "event stream ended without the response; then cancelled"}
				return
			}
			*v = Verdict{Outcome: StreamIncomplete, Reason: streamEndedReason(last.StreamEnd)}
			return
		}
		if last.Status != 202 && last.BodyEmpty {
			*v = Verdict{Outcome: MalformedJSON, Reason: "empty response body"}
			return
		}
	}
	if ev.Cancelled {
		*v = Verdict{Outcome: Cancelled, Reason: "client cancelled before any response"}
		return
	}
	if last == nil && ev.Reported != nil {
		*v = judgeReported(ev)
		return
	}
	if last != nil && last.Status == 202 && ev.StreamNotRecorded {
		*v = Verdict{Outcome: Unknown, Reason: "request answered 202; the stream that would carry the response was not recorded"}
		return
	}
	if last != nil && last.Status == 202 {
		*v = Verdict{Outcome: NoResponse, Reason: "request answered 202 and no response arrived on any stream", ErrorType: "_OTHER"}
		return
	}
	*v = Verdict{Outcome: NoResponse, Reason: "no response in the log", ErrorType: "_OTHER"}
}

// cutBody judges a 2xx whose body (not an event stream) broke off after the
// status line (a HAR entry with a status and an _error): no answer came,
// which is the client's cancellation when the client aborted it and
// cancelled the request (or, in 2026-07-28, aborted it at all), and a
// transport failure otherwise.
func cutBody(ev *Evidence, last *Attempt, v *Verdict) {
	if last.Failure == schema.FailureClientAbort && (ev.Cancelled || Stateless(ev.ProtocolVersion)) {
		*v = Verdict{Outcome: Cancelled, Reason: "client aborted the response body and cancelled the request"}
		return
	}
	*v = Verdict{Outcome: NoResponse, Reason: "HTTP " + strconv.Itoa(last.Status) + " came, then the body was cut: " + last.Failure,
		ErrorType: last.Failure}
}

// matchIn finds the response to id among msgs.
func matchIn(msgs []schema.Message, id schema.ID) *schema.Message {
	for i := range msgs {
		if msgs[i].Kind == schema.MsgResponse && SameID(msgs[i].ID, id) {
			return &msgs[i]
		}
	}
	return nil
}

// SameID compares two ids type-sensitively; within a type they compare by
// IDKey (numbers by exact value, never as float64).
func SameID(a, b schema.ID) bool {
	// Inlined where it is called: two ids of the same text (most) are
	// told in place, others by sameKey.
	return a.Type == b.Type && a.Valid() && (sameText(a.Text, b.Text) || sameKey(a, b))
}

// sameKey: IDKey(a) == IDKey(b).
func sameKey(a, b schema.ID) bool { return IDKey(a) == IDKey(b) }

// sameText is x == y, with a short text (most ids) compared byte by byte
// in place.
func sameText(x, y string) bool {
	if len(x) != len(y) {
		return false
	}
	if len(x) > 8 {
		return x == y
	}
	for i := 0; i < len(x); i++ {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func isToolCall(method string) bool { return method == "tools/call" }

func invalidResult(method, reason string, m *schema.Message) Verdict {
	if isToolCall(method) {
		return Verdict{Outcome: InvalidToolResult, Reason: reason, Judged: m}
	}
	return Verdict{Outcome: InvalidResult, Reason: reason, Judged: m}
}

func batchAllowed(version string) bool { return version == "" || version == "2025-03-26" }

// judgeMatched applies rules 5 to 8 to one response message, into v (a
// zero Verdict).
func judgeMatched(ev *Evidence, m *schema.Message, v *Verdict) { judgeResponse(ev, m, v, false) }

// judgeResponse is judgeMatched, told whether m's id is known to be the
// request's (sameID: matchIn found m by it), which then is not compared
// again.
func judgeResponse(ev *Evidence, m *schema.Message, v *Verdict, sameID bool) {
	if m.Truncated {
		*v = judgeTruncated(m)
		return
	}
	if m.Kind == schema.MsgInvalidJSON {
		*v = Verdict{Outcome: MalformedJSON, Reason: "response is not valid JSON", Judged: m}
		return
	}
	if m.InBatch() && !batchAllowed(ev.ProtocolVersion) {
		*v = Verdict{Outcome: InvalidEnvelope, Reason: "batch response outside 2025-03-26", Judged: m}
		return
	}
	var e envelope
	if p := m.RPC; p != nil {
		e = rpcEnvelope(p) // envelopeOf, inlined
	} else {
		e = rawEnvelope(m.Raw)
	}
	if !e.object {
		*v = Verdict{Outcome: InvalidEnvelope, Reason: "response is not a JSON object", Judged: m}
		return
	}
	if !e.jsonrpc20 {
		*v = Verdict{Outcome: InvalidEnvelope, Reason: `"jsonrpc" is not "2.0"`, Judged: m}
		return
	}
	if e.result.Exists() && e.errv.Exists() {
		*v = Verdict{Outcome: InvalidEnvelope, Reason: "result and error together", Judged: m}
		return
	}
	if !e.result.Exists() && !e.errv.Exists() {
		*v = Verdict{Outcome: InvalidEnvelope, Reason: "neither result nor error", Judged: m}
		return
	}
	nullIDError := e.errv.Exists() && (m.ID.Type == schema.IDNull || m.ID.Type == schema.IDAbsent)
	if !sameID && !nullIDError && !SameID(m.ID, ev.ID) {
		reason := "response id does not match the request id" // values stay in their columns, where the policy applies
		*v = Verdict{Outcome: InvalidEnvelope, Reason: reason, Judged: m}
		return
	}
	if e.errv.Exists() {
		if e.errv != schema.JSONObject {
			*v = Verdict{Outcome: InvalidEnvelope, Reason: "error is not an object", Judged: m}
			return
		}
		if !e.codeInteger {
			*v = Verdict{Outcome: InvalidEnvelope, Reason: "error code is not an integer", Judged: m}
			return
		}
		if e.message != schema.JSONString {
			*v = Verdict{Outcome: InvalidEnvelope, Reason: "error message is not a string", Judged: m}
			return
		}
		code := e.codeInt
		v.Outcome, v.Reason = JSONRPCError, codeReason(code)
		v.ErrorCode, v.ErrorMessage, v.ErrorType, v.Judged = codePtr(code), e.messageText, codeText(code), m
		return
	}
	if e.result != schema.JSONObject {
		*v = invalidResult(ev.Method, "result is not an object", m)
		return
	}
	if p := m.RPC; p != nil {
		judgeResult(ev, &p.Res.Kinds, p.Res.ResultType, m, v) // resultOf, read in place
		return
	}
	res := rawResult(m.Raw)
	judgeResult(ev, &res.kinds, res.resultType, m, v)
}

func isInteger(v gjson.Result) bool {
	if v.Type != gjson.Number {
		return false
	}
	if !strings.ContainsAny(v.Raw, ".eE") {
		_, err := strconv.ParseInt(v.Raw, 10, 64)
		return err == nil
	}
	f := v.Num
	return f == float64(int64(f))
}

// requiredField is a field a valid result must have and the JSON type it
// must be.
type requiredField struct {
	path   string
	typ    string // "object", "array", "string"
	member int    // path's index in schema.RPCResult.Kinds (set by init)
}

// requiredFields lists, per method, the fields a valid result must have.
var requiredFields = map[string][]requiredField{
	"initialize":               {{"protocolVersion", "string", 0}, {"capabilities", "object", 0}, {"serverInfo", "object", 0}},
	"tools/list":               {{"tools", "array", 0}},
	"resources/list":           {{"resources", "array", 0}},
	"resources/templates/list": {{"resourceTemplates", "array", 0}},
	"resources/read":           {{"contents", "array", 0}},
	"prompts/list":             {{"prompts", "array", 0}},
	"prompts/get":              {{"messages", "array", 0}},
	"completion/complete":      {{"completion", "object", 0}},
	"server/discover":          {{"supportedVersions", "array", 0}},
	"roots/list":               {{"roots", "array", 0}},
	"sampling/createMessage":   {{"role", "string", 0}, {"content", "any", 0}},
	"elicitation/create":       {{"action", "string", 0}},
}

func init() {
	for _, fields := range requiredFields {
		for i := range fields {
			if fields[i].member = schema.ResultMember(fields[i].path); fields[i].member < 0 {
				panic("classify: result member " + fields[i].path + " has no kind in schema.RPCResult")
			}
		}
	}
}

var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// isMRTR is mrtrMethods[method], without hashing the method.
func isMRTR(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

// requiredOf is requiredFields[method], without hashing the method
// (TestRequiredOf holds the two together).
func requiredOf(method string) []requiredField {
	switch method {
	case "initialize":
		return requiredByIndex[0]
	case "tools/list":
		return requiredByIndex[1]
	case "resources/list":
		return requiredByIndex[2]
	case "resources/templates/list":
		return requiredByIndex[3]
	case "resources/read":
		return requiredByIndex[4]
	case "prompts/list":
		return requiredByIndex[5]
	case "prompts/get":
		return requiredByIndex[6]
	case "completion/complete":
		return requiredByIndex[7]
	case "server/discover":
		return requiredByIndex[8]
	case "roots/list":
		return requiredByIndex[9]
	case "sampling/createMessage":
		return requiredByIndex[10]
	case "elicitation/create":
		return requiredByIndex[11]
	}
	return nil
}

// requiredByIndex holds requiredFields in the order of requiredOf's cases.
var requiredByIndex = func() (l [12][]requiredField) {
	for i, m := range [...]string{"initialize", "tools/list", "resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get", "completion/complete", "server/discover", "roots/list", "sampling/createMessage", "elicitation/create"} {
		l[i] = requiredFields[m]
	}
	return l
}()

// judgeResult judges a result object (k: the kinds of its members, resType
// resultType's value, as the decoder or resultOf read them), into v (a
// zero Verdict).
func judgeResult(ev *Evidence, k *[schema.NumResultMembers]schema.JSONKind, resType string, m *schema.Message, v *Verdict) {
	method := ev.Method
	resultType := "complete"
	if rt := k[schema.ResResultType]; rt.Exists() {
		if rt != schema.JSONString {
			*v = invalidResult(method, "resultType is not a string", m)
			return
		}
		resultType = resType
	}
	switch resultType {
	case "complete":
	case "input_required":
		if !isMRTR(method) {
			*v = invalidResult(method, "input_required is not allowed on "+method, m)
			v.ResultType = resultType
			return
		}
		ir, rs := k[schema.ResInputRequests], k[schema.ResRequestState]
		if (ir.Exists() && ir != schema.JSONObject) || (rs.Exists() && rs != schema.JSONString) || (!ir.Exists() && !rs.Exists()) {
			*v = invalidResult(method, "input_required without valid inputRequests or requestState", m)
			v.ResultType = resultType
			return
		}
		v.Outcome, v.Reason, v.ResultType, v.Judged = InputRequired, "server asks for more input (MRTR)", resultType, m
		return
	default:
		*v = invalidResult(method, "unknown resultType", m)
		v.ResultType = resultType
		return
	}
	if isToolCall(method) {
		if k[schema.ResContent] != schema.JSONArray {
			*v = invalidResult(method, "content is not an array", m)
			v.ResultType = resultType
			return
		}
		isErr := false
		if ie := k[schema.ResIsError]; ie.Exists() {
			if ie != schema.JSONTrue && ie != schema.JSONFalse {
				*v = invalidResult(method, "isError is not a boolean", m)
				v.ResultType = resultType
				return
			}
			isErr = ie == schema.JSONTrue
		}
		if sc := k[schema.ResStructuredContent]; sc.Exists() && structuredMustBeObject(ev.ProtocolVersion) && sc != schema.JSONObject {
			*v = invalidResult(method, "structuredContent is not an object", m)
			v.ResultType = resultType
			return
		}
		if isErr {
			v.Outcome, v.Reason, v.ErrorType = ToolError, "tool reported isError: true", "tool_error"
		} else {
			v.Outcome, v.Reason = ToolSuccess, "tool result"
		}
		v.ResultType, v.IsError, v.Judged = resultType, boolPtr(isErr), m
		return
	}
	for _, f := range requiredOf(method) {
		g := k[f.member]
		ok := g.Exists()
		switch f.typ {
		case "object":
			ok = g == schema.JSONObject
		case "array":
			ok = g == schema.JSONArray
		case "string":
			ok = g == schema.JSONString
		}
		if !ok {
			*v = invalidResult(method, method+" result lacks "+f.path+" ("+f.typ+")", m)
			v.ResultType = resultType
			return
		}
	}
	v.Outcome, v.Reason, v.ResultType, v.Judged = Success, "valid result", resultType, m
}

func structuredMustBeObject(version string) bool {
	return version == "2025-06-18" || version == "2025-11-25"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// advice maps a verdict to the seed article's retry table.
func advice(v *Verdict, ev *Evidence) string {
	switch v.Outcome {
	case HTTPError:
		var status int
		if n := len(ev.Attempts); n > 0 {
			status = ev.Attempts[n-1].Status
		} else if ev.Reported != nil {
			status = ev.Reported.HTTPStatus
		}
		switch {
		case status == 429:
			return AdviceRespectRetryAfter
		case status == 404 && onSession(ev):
			return AdviceReinitializeSession
		case status == 408 || status >= 500:
			return AdviceRetryIfIdempotent
		case status == 401 || status == 403:
			return AdviceNone
		case v.ErrorCode != nil:
			return codeAdvice(*v.ErrorCode)
		}
		return AdviceInvestigateCompatibility
	case NoResponse, StreamIncomplete:
		return AdviceRetryIfIdempotent
	case JSONRPCError:
		return codeAdvice(*v.ErrorCode)
	case ToolError:
		return AdviceInspectToolState
	case InputRequired:
		return AdviceProvideInput
	case MalformedJSON, InvalidEnvelope, InvalidToolResult, InvalidResult:
		return AdviceInvestigateCompatibility
	}
	return AdviceNone
}

func codeAdvice(code int64) string {
	switch code {
	case -32602, -32002:
		return AdviceFixArguments
	case -32700, -32600, -32601, -32020, -32021, -32022:
		return AdviceInvestigateCompatibility
	case -32042:
		return AdviceProvideInput
	case -32001:
		return AdviceRetryIfIdempotent
	}
	return AdviceNone
}

var (
	truncCode    = regexp.MustCompile(`"error"\s*:\s*\{[^{}]*?"code"\s*:\s*(-?\d+)\s*[,}]`)
	truncMessage = regexp.MustCompile(`"error"\s*:\s*\{[^{}]*?"message"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	truncIsError = regexp.MustCompile(`"isError"\s*:\s*(true|false)\b`)
)

// lastSubmatch is the last match of re in raw: a repeated key resolves as
// JSON.parse resolves it, the last one winning, as far as the cut lets us
// see.
func lastSubmatch(re *regexp.Regexp, raw []byte) [][]byte {
	all := re.FindAllSubmatch(raw, -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// judgeTruncated judges a response the log cut short: only what survived the
// cut counts. An error code that survived is JSONRPC_ERROR; "isError": true
// is TOOL_ERROR; anything else is UNKNOWN, never a guessed success.
func judgeTruncated(m *schema.Message) Verdict {
	raw := m.Raw
	if sm := lastSubmatch(truncCode, raw); sm != nil {
		code, err := strconv.ParseInt(string(sm[1]), 10, 64)
		if err == nil {
			v := Verdict{Outcome: JSONRPCError, Reason: "JSON-RPC error " + string(sm[1]) + " (response truncated in the log)",
				ErrorCode: &code, ErrorType: string(sm[1]), Judged: m}
			if mm := lastSubmatch(truncMessage, raw); mm != nil {
				v.ErrorMessage = string(mm[1])
			}
			return v
		}
	}
	if sm := lastSubmatch(truncIsError, raw); sm != nil && string(sm[1]) == "true" {
		t := true
		return Verdict{Outcome: ToolError, Reason: "tool reported isError: true (response truncated in the log)",
			ErrorType: "tool_error", IsError: &t, Judged: m}
	}
	return Verdict{Outcome: Unknown, Reason: "response truncated in the log; what survived does not settle the outcome", Judged: m}
}

// judgeReported judges an exchange from what an already-correlated log
// states (an OpenTelemetry span's error.type and status, an Inspector
// entry's clientError) when it kept no response body. Without a body
// nothing can be found invalid, so the protocol outcomes other than
// JSONRPC_ERROR never come from here.
func judgeReported(ev *Evidence) Verdict {
	r := ev.Reported
	code := r.ErrorType
	if code == "" || code == "_OTHER" {
		code = r.StatusCode
	}
	switch {
	case r.HTTPStatus >= 400 || (r.HTTPStatus > 0 && r.HTTPStatus < 200):
		v := Verdict{Outcome: HTTPError, Reason: "HTTP " + strconv.Itoa(r.HTTPStatus) + " (as reported by the log)",
			ErrorType: strconv.Itoa(r.HTTPStatus), ErrorMessage: r.Message}
		if isIntText(r.StatusCode) {
			// A JSON-RPC code the span reports rides on the HTTP error,
			// as one in an error body would.
			c, _ := strconv.ParseInt(r.StatusCode, 10, 64)
			v.ErrorCode = &c
		}
		return v
	case r.ErrorType == "tool_error":
		t := true
		return Verdict{Outcome: ToolError, Reason: "tool error (as reported by the log)", ErrorType: "tool_error",
			IsError: &t, ErrorMessage: r.Message}
	case isIntText(code):
		c, _ := strconv.ParseInt(code, 10, 64)
		return Verdict{Outcome: JSONRPCError, Reason: "JSON-RPC error " + code + " (as reported by the log)",
			ErrorCode: &c, ErrorType: code, ErrorMessage: r.Message}
	case r.ErrorType == "timeout":
		return Verdict{Outcome: NoResponse, Reason: "timed out (as reported by the log)", ErrorType: "timeout", ErrorMessage: r.Message}
	case r.ErrorType != "":
		return Verdict{Outcome: Unknown, Reason: "the log reports an error.type without a response",
			ErrorType: r.ErrorType, ErrorMessage: r.Message}
	case r.Failed:
		return Verdict{Outcome: Unknown, Reason: "the log reports a failure without saying which layer", ErrorMessage: r.Message}
	case r.OK:
		if isToolCall(ev.Method) {
			f := false
			return Verdict{Outcome: ToolSuccess, Reason: "completed without error (as reported by the log; no body to validate)", IsError: &f}
		}
		return Verdict{Outcome: Success, Reason: "completed without error (as reported by the log; no body to validate)"}
	}
	return Verdict{Outcome: Unknown, Reason: "the log reports no outcome"}
}

func isIntText(s string) bool {
	if s == "" {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}
