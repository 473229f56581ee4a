package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"mcptrace/schema"
)

// limitLine is a client wire record of one POST, its response body resp of
// content type ctype, and extra members (",..." or "").
func limitLine(t *testing.T, ts, conn, reqBody, resp, ctype, extra string) string {
	t.Helper()
	rec := map[string]any{
		"mcptrace": "wire/1", "ts": ts, "end_ts": ts, "side": "client", "transport": "streamable-http", "connection": conn,
		"protocol_version": "2025-11-25",
		"http": map[string]any{
			"request":  map[string]any{"method": "POST", "url": "http://127.0.0.1:1/mcp", "headers": map[string]any{}, "body": reqBody},
			"response": map[string]any{"status": 200, "headers": map[string]any{}, "content_type": ctype, "body": resp, "stream_end": "complete"},
		},
	}
	if ctype != "text/event-stream" {
		delete(rec["http"].(map[string]any)["response"].(map[string]any), "stream_end")
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:len(b)-1]) + extra + "}"
}

func limitCall(id int, arg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{"q":%q}}}`, id, arg)
}

func limitResult(id, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", n))
}

// readQuarantine reads every quarantine row of the dataset at out.
func readQuarantine(t *testing.T, out string) []schema.Quarantine {
	t.Helper()
	var rows []schema.Quarantine
	err := filepath.WalkDir(filepath.Join(out, "quarantine"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		r, err := parquet.ReadFile[schema.Quarantine](p)
		rows = append(rows, r...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func readLedger(t *testing.T, out string) schema.Ledger {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, ".mcptrace", "ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l schema.Ledger
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// Past the body, event and depth limits, the real ingest binary
// quarantines the record whole, names the limit and its value in the
// quarantine row's detail, counts it by reason in the summary and the
// ledger, keeps the excerpt redacted, decodes the rest, and exits 6.
func TestRecordLimitsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"
	var stream strings.Builder
	for i := range 9 {
		fmt.Fprintf(&stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i)
	}
	stream.WriteString("event: message\ndata: " + limitResult(3, 2) + "\n\n") // 10 message events
	lines := []string{
		limitLine(t, "2026-10-17T09:14:03.100Z", "ok-1", limitCall(1, "a"), limitResult(1, 10), "application/json", ""),
		limitLine(t, "2026-10-17T09:14:03.200Z", "big", limitCall(2, secret), limitResult(2, 3000), "application/json", ""),
		limitLine(t, "2026-10-17T09:14:03.300Z", "stream", limitCall(3, "b"), stream.String(), "text/event-stream", ""),
		limitLine(t, "2026-10-17T09:14:03.400Z", "deep", limitCall(4, "c"), limitResult(4, 10), "application/json",
			`,"labels":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)),
		limitLine(t, "2026-10-17T09:14:03.500Z", "ok-2", limitCall(5, "d"), limitResult(5, 10), "application/json", ""),
	}
	in := filepath.Join(dir, "limits.ndjson")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Within the default limits every record is an exchange.
	out0 := filepath.Join(dir, "out0")
	if p, code := runIngestProc(t, "-out", out0, in); code != ExitOK {
		t.Fatalf("default limits: exit %d, want %d\n%s", code, ExitOK, p)
	}
	out := filepath.Join(dir, "out")
	p, code := runIngestProc(t, "-out", out, "-max-body", "2000", "-max-sse-events", "5", "-max-depth", "32", in)
	if code != ExitQuarantined {
		t.Fatalf("exit %d, want %d (done with quarantined input)\n%s", code, ExitQuarantined, p)
	}
	want := map[string]struct {
		line   int64
		detail string
	}{
		"body_too_large":      {2, fmt.Sprintf("response body of %d bytes is over -max-body 2000 bytes", len(limitResult(2, 3000)))},
		"too_many_sse_events": {3, "event stream of 10 message events is over -max-sse-events 5"},
		"nesting_too_deep":    {4, "JSON nests deeper than 32 levels (-max-depth)"},
	}
	rows := readQuarantine(t, out)
	if len(rows) != len(want) {
		t.Fatalf("%d quarantine rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, q := range rows {
		w, ok := want[q.Reason]
		if !ok || q.Line != w.line || !strings.Contains(q.Detail, w.detail) || q.Source != in {
			t.Errorf("quarantine row %+v; want line %d and a detail with %q", q, w.line, w.detail)
		}
		if strings.Contains(q.Excerpt, secret) || strings.Contains(q.Detail, secret) {
			t.Errorf("the secret reached the quarantine row: %+v", q)
		}
		if q.Reason == "body_too_large" && !strings.Contains(q.Excerpt, `"connection\":\"big`) && !strings.Contains(q.Excerpt, `"connection":"big"`) {
			t.Errorf("the excerpt is not the record's: %q", q.Excerpt)
		}
	}
	summary := p.stdout.String()
	for r := range want {
		if !strings.Contains(summary, r) {
			t.Errorf("the summary does not count %s:\n%s", r, summary)
		}
	}
	if !strings.Contains(summary, "quarantined:   3 records") || !strings.Contains(summary, "exchanges:     2 written") {
		t.Errorf("summary:\n%s", summary)
	}
	l := readLedger(t, out)
	if !l.Balanced || l.Totals.Quarantined != 3 || l.Totals.Observations != 2 || l.Out.Exchanges != 2 {
		t.Errorf("ledger totals %+v out %+v", l.Totals, l.Out)
	}
	for r := range want {
		if l.Totals.QuarantinedBy[r] != 1 {
			t.Errorf("ledger quarantined_by[%s] = %d, want 1", r, l.Totals.QuarantinedBy[r])
		}
	}
	if lim := l.Limits; lim.MaxBody != 2000 || lim.MaxSSEEvents != 5 || lim.MaxDepth != 32 || lim.MaxLine != 16<<20 || lim.MaxOpenConversations != 250000 {
		t.Errorf("ledger limits %+v", lim)
	}
	if l0 := readLedger(t, out0); l0.Totals.Quarantined != 0 || l0.Out.Exchanges != 5 || l0.Limits.MaxBody != 64<<20 || l0.Limits.MaxDepth != 512 {
		t.Errorf("default run: ledger totals %+v out %+v limits %+v", l0.Totals, l0.Out, l0.Limits)
	}
}

// Past -max-open-conversations the least recently active conversation is
// ended early: nothing is quarantined (exit 0), its open exchange's row is
// hold_cut with the limit in its reason, and the summary and the ledger
// count the conversations ended.
func TestOpenConversationLimitEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"mcptrace":"wire/1","ts":"2026-10-17T09:14:%02d.000Z","side":"client","transport":"stdio","connection":"conv-%d","stdio":{"direction":"c2s","line":%q}}`+"\n",
			i, i, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
	}
	in := filepath.Join(dir, "open.ndjson")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	p, code := runIngestProc(t, "-out", out, "-workers", "1", "-max-open-conversations", "3", in)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d\n%s", code, ExitOK, p)
	}
	if s := p.stdout.String(); !strings.Contains(s, "ended early:   3 conversations, more than -max-open-conversations 3 open") {
		t.Errorf("the summary does not say the limit ended conversations:\n%s", s)
	}
	l := readLedger(t, out)
	if l.Limits.ConversationsEnded != 3 || l.Limits.MaxOpenConversations != 3 || l.Out.Exchanges != 6 || l.Totals.Quarantined != 0 || !l.Balanced {
		t.Errorf("ledger limits %+v out %+v", l.Limits, l.Out)
	}
	var cut, named int
	err := filepath.WalkDir(filepath.Join(out, "exchanges"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		rows, err := parquet.ReadFile[struct {
			Reason  string `parquet:"reason"`
			HoldCut bool   `parquet:"hold_cut"`
		}](path)
		for _, r := range rows {
			if r.HoldCut {
				cut++
			}
			if strings.Contains(r.Reason, "conversation ended early: more than -max-open-conversations 3 open") {
				named++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if cut != 3 || named != 3 {
		t.Errorf("%d rows hold_cut and %d naming the limit, want 3 and 3", cut, named)
	}
	// With -max-open-conversations 0 (no bound) none ends early.
	out2 := filepath.Join(dir, "out2")
	if p, code := runIngestProc(t, "-out", out2, "-workers", "1", "-max-open-conversations", "0", in); code != ExitOK || strings.Contains(p.stdout.String(), "ended early") {
		t.Fatalf("no bound: exit %d\n%s", code, p)
	}
	if l := readLedger(t, out2); l.Limits.ConversationsEnded != 0 || l.Limits.MaxOpenConversations != 0 {
		t.Errorf("no bound: ledger limits %+v", l.Limits)
	}
}
