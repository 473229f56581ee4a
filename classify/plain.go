package classify

// A prefilter for the first-line rules of judgeText: one pass over a
// first line that proves none of them can fire, so that the line of a
// plain success ("Found 12 documents …") is neither lower-cased nor run
// through the rules one by one.
//
// Every first-line rule (start, httpInside, phrases, invalidStart, and
// start and phrases after "<program>: ") fires only on a line whose
// lower-cased form holds one of plainNeedles, or a number of three digits
// starting with 4 or 5 (each HTTP status rule needs an error status). A line with
// neither is plain. The needles are the strings the rules look for, or a
// part every one of them shares ("error" stands for "Error:", "Database
// error:", "KeyError:", "An error occurred" and "1 validation error
// for"); the differential tests hold the prefilter to the rules.

// plainNeedles, lower case, each at least four bytes.
var plainNeedles = func() []string {
	n := []string{
		// start: tracebacks ("Traceback (most recent call last)",
		// "panic: ", "fatal error: ", "goroutine 1 [running]",
		// "thread 'main' panicked at").
		"traceback", "panic", "fatal", "goroutine",
		// errorPrefix: every "error" rule, "[error]", "[err]",
		// "[fatal]", "npm err!", "something went wrong", "sorry …"
		// (which also needs error, failed, unable, could), "Msg 208,
		// Level 16"; anError and wordsThenError need "error".
		"error", "[err", "npm err", "something went wrong", ", level ",
		// exception: its prefixes, and a name ending in Error,
		// Exception or Timeout.
		"exception", "unhandled", "uncaught", "timeout",
		// failedStarts and failedAfterSubject.
		"failed", "failure:", "unable", "could", "cannot", "can't", "can not",
	}
	n = append(n, invalidStarts...)
	// httpStartRule's reason phrases (its other rules need a status).
	n = append(n, httpReasons...)
	for _, class := range hiddenPhrases {
		n = append(n, class.phrases...)
	}
	return n
}()

// lowerTab lower-cases an ASCII letter and keeps every other byte, as
// lowerASCII does.
var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// needleIndex holds plainNeedles by first byte; needleHeads marks the
// headHash of each one's first four bytes.
var needleIndex, needleHeads = func() (ix [256][]string, heads [1 << 16 / 64]uint64) {
	for _, n := range plainNeedles {
		if len(n) < 4 || lowerASCII(n) != n {
			panic("classify: prefilter needle not lower case or shorter than 4 bytes: " + n)
		}
		ix[n[0]] = append(ix[n[0]], n)
		h := headHash(n)
		heads[h/64] |= 1 << (h % 64)
	}
	return ix, heads
}()

// plainLine: no first-line rule can fire on line (it holds no needle and
// no error status).
func plainLine(line string) bool {
	var w uint32 // the last four bytes read, lower-cased, the first lowest
	for i := 0; i < len(line); i++ {
		c := lowerTab[line[i]]
		if (c == '4' || c == '5') && statusLike(line, i) {
			return false
		}
		w = w>>8 | uint32(c)<<24
		if i < 3 {
			continue
		}
		if h := w * 0x9E3779B1 >> 16; needleHeads[h/64]&(1<<(h%64)) != 0 && needleAt(line[i-3:]) {
			return false
		}
	}
	return true
}

// statusLike: three digits at line[i:], not inside a longer number (what
// errorStatusAt and its callers need of a status; line[i] is a 4 or 5).
func statusLike(line string, i int) bool {
	return i+2 < len(line) && isDigit(line[i+1]) && isDigit(line[i+2]) &&
		(i == 0 || !isDigit(line[i-1])) && (i+3 == len(line) || !isDigit(line[i+3]))
}

// needleAt: s starts with a needle, ASCII letters in any case.
func needleAt(s string) bool {
	for _, n := range needleIndex[lowerTab[s[0]]] {
		if len(s) >= len(n) && equalLower(s[:len(n)], n) {
			return true
		}
	}
	return false
}

// equalLower: s lower-cased (ASCII) is low.
func equalLower(s, low string) bool {
	for i := 0; i < len(low); i++ {
		if lowerTab[s[i]] != low[i] {
			return false
		}
	}
	return true
}
