package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/rs/zerolog"

	"mcptrace/pipeline"
	"mcptrace/redact"
)

func testKey(t *testing.T) *redact.Pseudonymizer {
	p, err := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ingest(t *testing.T, out string, inputs ...string) *pipeline.Summary {
	t.Helper()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: inputs, OutDir: out, Pseudonyms: testKey(t), Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	if !sum.Balanced() {
		t.Fatalf("conservation: %+v", sum)
	}
	return sum
}

func duck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

const okRecord = `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.000Z","end_ts":"2026-10-17T10:00:00.020Z","side":"client","transport":"streamable-http","connection":"c1","session_id":"raw-session-7f3a","protocol_version":"2026-07-28","http":{"request":{"method":"POST","url":"http://127.0.0.1:9/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"synthetic\",\"arguments\":{}}}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad token=Zq8xW2mN4vB7tK1p for ops@example.com\"}}"}}}`

func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	b.WriteString(okRecord + "\n")
	b.WriteString(okRecord[:len(okRecord)/2] + "\n")                                                            // truncated line
	b.Write([]byte{0x00, 0x01, 0x02, 0xff, 0xfe, 0x7f, 0x80, 0x81, '\n'})                                       // binary garbage
	b.WriteString(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"cli` + "\xc3\x28" + `ent"}` + "\n") // invalid UTF-8
	b.WriteString("Authorization: Bearer sk-live-" + strings.Repeat("A", 5<<20) + "\n")                         // a 5 MB line
	b.WriteString(strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n")                               // 10,000-deep nesting
	b.WriteString(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "\n")
	b.WriteString("\n   \n")                      // blank lines
	b.WriteString(`{"mcptrace":"wire/1"}` + "\n") // a record missing everything
	// A truncated line with secrets inside its (escaped) body and headers.
	b.WriteString(`{"mcptrace":"wire/1","http":{"request":{"body":"{\"password\":\"hunter2hunter2\",\"api_key\":\"abcd1234efgh\"}","headers":{"Authorization":"Bearer sk-live-abcdefghijklmnop1234"},"method":"PO` + "\n")
	// A response that is a 200,000-element array.
	wide := strings.Repeat("0,", 200000) + "0"
	b.WriteString(strings.Replace(okRecord, `"body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error`, `"body":"[`+wide+`]","x":"{\"error`, 1) + "\n")
	// A hundred requests on one connection that never got a response.
	for i := 0; i < 100; i++ {
		b.WriteString(fmt.Sprintf(`{"mcptrace":"wire/1","ts":"2026-10-17T11:00:00Z","side":"client","connection":"down","http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{}}"},"failure":{"kind":"connection_refused"}}}`, i) + "\n")
	}
	b.WriteString(okRecord) // last line without a newline
	if err := os.WriteFile(filepath.Join(dir, "hostile.ndjson"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.ndjson"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A gzip file whose stream is cut short.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(okRecord + "\n" + okRecord + "\n"))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "cut.ndjson.gz"), gz.Bytes()[:gz.Len()-12], 0o644); err != nil {
		t.Fatal(err)
	}
	// A file that starts like gzip but is not.
	if err := os.WriteFile(filepath.Join(dir, "fake.gz"), []byte{0x1f, 0x8b, 0, 0, 'n', 'o', 'p', 'e'}, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum := ingest(t, out, dir)
	if len(sum.Files) != 4 {
		t.Errorf("files %v", sum.Files)
	}
	if sum.Records != sum.SkippedTotal()+sum.Quarantined+sum.Observations {
		t.Errorf("records %d != %d + %d + %d", sum.Records, sum.SkippedTotal(), sum.Quarantined, sum.Observations)
	}
	if sum.Skipped["blank"] != 2 || sum.ByFormat["wire"] != 2 || sum.ByFormat["empty"] != 1 || sum.ByFormat["corrupt"] != 1 {
		t.Errorf("skipped %v, formats %v", sum.Skipped, sum.ByFormat)
	}
	wantReasons := map[string]int64{"not_json": 3, "invalid_utf8": 2, "nesting_too_deep": 2, "missing_field": 1}
	for r, n := range wantReasons {
		if sum.ByReason[r] != n {
			t.Errorf("reason %s: %d, want %d (all: %v)", r, sum.ByReason[r], n, sum.ByReason)
		}
	}
	if sum.ByReason["read_error"] != 2 {
		t.Errorf("the cut gzip stream and the fake gzip file should give two read_errors, got %v", sum.ByReason)
	}
	if sum.ByOutcome["NO_RESPONSE"] != 100 || sum.ByOutcome["INVALID_ENVELOPE"] != 1 || sum.ByOutcome["JSONRPC_ERROR"] < 2 {
		t.Errorf("the good records around the garbage were lost or misjudged: %v", sum.ByOutcome)
	}

	db := duck(t)
	rows, err := db.Query(`SELECT source, line, reason, detail, excerpt, bytes FROM read_parquet(?) ORDER BY source, line`, filepath.Join(out, "quarantine", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var source, reason, detail, excerpt string
		var line, size int64
		if err := rows.Scan(&source, &line, &reason, &detail, &excerpt, &size); err != nil {
			t.Fatal(err)
		}
		n++
		if line < 1 || reason == "" || detail == "" || source == "" {
			t.Errorf("quarantine row lacks its location or reason: %s:%d %q %q", source, line, reason, detail)
		}
		if len(excerpt) > 400 || strings.Contains(excerpt, "sk-live-") || strings.Contains(excerpt, "hunter2") || strings.Contains(excerpt, "abcd1234efgh") {
			t.Errorf("excerpt too long or unmasked at %s:%d: %.80q", source, line, excerpt)
		}
		if size >= 5<<20 && reason != "not_json" {
			t.Errorf("5 MB line: %s", reason)
		}
	}
	if int64(n) != sum.Quarantined {
		t.Errorf("quarantine file has %d rows, summary says %d", n, sum.Quarantined)
	}
}

func TestLongLineLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.ndjson")
	os.WriteFile(p, []byte(okRecord+"\n"+strings.Repeat("x", 5000)+"\n"+okRecord+"\n"), 0o644)
	out := t.TempDir()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{p}, OutDir: out, MaxLineBytes: 4096, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ByReason["line_too_long"] != 1 || sum.Observations != 2 || !sum.Balanced() {
		t.Errorf("summary %+v", sum)
	}
	var excerpt string
	if err := duck(t).QueryRow(`SELECT excerpt FROM read_parquet(?)`, filepath.Join(out, "quarantine", "*", "*.parquet")).Scan(&excerpt); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(excerpt, "xxxx") || len(excerpt) > 200 {
		t.Errorf("over-long line excerpt %q", excerpt)
	}
}

func TestMissingInputIsAnError(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	for _, p := range []string{filepath.Join(dir, "nope.ndjson"), filepath.Join(notDir, "child")} {
		_, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{p}, OutDir: t.TempDir(), Log: zerolog.Nop()})
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v should name the path", p, err)
		}
	}
}

func TestDuckDBReadsExchanges(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.ndjson.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	// A 2025-11-25 session: from 2026-07-28 on there are no sessions and
	// session_id is null, so the pseudonym is checked on an earlier version.
	zw.Write([]byte(strings.Replace(okRecord, `"protocol_version":"2026-07-28"`, `"protocol_version":"2025-11-25"`, 1) + "\n"))
	zw.Close()
	os.WriteFile(p, gz.Bytes(), 0o644)
	out := t.TempDir()
	sum := ingest(t, out, p)
	if sum.Exchanges != 1 {
		t.Fatalf("exchanges %d", sum.Exchanges)
	}
	// No temporary files are left behind.
	filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if strings.HasSuffix(path, ".tmp") {
			t.Errorf("temporary file left: %s", path)
		}
		return nil
	})
	db := duck(t)
	var (
		outcome, layer, session, errType, msg, dt, startedType, statusesType string
		code                                                                 int64
		statuses                                                             string
		latency                                                              float64
	)
	err := db.QueryRow(`SELECT outcome, layer, session_id, error_type, error_message, error_code, CAST(dt AS VARCHAR),
		typeof(started_at), typeof(http_statuses), CAST(http_statuses AS VARCHAR), latency_ms
		FROM read_parquet(?, hive_partitioning = true)`, filepath.Join(out, "exchanges", "*", "*.parquet")).
		Scan(&outcome, &layer, &session, &errType, &msg, &code, &dt, &startedType, &statusesType, &statuses, &latency)
	if err != nil {
		t.Fatal(err)
	}
	if outcome != "JSONRPC_ERROR" || layer != "protocol" || errType != "-32602" || code != -32602 || dt != "2026-10-17" || latency != 20 {
		t.Errorf("row: %s %s %s %d %s %v", outcome, layer, errType, code, dt, latency)
	}
	if !strings.HasPrefix(session, "k1:") || strings.Contains(session, "raw-session") {
		t.Errorf("session id not pseudonymized: %s", session)
	}
	if strings.Contains(msg, "Zq8xW2mN4vB7tK1p") || strings.Contains(msg, "ops@example.com") || !strings.Contains(msg, "[REDACTED:") {
		t.Errorf("error message not masked: %s", msg)
	}
	if startedType != "TIMESTAMP WITH TIME ZONE" || statusesType != "INTEGER[]" || statuses != "[200]" {
		t.Errorf("types: started_at %s, http_statuses %s = %s", startedType, statusesType, statuses)
	}
	// Running the same input again replaces the same file.
	ingest(t, out, p)
	var files int
	db.QueryRow(`SELECT count(*) FROM glob(?)`, filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&files)
	if files != 1 {
		t.Errorf("rerun left %d files", files)
	}
}

func TestInputsCompressionGlobsStdinAndUnknownFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rec := []byte(okRecord + "\n")
	var zl, zs bytes.Buffer
	zw := zlib.NewWriter(&zl)
	zw.Write(rec)
	zw.Close()
	enc, _ := zstd.NewWriter(&zs)
	enc.Write(rec)
	enc.Close()
	write("a.log.zlib", zl.Bytes())
	write("b.bin", zs.Bytes()) // compression and format come from content, not names
	write("notes.log", []byte("2026-01-01 this is nobody's MCP log, secret=hunter2hunter2\n"))
	stdin := write("stdin.ndjson", rec)

	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()

	out := t.TempDir()
	sum := ingest(t, out, filepath.Join(dir, "*.zlib"), filepath.Join(dir, "b.bin"), filepath.Join(dir, "notes.log"), "-")
	if sum.Exchanges != 3 || sum.ByFormat["wire"] != 3 || sum.ByFormat["unknown"] != 1 || sum.ByReason["unknown_format"] != 1 {
		t.Errorf("exchanges %d, formats %v, reasons %v", sum.Exchanges, sum.ByFormat, sum.ByReason)
	}
	var excerpt string
	if err := duck(t).QueryRow(`SELECT excerpt FROM read_parquet(?) WHERE reason = 'unknown_format'`, filepath.Join(out, "quarantine", "*", "*.parquet")).Scan(&excerpt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(excerpt, "nobody's MCP log") || strings.Contains(excerpt, "hunter2") {
		t.Errorf("unknown-format excerpt %q", excerpt)
	}
	// A pattern that matches nothing is an error naming it.
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{filepath.Join(dir, "*.nothing")}, OutDir: t.TempDir(), Log: zerolog.Nop()}); err == nil || !strings.Contains(err.Error(), "*.nothing") {
		t.Errorf("empty glob: %v", err)
	}
	// A forced format reads what detection would not, and an unknown name is refused.
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{stdin}, Format: "nope", OutDir: t.TempDir(), Log: zerolog.Nop()}); err == nil {
		t.Error("unknown -format accepted")
	}
	forced, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{filepath.Join(dir, "notes.log")}, Format: "wire", OutDir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil || forced.ByReason["not_json"] != 1 || !forced.Balanced() {
		t.Errorf("forced wire format: %v %+v", err, forced)
	}
}

func TestPseudonymsDoNotDependOnWorkers(t *testing.T) {
	pseudonyms := func(workers int) string {
		out := t.TempDir()
		if _, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{"../samples/har", "../samples/correlation"}, OutDir: out, Workers: workers,
			Pseudonyms: testKey(t), Log: zerolog.Nop()}); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := duck(t).QueryRow(`SELECT string_agg(session_id || '/' || coalesce(arguments_hash, ''), ',' ORDER BY exchange_id) FROM read_parquet(?)`,
			filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	one, four := pseudonyms(1), pseudonyms(4)
	if one == "" || one != four || !strings.Contains(one, "k1:") {
		t.Errorf("pseudonyms differ between 1 and 4 workers:\n%.200s\n%.200s", one, four)
	}
}

// TestLeaksFoundInReview covers secrets a review found in places the canary
// did not plant them: a free-text trigger, values quoted in reasons, a token
// behind a long JWT in a quarantine detail, escaped line breaks before a
// credential, and credentials in a URL's user information.
func TestLeaksFoundInReview(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9." + strings.Repeat("eyJzdWIiOiIxMjM0NTY3ODkwIn0", 8) + ".c2lnbmF0dXJlX2hlcmVfbG9uZw"
	secrets := []string{"ghp_Q9xK2mVb7LpR4tWz8Nc3Hd6Ys1Ua5Fe0Ji", "Zx81Kq0Pw93Lm27Vn46Bc15Qa", "Pq7Wn3Lk9Zx2Vb8M", "acct-77813-alice", "s3cr3tPassw0rd42"}
	lines := []string{
		// trigger with free text
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","side":"client","trigger":"retry by bot ghp_Q9xK2mVb7LpR4tWz8Nc3Hd6Ys1Ua5Fe0Ji","http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}"},"response":{"status":200,"body":"{}"}}}`,
		// a response id that is a secret, and an unknown resultType that is one
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:01Z","side":"client","connection":"a","http":{"request":{"method":"POST","url":"http://admin:s3cr3tPassw0rd42@localhost:8080/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":\"acct-77813-alice\",\"method\":\"tools/call\",\"params\":{}}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":\"Zx81Kq0Pw93Lm27Vn46Bc15Qa\",\"result\":{\"content\":[]}}"}}}`,
		// a bad side value: a long JWT, then a token
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:02Z","side":"Bearer ` + jwt + ` ghp_Q9xK2mVb7LpR4tWz8Nc3Hd6Ys1Ua5Fe0Ji","http":{"request":{"method":"POST"},"response":{"status":200}}}`,
		// garbage with escaped line breaks before credentials
		`{"note":"x\nBearer Pq7Wn3Lk9Zx2Vb8M\r\nAuthorization: Token Pq7Wn3Lk9Zx2Vb8M", "broken`,
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a.ndjson")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := t.TempDir()
	var logs bytes.Buffer
	policy, err := redact.LoadPolicy(writePolicy(t, "fields:\n  exchanges.reason: mask\n  exchanges.url: mask\n  quarantine.detail: truncate(200)\n  quarantine.excerpt: truncate(160)\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{p}, OutDir: out, Pseudonyms: testKey(t), Policy: policy, Log: zerolog.New(&logs)})
	if err != nil || !sum.Balanced() || sum.ByReason["bad_value"] != 2 || sum.Exchanges != 1 {
		t.Fatalf("run: %v %+v", err, sum)
	}
	var all strings.Builder
	all.WriteString(logs.String())
	for _, table := range []string{"exchanges", "quarantine"} {
		rows, err := duck(t).Query(`SELECT COLUMNS(*)::VARCHAR FROM read_parquet(?)`, filepath.Join(out, table, "*", "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			for _, v := range vals {
				all.WriteString(v.String + "\n")
			}
		}
		rows.Close()
	}
	for _, s := range secrets {
		if strings.Contains(all.String(), s) || strings.Contains(all.String(), s[:12]) {
			t.Errorf("%s (or its first 12 characters) reached the output", s)
		}
	}
}

func writePolicy(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(p, []byte(text), 0o644)
	return p
}
