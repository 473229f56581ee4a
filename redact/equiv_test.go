package redact

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"io"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"
)

// Differential tests: the current HashJSON, Shape, SanitizeURL, MaskWith
// and ExcerptWith must give exactly what the implementation of before
// (oldimpl_test.go) gives, counts included, on the texts, JSON values and
// URLs of the samples, the detector corpora, and generated inputs made to
// hit every detector's near misses.

type equivCorpus struct {
	texts []string
	jsons [][]byte
	urls  []string
}

var (
	corpusOnce sync.Once
	corpus     equivCorpus
)

func loadEquivCorpus(t testing.TB) *equivCorpus {
	corpusOnce.Do(func() {
		c := &corpus
		c.texts = append(c.texts, readCorpus(t)...)
		for _, cases := range detectorCases {
			for _, dc := range cases {
				c.texts = append(c.texts, dc.in)
			}
		}
		for _, ec := range encodedCases {
			c.texts = append(c.texts, ec.in)
		}
		c.texts = append(c.texts, keepCases...)
		c.addSamples(t)
		r := rand.New(rand.NewPCG(2026, 11))
		for range 20000 {
			c.texts = append(c.texts, genText(r))
		}
		for range 3000 {
			c.urls = append(c.urls, genURL(r))
		}
		c.jsons = append(c.jsons, hostileJSON()...)
		for range 3000 {
			c.jsons = append(c.jsons, genJSON(r))
		}
	})
	return &corpus
}

// addSamples walks ../samples: every line is a text; every JSON value in a
// line or a document (bodies inside it, and the data of SSE events) gives
// its objects and arrays, its strings, and the strings that look like URLs.
func (c *equivCorpus) addSamples(t testing.TB) {
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) == ".go" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = undoCompression(t, p, b)
		if gjson.ValidBytes(b) {
			c.walk(gjson.ParseBytes(b), 0)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := sc.Text()
			c.texts = append(c.texts, line)
			if gjson.Valid(line) {
				c.walk(gjson.Parse(line), 0)
			} else if k := strings.IndexByte(line, '{'); k >= 0 {
				c.embedded(line[k:])
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func undoCompression(t testing.TB, p string, b []byte) []byte {
	var r io.Reader
	var err error
	switch {
	case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		r, err = gzip.NewReader(bytes.NewReader(b))
	case len(b) >= 4 && bytes.Equal(b[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		r, err = zstd.NewReader(bytes.NewReader(b))
	case len(b) >= 2 && b[0] == 0x78 && (b[1] == 0x01 || b[1] == 0x5e || b[1] == 0x9c || b[1] == 0xda):
		r, err = zlib.NewReader(bytes.NewReader(b))
	default:
		return b
	}
	if err == nil {
		b, err = io.ReadAll(r)
	}
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return b
}

// embedded finds a JSON object at the start of s (a Claude Desktop or VS
// Code log line quotes messages that way).
func (c *equivCorpus) embedded(s string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				if gjson.Valid(s[:i+1]) {
					c.walk(gjson.Parse(s[:i+1]), 0)
				}
				return
			}
		}
	}
}

func (c *equivCorpus) walk(v gjson.Result, depth int) {
	if depth > 40 {
		return
	}
	switch {
	case v.IsObject() || v.IsArray():
		c.jsons = append(c.jsons, []byte(v.Raw))
		v.ForEach(func(k, x gjson.Result) bool {
			if k.Type == gjson.String {
				c.texts = append(c.texts, k.Str)
			}
			c.walk(x, depth+1)
			return true
		})
	case v.Type == gjson.String:
		s := v.Str
		c.texts = append(c.texts, s)
		if strings.Contains(s, "://") || strings.HasPrefix(s, "/") {
			c.urls = append(c.urls, s)
		}
		if tr := strings.TrimSpace(s); tr != "" && (tr[0] == '{' || tr[0] == '[') && gjson.Valid(tr) {
			c.walk(gjson.Parse(tr), depth+1)
		}
		for _, l := range strings.Split(s, "\n") {
			if d, ok := strings.CutPrefix(l, "data:"); ok && gjson.Valid(d) {
				c.walk(gjson.Parse(d), depth+1)
			}
		}
	}
}

// Generated texts: fragments chosen to land near every detector's keyword,
// separators and value shapes, in any case.
var fragments = []string{
	" ", " ", " ", "\n", "\t", "\r\n", ":", "=", ": ", "=>", ":=", `"`, `\"`, `\\\"`, "'", ",", ";", "&", "?", "/", "//", "://", "@", ".", "-", "_", "+", "%", "%20", "%3D", "%2F", "%zz", "#", "[", "]", "{", "}", "(", ")", "<", ">", "\\", "|", "`", "\x00", "\x7f", "\xff", "\xc3", "é", "日本", "\u00a0", "\u2028",
	"the", "error", "failed", "request", "user", "value", "null", "true", "none", "example", "${VAR}", "<redacted>", "****", "xxxx",
	"password", "passwd", "passphrase", "secret", "token", "key", "pwd", "credential", "credentials", "auth", "signature", "session", "sessid", "session_id", "session.id", "sessionId", "api_key", "apikey", "keyboard", "tokens",
	"authorization", "Authorization: ", "bearer", "Bearer ", "basic", "Basic ", "digest", "Digest ", "cookie", "Cookie: ", "Set-Cookie", "name", `"name":"`, `"value":"`, `{"name":"x-api-key","value":"`, `\"name\":\"Authorization\",\"value\":\"`,
	"-----BEGIN", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "PRIVATE KEY", "eyJ", "eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxMjMifQ", "ghp_", "gho_", "github_pat_", "glpat-", "glrt-", "xoxb-", "xapp-1-", "hooks.slack.com/services/", "discord.com/api/webhooks/", "api.telegram.org/bot", "webhook.office.com/webhookb2/",
	"-u ", "-U ", "sk_live_", "sk_test_", "pk_live_", "whsec_", "sk-", "sk-proj-", "sk-ant-", "ck_pat_", "npm_", "hf_", "SG.", "ya29.", "pypi-AgE", "AIza", "private_key_id", "AKIA", "ASIA", "A3TX", "aws", "aws_secret_access_key", "AccountKey=", "SharedAccessKey=", "sig=", "SharedAccessSignature", "sv=2022-11-02",
	"https://", "http://user:pw@", "postgres://reporting:Tr0ub4dor&3@db:5432/x", "redis://:s3cr3t@cache", "localhost:8080", "mcp.example.com", "ana.lopez@example.com", "git@github.com", "a@b", "@scope/pkg", "x@y.co",
	"4111111111111111", "4111 1111 1111 1111", "5555-5555-5555-4444", "378282246310005", "1718093450123", "2024-06-11", "0.8472619384756201", "3f786850e387550fdab836ed7e6dc881de23001b", "7c9e6679-7425-40de-944b-e07dc4f5e1d2",
	"dXNlcjpzM2NyZXRQYXNz", "ZGVwbG95LWJvdDpaeDkhcUxtMiN2Ug==", "eyJwYXNzd29yZCI6Imh1bnRlcjJodW50ZXIyIn0=", "UvImZaYMEtKJGF2VDuiBNgkWb2sRPReNbA/TkB/yOaGglfIPk5VlDPk4C47bIkpr", "djE6MTcxODA5MzQ1MDoxMjM0NQ",
	"password%3Dhunter2hunter2", "Bearer%20Zq7Lm2Xp9Rt4Vw8Y", "%40example.com", "[REDACTED:jwt]", "[REDACTED:", "REDACTED",
}

func genText(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(24) {
		switch r.IntN(10) {
		case 0: // a random token
			const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/_-.~="
			for range 1 + r.IntN(48) {
				b.WriteByte(alpha[r.IntN(len(alpha))])
			}
		case 1: // digits, maybe grouped
			for range 1 + r.IntN(20) {
				b.WriteByte(byte('0' + r.IntN(10)))
				if r.IntN(6) == 0 {
					b.WriteByte(" -+"[r.IntN(3)])
				}
			}
		case 2: // an encoded fragment
			f := fragments[r.IntN(len(fragments))] + fragments[r.IntN(len(fragments))] + "Zq7Lm2Xp9Rt4Vw8Yb3Nc"
			if r.IntN(2) == 0 {
				b.WriteString(base64.StdEncoding.EncodeToString([]byte(f)))
			} else {
				b.WriteString(url.QueryEscape(f))
			}
		default:
			f := fragments[r.IntN(len(fragments))]
			if r.IntN(4) == 0 {
				f = randomCase(r, f)
			}
			b.WriteString(f)
		}
	}
	return b.String()
}

func randomCase(r *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if r.IntN(2) == 0 {
			switch {
			case 'a' <= c && c <= 'z':
				b[i] = c - 32
			case 'A' <= c && c <= 'Z':
				b[i] = c + 32
			}
		}
	}
	return string(b)
}

func genURL(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var b strings.Builder
	b.WriteString(pick("https://", "http://", "", "//", "ws://", "mailto:", "https:/", "HTTPS://"))
	b.WriteString(pick("", "", "", "admin:4827@", "user@", "ana:hunter2@", "a8f3c9d2e1b4f6a7c8d9e0f1@", ":pw@", "%zz@"))
	b.WriteString(pick("mcp.example.com", "localhost:8080", "10.0.0.5", "[::1]:443", "", "h", "ex ample.com", "mcp.example.com:"))
	for range r.IntN(4) {
		b.WriteString("/" + pick("mcp", "api", "v1", "report-2026", "Zk3q9XbW2mLp7Rt4Vn8Yc1Hd", "s", "messages", "a%20b", "%2F", "%zz", "ghp_0123456789abcdefghijABCDEFGHIJ0123", "dXNlcjpzM2NyZXRQYXNz", "", "é", "x y"))
	}
	if r.IntN(2) == 0 {
		b.WriteString("?")
		for k := range r.IntN(4) {
			if k > 0 {
				b.WriteString(pick("&", "&", ";", "&&"))
			}
			b.WriteString(pick("sessionId", "session_id", "SESSIONID", "cursor", "q", "token", "api_key", "state", "", "sig", "x"))
			b.WriteString(pick("=", "=", "", "=="))
			b.WriteString(pick("2", "88213377", "xY7kP2qLm9Rt4Vn8Zc3B", "caf%C3%A9", "%zz", "hello world", "ana%40example.com", "Bearer%20Zq7Lm2Xp9Rt4Vw8Y", "", "a+b", "4111111111111111", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2ln"))
		}
	}
	if r.IntN(4) == 0 {
		b.WriteString(pick("#frag", "#", "#token=abc123XYZ789qwe"))
	}
	return b.String()
}

// hostileJSON is valid and invalid JSON made to trip a tokenizer:
// repeated keys, deep nesting, numbers in every form, escapes, non-ASCII
// and invalid UTF-8.
func hostileJSON() [][]byte {
	xs := []string{
		`{}`, `[]`, `{"a":{}}`, `[[],[{}]]`, ` {"a":1} `, "\t\n\r{\"a\":1}\n", `{"a":1}x`, `{"a":1}{"b":2}`, `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`,
		`{"b":1,"a":2,"b":3}`, `{"a":1,"a":1}`, `{"a":[1],"a":{"x":2},"a":"s","a":null}`,
		`{"k":1,"k":2,"k":3,"k":4,"k":5,"k":6,"k":7,"k":8,"k":9,"k":10,"k":11,"k":12,"k":13,"k":14,"j":0,"k":15}`,
		`[0,-0,1,-1,0.5,-0.5,1e5,1E5,1e+5,1e-5,-1.25E-10,123456789012345678901234567890,0.000000000000000000001,1.0,10]`,
		`[01,1.,.5,+1,-,1e,1e+,0x10,NaN,Infinity,-Infinity,1_000]`, `[1 2]`, `[true,false,null]`, `[tru,fals,nul,nan]`, `[TRUE]`, `[nulll]`, `[truex]`,
		`{"s":"a\"b\\c\/d\b\f\n\r\t"}`, `{"u":"\u0041\u00e9\u65e5\ud83d\ude00"}`, `{"lone":"\ud800","low":"\udc00","pair-broken":"\ud800\u0041","two-high":"\ud800\ud800\udc00"}`,
		`{"\u0062":1,"a":2,"\u0061":3}`, `{"bad":"\x"}`, `{"bad":"\u12"}`, `{"bad":"\u12G4"}`, `{"ctl":"a` + "\x01" + `b"}`, `{"tab":"a` + "\t" + `b"}`,
		`{"é":"ü","日本語":"テスト","emoji":"😀","nbsp":"\u00a0","ls":"\u2028"}`, "{\"inv\":\"\xff\xfe\",\"\xc3\":1,\"trunc\":\"\xe6\x97\"}",
		`"just a string"`, `12`, `-3.5e2`, `true`, `null`, ` "s" `, ``, ` `, `[`, `{`, `"`, `"\"`, `{"a":"\\"}`, `{"a":"\\\\\"x"}`,
		`{"a":1 , "b" : [ 1 , 2 ] }`, `{"a":[1,[2,[3,[4]]]]}`, `{"sk-0123456789abcdefghijklmnopqrstuvwxyzABCD":1,"password":"x"}`,
		`{"ghp_0123456789abcdefghij0123456789ABCD":{"email@example.com":[1,2]}}`,
		`[{"a":1},{"a":2},{"b":1},{"c":1},{"d":1},{"e":1},{"f":1},{"g":1},{"h":1},{"i":1},{"a":1}]`,
		`[1,"s",true,null,{},[],1.5,"t",false,{"a":1},[1]]`,
	}
	for _, depth := range []int{31, 32, 33, 34, 40, 200, 5000} {
		xs = append(xs, strings.Repeat("[", depth)+"1"+strings.Repeat("]", depth))
		xs = append(xs, strings.Repeat(`{"a":`, depth)+`{"z":1,"b":2}`+strings.Repeat("}", depth))
		xs = append(xs, strings.Repeat("[", depth)+strings.Repeat("]", depth-1)) // unbalanced
	}
	out := make([][]byte, len(xs))
	for i, x := range xs {
		out[i] = []byte(x)
	}
	return out
}

// genJSON builds random JSON, valid mostly, with repeated keys, escapes,
// numbers of every form and now and then a broken byte.
func genJSON(r *rand.Rand) []byte {
	var b []byte
	var value func(depth int)
	keys := []string{"a", "b", "path", "query", "a", "\\u0061", "é", "Ä", "z\\n", "password", "ghp_0123456789abcdefghij0123456789ABCD", "", "k", "k", "K"}
	strs := []string{"", "x", "hello world", "a\\\"b", "\\\\", "\\u00e9\\ud83d\\ude00", "\\ud800", "日本語", "\xff", "tab\\there", "/etc/passwd", "line\\nbreak", "\\/", "ana@example.com", "\x7f"}
	nums := []string{"0", "-0", "1", "-1", "0.5", "1e10", "1E-7", "-2.5e+3", "123456789012345678901234567890", "3.14159"}
	value = func(depth int) {
		switch k := r.IntN(10); {
		case k < 2 && depth < 40:
			b = append(b, '{')
			for i := range r.IntN(6) {
				if i > 0 {
					b = append(b, ',')
				}
				if r.IntN(8) == 0 {
					b = append(b, ' ')
				}
				b = append(b, '"')
				b = append(b, keys[r.IntN(len(keys))]...)
				b = append(b, `":`...)
				value(depth + 1)
			}
			b = append(b, '}')
		case k < 4 && depth < 40:
			b = append(b, '[')
			for i := range r.IntN(6) {
				if i > 0 {
					b = append(b, ',')
				}
				value(depth + 1)
			}
			b = append(b, ']')
		case k < 6:
			b = append(b, '"')
			b = append(b, strs[r.IntN(len(strs))]...)
			b = append(b, '"')
		case k < 8:
			b = append(b, nums[r.IntN(len(nums))]...)
		default:
			b = append(b, []string{"true", "false", "null"}[r.IntN(3)]...)
		}
	}
	if r.IntN(3) == 0 {
		// Deep: start inside many containers.
		d := 20 + r.IntN(20)
		for range d {
			b = append(b, `{"n":[`...)
		}
		value(d)
		for range d {
			b = append(b, "]}"...)
		}
	} else {
		value(0)
	}
	if r.IntN(20) == 0 && len(b) > 0 {
		b[r.IntN(len(b))] = "\x00\"{}[],:\\x"[r.IntN(10)]
	}
	return b
}

var (
	equivKeyNew, _ = NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	equivKeyOld, _ = OldNewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
)

func sameCounts(t testing.TB, what string, in any, st *Stats, old *OldStats) {
	t.Helper()
	if n, o := st.Counts(), old.Counts(); !maps.Equal(n, o) {
		t.Errorf("%s %q: counts %v, before %v", what, in, n, o)
	}
}

func checkJSON(t testing.TB, raw []byte) {
	t.Helper()
	if h, o := equivKeyNew.HashJSON(raw), equivKeyOld.HashJSON(raw); h != o {
		t.Errorf("HashJSON(%q) = %s, before %s", raw, h, o)
	}
	var st Stats
	var ost OldStats
	if s, o := Shape(raw, &st), OldShape(raw, &ost); s != o {
		t.Errorf("Shape(%q)\n = %s\n before %s", raw, s, o)
	}
	sameCounts(t, "Shape", raw, &st, &ost)
}

func TestHashJSONMatchesBefore(t *testing.T) {
	baseRulesOnly(t)
	c := loadEquivCorpus(t)
	strict := 0
	var j jsonScratch
	for _, raw := range c.jsons {
		checkJSON(t, raw)
		if j.parse(raw) {
			strict++
		}
	}
	// The fast path must be what most of the corpus takes.
	if strict*10 < len(c.jsons)*8 {
		t.Errorf("only %d of %d JSON values took the fast path", strict, len(c.jsons))
	}
	t.Logf("%d JSON values, %d of them strict JSON", len(c.jsons), strict)
}

func checkMask(t testing.TB, s string) {
	t.Helper()
	var st Stats
	var ost OldStats
	if m, o := MaskWith(s, &st), OldMaskWith(s, &ost); m != o {
		t.Errorf("MaskWith(%q)\n = %q\n before %q", s, m, o)
	}
	sameCounts(t, "MaskWith", s, &st, &ost)
}

func TestMaskMatchesBefore(t *testing.T) {
	baseRulesOnly(t)
	c := loadEquivCorpus(t)
	changed := 0
	for _, s := range c.texts {
		checkMask(t, s)
		if Mask(s) != s {
			changed++
		}
	}
	if changed < 1000 {
		t.Errorf("only %d texts were changed: the corpus does not exercise the detectors", changed)
	}
	t.Logf("%d texts, %d of them masked", len(c.texts), changed)
}

func TestExcerptMatchesBefore(t *testing.T) {
	baseRulesOnly(t)
	c := loadEquivCorpus(t)
	for i, s := range c.texts {
		if i%7 != 0 {
			continue
		}
		for _, max := range []int{20, 160} {
			var st Stats
			var ost OldStats
			if e, o := ExcerptWith([]byte(s), max, &st), OldExcerptWith([]byte(s), max, &ost); e != o {
				t.Errorf("ExcerptWith(%q, %d)\n = %q\n before %q", s, max, e, o)
			}
			sameCounts(t, "ExcerptWith", s, &st, &ost)
		}
	}
}

func checkURL(t testing.TB, u string) {
	t.Helper()
	var st Stats
	var ost OldStats
	if s, o := SanitizeURL(u, equivKeyNew, &st), OldSanitizeURL(u, equivKeyOld, &ost); s != o {
		t.Errorf("SanitizeURL(%q)\n = %q\n before %q", u, s, o)
	}
	sameCounts(t, "SanitizeURL", u, &st, &ost)
}

func TestSanitizeURLMatchesBefore(t *testing.T) {
	baseRulesOnly(t)
	c := loadEquivCorpus(t)
	for _, u := range c.urls {
		checkURL(t, u)
	}
	t.Logf("%d URLs", len(c.urls))
}

func FuzzHashJSONMatchesBefore(f *testing.F) {
	baseRulesOnly(f)
	for _, x := range hostileJSON() {
		f.Add(x)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		f.Add(genJSON(r))
	}
	for _, a := range benchArguments(12) {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkJSON(t, raw) })
}

func FuzzMaskMatchesBefore(f *testing.F) {
	baseRulesOnly(f)
	for _, cases := range detectorCases {
		for _, c := range cases {
			f.Add(c.in)
		}
	}
	for _, c := range encodedCases {
		f.Add(c.in)
	}
	for _, s := range keepCases {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		f.Add(genText(r))
	}
	f.Fuzz(func(t *testing.T, s string) { checkMask(t, s) })
}

func FuzzSanitizeURLMatchesBefore(f *testing.F) {
	baseRulesOnly(f)
	r := rand.New(rand.NewPCG(1, 3))
	for range 100 {
		f.Add(genURL(r))
	}
	for _, u := range benchURLs() {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) { checkURL(t, u) })
}

// The generated inputs are what the tests say they are.
func TestEquivCorpus(t *testing.T) {
	c := loadEquivCorpus(t)
	if len(c.texts) < 25000 || len(c.jsons) < 4000 || len(c.urls) < 3000 {
		t.Errorf("corpus: %d texts, %d JSON values, %d URLs", len(c.texts), len(c.jsons), len(c.urls))
	}
	var repeated, deep int
	for _, j := range c.jsons {
		if bytes.Contains(j, []byte(`{"k":1,"k":2`)) {
			repeated++
		}
		if bytes.Count(j, []byte("[")) > 33 {
			deep++
		}
	}
	if repeated == 0 || deep < 10 {
		t.Errorf("hostile JSON: %d with repeated keys, %d deep", repeated, deep)
	}
}

// baseRulesOnly runs only the rules the implementation of before had (the
// rules of issue 13 came after it) until the test ends: the differential
// tests hold the engine to the old one on the old rules; the new rules
// have tests of their own (detect_more_test.go). Tests that call it must
// not run in parallel with others.
func baseRulesOnly(t testing.TB) {
	t.Helper()
	old := activeRules
	activeRules = len(baseDetectors)
	t.Cleanup(func() { activeRules = old })
}

// For the row-level test in the external package (exchange_equiv_test.go).

// BaseRulesOnlyForTest is baseRulesOnly.
func BaseRulesOnlyForTest(t testing.TB) { baseRulesOnly(t) }

// EquivCorpusForTest returns the differential corpus.
func EquivCorpusForTest(t testing.TB) (texts []string, jsons [][]byte, urls []string) {
	c := loadEquivCorpus(t)
	return c.texts, c.jsons, c.urls
}

// UndoCompressionForTest undoes gzip, zlib or zstd as ingest does.
func UndoCompressionForTest(t testing.TB, p string, b []byte) []byte { return undoCompression(t, p, b) }

// Texts with nothing suspicious in them (no keyword followed by what
// separates a key from its value or a scheme from its credentials) are
// masked without allocating; so are the fields a worker leaves as they are.
func TestPlainTextsAllocateNothing(t *testing.T) {
	suspicious := regexp.MustCompile(`(?i)(token|key|passw\w*|secret|auth\w*|bearer|basic|digest|cookie|session\w*|name\\*")\s*[:="\s]`)
	var texts []string
	for _, l := range readCorpus(t) {
		if !suspicious.MatchString(l) {
			texts = append(texts, l)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		texts = append(texts, benchText(r, 50+r.IntN(2000)))
	}
	if len(texts) < 600 {
		t.Fatalf("only %d texts", len(texts))
	}
	if raceDetector {
		t.Skip("the race detector's instrumentation allocates: run without -race to count allocations")
	}
	for _, s := range texts {
		if Mask(s) != s {
			continue // the two false positives of TestFalsePositives
		}
		if a := testing.AllocsPerRun(3, func() { MaskWith(s, nil) }); a != 0 {
			t.Errorf("MaskWith(%q) allocates %v times", s, a)
		}
	}
	rd := &Redactor{Policy: DefaultPolicy(), Pseud: equivKeyNew, Stats: &Stats{}}
	w := rd.Worker()
	defer w.Release()
	name, ver, msg, u := "claude-code", "2.1.3", "upstream index unavailable", "https://mcp.example.com/mcp"
	fields := []*string{&name, &ver, &msg}
	url := &u
	w.Optional("exchanges.client_name", &fields[0]) // fills the memos
	w.URL("exchanges.url", &url)
	if a := testing.AllocsPerRun(100, func() {
		w.Optional("exchanges.client_name", &fields[0])
		w.Optional("exchanges.client_version", &fields[1])
		w.Optional("exchanges.error_message", &fields[2])
		w.URL("exchanges.url", &url)
	}); a != 0 || fields[0] != &name || url != &u {
		t.Errorf("unchanged fields: %v allocations, pointers kept: %v %v", a, fields[0] == &name, url == &u)
	}
}
