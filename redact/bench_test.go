package redact_test

import (
	"bytes"
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/internal/synth"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Benchmarks of the redaction primitives on the texts real rows carry
// (issue 11), beside BenchmarkMask and BenchmarkMaskOrdinary (error lines of
// the ordinary corpus): the masked text fields of every row, URLs, and
// tool arguments (hash and shape).
//
//	go test ./redact -run '^$' -bench 'BenchmarkMask|BenchmarkSanitizeURL|BenchmarkHashJSON|BenchmarkShape' -benchmem

// benchRows decodes and correlates a wire log of about size bytes and
// returns the rows redaction is given. It is the one place this file's
// input is made: internal/synth for now (400 sessions interleaved; JSON and
// SSE answers, tool and JSON-RPC errors, retried 503s), to be switched to
// the realistic generator once it lands.
func benchRows(tb testing.TB, size int64) []schema.Exchange {
	tb.Helper()
	var log bytes.Buffer
	if _, _, err := synth.Write(&log, synth.Options{Bytes: size, Sessions: 400}); err != nil {
		tb.Fatal(err)
	}
	var rows []schema.Exchange
	c := correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
	c.IdleTimeout, c.Lateness = 30*time.Minute, 10*time.Minute
	e := &rowEmitter{c: c}
	dec, _ := decode.DecoderFor(decode.FormatWire)
	if err := dec("bench.ndjson", &log, e); err != nil {
		tb.Fatal(err)
	}
	c.Flush()
	if e.other != 0 || len(rows) == 0 {
		tb.Fatalf("benchmark log: %d rows, %d records not observations", len(rows), e.other)
	}
	return rows
}

type rowEmitter struct {
	c     *correlate.Correlator
	other int
}

func (e *rowEmitter) Observation(o *schema.Observation)                  { e.c.Add(o) }
func (e *rowEmitter) Quarantine(schema.Position, string, string, []byte) { e.other++ }
func (e *rowEmitter) Skip(schema.Position, string)                       { e.other++ }

// maskedTexts lists, row after row, the values of the fields the default
// policy masks (mask or truncate), as pipeline.RedactExchange hands them to
// the detectors.
func maskedTexts(tb testing.TB, rows []schema.Exchange) ([]string, int64) {
	pol := redact.DefaultPolicy()
	var texts []string
	var n int64
	add := func(field string, v *string) {
		if v == nil {
			return
		}
		if k := pol.Action(field).Kind; k == redact.MaskAction || k == redact.Truncate {
			texts = append(texts, *v)
			n += int64(len(*v))
		}
	}
	for i := range rows {
		r := &rows[i]
		add("exchanges.client_name", r.ClientName)
		add("exchanges.client_version", r.ClientVersion)
		add("exchanges.server_name", r.ServerName)
		add("exchanges.server_version", r.ServerVersion)
		add("exchanges.method", &r.Method)
		add("exchanges.tool_name", r.ToolName)
		add("exchanges.jsonrpc_id", r.JSONRPCID)
		add("exchanges.url", r.URL)
		add("exchanges.content_type", r.ContentType)
		add("exchanges.protocol_version", r.ProtocolVersion)
		add("exchanges.result_type", r.ResultType)
		add("exchanges.error_message", r.ErrorMessage)
		add("exchanges.error_data", r.ErrorData)
		add("exchanges.error_type", r.ErrorType)
		add("exchanges.tool_error_text", r.ToolErrorText)
		add("exchanges.reason", &r.Reason)
		add("exchanges.retry_after", r.RetryAfter)
		add("exchanges.scenario", r.Scenario)
	}
	if len(texts) == 0 {
		tb.Fatal("no masked texts")
	}
	return texts, n
}

// BenchmarkMaskRowFields runs the detectors over every masked text field of
// the rows of a wire log: many short values (methods, names, versions,
// media types) and some longer ones (reasons, error messages, URLs).
func BenchmarkMaskRowFields(b *testing.B) {
	texts, n := maskedTexts(b, benchRows(b, 4<<20))
	st := &redact.Stats{}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			redact.MaskWith(t, st)
		}
	}
	b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

// benchURLs are the rows' URLs and, one in four, URLs of the kinds that
// carry credentials (a token in the query, a password in the authority).
func benchURLs(tb testing.TB) []string {
	var urls []string
	extra := []string{
		"https://mcp.example.com/mcp?api_key=sk-live-4f9a8b7c6d5e4f3a2b1c&session=abc",
		"https://user:s3cr3t-pass@mcp.internal.example:8443/v1/mcp",
		"http://127.0.0.1:8080/mcp?sessionId=7c1d2e3f-aaaa-bbbb-cccc-0123456789ab",
		"https://gateway.example.net/tenants/acme/mcp?sig=Zm9vYmFyYmF6cXV4&exp=1790000000",
	}
	for i, r := range benchRows(tb, 4<<20) {
		if r.URL != nil {
			urls = append(urls, *r.URL)
		}
		if i%4 == 0 {
			urls = append(urls, extra[(i/4)%len(extra)])
		}
	}
	return urls
}

// BenchmarkSanitizeURL sanitizes request URLs (the url column's first step
// under the default policy).
func BenchmarkSanitizeURL(b *testing.B) {
	urls := benchURLs(b)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	st := &redact.Stats{}
	var n int64
	for _, u := range urls {
		n += int64(len(u))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range urls {
			redact.SanitizeURL(u, key, st)
		}
	}
	b.ReportMetric(float64(len(urls))*float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// benchArguments are the tool arguments of the rows, and one in ten a
// larger nested object (a filter with lists and a free-text note).
func benchArguments(tb testing.TB) ([][]byte, int64) {
	big := []byte(`{"query":"shipments delayed more than 2 days","filters":{"ports":["Rotterdam","Antwerp","Hamburg"],"since":"2026-10-01","carriers":[{"name":"Maersk","min_score":0.7},{"name":"MSC","min_score":0.5}]},"limit":50,"include_notes":true,"note":"ask ops@example.com before escalating; ticket OPS-4471"}`)
	var args [][]byte
	var n int64
	for i, r := range benchRows(tb, 4<<20) {
		if r.Arguments != nil {
			args = append(args, r.Arguments)
			n += int64(len(r.Arguments))
		}
		if i%10 == 0 {
			args = append(args, big)
			n += int64(len(big))
		}
	}
	return args, n
}

// BenchmarkHashJSON computes the keyed argument hash of every row's
// arguments (canonical JSON, then HMAC).
func BenchmarkHashJSON(b *testing.B) {
	args, n := benchArguments(b)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range args {
			key.HashJSON(a)
		}
	}
	b.ReportMetric(float64(len(args))*float64(b.N)/b.Elapsed().Seconds(), "args/s")
}

// BenchmarkShape computes the argument shape (names and value types) of
// every row's arguments.
func BenchmarkShape(b *testing.B) {
	args, n := benchArguments(b)
	st := &redact.Stats{}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range args {
			redact.Shape(a, st)
		}
	}
	b.ReportMetric(float64(len(args))*float64(b.N)/b.Elapsed().Seconds(), "args/s")
}
