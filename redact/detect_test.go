package redact

import (
	"bufio"
	"os"
	"strings"
	"sync"
	"testing"
)

// A positive case: in is masked, secret no longer occurs in the result, and
// the marker names the rule.
type detCase struct{ in, secret string }

// detectorCases holds, for every rule, inputs it must mask. All secrets here
// are made up.
var detectorCases = map[string][]detCase{
	"private_key": {
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Qm\nq2Zs9Lw==\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx7Qm"},
		{"key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY----- loaded", "b3BlbnNzaC1rZXktdjEAAAAA"},
		{`{"private_key":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n"}`, "MIIEvQIBADANBgkqhkiG9w0B"},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk", "MHcCAQEEIBkg4LVWM9nuwNSk"}, // cut short
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGZnZ2gBCAC7\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBGZnZ2gBCAC7"},
	},
	"key_material": {
		{"UvImZaYMEtKJGF2VDuiBNgkWb2sRPReNbA/TkB/yOaGglfIPk5VlDPk4C47bIkpr", "UvImZaYMEtKJGF2VDuiBNgkWb2sRPReNbA"},
		{"Loaded signing key:\n  JIoekk6P0K4uGpSSozBfGIy2EJAPnjR/rohtxlB3lex0\r\n", "JIoekk6P0K4uGpSSozBfGIy2EJAPnjR"},
	},
	"jwt": {
		{"token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlX2hlcmU expired", "eyJzdWIiOiIxMjMifQ"},
		{"GET /cb?id_token=eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxNzE4MDAwMDAwfQ.Zm9vYmFyYmF6&state=1", "eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxNzE4MDAwMDAwfQ"},
		{`{"jwt":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyLTQyIn0."}`, "eyJzdWIiOiJ1c2VyLTQyIn0"},
		{"cut: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQy", "eyJzdWIiOiJ1c2VyLTQy"},
	},
	"github_token": {
		{"bad ghp_0123456789abcdefghijABCDEFGHIJ0123", "ghp_0123456789abcdefghij"},
		{"gho_Q8mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4n", "Q8mZ2vN4xL7pR1sT6wY9"},
		{"GITHUB_TOKEN=ghs_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5", "aB3dE5fG7hJ9kL1mN3pQ5"},
		{"token: github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "abcdefghijklmnopqrstuvwxyz0123456789"},
		{"ghu_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8 and ghr_1a2b3c4d5e6f7g8h9i0j1k2l3m4n5o6p7q8r", "ghr_1a2b3c4d5e6f"},
	},
	"gitlab_token": {
		{"remote: glpat-xY7zQ2wE4rT6yU8iO0pA rejected", "glpat-xY7zQ2wE4rT6yU8iO0pA"},
		{"runner token glrt-t1_AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"},
	},
	"slack_token": {
		{"slack xoxb-123456789012-abcdefghij", "xoxb-123456789012"},
		{"SLACK_TOKEN=xoxp-2718281828-3141592653-5772156649-abcdef0123456789abcdef0123456789", "abcdef0123456789abcdef0123456789"},
		{"app token xapp-1-A0123456789-1234567890123-abcdef0123456789", "A0123456789-1234567890123"},
	},
	"webhook": {
		{"posted to https://discord.com/api/webhooks/123456789012345678/Kx9_abcDEFghiJKLmnoPQRstuVWXyz0123456789", "Kx9_abcDEFghiJKLmnoPQRstu"},
		{"GET https://api.telegram.org/bot123456789:AAH9xYzAbCdEfGhIjKlMnOpQrStUvWxYz12/sendMessage", "AAH9xYzAbCdEfGhIjKlMnOpQ"},
		{"https://acme.webhook.office.com/webhookb2/3f2a1b0c-aaaa-bbbb-cccc-1234567890ab@deadbeef/IncomingWebhook/abc", "3f2a1b0c-aaaa-bbbb-cccc"},
	},
	"slack_webhook": {
		{"POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed", "B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
	},
	"stripe_key": {
		{"stripe sk_live_0123456789abcdef", "sk_live_0123456789abcdef"},
		{"rk_test_51H8xYzAbCdEfGhIjKlMnOp used", "51H8xYzAbCdEfGhIjKlMnOp"},
		{"publishable pk_live_AbCdEf0123456789", "AbCdEf0123456789"},
		{"webhook secret whsec_Ab12Cd34Ef56Gh78Ij90Kl12Mn34", "Ab12Cd34Ef56Gh78Ij90Kl12Mn34"},
	},
	"api_key": {
		{"upstream said sk-proj-0123456789abcdefABCD", "sk-proj-0123456789abcdefABCD"},
		{"Incorrect API key provided: sk-ant-api03-Zq7Lm2Xp9Rt4Vw8Yb3NcQ5sT1uV6wX0yZ2aB4cD6eF8gH-AAAA", "Zq7Lm2Xp9Rt4Vw8Yb3Nc"},
		{"OPENAI_API_KEY=sk-0123456789abcdefghijklmnopqrstuvwxyzABCD", "0123456789abcdefghijklmnop"},
		{"ck_pat_9a8b7c6d5e4f rejected", "ck_pat_9a8b7c6d5e4f"},
		{`not "sk-proj-pxylxuhyiFpssCXndFIDcKq-gJkVTmn…"`, "pxylxuhyiFpssCXn"}, // cut short, no digits
	},
	"service_token": {
		{"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 is invalid", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
		{"hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "AbCdEfGhIjKlMnOpQrStUvWxYz"},
		{"SG.AbCdEfGhIjKlMnOpQrSt.UvWxYz0123456789AbCdEfGhIjKl", "UvWxYz0123456789AbCdEf"},
		{"ya29.a0AfH6SMBx7Qm2Zs9Lw4Rt8Vn1Kp", "a0AfH6SMBx7Qm2Zs9Lw4Rt8Vn1Kp"},
	},
	"gcp_api_key": {
		{"API key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q not valid", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"},
		{"https://maps.example.com/api/geocode?key=AIzaSyZ9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J&address=x", "Z9y8X7w6V5u4T3s2R1q0"},
	},
	"gcp_key_id": {
		{`{"type":"service_account","private_key_id":"3f786850e387550fdab836ed7e6dc881de23001b","client_email":"x"}`, "3f786850e387550fdab836ed7e6dc881de23001b"},
		{`\"private_key_id\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b\"`, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"},
	},
	"aws_key": {
		{"key AKIAIOSFODNN7EXAMPLE rejected", "AKIAIOSFODNN7EXAMPLE"},
		{"temporary credentials ASIAQ3EGUZWNPLTR7XYZ expired", "ASIAQ3EGUZWNPLTR7XYZ"},
	},
	"aws_secret_key": {
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{`{"AccessKeyId":"x","SecretAccessKey":"Zq7Lm2Xp9Rt4Vw8Yb3NcQ5sT1uV6wX0yZ2aB4cD6","SessionToken":"y"}`, "Zq7Lm2Xp9Rt4Vw8Yb3Nc"},
		{"AWS_SECRET_KEY=Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90", "Ab12Cd34Ef56Gh78Ij90"},
	},
	"azure_key": {
		{"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=Zq7Lm2Xp9Rt4Vw8Yb3NcQ5sT1uV6wX0yZ2aB4cD6eF8gH0jK2lM4nP6qR8sT0uV2wX4yZ6aB8cD0eF2gH4jK6==;EndpointSuffix=core.windows.net", "Zq7Lm2Xp9Rt4Vw8Yb3Nc"},
		{"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv=", "Ab12Cd34Ef56Gh78Ij90"},
	},
	"azure_sas": {
		{"GET https://acme.blob.core.windows.net/logs/a.json?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-06-12T00:00:00Z&sig=Zq7Lm2Xp9Rt4Vw8Yb3NcQ5sT1uV6wX0yZ2aB4cD6eF8%3D 403", "Zq7Lm2Xp9Rt4Vw8Yb3Nc"},
		{"BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sp=rl&se=2025-01-01&sig=Ab12Cd34Ef56Gh78Ij90Kl12%2B", "Ab12Cd34Ef56Gh78Ij90"},
		{"Authorization: SharedAccessSignature sr=acme.servicebus.windows.net&sig=Xy9Wv8Ut7Sr6Qp5On4Ml3%3D&se=1718000000&skn=send", "Xy9Wv8Ut7Sr6Qp5On4Ml3"},
	},
	"url_password": {
		{"dial postgres://reporting:Tr0ub4dor&3@db.internal:5432/analytics failed", "Tr0ub4dor"},
		{"redis://:s3cr3t-cache-pw@cache.internal:6379/0 unavailable", "s3cr3t-cache-pw"},
		{"https://ana:hunter2@git.example.com/acme/widgets.git: 401", "hunter2"},
	},
	"bearer": {
		{"Authorization: Bearer abcDEF123456789xyz", "abcDEF123456789xyz"},
		{"authorization: bearer ya29_AbC.dEf-123~xyz/987+k==", "ya29_AbC.dEf-123~xyz"},
		{"map[Accept:[application/json] Authorization:[Bearer Zq7Lm2Xp9Rt4Vw8Y]]", "Zq7Lm2Xp9Rt4Vw8Y"},
		{"sent header Bearer abcdefghijklmnop", "abcdefghijklmnop"},
		{`not "Bearer ab^GLSKCUc0*SHZGIui!x9"`, "GLSKCUc0"},
		{"GET /mcp?conn=bearer+nnG~EReE1OiliE-.34H~wnsDGn2KRJV_~V3BzcZ4b", "nnG~EReE1OiliE"},
	},
	"basic_auth": {
		{"Authorization: Basic dXNlcjpzM2NyZXRQYXNz", "dXNlcjpzM2NyZXRQYXNz"},
		{`"headers":{"Authorization":"Basic ZGVwbG95LWJvdDpaeDkhcUxtMiN2Ug=="}`, "ZGVwbG95LWJvdDpaeDkhcUxtMiN2Ug"},
		{"creds dXNlcjpzM2NyZXRQYXNz sent", "dXNlcjpzM2NyZXRQYXNz"}, // base64 of user:pass on its own
	},
	"digest_auth": {
		{`Authorization: Digest username="ana", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/mcp", response="6629fae49393a05397450978507c4ef1"`, "6629fae49393a05397450978507c4ef1"},
		{`\"Authorization\":\"Digest username=\\\"ana\\\", nonce=\\\"dcd98b71\\\", response=\\\"6629fae49393a053\\\"\"`, "6629fae49393a053"},
	},
	"authorization": {
		{"Authorization: Token 9a8b7c6d5e4f3a2b1c0d", "9a8b7c6d5e4f3a2b1c0d"},
		{"Authorization: Zq7Lm2Xp9Rt4 sent", "Zq7Lm2Xp9Rt4"},
		{`{"authorization":"Negotiate YIIBhwYGKwYBBQUCoIIBezCCAXeg"}`, "YIIBhwYGKwYBBQUCoIIBezCCAXeg"},
		{"Proxy-Authorization: ApiKey a1b2c3d4e5", "a1b2c3d4e5"},
	},
	"header": {
		{`"headers":[{"name":"x-api-key","value":"AbCdEf0123456789"}]`, "AbCdEf0123456789"},
		{`{"name":"Authorization","value":"ck_live_9a8b7c"}`, "ck_live_9a8b7c"},
		{`{"name": "X-Auth-Token", "value": "short"}`, `"short"`},
		{`{\"name\":\"Mcp-Session-Id\",\"value\":\"3f2a9c17e0bd\"}`, "3f2a9c17e0bd"},
	},
	"cookie": {
		{"Cookie: sid=s%3Aabc.def; theme=dark", "s%3Aabc.def"},
		{"Set-Cookie: session=7f3a9c1e2b4d; Path=/; HttpOnly", "7f3a9c1e2b4d"},
		{`{"cookie":"_ga=GA1.2.3; auth=xyz9"}`, "auth=xyz9"},
	},
	"assignment": {
		{"GET /x?api_key=s3cr3tvalue&x=1", "s3cr3tvalue"},
		{`{"password": "hunter2hunter2"}`, "hunter2hunter2"},
		{"password=hunter2", "hunter2"},
		{`"body":"{\"password\":\"hunter2 with spaces\",\"api_key\":\"abcd1234efgh\"}"`, "hunter2"},
		{`"body":"{\"password\":\"hunter2 with spaces\",\"api_key\":\"abcd1234efgh\"}"`, "abcd1234efgh"},
		{"api_key: Zq7Lm2Xp9Rt4Vw8Y", "Zq7Lm2Xp9Rt4Vw8Y"},
		{"client_secret=Xy9Wv8Ut7Sr6Qp5", "Xy9Wv8Ut7Sr6Qp5"},
		{"Server=db;Database=app;Uid=sa;Pwd=Str0ngPassw0rd;", "Str0ngPassw0rd"},
		{"X-Api-Key: 0f8fad5bd9cb469fa165", "0f8fad5bd9cb469fa165"},
		{"key=AbC123xyz789QwE", "AbC123xyz789QwE"},
		{"refresh_token := 'Zq7Lm2Xp9Rt4Vw8Y'", "Zq7Lm2Xp9Rt4Vw8Y"},
		{"secret => \"correct horse battery staple\"", "correct horse battery staple"},
		{"MCP_SESSION_ID=7c9e6679742540de944be07dc4f5e1d2", "7c9e6679742540de944be07dc4f5e1d2"},
		{"passphrase: 'abcd'", "abcd"},
	},
	"email": {
		{"contact ops.team+mcp@example.co.uk now", "ops.team+mcp@example.co.uk"},
		{`{"user":"ana.lopez@acme-corp.com"}`, "ana.lopez"},
		{"From: <j.doe@mail.example.org>", "j.doe@mail.example.org"},
	},
	"card_number": {
		{"card 4111111111111111 declined", "4111111111111111"},
		{"card 4111 1111 1111 1111 declined", "4111 1111 1111 1111"},
		{"pan=5555-5555-5555-4444", "5555-5555-5555-4444"},
		{"amex 3782 822463 10005", "822463"},
		{"amex 378282246310005", "378282246310005"},
		{"old visa 4222222222222 on file", "4222222222222"},
		{"discover 6011-1111-1111-1117", "1111-1117"},
		{"diners 30569309025904", "30569309025904"},
		{"mc 2223003122003222 expired", "2223003122003222"},
		{"19 digits: 4000000000000000006", "4000000000000000006"},
		{"unionpay 6212 3456 7890 1234 569", "7890 1234 569"},
		{`{"number":"3566002020360505","exp":"12/29"}`, "3566002020360505"},
		{"card 4111 1111 1111 1111 2024", "4111 1111 1111 1111"},
		{"GET /mcp?user=4111+1111+1111+1111&cursor=2", "4111+1111"},
		{"cursor=1718093450123456", "1718093450123456"},
		{`"timestamp" is not an ISO 8601 time: "1863112749409774"`, "1863112749409774"}, // Luhn decides, even for a time
	},
}

// The encoded forms: the secret is only visible after percent- or
// base64-decoding.
var encodedCases = []struct{ rule, in, secret string }{
	{"assignment", "redirect=https%3A%2F%2Fapp.example%2Fcb%3Fpassword%3Dhunter2hunter2 302", "hunter2hunter2"},
	{"assignment", "next=%2Flogin%3Fpassword%253Dhunter2hunter2", "hunter2hunter2"}, // double-encoded
	{"email", "GET /search?q=ana.lopez%40example.com&page=1", "ana.lopez%40example.com"},
	{"bearer", "GET /sse?auth=Bearer%20Zq7Lm2Xp9Rt4Vw8Y HTTP/1.1", "Zq7Lm2Xp9Rt4Vw8Y"},
	{"bearer", "GET /sse?q=Bearer+Zq7Lm2Xp9Rt4Vw8Y%3D", "Zq7Lm2Xp9Rt4Vw8Y"}, // + for a blank
	{"github_token", "GET /x?token=ghp_Q8mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4n%3D", "Q8mZ2vN4xL7pR1sT6wY9"},
	{"card_number", "pay?pan=4111%201111%201111%201111", "4111%201111"},
	{"assignment", "state eyJwYXNzd29yZCI6Imh1bnRlcjJodW50ZXIyIn0= invalid", "eyJwYXNzd29yZCI6Imh1bnRlcjJodW50ZXIyIn0"},
	{"aws_key", "env ZXhwb3J0IEFXU19BQ0NFU1NfS0VZX0lEPUFLSUFRM0VHVVpXTlBMVFI3WFla", "ZXhwb3J0IEFXU19BQ0NFU1NfS0VZX0lEPUFLSUFRM0VHVVpXTlBMVFI3WFla"},
	{"github_token", "blob dG9rZW4gZ2hwX1E4bVoydk40eEw3cFIxc1Q2d1k5YkMzZEY1Z0gwaksybE00bg here", "dG9rZW4gZ2hwX1E4bVoydk40eEw3cFIxc1Q2d1k5YkMzZEY1Z0gwaksybE00bg"},
	{"basic_auth", "GET /api/v1/login/ZGVwbG95LWJvdDpaeDkhcUxtMiN2Ug== 404", "ZGVwbG95LWJvdDpaeDkhcUxtMiN2Ug"},
	{"assignment", "cfg=eyJ1c2VyIjoiYW5hIiwiYXBpX2tleSI6IlpxN0xtMlhwOVJ0NFZ3OFliM05jIn0%3D", "eyJ1c2VyIjoiYW5hIiwiYXBpX2tleSI6IlpxN0xtMlhwOVJ0NFZ3OFliM05jIn0"}, // base64 inside percent-encoding
}

// keepCases must come back unchanged: near misses for each rule.
var keepCases = []string{
	"timeout=30", "token=null", "key=id", "password=", "secret=true", "retries=3", "timeout=30s",
	"max_tokens=4096", "api_key=${API_KEY}", "password: <redacted>", "password=****", `{"token": null}`,
	"Invalid password: too short", "password must be at least 12 characters long",
	"key: maxResults", "cache_key=config.yaml", "primary_key=user_id", "session_id=42",
	"Bearer authentication failed", "bearer token missing", "Basic realm=\"Restricted\"",
	"Authorization: required", "authorization header required", "digest mismatch for sha256=abc",
	"request 7c9e6679-7425-40de-944b-e07dc4f5e1d2 timed out after 30000 ms",
	"created 1718000000000", "ns 1718093450123456789",
	"card 4111111111111112 declined", "order 4000123456789010 shipped", "id 2024061100042",
	"score 0.8472619384756201", "sha 3f786850e387550fdab836ed7e6dc881de23001b",
	"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
	"date 2024-06-11 12:00", "zip 1234 5678", // "phone +1 415-555-0100" was kept until issue 13 made phone numbers personal data (detect_more_test.go)
	"timezone Asia/Tokyo", "locale sk-SK", "pip install sk-learn-extensions-for-pipelines", "task-runner-0123456789abcdefghij failed",
	"https://example.com/search?q=caf%C3%A9%20au%20lait", "https://example.com/a%20b/c%2Fd",
	"listening on http://localhost:8080/mcp", "postgres://db.internal:5432/analytics",
	"next page cursor: djE6MTcxODA5MzQ1MDoxMjM0NQ", "cursor eyJvZmZzZXQiOjUwfQ",
	"/Users/AnaLopez/Documents/ProjectReports2024/summary.md",
	`{"name":"Accept","value":"text/event-stream"}`, "sig=SIGTERM", "cookie not set",
	"MCP error -32602: Invalid params", "Tool-side failure",
	"[REDACTED:jwt]", "Authorization: Bearer [REDACTED:bearer]", "password=[REDACTED:assignment]",
}

func TestDetectors(t *testing.T) {
	for _, rule := range Rules() {
		if len(detectorCases[rule]) == 0 {
			t.Errorf("rule %s has no test cases", rule)
		}
	}
	for rule, cases := range detectorCases {
		t.Run(rule, func(t *testing.T) {
			var st Stats
			for _, c := range cases {
				got := MaskWith(c.in, &st)
				if strings.Contains(got, c.secret) || !strings.Contains(got, "[REDACTED:"+rule+"]") {
					t.Errorf("Mask(%q)\n  = %q\n  want %q gone under [REDACTED:%s]", c.in, got, c.secret, rule)
				}
			}
			if n := st.Counts()[rule]; n < int64(len(cases)) {
				t.Errorf("counted %d replacements by %s, want at least %d (%v)", n, rule, len(cases), st.Counts())
			}
		})
	}
}

func TestEncodedSecrets(t *testing.T) {
	for _, c := range encodedCases {
		got := Mask(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "[REDACTED:"+c.rule+"]") {
			t.Errorf("Mask(%q)\n  = %q\n  want %q gone under [REDACTED:%s]", c.in, got, c.secret, c.rule)
		}
	}
}

func TestKeepsNearMisses(t *testing.T) {
	for _, s := range keepCases {
		if got := Mask(s); got != s {
			t.Errorf("Mask changed ordinary text: %q -> %q", s, got)
		}
	}
}

func TestMaskKeepsContext(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization: Bearer abcDEF123456789xyz":               "Authorization: Bearer [REDACTED:bearer]",
		"GET /x?token=ghp_0123456789abcdefghijABCDEFGHIJ&page=2": "GET /x?token=[REDACTED:github_token]&page=2",
		`{"password":"hunter2hunter2","user":"x"}`:               `{"password":"[REDACTED:assignment]","user":"x"}`,
		"card 4111-1111-1111-1111, exp 12/29":                    "card [REDACTED:card_number], exp 12/29",
		"redirect=https%3A%2F%2Fx%2F%3Fpassword%3Dabc123XY&y=1":  "redirect=[REDACTED:assignment]&y=1",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q)\n  = %q\n want %q", in, got, want)
		}
	}
}

func TestLuhn(t *testing.T) {
	for d, ok := range map[string]bool{
		"4111111111111111": true, "4111111111111112": false, "378282246310005": true,
		"79927398713": true, "79927398710": false, "0": true,
	} {
		if luhn(d) != ok {
			t.Errorf("luhn(%s) = %v", d, !ok)
		}
	}
}

func TestStatsConcurrent(t *testing.T) {
	var st Stats
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				MaskWith("mail ana@example.com, card 4111111111111111", &st)
			}
		}()
	}
	wg.Wait()
	c := st.Counts()
	if c["email"] != 800 || c["card_number"] != 800 || len(c) != 2 {
		t.Errorf("counts %v", c)
	}
	if MaskWith("a@b.co", nil) != "[REDACTED:email]" || len((*Stats)(nil).Counts()) != 0 {
		t.Error("nil stats")
	}
}

func TestExcerptWindow(t *testing.T) {
	// A JWT that straddles the masking window is still seen whole.
	pad := strings.Repeat("x ", 2*60+128-4)
	raw := pad + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJl tail"
	var st Stats
	_ = ExcerptWith([]byte(raw), 60, &st)
	if st.Counts()["jwt"] != 1 {
		t.Errorf("the token at the window's edge was not seen whole: %v", st.Counts())
	}
}

func readCorpus(t testing.TB) []string {
	f, err := os.Open("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// TestFalsePositives masks a corpus of ordinary tool errors and log lines
// (paths, UUIDs, timestamps, hashes, versions, URLs, SQL, stack traces, order
// numbers, IPs, durations, JSON-RPC errors, German and Japanese text) and
// counts the lines Mask changed. Measured: 2 of 547 lines (0.37%): the
// e-mail shape of git@github.com, and a microsecond timestamp that happens to
// pass the Luhn check (as one in ten 13- to 19-digit numbers do). Issue 13
// added 300 lines of key: value pairs, ids, timestamps, UUIDs, hashes, git
// commits, versions, order and part numbers and dates: 8 of 847 (0.94%),
// the two above, two phone numbers of the first corpus (+1 415-555-0100,
// +49 30 901820) that are personal data since issue 13, and four
// cache_key: tool:hex8 values the assignment rule takes for secrets.
func TestFalsePositives(t *testing.T) {
	lines := readCorpus(t)
	if len(lines) < 300 {
		t.Fatalf("corpus has %d lines, want at least 300", len(lines))
	}
	changed := 0
	for _, l := range lines {
		if m := Mask(l); m != l {
			changed++
			t.Logf("changed: %q -> %q", l, m)
		}
	}
	rate := float64(changed) / float64(len(lines))
	t.Logf("false-positive rate: %d of %d lines (%.2f%%)", changed, len(lines), 100*rate)
	if rate >= 0.01 {
		t.Errorf("false-positive rate %.2f%% is not below 1%%", 100*rate)
	}
}

func FuzzMask(f *testing.F) {
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
	f.Add("4111 1111 1111 1111 1111 1111 1111 1111")
	f.Add("password=abc[REDACTED:jwt]def")
	f.Fuzz(func(t *testing.T, s string) {
		m := Mask(s)
		if mm := Mask(m); mm != m {
			t.Errorf("not idempotent:\n in  %q\n 1st %q\n 2nd %q", s, m, mm)
		}
	})
}

// benchLines is the realistic mix: ordinary errors, one in ten carrying a
// secret.
func benchLines(b *testing.B, secrets bool) ([]string, int64) {
	lines := readCorpus(b)
	if secrets {
		var withSecrets []string
		for _, cases := range detectorCases {
			for _, c := range cases {
				withSecrets = append(withSecrets, c.in)
			}
		}
		for i := 0; i < len(lines); i += 10 {
			lines[i] = "tool call failed: " + withSecrets[(i/10)%len(withSecrets)]
		}
	}
	var n int64
	for _, l := range lines {
		n += int64(len(l))
	}
	return lines, n
}

func BenchmarkMask(b *testing.B) {
	lines, n := benchLines(b, true)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Mask(l)
		}
	}
}

func BenchmarkMaskOrdinary(b *testing.B) {
	lines, n := benchLines(b, false)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Mask(l)
		}
	}
}
