package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Realistic inputs for the redaction benchmarks: tool arguments of 200 to
// 3000 bytes as MCP clients send them (file contents, queries, SQL, HTTP
// requests, issue bodies), the few URLs a client talks to, and free text.

// benchWords is text a tool call carries: English, code, paths, a little
// non-ASCII.
var benchWords = strings.Fields(`the report for quarterly revenue shows growth in region north and south while
costs fell func handler ctx context.Context req *Request return nil err if != := package main import fmt
/home/ana/projects/widgets/src/orders.go SELECT id name FROM orders WHERE created_at > ORDER BY LIMIT
café naïve 日本語 テスト données über straße release v1.4.2 build 2026-10-17T10:00:00Z pending shipped
customer invoice total amount due 1234.56 EUR ticket ACME-4821 deploy staging production rollback`)

func benchText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			if r.IntN(12) == 0 {
				b.WriteString("\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(benchWords[r.IntN(len(benchWords))])
	}
	return b.String()
}

// jsonString quotes s the way JSON encoders do (escapes for quotes,
// backslashes and control characters; non-ASCII as it is).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// benchArguments returns n argument objects, keys in the order clients
// write them (not sorted), 200 to 3000 bytes each.
func benchArguments(n int) [][]byte {
	r := rand.New(rand.NewPCG(7, 11))
	out := make([][]byte, 0, n)
	for i := 0; len(out) < n; i++ {
		var s string
		switch i % 6 {
		case 0: // write_file
			s = fmt.Sprintf(`{"path":"/home/ana/projects/widgets/src/handlers/file_%d.go","content":%s,"mode":"overwrite","create_dirs":true}`,
				i, jsonString("package handlers\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\n"+benchText(r, 200+r.IntN(2400))))
		case 1: // search
			s = fmt.Sprintf(`{"query":%s,"filters":{"language":["go","python","typescript"],"updated_after":"2026-01-01T00:00:00Z","max_results":%d,"score":0.75,"exclude":{"paths":["vendor/","node_modules/"],"binary":false}},"include_snippets":true,"sort":{"order":"desc","field":"relevance"},"cursor":null}`,
				jsonString(benchText(r, 100+r.IntN(600))), 10+r.IntN(90))
		case 2: // sql
			s = fmt.Sprintf(`{"database":"analytics","sql":%s,"params":[%d,"north",3.5e2,-0.25,null,true,12345678901234567890],"timeout_ms":30000,"read_only":true}`,
				jsonString("SELECT o.id, o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id\nWHERE o.created_at > $1 AND c.region = $2 -- "+benchText(r, 100+r.IntN(800))), r.IntN(1000))
		case 3: // http request
			s = fmt.Sprintf(`{"url":"https://api.example.com/v2/items?page=%d&per_page=100","method":"POST","headers":{"Content-Type":"application/json","Accept":"application/json","X-Request-Id":"7c9e6679-7425-40de-944b-e07dc4f5e1d2"},"body":%s,"follow_redirects":true,"timeout":30}`,
				r.IntN(50), jsonString(fmt.Sprintf(`{"name":"widget-%d","tags":["a","b"],"description":%s}`, i, jsonString(benchText(r, 200+r.IntN(1500))))))
		case 4: // issue
			s = fmt.Sprintf(`{"owner":"acme","repo":"widgets","title":%s,"body":%s,"labels":["bug","p1","needs-triage"],"assignees":["ana","bo"],"milestone":%d,"draft":false}`,
				jsonString(benchText(r, 40)), jsonString("## Steps\n\n1. "+benchText(r, 300+r.IntN(2000))+"\n\n> \"quoted\" \\ path\tend"), r.IntN(30))
		default: // nested records
			var b strings.Builder
			b.WriteString(`{"table":"events","rows":[`)
			for k := 0; k < 3+r.IntN(20); k++ {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"ts":"2026-10-17T10:%02d:00Z","user":{"id":%d,"name":%s,"roles":["reader","writer"]},"value":%d.%02d,"ok":%v}`,
					k%60, r.IntN(100000), jsonString(benchText(r, 12)), r.IntN(1000), r.IntN(100), k%3 != 0)
			}
			b.WriteString(`],"upsert":true}`)
			s = b.String()
		}
		if len(s) >= 200 && len(s) <= 3000 {
			out = append(out, []byte(s))
		}
	}
	return out
}

// benchURLs is what a client's rows carry: the same few endpoints over and
// over, some with a query string (a legacy session id, a cursor).
func benchURLs() []string {
	base := []string{
		"https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp",
		"http://localhost:8080/mcp",
		"https://legacy.example.com/messages?sessionId=3f2a9c17-0bd4-4e61-9a57-2c1b0e8d7f44",
		"https://api.githubcopilot.com/mcp/",
		"https://mcp.example.com/mcp?cursor=2&limit=50",
		"https://actions.zapier.com/api/mcp/s/Zk3q9XbW2mLp7Rt4Vn8Yc1Hd/mcp",
	}
	var out []string
	for i := 0; i < 200; i++ {
		out = append(out, base[(i*7)%len(base)])
	}
	return out
}

func benchKey(b *testing.B) *Pseudonymizer {
	p, err := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkHashJSON(b *testing.B) {
	args := benchArguments(600)
	p := benchKey(b)
	var n int64
	for _, a := range args {
		n += int64(len(a))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range args {
			p.HashJSON(a)
		}
	}
}

func BenchmarkShape(b *testing.B) {
	args := benchArguments(600)
	var n int64
	for _, a := range args {
		n += int64(len(a))
	}
	st := &Stats{}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range args {
			Shape(a, st)
		}
	}
}

func BenchmarkSanitizeURL(b *testing.B) {
	urls := benchURLs()
	p := benchKey(b)
	st := &Stats{}
	var n int64
	for _, u := range urls {
		n += int64(len(u))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range urls {
			SanitizeURL(u, p, st)
		}
	}
}

// BenchmarkMaskText masks the texts of rows: short names and versions that
// recur, error messages (one in ten with a secret) and long texts.
func BenchmarkMaskText(b *testing.B) {
	lines, _ := benchLines(b, true)
	r := rand.New(rand.NewPCG(3, 5))
	texts := []string{"tools/call", "bench-agent", "1.0.0", "2025-11-25", "application/json", "text/event-stream", "search", "weather-server"}
	for i := 0; i < 300; i++ {
		texts = append(texts, lines[i%len(lines)], benchText(r, 100+r.IntN(1500)))
	}
	var n int64
	for _, t := range texts {
		n += int64(len(t))
	}
	st := &Stats{}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			MaskWith(t, st)
		}
	}
}

// BenchmarkPrefilter is the single pass every text gets.
func BenchmarkPrefilter(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 5))
	var texts []string
	for range 300 {
		texts = append(texts, benchText(r, 100+r.IntN(1500)))
	}
	var n int64
	for _, t := range texts {
		n += int64(len(t))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	var hits [16]hit
	for b.Loop() {
		for _, t := range texts {
			prefilterOf(t, hits[:0])
		}
	}
}
