package classify

import (
	"unsafe"

	"mcptrace/schema"
)

// callerCodes are the JSON-RPC codes the OpenTelemetry MCP conventions tell
// a server not to count as its errors (mcp.server.status.attributes): parse
// error, invalid request, method not found, invalid params (also an
// unknown tool) and resource not found. They are the caller's mistakes.
var callerCodes = map[int64]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32002: true}

// isCallerCode is callerCodes[code], as a switch.
func isCallerCode(code int64) bool {
	switch code {
	case -32700, -32600, -32601, -32602, -32002:
		return true
	}
	return false
}

// name completes a verdict with its OpenTelemetry names (error_type,
// rpc_response_status_code, server_error) and its error kind. It runs
// last, once the outcome is final.
func name(v *Verdict, ev *Evidence) {
	v.RPCStatusCode = ""
	if v.ErrorCode != nil {
		v.RPCStatusCode = codeText(*v.ErrorCode)
	}
	switch v.Outcome {
	case ToolSuccess, Success, InputRequired:
		// Nothing failed: errorType, serverError and ErrorKind give no
		// names, whatever the evidence (the common case, told at once).
		v.ErrorType, v.ServerError, v.ErrorKind = "", false, ""
		return
	}
	v.ErrorType = errorType(v, ev)
	v.ServerError = serverError(v, ev)
	v.ErrorKind = ErrorKind(kindFacts(v, ev))
}

// onSession: the request carried a session id in a version that has
// sessions. 2026-07-28 and later have none (a server ignores the header),
// so there a 404 is never a session expiry.
func onSession(ev *Evidence) bool { return ev.OnSession && !Stateless(ev.ProtocolVersion) }

// errorType is OpenTelemetry error.type, set if and only if the exchange
// failed: the JSON-RPC code as text for JSONRPC_ERROR, "tool_error" for
// TOOL_ERROR (both from the MCP conventions), the HTTP status as text for
// HTTP_ERROR (the general convention's own example "500"), and for the rest
// low-cardinality values of our own, listed in the package documentation.
func errorType(v *Verdict, ev *Evidence) string {
	switch v.Outcome {
	case ToolSuccess, Success, InputRequired:
		return ""
	case ToolError:
		return "tool_error"
	case Cancelled:
		return "cancelled"
	case MalformedJSON:
		return "malformed_json" // the outcome in lower case
	case InvalidEnvelope:
		return "invalid_envelope"
	case InvalidToolResult:
		return "invalid_tool_result"
	case InvalidResult:
		return "invalid_result"
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
func serverError(v *Verdict, ev *Evidence) bool {
	switch {
	case v.ErrorType == "", v.Outcome == Cancelled, v.ErrorType == "client_abort":
		return false
	case v.ErrorCode != nil && isCallerCode(*v.ErrorCode):
		return false
	}
	st := finalStatus(ev)
	return st < 400 || st > 499
}

func finalAttempt(ev *Evidence) *Attempt {
	if n := len(ev.Attempts); n > 0 {
		return &ev.Attempts[n-1]
	}
	return nil
}

// finalStatus is the final attempt's HTTP status, or the one a log
// reported; 0 when no status came.
func finalStatus(ev *Evidence) int {
	if last := finalAttempt(ev); last != nil {
		if last.Responded {
			return last.Status
		}
		return 0
	}
	if ev.Reported != nil {
		return ev.Reported.HTTPStatus
	}
	return 0
}

// kindFacts gathers what ErrorKind reads from a verdict and its evidence.
func kindFacts(v *Verdict, ev *Evidence) KindFacts {
	f := KindFacts{Outcome: v.Outcome, ErrorType: v.ErrorType, Code: v.ErrorCode, HTTPStatus: finalStatus(ev),
		OnSession: v.Outcome == HTTPError && onSession(ev), Text: v.ErrorMessage} // only httpKind reads OnSession
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
			f.Text = bodyText(last)
		}
	}
	return f
}

// bodyText is the body of an error response that carried no JSON-RPC
// error: a plain-text "session not found", a JSON object of a gateway's own.
func bodyText(at *Attempt) string {
	for i := range at.Messages {
		if m := &at.Messages[i]; m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther {
			// Read in place: ErrorKind only reads its facts' text.
			return unsafe.String(unsafe.SliceData(m.Raw), len(m.Raw))
		}
	}
	return ""
}
