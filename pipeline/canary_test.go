package pipeline_test

// The canary test of issue 5 (redaction): inputs in every supported format
// are generated with thousands of distinct random secrets planted wherever a
// secret can hide (headers, URLs, bodies, error messages and data, tool
// arguments and results, SSE events, notifications, stdio frames and stderr,
// OTLP attributes, Inspector client errors, garbage lines and bad values that
// end up in the quarantine table and in log lines). The inputs are ingested
// (merge off, then on), every value of every column of both tables, every
// byte of every output file, every logged line and the run summary are read
// back, and the test fails if any canary, any encoding of it that was
// planted, or any 12-16 character fragment of its random part survives.
// Issue 13 added the key prefixes of more providers (Groq, DigitalOcean,
// Databricks, AI, cloud, payment and messaging services), the Twilio auth
// token, credential-file lines (.pgpass, netrc, e-mail:password, and
// name<TAB>password in files), phone numbers and SSNs, and credentials
// files in the walked directory (by name and by shape).
//
// MCPTRACE_CANARY_SEED=<n> replays a run (the seed is logged);
// MCPTRACE_CANARY_ALL=1 lists every leak, not only a few examples.

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"

	"mcptrace/pipeline"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Detector kinds: one per detector the issue names (assignments split by
// keyword, cards by how the digits are grouped), plus opaque session ids,
// which only the policy (pseudonyms) can protect.
const (
	cnKBearer     = "bearer"
	cnKBasic      = "basic_auth"
	cnKJWT        = "jwt"
	cnKAWSKey     = "aws_access_key"
	cnKAWSSecret  = "aws_secret_key"
	cnKGCP        = "gcp_api_key"
	cnKAzure      = "azure_account_key"
	cnKGitHub     = "github_token"
	cnKGitHubPAT  = "github_pat"
	cnKGitLab     = "gitlab_token"
	cnKSlack      = "slack_token"
	cnKStripe     = "stripe_key"
	cnKSKKey      = "sk_api_key"
	cnKPEM        = "private_key"
	cnKPassword   = "password_assignment"
	cnKToken      = "token_assignment"
	cnKSecret     = "secret_assignment"
	cnKEmail      = "email"
	cnKCard       = "card"
	cnKCardSpaced = "card_spaced"
	cnKCardDashed = "card_dashed"
	cnKSession    = "session_id"
	// Issue 13: more key prefixes, the Twilio auth token, credential-file
	// lines and personal data.
	cnKGroq       = "groq_key"
	cnKDO         = "digitalocean_token"
	cnKDatabricks = "databricks_token"
	cnKAIKey      = "ai_api_key"
	cnKCloud      = "cloud_token"
	cnKPayment    = "payment_key"
	cnKMessaging  = "messaging_token"
	cnKTwilioAuth = "twilio_auth_token"
	cnKPgpass     = "pgpass_line"
	cnKNetrc      = "netrc_line"
	cnKEmailPass  = "email_password"
	cnKPhone      = "phone"
	cnKSSN        = "ssn"
	cnKTabPair    = "name_tab_password" // in files only: a tab in free text is not a credential
)

var (
	// Every detector, in free text that gives each its own context.
	cnKindsAll = []string{cnKBearer, cnKBasic, cnKJWT, cnKAWSKey, cnKAWSSecret, cnKGCP, cnKAzure, cnKGitHub, cnKGitHubPAT, cnKGitLab, cnKSlack,
		cnKStripe, cnKSKKey, cnKPEM, cnKPassword, cnKToken, cnKSecret, cnKEmail, cnKCard, cnKCardSpaced, cnKCardDashed,
		cnKGroq, cnKDO, cnKDatabricks, cnKAIKey, cnKCloud, cnKPayment, cnKMessaging, cnKTwilioAuth, cnKPgpass, cnKNetrc, cnKEmailPass,
		cnKPhone, cnKSSN}
	// The same cnWithout private keys: text that stays on one line.
	cnKindsLine = cnWithout(cnKindsAll, cnKPEM)
	// Bare values, placed where the container's name (a header, a query
	// parameter, a JSON key) says they are secret.
	cnKindsValue = []string{cnKBearer, cnKJWT, cnKAWSKey, cnKAWSSecret, cnKGCP, cnKAzure, cnKGitHub, cnKGitHubPAT, cnKGitLab, cnKSlack, cnKStripe,
		cnKSKKey, cnKPassword, cnKToken, cnKSecret, cnKGroq, cnKDO, cnKDatabricks, cnKAIKey, cnKCloud, cnKPayment, cnKMessaging}
	// Values recognisable by their shape alone.
	cnKindsShape = []string{cnKJWT, cnKAWSKey, cnKGCP, cnKGitHub, cnKGitHubPAT, cnKGitLab, cnKSlack, cnKStripe, cnKSKKey, cnKEmail, cnKCard,
		cnKCardSpaced, cnKCardDashed, cnKGroq, cnKDO, cnKDatabricks, cnKAIKey, cnKCloud, cnKPayment, cnKMessaging}
	// Credentials sent in an Authorization header.
	cnKindsAuth = []string{cnKBasic, cnKBearer, cnKJWT, cnKGitHub, cnKGitHubPAT, cnKGitLab, cnKSlack, cnKStripe, cnKSKKey, cnKGCP, cnKToken,
		cnKGroq, cnKAIKey, cnKDO, cnKDatabricks}
)

func cnWithout(list []string, drop string) []string {
	var out []string
	for _, k := range list {
		if k != drop {
			out = append(out, k)
		}
	}
	return out
}

const (
	csAlnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	csUpper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	csLower  = "abcdefghijklmnopqrstuvwxyz"
	csLowNum = "abcdefghijklmnopqrstuvwxyz0123456789"
	csHex    = "0123456789abcdef"
	csDigit  = "0123456789"
)

// cnCanary is one planted secret.
type cnCanary struct {
	id     int
	kind   string
	enc    string // how it was planted: "" (as is), "pct", "pct2", "b64"
	format string // input format (and part of it)
	place  string // where in the record
	secret string
	digits string   // cards: the digits alone
	cores  []string // the random parts: fragments of them must not survive either
	// needles: every text that must not appear in any output: the secret,
	// its planted encodings, decoded forms, and fragments of its random
	// parts. Each is at least cnKeyLen bytes.
	needles []string
}

func (c *cnCanary) label() string {
	k := c.kind
	if c.enc != "" {
		k += "+" + c.enc
	}
	return k
}

func (c *cnCanary) addNeedle(s string) {
	if len(s) < cnKeyLen {
		return
	}
	for _, n := range c.needles {
		if n == s {
			return
		}
	}
	c.needles = append(c.needles, s)
}

// addFragments adds the head and tail of a random part.
func (c *cnCanary) addFragments(core string) {
	switch {
	case len(core) >= 16:
		c.addNeedle(core[:16])
		c.addNeedle(core[len(core)-16:])
	case len(core) >= cnKeyLen:
		c.addNeedle(core)
	}
}

// cnSecret is a new canary and the ways it can be written.
type cnSecret struct {
	c    *cnCanary
	free string // in free text, with the context that makes it recognisable
	bare string // the value alone
}

type cnPlanter struct {
	rng    *rand.Rand
	list   []*cnCanary
	seen   map[string]bool
	cursor map[string]int
	format string
	place  string
	files  map[string][]byte // generated inputs, uncompressed
	gzip   map[string]bool   // written gzip-compressed
}

func cnNewPlanter(seed uint64) *cnPlanter {
	return &cnPlanter{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seen: map[string]bool{}, cursor: map[string]int{},
		files: map[string][]byte{}, gzip: map[string]bool{}}
}

func (p *cnPlanter) rs(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[p.rng.IntN(len(set))]
	}
	return string(b)
}

func (p *cnPlanter) randBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(p.rng.IntN(256))
	}
	return b
}

func (p *cnPlanter) oneOf(xs ...string) string { return xs[p.rng.IntN(len(xs))] }

// next counts calls per format and place (or per name): round robin over
// kinds, so every kind lands in every place.
func (p *cnPlanter) next(name string) int {
	k := p.format + "|" + p.place + "|" + name
	n := p.cursor[k]
	p.cursor[k]++
	return n
}

func (p *cnPlanter) pick(kinds []string) string { return kinds[p.next("kind")%len(kinds)] }

// newSecret makes a canary of the kind at the current format and place.
func (p *cnPlanter) newSecret(kind string) cnSecret {
	for {
		secret, free, bare, cores, extra, digits := p.make(kind)
		if p.seen[secret] {
			continue
		}
		p.seen[secret] = true
		c := &cnCanary{id: len(p.list), kind: kind, format: p.format, place: p.place, secret: secret, digits: digits, cores: cores}
		c.addNeedle(secret)
		for _, e := range extra {
			c.addNeedle(e)
		}
		for _, core := range cores {
			c.addFragments(core)
		}
		if digits != "" {
			c.addNeedle(digits)
		}
		p.list = append(p.list, c)
		return cnSecret{c: c, free: free, bare: bare}
	}
}

// make generates a secret of a kind: the secret, its free-text and bare
// forms, its random parts, other texts that give it away, and for cards the
// digits.
func (p *cnPlanter) make(kind string) (secret, free, bare string, cores, extra []string, digits string) {
	switch kind {
	case cnKBearer:
		tok := p.rs(csAlnum, 1) + p.rs(csAlnum+"-._~", 30+p.rng.IntN(16)) + p.rs(csAlnum, 1)
		return tok, p.oneOf("Authorization: Bearer ", "bearer ", "Bearer ") + tok, tok, []string{tok}, nil, ""
	case cnKBasic:
		user, pass := "svc-"+p.rs(csLower, 8), p.rs(csAlnum, 20)
		b := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		return b, p.oneOf("Authorization: Basic ", "Basic ") + b, b, []string{pass, b}, []string{user + ":" + pass}, ""
	case cnKJWT:
		hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"` + p.oneOf("HS256", "RS256", "ES256") + `","typ":"JWT"}`))
		iat := 1772000000 + p.rng.IntN(1000000)
		payload := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"%s","iss":"https://auth.%s.example","iat":%d,"exp":%d}`,
			p.rs(csAlnum, 16), p.rs(csLower, 6), iat, iat+3600)))
		sig := base64.RawURLEncoding.EncodeToString(p.randBytes(32))
		tok := hdr + "." + payload + "." + sig
		return tok, tok, tok, []string{sig, payload[12:]}, []string{payload}, ""
	case cnKAWSKey:
		k := p.oneOf("AKIA", "AKIA", "ASIA") + p.rs(csUpper, 16)
		return k, k, k, []string{k[4:]}, nil, ""
	case cnKAWSSecret:
		v := p.rs(csAlnum, 1) + p.rs(csAlnum+"+/", 38) + p.rs(csAlnum, 1)
		return v, p.oneOf("aws_secret_access_key=", "AWS_SECRET_ACCESS_KEY=", "aws_secret_access_key = ") + v, v, []string{v}, nil, ""
	case cnKGCP:
		k := "AIza" + p.rs(csAlnum+"-_", 35)
		return k, k, k, []string{k[4:]}, nil, ""
	case cnKAzure:
		key := base64.StdEncoding.EncodeToString(p.randBytes(64))
		free := "DefaultEndpointsProtocol=https;AccountName=st" + p.rs(csLowNum, 10) + ";AccountKey=" + key + ";EndpointSuffix=core.windows.net"
		return key, free, key, []string{key}, nil, ""
	case cnKGitHub:
		k := "ghp_" + p.rs(csAlnum, 36)
		return k, k, k, []string{k[4:]}, nil, ""
	case cnKGitHubPAT:
		a, b := p.rs(csAlnum, 22), p.rs(csAlnum, 59)
		k := "github_pat_" + a + "_" + b
		return k, k, k, []string{a, b}, nil, ""
	case cnKGitLab:
		r := p.rs(csAlnum, 1) + p.rs(csAlnum+"-_", 18) + p.rs(csAlnum, 1)
		k := "glpat-" + r
		return k, k, k, []string{r}, nil, ""
	case cnKSlack:
		a, b := p.rs(csDigit, 11)+"-"+p.rs(csDigit, 13), p.rs(csAlnum, 24)
		k := p.oneOf("xoxb-", "xoxp-") + a + "-" + b
		return k, k, k, []string{a, b}, nil, ""
	case cnKStripe:
		r := p.rs(csAlnum, 24)
		k := p.oneOf("sk_live_", "sk_live_", "rk_live_") + r
		return k, k, k, []string{r}, nil, ""
	case cnKSKKey:
		var r, k string
		if p.rng.IntN(2) == 0 {
			r = p.rs(csAlnum, 48)
			k = "sk-" + r
		} else {
			r = p.rs(csAlnum, 1) + p.rs(csAlnum+"-_", 62) + p.rs(csAlnum, 1)
			k = "sk-proj-" + r
		}
		return k, k, k, []string{r}, nil, ""
	case cnKPEM:
		typ := p.oneOf("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
		body := base64.StdEncoding.EncodeToString(p.randBytes(48 * (4 + p.rng.IntN(4))))
		var lines []string
		for len(body) > 0 {
			n := min(64, len(body))
			lines = append(lines, body[:n])
			body = body[n:]
		}
		block := "-----BEGIN " + typ + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + typ + "-----"
		return block, block, block, lines, lines, ""
	case cnKPassword, cnKToken, cnKSecret:
		var key string
		switch kind {
		case cnKPassword:
			key = p.oneOf("password", "passwd", "db_password", "PASSWORD", "pwd")
		case cnKToken:
			key = p.oneOf("token", "access_token", "refresh_token", "auth_token", "api_token")
		default:
			key = p.oneOf("secret", "client_secret", "app_secret", "SECRET", "webhook_secret")
		}
		v := p.rs(csAlnum, 2) + p.rs(csAlnum+"!*^", 20) + p.rs(csAlnum, 2)
		var free string
		switch p.rng.IntN(3) {
		case 0:
			free = key + "=" + v
		case 1:
			free = key + ": " + v
		default:
			free = `"` + key + `":"` + v + `"`
		}
		return v, free, v, []string{v}, nil, ""
	case cnKEmail:
		local := p.rs(csLower, 6) + "." + p.rs(csLowNum, 6)
		e := local + "@" + p.rs(csLower, 8) + "." + p.oneOf("com", "io", "org", "dev", "co.uk", "net")
		return e, e, e, []string{local}, nil, ""
	case cnKCard, cnKCardSpaced, cnKCardDashed:
		d := p.cardNumber()
		form := d
		switch kind {
		case cnKCardSpaced:
			form = cnGroupDigits(d, " ")
		case cnKCardDashed:
			form = cnGroupDigits(d, "-")
		}
		return form, form, form, []string{d}, nil, d
	case cnKGroq:
		r := p.rs(csAlnum, 52)
		return "gsk_" + r, "gsk_" + r, "gsk_" + r, []string{r}, nil, ""
	case cnKDO:
		r := p.rs(csHex, 64)
		k := p.oneOf("dop_v1_", "doo_v1_", "dor_v1_") + r
		return k, k, k, []string{r}, nil, ""
	case cnKDatabricks:
		r := p.rs(csHex, 32)
		k := "dapi" + r + p.oneOf("", "", "-2")
		return k, k, k, []string{r}, nil, ""
	case cnKAIKey:
		var pre, r string
		switch p.rng.IntN(5) {
		case 0:
			pre, r = "xai-", p.rs(csAlnum, 80)
		case 1:
			pre, r = "pplx-", p.rs(csAlnum, 48)
		case 2:
			pre, r = "r8_", p.rs(csAlnum, 37)
		case 3:
			pre, r = "nvapi-", p.rs(csAlnum, 64)
		default:
			pre, r = "tvly-", p.rs(csAlnum, 32)
		}
		return pre + r, pre + r, pre + r, []string{r}, nil, ""
	case cnKCloud:
		var pre, r string
		switch p.rng.IntN(4) {
		case 0:
			pre, r = "LTAI", p.rs(csAlnum, 20)
		case 1:
			pre, r = "GOCSPX-", p.rs(csAlnum, 28)
		case 2:
			pre, r = "sbp_", p.rs(csHex, 40)
		default:
			pre, r = "pul-", p.rs(csHex, 40)
		}
		return pre + r, pre + r, pre + r, []string{r}, nil, ""
	case cnKPayment:
		var k string
		var cores []string
		switch p.rng.IntN(4) {
		case 0:
			r := p.rs(csAlnum, 22)
			k, cores = "sq0atp-"+r, []string{r}
		case 1:
			a, b := p.rs(csLowNum, 16), p.rs(csHex, 32)
			k, cores = "access_token$production$"+a+"$"+b, []string{a, b}
		case 2:
			r := p.rs(csAlnum, 14)
			k, cores = "rzp_live_"+r, []string{r}
		default:
			r := p.rs(csAlnum, 60)
			k, cores = "EAAA"+r, []string{r}
		}
		return k, k, k, cores, nil, ""
	case cnKMessaging:
		var k string
		var cores []string
		switch p.rng.IntN(4) {
		case 0:
			r := p.rs(csHex, 32)
			k, cores = "SK"+r, []string{r}
		case 1:
			r := p.rs(csHex, 32)
			k, cores = "key-"+r, []string{r}
		case 2:
			r := p.rs(csAlnum, 33)
			k, cores = p.rs("123456789", 1)+p.rs(csDigit, 8)+":AA"+r, []string{r}
		default:
			id := base64.RawStdEncoding.EncodeToString([]byte("1" + p.rs(csDigit, 17)))
			a, b := p.rs(csAlnum, 6), p.rs(csAlnum, 38)
			k, cores = id+"."+a+"."+b, []string{b}
		}
		return k, k, k, cores, nil, ""
	case cnKTwilioAuth:
		r := p.rs(csHex, 32)
		return r, p.oneOf("Twilio auth token ", "auth token: ", "authToken ") + r, r, []string{r}, nil, ""
	case cnKPgpass, cnKNetrc, cnKEmailPass, cnKTabPair:
		pw := p.rs(csAlnum, 20)
		host := "db-" + p.rs(csLowNum, 6) + ".internal"
		user := p.rs(csLower, 7)
		var line string
		switch kind {
		case cnKPgpass:
			line = host + ":" + p.oneOf("5432", "6432", "*") + ":" + p.rs(csLower, 6) + ":" + user + ":" + pw
		case cnKNetrc:
			line = "machine " + host + " login " + user + " password " + pw
		case cnKEmailPass:
			line = user + "." + p.rs(csLowNum, 5) + "@" + p.rs(csLower, 7) + ".com:" + pw
		default:
			line = user + "\t" + pw
		}
		return pw, line, pw, []string{pw}, nil, ""
	case cnKPhone:
		nxx := func() string { return p.rs("23456789", 1) + p.rs(csDigit, 2) }
		var ph string
		switch p.rng.IntN(6) {
		case 0:
			ph = "+1 " + nxx() + "-" + nxx() + "-" + p.rs(csDigit, 4)
		case 1:
			ph = "+1" + nxx() + nxx() + p.rs(csDigit, 4)
		case 2:
			ph = "(" + nxx() + ") " + nxx() + "-" + p.rs(csDigit, 4)
		case 3:
			ph = "+44 20 " + p.rs(csDigit, 4) + " " + p.rs(csDigit, 4)
		case 4:
			ph = "+33 " + p.rs("123456789", 1) + " " + p.rs(csDigit, 2) + " " + p.rs(csDigit, 2) + " " + p.rs(csDigit, 2) + " " + p.rs(csDigit, 2)
		default:
			ph = "+49 30 " + p.rs(csDigit, 8)
		}
		return ph, p.oneOf("phone ", "call ", "mobile: ") + ph, ph, nil, nil, ""
	case cnKSSN:
		area := 1 + p.rng.IntN(899)
		for area == 666 {
			area = 1 + p.rng.IntN(899)
		}
		n := fmt.Sprintf("%03d-%02d-%04d", area, 1+p.rng.IntN(99), 1+p.rng.IntN(9999))
		return "SSN " + n, "SSN " + n, n, nil, nil, ""
	case cnKSession:
		if p.rng.IntN(2) == 0 {
			h := p.rs(csHex, 32)
			u := h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + h[16:20] + "-" + h[20:]
			return u, u, u, []string{u}, nil, ""
		}
		h := p.rs(csHex, 32)
		return h, h, h, []string{h}, nil, ""
	}
	panic("unknown kind " + kind)
}

// cardNumber returns a random number of 13 to 19 digits that passes Luhn.
func (p *cnPlanter) cardNumber() string {
	type brand struct {
		prefix string
		lens   []int
	}
	brands := []brand{{"4", []int{13, 16, 19}}, {"5" + string(rune('1'+p.rng.IntN(5))), []int{16}}, {"34", []int{15}}, {"37", []int{15}},
		{"6011", []int{16}}, {"35", []int{16, 17, 18, 19}}, {"62", []int{16, 17, 18, 19}}, {"", []int{13, 14, 15, 16, 17, 18, 19}}}
	b := brands[p.rng.IntN(len(brands))]
	n := b.lens[p.rng.IntN(len(b.lens))]
	d := b.prefix
	if d == "" {
		d = string(rune('1' + p.rng.IntN(9)))
	}
	d += p.rs(csDigit, n-1-len(d))
	d += string(cnLuhnCheckDigit(d))
	if !cnLuhnValid(d) {
		panic("luhn " + d)
	}
	return d
}

func cnLuhnCheckDigit(payload string) byte {
	sum, dbl := 0, true
	for i := len(payload) - 1; i >= 0; i-- {
		x := int(payload[i] - '0')
		if dbl {
			if x *= 2; x > 9 {
				x -= 9
			}
		}
		sum += x
		dbl = !dbl
	}
	return byte('0' + (10-sum%10)%10)
}

func cnLuhnValid(d string) bool {
	return len(d) > 1 && cnLuhnCheckDigit(d[:len(d)-1]) == d[len(d)-1]
}

// cnGroupDigits writes a card number as printed: 4-6-5 for 15 digits, else
// groups of four.
func cnGroupDigits(d, sep string) string {
	var groups []int
	if len(d) == 15 {
		groups = []int{4, 6, 5}
	} else {
		for rem := len(d); rem > 0; rem -= 4 {
			groups = append(groups, min(4, rem))
		}
	}
	var parts []string
	for _, g := range groups {
		parts = append(parts, d[:g])
		d = d[g:]
	}
	return strings.Join(parts, sep)
}

var cnSentences = []string{
	"upstream call failed: %s",
	"could not authenticate (%s); check the server configuration",
	"request rejected by the gateway, credentials were %s",
	"Traceback (most recent call last): ValueError: bad config %s",
	"%s",
	"error while calling the billing API: %s; giving up after 3 retries",
	"user asked: please use %s for the deployment",
}

// free plants a secret of one of kinds in a sentence.
func (p *cnPlanter) free(kinds []string) string {
	s := p.newSecret(p.pick(kinds))
	return fmt.Sprintf(cnSentences[p.rng.IntN(len(cnSentences))], s.free)
}

// freeRaw plants a secret in its free-text form alone.
func (p *cnPlanter) freeRaw(kinds []string) string { return p.newSecret(p.pick(kinds)).free }

// bare plants a secret as a bare value.
func (p *cnPlanter) bare(kinds []string) string { return p.newSecret(p.pick(kinds)).bare }

// ctxKey names a JSON key or parameter that marks a value of the kind as
// secret (or, for kinds recognisable alone, anything).
func (p *cnPlanter) ctxKey(kind string) string {
	switch kind {
	case cnKBearer, cnKToken:
		return p.oneOf("access_token", "token", "auth_token")
	case cnKAWSSecret:
		return "aws_secret_access_key"
	case cnKAzure:
		return p.oneOf("account_key", "storage_key")
	case cnKPassword:
		return p.oneOf("password", "db_password")
	case cnKSecret:
		return p.oneOf("client_secret", "secret")
	}
	return p.oneOf("api_key", "q", "value", "ref", "cursor")
}

// ctxPair plants a bare value under a name that marks it secret.
func (p *cnPlanter) ctxPair(kinds []string) (string, string) {
	k := p.pick(kinds)
	s := p.newSecret(k)
	return p.ctxKey(k), s.bare
}

// authValue plants an Authorization header value.
func (p *cnPlanter) authValue() string {
	k := p.pick(cnKindsAuth)
	s := p.newSecret(k)
	if k == cnKBasic {
		return "Basic " + s.bare
	}
	return "Bearer " + s.bare
}

// pctSince records that the text holding the canaries made since mark
// was planted percent-encoded (times levels deep) and returns it so.
func (p *cnPlanter) pctSince(text string, mark, times int) string {
	enc := text
	for i := 0; i < times; i++ {
		enc = url.QueryEscape(enc)
	}
	if enc == text {
		return text
	}
	for _, c := range p.list[mark:] {
		c.enc = "pct"
		if times > 1 {
			c.enc = "pct" + strconv.Itoa(times)
		}
		for _, s := range append([]string{c.secret}, c.cores...) {
			e := s
			for i := 0; i < times; i++ {
				e = url.QueryEscape(e)
				if e != s {
					c.addNeedle(e)
					c.addFragments(e)
				}
			}
		}
	}
	return enc
}

// b64Since returns text base64-encoded and gives the canaries made since
// mark the stretches of the encoding that their random parts determine.
func (p *cnPlanter) b64Since(text string, mark int, enc *base64.Encoding, label string) string {
	out := enc.EncodeToString([]byte(text))
	for _, c := range p.list[mark:] {
		if label != "" {
			c.enc = label
		}
		c.addNeedle(out)
		for _, s := range append([]string{c.secret}, c.cores...) {
			off := strings.Index(text, s)
			if off < 0 {
				continue
			}
			start, end := (off+2)/3*4, (off+len(s))/3*4
			if end > len(out) {
				end = len(out)
			}
			if end-start >= cnKeyLen {
				w := out[start:end]
				c.addNeedle(w)
				c.addFragments(w)
			}
		}
	}
	return out
}

// b64Free plants a secret in free text, base64-wrapped.
func (p *cnPlanter) b64Free(kinds []string) string {
	mark := len(p.list)
	text := p.freeRaw(kinds)
	return p.b64Since(text, mark, base64.StdEncoding, "b64")
}

// queryPair plants a secret as a query parameter, percent-encoded.
func (p *cnPlanter) queryPair() string {
	mark := len(p.list)
	k := p.pick(cnKindsValue)
	s := p.newSecret(k)
	name := p.ctxKey(k)
	if k == cnKBearer || k == cnKToken {
		name = p.oneOf("access_token", "token", "sig")
	}
	return name + "=" + p.pctSince(s.bare, mark, 1)
}

// mcpURL plants secrets in a request URL: query parameters (plain,
// percent-encoded, doubly encoded, base64), or the path.
func (p *cnPlanter) mcpURL(host string) string {
	base := "https://" + host + "/mcp"
	switch p.next("url") % 7 {
	case 0:
		p.place = "url:query"
		return base + "?" + p.queryPair()
	case 1:
		p.place = "url:query-sig"
		mark := len(p.list)
		v := p.bare(cnKindsValue)
		return base + "?sv=2024-08-04&se=2026-04-01T00%3A00%3A00Z&sp=r&sig=" + p.pctSince(v, mark, 1)
	case 2:
		p.place = "url:path"
		return "https://" + host + "/" + p.bare(cnWithoutAll(cnKindsShape, cnKEmail, cnKCard, cnKCardSpaced, cnKCardDashed)) + "/mcp"
	case 3:
		p.place = "url:query-pct2"
		mark := len(p.list)
		inner := "https://app.example.com/oauth/callback?" + p.queryPair()
		return base + "?redirect_uri=" + p.pctSince(inner, mark, 1)
	case 4:
		p.place = "url:query-shape"
		mark := len(p.list)
		v := p.bare([]string{cnKEmail, cnKCard, cnKCardSpaced, cnKCardDashed, cnKJWT, cnKGitHub})
		return base + "?user=" + p.pctSince(v, mark, 1) + "&cursor=2"
	case 5:
		p.place = "url:query-b64"
		mark := len(p.list)
		state := `{"return_to":"/home","` + p.oneOf("token", "password", "secret") + `":"` + p.bare(cnKindsValue) + `"}`
		return base + "?state=" + p.b64Since(state, mark, base64.RawURLEncoding, "b64")
	default:
		p.place = "url:query-pct"
		mark := len(p.list)
		v := p.freeRaw(cnKindsLine)
		return base + "?conn=" + p.pctSince(v, mark, 1)
	}
}

// cnWithoutAll is cnWithout for several kinds.
func cnWithoutAll(list []string, drop ...string) []string {
	for _, d := range drop {
		list = cnWithout(list, d)
	}
	return list
}

// ---- JSON-RPC bodies ----

func cnJSON(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func cnJSONIndent(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return b.String()
}

var cnTools = []string{"search_docs", "create_ticket", "run_query", "deploy", "send_email", "read_file"}

// arguments plants secrets in tool arguments.
func (p *cnPlanter) arguments() map[string]any {
	p.place = "tool:arguments"
	args := map[string]any{"query": p.free(cnKindsAll)}
	k, v := p.ctxPair(cnKindsValue)
	args[k] = v
	args["options"] = map[string]any{"note": p.free(cnKindsLine), "limit": 10}
	if p.next("b64")%3 == 0 {
		p.place = "tool:arguments-b64"
		args["blob"] = p.b64Free(cnKindsLine)
	}
	return args
}

func (p *cnPlanter) toolsCall(id any) string {
	args := p.arguments()
	return cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": cnTools[p.rng.IntN(len(cnTools))], "arguments": args}})
}

// rpcError plants secrets in a JSON-RPC error: message and data.
func (p *cnPlanter) rpcError(id any) string {
	p.place = "jsonrpc:error.message"
	msg := p.free(cnKindsAll)
	var data any
	switch p.next("data") % 3 {
	case 0:
		p.place = "jsonrpc:error.data"
		k, v := p.ctxPair(cnKindsValue)
		data = map[string]any{"detail": p.free(cnKindsLine), k: v}
	case 1:
		p.place = "jsonrpc:error.data"
		data = p.free(cnKindsAll)
	default:
		p.place = "jsonrpc:error.data-b64"
		data = map[string]any{"context": p.b64Free(cnKindsLine)}
	}
	code := []int{-32602, -32603, -32000, -32001, -32002}[p.rng.IntN(5)]
	return cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg, "data": data}})
}

// toolResult plants secrets in a tool result's text (and structured content).
func (p *cnPlanter) toolResult(id any, isErr bool) string {
	p.place = "tool:result-text"
	if isErr {
		p.place = "tool:result-error-text"
	}
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": p.free(cnKindsAll)}}, "isError": isErr}
	if !isErr && p.next("structured")%2 == 0 {
		p.place = "tool:structuredContent"
		k, v := p.ctxPair(cnKindsValue)
		res["structuredContent"] = map[string]any{k: v, "status": "ok"}
	}
	return cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
}

// sseBody plants secrets in the events of a POST's response stream.
func (p *cnPlanter) sseBody(id any) string {
	p.place = "sse:notification"
	prog := cnJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
		"params": map[string]any{"progressToken": id, "progress": 1, "total": 2, "message": p.free(cnKindsLine)}})
	logm := cnJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
		"params": map[string]any{"level": "error", "logger": "auth", "data": p.free(cnKindsAll)}})
	p.place = "sse:data"
	var final string
	if p.next("sse")%2 == 0 {
		final = cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": p.free(cnKindsAll)}})
	} else {
		final = cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": p.free(cnKindsAll)}}, "isError": true}})
	}
	return "event: message\nid: 1\ndata: " + prog + "\n\nevent: message\nid: 2\ndata: " + logm + "\n\n: keepalive\n\nevent: message\nid: 3\ndata: " + final + "\n\n"
}

func cnInitRequest(id any) string {
	return cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "canary-agent", "version": "1.0.0"}}})
}

func cnInitResult(id any) string {
	return cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "canary-server", "version": "2.0.0"}}})
}

const cnInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// ---- HTTP transactions, shared by the wire log, HAR and Inspector ----

type cnTx struct {
	method, url       string
	reqH              [][2]string
	reqBody           *string
	status            int // 0: no response
	respH             [][2]string
	ctype             string
	respBody          *string
	streamEnd         string
	failKind, failMsg string
	id                int
	v                 int
	respMark          int // first canary planted in the response
}

func cnStrp(s string) *string { return &s }

// initTx is an initialize POST: the response assigns the session id.
func (p *cnPlanter) initTx(host, sid string) cnTx {
	p.place = "header:authorization"
	tx := cnTx{method: "POST", url: "https://" + host + "/mcp", reqBody: cnStrp(cnInitRequest(1)), status: 200, ctype: "application/json", id: 1}
	tx.reqH = [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}, {"Authorization", p.authValue()}}
	tx.respMark = len(p.list)
	p.place = "header:set-cookie"
	tx.respH = [][2]string{{"Content-Type", "application/json"}, {"Mcp-Session-Id", sid},
		{"Set-Cookie", "sid=" + p.bare(cnKindsValue) + "; Path=/; HttpOnly; Secure; SameSite=Lax"}}
	tx.respBody = cnStrp(cnInitResult(1))
	return tx
}

func initializedTx(host, sid string) cnTx {
	return cnTx{method: "POST", url: "https://" + host + "/mcp", reqBody: cnStrp(cnInitialized), status: 202,
		reqH: [][2]string{{"Content-Type", "application/json"}, {"Mcp-Session-Id", sid}}, respBody: cnStrp("")}
}

// callTx is a tools/call POST with secrets in its headers, URL, arguments
// and (by variant v) its response.
func (p *cnPlanter) callTx(host string, id int, sid string, v int) cnTx {
	tx := cnTx{method: "POST", id: id, v: v}
	tx.url = p.mcpURL(host)
	p.place = "header:authorization"
	tx.reqH = [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}, {"Authorization", p.authValue()}}
	if id%2 == 0 {
		p.place = "header:x-api-key"
		tx.reqH = append(tx.reqH, [2]string{"X-Api-Key", p.bare(cnKindsValue)})
	}
	if id%3 == 0 {
		p.place = "header:cookie"
		tx.reqH = append(tx.reqH, [2]string{"Cookie", "session=" + p.bare(cnKindsValue) + "; theme=dark; csrftoken=" + p.bare(cnKindsValue)})
	}
	if sid != "" {
		tx.reqH = append(tx.reqH, [2]string{"Mcp-Session-Id", sid}, [2]string{"MCP-Protocol-Version", "2025-11-25"})
	}
	tx.reqBody = cnStrp(p.toolsCall(id))
	tx.respMark = len(p.list)
	ctJSON := [2]string{"Content-Type", "application/json"}
	switch v % 8 {
	case 0:
		tx.status, tx.ctype, tx.respH = 200, "application/json", [][2]string{ctJSON}
		tx.respBody = cnStrp(p.rpcError(id))
	case 1:
		tx.status, tx.ctype, tx.respH = 200, "application/json", [][2]string{ctJSON}
		tx.respBody = cnStrp(p.toolResult(id, true))
	case 2:
		tx.status, tx.ctype, tx.respH = 200, "application/json", [][2]string{ctJSON}
		tx.respBody = cnStrp(p.toolResult(id, false))
	case 3:
		p.place = "header:set-cookie"
		tx.status, tx.ctype, tx.streamEnd = 200, "text/event-stream", "complete"
		tx.respH = [][2]string{{"Content-Type", "text/event-stream"}, {"Set-Cookie", "AWSALB=" + p.bare(cnKindsValue) + "; Path=/"}}
		tx.respBody = cnStrp(p.sseBody(id))
	case 4:
		p.place = "header:www-authenticate"
		tx.status, tx.ctype = 401, "application/json"
		tx.respH = [][2]string{ctJSON, {"WWW-Authenticate", `Bearer realm="mcp", error="invalid_token", error_description="token ` +
			p.bare(cnKindsShape) + ` is expired"`}}
		p.place = "jsonrpc:error.message"
		tx.respBody = cnStrp(cnJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32001, "message": p.free(cnKindsAll)}}))
	case 5:
		p.place = "http:non-json-body"
		tx.status, tx.ctype = 500, "text/plain"
		tx.respH = [][2]string{{"Content-Type", "text/plain"}}
		tx.respBody = cnStrp("Internal Server Error: " + p.free(cnKindsAll))
	case 6:
		p.place = "failure:message"
		tx.failKind, tx.failMsg = "reset", "read ECONNRESET after sending "+p.free(cnKindsLine)
	case 7:
		p.place = "header:set-cookie"
		tx.status, tx.ctype = 200, "application/json"
		tx.respH = [][2]string{ctJSON, {"Set-Cookie", "refresh=" + p.bare(cnKindsValue) + "; HttpOnly"}}
		// no body recorded: the server's log has it (merge)
	}
	return tx
}

// serverView is the server's record of a client's transaction: the same
// request; for a response the client did not record, or never got, what the
// server sent.
func (p *cnPlanter) serverView(tx cnTx) cnTx {
	s := tx
	switch tx.v % 8 {
	case 6:
		s.failKind, s.failMsg = "", ""
		s.status, s.ctype, s.respH = 200, "application/json", [][2]string{{"Content-Type", "application/json"}}
		s.respBody = cnStrp(p.toolResult(tx.id, false))
	case 7:
		s.respBody = cnStrp(p.rpcError(tx.id))
	}
	return s
}

// ---- wire log ----

var cnT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const cnWireTime = "2006-01-02T15:04:05.000Z"

func cnHeaderMap(hs [][2]string) map[string]any {
	if len(hs) == 0 {
		return nil
	}
	m := map[string]any{}
	for _, h := range hs {
		switch old := m[h[0]].(type) {
		case nil:
			m[h[0]] = h[1]
		case string:
			m[h[0]] = []string{old, h[1]}
		case []string:
			m[h[0]] = append(old, h[1])
		}
	}
	return m
}

func cnWireHTTP(side string, ts time.Time, dur time.Duration, conn, sid, transport string, tx cnTx) string {
	rec := schema.WireRecord{Format: schema.WireFormat, Time: ts.Format(cnWireTime), EndTime: ts.Add(dur).Format(cnWireTime), Side: schema.Side(side),
		Transport: schema.Transport(transport), Connection: conn, SessionID: sid, ProtocolVersion: "2025-11-25",
		HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: tx.method, URL: tx.url, Headers: cnHeaderMap(tx.reqH), Body: tx.reqBody}}}
	if tx.status > 0 {
		rec.HTTP.Response = &schema.WireResponse{Status: tx.status, Headers: cnHeaderMap(tx.respH), ContentType: tx.ctype, Body: tx.respBody, StreamEnd: tx.streamEnd}
	} else {
		rec.HTTP.Failure = &schema.WireFailure{Kind: tx.failKind, Message: tx.failMsg}
	}
	return cnJSON(rec)
}

func cnWireStdio(ts time.Time, conn, dir, line string) string {
	return cnJSON(schema.WireRecord{Format: schema.WireFormat, Time: ts.Format(cnWireTime), Side: schema.SideClient, Transport: schema.TransportStdio,
		Connection: conn, Stdio: &schema.WireStdio{Direction: dir, Line: line}})
}

// sessionID plants a session id (opaque, or a JWT).
func (p *cnPlanter) sessionID() string {
	p.place = "header:mcp-session-id"
	if p.next("sid")%3 == 2 {
		return p.newSecret(cnKJWT).bare
	}
	return p.newSecret(cnKSession).bare
}

const (
	cnWireSessions = 20
	cnWireCalls    = 10
)

func (p *cnPlanter) genWire() {
	var cli, srv []string
	host := "mcp.canary.example"
	for s := 0; s < cnWireSessions; s++ {
		p.format = "wire/http"
		sid := p.sessionID()
		conn := fmt.Sprintf("agent-%02d", s)
		base := cnT0.Add(time.Duration(s) * 2 * time.Minute)
		mirror := s%2 == 0
		init := p.initTx(host, sid)
		cli = append(cli, cnWireHTTP("client", base, 40*time.Millisecond, conn, sid, "streamable-http", init))
		ini := initializedTx(host, sid)
		cli = append(cli, cnWireHTTP("client", base.Add(time.Second), 10*time.Millisecond, conn, sid, "streamable-http", ini))
		if mirror {
			srv = append(srv, cnWireHTTP("server", base.Add(3*time.Millisecond), 30*time.Millisecond, "srv-"+conn, sid, "streamable-http", init))
			srv = append(srv, cnWireHTTP("server", base.Add(time.Second+3*time.Millisecond), 5*time.Millisecond, "srv-"+conn, sid, "streamable-http", ini))
		}
		for k := 0; k < cnWireCalls; k++ {
			p.format = "wire/http"
			ts := base.Add(time.Duration(k+2) * 5 * time.Second)
			tx := p.callTx(host, k+2, sid, s*cnWireCalls+k)
			cli = append(cli, cnWireHTTP("client", ts, 80*time.Millisecond, conn, sid, "streamable-http", tx))
			if mirror {
				p.format = "wire/server"
				stx := p.serverView(tx)
				srv = append(srv, cnWireHTTP("server", ts.Add(3*time.Millisecond), 60*time.Millisecond, "srv-"+conn, sid, "streamable-http", stx))
			}
		}
	}
	cli = append(cli, p.wireStdioConns()...)
	cli = append(cli, p.wireLegacySSE()...)
	cli = p.interleave(cli, p.wireJunk())
	p.format = "wire/server-garbage"
	srv = p.interleave(srv, p.wireJunkSmall())
	p.files["wire-client.ndjson"] = []byte(strings.Join(cli, "\n") + "\n")
	p.files["wire-server.ndjson"] = []byte(strings.Join(srv, "\n") + "\n")

	// A gzip-compressed log.
	var gz []string
	p.format = "wire/gzip"
	sid := p.sessionID()
	for k := 0; k < 16; k++ {
		tx := p.callTx("mcp.gz.example", k+2, sid, k)
		gz = append(gz, cnWireHTTP("client", cnT0.Add(5*time.Hour+time.Duration(k)*time.Second), 50*time.Millisecond, "gz-1", sid, "streamable-http", tx))
	}
	p.files["archive.ndjson.gz"] = []byte(strings.Join(gz, "\n") + "\n")
	p.gzip["archive.ndjson.gz"] = true
}

// interleave inserts junk lines at random places after the first line.
func (p *cnPlanter) interleave(lines, junk []string) []string {
	for _, j := range junk {
		i := 1 + p.rng.IntN(len(lines))
		lines = append(lines[:i], append([]string{j}, lines[i:]...)...)
	}
	return lines
}

func (p *cnPlanter) wireStdioConns() []string {
	var out []string
	for c := 0; c < 8; c++ {
		p.format = "wire/stdio"
		conn := fmt.Sprintf("stdio-%d", c)
		ts := cnT0.Add(2*time.Hour + time.Duration(c)*time.Minute)
		add := func(dir, line string) {
			out = append(out, cnWireStdio(ts, conn, dir, line))
			ts = ts.Add(15 * time.Millisecond)
		}
		add("c2s", cnInitRequest(0))
		add("s2c", cnInitResult(0))
		add("c2s", cnInitialized)
		for j := 1; j <= 6; j++ {
			add("c2s", p.toolsCall(j))
			p.place = "stdio:stderr"
			add("stderr", "WARN "+p.free(cnKindsLine))
			switch j % 3 {
			case 0:
				add("s2c", p.rpcError(j))
			case 1:
				add("s2c", p.toolResult(j, true))
			default:
				add("s2c", p.toolResult(j, false))
			}
		}
		add("c2s", p.toolsCall(7))
		p.place = "notification:cancelled"
		add("c2s", cnJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 7, "reason": p.free(cnKindsLine)}}))
		p.place = "notification:message"
		add("s2c", cnJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "error", "data": p.free(cnKindsAll)}}))
		p.place = "stdio:stdout-noise"
		add("s2c", "[config] loaded "+p.free(cnKindsLine))
	}
	return out
}

// wireLegacySSE writes 2024-11-05 HTTP+SSE conversations: the session id is
// in the POST URLs and in the endpoint event.
func (p *cnPlanter) wireLegacySSE() []string {
	var out []string
	for c := 0; c < 3; c++ {
		p.format = "wire/http+sse"
		p.place = "url:legacy-sessionId"
		sid := p.newSecret(cnKSession).bare
		conn := fmt.Sprintf("legacy-%d", c)
		start := cnT0.Add(3*time.Hour + time.Duration(c)*time.Minute)
		p.place = "header:authorization"
		auth := p.authValue()
		stream := "event: endpoint\ndata: /messages?sessionId=" + sid + "\n\n"
		for j := 1; j <= 5; j++ {
			body := p.toolsCall(j)
			tx := cnTx{method: "POST", url: "https://legacy.canary.example/messages?sessionId=" + sid,
				reqH: [][2]string{{"Content-Type", "application/json"}, {"Authorization", auth}}, reqBody: cnStrp(body), status: 202, respBody: cnStrp("")}
			out = append(out, cnWireHTTP("client", start.Add(time.Duration(j)*time.Second), 5*time.Millisecond, conn, "", "http+sse", tx))
			var resp string
			if j%2 == 0 {
				resp = p.rpcError(j)
			} else {
				resp = p.toolResult(j, j%3 == 0)
			}
			stream += "event: message\ndata: " + resp + "\n\n"
		}
		get := cnTx{method: "GET", url: "https://legacy.canary.example/sse", reqH: [][2]string{{"Accept", "text/event-stream"}, {"Authorization", auth}},
			status: 200, ctype: "text/event-stream", respBody: cnStrp(stream), streamEnd: "complete"}
		out = append(out, cnWireHTTP("client", start, 10*time.Second, conn, "", "http+sse", get))
	}
	return out
}

func (p *cnPlanter) wireRecord(side, transport, ts string) map[string]any {
	return map[string]any{"mcptrace": "wire/1", "ts": ts, "side": side, "transport": transport, "connection": "junk",
		"http": map[string]any{"request": map[string]any{"method": "POST", "url": "https://mcp.canary.example/mcp"},
			"response": map[string]any{"status": 200, "body": ""}}}
}

// wireJunk is what a wire log should not hold: garbage lines, cut records,
// and records with bad values, all carrying secrets.
func (p *cnPlanter) wireJunk() []string {
	p.format = "wire/garbage"
	var out []string
	ts := cnT0.Add(4 * time.Hour).Format(cnWireTime)
	p.place = "quarantine:text-line"
	for range cnKindsLine {
		out = append(out, p.free(cnKindsLine))
	}
	p.place = "quarantine:curl-line"
	for i := 0; i < 6; i++ {
		out = append(out, fmt.Sprintf("curl -s -H 'Authorization: %s' -H 'X-Api-Key: %s' 'https://api.canary.example/v1/items?%s'",
			p.authValue(), p.bare(cnKindsValue), p.queryPair()))
	}
	p.place = "quarantine:truncated-record"
	for range cnKindsAuth {
		out = append(out, `{"mcptrace":"wire/1","http":{"request":{"headers":{"authorization":"`+p.authValue()+`"},"url":"https://mcp.canary.example/mcp?`+
			p.queryPair()+`","method":"PO`)
	}
	p.place = "quarantine:bad-side"
	for range cnKindsValue {
		out = append(out, cnJSON(p.wireRecord("Bearer "+p.bare(cnKindsValue), "streamable-http", ts)))
	}
	p.place = "quarantine:bad-transport"
	for range cnKindsShape {
		out = append(out, cnJSON(p.wireRecord("client", p.bare(cnKindsShape), ts)))
	}
	p.place = "quarantine:bad-direction"
	for range cnKindsLine {
		out = append(out, cnJSON(map[string]any{"mcptrace": "wire/1", "ts": ts, "side": "client", "transport": "stdio",
			"stdio": map[string]any{"direction": p.freeRaw(cnKindsLine), "line": "{}"}}))
	}
	p.place = "quarantine:bad-failure-kind"
	for range cnKindsLine {
		r := p.wireRecord("client", "streamable-http", ts)
		h := r["http"].(map[string]any)
		delete(h, "response")
		h["failure"] = map[string]any{"kind": p.freeRaw(cnKindsLine), "message": "x"}
		out = append(out, cnJSON(r))
	}
	p.place = "quarantine:bad-stream-end"
	for range cnKindsShape {
		r := p.wireRecord("client", "streamable-http", ts)
		r["http"].(map[string]any)["response"].(map[string]any)["stream_end"] = p.bare(cnKindsShape)
		out = append(out, cnJSON(r))
	}
	p.place = "quarantine:bad-ts"
	for range cnKindsLine {
		out = append(out, cnJSON(p.wireRecord("client", "streamable-http", p.freeRaw(cnKindsLine))))
	}
	p.place = "quarantine:bad-version"
	for range cnKindsLine {
		r := p.wireRecord("client", "streamable-http", ts)
		r["mcptrace"] = "wire/1 " + p.freeRaw(cnKindsLine)
		out = append(out, cnJSON(r))
	}
	p.place = "quarantine:bad-status"
	for i := 0; i < 6; i++ {
		r := p.wireRecord("client", "streamable-http", ts)
		h := r["http"].(map[string]any)
		h["request"].(map[string]any)["headers"] = map[string]any{"authorization": p.authValue()}
		h["response"].(map[string]any)["status"] = p.freeRaw(cnKindsLine)
		out = append(out, cnJSON(r))
	}
	p.place = "quarantine:missing-field"
	for i := 0; i < 8; i++ {
		r := p.wireRecord("client", "streamable-http", ts)
		req := r["http"].(map[string]any)["request"].(map[string]any)
		delete(req, "method")
		req["headers"] = map[string]any{"cookie": "sid=" + p.bare(cnKindsValue)}
		req["url"] = "https://mcp.canary.example/mcp?" + p.queryPair()
		out = append(out, cnJSON(r))
	}
	p.place = "quarantine:invalid-utf8"
	for i := 0; i < 6; i++ {
		out = append(out, `{"mcptrace":"wire/1","note":"`+p.freeRaw(cnKindsShape)+"\xff\xfe"+`"}`)
	}
	p.place = "quarantine:not-object"
	for i := 0; i < 6; i++ {
		out = append(out, cnJSON([]string{p.freeRaw(cnKindsLine), "x"}))
	}
	p.place = "quarantine:foreign-json"
	for i := 0; i < 8; i++ {
		out = append(out, cnJSON(map[string]any{"level": "error", "msg": p.free(cnKindsAll)}))
	}
	p.place = "quarantine:too-deep"
	for i := 0; i < 4; i++ {
		out = append(out, `{"token":"`+p.bare(cnKindsValue)+`","x":`+strings.Repeat("[", 600)+strings.Repeat("]", 600)+"}")
	}
	p.place = "quarantine:pem-split-lines"
	pem := p.newSecret(cnKPEM).free
	out = append(out, strings.Split(pem, "\n")...)
	return out
}

// wireJunkSmall: fewer bad lines, for the server's log, and a line over the
// line limit with secrets at its start.
func (p *cnPlanter) wireJunkSmall() []string {
	var out []string
	ts := cnT0.Add(4 * time.Hour).Format(cnWireTime)
	p.place = "quarantine:text-line"
	for i := 0; i < 6; i++ {
		out = append(out, p.free(cnKindsLine))
	}
	p.place = "quarantine:bad-side"
	for i := 0; i < 4; i++ {
		out = append(out, cnJSON(p.wireRecord("Bearer "+p.bare(cnKindsValue), "streamable-http", ts)))
	}
	p.place = "quarantine:too-long"
	for i := 0; i < 2; i++ {
		out = append(out, `{"mcptrace":"wire/1","http":{"request":{"headers":{"authorization":"`+p.authValue()+`","cookie":"sid=`+p.bare(cnKindsValue)+
			`"}}},"pad":"`+strings.Repeat("x", cnMaxLine+1000)+`"}`)
	}
	return out
}

// ---- HAR ----

func cnHarHeaders(hs [][2]string) []any {
	out := []any{}
	for _, h := range hs {
		out = append(out, map[string]any{"name": h[0], "value": h[1]})
	}
	return out
}

func cnHarCookies(hs [][2]string, name string) []any {
	out := []any{}
	for _, h := range hs {
		if !strings.EqualFold(h[0], name) {
			continue
		}
		parts := strings.Split(h[1], ";")
		if name == "Set-Cookie" {
			parts = parts[:1] // the cookie; the rest are its attributes
		}
		for _, part := range parts {
			if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
				out = append(out, map[string]any{"name": k, "value": v})
			}
		}
	}
	return out
}

func cnHarQuery(raw string) []any {
	out := []any{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			out = append(out, map[string]any{"name": k, "value": v})
		}
	}
	return out
}

func (p *cnPlanter) harEntry(ts time.Time, tx cnTx, b64 bool) map[string]any {
	req := map[string]any{"method": tx.method, "url": tx.url, "httpVersion": "HTTP/2.0", "headers": cnHarHeaders(tx.reqH),
		"cookies": cnHarCookies(tx.reqH, "Cookie"), "queryString": cnHarQuery(tx.url), "headersSize": -1, "bodySize": 0}
	if tx.reqBody != nil {
		req["postData"] = map[string]any{"mimeType": "application/json", "text": *tx.reqBody}
		req["bodySize"] = len(*tx.reqBody)
	}
	resp := map[string]any{"status": tx.status, "statusText": "", "httpVersion": "HTTP/2.0", "headers": cnHarHeaders(tx.respH),
		"cookies": cnHarCookies(tx.respH, "Set-Cookie"), "redirectURL": "", "headersSize": -1, "bodySize": -1}
	content := map[string]any{"size": 0, "mimeType": tx.ctype}
	switch {
	case tx.status == 0:
		resp["_error"] = "net::ERR_CONNECTION_RESET " + tx.failMsg
		content["mimeType"] = "x-unknown"
	case tx.respBody == nil:
		content["size"] = 1234
	default:
		content["size"] = len(*tx.respBody)
		if b64 && *tx.respBody != "" {
			p.place = "har:base64-content"
			content["text"] = p.b64Since(*tx.respBody, tx.respMark, base64.StdEncoding, "har-b64")
			content["encoding"] = "base64"
		} else {
			content["text"] = *tx.respBody
		}
	}
	resp["content"] = content
	return map[string]any{"startedDateTime": ts.Format("2006-01-02T15:04:05.000+00:00"), "time": 84.2, "request": req, "response": resp,
		"cache": map[string]any{}, "timings": map[string]any{"send": 0.1, "wait": 80, "receive": 4.1}}
}

func (p *cnPlanter) genHAR() {
	var entries []any
	host := "mcp.har.example"
	for s := 0; s < 4; s++ {
		p.format = "har"
		sid := p.sessionID()
		base := cnT0.Add(6*time.Hour + time.Duration(s)*10*time.Minute)
		entries = append(entries, p.harEntry(base, p.initTx(host, sid), false))
		for k := 0; k < 16; k++ {
			p.format = "har"
			tx := p.callTx(host, k+2, sid, s*16+k)
			entries = append(entries, p.harEntry(base.Add(time.Duration(k+1)*time.Second), tx, k%3 == 0))
		}
	}
	// Page traffic that is not MCP: skipped, but full of credentials.
	p.format = "har"
	for i := 0; i < 6; i++ {
		p.place = "har:non-mcp-entry"
		tx := cnTx{method: "GET", url: "https://accounts.har.example/oauth/token?code=" + p.bare(cnKindsShape) + "&" + p.queryPair(),
			reqH: [][2]string{{"Authorization", p.authValue()}, {"Cookie", "SID=" + p.bare(cnKindsValue)}}, status: 200, ctype: "application/json",
			respH: [][2]string{{"Content-Type", "application/json"}}}
		tx.respBody = cnStrp(cnJSON(map[string]any{"access_token": p.bare(cnKindsValue), "token_type": "Bearer"}))
		entries = append(entries, p.harEntry(cnT0.Add(7*time.Hour), tx, false))
	}
	// Entries that are quarantined.
	p.place = "quarantine:har-bad-method"
	for range cnKindsValue {
		e := p.harEntry(cnT0.Add(7*time.Hour), p.plainTx(host), false)
		e["request"].(map[string]any)["method"] = "Bearer " + p.bare(cnKindsValue)
		entries = append(entries, e)
	}
	p.place = "quarantine:har-bad-time"
	for range cnKindsLine {
		e := p.harEntry(cnT0.Add(7*time.Hour), p.plainTx(host), false)
		e["startedDateTime"] = p.freeRaw(cnKindsLine)
		entries = append(entries, e)
	}
	p.place = "quarantine:har-bad-status"
	for range cnKindsShape {
		e := p.harEntry(cnT0.Add(7*time.Hour), p.plainTx(host), false)
		e["response"].(map[string]any)["status"] = p.bare(cnKindsShape)
		entries = append(entries, e)
	}
	p.place = "quarantine:har-not-object"
	for i := 0; i < 6; i++ {
		entries = append(entries, p.free(cnKindsLine))
	}
	p.place = "quarantine:har-missing-request"
	for i := 0; i < 6; i++ {
		entries = append(entries, map[string]any{"startedDateTime": cnT0.Format(time.RFC3339), "comment": p.free(cnKindsAll),
			"response": map[string]any{"status": 200, "headers": cnHarHeaders([][2]string{{"Set-Cookie", "sid=" + p.bare(cnKindsValue)}})}})
	}
	doc := map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "mitmproxy", "version": "10.3.0"}, "pages": []any{}, "entries": entries}}
	p.files["traffic.har"] = []byte(cnJSONIndent(doc))
}

// plainTx is a tools/call with secrets in its header and URL only.
func (p *cnPlanter) plainTx(host string) cnTx {
	place := p.place
	tx := cnTx{method: "POST", url: "https://" + host + "/mcp?" + p.queryPair(), reqH: [][2]string{{"Authorization", p.authValue()}},
		reqBody: cnStrp(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`), status: 200, ctype: "application/json",
		respH: [][2]string{{"Content-Type", "application/json"}}, respBody: cnStrp(`{"jsonrpc":"2.0","id":99,"result":{"tools":[]}}`)}
	p.place = place
	return tx
}

// ---- Claude Desktop ----

func (p *cnPlanter) genClaude() {
	var b strings.Builder
	p.format = "claude-desktop"
	ts := cnT0.Add(8 * time.Hour)
	line := func(level, msg string) {
		fmt.Fprintf(&b, "%s [acme] [%s] %s\n", ts.Format(cnWireTime), level, msg)
		ts = ts.Add(37 * time.Millisecond)
	}
	raw := func(s string) { b.WriteString(s + "\n") }
	for start := 0; start < 3; start++ {
		line("info", "Initializing server...")
		p.place = "claude:node-inspect-continuation"
		line("info", "Using MCP server command: /usr/local/bin/node with args and path: {")
		raw("  args: [ '/opt/acme-mcp/index.js', '--api-key', '" + p.bare(cnKindsValue) + "' ],")
		raw("  env: { ACME_TOKEN: '" + p.bare(cnKindsValue) + "', HOME: '/Users/dana' },")
		raw("  paths: [ '/usr/local/bin', '/usr/bin' ]")
		raw("}")
		line("info", "Server started and connected successfully")
		line("info", "Message from client: "+cnInitRequest(0)+" { metadata: undefined }")
		p.place = "stdio:stderr"
		raw("Acme MCP server running on stdio; " + p.free(cnKindsLine))
		raw(p.free(cnKindsLine))
		line("info", "Message from server: "+cnInitResult(0)+" { metadata: undefined }")
		line("info", "Message from client: "+cnInitialized+" { metadata: undefined }")
		for j := 1; j <= 12; j++ {
			line("info", "Message from client: "+p.toolsCall(j)+" { metadata: undefined }")
			switch j % 4 {
			case 0:
				line("info", "Message from server: "+p.rpcError(j)+" { metadata: undefined }")
			case 1:
				line("info", "Message from server: "+p.toolResult(j, true)+` {"context":"connection"}`)
			case 2:
				line("info", "Message from server: "+p.toolResult(j, false)+" { metadata: undefined }")
			default:
				p.place = "claude:truncated-frame"
				msg := p.free(cnKindsLine)
				stack := p.free(cnKindsLine) + " at handler (/opt/acme-mcp/index.js:120:7) at processTicksAndRejections"
				line("info", fmt.Sprintf(`Message from server: {"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":%s,"data":"%s...[4821 chars truncated]...task_queues:95:5)"}} { metadata: undefined }`,
					j, cnJSON(msg), stack))
			}
			if j%3 == 0 {
				p.place = "log:error-entry"
				line("error", "Error in MCP connection to server acme: "+p.free(cnKindsLine))
			}
		}
		p.place = "quarantine:claude-no-brackets"
		for i := 0; i < 7; i++ {
			fmt.Fprintf(&b, "%s %s\n", ts.Format(cnWireTime), p.free(cnKindsLine))
		}
		line("info", "Client transport closed")
	}
	p.place = "stdio:stderr-pem-lines"
	raw("Loaded signing key:")
	raw(p.newSecret(cnKPEM).free)
	p.files["mcp-server-acme.log"] = []byte(b.String())

	// The aggregated mcp.log: level first.
	var m strings.Builder
	ts = cnT0.Add(9 * time.Hour)
	ml := func(msg string) {
		fmt.Fprintf(&m, "%s [info] [weather] %s\n", ts.Format(cnWireTime), msg)
		ts = ts.Add(40 * time.Millisecond)
	}
	p.format = "claude-desktop/mcp.log"
	ml("Initializing server...")
	ml("Message from client: " + cnInitRequest(0))
	ml("Message from server: " + cnInitResult(0))
	for j := 1; j <= 6; j++ {
		ml("Message from client: " + p.toolsCall(j))
		ml("Message from server: " + p.rpcError(j))
	}
	p.files["mcp.log"] = []byte(m.String())
}

// ---- VS Code ----

const cnVsTime = "2006-01-02 15:04:05.000"

func (p *cnPlanter) genVSCode() {
	var b strings.Builder
	p.format = "vscode/remote"
	ts := cnT0.Add(10 * time.Hour)
	L := func(level, text string) {
		fmt.Fprintf(&b, "%s [%s] %s\n", ts.Format(cnVsTime), level, text)
		ts = ts.Add(41 * time.Millisecond)
	}
	host := "mcp.vscode.example"
	L("info", "Starting server acme-remote")
	L("info", "Connection state: Starting")
	L("info", "Starting server from LocalProcess extension host")
	L("info", "Connection state: Running")
	L("debug", "[editor -> server] "+cnInitRequest(1))
	L("debug", "[server -> editor] "+cnInitResult(1))
	L("debug", "[editor -> server] "+cnInitialized)
	for j := 2; j < 34; j++ {
		p.format = "vscode/remote"
		L("debug", "[editor -> server] "+p.toolsCall(j))
		switch j % 5 {
		case 0:
			L("debug", "[server -> editor] "+p.rpcError(j))
		case 1:
			u := p.mcpURL(host)
			p.place = "jsonrpc:error.message"
			body := cnJSON(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32001, "message": p.free(cnKindsLine)}})
			L("info", fmt.Sprintf("%d status sending message to %s: %s", []int{401, 403, 500}[j%3], u, body))
			if j%2 == 1 {
				p.place = "vscode:status-continuation"
				b.WriteString("    at " + p.free(cnKindsLine) + "\n")
			}
		case 2:
			u := p.mcpURL(host)
			p.place = "failure:message"
			L("error", "Error sending message to "+u+": TypeError: fetch failed; cause: "+p.free(cnKindsLine))
		case 3:
			L("debug", "[server -> editor] "+p.toolResult(j, j%2 == 0))
		default:
			u := p.mcpURL(host)
			p.place = "http:non-json-body"
			L("info", "Connection state: Error 502 status sending message to "+u+": Bad Gateway "+p.free(cnKindsLine))
		}
	}
	p.format = "vscode/remote"
	p.place = "log:info-entry"
	L("info", "Connection state: Error "+p.free(cnKindsLine))
	p.place = "quarantine:vscode-no-level"
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "%s %s\n", ts.Format(cnVsTime), p.free(cnKindsLine))
	}
	p.files["vscode-acme-remote.log"] = []byte(b.String())

	var l strings.Builder
	p.format = "vscode/stdio"
	ts = cnT0.Add(11 * time.Hour)
	L2 := func(level, text string) {
		fmt.Fprintf(&l, "%s [%s] %s\n", ts.Format(cnVsTime), level, text)
		ts = ts.Add(33 * time.Millisecond)
	}
	L2("info", "Starting server acme-local")
	L2("info", "Connection state: Starting")
	L2("debug", "[editor -> server] "+cnInitRequest(1))
	p.place = "stdio:stderr"
	L2("warning", "[server stderr] "+p.free(cnKindsLine))
	L2("debug", "[server -> editor] "+cnInitResult(1))
	for j := 2; j < 16; j++ {
		L2("debug", "[editor -> server] "+p.toolsCall(j))
		p.place = "stdio:stderr"
		L2("warning", "[server stderr] "+p.free(cnKindsLine))
		if j%2 == 0 {
			L2("debug", "[server -> editor] "+p.rpcError(j))
		} else {
			L2("debug", "[server -> editor] "+p.toolResult(j, true))
		}
	}
	p.files["vscode-acme-local.log"] = []byte(l.String())
}

// ---- MCP Inspector ----

func (p *cnPlanter) genInspector() {
	p.format = "inspector-history"
	var hist []any
	ts := cnT0.Add(12 * time.Hour)
	entry := func(dir string, msg string) map[string]any {
		ts = ts.Add(300 * time.Millisecond)
		return map[string]any{"id": p.rs(csHex, 8) + "-" + p.rs(csHex, 4), "timestamp": ts.Format("2006-01-02T15:04:05.000Z"),
			"direction": dir, "origin": "client", "message": json.RawMessage(msg)}
	}
	e := entry("request", cnInitRequest(0))
	e["response"] = json.RawMessage(cnInitResult(0))
	hist = append(hist, e)
	for j := 1; j <= 40; j++ {
		e := entry("request", p.toolsCall(j))
		switch j % 5 {
		case 0:
			e["response"] = json.RawMessage(p.rpcError(j))
			e["duration"] = 120
		case 1:
			e["response"] = json.RawMessage(p.toolResult(j, true))
		case 2:
			e["response"] = json.RawMessage(p.toolResult(j, false))
			p.place = "inspector:clientError"
			e["clientError"] = "Output validation failed: " + p.free(cnKindsLine)
		case 3:
			p.place = "inspector:clientError"
			e["clientError"] = "McpError: MCP error -32001: Request timed out; " + p.free(cnKindsLine)
		default:
			e["response"] = json.RawMessage(p.toolResult(j, false))
		}
		hist = append(hist, e)
		if j%4 == 0 {
			p.place = "notification:message"
			n := entry("notification", cnJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
				"params": map[string]any{"level": "error", "data": p.free(cnKindsAll)}}))
			n["origin"] = "server"
			hist = append(hist, n)
		}
		if j%10 == 0 {
			hist = append(hist, entry("response", p.rpcError(1000+j)))
		}
	}
	p.place = "quarantine:inspector-bad-direction"
	for range cnKindsLine {
		hist = append(hist, entry(p.freeRaw(cnKindsLine), `{"jsonrpc":"2.0","id":5,"method":"ping"}`))
	}
	p.place = "quarantine:inspector-bad-timestamp"
	for i := 0; i < 8; i++ {
		e := entry("request", `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
		e["timestamp"] = p.freeRaw(cnKindsLine)
		hist = append(hist, e)
	}
	p.place = "quarantine:inspector-message-string"
	for i := 0; i < 6; i++ {
		e := entry("request", "{}")
		e["message"] = p.free(cnKindsAll)
		hist = append(hist, e)
	}
	p.files["inspector-history.json"] = []byte(cnJSONIndent(hist))

	p.format = "inspector-network"
	var netw []any
	host := "mcp.inspector.example"
	ts = cnT0.Add(13 * time.Hour)
	netEntry := func(tx cnTx) map[string]any {
		ts = ts.Add(400 * time.Millisecond)
		h := map[string]any{}
		for _, x := range tx.reqH {
			h[strings.ToLower(x[0])] = x[1]
		}
		e := map[string]any{"id": fmt.Sprintf("%d-%s", ts.UnixMilli(), p.rs(csLowNum, 9)), "timestamp": ts.Format("2006-01-02T15:04:05.000Z"),
			"method": tx.method, "url": tx.url, "requestHeaders": h, "duration": 87, "category": "transport"}
		if tx.reqBody != nil {
			e["requestBody"] = *tx.reqBody
		}
		if tx.status > 0 {
			rh := map[string]any{}
			for _, x := range tx.respH {
				rh[strings.ToLower(x[0])] = x[1]
			}
			e["responseStatus"], e["responseStatusText"], e["responseHeaders"] = tx.status, "", rh
			if tx.respBody != nil {
				e["responseBody"] = *tx.respBody
			}
		} else {
			e["error"] = "TypeError: fetch failed: " + tx.failMsg
		}
		return e
	}
	sid := p.sessionID()
	netw = append(netw, netEntry(p.initTx(host, sid)))
	for j := 2; j < 42; j++ {
		p.format = "inspector-network"
		netw = append(netw, netEntry(p.callTx(host, j, sid, j)))
		if j%8 == 0 {
			p.place = "inspector:auth-entry"
			a := netEntry(cnTx{method: "POST", url: "https://auth.inspector.example/oauth/token",
				reqH:    [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}},
				reqBody: cnStrp("grant_type=authorization_code&code=" + p.bare(cnKindsShape) + "&" + p.queryPair()), status: 200,
				respH: [][2]string{{"Content-Type", "application/json"}},
				respBody: cnStrp(cnJSON(map[string]any{"access_token": p.bare([]string{cnKJWT}), "refresh_token": p.bare(cnKindsValue),
					"token_type": "Bearer", "expires_in": 3600}))})
			a["category"] = "auth"
			netw = append(netw, a)
		}
	}
	p.place = "quarantine:inspector-no-status"
	for i := 0; i < 8; i++ {
		e := netEntry(p.plainTx(host))
		delete(e, "responseStatus")
		netw = append(netw, e)
	}
	p.place = "quarantine:inspector-bad-timestamp"
	for i := 0; i < 6; i++ {
		e := netEntry(p.plainTx(host))
		e["timestamp"] = p.freeRaw(cnKindsLine)
		netw = append(netw, e)
	}
	p.files["inspector-network.json"] = []byte(cnJSONIndent(netw))
}

// ---- OTLP ----

func cnOtlpStr(k, v string) map[string]any {
	return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
}

func cnOtlpArr(k string, vs ...string) map[string]any {
	var vals []any
	for _, v := range vs {
		vals = append(vals, map[string]any{"stringValue": v})
	}
	return map[string]any{"key": k, "value": map[string]any{"arrayValue": map[string]any{"values": vals}}}
}

func (p *cnPlanter) otlpSpan(i int, sid string, start time.Time, kind int) map[string]any {
	attrs := []any{cnOtlpStr("mcp.method.name", "tools/call"), cnOtlpStr("gen_ai.tool.name", cnTools[i%len(cnTools)]),
		cnOtlpStr("jsonrpc.request.id", strconv.Itoa(100+i)), cnOtlpStr("mcp.session.id", sid), cnOtlpStr("network.transport", "tcp")}
	attrs = append(attrs, cnOtlpStr("url.full", p.mcpURL("mcp.otel.example")))
	p.place = "otlp:attr-header"
	attrs = append(attrs, cnOtlpArr("http.request.header.authorization", p.authValue()))
	args := p.arguments()
	attrs = append(attrs, cnOtlpStr("gen_ai.tool.call.arguments", cnJSON(args)))
	span := map[string]any{"traceId": p.rs(csHex, 32), "spanId": p.rs(csHex, 16), "name": "tools/call", "kind": kind,
		"startTimeUnixNano": strconv.FormatInt(start.UnixNano(), 10), "endTimeUnixNano": strconv.FormatInt(start.Add(90*time.Millisecond).UnixNano(), 10)}
	switch i % 4 {
	case 0:
		p.place = "otlp:status.message"
		span["status"] = map[string]any{"code": 2, "message": p.free(cnKindsAll)}
	case 1:
		p.place = "otlp:error.type"
		attrs = append(attrs, cnOtlpStr("error.type", p.freeRaw(cnKindsLine)))
		span["status"] = map[string]any{"code": "STATUS_CODE_ERROR"}
	case 2:
		p.place = "otlp:attr-arbitrary"
		attrs = append(attrs, cnOtlpStr("enduser.id", p.bare([]string{cnKEmail})), cnOtlpStr("app.debug", p.free(cnKindsLine)))
		p.place = "otlp:event"
		span["events"] = []any{map[string]any{"name": "exception", "timeUnixNano": strconv.FormatInt(start.Add(80*time.Millisecond).UnixNano(), 10),
			"attributes": []any{cnOtlpStr("exception.type", "AuthError"), cnOtlpStr("exception.message", p.free(cnKindsLine)),
				cnOtlpStr("exception.stacktrace", p.free(cnKindsAll))}}}
		span["status"] = map[string]any{"code": 2}
	default:
		p.place = "tool:result-text"
		attrs = append(attrs, cnOtlpStr("gen_ai.tool.call.result", p.free(cnKindsAll)))
		span["status"] = map[string]any{"code": 1}
	}
	span["attributes"] = attrs
	return span
}

func (p *cnPlanter) otlpResource(service string) map[string]any {
	p.place = "otlp:resource-attr"
	return map[string]any{"attributes": []any{cnOtlpStr("service.name", service), cnOtlpStr("service.version", "1.2.0"),
		cnOtlpArr("process.command_args", "node", "server.js", "--token", p.bare(cnKindsValue))}}
}

func (p *cnPlanter) genOTLP() {
	p.format = "otlp-traces"
	var lines []string
	i := 0
	for l := 0; l < 12; l++ {
		p.format = "otlp-traces"
		sid := p.sessionID()
		var spans []any
		kind := 3 - l%2 // client, then server
		for k := 0; k < 5; k++ {
			spans = append(spans, p.otlpSpan(i, sid, cnT0.Add(14*time.Hour+time.Duration(i)*time.Second), kind))
			i++
		}
		req := map[string]any{"resourceSpans": []any{map[string]any{"resource": p.otlpResource("canary-agent"),
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "opentelemetry.instrumentation.mcp", "version": "0.3.1"}, "spans": spans}}}}}
		lines = append(lines, cnJSON(req))
	}
	p.format = "otlp-traces/garbage"
	var junk []string
	p.place = "quarantine:otlp-cut-line"
	for k := 0; k < 8; k++ {
		junk = append(junk, `{"resourceSpans":[{"resource":{"attributes":[{"key":"http.request.header.authorization","value":{"stringValue":"`+p.authValue()+`"}}`)
	}
	p.place = "quarantine:otlp-missing"
	for k := 0; k < 8; k++ {
		junk = append(junk, cnJSON(map[string]any{"resourceSpanz": []any{}, "note": p.free(cnKindsAll)}))
	}
	p.place = "quarantine:otlp-span-not-object"
	for k := 0; k < 8; k++ {
		junk = append(junk, cnJSON(map[string]any{"resourceSpans": []any{map[string]any{"scopeSpans": []any{map[string]any{"spans": []any{p.free(cnKindsLine)}}}}}}))
	}
	p.files["traces.ndjson"] = []byte(strings.Join(p.interleave(lines, junk), "\n") + "\n")

	// One pretty-printed document.
	p.format = "otlp-traces/document"
	sid := p.sessionID()
	var spans []any
	for k := 0; k < 8; k++ {
		spans = append(spans, p.otlpSpan(i, sid, cnT0.Add(15*time.Hour+time.Duration(k)*time.Second), 2))
		i++
	}
	doc := map[string]any{"resourceSpans": []any{map[string]any{"resource": p.otlpResource("canary-server"),
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "mcp-server"}, "spans": spans}}}}}
	p.files["traces.json"] = []byte(cnJSONIndent(doc))

	// Logs.
	p.format = "otlp-logs"
	var ll []string
	n := 0
	for l := 0; l < 10; l++ {
		sid := p.sessionID()
		var recs []any
		for k := 0; k < 4; k++ {
			t := cnT0.Add(16*time.Hour + time.Duration(n)*time.Second)
			p.place = "otlp:attr-header"
			attrs := []any{cnOtlpStr("mcp.method.name", "tools/call"), cnOtlpStr("jsonrpc.request.id", strconv.Itoa(n+1)), cnOtlpStr("mcp.session.id", sid),
				cnOtlpArr("http.request.header.cookie", "sid="+p.bare(cnKindsValue)), map[string]any{"key": "duration_ms", "value": map[string]any{"doubleValue": 41.5}}}
			if n%3 == 0 {
				p.place = "otlp:error.type"
				attrs = append(attrs, cnOtlpStr("error.type", p.freeRaw(cnKindsLine)))
			}
			if n%3 == 1 {
				attrs = append(attrs, map[string]any{"key": "http.response.status_code", "value": map[string]any{"intValue": "500"}})
			}
			sev, sevText := 17, "ERROR"
			if n%4 == 3 {
				sev, sevText = 9, "INFO"
			}
			p.place = "otlp:log-body"
			recs = append(recs, map[string]any{"timeUnixNano": strconv.FormatInt(t.UnixNano(), 10), "severityNumber": sev, "severityText": sevText,
				"body": map[string]any{"stringValue": p.free(cnKindsAll)}, "attributes": attrs})
			n++
		}
		ll = append(ll, cnJSON(map[string]any{"resourceLogs": []any{map[string]any{"resource": p.otlpResource("edge-gateway"),
			"scopeLogs": []any{map[string]any{"scope": map[string]any{"name": "mcp-gateway/access"}, "logRecords": recs}}}}}))
	}
	p.files["logs.ndjson"] = []byte(strings.Join(ll, "\n") + "\n")
}

// ---- stdio JSONL ----

func (p *cnPlanter) genStdioJSONL() {
	p.format = "stdio-jsonl/mcpsnoop"
	sid := p.sessionID()
	ts := cnT0.Add(17 * time.Hour)
	seq := 0
	var out []string
	add := func(m map[string]any) {
		seq++
		ts = ts.Add(21 * time.Millisecond)
		m["session_id"], m["server_label"], m["seq"], m["ts"], m["transport"] = sid, "acme", seq, ts.Format(time.RFC3339Nano), "stdio"
		out = append(out, cnJSON(m))
	}
	p.place = "stdio-jsonl:meta"
	add(map[string]any{"direction": "meta", "raw": map[string]any{"command": []string{"npx", "acme-mcp", "--token", p.bare(cnKindsValue)},
		"env": map[string]any{"ACME_KEY": p.bare(cnKindsValue)}}})
	add(map[string]any{"direction": "c2s", "raw": json.RawMessage(cnInitRequest(0))})
	p.place = "stdio:stderr"
	add(map[string]any{"direction": "stderr", "text": "INFO " + p.free(cnKindsLine)})
	add(map[string]any{"direction": "s2c", "raw": json.RawMessage(cnInitResult(0))})
	add(map[string]any{"direction": "c2s", "raw": json.RawMessage(cnInitialized)})
	for j := 1; j <= 20; j++ {
		add(map[string]any{"direction": "c2s", "raw": json.RawMessage(p.toolsCall(j)), "mcp_method": "tools/call"})
		switch j % 4 {
		case 0:
			add(map[string]any{"direction": "s2c", "raw": json.RawMessage(p.rpcError(j))})
		case 1:
			add(map[string]any{"direction": "s2c", "raw": json.RawMessage(p.toolResult(j, true))})
		case 2:
			p.place = "stdio-jsonl:truncated-frame"
			msg := p.free(cnKindsLine)
			add(map[string]any{"direction": "s2c", "truncated": true,
				"text": fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":%s,"data":"%s`, j, cnJSON(msg), p.free(cnKindsLine))})
		default:
			p.place = "stdio:stderr"
			add(map[string]any{"direction": "stderr", "text": p.free(cnKindsLine)})
			add(map[string]any{"direction": "s2c", "raw": json.RawMessage(p.toolResult(j, false))})
		}
	}
	p.format = "stdio-jsonl/garbage"
	var junk []string
	p.place = "quarantine:sjl-bad-direction"
	for range cnKindsValue {
		junk = append(junk, cnJSON(map[string]any{"direction": "Bearer " + p.bare(cnKindsValue), "raw": map[string]any{}}))
	}
	p.place = "quarantine:sjl-bad-ts"
	for i := 0; i < 8; i++ {
		junk = append(junk, cnJSON(map[string]any{"direction": "c2s", "ts": p.freeRaw(cnKindsLine), "raw": map[string]any{}}))
	}
	p.place = "quarantine:sjl-not-json"
	for i := 0; i < 8; i++ {
		junk = append(junk, "WARN "+p.free(cnKindsLine))
	}
	p.place = "quarantine:sjl-no-frame"
	for i := 0; i < 6; i++ {
		junk = append(junk, cnJSON(map[string]any{"direction": "c2s", "note": p.free(cnKindsAll)}))
	}
	p.place = "quarantine:sjl-not-object"
	for i := 0; i < 6; i++ {
		junk = append(junk, cnJSON(p.free(cnKindsAll)))
	}
	head, rest := out[:5], out[5:]
	p.files["mcpsnoop-session.jsonl"] = []byte(strings.Join(append(head, p.interleave(rest, junk)...), "\n") + "\n")

	// The generic shape: a frame object or a string, send/recv.
	p.format = "stdio-jsonl/generic"
	var g []string
	tsf := float64(cnT0.Add(18*time.Hour).UnixMilli()) / 1000
	gadd := func(dir string, key string, v any) {
		tsf += 0.25
		g = append(g, cnJSON(map[string]any{"ts": tsf, "direction": dir, key: v}))
	}
	gadd("send", "message", json.RawMessage(cnInitRequest(1)))
	gadd("recv", "message", json.RawMessage(cnInitResult(1)))
	for j := 2; j < 20; j++ {
		if j%2 == 0 {
			gadd("send", "message", json.RawMessage(p.toolsCall(j)))
			gadd("recv", "message", p.rpcError(j)) // as a string
		} else {
			gadd("send", "frame", p.toolsCall(j))
			gadd("recv", "message", json.RawMessage(p.toolResult(j, j%3 == 0)))
		}
	}
	p.files["proxy.jsonl"] = []byte(strings.Join(g, "\n") + "\n")
}

// ---- files no decoder reads ----

func (p *cnPlanter) genUnknown() {
	p.format = "unknown-format"
	p.place = "quarantine:unknown-format"
	for i := 0; i < 8; i++ {
		p.files[fmt.Sprintf("debug-dump-%d.log", i)] = []byte("dump " + strconv.Itoa(i) + ": " + p.freeRaw(cnKindsLine) + "\n" + p.freeRaw(cnKindsLine) + "\nmore text follows\n")
	}
	// Credentials files in the walked directory (issue 13): by name, by
	// shape, and a file with a credential line among prose.
	p.place = "quarantine:credentials-file"
	lines := func(kind string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(p.freeRaw([]string{kind}) + "\n")
		}
		return b.String()
	}
	p.files[".pgpass"] = []byte(lines(cnKPgpass, 3))
	p.files[".netrc"] = []byte(lines(cnKNetrc, 2))
	p.files["credentials"] = []byte("[default]\naws_access_key_id = " + p.bare([]string{cnKAWSKey}) + "\naws_secret_access_key = " + p.bare([]string{cnKAWSSecret}) + "\n")
	p.files[".env"] = []byte("GROQ_API_KEY=" + p.bare([]string{cnKGroq}) + "\nDB_PASSWORD=" + p.bare([]string{cnKPassword}) + "\nDEBUG=1\n")
	p.files["leaked-logins.txt"] = []byte(lines(cnKEmailPass, 4))
	p.files["accounts.tsv"] = []byte(lines(cnKTabPair, 4))
	p.files["pg-hosts.txt"] = []byte("# read-only replicas\n" + lines(cnKPgpass, 2))
	p.place = "quarantine:credential-line-in-prose"
	p.files["notes.txt"] = []byte("notes from the migration call\nthe replica is slow again\n" + lines(cnKPgpass, 1) + "ana was asked to rotate it\n" +
		lines(cnKTabPair, 1) + "next review on friday\nnothing else to report\n" + lines(cnKNetrc, 1))
}

func (p *cnPlanter) generate() {
	p.genWire()
	p.genHAR()
	p.genClaude()
	p.genVSCode()
	p.genInspector()
	p.genOTLP()
	p.genStdioJSONL()
	p.genUnknown()
}

// ---- finding canaries ----

const cnKeyLen = 12

type cnNeedle struct {
	text   string
	c      *cnCanary
	digits bool // a card's digits: also looked for with separators removed
}

type cnMatcher struct {
	needles []cnNeedle
	byKey   map[string][]int32
	digits  map[string][]int32
}

func cnNewMatcher(list []*cnCanary) *cnMatcher {
	m := &cnMatcher{byKey: map[string][]int32{}, digits: map[string][]int32{}}
	for _, c := range list {
		for _, n := range c.needles {
			m.needles = append(m.needles, cnNeedle{text: n, c: c, digits: n == c.digits})
		}
	}
	for i, n := range m.needles {
		k := n.text[:cnKeyLen]
		m.byKey[k] = append(m.byKey[k], int32(i))
		if n.digits {
			m.digits[k] = append(m.digits[k], int32(i))
		}
	}
	return m
}

func (m *cnMatcher) scanWith(keys map[string][]int32, s string, fn func(n *cnNeedle, at int)) {
	for i := 0; i+cnKeyLen <= len(s); i++ {
		ids, ok := keys[s[i:i+cnKeyLen]]
		if !ok {
			continue
		}
		for _, id := range ids {
			n := &m.needles[id]
			if strings.HasPrefix(s[i:], n.text) {
				fn(n, i)
			}
		}
	}
}

// scan reports every needle in s, in s percent-decoded, and (card digits)
// in s cnWithout spaces and dashes; at is an offset into the text searched.
func (m *cnMatcher) scan(s string, fn func(n *cnNeedle, text string, at int)) {
	if len(s) < cnKeyLen {
		return
	}
	m.scanWith(m.byKey, s, func(n *cnNeedle, at int) { fn(n, s, at) })
	if strings.Contains(s, "%") {
		if d, err := url.QueryUnescape(s); err == nil && d != s {
			m.scanWith(m.byKey, d, func(n *cnNeedle, at int) { fn(n, d, at) })
		} else if d, err := url.PathUnescape(s); err == nil && d != s {
			m.scanWith(m.byKey, d, func(n *cnNeedle, at int) { fn(n, d, at) })
		}
	}
	if strings.ContainsAny(s, " -") {
		d := strings.NewReplacer(" ", "", "-", "").Replace(s)
		m.scanWith(m.digits, d, func(n *cnNeedle, at int) { fn(n, d, at) })
	}
}

// ---- the test ----

const cnMaxLine = 1 << 20

type cnLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *cnLockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

type cnLeak struct {
	c      *cnCanary
	where  string
	needle string
	sample string
}

func TestCanaryRedaction(t *testing.T) {
	if testing.Short() {
		t.Skip("canary test skipped in -short mode")
	}
	start := time.Now()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MCPTRACE_CANARY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MCPTRACE_CANARY_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("canary seed %d (replay with MCPTRACE_CANARY_SEED=%d)", seed, seed)

	p := cnNewPlanter(seed)
	p.generate()
	in := t.TempDir()
	for name, b := range p.files {
		data := b
		if p.gzip[name] {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(b)
			zw.Close()
			data = gz.Bytes()
		}
		if err := os.WriteFile(filepath.Join(in, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file that starts like gzip and is not: quarantined as unreadable.
	if err := os.WriteFile(filepath.Join(in, "broken.ndjson.gz"), []byte{0x1f, 0x8b, 0, 0, 'n', 'o'}, 0o644); err != nil {
		t.Fatal(err)
	}

	m := cnNewMatcher(p.list)
	// The generator's own check: every canary is in the inputs, in at least
	// one of the forms looked for.
	planted := make([]bool, len(p.list))
	for _, b := range p.files {
		m.scan(string(b), func(n *cnNeedle, _ string, _ int) { planted[n.c.id] = true })
	}
	var missing []string
	for _, c := range p.list {
		if !planted[c.id] {
			missing = append(missing, fmt.Sprintf("%s %s %s %q", c.format, c.place, c.label(), c.secret))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("test bug: %d canaries are not found in the inputs they were planted in, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	var kinds = map[string]bool{}
	for _, c := range p.list {
		kinds[c.kind] = true
	}
	for _, k := range append(cnKindsAll, cnKSession) {
		if !kinds[k] {
			t.Fatalf("test bug: no canary of kind %s", k)
		}
	}
	if len(p.list) < 2000 {
		t.Fatalf("test bug: only %d canaries planted", len(p.list))
	}
	t.Logf("planted %d distinct canaries (%d texts searched for) in %d files, %s", len(p.list), len(m.needles), len(p.files), cnPlantedTable(p.list))

	key, err := redact.NewPseudonymizer("canary", []byte("canary-test-key-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	leaks := map[string]*cnLeak{} // canary id + where
	found := func(where string) func(n *cnNeedle, text string, at int) {
		return func(n *cnNeedle, text string, at int) {
			k := strconv.Itoa(n.c.id) + "\x00" + where
			if _, ok := leaks[k]; ok {
				return
			}
			lo, hi := max(0, at-40), min(len(text), at+len(n.text)+40)
			leaks[k] = &cnLeak{c: n.c, where: where, needle: n.text, sample: text[lo:hi]}
		}
	}

	for _, merge := range []string{"off", "on"} {
		out := t.TempDir()
		var logBuf cnLockedBuffer
		sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{in}, OutDir: out, Merge: merge, MaxLineBytes: cnMaxLine,
			Pseudonyms: key, Log: zerolog.New(&logBuf)})
		if err != nil {
			t.Fatalf("merge %s: ingest: %v", merge, err)
		}
		run := "merge=" + merge
		if !sum.Balanced() {
			t.Errorf("%s: the run does not balance: %+v", run, sum)
		}
		if merge == "on" && !sum.Merging {
			t.Errorf("%s: merging was not on", run)
		}
		t.Logf("%s: %d records, %d observations, %d quarantined %v, %d exchanges %v, merged %d, formats %v, skipped %v",
			run, sum.Records, sum.Observations, sum.Quarantined, sum.ByReason, sum.Exchanges, sum.ByOutcome, sum.Merged, sum.ByFormat, sum.Skipped)

		redacted := 0
		for _, table := range []string{"exchanges", "quarantine"} {
			rows, err := db.Query(`SELECT COLUMNS(*)::VARCHAR FROM read_parquet(?, union_by_name = true)`, filepath.Join(out, table, "*", "*.parquet"))
			if err != nil {
				t.Fatalf("%s: reading %s: %v", run, table, err)
			}
			cols, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			n := 0
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatalf("%s: %s: %v", run, table, err)
				}
				n++
				for i, v := range vals {
					if !v.Valid {
						continue
					}
					if strings.Contains(v.String, "[REDACTED:") {
						redacted++
					}
					m.scan(v.String, found(run+" "+table+"."+cols[i]))
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s: %s: %v", run, table, err)
			}
			rows.Close()
			switch {
			case table == "exchanges" && n < 200:
				t.Errorf("%s: only %d exchanges written: the test would pass vacuously", run, n)
			case table == "quarantine" && n < 20:
				t.Errorf("%s: only %d quarantine rows written: the test would pass vacuously", run, n)
			}
			t.Logf("%s: read %d %s rows of %d columns", run, n, table, len(cols))
		}
		t.Logf("%s: %d values carry a [REDACTED:…] marker", run, redacted)
		if redacted < 20 {
			t.Errorf("%s: only %d values hold a [REDACTED:…] marker: masked text should be written, not everything dropped", run, redacted)
		}
		// Every byte of every file written (Parquet pages are compressed, but
		// footers, statistics and any other file are not).
		err = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			// Named by table and extension: partition and dataset names vary.
			rel, _ := filepath.Rel(out, path)
			table, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			m.scan(string(b), found(run+" file "+table+"/…"+filepath.Ext(path)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Every logged line, as written and field by field.
		logged := logBuf.b.String()
		nlines := 0
		for _, line := range strings.Split(logged, "\n") {
			if line == "" {
				continue
			}
			nlines++
			var fields map[string]any
			if json.Unmarshal([]byte(line), &fields) != nil {
				m.scan(line, found(run+" log"))
				continue
			}
			for k, v := range fields {
				m.scan(fmt.Sprint(v), found(run+" log."+k))
			}
		}
		if nlines == 0 {
			t.Errorf("%s: nothing was logged (quarantined records are logged)", run)
		}
		m.scan(fmt.Sprintf("%+v", sum), found(run+" summary"))
	}

	elapsed := time.Since(start)
	t.Logf("canary test ran in %s", elapsed.Round(time.Millisecond))
	if len(leaks) == 0 {
		return
	}
	cnReportLeaks(t, p.list, leaks)
}

// cnPlantedTable counts canaries by kind, by format and by place.
func cnPlantedTable(list []*cnCanary) string {
	by := func(f func(c *cnCanary) string) string {
		n := map[string]int{}
		for _, c := range list {
			n[f(c)]++
		}
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%d", k, n[k])
		}
		return b.String()
	}
	return "\n  by kind:" + by(func(c *cnCanary) string { return c.label() }) +
		"\n  by format:" + by(func(c *cnCanary) string { return c.format }) +
		"\n  by place:" + by(func(c *cnCanary) string { return c.place })
}

func cnReportLeaks(t *testing.T, list []*cnCanary, leaks map[string]*cnLeak) {
	t.Helper()
	leaked := map[int]bool{}
	type group struct {
		canaries map[int]bool
		where    map[string]int
	}
	groups := map[string]*group{}
	byWhere := map[string]map[int]bool{}
	byKind := map[string]map[int]bool{}
	var all []*cnLeak
	for _, l := range leaks {
		all = append(all, l)
		leaked[l.c.id] = true
		// The run label is left out of the grouping: merge on and off
		// mostly leak alike.
		where := l.where[strings.IndexByte(l.where, ' ')+1:]
		k := l.c.format + " | " + l.c.place + " | " + l.c.label()
		g := groups[k]
		if g == nil {
			g = &group{canaries: map[int]bool{}, where: map[string]int{}}
			groups[k] = g
		}
		g.canaries[l.c.id] = true
		g.where[where]++
		if byWhere[where] == nil {
			byWhere[where] = map[int]bool{}
		}
		byWhere[where][l.c.id] = true
		if byKind[l.c.kind] == nil {
			byKind[l.c.kind] = map[int]bool{}
		}
		byKind[l.c.kind][l.c.id] = true
	}
	plantedBy := map[string]int{}
	plantedKind := map[string]int{}
	for _, c := range list {
		plantedBy[c.format+" | "+c.place+" | "+c.label()]++
		plantedKind[c.kind]++
	}
	var b strings.Builder
	b.WriteString("Leaked canaries by format | place | detector(+how planted) (leaked/planted) -> where found:\n")
	for _, k := range cnSortedKeys(groups, func(g *group) int { return len(g.canaries) }) {
		g := groups[k]
		var ws []string
		for w := range g.where {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		fmt.Fprintf(&b, "  %s (%d/%d) -> %s\n", k, len(g.canaries), plantedBy[k], strings.Join(ws, ", "))
	}
	t.Log(b.String())
	if os.Getenv("MCPTRACE_CANARY_ALL") != "" {
		var a strings.Builder
		for _, l := range all {
			fmt.Fprintf(&a, "\n  %s <- %s %s %s: %q in %q", l.where, l.c.format, l.c.place, l.c.label(), l.needle, strings.ToValidUTF8(l.sample, "?"))
		}
		t.Log("every leak:" + a.String())
	}

	var e strings.Builder
	fmt.Fprintf(&e, "%d of %d planted canaries survive in the output (%d canary/place pairs; details above).\n", len(leaked), len(list), len(leaks))
	e.WriteString("By column or log (distinct canaries):\n")
	for _, k := range cnSortedKeys(byWhere, func(v map[int]bool) int { return len(v) }) {
		fmt.Fprintf(&e, "  %-44s %d\n", k, len(byWhere[k]))
	}
	e.WriteString("By detector (leaked/planted):")
	for i, k := range cnSortedKeys(byKind, func(v map[int]bool) int { return len(v) }) {
		if i%5 == 0 {
			e.WriteString("\n ")
		}
		fmt.Fprintf(&e, " %s %d/%d", k, len(byKind[k]), plantedKind[k])
	}
	e.WriteString("\nExamples:")
	sort.Slice(all, func(i, j int) bool {
		if all[i].c.id != all[j].c.id {
			return all[i].c.id < all[j].c.id
		}
		return all[i].where < all[j].where
	})
	seenWhere := map[string]bool{}
	n := 0
	for _, l := range all {
		w := l.where[strings.IndexByte(l.where, ' ')+1:]
		if seenWhere[w] || n >= 6 {
			continue
		}
		seenWhere[w] = true
		n++
		fmt.Fprintf(&e, "\n  %s <- %s %s %s: %q in %q", l.where, l.c.format, l.c.place, l.c.label(), l.needle, strings.ToValidUTF8(l.sample, "?"))
	}
	t.Error(e.String())
}

func cnSortedKeys[V any](m map[string]V, size func(V) int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := size(m[keys[i]]), size(m[keys[j]]); a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	return keys
}
