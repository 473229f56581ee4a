package classify_test

import (
	"strings"
	"testing"

	"mcptrace/classify"
)

// BenchmarkClassify judges typical tools/call responses: a small success, a
// success with 8 KB of text (the last-wins reads scan the whole result
// object), a tool error (its text is read for the error kind) and a
// 2026-07-28 mapped 400.
func BenchmarkClassify(b *testing.B) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 700) + `"}],"structuredContent":{"rows":[1,2,3]},"isError":false}}`
	cases := []struct {
		name string
		ev   *classify.Evidence
	}{
		{"success", toolCall(post(200, "application/json", good))},
		{"success-8KB", toolCall(post(200, "application/json", big))},
		{"tool-error", toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool get_weather: day is out of range for month"}],"isError":true}}`))},
		{"mapped-400", toolCall(post(400, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				classify.Classify(c.ev)
			}
		})
	}
}
