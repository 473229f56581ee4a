package redact

import (
	"encoding/base64"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// This file holds the secret detectors behind Mask. Each detector has a name
// (the rule in "[REDACTED:rule]"), keywords and either a regular expression
// or a hand-written scanner. A single pass over the text finds which keywords
// occur (case-insensitively); a detector's regular expression runs only when
// one of its keywords does. Card numbers, percent-encoded and base64-wrapped
// tokens have scanners of their own that are just as cheap to skip.
//
// Detection runs on the original text and collects spans; overlapping spans
// merge into one replacement labelled by the most specific rule (the earliest
// in the list). Encoded tokens are decoded and the decoded text is run
// through the same detectors; if any fires, the whole encoded token is
// replaced.

// detector is one rule.
type detector struct {
	name     string
	keywords []string // lower-case ASCII; "" entries are not allowed
	re       *regexp.Regexp
	// secret picks the secret's extent from a match (submatch indices m).
	// ok false drops the match; the extent is then what was read, if
	// anything. nil: submatch 1 when the expression has one, else the
	// whole match.
	secret func(s string, m []int) (start, end int, ok bool)
	// scan replaces re for detectors without a regular expression; it
	// runs when the text has digits digits in a row (in groups joined by
	// single blanks, dashes or pluses, as scanCards reads them), and (if
	// b64) a run
	// of base64.
	scan   func(s string, id int, dst []span) []span
	digits int
	b64    bool
	chain  int // the text must have this many digits in a row (longestChain)
	// The expression is anchored: it is tried where a keyword occurs,
	// or where back moves that place to. word: only where a word starts.
	word bool
	back func(s string, at int) int
	// pre, if set, is a necessary condition for re to match at s[at:]
	// (pos is where the keyword was found): far cheaper than trying re,
	// and implied by it, so skipping re when pre says no changes nothing.
	pre func(s string, at, pos int) bool
}

// anchored compiles an expression that must match where it is tried.
func anchored(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)`) }

// localPart moves from an @ back to the start of an e-mail address.
func localPart(s string, at int) int {
	for at > 0 && (isAlnum(s[at-1]) || strings.IndexByte("._%+-", s[at-1]) >= 0) {
		at--
	}
	return at
}

// span is a part of the text to replace and the detector that found it.
type span struct{ start, end, rule int }

const (
	maxDecodeDepth = 2        // decode an encoded token inside an encoded token, no deeper
	maxDecodedLen  = 1 << 20  // longest encoded token decoded (longer ones: their first MiB)
	decodeBudget   = 64 << 10 // bytes decoded per pass, in all, beyond four times the text's length
	minBase64Run   = 20
	marker         = "[REDACTED:"
)

// Value delimiters for readValue.
var (
	delimToken = delims(" \t\r\n\v\f\"'\\&;,<>") // key=value in text and query strings
	delimSAS   = delims(" \t\r\n\v\f\"'\\;<>")   // an Azure SAS keeps its & pairs together
	delimLine  = delims("\r\n\"\\")              // a header value runs to the end of the line
	urlDelim   = delims(" \t\r\n\v\f\"'<>&?#;,()[]{}|\\`")
)

func delims(s string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

// sep matches what separates a key from its value: optional closing quote
// (escaped or not), then :, =, := or =>, then blanks. The value itself, with
// its opening quote, is read by readValue.
const sep = `(?:\\*["'])?\s*(?::=|=>|[:=])[ \t]*`

// baseDetectors are the rules of before issue 13, in their order; the
// rules of detect_more.go follow them (activeRules).
var baseDetectors = []detector{
	{name: "private_key", keywords: []string{"-----begin"},
		pre:    prefixes("-----BEGIN"),
		re:     anchored(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)`),
		secret: whole},
	// Two segments are enough: a JWT cut short is still one.
	{name: "jwt", keywords: []string{"eyj"},
		pre:    jwtStart,
		re:     anchored(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){0,3}`),
		secret: whole},
	{name: "github_token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		pre:    githubStart,
		re:     anchored(`gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}`),
		secret: whole},
	{name: "gitlab_token", keywords: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "gloas-", "glimt-"},
		pre:    prefixes("gl"),
		re:     anchored(`gl(?:pat|dt|rt|ptt|ft|soat|cbt|oas|imt)-[A-Za-z0-9_-]{16,}`),
		secret: whole},
	{name: "slack_token", keywords: []string{"xox", "xapp-"},
		pre:    prefixes("xox", "xapp-"),
		re:     anchored(`xox[abposrce]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}`),
		secret: whole},
	{name: "slack_webhook", keywords: []string{"hooks.slack.com"},
		pre: prefixes("hooks.slack.com/"),
		re:  anchored(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{16,})`)},
	{name: "webhook", keywords: []string{"discord.com/api/webhooks", "discordapp.com/api/webhooks"},
		pre: prefixes("discord"),
		re:  anchored(`discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_-]{20,})`)},
	{name: "webhook", keywords: []string{"api.telegram.org/bot"},
		pre: prefixes("api.telegram.org/bot"),
		re:  anchored(`api\.telegram\.org/bot([0-9]+:[A-Za-z0-9_-]{20,})`)},
	{name: "webhook", keywords: []string{"webhook.office.com", "outlook.office.com/webhook"},
		pre: prefixes("webhook.office.com/webhookb2/", "outlook.office.com/webhook/"),
		re:  anchored(`(?:webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/([A-Za-z0-9@/_.-]{20,})`)},
	// curl -u user:password on a command line quoted in an error or a log.
	{name: "basic_auth", keywords: []string{"-u "}, word: true,
		pre: prefixes("-u "),
		re:  anchored(`-u ['"]?[^\s:'"]+:([^\s'"]{4,})`)},
	{name: "stripe_key", keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "whsec_"},
		pre:    prefixes("sk_", "pk_", "rk_", "whsec_"),
		re:     anchored(`[spr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,}`),
		secret: whole},
	// OpenAI (sk-, sk-proj-), Anthropic (sk-ant-) and the like.
	{name: "api_key", keywords: []string{"sk-", "ck_pat_"}, word: true,
		pre:    prefixes("sk-", "ck_pat_"),
		re:     anchored(`(?:sk-[A-Za-z0-9_-]{20,}|ck_pat_[A-Za-z0-9_]{6,})`),
		secret: wholeIf(randomish)},
	{name: "service_token", keywords: []string{"npm_", "hf_", "sg.", "ya29.", "pypi-age"}, word: true,
		pre:    prefixes("npm_", "hf_", "SG.", "ya29.", "pypi-AgE"),
		re:     anchored(`(?:npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|ya29\.[A-Za-z0-9_-]{20,}|pypi-AgE[A-Za-z0-9_-]{40,})`),
		secret: whole},
	{name: "gcp_api_key", keywords: []string{"aiza"},
		pre:    prefixes("AIza"),
		re:     anchored(`AIza[0-9A-Za-z_-]{30,}`),
		secret: whole},
	// The private key of a service-account file is a PEM block (above);
	// its id is here.
	{name: "gcp_key_id", keywords: []string{"private_key_id"},
		pre:    sepAfter(len("private_key_id")),
		re:     anchored(`(?i)private_key_id` + sep),
		secret: value(delimToken, func(v string) bool { return len(v) >= 16 && !isPlaceholder(v) })},
	{name: "aws_key", keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
		pre:    awsKeyStart,
		re:     anchored(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`),
		secret: whole},
	{name: "aws_secret_key", keywords: []string{"aws", "secret"},
		pre:    wordThenSep(len("aws_secret_access_key")),
		re:     anchored(`(?i)(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)` + sep),
		secret: value(delimToken, func(v string) bool { return len(v) >= 16 && !isPlaceholder(v) })},
	// Storage account keys in connection strings and settings.
	{name: "azure_key", keywords: []string{"accountkey", "sharedaccesskey"}, word: true,
		pre:    wordThenAssign(len("SharedAccessKey")),
		re:     anchored(`(?i)(?:AccountKey|SharedAccessKey)\s*[:=]\s*`),
		secret: value(delimToken, func(v string) bool { return len(v) >= 16 && !isPlaceholder(v) })},
	// A shared access signature: the sig= of a SAS URL, or a whole
	// SharedAccessSignature value.
	{name: "azure_sas", keywords: []string{"sig="}, word: true,
		re:     anchored(`(?i)sig=`),
		secret: value(delimToken, func(v string) bool { return len(v) >= 16 && !isPlaceholder(v) })},
	{name: "azure_sas", keywords: []string{"sharedaccesssignature"}, word: true,
		pre:    sasSignature,
		re:     anchored(`(?i)SharedAccessSignature(?:\s*[:=]\s*|\s+)`),
		secret: value(delimSAS, func(v string) bool { return len(v) >= 16 && !isPlaceholder(v) })},
	// scheme://user:password@host
	{name: "url_password", keywords: []string{"://"},
		pre: urlPassword,
		re:  anchored(`://[^\s/?#@:"'<>\\]{0,128}:([^\s/?#@"'<>\\]{1,256})@`),
		secret: group(1, func(v string) bool {
			return !isPlaceholder(v) && !(len(v) <= 5 && allDigits(v)) // a port, not a password
		})},
	{name: "bearer", keywords: []string{"bearer"}, word: true,
		pre:    schemeGap(len("bearer")),
		re:     anchored(`(?i)bearer(?:\s+|\+|%20)([^\s"'\\]+)`),
		secret: group(1, func(v string) bool { return tokenish(v, 8) })},
	{name: "basic_auth", keywords: []string{"basic"}, word: true,
		pre:    schemeGap(len("basic")),
		re:     anchored(`(?i)basic(?:\s+|\+|%20)([A-Za-z0-9+/_-]+={0,2})`),
		secret: group(1, func(v string) bool { return base64CredentialPair(v) || tokenish(v, 8) })},
	{name: "digest_auth", keywords: []string{"digest"}, word: true,
		pre: spaceAfter(len("digest")),
		re:  anchored(`(?i)digest\s+((?:[a-z0-9_-]+\s*=\s*(?:\\*"(?:[^"\\]|\\[^"])*\\*"|[^\s,"\\]+)\s*,?\s*)+)`),
		secret: group(1, func(v string) bool {
			l := strings.ToLower(v)
			return strings.Contains(l, "response=") || strings.Contains(l, "username=") || strings.Contains(l, "nonce=")
		})},
	// Authorization: <scheme> <credentials>, or a bare credential.
	{name: "authorization", keywords: []string{"authorization"}, word: true,
		pre:    sepAfter(len("authorization")),
		re:     anchored(`(?i)authorization` + sep),
		secret: authorizationValue},
	// Headers as HAR and Inspector write them: {"name":"X-Api-Key","value":"…"}.
	// The value of a credential-bearing header goes, whatever it looks like.
	{name: "header", keywords: []string{"name"},
		pre:    headerName,
		re:     anchored(`(?i)name\\*"\s*:\s*\\*"([a-z0-9_.-]{1,64})\\*"\s*,\s*\\*"value\\*"\s*:\s*`),
		secret: headerValue},
	{name: "cookie", keywords: []string{"cookie"}, word: true,
		pre: sepAfter(len("cookie")),
		re:  anchored(`(?i)cookie` + sep),
		secret: value(delimLine, func(v string) bool {
			return !isPlaceholder(v) && (strings.Contains(v, "=") || tokenish(v, 8))
		})},
	// key=value, "key": "value", key: value, for keys that name a secret.
	{name: "assignment", keywords: []string{"passw", "passphrase", "secret", "token", "key", "pwd", "credential", "auth", "signature", "session", "sessid"},
		pre:    wordThenSep(len("credentials")),
		re:     anchored(`(?i)(password|passwd|passphrase|secret|token|key|pwd|credentials?|auth|signature|session[_.-]?id|sessid)` + sep),
		secret: assignmentValue},
	{name: "email", keywords: []string{"@"}, back: localPart,
		pre:    emailAt,
		re:     anchored(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`),
		secret: whole},
	{name: "card_number", scan: scanCards, digits: 13, chain: 13},
	// A line of base64 that decodes to binary, alone: the body of a PEM
	// block whose lines were logged one by one, or some other key.
	{name: "key_material", scan: scanKeyLines, b64: true},
}

// detectors are all the rules, in priority order.
var detectors = slices.Concat(baseDetectors, moreDetectors)

// scanRules are the detectors with a scanner instead of keywords, in
// order.
var scanRules = func() (ids []int) {
	for i := range detectors {
		if detectors[i].scan != nil {
			if len(detectors[i].keywords) > 0 {
				panic("scanner with keywords: " + detectors[i].name)
			}
			ids = append(ids, i)
		}
	}
	return
}()

// activeRules is how many of the detectors run: all of them. The
// differential tests set it to len(baseDetectors) for the time they hold
// the engine to the implementation of before, which had only those.
var activeRules = len(detectors)

// Indices of detectors the encoded-token scanners report under.
var basicAuthRule = ruleIndex("basic_auth")

func ruleIndex(name string) int {
	for i := range detectors {
		if detectors[i].name == name {
			return i
		}
	}
	panic("no rule " + name)
}

// Rules returns the names of the detector rules, in priority order.
func Rules() []string {
	var names []string
	seen := map[string]bool{}
	for _, d := range detectors {
		if !seen[d.name] {
			seen[d.name] = true
			names = append(names, d.name)
		}
	}
	return names
}

// Stats counts, per rule, how many values the detectors replaced; never the
// values. The zero value is ready to use and it is safe for concurrent use.
type Stats struct {
	n     [maxDetectors]atomic.Int64
	mu    sync.Mutex
	named map[string]int64 // structural redactions (URL parts) counted by name
}

const maxDetectors = 64 // the prefilter keeps a bit per detector

func (st *Stats) add(rule int) {
	if st != nil {
		st.n[rule].Add(1)
	}
}

// Counts returns the number of values each rule replaced, for the rules that
// replaced any.
func (st *Stats) Counts() map[string]int64 {
	m := map[string]int64{}
	if st == nil {
		return m
	}
	for i := range detectors {
		if n := st.n[i].Load(); n > 0 {
			m[detectors[i].name] += n
		}
	}
	st.mu.Lock()
	for k, n := range st.named {
		m[k] += n
	}
	st.mu.Unlock()
	return m
}

// addNamed counts a redaction made outside the detectors.
func (st *Stats) addNamed(name string) {
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

// Mask replaces secret-shaped substrings of s with [REDACTED:rule]. A keyword
// prefilter decides which rules' regular expressions run at all.
func Mask(s string) string { return MaskWith(s, nil) }

// MaskWith is Mask, counting what each rule replaced in st (which may be
// nil). The result is a fixed point: masking it again changes nothing.
func MaskWith(s string, st *Stats) string { return maskWith(s, st) }

// maskWith is MaskWith, counting in c.
func maskWith(s string, c counter) string {
	for pass := 0; pass < 8; pass++ {
		d := detection{budget: decodeBudget + 4*len(s)}
		spans := d.detect(s, 0, nil)
		if len(spans) == 0 {
			return s
		}
		s = replace(s, spans, c)
	}
	return s
}

// replace merges overlapping spans and replaces each with a marker.
func replace(s string, spans []span, c counter) string {
	slices.SortFunc(spans, func(x, y span) int { return x.start - y.start })
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
		b.WriteString(marker)
		b.WriteString(detectors[sp.rule].name)
		b.WriteByte(']')
		c.add(sp.rule)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// detection carries the decode budget of one Mask call.
type detection struct{ budget int }

// detect appends the spans the detectors find in s.
func (d *detection) detect(s string, depth int, dst []span) []span {
	if s == "" {
		return dst
	}
	var hits [16]hit
	p := prefilterOf(s, hits[:0])
	chain := -1 // longestChain(s), once a scanner asks
	for _, i := range scanRules {
		if i >= activeRules {
			break
		}
		r := &detectors[i]
		if p.digits < r.digits || r.b64 && !p.base64 {
			continue
		}
		if r.chain > 0 && chain < 0 {
			chain = longestChain(s)
		}
		if r.chain == 0 || chain >= r.chain {
			dst = r.scan(s, i, dst)
		}
	}
	// The detectors whose keywords occur, in order (the order of the
	// spans does not matter: replace sorts and merges them).
	active := p.mask
	if activeRules < 64 {
		active &= 1<<uint(activeRules) - 1
	}
	for active != 0 {
		i := bits.TrailingZeros64(active)
		active &= active - 1
		r := &detectors[i]
		bit := uint64(1) << uint(i)
		// A match inside a value this rule already read is not tried
		// again (that would be quadratic): an accepted value is masked
		// whole; inside a rejected one, only long unquoted values are
		// skipped (a quoted value ends at its quote, and may be prose
		// with key=value pairs in it).
		covered := 0
		for _, h := range p.hits {
			if h.mask&bit == 0 {
				continue
			}
			at := h.pos
			if r.back != nil {
				at = r.back(s, at)
			}
			if at < covered || r.word && at > 0 && isWordByte(s[at-1]) || r.pre != nil && !r.pre(s, at, h.pos) {
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
				if b-a > 256 && !quoted(s, m[1]) {
					covered = b
				}
				continue
			}
			if a = skipMarkers(s, a, b); a >= b || inMarker(s, a, b) {
				continue
			}
			dst = append(dst, span{a, b, i})
			covered = max(covered, b)
		}
	}
	if depth < maxDecodeDepth {
		if p.percent {
			dst = d.percentTokens(s, depth, dst)
		}
		if p.base64 {
			dst = d.base64Tokens(s, depth, dst)
		}
	}
	return dst
}

// quoted: a value starting at s[i:] is in quotes.
func quoted(s string, i int) bool {
	return i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '\\')
}

func (r *detector) pick(s string, m []int) (int, int, bool) {
	if r.secret != nil {
		return r.secret(s, m)
	}
	if len(m) >= 4 && m[2] >= 0 {
		return m[2], m[3], true
	}
	return m[0], m[1], true
}

// skipMarkers moves a past the replacements already made at the start of
// s[a:b]: what follows them is still looked at.
func skipMarkers(s string, a, b int) int {
	for strings.HasPrefix(s[a:b], marker) {
		k := strings.IndexByte(s[a:b], ']')
		if k < 0 {
			return b
		}
		a += k + 1
	}
	return a
}

// inMarker reports whether s[a:b] lies inside a replacement already made,
// so that masking the output of Mask changes nothing.
func inMarker(s string, a, b int) bool {
	lo := max(0, a-64)
	i := strings.LastIndex(s[lo:min(len(s), a+len(marker)-1)], marker)
	if i < 0 {
		return false
	}
	i += lo
	for j := i + len(marker); j < len(s); j++ {
		switch c := s[j]; {
		case c == ']':
			return j >= b-1
		case c != '_' && (c < 'a' || c > 'z'):
			return false
		}
	}
	return false
}

// Secret pickers.

func whole(s string, m []int) (int, int, bool) { return m[0], m[1], true }

func wholeIf(ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) { return m[0], m[1], ok(s[m[0]:m[1]]) }
}

func group(n int, ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) {
		a, b := m[2*n], m[2*n+1]
		if a < 0 || !ok(s[a:b]) {
			return 0, 0, false
		}
		return a, b, true
	}
}

// value picks the value that starts where the match ends.
func value(stop *[256]bool, ok func(string) bool) func(string, []int) (int, int, bool) {
	return func(s string, m []int) (int, int, bool) {
		a, b := readValue(s, m[1], stop)
		return a, b, a < b && ok(s[a:b])
	}
}

// readValue reads the value that starts at s[i:]: a JSON string, a string in
// escaped quotes (JSON inside a JSON string), a single-quoted string, or an
// unquoted run up to a delimiter. It returns the value's extent without its
// quotes.
func readValue(s string, i int, stop *[256]bool) (int, int) {
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

var authSchemes = map[string]bool{
	"bearer": true, "basic": true, "token": true, "digest": true, "negotiate": true, "ntlm": true,
	"aws4-hmac-sha256": true, "hoba": true, "mutual": true, "vapid": true, "dpop": true, "mac": true,
	"apikey": true, "api-key": true, "key": true, "sso-key": true, "gssapi": true, "otp": true, "hmac": true,
}

// authorizationValue picks the credentials of an Authorization header: all
// that follows a known scheme, or a bare value that looks like a token.
func authorizationValue(s string, m []int) (int, int, bool) {
	i := m[1]
	if quoted(s, i) {
		// Quoted: the whole header value is inside the quotes.
		a, b := readValue(s, i, delimLine)
		return credentials(s, a, b)
	}
	// Unquoted: the scheme (or bare value) is one word; only after a
	// scheme is the rest of the line read.
	w := i
	for w < len(s) && !delimLine[s[w]] && s[w] != ' ' && s[w] != '\t' {
		w++
	}
	if !authSchemes[strings.ToLower(s[i:w])] {
		return i, w, i < w && tokenish(s[i:w], 6)
	}
	_, b := readValue(s, w, delimLine)
	return credentials(s, i, b)
}

// credentials picks what follows the scheme in the header value s[a:b], or
// the value's first word if there is no scheme.
func credentials(s string, a, b int) (int, int, bool) {
	v := s[a:b]
	word := v
	if k := strings.IndexAny(v, " \t"); k >= 0 {
		word = v[:k]
	}
	if authSchemes[strings.ToLower(word)] {
		rest := strings.TrimLeft(v[len(word):], " \t")
		return b - len(rest), b, rest != "" && !isPlaceholder(rest)
	}
	return a, b, tokenish(word, 6)
}

// sensitiveHeaders are header names whose value is a credential. Any name
// containing one of sensitiveHeaderParts is one too.
var (
	sensitiveHeaders     = map[string]bool{"mcp-session-id": true, "x-amz-security-token": true, "ocp-apim-subscription-key": true, "x-functions-key": true, "x-goog-api-key": true, "x-csrf-token": true}
	sensitiveHeaderParts = []string{"auth", "token", "secret", "passw", "key", "cookie", "session", "signature", "credential"}
)

func headerValue(s string, m []int) (int, int, bool) {
	name := strings.ToLower(s[m[2]:m[3]])
	sensitive := sensitiveHeaders[name]
	for _, p := range sensitiveHeaderParts {
		sensitive = sensitive || strings.Contains(name, p)
	}
	if !sensitive {
		return 0, 0, false
	}
	a, b := readValue(s, m[1], delimLine)
	if a >= b || strings.HasPrefix(s[a:], marker) {
		return a, b, false
	}
	switch strings.ToLower(s[a:b]) {
	case "null", "none", "undefined", "nil":
		return a, b, false
	}
	return a, b, true
}

// assignmentValue picks the value of key=value. After password-like keys any
// value that is not a placeholder goes; after other keys (token, key, auth,
// …) only values that look like secrets, so that key=id, token=null or
// max_key=30 stay readable.
func assignmentValue(s string, m []int) (int, int, bool) {
	key := strings.ToLower(s[m[2]:m[3]])
	a, b := readValue(s, m[1], delimToken)
	v := s[a:b]
	switch key {
	case "password", "passwd", "passphrase", "secret":
		return a, b, passwordLike(v)
	}
	return a, b, secretLike(v)
}

// Value tests.

// placeholders are values that stand for no secret at all.
var placeholders = map[string]bool{
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

func isPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.HasPrefix(v, marker) || placeholders[strings.ToLower(v)] {
		return true
	}
	if len(v) >= 2 {
		f, l := v[0], v[len(v)-1]
		if f == '<' && l == '>' || f == '{' && l == '}' || f == '%' && len(v) <= 3 ||
			strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") {
			return true
		}
	}
	// ****, xxxx, ...., ————
	first, _ := utf8.DecodeRuneInString(v)
	if strings.Trim(v, string(first)) == "" && (first == '*' || first == 'x' || first == 'X' || first == '.' || first == '•' || first == '…' || first == '-') {
		return true
	}
	return false
}

// passwordLike: after a password key, anything of four or more characters
// that is not a placeholder or the start of a sentence.
func passwordLike(v string) bool {
	if len(v) < 4 || isPlaceholder(v) {
		return false
	}
	if k := strings.IndexAny(v, " \t"); k >= 0 && placeholders[strings.ToLower(v[:k])] {
		return false
	}
	return true
}

// secretLike: a value that looks random enough to be a credential.
func secretLike(v string) bool {
	if len(v) < 8 || isPlaceholder(v) || strings.ContainsAny(v, " \t\r\n") {
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
	classes := b2i(lo) + b2i(up) + b2i(di)
	h := entropy(v)
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

// tokenish: a credential after an auth scheme. Words are not.
func tokenish(v string, minLen int) bool {
	if len(v) < minLen || isPlaceholder(v) {
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

// randomish: a key's random part has digits and letters, or both cases
// (sk-learn-style names have neither).
func randomish(v string) bool {
	var d, lo, up bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		d = d || isDigit(c)
		lo = lo || 'a' <= c && c <= 'z'
		up = up || 'A' <= c && c <= 'Z'
	}
	return d && (lo || up) || lo && up
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

func allDigitsOrColons(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) && v[i] != ':' {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// entropy is the Shannon entropy of v's bytes, in bits per byte.
func entropy(v string) float64 {
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

// base64CredentialPair is credentialPair(decodeBase64(v)), decoded in a
// pooled buffer.
func base64CredentialPair(v string) bool {
	buf := getBuf()
	defer putBuf(buf)
	buf.b = decodeBase64Into(buf.b[:0], v)
	return credentialPair(bytesString(buf.b))
}

// credentialPair: the decoded text of Basic credentials, user:password.
func credentialPair(v string) bool {
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

// scanKeyLines finds lines that hold nothing but 40 or more characters of
// standard base64 decoding to binary.
func scanKeyLines(s string, id int, dst []span) []span {
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
		if b-a >= 40 && keyLine(s[a:b]) {
			dst = append(dst, span{a, b, id})
		}
		i = j + 1
	}
	return dst
}

func keyLine(t string) bool {
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
		case isDigit(c):
			di = true
		case c != '+' && c != '/':
			return false
		}
	}
	if !lo || !up || !di {
		return false
	}
	t = body[:len(body)/4*4]
	buf := getBuf()
	defer putBuf(buf)
	buf.b = slices.Grow(buf.b[:0], base64.RawStdEncoding.DecodedLen(len(t)))[:base64.RawStdEncoding.DecodedLen(len(t))]
	n, err := base64.RawStdEncoding.Decode(buf.b, unsafe.Slice(unsafe.StringData(t), len(t)))
	return err == nil && !printableBytes(buf.b[:n])
}

// Card numbers: 13 to 19 digits passing the Luhn check, unbroken or in
// groups (4-4-4-4, 4-4-4-4-3, 4-6-5, …) separated by single spaces, dashes
// or pluses (a blank in a query string).

func scanCards(s string, id int, dst []span) []span {
	var gs [12][2]int
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		n := 0
		j := i
		for {
			a := j
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			gs[n] = [2]int{a, j}
			n++
			if n < len(gs) && j+1 < len(s) && (s[j] == ' ' || s[j] == '-' || s[j] == '+') && isDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		dst = cardsIn(s, gs[:n], id, dst)
		i = j
	}
	return dst
}

func cardsIn(s string, gs [][2]int, id int, dst []span) []span {
	glen := func(k int) int { return gs[k][1] - gs[k][0] }
	for k := 0; k < len(gs); k++ {
		if l := glen(k); l >= 13 && l <= 19 {
			a, b := gs[k][0], gs[k][1]
			if !notACard(s, a, b) && luhn(s[a:b]) {
				dst = append(dst, span{a, b, id})
			}
			continue
		}
		if glen(k) != 4 {
			continue
		}
		best := -1
		// 4-6-5 (American Express) and 4-6-4 (Diners).
		if k+2 < len(gs) && glen(k+1) == 6 && (glen(k+2) == 5 || glen(k+2) == 4) && luhnGroups(s, gs[k:k+3]) {
			best = k + 2
		}
		total := 4
		for j := k + 1; j < len(gs); j++ {
			l := glen(j)
			if l > 4 || total+l > 19 {
				break
			}
			total += l
			if total >= 13 && luhnGroups(s, gs[k:j+1]) {
				best = max(best, j)
			}
			if l != 4 {
				break
			}
		}
		if best >= 0 {
			dst = append(dst, span{gs[k][0], gs[best][1], id})
			k = best
		}
	}
	return dst
}

// notACard: a run of digits that is not a card number whatever its check
// digit: the fraction of a decimal number, or the digits inside a hex hash.
// Anything else that passes Luhn goes, Unix timestamps in milliseconds
// included (one in ten of them).
func notACard(s string, a, b int) bool {
	if a >= 2 && s[a-1] == '.' && isDigit(s[a-2]) || b+1 < len(s) && s[b] == '.' && isDigit(s[b+1]) {
		return true
	}
	lo, hi := a, b
	for lo > 0 && isAlnum(s[lo-1]) {
		lo--
	}
	for hi < len(s) && isAlnum(s[hi]) {
		hi++
	}
	if hi-lo > b-a && hi-lo >= 32 {
		for i := lo; i < hi; i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func luhnGroups(s string, gs [][2]int) bool {
	var buf [19]byte
	n := 0
	for _, g := range gs {
		n += copy(buf[n:], s[g[0]:g[1]])
	}
	return luhn(string(buf[:n]))
}

// luhn reports whether the digits in d pass the Luhn check.
func luhn(d string) bool {
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

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHex(c byte) bool      { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }
func isAlnum(c byte) bool    { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' }

// Encoded tokens.

// percentTokens finds URL components with %XX escapes, decodes them and runs
// the detectors on the result. A name= in front stays readable.
func (d *detection) percentTokens(s string, depth int, dst []span) []span {
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '%')
		if k < 0 {
			break
		}
		k += i
		if k+2 >= len(s) || !isHex(s[k+1]) || !isHex(s[k+2]) {
			i = k + 1
			continue
		}
		a, b := k, k
		for a > i && !urlDelim[s[a-1]] {
			a--
		}
		for b < len(s) && !urlDelim[s[b]] {
			b++
		}
		i = b
		if eq := strings.IndexByte(s[a:k], '='); eq > 0 && isName(s[a:a+eq]) {
			a += eq + 1
		}
		tok := s[a:b]
		if len(tok) > maxDecodedLen {
			tok = tok[:maxDecodedLen]
		}
		if rule := d.percentRule(tok, false, depth); rule >= 0 {
			dst = append(dst, span{a, b, rule})
		} else if strings.IndexByte(tok, '+') >= 0 {
			if rule := d.percentRule(tok, true, depth); rule >= 0 {
				dst = append(dst, span{a, b, rule})
			}
		}
	}
	return dst
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return s != ""
}

// percentRule runs the detectors on tok percent-decoded (in a pooled
// buffer): the most specific rule that fired, or -1.
func (d *detection) percentRule(tok string, plus bool, depth int) int {
	buf := getBuf()
	defer putBuf(buf)
	buf.b = appendPercentDecoded(buf.b[:0], tok, plus)
	return d.decoded(bytesString(buf.b), depth)
}

// appendPercentDecoded is percentDecode, appending to dst.
func appendPercentDecoded(dst []byte, s string, plus bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case c == '+' && plus:
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// decodeBuf is a buffer for decoded text. The detectors read the text as a
// string while they hold the buffer; nothing keeps it after.
type decodeBuf struct{ b []byte }

var decodeBufs = sync.Pool{New: func() any { return new(decodeBuf) }}

func getBuf() *decodeBuf { return decodeBufs.Get().(*decodeBuf) }

func putBuf(b *decodeBuf) {
	if cap(b.b) > 64<<10 {
		b.b = nil
	}
	decodeBufs.Put(b)
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// base64Tokens finds runs of base64 that decode to text, and runs the
// detectors on the text.
func (d *detection) base64Tokens(s string, depth int, dst []span) []span {
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		a := i
		for i < len(s) && isB64(s[i]) {
			i++
		}
		b := i
		for i < len(s) && i-b < 2 && s[i] == '=' {
			i++
		}
		if !plausibleBase64(s[a:b]) {
			continue
		}
		if rule := d.base64Rule(s[a:b], depth); rule >= 0 {
			dst = append(dst, span{a, i, rule})
			continue
		}
		// A path with a base64 segment: /api/v1/dXNlcjpw…
		if strings.IndexByte(s[a:b], '/') < 0 {
			continue
		}
		for x := a; x < b; {
			y := x
			for y < b && s[y] != '/' {
				y++
			}
			if y-x >= minBase64Run && y-x < b-a && plausibleBase64(s[x:y]) {
				if rule := d.base64Rule(s[x:y], depth); rule >= 0 {
					dst = append(dst, span{x, y, rule})
				}
			}
			x = y + 1
		}
	}
	return dst
}

func (d *detection) base64Rule(tok string, depth int) int {
	if len(tok) > maxDecodedLen {
		tok = tok[:maxDecodedLen]
	}
	// Most runs decode to binary: find out in a pooled buffer, before
	// making the text.
	buf := getBuf()
	defer putBuf(buf)
	dec := decodeBase64Into(buf.b[:0], tok)
	buf.b = dec
	if len(dec) < 12 || !printableBytes(dec) {
		return -1
	}
	text := bytesString(dec) // read only while buf is held
	if rule := d.decoded(text, depth); rule >= 0 {
		return rule
	}
	if t := strings.TrimSpace(text); credentialPair(t) && !allDigitsOrColons(t[strings.IndexByte(t, ':')+1:]) {
		// user:password on its own (an opaque cursor such as
		// v1:1718093450:12345 is not one).
		return basicAuthRule
	}
	return -1
}

// decoded runs the detectors on decoded text and returns the most specific
// rule that fired, or -1.
func (d *detection) decoded(text string, depth int) int {
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

func isB64(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-'
}

// plausibleBase64: long enough, with both cases (encoded text nearly always
// has them; the encoding of upper-case text such as an AWS key id may have
// none, so a long upper-case run counts too), and not a hex hash or UUID.
func plausibleBase64(t string) bool {
	if len(t) < minBase64Run {
		return false
	}
	var lo, up, hex = false, false, true
	for i := 0; i < len(t); i++ {
		c := t[i]
		lo = lo || 'a' <= c && c <= 'z'
		up = up || 'A' <= c && c <= 'Z'
		hex = hex && (isHex(c) || c == '-')
	}
	return (lo && up || up && len(t) >= 24) && !hex
}

// decodeBase64Into is decodeBase64, appending to dst (which it returns
// cut back to dst if t is not base64).
func decodeBase64Into(dst []byte, t string) []byte {
	t = strings.TrimRight(t, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(t, "-_") {
		if strings.ContainsAny(t, "+/") {
			return dst
		}
		enc = base64.RawURLEncoding
	}
	if len(t)%4 == 1 {
		t = t[:len(t)-1]
	}
	dst = slices.Grow(dst, enc.DecodedLen(len(t)))
	out := dst[len(dst) : len(dst)+enc.DecodedLen(len(t))]
	n, err := enc.Decode(out, unsafe.Slice(unsafe.StringData(t), len(t)))
	if err != nil {
		return dst
	}
	return dst[:len(dst)+n]
}

// printableBytes is printable for bytes.
func printableBytes(t []byte) bool {
	if !utf8.Valid(t) {
		return false
	}
	bad, n := 0, 0
	for i := 0; i < len(t); {
		r, w := utf8.DecodeRune(t[i:])
		i += w
		n++
		if !unicode.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			bad++
		}
	}
	return bad*20 <= n
}

// The keyword prefilter.

// prefilter is what one pass over the text found: which detectors' keywords
// occur, how many digits, whether there are %XX escapes and base64 runs.
type prefilter struct {
	mask    uint64
	hits    []hit // where keywords occur, in order
	digits  int   // how many
	percent bool
	base64  bool
}

type hit struct {
	pos  int
	mask uint64 // the detectors whose keyword occurs at pos
}

type keyword struct {
	kw   string
	mask uint64
}

var (
	byTriple [tripleBuckets][]keyword // keywords by the hash of their first three bytes, folded
	triples  [65536 / 64]uint64       // bit set of hashes of the keywords' first three bytes
	atMask   uint64                   // detectors whose keyword is "@"
)

func init() {
	if len(detectors) > maxDetectors {
		panic("too many detectors")
	}
	for i, d := range detectors {
		for _, k := range d.keywords {
			if k == "@" {
				atMask |= 1 << uint(i)
				continue
			}
			if len(k) < 3 || strings.ToLower(k) != k {
				panic("keyword " + k)
			}
			h := triple(k[0], k[1], k[2])
			b := &byTriple[h%tripleBuckets]
			found := false
			for j := range *b {
				if (*b)[j].kw == k {
					(*b)[j].mask |= 1 << uint(i)
					found = true
				}
			}
			if !found {
				*b = append(*b, keyword{k, 1 << uint(i)})
			}
			triples[h>>6] |= 1 << (h & 63)
		}
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func prefilterOf(s string, hits []hit) prefilter {
	p := prefilter{hits: hits}
	n := len(s)
	st := uint8(0) // the base64 run automaton
	digits := 0
	// c1, c2: s[i+1] and s[i+2] in lower case.
	var c1, c2 byte
	if n > 1 {
		c1 = lowerTab[s[1]]
	}
	i := 0
	for ; i+2 < n; i++ {
		c := s[i]
		st = b64Next[int(st)<<3|int(byteKind[c])]
		digits += int(byteClass[c] & clDigit)
		c2 = lowerTab[s[i+2]]
		c0 := lowerTab[c]
		h := triple(c0, c1, c2)
		c1 = c2
		if triples[h>>6]&(1<<(h&63)) != 0 {
			var m uint64
			for _, k := range byTriple[h%tripleBuckets] {
				if hasPrefixFold(s[i:], k.kw) {
					m |= k.mask
				}
			}
			if m != 0 {
				p.mask |= m
				p.hits = append(p.hits, hit{i, m})
			}
		}
	}
	for ; i < n; i++ {
		st = b64Next[int(st)<<3|int(byteKind[s[i]])]
		digits += int(byteClass[s[i]] & clDigit)
	}
	p.base64 = st == b64Accept
	p.digits = digits
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], '%')
		if k < 0 {
			break
		}
		if i += k; i+2 < n && isHex(s[i+1]) && isHex(s[i+2]) {
			p.percent = true
			break
		}
	}
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], '@')
		if k < 0 {
			break
		}
		i += k
		p.mask |= atMask
		p.hits = append(p.hits, hit{i, atMask})
	}
	return p
}

// The base64 run automaton: a state is the length of the current run of
// base64 bytes (up to 24, all that b64Run looks at) and whether it has
// lower- and upper-case letters; b64Accept, once a run is one b64Run
// accepts, is never left. Within a run, length and letters only grow, so a
// run is accepted as it goes exactly when b64Run accepts it at its end.
const (
	b64MaxRun = 24
	b64Accept = (b64MaxRun + 1) * 4
)

// byteKind is a byte's class for the automaton: 0 not base64, 1 digit,
// 2 lower, 3 upper, 4 symbol.
var byteKind, b64Next = func() (kind [256]uint8, next [(b64Accept + 1) << 3]uint8) {
	for c := 0; c < 256; c++ {
		switch byteClass[c] {
		case clDigit:
			kind[c] = 1
		case clLower:
			kind[c] = 2
		case clUpper:
			kind[c] = 3
		case clSymbol:
			kind[c] = 4
		}
	}
	for st := 0; st <= b64Accept; st++ {
		for k := 0; k < 5; k++ {
			var to int
			switch {
			case st == b64Accept:
				to = b64Accept
			case k == 0:
				to = 0
			default:
				run, seen := st/4, uint8(0)
				if st%4&1 != 0 {
					seen |= clLower
				}
				if st%4&2 != 0 {
					seen |= clUpper
				}
				run = min(run+1, b64MaxRun)
				if k == 2 {
					seen |= clLower
				}
				if k == 3 {
					seen |= clUpper
				}
				if b64Run(run, seen) {
					to = b64Accept
					break
				}
				to = run * 4
				if seen&clLower != 0 {
					to |= 1
				}
				if seen&clUpper != 0 {
					to |= 2
				}
			}
			next[st<<3|k] = uint8(to)
		}
	}
	return
}()

// longestChain returns the most digits in a row in s, in groups joined by
// one blank, dash or plus, as scanCards reads them.
func longestChain(s string) int {
	best, chain := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			if chain++; chain > best {
				best = chain
			}
		case chain > 0 && (c == ' ' || c == '-' || c == '+') && chainJoin(s, i):
		default:
			chain = 0
		}
	}
	return best
}

// chainJoin: s[i] joins two groups of digits.
func chainJoin(s string, i int) bool {
	return i > 0 && isDigit(s[i-1]) && i+1 < len(s) && isDigit(s[i+1])
}

// b64Run: a run that plausibleBase64 may accept (both cases, or a long
// upper-case one).
func b64Run(run int, seen uint8) bool {
	return run >= minBase64Run && seen&(clLower|clUpper) == clLower|clUpper || run >= 24 && seen&clUpper != 0
}

// Byte classes for the prefilter: the base64 alphabet, by kind.
const (
	clDigit = 1 << iota
	clLower
	clUpper
	clSymbol
)

var byteClass, lowerTab = func() (cl, lo [256]uint8) {
	for c := 0; c < 256; c++ {
		lo[c] = lower(byte(c))
		switch {
		case '0' <= c && c <= '9':
			cl[c] = clDigit
		case 'a' <= c && c <= 'z':
			cl[c] = clLower
		case 'A' <= c && c <= 'Z':
			cl[c] = clUpper
		case c == '+' || c == '/' || c == '_' || c == '-':
			cl[c] = clSymbol
		}
	}
	return
}()

// tripleBuckets is how many lists of keywords the hashes of their first
// three bytes pick from: a place whose hash is a keyword's is compared with
// the few keywords of that list only (a keyword can match only where the
// text's three bytes hash as its own do).
const tripleBuckets = 1024

// triple hashes three lower-case bytes to 16 bits.
func triple(a, b, c byte) uint {
	return (uint(a)<<9 ^ uint(b)<<5 ^ uint(c)*0x9e37) & 0xffff
}

// hasPrefixFold: s starts with the lower-case ASCII keyword kw, in any case.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if lowerTab[s[i]] != kw[i] {
			return false
		}
	}
	return true
}
