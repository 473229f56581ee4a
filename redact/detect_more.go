package redact

import "strings"

// The rules of issue 13: the API-key prefixes of more clouds, AI providers,
// payment and messaging services (README, "Redaction", lists each with the
// source of its shape), the Twilio auth token, credential-file lines, and
// personal data (phone numbers, US social security numbers). Each shape is
// as narrow as the provider makes it: the prefix, the alphabet and the
// length of the random part; tokens of a fixed length also end at a word
// boundary. A random part that is all one letter or all digits (a
// placeholder such as gsk_xxxx…) is kept (randomish).
var moreDetectors = []detector{
	// Groq gsk_, Replicate r8_, Perplexity pplx-, xAI xai-, NVIDIA
	// nvapi-, Pinecone pcsk_, LangSmith lsv2_, Firecrawl fc-, Tavily
	// tvly-, Hugging Face organisation api_org_, ElevenLabs sk_ and 48 hex.
	{name: "ai_api_key", keywords: []string{"gsk_", "r8_", "pplx-", "xai-", "nvapi-", "pcsk_", "lsv2_", "fc-", "tvly-", "api_org_", "sk_"}, word: true,
		pre: prefixes("gsk_", "r8_", "pplx-", "xai-", "nvapi-", "pcsk_", "lsv2_", "fc-", "tvly-", "api_org_", "sk_"),
		re: anchored(`gsk_[A-Za-z0-9]{48,}|r8_[A-Za-z0-9]{37,}|pplx-[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{80,}|nvapi-[A-Za-z0-9_-]{60,}` +
			`|pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b|fc-[a-f0-9]{32}\b` +
			`|tvly-(?:dev-|prod-)?[A-Za-z0-9]{32,}|api_org_[A-Za-z]{34,}|sk_[a-f0-9]{48}\b`),
		secret: wholeIf(randomish)},
	// DigitalOcean dop_v1_/doo_v1_/dor_v1_, Databricks dapi, Alibaba
	// LTAI, Google OAuth client secrets GOCSPX-, HashiCorp Vault hvs./hvb.,
	// Terraform Cloud .atlasv1., Supabase sbp_, Doppler dp.pt., Pulumi pul-,
	// Azure AD client secrets (three characters, a digit, Q~).
	{name: "cloud_token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_", "dapi", "ltai", "gocspx-", "hvs.", "hvb.", "sbp_", "dp.pt.", "pul-"}, word: true,
		pre: prefixes("do", "dapi", "LTAI", "GOCSPX-", "hvs.", "hvb.", "sbp_", "dp.pt.", "pul-"),
		re: anchored(`do[opr]_v1_[a-f0-9]{64,}|dapi[a-f0-9]{32}(?:-[0-9])?\b|LTAI[A-Za-z0-9]{20}\b|GOCSPX-[A-Za-z0-9_-]{28}` +
			`|hv[sb]\.[A-Za-z0-9_-]{90,}|sbp_[a-f0-9]{40}\b|dp\.pt\.[A-Za-z0-9]{43}|pul-[a-f0-9]{40}\b`),
		secret: wholeIf(randomish)},
	{name: "cloud_token", keywords: []string{".atlasv1."}, back: backN(14),
		re:     anchored(`[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`),
		secret: wholeIf(randomish)},
	{name: "cloud_token", keywords: []string{"7q~", "8q~"}, back: backN(3),
		pre:    azureSecretStart,
		re:     anchored(`[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`),
		secret: wholeIf(randomish)},
	// Docker Hub dckr_pat_, Atlassian ATATT3, Postman PMAK-, Sentry
	// sntrys_/sntryu_, Grafana glc_/glsa_, New Relic NRAK-, Linear lin_api_,
	// Shopify shpat_/shpca_/shppa_/shpss_, RubyGems rubygems_, PlanetScale
	// pscale_tkn_/pscale_pw_, age AGE-SECRET-KEY-1.
	{name: "dev_token", keywords: []string{"dckr_pat_", "atatt3", "pmak-", "sntrys_", "sntryu_", "glc_", "glsa_", "nrak-", "lin_api_", "shpat_", "shpca_", "shppa_", "shpss_", "rubygems_", "pscale_", "age-secret-key-1"}, word: true,
		re: anchored(`dckr_pat_[A-Za-z0-9_-]{27,}|ATATT3[A-Za-z0-9_=-]{150,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b|sntry[su]_[A-Za-z0-9+/=_-]{60,}` +
			`|glc_[A-Za-z0-9+/=_-]{32,}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|NRAK-[A-Z0-9]{27}\b|lin_api_[A-Za-z0-9]{40}\b` +
			`|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b|rubygems_[a-f0-9]{48}\b|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,}` +
			`|AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}`),
		secret: wholeIf(randomish)},
	// Square sq0atp-/sq0csp-/EAAA, PayPal Braintree access_token$…$,
	// Razorpay rzp_live_/rzp_test_, Flutterwave FLWSECK-, Plaid access-….
	{name: "payment_key", keywords: []string{"sq0atp-", "sq0csp-", "eaaa", "access_token$", "rzp_live_", "rzp_test_", "flwseck", "access-sandbox-", "access-development-", "access-production-"}, word: true,
		re: anchored(`sq0atp-[A-Za-z0-9_-]{22,}|sq0csp-[A-Za-z0-9_-]{43,}|EAAA[A-Za-z0-9_-]{60,}` +
			`|access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b|rzp_(?:live|test)_[A-Za-z0-9]{14,}` +
			`|FLWSECK(?:_TEST)?-[a-h0-9]{32}-X|access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		secret: wholeIf(randomish)},
	// Mailgun key-, Meta (WhatsApp, Messenger) EAA… access tokens.
	{name: "messaging_token", keywords: []string{"key-", "eaa"}, word: true,
		pre:    prefixes("key-", "EAA"),
		re:     anchored(`key-[a-f0-9]{32}\b|EAA[A-Za-z0-9]{100,}`),
		secret: wholeIf(randomish)},
	// Mailchimp: 32 hex, -us and the data centre.
	{name: "messaging_token", keywords: []string{"-us"}, back: backHex(32),
		re:     anchored(`[a-f0-9]{32}-us[0-9]{1,2}\b`),
		secret: wholeIf(randomish)},
	// Telegram bot tokens: the bot id, a colon, AA and 33 more.
	{name: "messaging_token", keywords: []string{":aa"}, back: backDigits,
		re:     anchored(`[0-9]{8,10}:AA[A-Za-z0-9_-]{33}`),
		secret: wholeIf(randomish)},
	// Twilio API key SIDs (SK) and account SIDs (AC), 32 hex; Discord bot
	// tokens (three base64url segments, the first the bot's id).
	{name: "messaging_token", scan: scanSIDs, b64: true},
	{name: "messaging_token", scan: scanDiscord, b64: true},
	// A Twilio auth token: 32 hex after the words.
	{name: "auth_token", keywords: []string{"auth token", "auth_token", "auth-token", "authtoken"}, word: true,
		re: anchored(`(?i)auth[ _-]?token(?:\\*["'])?(?:\s*(?::=|=>|[:=])\s*|\s+(?:is|was|of)\s+|\s+)\\*["']?([0-9a-f]{32})\b`)},
	// netrc: machine host login user password secret (also on several
	// lines, and default instead of machine host).
	{name: "credentials_file", keywords: []string{"machine", "default"}, word: true,
		pre:    spaceAfterWord,
		re:     anchored(`(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+(\S+)`),
		secret: group(1, func(v string) bool { return !isPlaceholder(v) })},
	// e-mail:password (a leaked credential list): the password goes with
	// the address.
	{name: "credentials_file", keywords: []string{"@"}, back: localPart,
		pre:    emailAt,
		re:     anchored(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}:([^\s:@/]{4,})`),
		secret: group(1, func(v string) bool { return !allDigits(v) && !isPlaceholder(v) })},
	// .pgpass: host:port:database:user:password.
	{name: "credentials_file", scan: scanPgpass},
	// ddd-dd-dddd is nine digits in a row as longestChain counts them.
	{name: "ssn", scan: scanSSN, digits: 9, chain: 9},
	{name: "phone", scan: scanIntlPhones, digits: 8},
	// (415) 555-0199 has seven digits in a row, 415-555-0199 ten.
	{name: "phone", scan: scanParenPhones, digits: 10, chain: 7},
	{name: "phone", scan: scanDashPhones, digits: 10, chain: 10},
}

// backN moves n bytes back from where the keyword was found.
func backN(n int) func(string, int) int {
	return func(s string, at int) int { return max(0, at-n) }
}

// backHex moves back over at most n hex digits.
func backHex(n int) func(string, int) int {
	return func(s string, at int) int {
		a := at
		for a > 0 && at-a < n && isHex(s[a-1]) {
			a--
		}
		return a
	}
}

// backDigits moves back over digits.
func backDigits(s string, at int) int {
	for at > 0 && isDigit(s[at-1]) {
		at--
	}
	return at
}

// azureSecretStart: the three bytes before the digit and Q~ are what a
// client secret starts with, and the Q is upper case.
func azureSecretStart(s string, at, pos int) bool {
	if pos-at != 3 || pos+2 >= len(s) || s[pos+1] != 'Q' || at > 0 && (isAlnum(s[at-1]) || s[at-1] == '_') {
		return false
	}
	for i := at; i < pos; i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '~' && c != '.' {
			return false
		}
	}
	return true
}

// spaceAfterWord: machine or default, then a blank.
func spaceAfterWord(s string, at, _ int) bool {
	j := at
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	return j < len(s) && reSpace(s[j])
}

// wordEdge: s[i] cannot continue a token (or i is an end of s).
func wordEdge(s string, i int) bool {
	return i < 0 || i >= len(s) || !isAlnum(s[i]) && s[i] != '_'
}

// scanSIDs finds Twilio SIDs: SK or AC, then 32 hex digits, a word.
func scanSIDs(s string, id int, dst []span) []span {
	for _, p := range [...]string{"SK", "AC"} {
		for i := 0; ; {
			k := strings.Index(s[i:], p)
			if k < 0 {
				break
			}
			a := i + k
			b := a + 2 + 32
			i = a + 2
			if b > len(s) || !wordEdge(s, a-1) || !wordEdge(s, b) {
				continue
			}
			ok := true
			for j := a + 2; j < b; j++ {
				if !isHex(s[j]) {
					ok = false
					break
				}
			}
			if ok && randomish(s[a+2:b]) {
				dst = append(dst, span{a, b, id})
				i = b
			}
		}
	}
	return dst
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// scanDiscord finds bot tokens: 24 to 28 base64url characters starting
// with M, N or O (the bot's id, encoded), a dot, 6 or 7, a dot, 27 to 40.
func scanDiscord(s string, id int, dst []span) []span {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '.')
		if k < 0 {
			return dst
		}
		dot := i + k
		i = dot + 1
		a := dot
		for a > 0 && dot-a <= 28 && isB64URL(s[a-1]) {
			a--
		}
		if n := dot - a; n < 24 || n > 28 || !wordEdge(s, a-1) || s[a] < 'M' || s[a] > 'O' {
			continue
		}
		m := dot + 1
		for m < len(s) && m-dot <= 8 && isB64URL(s[m]) {
			m++
		}
		if n := m - dot - 1; n < 6 || n > 7 || m >= len(s) || s[m] != '.' {
			continue
		}
		b := m + 1
		for b < len(s) && b-m <= 41 && isB64URL(s[b]) {
			b++
		}
		if n := b - m - 1; n < 27 || n > 40 || !wordEdge(s, b) || !randomish(s[m+1:b]) {
			continue
		}
		dst = append(dst, span{a, b, id})
		i = b
	}
}

// scanPgpass finds .pgpass lines: host:port:database:user:password, each
// field without blanks, the host a name, an address or *, the port digits
// or *; the password (the rest of the word, which may hold colons) goes.
// Whatever precedes the host (a parenthesis, a quote) does not matter.
func scanPgpass(s string, id int, dst []span) []span {
	if strings.Count(s, ":") < 4 {
		return dst
	}
	for i := 0; ; {
		k := strings.IndexByte(s[i:], ':')
		if k < 0 {
			return dst
		}
		c1 := i + k
		i = c1 + 1
		if c1+1 >= len(s) || !isDigit(s[c1+1]) && s[c1+1] != '*' {
			continue // no port
		}
		// The host: back over the bytes of a host name.
		a := c1
		for a > 0 && isHostByte(s[a-1]) {
			a--
		}
		if a == c1 {
			continue
		}
		if host := s[a:c1]; host != "*" && !pgpassHost(host) {
			continue
		}
		// The port.
		p := c1 + 1
		for p < len(s) && isDigit(s[p]) {
			p++
		}
		if p == c1+1 && p < len(s) && s[p] == '*' {
			p++
		}
		if p == c1+1 || p-c1-1 > 5 || p >= len(s) || s[p] != ':' {
			continue
		}
		// Database and user: non-empty, without blanks.
		d := p + 1
		for d < len(s) && pgpassField(s[d]) {
			d++
		}
		if d == p+1 || d >= len(s) || s[d] != ':' {
			continue
		}
		u := d + 1
		for u < len(s) && pgpassField(s[u]) {
			u++
		}
		if u == d+1 || u >= len(s) || s[u] != ':' {
			continue
		}
		b := u + 1
		for b < len(s) && !pgpassEdge(s[b]) {
			b++
		}
		if b-u-1 < 1 || strings.HasPrefix(s[u+1:], marker) {
			continue
		}
		dst = append(dst, span{u + 1, b, id})
		i = b
	}
}

func isHostByte(c byte) bool { return isAlnum(c) || c == '.' || c == '-' || c == '*' || c == '_' }

// pgpassHost: a host name with a dot (a domain, an IPv4 address) or with a
// letter that is no hex digit (localhost, db-main); not a group of a MAC or
// an IPv6 address.
func pgpassHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c == '.' || isLetter(c) && !isHex(c) {
			return true
		}
	}
	return false
}

// pgpassEdge ends a line's word: a blank, a quote, a backslash (an escape
// in JSON text), or the end of a list.
func pgpassEdge(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '\\' || c == ',' || c == ';'
}

func pgpassField(c byte) bool { return !pgpassEdge(c) && c != ':' }

// scanSSN finds US social security numbers written ddd-dd-dddd, as words,
// without the numbers the SSA never issues: area 000, 666 or 900-999,
// group 00, serial 0000.
func scanSSN(s string, id int, dst []span) []span {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '-')
		if k < 0 {
			return dst
		}
		d := i + k
		i = d + 1
		a, b := d-3, d+8
		if a < 0 || b > len(s) || s[d+3] != '-' || !allDigits(s[a:d]) || !allDigits(s[d+1:d+3]) || !allDigits(s[d+4:b]) {
			continue
		}
		if !numberEdge(s, a-1, -1) || !numberEdge(s, b, 1) {
			continue
		}
		area, group, serial := s[a:d], s[d+1:d+3], s[d+4:b]
		if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
			continue
		}
		dst = append(dst, span{a, b, id})
		i = b
	}
}

// numberEdge: s[i] does not continue a number written with dashes, dots or
// plus signs (dir -1: before it, 1: after it): not a letter, digit or _,
// and not a - . + / joined to another digit.
func numberEdge(s string, i, dir int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	c := s[i]
	if isAlnum(c) || c == '_' {
		return false
	}
	if c == '-' || c == '.' || c == '+' || c == '/' || c == ':' {
		j := i + dir
		if dir < 0 && c == '+' {
			return false // +123-45-6789
		}
		return j < 0 || j >= len(s) || !isAlnum(s[j])
	}
	return true
}

// Phone numbers. Three shapes, each a whole word:
//
//   - international: + and a country code, then digits in groups joined by
//     single blanks, dashes or dots (one group may be in parentheses),
//     8 to 15 digits in all (E.164), or 10 to 15 unbroken;
//   - North American: (415) 555-0199, 415-555-0199, 1-415-555-0199, the
//     area code and the exchange not starting with 0 or 1;
//
// Anything else with digits (dates, versions, order numbers, ids) is not a
// phone number.
func scanIntlPhones(s string, id int, dst []span) []span {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '+')
		if k < 0 {
			return dst
		}
		a := i + k
		i = a + 1
		if a > 0 && phoneGlue(s[a-1]) {
			continue
		}
		if b := intlPhone(s, a); b > 0 {
			dst = append(dst, span{a, b, id})
			i = b
		}
	}
}

// scanParenPhones finds North American numbers written (415) 555-0199.
func scanParenPhones(s string, id int, dst []span) []span {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '(')
		if k < 0 {
			break
		}
		a := i + k
		i = a + 1
		if a > 0 && phoneGlue(s[a-1]) {
			continue
		}
		if b := nanpPhone(s, a); b > 0 {
			dst = append(dst, span{a, b, id})
			i = b
		}
	}
	return dst
}

// scanDashPhones finds North American numbers written 415-555-0199 or
// 1-415-555-0199: at three digits (or 1) before a dash.
func scanDashPhones(s string, id int, dst []span) []span {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '-')
		if k < 0 {
			break
		}
		d := i + k
		i = d + 1
		a := d - 3
		if d >= 1 && s[d-1] == '1' && (d == 1 || !phoneGlue(s[d-2])) {
			a = d - 1 // 1-415-555-0199
		} else if a < 0 || !isDigit(s[a]) || !isDigit(s[a+1]) || !isDigit(s[a+2]) || a > 0 && phoneGlue(s[a-1]) {
			continue
		}
		if b := nanpPhone(s, a); b > 0 {
			dst = append(dst, span{a, b, id})
			i = b
		}
	}
	return dst
}

// phoneGlue: a byte before a number that makes it part of something else.
func phoneGlue(c byte) bool {
	return isAlnum(c) || c == '_' || c == '.' || c == '-' || c == '+' || c == '/' || c == '\\' || c == '#' || c == '$' || c == '%' || c == ','
}

// intlPhone returns the end of an international number starting at the +
// at s[i], or 0.
func intlPhone(s string, i int) int {
	j := i + 1
	if j >= len(s) || s[j] < '1' || s[j] > '9' {
		return 0
	}
	digits, groups, paren := 0, 0, false
	var sep byte // the separator of the groups after the country code
	for {
		open := false
		if j < len(s) && s[j] == '(' && !paren && groups > 0 {
			open, paren = true, true
			j++
		}
		g := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		n := j - g
		// One digit is a group only right after the country code
		// (+33 1 23 45 67 89) or in parentheses.
		if n == 0 || groups >= 2 && n < 2 && !open {
			return 0
		}
		digits += n
		groups++
		if open {
			if j >= len(s) || s[j] != ')' {
				return 0
			}
			j++
			if j < len(s) && isDigit(s[j]) {
				continue // +1 (415)5550199
			}
		}
		if j+1 < len(s) && (s[j] == ' ' || s[j] == '-' || s[j] == '.') && (isDigit(s[j+1]) || s[j+1] == '(' && !paren) {
			switch {
			case groups == 1 || s[j-1] == ')':
			case sep == 0:
				sep = s[j]
			case s[j] != sep:
				return 0
			}
			j++
			continue
		}
		break
	}
	if digits > 15 || digits < 8 || groups == 1 && digits < 10 || !numberEdge(s, j, 1) {
		return 0
	}
	return j
}

// nanpPhone returns the end of a North American number starting at s[i],
// or 0.
func nanpPhone(s string, i int) int {
	j := i
	if s[j] == '(' {
		// (415) 555-0199
		if j+5 >= len(s) || !nxx(s, j+1) || s[j+4] != ')' {
			return 0
		}
		j += 5
		if j < len(s) && s[j] == ' ' {
			j++
		}
		if j+8 > len(s) || !nxx(s, j) || s[j+3] != '-' && s[j+3] != '.' && s[j+3] != ' ' || !allDigits(s[j+4:j+8]) {
			return 0
		}
		j += 8
	} else {
		if s[j] == '1' && j+1 < len(s) && s[j+1] == '-' {
			j += 2 // 1-415-555-0199
		}
		if j+12 > len(s) || !nxx(s, j) || !nxx(s, j+4) || !allDigits(s[j+8:j+12]) {
			return 0
		}
		if s[j+3] != '-' || s[j+7] != '-' {
			return 0
		}
		j += 12
	}
	if !numberEdge(s, j, 1) {
		return 0
	}
	return j
}

// nxx: three digits at s[i:], the first not 0 or 1.
func nxx(s string, i int) bool {
	return i+3 <= len(s) && s[i] >= '2' && s[i] <= '9' && isDigit(s[i+1]) && isDigit(s[i+2])
}
