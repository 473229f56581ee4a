package classify

import "strconv"

// The decimal texts of JSON-RPC error codes and HTTP statuses, made once:
// a verdict names its code or status in several fields, and building each
// text per exchange was most of classification's allocations.

const (
	minCodeText = -32768 // the reserved JSON-RPC range, -32768 to -32000
	maxCodeText = -32000
	minStatus   = 100
	maxStatus   = 599
)

var (
	codeTexts, codeReasons     = numTexts(minCodeText, maxCodeText, "JSON-RPC error ")
	statusTexts, statusReasons = numTexts(minStatus, maxStatus, "HTTP ")
)

// numTexts is the texts of lo to hi, and each after prefix.
func numTexts(lo, hi int64, prefix string) (texts, prefixed []string) {
	for n := lo; n <= hi; n++ {
		s := strconv.FormatInt(n, 10)
		texts, prefixed = append(texts, s), append(prefixed, prefix+s)
	}
	return texts, prefixed
}

// codeText is strconv.FormatInt(code, 10).
func codeText(code int64) string {
	if code >= minCodeText && code <= maxCodeText {
		return codeTexts[code-minCodeText]
	}
	return strconv.FormatInt(code, 10)
}

// codeReason is "JSON-RPC error " + codeText(code).
func codeReason(code int64) string {
	if code >= minCodeText && code <= maxCodeText {
		return codeReasons[code-minCodeText]
	}
	return "JSON-RPC error " + strconv.FormatInt(code, 10)
}

// statusText is strconv.Itoa(status).
func statusText(status int) string {
	if status >= minStatus && status <= maxStatus {
		return statusTexts[status-minStatus]
	}
	return strconv.Itoa(status)
}

// statusReason is "HTTP " + statusText(status).
func statusReason(status int) string {
	if status >= minStatus && status <= maxStatus {
		return statusReasons[status-minStatus]
	}
	return "HTTP " + strconv.Itoa(status)
}
