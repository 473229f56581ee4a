// Package redact keeps secrets and personal data out of everything mcptrace
// writes: keyed pseudonyms for identifiers that analysts join on (session
// ids), masking of secret-shaped text in free-text values (error messages,
// quarantine excerpts), and safe excerpts of raw input. Every value is
// redacted before any sink, log line or report sees it.
//
// Speed. A goroutine redacting rows does it on a Worker of its own
// (Redactor.Worker): tool arguments are read once, by a strict JSON
// tokenizer, and their keyed hash and shape are written from its tokens
// (input that is not strict JSON is read by gjson as it always was); a
// detector's expression runs only where its keyword occurs and a precheck
// read from the expression says it can match; what the rows repeat (names,
// versions, URLs, session ids, messages) is redacted once per worker and
// kept, with what it counted, in bounded memos. Every result and count is
// the same as the plain implementation's, which the tests keep
// (oldimpl_test.go) and compare against.
package redact

import (
	"crypto/rand"
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
	sc := getScratch()
	s := sc.pseudonymOf(p, v)
	putScratch(sc)
	return s
}

// format writes a pseudonym or hash from its HMAC sum.
func (p *Pseudonymizer) format(sum []byte) string {
	var enc [22]byte
	base64.RawURLEncoding.Encode(enc[:], sum[:16])
	return p.keyID + ":" + string(enc[:])
}

// Excerpt returns at most max runes of b as printable text: invalid UTF-8
// becomes U+FFFD, control characters are escaped, and secrets are masked
// (before clipping, so a secret cut in half is still found).
func Excerpt(b []byte, max int) string { return ExcerptWith(b, max, nil) }

// escapedBreak is a JSON escape for a line break or a tab.
var escapedBreak = regexp.MustCompile(`\\[nrt]`)

// ExcerptWith is Excerpt, counting what the detectors replaced in st (which
// may be nil).
func ExcerptWith(b []byte, max int, st *Stats) string {
	// Mask a bounded window, larger than the excerpt, so that a token
	// straddling the cut is seen whole: the window ends at a blank or a
	// quote after the cut, if there is one within 4 KiB.
	window := b
	if cut := 4*max + 256; len(window) > cut {
		end := cut
		for end < len(window) && end < cut+4096 && !isWindowEnd(window[end]) {
			end++
		}
		window = window[:end]
	}
	// Raw JSON text writes line breaks and tabs as escapes (\n): give the
	// detectors the word boundary a real line break would give them.
	text := escapedBreak.ReplaceAllString(strings.ToValidUTF8(string(window), "\uFFFD"), "$0 ")
	s := MaskWith(text, st)
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

func isWindowEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\''
}
