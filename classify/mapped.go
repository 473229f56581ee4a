package classify

// httpOwnStatus lists the 4xx statuses that keep their HTTP meaning even
// when the body is a JSON-RPC error with the request's id: authentication
// (401, 403, 407) is settled by the client's HTTP layer (an OAuth challenge,
// a new token), and 408 and 429 are timing and throttling, with their own
// retry advice (the Go SDK fails a 429 as a transport error whatever the
// body). The 2026-07-28 spec maps no protocol error onto them.
var httpOwnStatus = map[int]bool{401: true, 403: true, 407: true, 408: true, 429: true}

// isHTTPOwnStatus is httpOwnStatus[status], as a switch.
func isHTTPOwnStatus(status int) bool {
	switch status {
	case 401, 403, 407, 408, 429:
		return true
	}
	return false
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
// httpOwnStatus) is not, and the caller goes on with HTTP_ERROR. It
// judges into v (a zero Verdict), and leaves it zero when it returns false.
func mappedProtocolError(ev *Evidence, at *Attempt, v *Verdict) bool {
	if !Stateless(ev.ProtocolVersion) || at.Status < 400 || at.Status > 499 || isHTTPOwnStatus(at.Status) {
		return false
	}
	m := matchIn(at.Messages, ev.ID)
	if m == nil {
		return false
	}
	judgeMatched(ev, m, v)
	if v.Outcome != JSONRPCError || v.ErrorCode == nil {
		*v = Verdict{}
		return false
	}
	v.Reason = mappedReason(*v.ErrorCode, at.Status)
	return true
}

// mappedReasons are mappedReason's texts of the mappings 2026-07-28 makes.
var mappedReasons = func() map[[2]int64]string {
	m := map[[2]int64]string{}
	for _, c := range [][2]int64{{-32602, 400}, {-32020, 400}, {-32021, 400}, {-32022, 400}, {-32601, 404}} {
		m[c] = buildMappedReason(c[0], int(c[1]))
	}
	return m
}()

// mappedReason is the reason of a JSON-RPC error code carried by an HTTP
// status.
func mappedReason(code int64, status int) string {
	if r, ok := mappedReasons[[2]int64{code, int64(status)}]; ok {
		return r
	}
	return buildMappedReason(code, status)
}

func buildMappedReason(code int64, status int) string {
	return codeReason(code) + " carried by HTTP " + statusText(status) +
		" (2026-07-28 maps protocol errors onto HTTP statuses)"
}

// Stateless reports whether version is 2026-07-28 or a later dated version:
// the era without sessions, whose HTTP statuses carry protocol errors. A
// later version is what a request answered -32022 (unsupported protocol
// version) names: the only other modern version is one the server does not
// know yet, and the server answers it by 2026-07-28's rules.
func Stateless(version string) bool {
	if len(version) != len(v20260728) {
		return false
	}
	// The first byte that differs from 2026-07-28 orders the two; a later
	// version must still be a date.
	for i := 0; i < len(version); i++ {
		if c, w := version[i], v20260728[i]; c != w {
			return c > w && isDate(version)
		}
	}
	return true
}

// isDate: s is DDDD-DD-DD.
func isDate(s string) bool {
	if len(s) != len(v20260728) || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != 4 && i != 7 && !isDigit(s[i]) {
			return false
		}
	}
	return true
}
