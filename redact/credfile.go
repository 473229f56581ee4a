package redact

import (
	"path"
	"strings"
)

// Credential files. A walked input directory may hold a .pgpass, a .netrc,
// an AWS credentials file, a .env: no log format matches them, so they are
// quarantined as unknown_format, with an excerpt of their start. That
// excerpt is dropped when the file looks like a credentials file, by its
// name or by its lines; otherwise each line is masked with the
// credential-file rules (name<TAB>password lines here, .pgpass, netrc and
// e-mail:password lines among the detectors) before the excerpt is made.

// credentialsRule labels what this file's rules replace.
var credentialsRule = ruleIndex("credentials_file")

// DroppedExcerpt stands for the excerpt of a credentials file.
const DroppedExcerpt = marker + "credentials_file]"

// FileExcerpt is ExcerptWith for the head of a file (or a message) that
// matched no format: DroppedExcerpt if it looks like a credentials file,
// else the excerpt of its lines masked with the credential-file rules.
func FileExcerpt(name string, head []byte, max int, st *Stats) string {
	if CredentialsFileName(name) || credentialsShaped(head) {
		if st != nil {
			st.add(credentialsRule)
		}
		return DroppedExcerpt
	}
	return ExcerptWith(maskTabPairs(head, st), max, st)
}

// CredentialsFileName reports whether a file's name is that of a
// credentials file: .pgpass, .netrc, _netrc, credentials (AWS, gcloud),
// .git-credentials, .env and .env.<anything>, .my.cnf, .pypirc, .npmrc.
func CredentialsFileName(name string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, "\\", "/")))
	switch base {
	case ".pgpass", "pgpass.conf", ".netrc", "_netrc", "credentials", ".credentials", "credentials.json",
		".git-credentials", ".env", ".my.cnf", ".pypirc", ".npmrc", ".dockercfg", "htpasswd", ".htpasswd":
		return true
	}
	return strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env")
}

// credentialsShaped: most of the first lines that say anything (at most
// 20, comments and blank lines aside) are credential lines.
func credentialsShaped(b []byte) bool {
	lines, creds := 0, 0
	for s := string(b); s != "" && lines < 20; {
		line := s
		if k := strings.IndexByte(s, '\n'); k >= 0 {
			line, s = s[:k], s[k+1:]
		} else {
			s = ""
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		lines++
		if credentialLine(line) {
			creds++
		}
	}
	return lines > 0 && 2*creds >= lines
}

// credentialLine: one line of a credentials file: a .pgpass line, a netrc
// line, name<TAB>password, e-mail:password, a URL with a password (as
// .git-credentials has them), NAME=value (.env), an ini section or
// key = value pair of the AWS or gcloud files, user:hash (htpasswd).
func credentialLine(line string) bool {
	if tabPair(line) {
		return true
	}
	lower := strings.ToLower(line)
	for _, w := range []string{"machine ", "default ", "login ", "password ", "account ", "macdef "} {
		if strings.HasPrefix(lower, w) {
			return true
		}
	}
	if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
		return true // [default], [profile x]
	}
	if spans := scanPgpass(line, 0, nil); len(spans) > 0 {
		return true
	}
	if k := strings.IndexByte(line, '@'); k > 0 && strings.IndexByte(line[k:], ':') > 0 && !strings.ContainsAny(line, " \t") {
		return true // ana@example.com:password, https://user:pass@host
	}
	if k := strings.IndexByte(line, '='); k > 0 {
		key := strings.TrimSpace(strings.TrimPrefix(line[:k], "export "))
		if isName(key) && !strings.ContainsAny(key, ".") {
			return true
		}
	}
	if k := strings.IndexByte(line, ':'); k > 0 && isName(line[:k]) && !strings.ContainsAny(line[k+1:], " \t") && len(line)-k > 8 {
		return true // user:hash
	}
	return false
}

// tabPair: name<TAB>password: two fields, the first a name without blanks,
// the second without blanks either.
func tabPair(line string) bool {
	k := strings.IndexByte(line, '\t')
	if k <= 0 || k > 128 {
		return false
	}
	name, pass := line[:k], strings.TrimLeft(line[k:], "\t")
	return pass != "" && !strings.ContainsAny(name, " ") && !strings.ContainsAny(pass, " \t") && !isPlaceholder(pass)
}

// maskTabPairs replaces the second field of every name<TAB>password line
// of b, in a copy; b itself when there is none.
func maskTabPairs(b []byte, st *Stats) []byte {
	s := string(b)
	var out strings.Builder
	changed := false
	for s != "" {
		line, rest, nl := s, "", false
		if k := strings.IndexByte(s, '\n'); k >= 0 {
			line, rest, nl = s[:k], s[k+1:], true
		}
		t := strings.TrimRight(line, "\r")
		if tabPair(strings.TrimSpace(t)) {
			k := strings.IndexByte(t, '\t')
			out.WriteString(t[:k+1])
			out.WriteString(DroppedExcerpt)
			out.WriteString(line[len(t):])
			if st != nil {
				st.add(credentialsRule)
			}
			changed = true
		} else {
			out.WriteString(line)
		}
		if nl {
			out.WriteByte('\n')
		}
		s = rest
	}
	if !changed {
		return b
	}
	return []byte(out.String())
}
