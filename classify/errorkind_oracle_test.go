package classify

// ErrorKind as it was before issue 11's rewrite of textKind (about 100
// strings.Contains on a strings.ToLower copy of every text, the TS1
// "MCP error" regular expression run on every tool error): the oracle
// TestErrorKindSameAsOracle and FuzzTextKindSameAsOracle compare against.
// The pattern table, statusInText and the regular expressions are shared.

import (
	"strconv"
	"strings"

	"mcptrace/schema"
)

func oldErrorKind(f KindFacts) string {
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
		if k := oldTextKind(f.Text); k != "" {
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
		if code, rest, ok := oldEmbeddedCode(f.Text); ok {
			if k := oldCodeKind(code, rest); k != KindOther {
				return k
			}
		}
		if k := oldTextKind(f.Text); k != "" {
			return k
		}
		return KindTool
	case JSONRPCError:
		if f.Code != nil {
			return oldCodeKind(*f.Code, f.Text)
		}
		return orDefault(oldTextKind(f.Text), KindOther)
	case HTTPError:
		return oldHTTPKind(f)
	}
	// UNKNOWN: a kind only when the log reported a failure.
	if f.ErrorType == "" {
		return ""
	}
	if f.ErrorType == "timeout" {
		return KindTimeout
	}
	if f.Code != nil {
		return oldCodeKind(*f.Code, f.Text)
	}
	return orDefault(oldTextKind(f.Text), KindOther)
}

func oldCodeKind(code int64, text string) string {
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
		if oldTextKind(text) == KindSession {
			return KindSession
		}
		return KindInvalidRequest
	case -32602:
		// Invalid params covers the unknown tool (Go SDK "unknown tool"),
		// the unknown prompt or resource (2026: resource not found), and
		// the legacy initialize's "Unsupported protocol version".
		switch k := oldTextKind(text); k {
		case KindUnknownTool, KindNotFound, KindVersion:
			return k
		}
		return KindValidation
	case 408: // PY1's request timeout (a local McpError code)
		return KindTimeout
	}
	k := oldTextKind(text)
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

func oldHTTPKind(f KindFacts) string {
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
		if k := oldCodeKind(*f.Code, f.Text); k != KindOther {
			return k
		}
	}
	if k := oldTextKind(f.Text); k != "" {
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

func oldTextKind(text string) string {
	if text == "" {
		return ""
	}
	if len(text) > maxKindText {
		text = text[:maxKindText]
	}
	text = strings.ToLower(text)
	status := ""
	if strings.ContainsAny(text, "0123456789") {
		status = statusInText(text)
	}
	for i := range kindPatterns {
		p := &kindPatterns[i]
		for _, ph := range p.phrases {
			if strings.Contains(text, ph) {
				return p.kind
			}
		}
		if p.re != nil && containsAny(text, p.needs) && p.re.MatchString(text) {
			return p.kind
		}
		for _, st := range p.statuses {
			if st == status {
				return p.kind
			}
		}
	}
	return ""
}

func oldEmbeddedCode(text string) (int64, string, bool) {
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

func containsAny(text string, needs []string) bool {
	for _, n := range needs {
		if strings.Contains(text, n) {
			return true
		}
	}
	return false
}
