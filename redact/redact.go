// Package redact keeps secrets and personal data out of everything mcptrace
// writes: keyed pseudonyms for identifiers that analysts join on (session
// ids), masking of secret-shaped text in free-text values (error messages,
// quarantine excerpts), and safe excerpts of raw input. Every value is
// redacted before any sink, log line or report sees it.
package redact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
)

// Pseudonymizer turns identifiers into keyed pseudonyms: HMAC-SHA256 under a
// secret key, prefixed with the key id so keys can rotate. The same key gives
// the same pseudonym on every worker and every run; without the key nobody can
// reverse or recompute one. It is safe for concurrent use.
type Pseudonymizer struct {
	keyID string
	key   []byte
}

// NewPseudonymizer returns a pseudonymizer for key, labelled keyID.
func NewPseudonymizer(keyID string, key []byte) (*Pseudonymizer, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("pseudonym key is %d bytes; use at least 16 random bytes", len(key))
	}
	if keyID == "" || strings.ContainsAny(keyID, ": ") {
		return nil, fmt.Errorf("pseudonym key id %q must be non-empty, without spaces or colons", keyID)
	}
	return &Pseudonymizer{keyID: keyID, key: append([]byte(nil), key...)}, nil
}

// RandomPseudonymizer returns a pseudonymizer with a fresh random key: its
// pseudonyms are stable within a run only.
func RandomPseudonymizer() *Pseudonymizer {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	p, _ := NewPseudonymizer("run", key)
	return p
}

// KeyID returns the key id that prefixes every pseudonym.
func (p *Pseudonymizer) KeyID() string { return p.keyID }

// Pseudonym returns keyID:base64url(HMAC-SHA256(key, v))[:22].
func (p *Pseudonymizer) Pseudonym(v string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(v))
	sum := m.Sum(nil)
	return p.keyID + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

type rule struct {
	name     string
	keywords []string // lower-case; the regexp runs only when one occurs
	re       *regexp.Regexp
	keep     int // submatch to keep in front of the replacement (0: none)
}

var rules = []rule{
	{name: "private_key", keywords: []string{"private key"}, re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`)},
	{name: "jwt", keywords: []string{"eyj"}, re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)},
	{name: "bearer", keywords: []string{"bearer", "basic"}, re: regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}`), keep: 1},
	{name: "aws_key", keywords: []string{"akia", "asia"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{name: "github_token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,})`)},
	{name: "slack_token", keywords: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{name: "stripe_key", keywords: []string{"_live_", "_test_"}, re: regexp.MustCompile(`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}`)},
	{name: "api_key", keywords: []string{"sk-", "ck_pat_"}, re: regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|ck_pat_[A-Za-z0-9_]{6,})`)},
	{name: "assignment", keywords: []string{"key", "token", "secret", "password", "passwd", "pwd", "auth", "cookie", "session"},
		re: regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?key|secret[_-]?key|client[_-]?secret|[a-z_]*token|secret|password|passwd|pwd|authorization|cookie|session[_-]?id)\\?["']?\s*[:=]\s*\\?["']?)([^\s"'&,;{}\\]{4,})`), keep: 1},
	// Headers written as {"name": "...", "value": "..."} pairs (HAR,
	// Inspector): the value of a credential-bearing header, whatever it
	// looks like.
	{name: "header", keywords: []string{`"value"`},
		re: regexp.MustCompile(`(?i)("name"\s*:\s*"(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|apikey|x-auth-token|mcp-session-id|[a-z0-9-]*(?:token|secret|password|key))"\s*,\s*"value"\s*:\s*")(?:[^"\\]|\\.)*`), keep: 1},
	{name: "email", keywords: []string{"@"}, re: regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)},
}

// Mask replaces secret-shaped substrings of s with [REDACTED:rule]. A keyword
// prefilter decides which rules' regular expressions run at all.
func Mask(s string) string {
	if s == "" {
		return s
	}
	lower := strings.ToLower(s)
	for i := range rules {
		r := &rules[i]
		hit := false
		for _, k := range r.keywords {
			if strings.Contains(lower, k) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		repl := "[REDACTED:" + r.name + "]"
		if r.keep > 0 {
			repl = "${" + fmt.Sprint(r.keep) + "}" + repl
		}
		ns := r.re.ReplaceAllString(s, repl)
		if ns != s {
			s = ns
			lower = strings.ToLower(s)
		}
	}
	return s
}

// Excerpt returns at most max runes of b as printable text: invalid UTF-8
// becomes U+FFFD, control characters are escaped, and secrets are masked
// (before clipping, so a secret cut in half is still found).
func Excerpt(b []byte, max int) string {
	// Mask a bounded window, larger than the excerpt, so that a token
	// straddling the cut is seen whole.
	window := b
	if len(window) > 4*max+256 {
		window = window[:4*max+256]
	}
	s := Mask(strings.ToValidUTF8(string(window), "\uFFFD"))
	var sb strings.Builder
	n := 0
	for _, r := range s {
		var esc string
		switch {
		case r == '\n':
			esc = `\n`
		case r == '\r':
			esc = `\r`
		case r == '\t':
			esc = `\t`
		case r < 0x20 || r == 0x7f:
			esc = fmt.Sprintf(`\x%02x`, r)
		}
		w := 1
		if esc != "" {
			w = len(esc)
		}
		if n+w > max {
			sb.WriteString("…")
			break
		}
		if esc != "" {
			sb.WriteString(esc)
		} else {
			sb.WriteRune(r)
		}
		n += w
	}
	return sb.String()
}
