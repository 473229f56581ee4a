package classify

import (
	"strings"
	"testing"
)

// kindCodes are JSON-RPC codes each branch of codeKind reads (nil: none).
var kindCodes = func() []*int64 {
	out := []*int64{nil}
	for _, c := range []int64{-32700, -32601, -32002, -32020, -32021, -32022, -32042, -32600, -32602, 408,
		-32603, -32001, 32600, -32000, 0} {
		c := c
		out = append(out, &c)
	}
	return out
}()

// checkKind compares textKind and ErrorKind with their oracle on one text:
// the text alone, and the text as the message of each outcome, code and
// status ErrorKind tells apart.
func checkKind(t testing.TB, where, text string) {
	t.Helper()
	if got, want := textKind(text), oldTextKind(text); got != want {
		t.Fatalf("%s: textKind(%.300q) = %q, the oracle says %q", where, text, got, want)
	}
	for _, f := range []KindFacts{
		{Outcome: ToolError, Text: text},
		{Outcome: NoResponse, Text: text},
		{Outcome: JSONRPCError, Text: text},
		{Outcome: Unknown, ErrorType: "x", Text: text},
		{Outcome: HTTPError, HTTPStatus: 404, Text: text},
		{Outcome: HTTPError, HTTPStatus: 400, Code: kindCodes[8], Text: text},
	} {
		sameKind(t, where, f)
	}
	// ErrorKind reads an "MCP error <code>: " prefix of a tool error;
	// every code branch, with the text as the message after it.
	for _, c := range kindCodes[1:] {
		sameKind(t, where, KindFacts{Outcome: JSONRPCError, Code: c, Text: text})
	}
}

func sameKind(t testing.TB, where string, f KindFacts) {
	t.Helper()
	if got, want := ErrorKind(f), oldErrorKind(f); got != want {
		t.Fatalf("%s: ErrorKind(%+v) = %q, the oracle says %q", where, f, got, want)
	}
}

// TestErrorKindSameAsOracle: texts where the fast paths could differ from
// the oracle (letters Unicode lower-cases to ASCII, the 4096-byte cut, a
// phrase and a regular expression or a status of an earlier pattern, the
// TS1 "MCP error" prefix). TestHiddenFailureSameAsOracle compares both on
// every text it gathers (checkText calls checkKind).
func TestErrorKindSameAsOracle(t *testing.T) {
	texts := []string{"", "x", "Unknown tool: x", "UNKNOWN TOOL", "un\u212anown tool", "\u0130nvalid token",
		"ınvalid token", "Tool 'x' not found", "tool x does not exist; rate limit", "HTTP 429 timeout",
		"error 401: unknown tool", "status code: 503 overloaded", "Resource x not found", "request was cancelled",
		"MCP error -32602: Tool x not found", "Error: MCP error -32600: Session not found", "MCP error 408: x",
		"MCP error -32603: internal error", "MCP error x: unknown tool", "mcp error -32602: validation error",
		"protocol version 1 not supported", "client capability sampling required", "argument \"x\" is not a string",
		"required argument \"x\" not found", "does not match the input schema", "time out", "timeout",
		"\xff\xfeUNKNOWN TOOL", "é rate limit", "Ü" + strings.Repeat("a", 5000) + "unknown tool",
		strings.Repeat("A", 4090) + "unknown tool", strings.Repeat("a", 4084) + "unknown tool",
		strings.Repeat("é", 2047) + "Timeout", strings.Repeat("x", 1023) + "Forbidden", strings.Repeat("x", 1030) + "Forbidden",
		"u", "un", "unknown too", "tool not foun", "Session Not Found after HTTP 401"}
	for _, s := range texts {
		checkKind(t, "table", s)
	}
	for _, o := range []string{ToolSuccess, Success, InputRequired, Cancelled, MalformedJSON, StreamIncomplete, Unknown} {
		for _, fl := range []string{"", "timeout", "reset", "connection_refused", "client_abort", "client_closed"} {
			for _, c := range kindCodes {
				sameKind(t, "table", KindFacts{Outcome: o, ErrorType: fl, Failure: fl, Code: c, Text: "unknown tool"})
			}
		}
	}
	for _, st := range []int{0, 400, 401, 403, 404, 407, 408, 410, 422, 429, 499, 500, 501, 502, 504, 600} {
		for _, c := range kindCodes {
			for _, on := range []bool{false, true} {
				for _, s := range []string{"", "x", "Session not found", "rate limit"} {
					sameKind(t, "table", KindFacts{Outcome: HTTPError, HTTPStatus: st, Code: c, OnSession: on, Text: s})
				}
			}
		}
	}
}

// FuzzTextKindSameAsOracle: on any text, textKind and ErrorKind agree
// with their oracle.
func FuzzTextKindSameAsOracle(f *testing.F) {
	for _, s := range []string{"Unknown tool: x", "un\u212anown tool", "MCP error -32602: Tool x not found",
		"HTTP 429 timeout", "Resource x not found", "request was cancelled", "\xffTimeout", "Tool `a.b` is not registered"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkKind(t, "fuzz", s)
		checkKind(t, "fuzz", "MCP error -32602: "+s)
	})
}

// TestTextKindMixed: textKind, which tries only the patterns before the
// first phrase's whose needs the text holds or that name statuses (and
// reads the status only then), agrees with its oracle on texts mixing
// phrases and needs of every pattern, statuses with and without the words
// that introduce them, and digits that are no status, in any order.
func TestTextKindMixed(t *testing.T) {
	var pieces []string
	for _, p := range kindPhrases {
		pieces = append(pieces, p.text, strings.ToUpper(p.text))
	}
	pieces = append(pieces, "HTTP 401", "status code: 503", "error 429", "(503)", "Error: 504", "408", "http 4290",
		"status 502x", "10", "4", "5 ", " ", "x", "tool x ", `argument "x" `, "request ", "resource y ", "é", ": ", ".")
	r := uint64(3)
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	for range 100000 {
		var b strings.Builder
		for m := 1 + next(6); m > 0; m-- {
			b.WriteString(pieces[next(len(pieces))])
			if next(2) == 0 {
				b.WriteByte(' ')
			}
		}
		if s := b.String(); textKind(s) != oldTextKind(s) {
			t.Fatalf("textKind(%q) = %q, the oracle says %q", s, textKind(s), oldTextKind(s))
		}
	}
}
