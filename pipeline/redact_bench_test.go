package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"mcptrace/redact"
	"mcptrace/schema"
)

// redactBenchRows builds n rows as the classifier hands them to
// redaction: a few hundred sessions, the same clients, servers, tools and
// URLs over and over, arguments of 200 to 3000 bytes, and on some rows an
// error message (one in ten of them quoting a secret), error data, a tool
// error text and a Retry-After.
func redactBenchRows(n int) []schema.Exchange {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the report for quarterly revenue shows growth in region north and south while costs fell
func handler ctx context.Context req *Request return nil err if != := package main import fmt
/home/ana/projects/widgets/src/orders.go SELECT id name FROM orders WHERE created_at > ORDER BY LIMIT
café naïve 日本語 données über release v1.4.2 build 2026-10-17T10:00:00Z pending shipped invoice 1234.56 EUR`)
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	quote := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, `"`, `\"`)
		return `"` + strings.ReplaceAll(s, "\n", `\n`) + `"`
	}
	errors := []string{
		"MCP error -32602: Invalid params: limit must be <= 10",
		"upstream index unavailable",
		"Error: ENOENT: no such file or directory, open '/Users/ana/Documents/report-2024.xlsx'",
		"dial tcp 172.17.0.3:6379: i/o timeout",
		"FetchError: request to https://registry.npmjs.org/left-pad failed, reason: connect ETIMEDOUT 104.16.24.35:443",
		"json: cannot unmarshal string into Go struct field Params.arguments.limit of type int",
		"Traceback (most recent call last):\n  File \"/opt/tools/server.py\", line 88, in call_tool\n    result = await handler(**arguments)\nKeyError: 'repository'",
		"permission denied for user ana.lopez@example.com on table orders",
		"401 Unauthorized: token ghp_Q8mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4n is invalid",
		"upstream said: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlX2hlcmU rejected",
	}
	urls := []string{
		"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp",
		"http://localhost:8080/mcp", "https://api.githubcopilot.com/mcp/",
		"https://legacy.example.com/messages?sessionId=3f2a9c17-0bd4-4e61-9a57-2c1b0e8d7f44",
		"https://mcp.example.com/mcp?cursor=2&limit=50",
	}
	tools := []string{"search", "read_file", "write_file", "run_query", "create_issue", "fetch"}
	reasons := []string{"result returned", "tool reported isError: true", "JSON-RPC error -32602", "HTTP 503",
		"event stream ended without the response (cut)", "no response in the log"}
	str := func(s string) *string { return &s }
	rows := make([]schema.Exchange, n)
	for i := range rows {
		e := schema.Exchange{
			ExchangeID: fmt.Sprintf("x-%08d", i), Source: "/var/log/mcp/client-2026-10-17.ndjson", SourceLine: int64(i * 3),
			SessionID:  str(fmt.Sprintf("sess-%04d-9c17e0bd4e61", r.IntN(400))),
			ClientName: str("claude-code"), ClientVersion: str("2.1.3"), ServerName: str("widgets-mcp"), ServerVersion: str("0.9.1"),
			Method: "tools/call", ToolName: str(tools[r.IntN(len(tools))]), JSONRPCID: str(fmt.Sprint(i % 5000)),
			URL: str(urls[r.IntN(len(urls))]), ContentType: str("text/event-stream"), ProtocolVersion: str("2025-11-25"),
			Reason: reasons[r.IntN(len(reasons))], Transport: "streamable-http", Outcome: "TOOL_SUCCESS",
		}
		var args string
		switch i % 3 {
		case 0:
			args = fmt.Sprintf(`{"path":"/home/ana/projects/widgets/src/file_%d.go","content":%s,"create_dirs":true}`, i, quote("package handlers\n\n"+text(200+r.IntN(2500))))
		case 1:
			args = fmt.Sprintf(`{"query":%s,"filters":{"language":["go","python"],"max_results":%d,"score":0.75},"include_snippets":true,"sort":{"order":"desc","field":"relevance"}}`, quote(text(150+r.IntN(800))), 10+r.IntN(90))
		default:
			args = fmt.Sprintf(`{"owner":"acme","repo":"widgets","title":%s,"body":%s,"labels":["bug","p1"],"milestone":%d}`, quote(text(40)), quote(text(200+r.IntN(1800))), r.IntN(30))
		}
		e.Arguments = []byte(args)
		switch k := r.IntN(20); {
		case k < 3:
			e.ErrorMessage = str(errors[r.IntN(len(errors))])
			e.ErrorType = str("-32602")
			if k == 0 {
				e.ErrorData = str(`{"field":"limit","max":10,"detail":` + quote(text(80)) + `}`)
			}
		case k < 5:
			e.ToolErrorText = str(text(100 + r.IntN(600)))
			e.ErrorType = str("tool_error")
		case k == 5:
			e.RetryAfter = str("1")
		}
		rows[i] = e
	}
	return rows
}

// BenchmarkRedactExchangeHandmade redacts hand-made realistic rows with the default policy;
// the bytes are those of the text fields and arguments of the rows.
func BenchmarkRedactExchangeHandmade(b *testing.B) {
	rows := redactBenchRows(2000)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	rd := &redact.Redactor{Policy: redact.DefaultPolicy(), Pseud: key, Stats: &redact.Stats{}}
	var n int64
	for _, e := range rows {
		n += int64(len(e.Arguments) + len(e.Reason) + len(e.Source) + len(*e.SessionID) + len(*e.URL))
		for _, p := range []*string{e.ErrorMessage, e.ErrorData, e.ToolErrorText} {
			if p != nil {
				n += int64(len(*p))
			}
		}
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for i := range rows {
			_ = RedactExchange(rows[i], rd)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
