package classify

// Classify as it was before issue 11's last classification pass (static
// verdict values instead of allocated ones, payload texts judged from a
// head, the names of a verdict read without rescans): the oracle that
// TestClassifySameAsOracle and FuzzClassify compare Classify with. The
// functions that pass changed are copied here whole (with the text
// detector's own oracle, oldHiddenFailure); the rules they call are shared.

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// oracleClassifyAll is Classify as it was.
func oracleClassifyAll(ev *Evidence) Verdict {
	v := oracleClassify(ev)
	if ev.LateResponse && ev.Cancelled {
		// Cancelled first; the response that came anyway is kept as detail.
		v.Reason = "cancelled before any response; a late response then said " + v.Outcome
		v.Outcome, v.RetryAdvice = Cancelled, AdviceNone
	}
	v.Layer = LayerOf(v.Outcome)
	if v.Outcome == ToolSuccess && v.Judged != nil && !v.Judged.Truncated {
		v.Suspect, v.SuspectReason = oracleHiddenFailureOf(v.Judged)
	}
	if v.RetryAdvice == "" {
		v.RetryAdvice = oracleAdvice(&v, ev)
	}
	oracleName(&v, ev)
	return v
}

func oracleClassify(ev *Evidence) Verdict {
	var last *Attempt
	if n := len(ev.Attempts); n > 0 {
		last = &ev.Attempts[n-1]
	}
	if last != nil {
		if !last.Responded {
			if ev.Response != nil {
				return oracleJudgeMatched(ev, ev.Response)
			}
			if last.Failure == schema.FailurePending {
				return Verdict{Outcome: Unknown, Reason: "no response yet when the capture was written"}
			}
			if ev.Cancelled || (last.Failure == schema.FailureClientAbort && Stateless(ev.ProtocolVersion)) {
				return Verdict{Outcome: Cancelled, Reason: "client cancelled before any response"}
			}
			return Verdict{Outcome: NoResponse, Reason: "no HTTP response: " + orDefault(last.Failure, "failure"), ErrorType: orDefault(last.Failure, "_OTHER")}
		}
		if last.Status < 200 || last.Status > 299 {
			if v, ok := oracleMappedProtocolError(ev, last); ok {
				return v
			}
			v := Verdict{Outcome: HTTPError, Reason: statusReason(last.Status), ErrorType: statusText(last.Status)}
			// Keep a JSON-RPC error carried by the error response as detail.
			for i := range last.Messages {
				m := &last.Messages[i]
				if m.Kind != schema.MsgResponse {
					continue
				}
				if e := envelopeOf(m); e.errv == schema.JSONObject {
					if e.codeInteger {
						code := e.codeInt
						v.ErrorCode = &code
					}
					if e.message == schema.JSONString {
						v.ErrorMessage = e.messageText
					}
					v.Judged = m
					break
				}
			}
			return v
		}
		if last.Failure != "" && !last.SSE && ev.Response == nil {
			return oracleCutBody(ev, last)
		}
		if m := matchIn(last.Messages, ev.ID); m != nil {
			return oracleJudgeMatched(ev, m)
		}
	}
	if ev.Response != nil {
		return oracleJudgeMatched(ev, ev.Response)
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
				return Verdict{Outcome: Unknown, Reason: "a frame the log cut short, with nothing recoverable", Judged: &own[i]}
			}
			return Verdict{Outcome: MalformedJSON, Reason: "response is not valid JSON", Judged: &own[i]}
		}
	}
	for i := range own {
		switch own[i].Kind {
		case schema.MsgResponse:
			return oracleJudgeMatched(ev, &own[i]) // fails the id check: INVALID_ENVELOPE
		case schema.MsgOther:
			return Verdict{Outcome: InvalidEnvelope, Reason: "response body is not a JSON-RPC message", Judged: &own[i]}
		}
	}
	// Rule 4: evidence missing.
	if last != nil {
		if !last.BodyRecorded && last.Status != 202 {
			return Verdict{Outcome: Unknown, Reason: "response body not recorded"}
		}
		if last.SSE {
			if last.StreamEnd == schema.StreamClientClosed && Stateless(ev.ProtocolVersion) {
				return Verdict{Outcome: Cancelled, Reason: "client closed the response stream (2026-07-28 cancellation)"}
			}
			if last.StreamEnd == schema.StreamClientClosed && ev.Cancelled {
				// The client let go of the stream itself and cancelled the
				// request: its own doing, not a cut.
				return Verdict{Outcome: Cancelled, Reason: "client closed the response stream and cancelled the request"}
			}
			if ev.Cancelled {
				return Verdict{Outcome: StreamIncomplete, Reason: "event stream ended without the response; then cancelled"}
			}
			return Verdict{Outcome: StreamIncomplete, Reason: "event stream ended without the response (" + orDefault(last.StreamEnd, "end unknown") + ")"}
		}
		if last.Status != 202 && last.BodyEmpty {
			return Verdict{Outcome: MalformedJSON, Reason: "empty response body"}
		}
	}
	if ev.Cancelled {
		return Verdict{Outcome: Cancelled, Reason: "client cancelled before any response"}
	}
	if last == nil && ev.Reported != nil {
		return judgeReported(ev)
	}
	if last != nil && last.Status == 202 && ev.StreamNotRecorded {
		return Verdict{Outcome: Unknown, Reason: "request answered 202; the stream that would carry the response was not recorded"}
	}
	if last != nil && last.Status == 202 {
		return Verdict{Outcome: NoResponse, Reason: "request answered 202 and no response arrived on any stream", ErrorType: "_OTHER"}
	}
	return Verdict{Outcome: NoResponse, Reason: "no response in the log", ErrorType: "_OTHER"}
}

// cutBody judges a 2xx whose body (not an event stream) broke off after the
// status line (a HAR entry with a status and an _error): no answer came,
// which is the client's cancellation when the client aborted it and
// cancelled the request (or, in 2026-07-28, aborted it at all), and a
// transport failure otherwise.
func oracleCutBody(ev *Evidence, last *Attempt) Verdict {
	if last.Failure == schema.FailureClientAbort && (ev.Cancelled || Stateless(ev.ProtocolVersion)) {
		return Verdict{Outcome: Cancelled, Reason: "client aborted the response body and cancelled the request"}
	}
	return Verdict{Outcome: NoResponse, Reason: "HTTP " + strconv.Itoa(last.Status) + " came, then the body was cut: " + last.Failure,
		ErrorType: last.Failure}
}

// judgeMatched applies rules 5 to 8 to one response message.
func oracleJudgeMatched(ev *Evidence, m *schema.Message) Verdict {
	if m.Truncated {
		return judgeTruncated(m)
	}
	if m.Kind == schema.MsgInvalidJSON {
		return Verdict{Outcome: MalformedJSON, Reason: "response is not valid JSON", Judged: m}
	}
	if m.InBatch() && !batchAllowed(ev.ProtocolVersion) {
		return Verdict{Outcome: InvalidEnvelope, Reason: "batch response outside 2025-03-26", Judged: m}
	}
	e := envelopeOf(m)
	if !e.object {
		return Verdict{Outcome: InvalidEnvelope, Reason: "response is not a JSON object", Judged: m}
	}
	if !e.jsonrpc20 {
		return Verdict{Outcome: InvalidEnvelope, Reason: `"jsonrpc" is not "2.0"`, Judged: m}
	}
	if e.result.Exists() && e.errv.Exists() {
		return Verdict{Outcome: InvalidEnvelope, Reason: "result and error together", Judged: m}
	}
	if !e.result.Exists() && !e.errv.Exists() {
		return Verdict{Outcome: InvalidEnvelope, Reason: "neither result nor error", Judged: m}
	}
	nullIDError := e.errv.Exists() && (m.ID.Type == schema.IDNull || m.ID.Type == schema.IDAbsent)
	if !nullIDError && !SameID(m.ID, ev.ID) {
		reason := "response id does not match the request id" // values stay in their columns, where the policy applies
		return Verdict{Outcome: InvalidEnvelope, Reason: reason, Judged: m}
	}
	if e.errv.Exists() {
		if e.errv != schema.JSONObject {
			return Verdict{Outcome: InvalidEnvelope, Reason: "error is not an object", Judged: m}
		}
		if !e.codeInteger {
			return Verdict{Outcome: InvalidEnvelope, Reason: "error code is not an integer", Judged: m}
		}
		if e.message != schema.JSONString {
			return Verdict{Outcome: InvalidEnvelope, Reason: "error message is not a string", Judged: m}
		}
		code := e.codeInt
		return Verdict{Outcome: JSONRPCError, Reason: codeReason(code),
			ErrorCode: &code, ErrorMessage: e.messageText, ErrorType: codeText(code), Judged: m}
	}
	if e.result != schema.JSONObject {
		return invalidResult(ev.Method, "result is not an object", m)
	}
	return oracleJudgeResult(ev, resultOf(m), m)
}

// judgeResult judges a result object (res: its members, as the decoder or
// resultOf read them).
func oracleJudgeResult(ev *Evidence, res resultView, m *schema.Message) Verdict {
	method := ev.Method
	k := &res.kinds
	resultType := "complete"
	if rt := k[schema.ResResultType]; rt.Exists() {
		if rt != schema.JSONString {
			return invalidResult(method, "resultType is not a string", m)
		}
		resultType = res.resultType
	}
	switch resultType {
	case "complete":
	case "input_required":
		if !mrtrMethods[method] {
			v := invalidResult(method, "input_required is not allowed on "+method, m)
			v.ResultType = resultType
			return v
		}
		ir, rs := k[schema.ResInputRequests], k[schema.ResRequestState]
		if (ir.Exists() && ir != schema.JSONObject) || (rs.Exists() && rs != schema.JSONString) || (!ir.Exists() && !rs.Exists()) {
			v := invalidResult(method, "input_required without valid inputRequests or requestState", m)
			v.ResultType = resultType
			return v
		}
		return Verdict{Outcome: InputRequired, Reason: "server asks for more input (MRTR)", ResultType: resultType, Judged: m}
	default:
		v := invalidResult(method, "unknown resultType", m)
		v.ResultType = resultType
		return v
	}
	if isToolCall(method) {
		if k[schema.ResContent] != schema.JSONArray {
			v := invalidResult(method, "content is not an array", m)
			v.ResultType = resultType
			return v
		}
		isErr := false
		if ie := k[schema.ResIsError]; ie.Exists() {
			if ie != schema.JSONTrue && ie != schema.JSONFalse {
				v := invalidResult(method, "isError is not a boolean", m)
				v.ResultType = resultType
				return v
			}
			isErr = ie == schema.JSONTrue
		}
		if sc := k[schema.ResStructuredContent]; sc.Exists() && structuredMustBeObject(ev.ProtocolVersion) && sc != schema.JSONObject {
			v := invalidResult(method, "structuredContent is not an object", m)
			v.ResultType = resultType
			return v
		}
		if isErr {
			return Verdict{Outcome: ToolError, Reason: "tool reported isError: true", ErrorType: "tool_error",
				ResultType: resultType, IsError: &isErr, Judged: m}
		}
		return Verdict{Outcome: ToolSuccess, Reason: "tool result", ResultType: resultType, IsError: &isErr, Judged: m}
	}
	for _, f := range requiredFields[method] {
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
			v := invalidResult(method, method+" result lacks "+f.path+" ("+f.typ+")", m)
			v.ResultType = resultType
			return v
		}
	}
	return Verdict{Outcome: Success, Reason: "valid result", ResultType: resultType, Judged: m}
}

// mappedProtocolError applies the 2026-07-28 exception to "transport first":
// that version maps protocol errors onto HTTP statuses (400 for -32602,
// -32020, -32021 and -32022, 404 for -32601), and clients deliver such a
// response to the application as the JSON-RPC error it carries (the
// TypeScript SDK v2 and the Go SDK surface the body's error, not an HTTP
// failure). So in 2026-07-28 a 4xx final attempt whose body is a valid
// JSON-RPC error response with the request's own id is JSONRPC_ERROR; the
// status stays in http_statuses. Anything else (another version, where a
// 404 is a session expiry; a null or other id, which answers no request; a
// body that is not a valid JSON-RPC error; a 5xx; the statuses of
// httpOwnStatus) is not, and the caller goes on with HTTP_ERROR.
func oracleMappedProtocolError(ev *Evidence, at *Attempt) (Verdict, bool) {
	if !Stateless(ev.ProtocolVersion) || at.Status < 400 || at.Status > 499 || httpOwnStatus[at.Status] {
		return Verdict{}, false
	}
	m := matchIn(at.Messages, ev.ID)
	if m == nil {
		return Verdict{}, false
	}
	v := oracleJudgeMatched(ev, m)
	if v.Outcome != JSONRPCError || v.ErrorCode == nil {
		return Verdict{}, false
	}
	v.Reason = codeReason(*v.ErrorCode) + " carried by HTTP " + statusText(at.Status) +
		" (2026-07-28 maps protocol errors onto HTTP statuses)"
	return v, true
}

// name completes a verdict with its OpenTelemetry names (error_type,
// rpc_response_status_code, server_error) and its error kind. It runs
// last, once the outcome is final.
func oracleName(v *Verdict, ev *Evidence) {
	v.ErrorType = oracleErrorType(v, ev)
	v.RPCStatusCode = ""
	if v.ErrorCode != nil {
		v.RPCStatusCode = codeText(*v.ErrorCode)
	}
	v.ServerError = oracleServerError(v, ev)
	v.ErrorKind = ErrorKind(oracleKindFacts(v, ev))
}

// kindFacts gathers what ErrorKind reads from a verdict and its evidence.
func oracleKindFacts(v *Verdict, ev *Evidence) KindFacts {
	f := KindFacts{Outcome: v.Outcome, ErrorType: v.ErrorType, Code: v.ErrorCode, HTTPStatus: finalStatus(ev),
		OnSession: onSession(ev), Text: v.ErrorMessage}
	last := finalAttempt(ev)
	switch v.Outcome {
	case NoResponse:
		if last != nil && !last.Responded {
			f.Failure = last.Failure
		} else if v.ErrorType == "timeout" {
			f.Failure = schema.FailureTimeout
		}
	case StreamIncomplete:
		if last != nil {
			f.Failure = last.StreamEnd
		}
	case ToolError:
		if v.Judged != nil {
			f.Text = ToolText(v.Judged)
		}
	case HTTPError:
		if f.Text == "" && last != nil {
			f.Text = oracleBodyText(last)
		}
	}
	return f
}

// bodyText is the body of an error response that carried no JSON-RPC
// error: a plain-text "session not found", a JSON object of a gateway's own.
func oracleBodyText(at *Attempt) string {
	for i := range at.Messages {
		if m := &at.Messages[i]; m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther {
			return string(m.Raw)
		}
	}
	return ""
}

// hiddenFailureOf is HiddenFailure of a judged tool result.
func oracleHiddenFailureOf(m *schema.Message) (bool, string) {
	if p := m.RPC; p != nil {
		r := p.Res
		return oldHiddenFailure(r.Texts[0], r.TextBlocks > 0 && r.FirstText, r.StructuredContent)
	}
	content, sc := members(gjson.GetBytes(m.Raw, "result").Raw, "content", "structuredContent")
	raw, ok := firstText(content)
	return oldHiddenFailure(raw, ok, sc)
}

// errorType is OpenTelemetry error.type, set if and only if the exchange
// failed: the JSON-RPC code as text for JSONRPC_ERROR, "tool_error" for
// TOOL_ERROR (both from the MCP conventions), the HTTP status as text for
// HTTP_ERROR (the general convention's own example "500"), and for the rest
// low-cardinality values of our own, listed in the package documentation.
func oracleErrorType(v *Verdict, ev *Evidence) string {
	switch v.Outcome {
	case ToolSuccess, Success, InputRequired:
		return ""
	case ToolError:
		return "tool_error"
	case Cancelled:
		return "cancelled"
	case MalformedJSON, InvalidEnvelope, InvalidToolResult, InvalidResult:
		return strings.ToLower(v.Outcome)
	case StreamIncomplete:
		if last := finalAttempt(ev); last != nil {
			switch last.StreamEnd {
			case schema.StreamReset:
				return "reset"
			case schema.StreamTimeout:
				return "timeout"
			case schema.StreamClientClosed:
				return "client_abort"
			}
		}
		return "_OTHER"
	case JSONRPCError:
		if v.ErrorCode != nil {
			return codeText(*v.ErrorCode)
		}
	case HTTPError:
		if st := finalStatus(ev); st != 0 {
			return statusText(st)
		}
	case Unknown:
		// A failure the log reported without a body keeps its stated
		// error.type; otherwise UNKNOWN is not known to have failed.
		if v.ErrorType == "" && ev.Reported != nil && ev.Reported.Failed {
			return "_OTHER"
		}
		return v.ErrorType
	}
	return orDefault(v.ErrorType, "_OTHER") // NO_RESPONSE: the failure kind, "timeout" or "_OTHER"
}

// serverError is the server's view of the exchange (OpenTelemetry
// mcp.server.status.attributes): it failed (error_type is set), and not by
// a caller's mistake: not one of callerCodes, not an answer the server gave
// with a 4xx status (the HTTP conventions leave 4xx unset on server spans,
// and 2026-07-28 maps exactly the caller's protocol errors onto 4xx), not
// the client's own cancellation or abort. A tool_error counts: the
// conventions exclude codes only.
func oracleServerError(v *Verdict, ev *Evidence) bool {
	switch {
	case v.ErrorType == "", v.Outcome == Cancelled, v.ErrorType == "client_abort":
		return false
	case v.ErrorCode != nil && callerCodes[*v.ErrorCode]:
		return false
	}
	st := finalStatus(ev)
	return st < 400 || st > 499
}

// advice maps a verdict to the seed article's retry table.
func oracleAdvice(v *Verdict, ev *Evidence) string {
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
