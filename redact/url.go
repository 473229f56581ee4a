package redact

import (
	"math"
	"net/url"
	"strings"
)

// SanitizeURL cleans a URL by its structure before the detectors see it:
// user information is removed, a legacy session id in the query becomes its
// pseudonym (so it cannot be linked to the raw session id), every other
// query value is masked and replaced whole when it looks random, and path
// segments that look random (a secret in the path, as some hosted MCP URLs
// carry) are replaced. A value that does not parse as a URL is only masked.
func SanitizeURL(raw string, p *Pseudonymizer, st *Stats) string { return sanitizeURL(raw, p, st) }

// sanitizeURL is SanitizeURL, counting in st.
func sanitizeURL(raw string, p *Pseudonymizer, st counter) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme == "" && u.Host == "" && u.RawQuery == "") {
		return maskWith(raw, st)
	}
	if u.User != nil {
		u.User = nil
		st.addNamed("url_userinfo")
	}
	if segs := strings.Split(u.EscapedPath(), "/"); len(segs) > 1 {
		changed := false
		for i, s := range segs {
			if looksRandom(s) {
				segs[i], changed = "[REDACTED:path]", true
				st.addNamed("url_path")
			}
		}
		if changed {
			u.RawPath = strings.Join(segs, "/")
			u.Path = u.RawPath
		}
	}
	if u.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, v, _ := strings.Cut(kv, "=")
			dv, err := url.QueryUnescape(v)
			if err != nil {
				dv = v
			}
			switch {
			case v == "":
			case strings.EqualFold(k, "sessionId") || strings.EqualFold(k, "session_id"):
				v = p.Pseudonym(dv)
			case looksRandom(dv):
				v = "[REDACTED:query]"
				st.addNamed("url_query")
			default:
				if m := maskWith(dv, st); m != dv {
					v = m
				}
			}
			parts = append(parts, maskWith(k, st)+"="+v)
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment = ""
	return maskWith(u.String(), st)
}

// looksRandom: a token of 16 or more characters mixing letters and digits
// with high entropy, the way keys and tokens do and words, paths and ids of
// the form "report-2026" do not.
func looksRandom(s string) bool {
	if len(s) < 16 || len(s) > 4096 {
		return false
	}
	var letters, digits, other int
	var freq [128]int // every byte counted is ASCII
	for i := 0; i < len(s); i++ {
		switch r := s[i]; {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letters++
		case r == '-' || r == '_' || r == '.' || r == '~' || r == '+' || r == '/' || r == '=':
			other++
		default:
			return false // spaces and punctuation: text, not a token
		}
		freq[s[i]]++
	}
	if letters == 0 || digits == 0 {
		return false
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 3.5
}
