package redact

import (
	"bufio"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets of this file hold the redactor, the URL sanitiser and
// the policy loader to properties that hold for any input (.ci/fuzz runs
// each for a few seconds).

// detected reports the spans the detectors still find in s (none, for a
// text Mask returned).
func detected(s string) []span {
	d := detection{budget: decodeBudget + 4*len(s)}
	return d.detect(s, 0, nil)
}

// sampleTexts are seeds from samples/: lines of the sample logs, which
// hold the ids, URLs, error messages and tokens the redactor meets.
func sampleTexts(tb testing.TB, max int) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".zhar") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 0; sc.Scan() && n < 8; n++ {
			if l := sc.Text(); l != "" {
				out = append(out, l[:min(len(l), max)])
			}
		}
		return sc.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// FuzzRedact: masking is a fixed point (Mask(Mask(s)) == Mask(s)), a
// masked text holds no detector match, every marker it adds names a rule,
// and every field the default policy masks comes out masked (one it
// truncates, a prefix of the masked text), the same from the Redactor and
// a Worker.
func FuzzRedact(f *testing.F) {
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
	for _, s := range sampleTexts(f, 2048) {
		f.Add(s)
	}
	rules := map[string]bool{"path": true, "query": true}
	for _, r := range Rules() {
		rules[r] = true
	}
	r := &Redactor{Policy: DefaultPolicy(), Pseud: equivKeyNew, Stats: &Stats{}}
	f.Fuzz(func(t *testing.T, s string) {
		m := Mask(s)
		if mm := Mask(m); mm != m {
			t.Fatalf("not a fixed point:\n in  %q\n 1st %q\n 2nd %q", s, m, mm)
		}
		if sp := detected(m); len(sp) > 0 {
			t.Fatalf("a detector (%s) still matches %q in the masked %q", detectors[sp[0].rule].name, m[sp[0].start:sp[0].end], m)
		}
		for rest := m; ; {
			i := strings.Index(rest, marker)
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				break
			}
			if name := rest[:j]; !rules[name] && !strings.Contains(name, "[") && !strings.Contains(s, marker+name+"]") {
				t.Fatalf("a marker naming no rule (%q) in %q", name, m)
			}
		}
		w := r.Worker()
		defer w.Release()
		for _, fd := range Fields {
			a := r.Policy.Action(fd.Name)
			if a.Kind != MaskAction && a.Kind != Truncate {
				continue
			}
			got, ok := r.Text(fd.Name, s)
			again, ok2 := w.Text(fd.Name, s)
			if !ok || !ok2 || got != again {
				t.Fatalf("%s: Redactor %q (%v), Worker %q (%v)", fd.Name, got, ok, again, ok2)
			}
			if a.Kind == MaskAction && got != m {
				t.Fatalf("%s: %q, Mask %q", fd.Name, got, m)
			}
			// truncate(N) masks, then cuts: a prefix of the masked text
			// (the cut may make the detectors read its end anew, as a
			// value cut before its closing quote; what is left of it
			// was cleared whole; invalid UTF-8 reads as U+FFFD).
			if a.Kind == Truncate && got != m && (utf8.RuneCountInString(got) > a.N+1 || !strings.HasPrefix(string([]rune(m)), strings.TrimSuffix(got, "…"))) {
				t.Fatalf("%s: %q is not the first %d runes of the masked %q", fd.Name, got, a.N, m)
			}
		}
		for _, n := range []int{16, 160} {
			e := Excerpt([]byte(s), n)
			if utf8.RuneCountInString(e) > n+1 || !utf8.ValidString(e) {
				t.Fatalf("Excerpt(%d) = %q", n, e)
			}
			if e != Excerpt([]byte(s), n) {
				t.Fatalf("Excerpt(%d) of one input differs", n)
			}
		}
	})
}

// FuzzSanitizeURL: the sanitised URL holds no detector match, no user
// information, no fragment, no query value that looks random, and comes
// out the same twice.
func FuzzSanitizeURL(f *testing.F) {
	for _, u := range benchURLs() {
		f.Add(u)
	}
	for _, s := range sampleTexts(f, 4096) {
		for _, field := range strings.Split(s, `"`) {
			if strings.HasPrefix(field, "http") {
				f.Add(field)
			}
		}
	}
	f.Add("https://user:hunter2@h.example/mcp/abcdEFGH1234ijklMNOP5678?api_key=sk-live-1234567890abcdefABCDEF&sessionId=x#frag")
	f.Fuzz(func(t *testing.T, raw string) {
		var st Stats
		got := SanitizeURL(raw, equivKeyNew, &st)
		if again := SanitizeURL(raw, equivKeyNew, nil); again != got {
			t.Fatalf("SanitizeURL(%q) = %q, then %q", raw, got, again)
		}
		if sp := detected(got); len(sp) > 0 {
			t.Fatalf("SanitizeURL(%q) = %q: a detector (%s) matches %q", raw, got, detectors[sp[0].rule].name, got[sp[0].start:sp[0].end])
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme == "" && u.Host == "" && u.RawQuery == "") {
			if got != Mask(raw) {
				t.Fatalf("SanitizeURL(%q) = %q, not Mask's %q", raw, got, Mask(raw))
			}
			return
		}
		if p, ok := u.User.Password(); ok && len(p) >= 4 && strings.Contains(got, ":"+p+"@") {
			t.Fatalf("SanitizeURL(%q) = %q keeps the password", raw, got)
		}
		if u.User != nil && u.User.Username() != "" && strings.Contains(got, u.User.String()+"@") {
			t.Fatalf("SanitizeURL(%q) = %q keeps the user information", raw, got)
		}
		if u.Fragment != "" && len(u.Fragment) >= 4 && strings.HasSuffix(got, "#"+u.EscapedFragment()) {
			t.Fatalf("SanitizeURL(%q) = %q keeps the fragment", raw, got)
		}
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, v, _ := strings.Cut(kv, "=")
			dv, err := url.QueryUnescape(v)
			if err != nil {
				dv = v
			}
			if strings.EqualFold(k, "sessionId") || strings.EqualFold(k, "session_id") {
				continue
			}
			if looksRandom(dv) && strings.Contains(got, v) {
				t.Fatalf("SanitizeURL(%q) = %q keeps the random query value %q", raw, got, v)
			}
		}
	})
}

// FuzzLoadPolicy: any file either loads or fails with an error naming the
// file; a policy that loads names only known fields with valid actions,
// and its YAML rendering loads again as the same policy.
// policyErrorWords are the words LoadPolicy's errors are made of (field
// names and actions): a value that is one of them is not an echo.
var policyErrorWords = func() string {
	var b strings.Builder
	for _, fd := range Fields {
		b.WriteString(fd.Name + " ")
	}
	return b.String() + " keep, pseudonymize, mask, truncate(N) (N > 0) or drop not valid YAML (run ingest -print-policy for a valid one) fields"
}()

func FuzzLoadPolicy(f *testing.F) {
	f.Add("fields:\n  exchanges.url: trunc(sk_live_abcdefghijklmnop)\n")
	f.Add("fields:\n  exchanges.url: [sk_live_abcdefghijklmnop\n")
	f.Add("fields:\n  exchanges.error_message: {ghp_abcdefghijklmnopqrstuvwxyz0123456789: 1}\n")
	f.Add(DefaultPolicy().YAML())
	f.Add("fields:\n  exchanges.session_id: pseudonymize\n  exchanges.error_message: truncate(200)\n")
	f.Add("fields:\n  exchanges.url: truncate( 12 )\n  quarantine.excerpt: drop\n")
	f.Add("fields:\n  exchanges.nope: keep\n")
	f.Add("fields:\n  exchanges.url: truncate(0)\n")
	f.Add("fields: [1, 2]\n")
	f.Add("other: 1\n")
	f.Add("fields:\n  exchanges.url: &a mask\n  exchanges.reason: *a\n")
	f.Add("")
	dir := f.TempDir()
	known := map[string]bool{}
	for _, fd := range Fields {
		known[fd.Name] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		path := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := LoadPolicy(path)
		if err != nil {
			if p != nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v with policy %v", err, p)
			}
			// It names the file, the line and the field, never a value:
			// no value of 8 bytes or more is in the message (unless the
			// message has it anyway, in the path or its own words).
			msg := strings.ReplaceAll(err.Error(), path, "")
			for _, line := range strings.Split(text, "\n") {
				_, v, ok := strings.Cut(line, ":")
				if v = strings.TrimSpace(v); !ok || len(v) < 8 || strings.Contains(policyErrorWords, v) {
					continue
				}
				if strings.Contains(msg, v) {
					t.Fatalf("the error echoes the value %q: %v", v, err)
				}
			}
			return
		}
		for name, a := range p.actions {
			if !known[name] {
				t.Fatalf("loaded unknown field %q", name)
			}
			if b, err := ParseAction(a.String()); err != nil || b != a {
				t.Fatalf("%s: action %+v renders as %q, which reads back as %+v, %v", name, a, a.String(), b, err)
			}
		}
		again := filepath.Join(dir, "again.yaml")
		if err := os.WriteFile(again, []byte(p.YAML()), 0o600); err != nil {
			t.Fatal(err)
		}
		q, err := LoadPolicy(again)
		if err != nil {
			t.Fatalf("the YAML of a loaded policy does not load: %v\n%s", err, p.YAML())
		}
		for _, fd := range Fields {
			if p.Action(fd.Name) != q.Action(fd.Name) {
				t.Fatalf("%s: %v, after a round trip %v", fd.Name, p.Action(fd.Name), q.Action(fd.Name))
			}
		}
	})
}
