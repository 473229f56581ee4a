package redact

import "strings"

// Prechecks: for each detector, a necessary condition for its expression to
// match where it is tried, read from the expression. Most keywords occur in
// ordinary text ("name", "key", "token", "://", "@"); the expression after
// them rarely matches, and trying it costs far more than looking at the
// next few bytes. A precheck never says no where the expression would
// match: the detection is the same with or without them (equiv_test.go
// compares with the implementation of before).
//
// (?i) in an expression folds by Unicode: k also matches U+212A and s also
// U+017F. Where a precheck reads letters past the keyword it found, it
// therefore takes any non-ASCII byte for a letter.

// reSpace is \s in an expression: [\t\n\f\r ].
func reSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// prefixes: the expression starts with one of ps, case-sensitive.
func prefixes(ps ...string) func(string, int, int) bool {
	return func(s string, at, _ int) bool {
		for _, p := range ps {
			if strings.HasPrefix(s[at:], p) {
				return true
			}
		}
		return false
	}
}

// sepAt: sep matches at s[i:]: (?:\\*["'])?\s*(?::=|=>|[:=]), the blanks
// after it being optional.
func sepAt(s string, i int) bool {
	j := i
	for j < len(s) && s[j] == '\\' {
		j++
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	} else if j > i {
		return false // backslashes not followed by a quote
	}
	for j < len(s) && reSpace(s[j]) {
		j++
	}
	return j < len(s) && (s[j] == ':' || s[j] == '=')
}

// sepAfter: a fixed keyword of n bytes (found where the expression is
// tried), then sep.
func sepAfter(n int) func(string, int, int) bool {
	return func(s string, at, _ int) bool { return sepAt(s, at+n) }
}

// wordByte: a byte an alternative of key names can match: an ASCII letter,
// _ . -, or (folding) any byte of a non-ASCII rune.
func wordByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || c == '_' || c == '.' || c == '-' || c >= 0x80
}

// wordThenSep: an alternative of key names (letters and _ . -, at most n
// runes) then sep. The name cannot end before the end of the run of such
// bytes, since sep cannot start with one.
func wordThenSep(n int) func(string, int, int) bool {
	return func(s string, at, _ int) bool {
		j := at
		for j < len(s) && wordByte(s[j]) {
			j++
		}
		return j-at <= 3*n && sepAt(s, j)
	}
}

// wordThenAssign: AccountKey|SharedAccessKey, then \s*[:=].
func wordThenAssign(n int) func(string, int, int) bool {
	return func(s string, at, _ int) bool {
		j := at
		for j < len(s) && wordByte(s[j]) {
			j++
		}
		if j-at > 3*n {
			return false
		}
		for j < len(s) && reSpace(s[j]) {
			j++
		}
		return j < len(s) && (s[j] == ':' || s[j] == '=')
	}
}

// sasSignature: SharedAccessSignature(?:\s*[:=]\s*|\s+).
func sasSignature(s string, at, _ int) bool {
	j := at + len("sharedaccesssignature")
	return j < len(s) && (reSpace(s[j]) || s[j] == ':' || s[j] == '=')
}

// schemeGap: an auth scheme of n bytes, then (?:\s+|\+|%20).
func schemeGap(n int) func(string, int, int) bool {
	return func(s string, at, _ int) bool {
		j := at + n
		return j < len(s) && (reSpace(s[j]) || s[j] == '+' || strings.HasPrefix(s[j:], "%20"))
	}
}

// spaceAfter: a keyword of n bytes, then \s.
func spaceAfter(n int) func(string, int, int) bool {
	return func(s string, at, _ int) bool { return at+n < len(s) && reSpace(s[at+n]) }
}

// jwtStart: eyJ[A-Za-z0-9_-]{5,}.
func jwtStart(s string, at, _ int) bool {
	if !strings.HasPrefix(s[at:], "eyJ") || len(s)-at < 8 {
		return false
	}
	for i := at + 3; i < at+8; i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// githubStart: gh[pousr]_ or github_pat_.
func githubStart(s string, at, _ int) bool {
	t := s[at:]
	return len(t) >= 4 && t[0] == 'g' && t[1] == 'h' && strings.IndexByte("pousr", t[2]) >= 0 && t[3] == '_' ||
		strings.HasPrefix(t, "github_pat_")
}

// awsKeyStart: (?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}: 20 bytes
// from an A.
func awsKeyStart(s string, at, _ int) bool { return len(s)-at >= 20 && s[at] == 'A' }

// urlStop and userStop end the parts of ://user:password@: the user part
// stops at a byte of urlStop, the password part at one of userStop.
var (
	urlStop  = delims(" \t\n\f\r/?#@:\"'<>\\")
	userStop = delims(" \t\n\f\r/?#@\"'<>\\")
)

// urlPassword: ://[^\s/?#@:"'<>\\]{0,128}:([^\s/?#@"'<>\\]{1,256})@. The
// first byte of urlStop after :// must be the colon, and the first byte of
// userStop after the colon, not right after it, the @.
func urlPassword(s string, at, _ int) bool {
	j := at + 3
	for j < len(s) && !urlStop[s[j]] {
		j++
	}
	if j >= len(s) || s[j] != ':' {
		return false
	}
	k := j + 1
	for k < len(s) && !userStop[s[k]] {
		k++
	}
	return k > j+1 && k < len(s) && s[k] == '@'
}

// headerName: name\\*"\s*: (then the rest of the header pair).
func headerName(s string, at, _ int) bool {
	j := at + len("name")
	for j < len(s) && s[j] == '\\' {
		j++
	}
	if j >= len(s) || s[j] != '"' {
		return false
	}
	j++
	for j < len(s) && reSpace(s[j]) {
		j++
	}
	return j < len(s) && s[j] == ':'
}

// emailAt: [A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}
// tried at the start of the local part before the @ at pos: the local part
// is not empty, a domain byte follows the @, and the run of domain bytes and
// dots after it holds a dot and two letters.
func emailAt(s string, at, pos int) bool {
	if at >= pos || pos+1 >= len(s) || !isDomainByte(s[pos+1]) {
		return false
	}
	for i := pos + 1; i < len(s) && (isDomainByte(s[i]) || s[i] == '.'); i++ {
		if s[i] == '.' && i+2 < len(s) && isLetter(s[i+1]) && isLetter(s[i+2]) {
			return true
		}
	}
	return false
}

func isDomainByte(c byte) bool { return isAlnum(c) || c == '-' }
func isLetter(c byte) bool     { return 'a' <= c|0x20 && c|0x20 <= 'z' }
