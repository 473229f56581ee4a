package redact

import (
	"strings"
	"testing"
)

// Cases for the rules of issue 13 (detect_more.go), added to detectorCases
// and keepCases so that TestDetectors, TestKeepsNearMisses and FuzzMask see
// them. Every secret is made up.
var moreDetectorCases = map[string][]detCase{
	"ai_api_key": {
		{"groq: 401 for key gsk_Wb3xQ9mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4nAbCdEfGh", "gsk_Wb3xQ9mZ2vN4xL7pR1sT6wY9b"},
		{"replicate r8_Q8mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4nXy", "Q8mZ2vN4xL7pR1sT6wY9bC3d"},
		{"perplexity 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 rejected", "a1B2c3D4e5F6g7H8i9J0"},
		{"xai-" + strings.Repeat("Zq7Lm2Xp9Rt4Vw8Y", 5) + " is invalid", "Zq7Lm2Xp9Rt4Vw8YZq7Lm2Xp9Rt4"},
		{"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 expired", "Zq7Lm2Xp9Rt4Vw8Y_b3Nc"},
		{"pinecone pcsk_4Fg7Ht_Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4 denied", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"LANGSMITH lsv2_pt_0123456789abcdef0123456789abcdef_0a1b2c3d4e", "0123456789abcdef0123456789abcdef"},
		{"firecrawl key fc-0123456789abcdef0123456789abcdef expired", "0123456789abcdef0123456789abcdef"},
		{"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 quota", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"org api_org_QmZvNxLpRsTwYbCdFgHjKlMnAbCdEfGhIjKl", "QmZvNxLpRsTwYbCdFgHjKl"},
		{"xi-api-key sk_0123456789abcdef0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
	},
	"cloud_token": {
		{"doctl: dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef unauthorized", "0123456789abcdef0123456789abcdef"},
		{"oauth doo_v1_fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", "fedcba9876543210fedcba98"},
		{"refresh dor_v1_a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2", "a1b2c3d4e5f6a7b8c9d0a1b2"},
		{"databricks PAT dapi0123456789abcdef0123456789abcdef rejected", "dapi0123456789abcdef0123"},
		{"databricks: dapi0123456789abcdef0123456789abcdef-3", "0123456789abcdef0123456789abcdef"},
		{"alibaba LTAI5tQ8mZ2vN4xL7pR1sT6w denied", "LTAI5tQ8mZ2vN4xL7pR1"},
		{"client 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X invalid_client", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"vault hvs." + strings.Repeat("CAESIJ4Zq7Lm2Xp9Rt4", 5) + " permission denied", "CAESIJ4Zq7Lm2Xp9Rt4CAESIJ4"},
		{"tf Zq7Lm2Xp9Rt4Vw.atlasv1." + strings.Repeat("Zq7Lm2Xp9Rt4Vw8Yb3Nc", 4) + " unauthorized", "atlasv1.Zq7Lm2Xp9Rt4Vw8Yb3Nc"},
		{"supabase sbp_0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef"},
		{"doppler dp.pt.Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"pulumi pul-0123456789abcdef0123456789abcdef01234567 expired", "0123456789abcdef0123456789abcdef"},
		{"AADSTS7000215: secret Abc8Q~Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4V is invalid", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
	},
	"dev_token": {
		{"docker login: dckr_pat_Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2X denied", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"jira ATATT3" + strings.Repeat("xFfGF0Zq7Lm2Xp9Rt4Vw8Yb3Nc5", 7) + "=A1B2C3D4 unauthorized", "xFfGF0Zq7Lm2Xp9Rt4Vw8"},
		{"postman PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "0123456789abcdef01234567"},
		{"sentry sntrys_eyJpYXQiOjE3MTgwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8ifQ_Zq7Lm2Xp9Rt4Vw8Yb3Nc5", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"grafana glsa_Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt_0a1b2c3d", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"grafana cloud glc_eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTEyMzQ1Ni1obSIsImsiOiJaMTIzIn0=", "eyJvIjoiMTIzNDU2Iiwi"},
		{"newrelic NRAK-ZQ7LM2XP9RT4VW8YB3NC5ZQ7LM2 forbidden", "ZQ7LM2XP9RT4VW8YB3NC5"},
		{"linear lin_api_Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4Vw8Yb3N", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"shopify shpat_0123456789abcdef0123456789abcdef: 401", "0123456789abcdef0123456789abcdef"},
		{"gem push rubygems_0123456789abcdef0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"pscale_tkn_Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4Vw8Yb3Nc expired", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"AGE-SECRET-KEY-1QYZ8XVRJ6W4L5G2T9K3M7N0P8H6F4D2S0A8C6E4QYZ8XVRJ6W4L5G2T9K3M7N", "QYZ8XVRJ6W4L5G2T9K3M7N0P"},
	},
	"payment_key": {
		{"square sq0atp-Zq7Lm2Xp9Rt4Vw8Yb3Nc5A unauthorized", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5A"},
		{"square secret sq0csp-Zq7Lm2Xp9Rt4Vw8Yb3Nc5AZq7Lm2Xp9Rt4Vw8Yb3Nc5A_-12", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5A"},
		{"square EAAAEZq7Lm2Xp9Rt4Vw8Yb3Nc5AZq7Lm2Xp9Rt4Vw8Yb3Nc5AZq7Lm2Xp9Rt4Vw8Y", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5A"},
		{"braintree access_token$production$zq7lm2xp9rt4vw8y$0123456789abcdef0123456789abcdef", "zq7lm2xp9rt4vw8y$0123"},
		{"razorpay rzp_live_Zq7Lm2Xp9Rt4Vw failed", "Zq7Lm2Xp9Rt4Vw"},
		{"FLWSECK_TEST-0123456789abcdef0123456789abcdef-X", "0123456789abcdef0123456789abcdef"},
		{"plaid access-production-3f2a1b0c-aaaa-4bbb-8ccc-1234567890ab revoked", "3f2a1b0c-aaaa-4bbb-8ccc"},
	},
	"messaging_token": {
		{"twilio SK0123456789abcdef0123456789abcdef denied", "0123456789abcdef0123456789abcdef"},
		{"account AC0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"mailgun key-0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"mailchimp 0123456789abcdef0123456789abcdef-us21 invalid", "0123456789abcdef0123456789abcdef"},
		{"telegram 123456789:AAH9xYzAbCdEfGhIjKlMnOpQrStUvWxYz12 unauthorized", "AAH9xYzAbCdEfGhIjKlMnOpQ"},
		{"discord Bot MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.Zq7Lm2Xp9Rt4Vw8Yb3Nc5Zq7Lm2Xp9Rt4Vw", "Zq7Lm2Xp9Rt4Vw8Yb3Nc5"},
		{"whatsapp EAAG" + strings.Repeat("Zq7Lm2Xp9Rt4Vw8Y", 7) + " expired", "Zq7Lm2Xp9Rt4Vw8YZq7Lm2Xp9"},
	},
	"auth_token": {
		{"Twilio auth token 0123456789abcdef0123456789abcdef rejected", "0123456789abcdef0123456789abcdef"},
		{"authtoken fedcba9876543210fedcba9876543210", "fedcba9876543210fedcba9876543210"},
		{"the auth-token is 00112233445566778899aabbccddeeff", "00112233445566778899aabbccddeeff"},
	},
	"credentials_file": {
		{"db.internal.example:5432:analytics:report_ro:Zx9!qLm2#vR", "Zx9!qLm2#vR"},
		{"*:*:*:postgres:hunter2hunter2", "hunter2hunter2"},
		{"could not connect (db-s6b18f.internal:6432:app:ro:y33QdzZPYf113GzEp1oK); check", "y33QdzZPYf113GzEp1oK"},
		{"machine api.example.com login deploy password Zx9qLm2vRw", "Zx9qLm2vRw"},
		{"machine git.example.com\n  login ana\n  password s3cr3t-w0rd", "s3cr3t-w0rd"},
		{"default login anonymous password guest-p4ss", "guest-p4ss"},
		{"ana.lopez@example.com:Sup3rS3cret!", "Sup3rS3cret!"},
	},
	"ssn": {
		{"SSN 123-45-6789 on file", "123-45-6789"},
		{`{"ssn":"078-05-1121"}`, "078-05-1121"},
	},
	"phone": {
		{"call +14155550199 now", "4155550199"},
		{"phone +1 415-555-0100", "415-555-0100"}, // kept before issue 13
		{"caller +1 415-555-0199 hung up", "415-555-0199"},
		{"UK office +44 20 7946 0958", "20 7946 0958"},
		{"tel:+33 1 23 45 67 89", "1 23 45 67 89"},
		{"contact (415) 555-0199 today", "555-0199"},
		{"fax 415-555-0199", "415-555-0199"},
		{"us 1-800-555-0199", "800-555-0199"},
		{`{"phone":"+1 (415) 555-0199"}`, "555-0199"},
		{"de +49 30 12345678", "30 12345678"},
	},
}

var moreKeepCases = []string{
	// Placeholders and near misses of the prefixes.
	"GROQ_API_KEY=gsk_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "gsk_ is the prefix of a Groq key",
	"dop_v1_ prefix", "dapi is short for data api", "dapi0123 too short", "LTAI is the prefix",
	"r8_ models", "pplx-api docs", "xai-sdk 1.2.0", "fc-cache -f", "lsv2_pt_ keys",
	"key-value store", "keyboard key-press", "sq0atp- prefix", "rzp_live_ keys",
	"SKU SK-1234", "ACME AC-42", "account ACCT0042", "skew SKIP", "SK123 too short",
	"en-US locale", "Accept-Language: en-US,en;q=0.9", "region us-east-1",
	"machine learning model", "machine api.example.com login deploy", "default value is 30",
	"version: 1.2.3:4", "urn:ietf:params:oauth:grant-type:jwt-bearer", "10:30:45:123",
	"main.go:42:13: undefined: foo", "00:1a:2b:3c:4d:5e", "fe80::1:2:3:4", "mac d7:a5:31:3f:54:d5 up",
	"2001:0db8:85a3:0000:0000:8a2e:0370:7334", "[2001:db8::1]:8443",
	// Numbers that are not phone numbers or SSNs.
	"SSN 000-12-3456", "666-12-3456", "900-12-3456", "123-00-4567", "123-45-0000",
	"ORD-123-45-6789", "build 2024-11-05", "order 1234567890", "order #415-555-0199",
	"+1000 requests", "UTC+0530", "1e+10", "+12 3", "+12345", "range 100-200-3000",
	"v415.555.0199", "415.555.0199", "ip 192.168.100.200", "ts 2024.11.05.1200", "(123) 456-7890",
	"id 550e8400-e29b-41d4-a716-446655440000", "commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"sha256 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
	"offset -05:00 at 12:30", "price +15.5%", "delta +1.234.567",
}

func init() {
	for rule, cases := range moreDetectorCases {
		detectorCases[rule] = append(detectorCases[rule], cases...)
	}
	keepCases = append(keepCases, moreKeepCases...)
}

// Each new rule finds its secrets in the places a log puts them: JSON
// strings, escaped JSON inside JSON, query strings, and after key=.
func TestMoreRulesInContext(t *testing.T) {
	for rule, cases := range moreDetectorCases {
		for _, c := range cases {
			if strings.ContainsAny(c.in, "\n\"") {
				continue
			}
			for _, in := range []string{
				`{"error":{"message":"` + c.in + `"}}`,
				`{"data":"{\"detail\":\"` + c.in + `\"}"}`,
				"upstream said: " + c.in + ". Retry later",
			} {
				got := Mask(in)
				if strings.Contains(got, c.secret) {
					t.Errorf("%s: Mask(%q)\n = %q", rule, in, got)
				}
				if again := Mask(got); again != got {
					t.Errorf("%s: Mask is not a fixed point on %q: %q", rule, got, again)
				}
			}
		}
	}
}

// The differential tests run the base rules only; this holds the switch to
// what it says.
func TestActiveRules(t *testing.T) {
	in := "groq gsk_Wb3xQ9mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4nAbCdEfGh"
	if Mask(in) == in {
		t.Fatal("the new rules do not run")
	}
	t.Run("base", func(t *testing.T) {
		baseRulesOnly(t)
		if got := Mask(in); got != OldMask(in) || got != in {
			t.Errorf("base rules only: %q, before %q", got, OldMask(in))
		}
	})
	if activeRules != len(detectors) {
		t.Errorf("activeRules %d after the test, want %d", activeRules, len(detectors))
	}
}
