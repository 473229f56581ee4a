package classify

// The detector as it was before issue 11's rewrite of its text reading
// (each first text unescaped by gjson, prose asked twice with five
// searches): the oracle the differential tests compare against. Only the
// functions the rewrite changed are copied; the rules they call are shared.

import (
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

func oldHiddenFailure(raw string, ok bool, sc string) (suspect bool, reason string) {
	if ok {
		if len(raw) > hiddenEnvelope {
			suspect, reason = oldJudgeText(headOfString(raw), true)
		} else {
			suspect, reason = oldJudgeText(gjson.Parse(raw).Str, false)
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
func oldJudgeText(text string, cut bool) (bool, string) {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	if t == "" {
		return false, ""
	}
	switch t[0] {
	case '{', '[':
		if cut {
			return false, ""
		}
		if gjson.Valid(t) {
			if t[0] == '[' {
				return false, "" // a list of results, whatever its items say
			}
			return judgeEnvelope(gjson.Parse(t))
		}
	case '<':
		return judgeMarkup(t)
	}
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
	l := lineCtx{line: line, low: lowerASCII(line), next: next,
		oneLine: !cut && !strings.Contains(strings.TrimRight(t, " \t\r\n"), "\n"),
		short:   !cut && len(t) <= hiddenShort}
	if r := l.oldStart(); r != "" {
		return true, r
	}
	if !l.short || l.oldProse() {
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
		if r := sub.oldStart(); r != "" {
			return true, r
		}
		if r := sub.phrases(false); r != "" {
			return true, r
		}
	}
	return false, ""
}
func (l *lineCtx) oldStart() string {
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
	if r := l.oldHTTPStart(); r != "" {
		return r
	}
	return ""
}
func (l *lineCtx) oldHTTPStart() string {
	low := l.low
	if l.oldProse() {
		return ""
	}
	for _, p := range []string{"http error ", "http/1.0 ", "http/1.1 ", "http/2 ", "http/3 ", "http "} {
		if strings.HasPrefix(low, p) && errorStatusAt(low, len(p)) {
			return SuspectHTTPStatus
		}
	}
	if errorStatusAt(low, 0) && reasonAt(low, 4) {
		return SuspectHTTPStatus
	}
	for _, r := range httpReasons {
		if strings.HasPrefix(low, r) && terminator(low[len(r):]) && r != "not found" && r != "unauthorized" && r != "forbidden" && r != "conflict" && r != "gone" {
			if r == "too many requests" {
				return SuspectRateLimited
			}
			return SuspectHTTPStatus
		}
	}
	return ""
}
func (l *lineCtx) oldProse() bool {
	for _, w := range []string{" is a ", " means ", " indicates ", " refers to ", "what does "} {
		if strings.Contains(l.low, w) {
			return true
		}
	}
	return false
}

// oldStatusInText is the regular expression statusInText replaced.
var oldStatusInText = regexp.MustCompile(`\b(?:http|status(?: code)?|error)\s*:?\s*(40[138]|429|50[234])\b`)

func oldStatus(text string) string {
	if m := oldStatusInText.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}
