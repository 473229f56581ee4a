package redact

import (
	"strings"
	"testing"
)

func TestPseudonyms(t *testing.T) {
	a, err := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	b, _ := NewPseudonymizer("k2", []byte("fedcba9876543210fedcba9876543210"))
	x := a.Pseudonym("session-123")
	if x != a2.Pseudonym("session-123") {
		t.Error("same key, different pseudonyms")
	}
	if x == a.Pseudonym("session-124") {
		t.Error("different values, same pseudonym")
	}
	if y := b.Pseudonym("session-123"); y == x || !strings.HasPrefix(y, "k2:") {
		t.Errorf("other key: %s vs %s", y, x)
	}
	if !strings.HasPrefix(x, "k1:") || strings.Contains(x, "session") || len(x) != len("k1:")+22 {
		t.Errorf("pseudonym shape: %s", x)
	}
	if _, err := NewPseudonymizer("k1", []byte("short")); err == nil {
		t.Error("short key accepted")
	}
	if _, err := NewPseudonymizer("a:b", []byte("0123456789abcdef")); err == nil {
		t.Error("key id with a colon accepted")
	}
	if r1, r2 := RandomPseudonymizer(), RandomPseudonymizer(); r1.Pseudonym("s") == r2.Pseudonym("s") {
		t.Error("random keys collide")
	}
}

func TestMask(t *testing.T) {
	cases := []struct{ in, secret, rule string }{
		{"Authorization: Bearer abcDEF123456789xyz", "abcDEF123456789xyz", "bearer"},
		{"token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlX2hlcmU expired", "eyJzdWIiOiIxMjMifQ", "jwt"},
		{"key AKIAIOSFODNN7EXAMPLE rejected", "AKIAIOSFODNN7EXAMPLE", "aws_key"},
		{"bad ghp_0123456789abcdefghijABCDEFGHIJ0123", "ghp_0123456789abcdefghij", "github_token"},
		{"slack xoxb-123456789012-abcdefghij", "xoxb-123456789012", "slack_token"},
		{"stripe sk_live_0123456789abcdef", "sk_live_0123456789abcdef", "stripe_key"},
		{"upstream said sk-proj-0123456789abcdefABCD", "sk-proj-0123456789abcdefABCD", "api_key"},
		{"GET /x?api_key=s3cr3tvalue&x=1", "s3cr3tvalue", "assignment"},
		{`{"password": "hunter2hunter2"}`, "hunter2hunter2", "assignment"},
		{"contact ops.team+mcp@example.co.uk now", "ops.team+mcp@example.co.uk", "email"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA", "private_key"},
	}
	for _, c := range cases {
		got := Mask(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "[REDACTED:"+c.rule+"]") {
			t.Errorf("Mask(%q) = %q, want %s redacted", c.in, got, c.rule)
		}
	}
	for _, keep := range []string{
		"Invalid params: path /var/data/report-2026-10-17.csv not found",
		"request 7c9e6679-7425-40de-944b-e07dc4f5e1d2 timed out after 30000 ms",
		"Tool-side failure",
		"MCP error -32602: Tool search not found",
	} {
		if got := Mask(keep); got != keep {
			t.Errorf("Mask changed ordinary text: %q -> %q", keep, got)
		}
	}
}

func TestExcerpt(t *testing.T) {
	got := Excerpt([]byte("a\x00b\nc\xffd Bearer abcdefghijklmnop "+strings.Repeat("z", 500)), 60)
	if strings.Contains(got, "abcdefghijklmnop") || !strings.Contains(got, `a\x00b\nc`) || !strings.Contains(got, "\uFFFD") {
		t.Errorf("excerpt %q", got)
	}
	if n := len([]rune(got)); n > 61 {
		t.Errorf("excerpt has %d runes", n)
	}
}

func TestMaskEscapedJSON(t *testing.T) {
	// Inside a wire log line, bodies are JSON strings: quotes are escaped.
	in := `"body":"{\"password\":\"hunter2hunter2\",\"api_key\":\"abcd1234efgh\"}"`
	got := Mask(in)
	if strings.Contains(got, "hunter2") || strings.Contains(got, "abcd1234efgh") {
		t.Errorf("escaped secrets survive: %s", got)
	}
}

func TestMaskHeaderPairs(t *testing.T) {
	in := `"headers":[{"name":"x-api-key","value":"AbCdEf0123456789"},{"name":"Authorization","value":"ck_live_9a8b7c"},{"name":"Cookie","value":"sid=s%3Aabc.def"},{"name":"Accept","value":"text/event-stream"}]`
	got := Mask(in)
	for _, secret := range []string{"AbCdEf0123456789", "ck_live_9a8b7c", "s%3Aabc.def"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s survives: %s", secret, got)
		}
	}
	if !strings.Contains(got, `"value":"text/event-stream"`) || !strings.Contains(got, `"name":"x-api-key","value":"[REDACTED:header]"`) {
		t.Errorf("masked too much or in the wrong place: %s", got)
	}
}
