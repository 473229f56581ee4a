// Code generated from the redact package at commit 90cede8, before the speed-ups of issue 11;
// DO NOT EDIT. Every package-level name has the prefix old (Old if exported).

package redact

// This file is the frozen reference the differential tests (equiv_test.go)
// compare the current implementation against: HashJSON, Shape, SanitizeURL,
// MaskWith, ExcerptWith and the Redactor exactly as they were.

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"github.com/tidwall/gjson"
	"go.yaml.in/yaml/v3"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

func (p *OldPseudonymizer) HashJSON(raw []byte) string {
	var b bytes.Buffer
	oldCanonical(&b, gjson.ParseBytes(raw), 0)
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte("args\x00"))
	m.Write(b.Bytes())
	sum := m.Sum(nil)
	return p.keyID + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

const oldMaxShapeDepth = 32

func oldCanonical(b *bytes.Buffer, v gjson.Result, depth int) {
	if depth > oldMaxShapeDepth {
		b.WriteString(`"…"`)
		return
	}
	switch {
	case v.IsObject():
		b.WriteByte('{')
		for i, e := range oldSortedMembers(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(e.k))
			b.WriteByte(':')
			oldCanonical(b, e.v, depth+1)
		}
		b.WriteByte('}')
	case v.IsArray():
		b.WriteByte('[')
		i := 0
		v.ForEach(func(_, x gjson.Result) bool {
			if i > 0 {
				b.WriteByte(',')
			}
			oldCanonical(b, x, depth+1)
			i++
			return true
		})
		b.WriteByte(']')
	case v.Type == gjson.String:
		b.WriteString(strconv.Quote(v.Str))
	default:
		b.WriteString(v.Raw)
	}
}

func OldShape(raw []byte, st *OldStats) string {
	var b strings.Builder
	oldShape(&b, gjson.ParseBytes(raw), 0, st)
	return b.String()
}

func oldShape(b *strings.Builder, v gjson.Result, depth int, st *OldStats) {
	if depth > oldMaxShapeDepth {
		b.WriteString(`"…"`)
		return
	}
	switch {
	case v.IsObject():
		b.WriteByte('{')
		for i, e := range oldSortedMembers(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(OldMaskWith(e.k, st)))
			b.WriteByte(':')
			oldShape(b, e.v, depth+1, st)
		}
		b.WriteByte('}')
	case v.IsArray():

		seen := map[string]bool{}
		var parts []string
		v.ForEach(func(_, x gjson.Result) bool {
			var sb strings.Builder
			oldShape(&sb, x, depth+1, st)
			if s := sb.String(); !seen[s] {
				seen[s] = true
				parts = append(parts, s)
			}
			return len(parts) < 8
		})
		b.WriteString("[" + strings.Join(parts, ",") + "]")
	case v.Type == gjson.String:
		b.WriteString(`"string"`)
	case v.Type == gjson.Number:
		b.WriteString(`"number"`)
	case v.Type == gjson.True, v.Type == gjson.False:
		b.WriteString(`"boolean"`)
	case v.Type == gjson.Null:
		b.WriteString(`"null"`)
	default:
		b.WriteString(`"invalid"`)
	}
}

type oldMember struct {
	k string
	v gjson.Result
}

func oldSortedMembers(v gjson.Result) []oldMember {
	var ms []oldMember
	v.ForEach(func(k, x gjson.Result) bool { ms = append(ms, oldMember{k.Str, x}); return true })
	sort.Slice(ms, func(i, j int) bool { return ms[i].k < ms[j].k })
	return ms
}

func OldSanitizeURL(raw string, p *OldPseudonymizer, st *OldStats) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme == "" && u.Host == "" && u.RawQuery == "") {
		return OldMaskWith(raw, st)
	}
	if u.User != nil {
		u.User = nil
		st.addNamed("url_userinfo")
	}
	if segs := strings.Split(u.EscapedPath(), "/"); len(segs) > 1 {
		changed := false
		for i, s := range segs {
			if oldLooksRandom(s) {
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
			case oldLooksRandom(dv):
				v = "[REDACTED:query]"
				st.addNamed("url_query")
			default:
				if m := OldMaskWith(dv, st); m != dv {
					v = m
				}
			}
			parts = append(parts, OldMaskWith(k, st)+"="+v)
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment = ""
	return OldMaskWith(u.String(), st)
}

func oldLooksRandom(s string) bool {
	if len(s) < 16 || len(s) > 4096 {
		return false
	}
	var letters, digits, other int
	freq := map[rune]int{}
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letters++
		case r == '-' || r == '_' || r == '.' || r == '~' || r == '+' || r == '/' || r == '=':
			other++
		default:
			return false
		}
		freq[r]++
	}
	if letters == 0 || digits == 0 {
		return false
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range freq {
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h >= 3.5
}

type oldDetector struct {
	name     string
	keywords []string // lower-case ASCII; "" entries are not allowed
	re       *regexp.Regexp
	// secret picks the secret's extent from a match (submatch indices m).
	// ok false drops the match; the extent is then what was read, if
	// anything. nil: submatch 1 when the expression has one, else the
	// whole match.
	secret func(s string, m []int) (start, end int, ok bool)
	// scan replaces re for detectors without a regular expression; it
	// runs when the text has at least digits digits, and (if b64) a run
	// of base64.
	scan   func(s string, id int, dst []oldSpan) []oldSpan
	digits int
	b64    bool
	// The expression is anchored: it is tried where a keyword occurs,
	// or where back moves that place to. word: only where a word starts.
	word bool
	back func(s string, at int) int
}

func oldAnchored(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)`) }

func oldLocalPart(s string, at int) int {
	for at > 0 && (oldIsAlnum(s[at-1]) || strings.IndexByte("._%+-", s[at-1]) >= 0) {
		at--
	}
	return at
}

type oldSpan struct{ start, end, rule int }

const (
	oldMaxDecodeDepth = 2        // decode an encoded token inside an encoded token, no deeper
	oldMaxDecodedLen  = 1 << 20  // longest encoded token decoded (longer ones: their first MiB)
	oldDecodeBudget   = 64 << 10 // bytes decoded per pass, in all, beyond four times the text's length
	oldMinBase64Run   = 20
	oldMarker         = "[REDACTED:"
)

var (
	oldDelimToken = oldDelims(" \t\r\n\v\f\"'\\&;,<>") // key=value in text and query strings
	oldDelimSAS   = oldDelims(" \t\r\n\v\f\"'\\;<>")   // an Azure SAS keeps its & pairs together
	oldDelimLine  = oldDelims("\r\n\"\\")              // a header value runs to the end of the line
	oldUrlDelim   = oldDelims(" \t\r\n\v\f\"'<>&?#;,()[]{}|\\`")
)

func oldDelims(s string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

const oldSep = `(?:\\*["'])?\s*(?::=|=>|[:=])[ \t]*`

var oldDetectors = []oldDetector{
	{name: "private_key", keywords: []string{"-----begin"},
		re:     oldAnchored(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)`),
		secret: oldWhole},

	{name: "jwt", keywords: []string{"eyj"},
		re:     oldAnchored(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){0,3}`),
		secret: oldWhole},
	{name: "github_token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re:     oldAnchored(`gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}`),
		secret: oldWhole},
	{name: "gitlab_token", keywords: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "gloas-", "glimt-"},
		re:     oldAnchored(`gl(?:pat|dt|rt|ptt|ft|soat|cbt|oas|imt)-[A-Za-z0-9_-]{16,}`),
		secret: oldWhole},
	{name: "slack_token", keywords: []string{"xox", "xapp-"},
		re:     oldAnchored(`xox[abposrce]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}`),
		secret: oldWhole},
	{name: "slack_webhook", keywords: []string{"hooks.slack.com"},
		re: oldAnchored(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{16,})`)},
	{name: "webhook", keywords: []string{"discord.com/api/webhooks", "discordapp.com/api/webhooks"},
		re: oldAnchored(`discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_-]{20,})`)},
	{name: "webhook", keywords: []string{"api.telegram.org/bot"},
		re: oldAnchored(`api\.telegram\.org/bot([0-9]+:[A-Za-z0-9_-]{20,})`)},
	{name: "webhook", keywords: []string{"webhook.office.com", "outlook.office.com/webhook"},
		re: oldAnchored(`(?:webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/([A-Za-z0-9@/_.-]{20,})`)},

	{name: "basic_auth", keywords: []string{"-u "}, word: true,
		re: oldAnchored(`-u ['"]?[^\s:'"]+:([^\s'"]{4,})`)},
	{name: "stripe_key", keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "whsec_"},
		re:     oldAnchored(`[spr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,}`),
		secret: oldWhole},

	{name: "api_key", keywords: []string{"sk-", "ck_pat_"}, word: true,
		re:     oldAnchored(`(?:sk-[A-Za-z0-9_-]{20,}|ck_pat_[A-Za-z0-9_]{6,})`),
		secret: oldWholeIf(oldRandomish)},
	{name: "service_token", keywords: []string{"npm_", "hf_", "sg.", "ya29.", "pypi-age"}, word: true,
		re:     oldAnchored(`(?:npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|ya29\.[A-Za-z0-9_-]{20,}|pypi-AgE[A-Za-z0-9_-]{40,})`),
		secret: oldWhole},
	{name: "gcp_api_key", keywords: []string{"aiza"},
		re:     oldAnchored(`AIza[0-9A-Za-z_-]{30,}`),
		secret: oldWhole},

	{name: "gcp_key_id", keywords: []string{"private_key_id"},
		re:     oldAnchored(`(?i)private_key_id` + oldSep),
		secret: oldValue(oldDelimToken, func(v string) bool { return len(v) >= 16 && !oldIsPlaceholder(v) })},
	{name: "aws_key", keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
		re:     oldAnchored(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`),
		secret: oldWhole},
	{name: "aws_secret_key", keywords: []string{"aws", "secret"},
		re:     oldAnchored(`(?i)(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)` + oldSep),
		secret: oldValue(oldDelimToken, func(v string) bool { return len(v) >= 16 && !oldIsPlaceholder(v) })},

	{name: "azure_key", keywords: []string{"accountkey", "sharedaccesskey"}, word: true,
		re:     oldAnchored(`(?i)(?:AccountKey|SharedAccessKey)\s*[:=]\s*`),
		secret: oldValue(oldDelimToken, func(v string) bool { return len(v) >= 16 && !oldIsPlaceholder(v) })},

	{name: "azure_sas", keywords: []string{"sig="}, word: true,
		re:     oldAnchored(`(?i)sig=`),
		secret: oldValue(oldDelimToken, func(v string) bool { return len(v) >= 16 && !oldIsPlaceholder(v) })},
	{name: "azure_sas", keywords: []string{"sharedaccesssignature"}, word: true,
		re:     oldAnchored(`(?i)SharedAccessSignature(?:\s*[:=]\s*|\s+)`),
		secret: oldValue(oldDelimSAS, func(v string) bool { return len(v) >= 16 && !oldIsPlaceholder(v) })},

	{name: "url_password", keywords: []string{"://"},
		re: oldAnchored(`://[^\s/?#@:"'<>\\]{0,128}:([^\s/?#@"'<>\\]{1,256})@`),
		secret: oldGroup(1, func(v string) bool {
			return !oldIsPlaceholder(v) && !(len(v) <= 5 && oldAllDigits(v))
		})},
	{name: "bearer", keywords: []string{"bearer"}, word: true,
		re:     oldAnchored(`(?i)bearer(?:\s+|\+|%20)([^\s"'\\]+)`),
		secret: oldGroup(1, func(v string) bool { return oldTokenish(v, 8) })},
	{name: "basic_auth", keywords: []string{"basic"}, word: true,
		re:     oldAnchored(`(?i)basic(?:\s+|\+|%20)([A-Za-z0-9+/_-]+={0,2})`),
		secret: oldGroup(1, func(v string) bool { return oldCredentialPair(oldDecodeBase64(v)) || oldTokenish(v, 8) })},
	{name: "digest_auth", keywords: []string{"digest"}, word: true,
		re: oldAnchored(`(?i)digest\s+((?:[a-z0-9_-]+\s*=\s*(?:\\*"(?:[^"\\]|\\[^"])*\\*"|[^\s,"\\]+)\s*,?\s*)+)`),
		secret: oldGroup(1, func(v string) bool {
			l := strings.ToLower(v)
			return strings.Contains(l, "response=") || strings.Contains(l, "username=") || strings.Contains(l, "nonce=")
		})},

	{name: "authorization", keywords: []string{"authorization"}, word: true,
		re:     oldAnchored(`(?i)authorization` + oldSep),
		secret: oldAuthorizationValue},

	{name: "header", keywords: []string{"name"},
		re:     oldAnchored(`(?i)name\\*"\s*:\s*\\*"([a-z0-9_.-]{1,64})\\*"\s*,\s*\\*"value\\*"\s*:\s*`),
		secret: oldHeaderValue},
	{name: "cookie", keywords: []string{"cookie"}, word: true,
		re: oldAnchored(`(?i)cookie` + oldSep),
		secret: oldValue(oldDelimLine, func(v string) bool {
			return !oldIsPlaceholder(v) && (strings.Contains(v, "=") || oldTokenish(v, 8))
		})},

	{name: "assignment", keywords: []string{"passw", "passphrase", "secret", "token", "key", "pwd", "credential", "auth", "signature", "session", "sessid"},
		re:     oldAnchored(`(?i)(password|passwd|passphrase|secret|token|key|pwd|credentials?|auth|signature|session[_.-]?id|sessid)` + oldSep),
		secret: oldAssignmentValue},
	{name: "email", keywords: []string{"@"}, back: oldLocalPart,
		re:     oldAnchored(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`),
		secret: oldWhole},
	{name: "card_number", scan: oldScanCards, digits: 13},

	{name: "key_material", scan: oldScanKeyLines, b64: true},
}

var oldBasicAuthRule = oldRuleIndex("basic_auth")

func oldRuleIndex(name string) int {
	for i := range oldDetectors {
		if oldDetectors[i].name == name {
			return i
		}
	}
	panic("no rule " + name)
}

func OldRules() []string {
	var names []string
	seen := map[string]bool{}
	for _, d := range oldDetectors {
		if !seen[d.name] {
			seen[d.name] = true
			names = append(names, d.name)
		}
	}
	return names
}

type OldStats struct {
	n     [oldMaxDetectors]atomic.Int64
	mu    sync.Mutex
	named map[string]int64 // structural redactions (URL parts) counted by name
}

const oldMaxDetectors = 64 // the prefilter keeps a bit per detector

func (st *OldStats) add(rule int) {
	if st != nil {
		st.n[rule].Add(1)
	}
}

func (st *OldStats) Counts() map[string]int64 {
	m := map[string]int64{}
	if st == nil {
		return m
	}
	for i := range oldDetectors {
		if n := st.n[i].Load(); n > 0 {
			m[oldDetectors[i].name] += n
		}
	}
	st.mu.Lock()
	for k, n := range st.named {
		m[k] += n
	}
	st.mu.Unlock()
	return m
}

func (st *OldStats) addNamed(name string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	if st.named == nil {
		st.named = map[string]int64{}
	}
	st.named[name]++
	st.mu.Unlock()
}

func OldMask(s string) string { return OldMaskWith(s, nil) }

func OldMaskWith(s string, st *OldStats) string {
	for pass := 0; pass < 8; pass++ {
		d := oldDetection{budget: oldDecodeBudget + 4*len(s)}
		spans := d.detect(s, 0, nil)
		if len(spans) == 0 {
			return s
		}
		s = oldReplace(s, spans, st)
	}
	return s
}

func oldReplace(s string, spans []oldSpan, st *OldStats) string {
	slices.SortFunc(spans, func(x, y oldSpan) int { return x.start - y.start })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			last.rule = min(last.rule, sp.rule)
			continue
		}
		merged = append(merged, sp)
	}
	var b strings.Builder
	b.Grow(len(s) + 16*len(merged))
	at := 0
	for _, sp := range merged {
		b.WriteString(s[at:sp.start])
		b.WriteString(oldMarker)
		b.WriteString(oldDetectors[sp.rule].name)
		b.WriteByte(']')
		st.add(sp.rule)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

type oldDetection struct{ budget int }

func (d *oldDetection) detect(s string, depth int, dst []oldSpan) []oldSpan {
	if s == "" {
		return dst
	}
	var hits [16]oldHit
	p := oldPrefilterOf(s, hits[:0])
	for i := range oldDetectors {
		r := &oldDetectors[i]
		if r.scan != nil {
			if p.digits >= r.digits && (p.base64 || !r.b64) {
				dst = r.scan(s, i, dst)
			}
			continue
		}
		bit := uint64(1) << uint(i)
		if p.mask&bit == 0 {
			continue
		}

		covered := 0
		for _, h := range p.hits {
			if h.mask&bit == 0 {
				continue
			}
			at := h.pos
			if r.back != nil {
				at = r.back(s, at)
			}
			if at < covered || r.word && at > 0 && oldIsWordByte(s[at-1]) {
				continue
			}
			m := r.re.FindStringSubmatchIndex(s[at:])
			if m == nil {
				continue
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += at
				}
			}
			a, b, ok := r.pick(s, m)
			if !ok {
				if b-a > 256 && !oldQuoted(s, m[1]) {
					covered = b
				}
				continue
			}
			if a = oldSkipMarkers(s, a, b); a >= b || oldInMarker(s, a, b) {
				continue
			}
			dst = append(dst, oldSpan{a, b, i})
			covered = max(covered, b)
		}
	}
	if depth < oldMaxDecodeDepth {
		if p.percent {
			dst = d.percentTokens(s, depth, dst)
		}
		if p.base64 {
			dst = d.base64Tokens(s, depth, dst)
		}
	}
	return dst
}

func oldQuoted(s string, i int) bool {
	return i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '\\')
}

func (r *oldDetector) pick(s string, m []int) (int, int, bool) {
	if r.secret != nil {
		return r.secret(s, m)
	}
	if len(m) >= 4 && m[2] >= 0 {
		return m[2], m[3], true
	}
	return m[0], m[1], true
}

func oldSkipMarkers(s string, a, b int) int {
	for strings.HasPrefix(s[a:b], oldMarker) {
		k := strings.IndexByte(s[a:b], ']')
		if k < 0 {
			return b
		}
		a += k + 1
	}
	return a
}

func oldInMarker(s string, a, b int) bool {
	lo := max(0, a-64)
	i := strings.LastIndex(s[lo:min(len(s), a+len(oldMarker)-1)], oldMarker)
	if i < 0 {
		return false
	}
	i += lo
	for j := i + len(oldMarker); j < len(s); j++ {
		switch c := s[j]; {
		case c == ']':
			return j >= b-1
		case c != '_' && (c < 'a' || c > 'z'):
			return false
		}
	}
	return false
}

func oldWhole(s string, m []int) (int, int, bool) { return m[0], m[1], true }

func oldWholeIf(ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) { return m[0], m[1], ok(s[m[0]:m[1]]) }
}

func oldGroup(n int, ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) {
		a, b := m[2*n], m[2*n+1]
		if a < 0 || !ok(s[a:b]) {
			return 0, 0, false
		}
		return a, b, true
	}
}

func oldValue(stop *[256]bool, ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) {
		a, b := oldReadValue(s, m[1], stop)
		return a, b, a < b && ok(s[a:b])
	}
}

func oldReadValue(s string, i int, stop *[256]bool) (int, int) {
	if i >= len(s) {
		return i, i
	}
	switch s[i] {
	case '"':
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		return i + 1, min(j, len(s))
	case '\'':
		if k := strings.IndexByte(s[i+1:], '\''); k >= 0 {
			return i + 1, i + 1 + k
		}
		return i + 1, len(s)
	case '\\':
		k := i
		for k < len(s) && s[k] == '\\' {
			k++
		}
		if k < len(s) && s[k] == '"' {
			a := k + 1
			j := a
			for j < len(s) && (s[j] != '"' || s[j-1] != '\\' || j == a) {
				j++
			}
			e := j
			for e > a && s[e-1] == '\\' {
				e--
			}
			return a, e
		}
	}
	j := i
	for j < len(s) && !stop[s[j]] {
		j++
	}
	return i, j
}

var oldAuthSchemes = map[string]bool{
	"bearer": true, "basic": true, "token": true, "digest": true, "negotiate": true, "ntlm": true,
	"aws4-hmac-sha256": true, "hoba": true, "mutual": true, "vapid": true, "dpop": true, "mac": true,
	"apikey": true, "api-key": true, "key": true, "sso-key": true, "gssapi": true, "otp": true, "hmac": true,
}

func oldAuthorizationValue(s string, m []int) (int, int, bool) {
	i := m[1]
	if oldQuoted(s, i) {

		a, b := oldReadValue(s, i, oldDelimLine)
		return oldCredentials(s, a, b)
	}

	w := i
	for w < len(s) && !oldDelimLine[s[w]] && s[w] != ' ' && s[w] != '\t' {
		w++
	}
	if !oldAuthSchemes[strings.ToLower(s[i:w])] {
		return i, w, i < w && oldTokenish(s[i:w], 6)
	}
	_, b := oldReadValue(s, w, oldDelimLine)
	return oldCredentials(s, i, b)
}

func oldCredentials(s string, a, b int) (int, int, bool) {
	v := s[a:b]
	word := v
	if k := strings.IndexAny(v, " \t"); k >= 0 {
		word = v[:k]
	}
	if oldAuthSchemes[strings.ToLower(word)] {
		rest := strings.TrimLeft(v[len(word):], " \t")
		return b - len(rest), b, rest != "" && !oldIsPlaceholder(rest)
	}
	return a, b, oldTokenish(word, 6)
}

var (
	oldSensitiveHeaders     = map[string]bool{"mcp-session-id": true, "x-amz-security-token": true, "ocp-apim-subscription-key": true, "x-functions-key": true, "x-goog-api-key": true, "x-csrf-token": true}
	oldSensitiveHeaderParts = []string{"auth", "token", "secret", "passw", "key", "cookie", "session", "signature", "credential"}
)

func oldHeaderValue(s string, m []int) (int, int, bool) {
	name := strings.ToLower(s[m[2]:m[3]])
	sensitive := oldSensitiveHeaders[name]
	for _, p := range oldSensitiveHeaderParts {
		sensitive = sensitive || strings.Contains(name, p)
	}
	if !sensitive {
		return 0, 0, false
	}
	a, b := oldReadValue(s, m[1], oldDelimLine)
	if a >= b || strings.HasPrefix(s[a:], oldMarker) {
		return a, b, false
	}
	switch strings.ToLower(s[a:b]) {
	case "null", "none", "undefined", "nil":
		return a, b, false
	}
	return a, b, true
}

func oldAssignmentValue(s string, m []int) (int, int, bool) {
	key := strings.ToLower(s[m[2]:m[3]])
	a, b := oldReadValue(s, m[1], oldDelimToken)
	v := s[a:b]
	switch key {
	case "password", "passwd", "passphrase", "secret":
		return a, b, oldPasswordLike(v)
	}
	return a, b, oldSecretLike(v)
}

var oldPlaceholders = map[string]bool{
	"null": true, "nil": true, "none": true, "undefined": true, "true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "empty": true, "n/a": true, "na": true, "redacted": true, "masked": true, "hidden": true,
	"required": true, "optional": true, "missing": true, "invalid": true, "expired": true, "revoked": true, "unknown": true,
	"string": true, "value": true, "example": true, "test": true, "dummy": true, "not": true, "set": true, "unset": true,
	"provided": true, "present": true, "found": true, "must": true, "should": true, "is": true, "was": true, "the": true,
	"a": true, "an": true, "be": true, "token": true, "tokens": true, "password": true, "secret": true, "key": true,
	"auth": true, "bearer": true, "basic": true, "header": true, "authentication": true, "authorization": true,
	"credentials": true, "scheme": true, "realm": true, "type": true, "format": true, "prefix": true, "error": true,
	"failed": true, "denied": true, "rejected": true, "incorrect": true, "wrong": true, "mismatch": true, "too": true,
	"short": true, "weak": true, "changed": true, "reset": true, "updated": true, "valid": true, "default": true,
	"ok": true, "nan": true, "omitted": true, "removed": true, "supplied": true, "given": true, "needed": true,
}

func oldIsPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.HasPrefix(v, oldMarker) || oldPlaceholders[strings.ToLower(v)] {
		return true
	}
	if len(v) >= 2 {
		f, l := v[0], v[len(v)-1]
		if f == '<' && l == '>' || f == '{' && l == '}' || f == '%' && len(v) <= 3 ||
			strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") {
			return true
		}
	}

	first, _ := utf8.DecodeRuneInString(v)
	if strings.Trim(v, string(first)) == "" && (first == '*' || first == 'x' || first == 'X' || first == '.' || first == '•' || first == '…' || first == '-') {
		return true
	}
	return false
}

func oldPasswordLike(v string) bool {
	if len(v) < 4 || oldIsPlaceholder(v) {
		return false
	}
	if k := strings.IndexAny(v, " \t"); k >= 0 && oldPlaceholders[strings.ToLower(v[:k])] {
		return false
	}
	return true
}

func oldSecretLike(v string) bool {
	if len(v) < 8 || oldIsPlaceholder(v) || strings.ContainsAny(v, " \t\r\n") {
		return false
	}
	var lo, up, di bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z':
			lo = true
		case 'A' <= c && c <= 'Z':
			up = true
		case '0' <= c && c <= '9':
			di = true
		}
	}
	classes := oldB2i(lo) + oldB2i(up) + oldB2i(di)
	h := oldEntropy(v)
	switch {
	case di && (lo || up) && h >= 3.0:
		return true
	case len(v) >= 16 && classes >= 2 && h >= 3.5:
		return true
	case len(v) >= 24 && h >= 4.0:
		return true
	}
	return false
}

func oldTokenish(v string, minLen int) bool {
	if len(v) < minLen || oldIsPlaceholder(v) {
		return false
	}
	lowerWord := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 'a' || c > 'z' {
			lowerWord = false
			break
		}
	}
	return !lowerWord || len(v) >= 16
}

func oldRandomish(v string) bool {
	var d, lo, up bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		d = d || oldIsDigit(c)
		lo = lo || 'a' <= c && c <= 'z'
		up = up || 'A' <= c && c <= 'Z'
	}
	return d && (lo || up) || lo && up
}

func oldAllDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

func oldAllDigitsOrColons(v string) bool {
	for i := 0; i < len(v); i++ {
		if !oldIsDigit(v[i]) && v[i] != ':' {
			return false
		}
	}
	return true
}

func oldB2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func oldEntropy(v string) float64 {
	var n [256]int
	for i := 0; i < len(v); i++ {
		n[v[i]]++
	}
	h := 0.0
	l := float64(len(v))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			h -= p * math.Log2(p)
		}
	}
	return h
}

func oldCredentialPair(v string) bool {
	if len(v) < 3 || len(v) > 512 {
		return false
	}
	k := strings.IndexByte(v, ':')
	if k < 1 || k > 128 || k == len(v)-1 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func oldScanKeyLines(s string, id int, dst []oldSpan) []oldSpan {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s)
		} else {
			j += i
		}
		a, b := i, j
		for a < b && (s[a] == ' ' || s[a] == '\t') {
			a++
		}
		for b > a && (s[b-1] == ' ' || s[b-1] == '\t' || s[b-1] == '\r') {
			b--
		}
		if b-a >= 40 && oldKeyLine(s[a:b]) {
			dst = append(dst, oldSpan{a, b, id})
		}
		i = j + 1
	}
	return dst
}

func oldKeyLine(t string) bool {
	body := strings.TrimRight(t, "=")
	if len(t)-len(body) > 2 {
		return false
	}
	var lo, up, di bool
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case 'a' <= c && c <= 'z':
			lo = true
		case 'A' <= c && c <= 'Z':
			up = true
		case oldIsDigit(c):
			di = true
		case c != '+' && c != '/':
			return false
		}
	}
	if !lo || !up || !di {
		return false
	}
	b, err := base64.RawStdEncoding.DecodeString(body[:len(body)/4*4])
	return err == nil && !oldPrintable(string(b))
}

func oldScanCards(s string, id int, dst []oldSpan) []oldSpan {
	var gs [12][2]int
	for i := 0; i < len(s); {
		if !oldIsDigit(s[i]) {
			i++
			continue
		}
		n := 0
		j := i
		for {
			a := j
			for j < len(s) && oldIsDigit(s[j]) {
				j++
			}
			gs[n] = [2]int{a, j}
			n++
			if n < len(gs) && j+1 < len(s) && (s[j] == ' ' || s[j] == '-' || s[j] == '+') && oldIsDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		dst = oldCardsIn(s, gs[:n], id, dst)
		i = j
	}
	return dst
}

func oldCardsIn(s string, gs [][2]int, id int, dst []oldSpan) []oldSpan {
	glen := func(k int) int { return gs[k][1] - gs[k][0] }
	for k := 0; k < len(gs); k++ {
		if l := glen(k); l >= 13 && l <= 19 {
			a, b := gs[k][0], gs[k][1]
			if !oldNotACard(s, a, b) && oldLuhn(s[a:b]) {
				dst = append(dst, oldSpan{a, b, id})
			}
			continue
		}
		if glen(k) != 4 {
			continue
		}
		best := -1

		if k+2 < len(gs) && glen(k+1) == 6 && (glen(k+2) == 5 || glen(k+2) == 4) && oldLuhnGroups(s, gs[k:k+3]) {
			best = k + 2
		}
		total := 4
		for j := k + 1; j < len(gs); j++ {
			l := glen(j)
			if l > 4 || total+l > 19 {
				break
			}
			total += l
			if total >= 13 && oldLuhnGroups(s, gs[k:j+1]) {
				best = max(best, j)
			}
			if l != 4 {
				break
			}
		}
		if best >= 0 {
			dst = append(dst, oldSpan{gs[k][0], gs[best][1], id})
			k = best
		}
	}
	return dst
}

func oldNotACard(s string, a, b int) bool {
	if a >= 2 && s[a-1] == '.' && oldIsDigit(s[a-2]) || b+1 < len(s) && s[b] == '.' && oldIsDigit(s[b+1]) {
		return true
	}
	lo, hi := a, b
	for lo > 0 && oldIsAlnum(s[lo-1]) {
		lo--
	}
	for hi < len(s) && oldIsAlnum(s[hi]) {
		hi++
	}
	if hi-lo > b-a && hi-lo >= 32 {
		for i := lo; i < hi; i++ {
			if !oldIsHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func oldLuhnGroups(s string, gs [][2]int) bool {
	var buf [19]byte
	n := 0
	for _, g := range gs {
		n += copy(buf[n:], s[g[0]:g[1]])
	}
	return oldLuhn(string(buf[:n]))
}

func oldLuhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		x := int(d[i] - '0')
		if double {
			x *= 2
			if x > 9 {
				x -= 9
			}
		}
		sum += x
		double = !double
	}
	return sum%10 == 0
}

func oldIsDigit(c byte) bool { return '0' <= c && c <= '9' }

func oldIsHex(c byte) bool { return oldIsDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

func oldIsWordByte(c byte) bool { return oldIsAlnum(c) || c == '_' }

func oldIsAlnum(c byte) bool { return oldIsDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' }

func (d *oldDetection) percentTokens(s string, depth int, dst []oldSpan) []oldSpan {
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '%')
		if k < 0 {
			break
		}
		k += i
		if k+2 >= len(s) || !oldIsHex(s[k+1]) || !oldIsHex(s[k+2]) {
			i = k + 1
			continue
		}
		a, b := k, k
		for a > i && !oldUrlDelim[s[a-1]] {
			a--
		}
		for b < len(s) && !oldUrlDelim[s[b]] {
			b++
		}
		i = b
		if eq := strings.IndexByte(s[a:k], '='); eq > 0 && oldIsName(s[a:a+eq]) {
			a += eq + 1
		}
		tok := s[a:b]
		if len(tok) > oldMaxDecodedLen {
			tok = tok[:oldMaxDecodedLen]
		}
		if rule := d.decoded(oldPercentDecode(tok, false), depth); rule >= 0 {
			dst = append(dst, oldSpan{a, b, rule})
		} else if strings.IndexByte(tok, '+') >= 0 {
			if rule := d.decoded(oldPercentDecode(tok, true), depth); rule >= 0 {
				dst = append(dst, oldSpan{a, b, rule})
			}
		}
	}
	return dst
}

func oldIsName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !oldIsAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return s != ""
}

func oldPercentDecode(s string, plus bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && oldIsHex(s[i+1]) && oldIsHex(s[i+2]):
			b.WriteByte(oldUnhex(s[i+1])<<4 | oldUnhex(s[i+2]))
			i += 2
		case c == '+' && plus:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func oldUnhex(c byte) byte {
	if oldIsDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func (d *oldDetection) base64Tokens(s string, depth int, dst []oldSpan) []oldSpan {
	for i := 0; i < len(s); {
		if !oldIsB64(s[i]) {
			i++
			continue
		}
		a := i
		for i < len(s) && oldIsB64(s[i]) {
			i++
		}
		b := i
		for i < len(s) && i-b < 2 && s[i] == '=' {
			i++
		}
		if !oldPlausibleBase64(s[a:b]) {
			continue
		}
		if rule := d.base64Rule(s[a:b], depth); rule >= 0 {
			dst = append(dst, oldSpan{a, i, rule})
			continue
		}

		if strings.IndexByte(s[a:b], '/') < 0 {
			continue
		}
		for x := a; x < b; {
			y := x
			for y < b && s[y] != '/' {
				y++
			}
			if y-x >= oldMinBase64Run && y-x < b-a && oldPlausibleBase64(s[x:y]) {
				if rule := d.base64Rule(s[x:y], depth); rule >= 0 {
					dst = append(dst, oldSpan{x, y, rule})
				}
			}
			x = y + 1
		}
	}
	return dst
}

func (d *oldDetection) base64Rule(tok string, depth int) int {
	if len(tok) > oldMaxDecodedLen {
		tok = tok[:oldMaxDecodedLen]
	}
	text := oldDecodeBase64(tok)
	if len(text) < 12 || !oldPrintable(text) {
		return -1
	}
	if rule := d.decoded(text, depth); rule >= 0 {
		return rule
	}
	if t := strings.TrimSpace(text); oldCredentialPair(t) && !oldAllDigitsOrColons(t[strings.IndexByte(t, ':')+1:]) {

		return oldBasicAuthRule
	}
	return -1
}

func (d *oldDetection) decoded(text string, depth int) int {
	if text == "" || d.budget < len(text) {
		return -1
	}
	d.budget -= len(text)
	rule := -1
	for _, sp := range d.detect(text, depth+1, nil) {
		if rule < 0 || sp.rule < rule {
			rule = sp.rule
		}
	}
	return rule
}

func oldIsB64(c byte) bool {
	return oldIsAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-'
}

func oldPlausibleBase64(t string) bool {
	if len(t) < oldMinBase64Run {
		return false
	}
	var lo, up, hex = false, false, true
	for i := 0; i < len(t); i++ {
		c := t[i]
		lo = lo || 'a' <= c && c <= 'z'
		up = up || 'A' <= c && c <= 'Z'
		hex = hex && (oldIsHex(c) || c == '-')
	}
	return (lo && up || up && len(t) >= 24) && !hex
}

func oldDecodeBase64(t string) string {
	t = strings.TrimRight(t, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(t, "-_") {
		if strings.ContainsAny(t, "+/") {
			return ""
		}
		enc = base64.RawURLEncoding
	}
	if len(t)%4 == 1 {
		t = t[:len(t)-1]
	}
	b, err := enc.DecodeString(t)
	if err != nil {
		return ""
	}
	return string(b)
}

func oldPrintable(t string) bool {
	if !utf8.ValidString(t) {
		return false
	}
	bad, n := 0, 0
	for _, r := range t {
		n++
		if !unicode.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			bad++
		}
	}
	return bad*20 <= n
}

type oldPrefilter struct {
	mask    uint64
	hits    []oldHit // where keywords occur, in order
	digits  int
	percent bool
	base64  bool
}

type oldHit struct {
	pos  int
	mask uint64 // the detectors whose keyword occurs at pos
}

type oldKeyword struct {
	kw   string
	mask uint64
}

var (
	oldByFirst [256][]oldKeyword  // keywords by their first byte
	oldTriples [65536 / 64]uint64 // bit set of hashes of the keywords' first three bytes
	oldAtMask  uint64             // detectors whose keyword is "@"
)

func init() {
	if len(oldDetectors) > oldMaxDetectors {
		panic("too many detectors")
	}
	for i, d := range oldDetectors {
		for _, k := range d.keywords {
			if k == "@" {
				oldAtMask |= 1 << uint(i)
				continue
			}
			if len(k) < 3 || strings.ToLower(k) != k {
				panic("keyword " + k)
			}
			found := false
			for j := range oldByFirst[k[0]] {
				if oldByFirst[k[0]][j].kw == k {
					oldByFirst[k[0]][j].mask |= 1 << uint(i)
					found = true
				}
			}
			if !found {
				oldByFirst[k[0]] = append(oldByFirst[k[0]], oldKeyword{k, 1 << uint(i)})
			}
			h := oldTriple(k[0], k[1], k[2])
			oldTriples[h>>6] |= 1 << (h & 63)
		}
	}
}

func oldLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func oldPrefilterOf(s string, hits []oldHit) oldPrefilter {
	p := oldPrefilter{hits: hits}
	run, seen := 0, uint8(0)
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		if cl := oldByteClass[c]; cl != 0 {
			run++
			seen |= cl
			p.digits += int(cl & oldClDigit)
		} else {
			if oldB64Run(run, seen) {
				p.base64 = true
			}
			run, seen = 0, 0
			switch c {
			case '%':
				if i+2 < n && oldIsHex(s[i+1]) && oldIsHex(s[i+2]) {
					p.percent = true
				}
			case '@':
				p.mask |= oldAtMask
				p.hits = append(p.hits, oldHit{i, oldAtMask})
			}
		}
		if i+2 < n {
			c0 := oldLowerTab[c]
			h := oldTriple(c0, oldLowerTab[s[i+1]], oldLowerTab[s[i+2]])
			if oldTriples[h>>6]&(1<<(h&63)) != 0 {
				var m uint64
				for _, k := range oldByFirst[c0] {
					if oldHasPrefixFold(s[i:], k.kw) {
						m |= k.mask
					}
				}
				if m != 0 {
					p.mask |= m
					p.hits = append(p.hits, oldHit{i, m})
				}
			}
		}
	}
	if oldB64Run(run, seen) {
		p.base64 = true
	}
	return p
}

func oldB64Run(run int, seen uint8) bool {
	return run >= oldMinBase64Run && seen&(oldClLower|oldClUpper) == oldClLower|oldClUpper || run >= 24 && seen&oldClUpper != 0
}

const (
	oldClDigit = 1 << iota
	oldClLower
	oldClUpper
	oldClSymbol
)

var oldByteClass, oldLowerTab = func() (cl, lo [256]uint8) {
	for c := 0; c < 256; c++ {
		lo[c] = oldLower(byte(c))
		switch {
		case '0' <= c && c <= '9':
			cl[c] = oldClDigit
		case 'a' <= c && c <= 'z':
			cl[c] = oldClLower
		case 'A' <= c && c <= 'Z':
			cl[c] = oldClUpper
		case c == '+' || c == '/' || c == '_' || c == '-':
			cl[c] = oldClSymbol
		}
	}
	return
}()

func oldTriple(a, b, c byte) uint {
	return (uint(a)<<9 ^ uint(b)<<5 ^ uint(c)*0x9e37) & 0xffff
}

func oldHasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if oldLowerTab[s[i]] != kw[i] {
			return false
		}
	}
	return true
}

type OldPseudonymizer struct {
	keyID string
	key   []byte
}

func OldNewPseudonymizer(keyID string, key []byte) (*OldPseudonymizer, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("pseudonym key is %d bytes; use at least 16 random bytes", len(key))
	}
	if keyID == "" || strings.ContainsAny(keyID, ": ") {
		return nil, fmt.Errorf("pseudonym key id %q must be non-empty, without spaces or colons", keyID)
	}
	return &OldPseudonymizer{keyID: keyID, key: append([]byte(nil), key...)}, nil
}

func OldRandomPseudonymizer() *OldPseudonymizer {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err)
	}
	p, _ := OldNewPseudonymizer("run", key)
	return p
}

func (p *OldPseudonymizer) KeyID() string { return p.keyID }

func (p *OldPseudonymizer) Pseudonym(v string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(v))
	sum := m.Sum(nil)
	return p.keyID + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

func OldExcerpt(b []byte, max int) string { return OldExcerptWith(b, max, nil) }

var oldEscapedBreak = regexp.MustCompile(`\\[nrt]`)

func OldExcerptWith(b []byte, max int, st *OldStats) string {

	window := b
	if cut := 4*max + 256; len(window) > cut {
		end := cut
		for end < len(window) && end < cut+4096 && !oldIsWindowEnd(window[end]) {
			end++
		}
		window = window[:end]
	}

	text := oldEscapedBreak.ReplaceAllString(strings.ToValidUTF8(string(window), "\uFFFD"), "$0 ")
	s := OldMaskWith(text, st)
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

func oldIsWindowEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\''
}

const (
	OldKeep         = "keep"
	OldPseudonymize = "pseudonymize"
	OldMaskAction   = "mask"
	OldTruncate     = "truncate" // mask, then cut to N characters: truncate(N)
	OldDrop         = "drop"
)

type OldAction struct {
	Kind string
	N    int // for truncate
}

func (a OldAction) String() string {
	if a.Kind == OldTruncate {
		return "truncate(" + strconv.Itoa(a.N) + ")"
	}
	return a.Kind
}

func OldParseAction(s string) (OldAction, error) {
	s = strings.TrimSpace(s)
	switch s {
	case OldKeep, OldPseudonymize, OldMaskAction, OldDrop:
		return OldAction{Kind: s}, nil
	}
	if strings.HasPrefix(s, "truncate(") && strings.HasSuffix(s, ")") {
		n, err := strconv.Atoi(strings.TrimSpace(s[len("truncate(") : len(s)-1]))
		if err == nil && n > 0 {
			return OldAction{Kind: OldTruncate, N: n}, nil
		}
	}
	return OldAction{}, fmt.Errorf("unknown action %q: use keep, pseudonymize, mask, truncate(N) or drop", s)
}

var OldFields = []struct {
	Name    string
	Default string
	About   string
}{
	{"exchanges.session_id", OldPseudonymize, "MCP session id"},
	{"exchanges.source", OldKeep, "input file path"},
	{"exchanges.client_name", OldMaskAction, "client name"},
	{"exchanges.client_version", OldMaskAction, "client version"},
	{"exchanges.server_name", OldMaskAction, "server name"},
	{"exchanges.server_version", OldMaskAction, "server version"},
	{"exchanges.method", OldMaskAction, "JSON-RPC method"},
	{"exchanges.tool_name", OldMaskAction, "tool or prompt name"},
	{"exchanges.jsonrpc_id", OldMaskAction, "JSON-RPC id"},
	{"exchanges.url", OldMaskAction, "request URL (query strings included)"},
	{"exchanges.content_type", OldMaskAction, "response media type"},
	{"exchanges.protocol_version", OldMaskAction, "MCP protocol version, as the log states it"},
	{"exchanges.result_type", OldMaskAction, "resultType, as the server sent it"},
	{"exchanges.error_message", OldMaskAction, "JSON-RPC error message"},
	{"exchanges.error_data", "truncate(512)", "JSON-RPC error data, as JSON text"},
	{"exchanges.error_type", OldMaskAction, "error type (a code, tool_error, or what a span reported)"},
	{"exchanges.tool_error_text", OldDrop, "text of a tool result with isError true"},
	{"exchanges.reason", OldMaskAction, "why the verdict (may quote the response)"},
	{"exchanges.retry_after", OldMaskAction, "Retry-After header"},
	{"exchanges.scenario", OldMaskAction, "server-side scenario name"},
	{"exchanges.arguments_shape", OldKeep, "tool argument names and value types, never values"},
	{"quarantine.source", OldKeep, "input file path"},
	{"quarantine.detail", "truncate(200)", "what was wrong with the record"},
	{"quarantine.excerpt", "truncate(160)", "the start of the record"},
}

type OldPolicy struct {
	actions map[string]OldAction
	Origin  string // "default" or the file it was read from
}

func OldDefaultPolicy() *OldPolicy {
	p := &OldPolicy{actions: map[string]OldAction{}, Origin: "default"}
	for _, f := range OldFields {
		a, err := OldParseAction(f.Default)
		if err != nil {
			panic(err)
		}
		p.actions[f.Name] = a
	}
	return p
}

type oldPolicyFile struct {
	Fields map[string]string `yaml:"fields"`
}

func OldLoadPolicy(path string) (*OldPolicy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redaction policy %s cannot be read: %w", path, err)
	}
	var f oldPolicyFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("redaction policy %s is not valid: %w", path, err)
	}
	known := map[string]bool{}
	for _, fd := range OldFields {
		known[fd.Name] = true
	}
	p := &OldPolicy{actions: map[string]OldAction{}, Origin: path}
	for name, s := range f.Fields {
		if !known[name] {
			return nil, fmt.Errorf("redaction policy %s names unknown field %q (run ingest -print-policy for the list)", path, name)
		}
		a, err := OldParseAction(s)
		if err != nil {
			return nil, fmt.Errorf("redaction policy %s, field %s: %w", path, name, err)
		}
		p.actions[name] = a
	}
	return p, nil
}

func (p *OldPolicy) Action(field string) OldAction {
	if a, ok := p.actions[field]; ok {
		return a
	}
	return OldAction{Kind: OldDrop}
}

func (p *OldPolicy) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# mcptrace redaction policy (%s). Actions: keep, pseudonymize, mask, truncate(N), drop.\n", p.Origin)
	b.WriteString("# A field the policy does not name is dropped.\nfields:\n")
	names := make([]string, 0, len(OldFields))
	about := map[string]string{}
	for _, f := range OldFields {
		names = append(names, f.Name)
		about[f.Name] = f.About
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s: %s  # %s\n", n, p.Action(n), about[n])
	}
	return b.String()
}

type OldRedactor struct {
	Policy *OldPolicy
	Pseud  *OldPseudonymizer
	Stats  *OldStats
}

func (r *OldRedactor) Text(field, v string) (string, bool) {
	a := r.Policy.Action(field)
	switch a.Kind {
	case OldKeep:
		return v, true
	case OldPseudonymize:
		return r.Pseud.Pseudonym(v), true
	case OldMaskAction:
		return OldMaskWith(v, r.Stats), true
	case OldTruncate:
		v = OldMaskWith(v, r.Stats)
		if utf8.RuneCountInString(v) > a.N {
			v = string([]rune(v)[:a.N]) + "…"
		}
		return v, true
	}
	return "", false
}

func (r *OldRedactor) Optional(field string, v **string) {
	if *v == nil {
		return
	}
	s, ok := r.Text(field, **v)
	if !ok {
		*v = nil
		return
	}
	*v = &s
}

func (r *OldRedactor) Required(field string, v *string) {
	s, _ := r.Text(field, *v)
	*v = s
}

func OldNoRedaction() *OldPolicy {
	p := &OldPolicy{actions: map[string]OldAction{}, Origin: "no redaction (measurement only)"}
	for _, f := range OldFields {
		p.actions[f.Name] = OldAction{Kind: OldKeep}
	}
	return p
}
