package pipeline

import (
	"strings"
	"testing"
	"time"

	"mcptrace/redact"
	"mcptrace/schema"
)

// The leaks the red team of issue 13 found, each in the places it found
// them: error_message, error_data and quarantine.excerpt (of a bad record
// and of a file that matched no format), under the default policy.
func TestIssue13Leaks(t *testing.T) {
	leaks := []struct{ name, text, secret string }{
		{"groq", "groq rejected gsk_Wb3xQ9mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4nAbCdEfGh", "Wb3xQ9mZ2vN4xL7pR1sT6wY9"},
		{"digitalocean", "doctl: dop_v1_4f0c2e9b7a1d3c5e8f6a0b2d4c6e8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a unauthorized", "4f0c2e9b7a1d3c5e8f6a0b2d"},
		{"databricks", "workspace token dapi4f0c2e9b7a1d3c5e8f6a0b2d4c6e8a0b is invalid", "4f0c2e9b7a1d3c5e8f6a0b2d"},
		{"twilio auth token", "Twilio auth token 4f0c2e9b7a1d3c5e8f6a0b2d4c6e8a0b was rejected", "4f0c2e9b7a1d3c5e8f6a0b2d"},
		{"pgpass", "could not read db.prod.example:5432:billing:svc_billing:Qm7#zV2pL9wX", "Qm7#zV2pL9wX"},
		{"netrc", "machine api.example.com login deploy password Qm7zV2pL9wXr", "Qm7zV2pL9wXr"},
		{"email:password", "line 3: ana.lopez@example.com:Qm7zV2pL9wXr", "Qm7zV2pL9wXr"},
		{"phone +1", "caller +1 415-555-0199 asked for a refund", "415-555-0199"},
		{"phone +44", "office +44 20 7946 0958 closed", "7946 0958"},
		{"ssn", "SSN 123-45-6789 does not match", "123-45-6789"},
	}
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	rd := &redact.Redactor{Policy: redact.DefaultPolicy(), Pseud: key, Stats: &redact.Stats{}}
	for _, l := range leaks {
		msg := l.text
		data := `{"detail":"` + l.text + `","retry":false}`
		e := RedactExchange(schema.Exchange{Source: "x.ndjson", Method: "tools/call", Reason: "r", ErrorMessage: &msg, ErrorData: &data}, rd)
		for col, v := range map[string]*string{"error_message": e.ErrorMessage, "error_data": e.ErrorData} {
			if v == nil || strings.Contains(*v, l.secret) || !strings.Contains(*v, "[REDACTED:") {
				t.Errorf("%s: exchanges.%s = %v", l.name, col, opt(v))
			}
		}
		for _, reason := range []string{"not_json", ReasonUnknownFormat} {
			q := quarantineRow(rd, "logs/dump.log", 1, time.Now(), reason, "bad", 99, []byte(`{"oops": "`+l.text+`"`))
			if strings.Contains(q.Excerpt, l.secret) || !strings.Contains(q.Excerpt, "[REDACTED:") {
				t.Errorf("%s: quarantine.excerpt (%s) = %q", l.name, reason, q.Excerpt)
			}
		}
	}
	// Credential files in a walked directory: the excerpt goes.
	for name, text := range map[string]string{
		"home/ana/.pgpass":     "db.prod.example:5432:billing:svc_billing:Qm7zV2pL9wXr\n",
		"home/ana/.netrc":      "machine api.example.com\n  login deploy\n  password Qm7zV2pL9wXr\n",
		"exports/users.tsv":    "ana\tQm7zV2pL9wXr\nbob\tQm7zV2pL9wXs\n",
		"exports/logins.txt":   "ana@example.com:Qm7zV2pL9wXr\nbob@example.com:Qm7zV2pL9wXs\n",
		"srv/app/.env":         "DB_PASSWORD=Qm7zV2pL9wXr\n",
		"home/ana/credentials": "[default]\naws_secret_access_key = Qm7zV2pL9wXr\n",
	} {
		q := quarantineRow(rd, name, 1, time.Now(), ReasonUnknownFormat, "matches none of the formats", int64(len(text)), []byte(text))
		if q.Excerpt != redact.DroppedExcerpt {
			t.Errorf("%s: excerpt %q, want it dropped", name, q.Excerpt)
		}
	}
}

func opt(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
