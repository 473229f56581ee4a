package redact

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDefaultPolicyIsSafe(t *testing.T) {
	p := DefaultPolicy()
	if a := p.Action("exchanges.session_id"); a.Kind != Pseudonymize {
		t.Errorf("session_id: %v", a)
	}
	if a := p.Action("exchanges.tool_error_text"); a.Kind != Drop {
		t.Errorf("tool_error_text: %v", a)
	}
	if a := p.Action("exchanges.no_such_field"); a.Kind != Drop {
		t.Errorf("an unnamed field must be dropped: %v", a)
	}
	for _, f := range Fields {
		if a := p.Action(f.Name); a.Kind == Keep && f.Name != "exchanges.source" && f.Name != "quarantine.source" && f.Name != "exchanges.arguments_shape" {
			t.Errorf("%s is kept raw by default", f.Name)
		}
	}
	y := p.YAML()
	if !strings.Contains(y, "exchanges.error_data: truncate(512)") || !strings.Contains(y, "fields:") {
		t.Errorf("YAML:\n%s", y)
	}
}

func TestLoadPolicyFailsClosed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	p, err := LoadPolicy(write("ok.yaml", "fields:\n  exchanges.error_message: truncate(20)\n  exchanges.session_id: keep\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Action("exchanges.error_message") != (Action{Kind: Truncate, N: 20}) || p.Action("exchanges.reason").Kind != Drop {
		t.Errorf("loaded: %v %v", p.Action("exchanges.error_message"), p.Action("exchanges.reason"))
	}
	key, _ := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	rd := &Redactor{Policy: p, Pseud: key, Stats: &Stats{}}
	if v, ok := rd.Text("exchanges.error_message", "denied for ops@example.com because the quota is exhausted"); !ok || strings.Contains(v, "ops@") || len([]rune(v)) > 21 {
		t.Errorf("truncate: %q", v)
	}
	if _, ok := rd.Text("exchanges.reason", "anything"); ok {
		t.Error("an unnamed field was kept")
	}
	reason := "text"
	rd.Required("exchanges.reason", &reason)
	if reason != "" {
		t.Errorf("dropped required field: %q", reason)
	}
	for name, text := range map[string]string{
		"unknown field":  "fields:\n  exchanges.password: keep\n",
		"unknown action": "fields:\n  exchanges.reason: shred\n",
		"bad truncate":   "fields:\n  exchanges.reason: truncate(-1)\n",
		"unknown key":    "feilds:\n  exchanges.reason: keep\n",
		"not yaml":       "fields: [\n",
	} {
		if _, err := LoadPolicy(write("bad.yaml", text)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := LoadPolicy(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func TestArgumentsHashAndShape(t *testing.T) {
	k1, _ := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	k2, _ := NewPseudonymizer("k2", []byte("fedcba9876543210fedcba9876543210"))
	a := []byte(`{"path":"/etc/passwd","opts":{"recursive":true,"depth":3},"tags":["a","b"]}`)
	b := []byte(`{ "tags": ["a", "b"], "opts": {"depth": 3, "recursive": true}, "path": "/etc/passwd" }`)
	c := []byte(`{"path":"/etc/shadow","opts":{"recursive":true,"depth":3},"tags":["a","b"]}`)
	if k1.HashJSON(a) != k1.HashJSON(b) {
		t.Error("the same arguments in another key order hash differently")
	}
	if k1.HashJSON(a) == k1.HashJSON(c) || k1.HashJSON(a) == k2.HashJSON(a) || !strings.HasPrefix(k1.HashJSON(a), "k1:") {
		t.Error("hashes do not tell arguments or keys apart")
	}
	sh := Shape(a, nil)
	if sh != `{"opts":{"depth":"number","recursive":"boolean"},"path":"string","tags":["string"]}` {
		t.Errorf("shape %s", sh)
	}
	if strings.Contains(Shape([]byte(`{"ghp_0123456789abcdefghij0123456789ABCD":1}`), nil), "ghp_0123") {
		t.Error("a secret used as a key survives in the shape")
	}
}

func TestSanitizeURL(t *testing.T) {
	key, _ := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	st := &Stats{}
	cases := []struct{ in, mustNot, must string }{
		{"http://admin:4827@localhost:8080/mcp", "4827", "localhost:8080/mcp"},
		{"https://a8f3c9d2e1b4f6a7c8d9e0f1@10.0.0.5/mcp", "a8f3c9d2", "10.0.0.5/mcp"},
		{"https://mcp.example.com/messages?sessionId=88213377", "88213377", "sessionId="},
		{"https://actions.zapier.com/api/mcp/s/Zk3q9XbW2mLp7Rt4Vn8Yc1Hd/mcp", "Zk3q9XbW2mLp7Rt4Vn8Yc1Hd", "/api/mcp/s/"},
		{"https://h/mcp?cursor=2&state=xY7kP2qLm9Rt4Vn8Zc3B", "xY7kP2qLm9Rt4Vn8Zc3B", "cursor=2"},
		{"https://h/v1/report-2026/mcp?q=weather", "", "report-2026"},
	}
	for _, c := range cases {
		got := SanitizeURL(c.in, key, st)
		if (c.mustNot != "" && strings.Contains(got, c.mustNot)) || !strings.Contains(got, c.must) {
			t.Errorf("SanitizeURL(%s) = %s", c.in, got)
		}
	}
	if st.Counts()["url_userinfo"] != 2 || st.Counts()["url_path"] != 1 {
		t.Errorf("counts %v", st.Counts())
	}
}

func TestMoreShapes(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"posted to https://discord.com/api/webhooks/123456789012345678/Kx9_abcDEFghiJKLmnoPQRstuVWXyz0123456789", "Kx9_abcDEFghiJKLmnoPQRstu"},
		{"GET https://api.telegram.org/bot123456789:AAH9xYzAbCdEfGhIjKlMnOpQrStUvWxYz12/sendMessage", "AAH9xYzAbCdEfGhIjKlMnOpQ"},
		{"https://acme.webhook.office.com/webhookb2/3f2a1b0c-aaaa-bbbb-cccc-1234567890ab@deadbeef/IncomingWebhook/abc", "3f2a1b0c-aaaa-bbbb-cccc"},
		{"command failed: curl -u deploy:Winter2024!x https://ci.example/api", "Winter2024!x"},
	} {
		if got := Mask(c.in); strings.Contains(got, c.secret) {
			t.Errorf("Mask(%q) = %q", c.in, got)
		}
	}
}

// A bad policy file is reported by its line and field, never by what it
// holds: a secret pasted into it stays out of the error (and so out of the
// log line that reports it).
func TestPolicyErrorsNameLineNotValue(t *testing.T) {
	const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dcPOLICY"
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		line       int
		field      string
	}{
		{"action", "fields:\n  exchanges.session_id: keep\n  exchanges.reason: " + secret + "\n", 3, "exchanges.reason"},
		{"quoted action", "fields:\n  exchanges.reason: \"" + secret + "\"\n", 2, "exchanges.reason"},
		{"action list", "fields:\n  exchanges.reason:\n    - " + secret + "\n", 3, "exchanges.reason"},
		{"unknown field", "fields:\n  exchanges.reason: keep\n  " + secret + ": keep\n", 3, ""},
		{"unknown key", "# policy\n" + secret + ":\n  exchanges.reason: keep\n", 2, ""},
		{"bad truncate", "fields:\n\n  exchanges.error_data: truncate(" + secret + ")\n", 3, "exchanges.error_data"},
		{"duplicate", "fields:\n  exchanges.reason: keep\n  exchanges.reason: " + secret + "\n", 3, "exchanges.reason"},
		{"not yaml", "fields:\n  exchanges.reason: keep\n  password: \"" + secret + "\n  x: [\n", 0, ""},
		{"not yaml tab", "fields:\n\t" + secret + ": keep\n", 2, ""},
		{"not a mapping", "- " + secret + "\n", 1, ""},
		{"fields not a mapping", "fields: " + secret + "\n", 1, ""},
	} {
		p := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPolicy(p)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		for _, frag := range []string{secret, secret[8:20], "4eC39Hq"} {
			if strings.Contains(msg, frag) {
				t.Errorf("%s: the error quotes the file: %s", c.name, msg)
			}
		}
		if !strings.Contains(msg, p) {
			t.Errorf("%s: the error does not name the file: %s", c.name, msg)
		}
		if c.line > 0 && !strings.Contains(msg, "line "+strconv.Itoa(c.line)+":") {
			t.Errorf("%s: the error does not name line %d: %s", c.name, c.line, msg)
		}
		if c.field != "" && !strings.Contains(msg, c.field) {
			t.Errorf("%s: the error does not name field %s: %s", c.name, c.field, msg)
		}
		t.Logf("%s: %s", c.name, msg)
	}
}
