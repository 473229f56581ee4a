package classify

import "mcptrace/schema"

// Values a verdict points to or names, made once: allocating them per
// exchange was all of classification's allocations on a plain success.

var (
	trueValue, falseValue = true, false
	// codeValues holds the codes of the reserved JSON-RPC range
	// (minCodeText to maxCodeText), which most error codes are.
	codeValues = func() (v [maxCodeText - minCodeText + 1]int64) {
		for i := range v {
			v[i] = minCodeText + int64(i)
		}
		return v
	}()
)

// boolPtr points to a shared b.
func boolPtr(b bool) *bool {
	if b {
		return &trueValue
	}
	return &falseValue
}

// codePtr points to code: a shared value in the reserved range, a new one
// outside it.
func codePtr(code int64) *int64 {
	if code >= minCodeText && code <= maxCodeText {
		return &codeValues[code-minCodeText]
	}
	p := new(int64) // only here: a parameter whose address is taken would be allocated on every call
	*p = code
	return p
}

// noHTTPResponse is "no HTTP response: " + orDefault(failure, "failure").
func noHTTPResponse(failure string) string {
	switch failure {
	case "":
		return "no HTTP response: failure"
	case schema.FailureConnectionRefused:
		return "no HTTP response: " + schema.FailureConnectionRefused
	case schema.FailureReset:
		return "no HTTP response: " + schema.FailureReset
	case schema.FailureTimeout:
		return "no HTTP response: " + schema.FailureTimeout
	case schema.FailureClientAbort:
		return "no HTTP response: " + schema.FailureClientAbort
	}
	return "no HTTP response: " + failure
}

// streamEndedReason is "event stream ended without the response (" +
// orDefault(end, "end unknown") + ")".
func streamEndedReason(end string) string {
	switch end {
	case "":
		return "event stream ended without the response (end unknown)"
	case schema.StreamComplete:
		return "event stream ended without the response (" + schema.StreamComplete + ")"
	case schema.StreamReset:
		return "event stream ended without the response (" + schema.StreamReset + ")"
	case schema.StreamTimeout:
		return "event stream ended without the response (" + schema.StreamTimeout + ")"
	case schema.StreamClientClosed:
		return "event stream ended without the response (" + schema.StreamClientClosed + ")"
	}
	return "event stream ended without the response (" + end + ")"
}
