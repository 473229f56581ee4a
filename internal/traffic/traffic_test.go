package traffic_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"
	"github.com/tidwall/gjson"

	"mcptrace/correlate"
	"mcptrace/internal/traffic"
	"mcptrace/pipeline"
	"mcptrace/redact"
)

func gen(t testing.TB, o traffic.Options) ([]byte, traffic.Stats) {
	t.Helper()
	var b bytes.Buffer
	st, err := traffic.Write(&b, o)
	if err != nil {
		t.Fatalf("Write(%+v): %v", o, err)
	}
	if st.Bytes != int64(b.Len()) {
		t.Fatalf("Stats.Bytes %d, wrote %d", st.Bytes, b.Len())
	}
	return b.Bytes(), st
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, o := range []traffic.Options{
		{Format: "wire", Bytes: 400 << 10},
		{Format: "wire", Side: "server", Bytes: 400 << 10},
		{Format: "har", Bytes: 400 << 10},
		{Format: "claude", Bytes: 400 << 10},
		{Shape: traffic.ShapeOpenConversations, Conversations: 30},
		{Shape: traffic.ShapeLongSSE, Events: 50},
	} {
		name := o.Format + "/" + o.Side + "/" + o.Shape
		o.Seed = 7
		a, _ := gen(t, o)
		b, _ := gen(t, o)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: seed 7 twice gave different logs", name)
		}
		o.Seed = 8
		c, _ := gen(t, o)
		if bytes.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same log", name)
		}
	}
}

func TestBytesHonoured(t *testing.T) {
	for _, format := range []string{"wire", "har", "claude"} {
		for _, size := range []int64{1 << 20, 3 << 20} {
			out, st := gen(t, traffic.Options{Seed: 3, Format: format, Bytes: size})
			if int64(len(out)) < size || float64(len(out)) > float64(size)*1.04 {
				t.Errorf("%s: asked for %d bytes, got %d (%.2f%%)", format, size, len(out), 100*float64(len(out)-int(size))/float64(size))
			}
			if !utf8.Valid(out) {
				t.Errorf("%s: not valid UTF-8", format)
			}
			if format != "har" {
				if lines := int64(bytes.Count(out, []byte{'\n'})); lines != st.Records {
					t.Errorf("%s: Stats.Records %d, the log has %d lines", format, st.Records, lines)
				}
			}
		}
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []traffic.Options{
		{},                         // no size
		{Bytes: 1, Format: "pcap"}, // unknown format
		{Bytes: 1, Format: "har", Side: "server"}, // a HAR is the client's view
		{Bytes: 1, Side: "proxy"},
		{Bytes: 1, Shape: "bursty"},
		{Shape: traffic.ShapeLongSSE, Format: "har"},
		{Bytes: -1},
	} {
		if _, err := traffic.Write(&bytes.Buffer{}, o); err == nil {
			t.Errorf("Write(%+v) accepted", o)
		}
	}
}

// ingest runs the pipeline over files and checks that every record was
// accounted for and nothing was quarantined.
func ingest(t *testing.T, files ...string) (*pipeline.Summary, string) {
	t.Helper()
	key, err := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: files, OutDir: out, Pseudonyms: key, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Balanced() {
		t.Fatalf("summary not balanced: %+v", sum)
	}
	if sum.Quarantined != 0 {
		t.Fatalf("%d records quarantined: %v", sum.Quarantined, sum.ByReason)
	}
	return sum, out
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
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

// outcomes reads outcome counts back from the Parquet dataset with DuckDB.
func outcomes(t *testing.T, db *sql.DB, out, where string) map[string]int64 {
	t.Helper()
	q := `SELECT outcome, count(*) FROM read_parquet(?) ` + where + ` GROUP BY outcome`
	rows, err := db.Query(q, filepath.Join(out, "exchanges", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var o string
		var n int64
		if err := rows.Scan(&o, &n); err != nil {
			t.Fatal(err)
		}
		m[o] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func sameCounts(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if got[k] != want[k] {
			fmt.Fprintf(&b, " %s: %d, want %d;", k, got[k], want[k])
		}
	}
	t.Errorf("%s: outcomes differ:%s", what, b.String())
}

// TestIngestEachFormat ingests every format and side and checks that the
// pipeline finds exactly the outcomes the generator made.
func TestIngestEachFormat(t *testing.T) {
	db := duck(t)
	for _, c := range []struct {
		o    traffic.Options
		file string
	}{
		{traffic.Options{Format: "wire", Bytes: 3 << 20, Sessions: 40}, "client.ndjson"},
		{traffic.Options{Format: "wire", Side: "server", Bytes: 3 << 20, Sessions: 40}, "server.ndjson"},
		{traffic.Options{Format: "har", Bytes: 3 << 20, Sessions: 20}, "console.har"},
		{traffic.Options{Format: "claude", Bytes: 2 << 20}, "mcp-server-x.log"},
	} {
		name := c.o.Format + "-client"
		if c.o.Side != "" {
			name = c.o.Format + "-" + c.o.Side
		}
		t.Run(name, func(t *testing.T) {
			c.o.Seed = 11
			b, st := gen(t, c.o)
			sum, out := ingest(t, writeFile(t, c.file, b))
			if sum.Records != st.Records || sum.Exchanges != st.Exchanges {
				t.Errorf("ingest read %d records and wrote %d exchanges; the generator wrote %d and %d", sum.Records, sum.Exchanges, st.Records, st.Exchanges)
			}
			sameCounts(t, "summary", sum.ByOutcome, st.ByOutcome)
			sameCounts(t, "parquet", outcomes(t, db, out, ""), st.ByOutcome)
			if len(st.ByOutcome) < 4 {
				t.Errorf("only %v: too little variety", st.ByOutcome)
			}
		})
	}
}

// TestEveryOutcome: a larger wire log holds every outcome the generator
// makes, and ingest agrees on each.
func TestEveryOutcome(t *testing.T) {
	b, st := gen(t, traffic.Options{Seed: 5, Bytes: 12 << 20, Sessions: 100})
	sum, out := ingest(t, writeFile(t, "c.ndjson", b))
	sameCounts(t, "summary", sum.ByOutcome, st.ByOutcome)
	for _, o := range []string{"SUCCESS", "TOOL_SUCCESS", "TOOL_ERROR", "JSONRPC_ERROR", "HTTP_ERROR", "NO_RESPONSE", "STREAM_INCOMPLETE", "CANCELLED"} {
		if st.ByOutcome[o] == 0 {
			t.Errorf("no %s in %v", o, st.ByOutcome)
		}
	}
	if sum.SuspectHidden == 0 {
		t.Error("no TOOL_SUCCESS whose text says the tool failed")
	}
	// Error messages that leak a password or an e-mail address give the
	// redactor work; what reaches the Parquet is masked.
	if sum.Redactions["email"] == 0 || sum.Redactions["url_password"] == 0 {
		t.Errorf("redactions %v: want e-mail addresses and URL passwords", sum.Redactions)
	}
	var masked, leaked int64
	err := duck(t).QueryRow(`SELECT count(*) FILTER (WHERE error_message LIKE '%[REDACTED:%'),
		count(*) FILTER (WHERE regexp_matches(error_message, '[a-z]+\.[a-z]+@') OR error_message LIKE '%billing_app:%@%')
		FROM read_parquet(?)`, filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&masked, &leaked)
	if err != nil {
		t.Fatal(err)
	}
	if masked == 0 || leaked != 0 {
		t.Errorf("%d error messages masked, %d with a secret left", masked, leaked)
	}
}

// TestClientAndServerMerge ingests the client's and the server's logs of
// one seed together: every exchange appears once, the merged rows keep the
// client's verdict and carry the server's.
func TestClientAndServerMerge(t *testing.T) {
	o := traffic.Options{Seed: 21, Exchanges: 2000, Sessions: 50}
	cb, cst := gen(t, o)
	o.Side = "server"
	sb, sst := gen(t, o)
	sum, out := ingest(t, writeFile(t, "client.ndjson", cb), writeFile(t, "server.ndjson", sb))
	if !sum.Merging {
		t.Fatal("the run did not merge")
	}
	db := duck(t)
	// Every client exchange once, with the client's verdict.
	sameCounts(t, "client's view", outcomes(t, db, out, "WHERE sides IN ('client', 'both')"), cst.ByOutcome)
	// The server's verdicts: server_outcome on merged rows, outcome on the others.
	rows, err := db.Query(`SELECT coalesce(server_outcome, outcome), count(*) FROM read_parquet(?) WHERE sides IN ('server', 'both') GROUP BY 1`,
		filepath.Join(out, "exchanges", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	srv := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		rows.Scan(&k, &n)
		srv[k] = n
	}
	rows.Close()
	sameCounts(t, "server's view", srv, sst.ByOutcome)

	// A server row is left unmerged only when its client row began more
	// than correlate.MergeTolerance earlier: the SDK's 503 retries, which
	// the gateway answered and the server never saw, took that long.
	var unmerged, explained int64
	q := `SELECT s.jsonrpc_id, epoch_ms(s.started_at) - epoch_ms(c.started_at), c.http_statuses[1], c.post_count
		FROM read_parquet(?) s LEFT JOIN read_parquet(?) c
		ON c.sides = 'client' AND c.session_id = s.session_id AND c.jsonrpc_id = s.jsonrpc_id
		WHERE s.sides = 'server'`
	glob := filepath.Join(out, "exchanges", "*", "*.parquet")
	rows, err = db.Query(q, glob, glob)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var gap, first, posts sql.NullInt64
		if err := rows.Scan(&id, &gap, &first, &posts); err != nil {
			t.Fatal(err)
		}
		unmerged++
		if gap.Valid && first.Int64 == 503 && posts.Int64 >= 2 && time.Duration(gap.Int64)*time.Millisecond > correlate.MergeTolerance-time.Second {
			explained++
		} else {
			t.Errorf("server row id %s unmerged: client row gap %v ms, first status %v, posts %v", id, gap, first, posts)
		}
	}
	rows.Close()
	if sum.Merged+unmerged != sst.Exchanges {
		t.Errorf("merged %d + unmerged %d server rows, the server's log has %d", sum.Merged, unmerged, sst.Exchanges)
	}
	if float64(sum.Merged) < 0.98*float64(sst.Exchanges) {
		t.Errorf("only %d of %d server rows merged", sum.Merged, sst.Exchanges)
	}
	t.Logf("%d of %d server rows merged; %d left apart by the merge tolerance", sum.Merged, sst.Exchanges, explained)
}

func TestOpenConversations(t *testing.T) {
	for _, side := range []string{"client", "server"} {
		b, st := gen(t, traffic.Options{Seed: 2, Shape: traffic.ShapeOpenConversations, Conversations: 20, Side: side})
		if bytes.Contains(b, []byte(`"method":"DELETE"`)) {
			t.Errorf("%s: a DELETE in open conversations", side)
		}
		want := map[string]int64{"SUCCESS": 20, "STREAM_INCOMPLETE": 10, "NO_RESPONSE": 10}
		if side == "server" {
			want = map[string]int64{"SUCCESS": 20, "STREAM_INCOMPLETE": 10}
		}
		sameCounts(t, side+" stats", st.ByOutcome, want)
		sum, out := ingest(t, writeFile(t, "open.ndjson", b))
		sameCounts(t, side+" summary", sum.ByOutcome, want)
		var sessions, calls int64
		err := duck(t).QueryRow(`SELECT count(DISTINCT session_id), count(*) FILTER (WHERE method = 'tools/call') FROM read_parquet(?)`,
			filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&sessions, &calls)
		if err != nil {
			t.Fatal(err)
		}
		if sessions != 20 || calls != want["STREAM_INCOMPLETE"]+want["NO_RESPONSE"] {
			t.Errorf("%s: %d sessions, %d tools/call rows", side, sessions, calls)
		}
	}
}

func TestLongSSE(t *testing.T) {
	for _, side := range []string{"client", "server"} {
		b, st := gen(t, traffic.Options{Seed: 4, Shape: traffic.ShapeLongSSE, Events: 300, Side: side})
		sameCounts(t, side+" stats", st.ByOutcome, map[string]int64{"SUCCESS": 1, "TOOL_SUCCESS": 1})
		sum, out := ingest(t, writeFile(t, "long.ndjson", b))
		sameCounts(t, side+" summary", sum.ByOutcome, st.ByOutcome)
		var events int64
		var complete bool
		err := duck(t).QueryRow(`SELECT sse_events, stream_complete FROM read_parquet(?) WHERE method = 'tools/call'`,
			filepath.Join(out, "exchanges", "*", "*.parquet")).Scan(&events, &complete)
		if err != nil {
			t.Fatal(err)
		}
		if events != 301 || !complete {
			t.Errorf("%s: %d events, complete %v; want 300 progress events and the result", side, events, complete)
		}
		if sum.Records != st.Records {
			t.Errorf("%s: %d records read, %d written", side, sum.Records, st.Records)
		}
	}
}

func TestDays(t *testing.T) {
	b, st := gen(t, traffic.Options{Seed: 9, Exchanges: 1500, Days: 5, Sessions: 50})
	if st.Exchanges != 1500 {
		t.Errorf("%d exchanges, want 1500", st.Exchanges)
	}
	days := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
		days[gjson.GetBytes(line, "ts").String()[:10]]++
	}
	if len(days) != 5 {
		t.Errorf("timestamps on %d days, want 5: %v", len(days), days)
	}
	// The same traffic as on one day: only the times differ (and the
	// keep-alive pings of GET streams left open over a jump).
	_, one := gen(t, traffic.Options{Seed: 9, Exchanges: 1500, Sessions: 50})
	if one.Records != st.Records {
		t.Errorf("1 day: %d records, 5 days: %d", one.Records, st.Records)
	}
	sameCounts(t, "1 day against 5", st.ByOutcome, one.ByOutcome)
}

// TestRealistic checks what makes the log worth benchmarking on.
func TestRealistic(t *testing.T) {
	b, st := gen(t, traffic.Options{Seed: 1, Bytes: 6 << 20})
	lines := bytes.Split(bytes.TrimSpace(b), []byte{'\n'})
	avg := st.Bytes / st.Records
	if avg < 2000 || avg > 5000 {
		t.Errorf("average record %d bytes, want about 3 KB", avg)
	}
	// Sessions interleave record by record.
	sessions := map[string]bool{}
	for _, l := range lines[:300] {
		sessions[gjson.GetBytes(l, "session_id").String()] = true
	}
	if len(sessions) < 100 {
		t.Errorf("the first 300 records belong to %d sessions", len(sessions))
	}
	// Records are in end_ts order.
	prev := ""
	for i, l := range lines {
		e := gjson.GetBytes(l, "end_ts").String()
		if e < prev {
			t.Fatalf("record %d ends at %s, before the previous one (%s)", i+1, e, prev)
		}
		prev = e
	}
	must := map[string]*regexp.Regexp{
		"bearer token":              regexp.MustCompile(`"authorization":"Bearer (ghp_|eyJ)[A-Za-z0-9_.-]{30,}"`),
		"api key":                   regexp.MustCompile(`"x-api-key":"(sk-live-|BSA)\w+"`),
		"e-mail in arguments":       regexp.MustCompile(`\\"(email|to|assignee_email)\\":\[?\\"[a-z.0-9]+@`),
		"escaped newline in a body": regexp.MustCompile(`\\\\n`),
		"escaped quote in a body":   regexp.MustCompile(`\\\\\\"`),
		"\\u escape (Python)":       regexp.MustCompile(`\\\\u00[e-f][0-9a-f]`),
		"non-ASCII text":            regexp.MustCompile(`[éüøłő日]`),
		"SDK retry":                 regexp.MustCompile(`"trigger":"sdk"`),
		"retry-after":               regexp.MustCompile(`"retry-after":"\d"`),
		"failure":                   regexp.MustCompile(`"failure":\{"kind":"(reset|timeout|connection_refused)"`),
		"cut stream":                regexp.MustCompile(`"stream_end":"(reset|timeout)"`),
		"event times":               regexp.MustCompile(`"event_times":\["`),
		"progress":                  regexp.MustCompile(`notifications/progress`),
		"DELETE":                    regexp.MustCompile(`"method":"DELETE"`),
		"GET stream":                regexp.MustCompile(`"method":"GET"`),
	}
	for what, re := range must {
		if !re.Match(b) {
			t.Errorf("no %s in the log", what)
		}
	}
	clients, servers, tools := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		clients[gjson.GetBytes(l, "client.name").String()] = true
		servers[gjson.GetBytes(l, "server.name").String()] = true
		body := gjson.GetBytes(l, "http.request.body").String()
		if gjson.Get(body, "method").String() == "tools/call" {
			tools[gjson.Get(body, "params.name").String()] = true
		}
	}
	if len(clients) < 5 || len(servers) < 5 || len(tools) < 20 {
		t.Errorf("%d clients, %d servers, %d tools", len(clients), len(servers), len(tools))
	}
	// The server's middleware drops credentials it is told to drop.
	sb, _ := gen(t, traffic.Options{Seed: 1, Bytes: 1 << 20, Side: "server"})
	if bytes.Contains(sb, []byte("Bearer ")) || !bytes.Contains(sb, []byte(`"Authorization":"[dropped]"`)) {
		t.Error("the server's log holds an Authorization value")
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, o := range []traffic.Options{{Format: "wire"}, {Format: "wire", Side: "server"}, {Format: "har"}, {Format: "claude"}} {
		b.Run(o.Format+"-"+max(o.Side, "client"), func(b *testing.B) {
			o.Bytes = 32 << 20
			var n int64
			for b.Loop() {
				st, err := traffic.Write(discard{}, o)
				if err != nil {
					b.Fatal(err)
				}
				n = st.Bytes
			}
			b.SetBytes(n)
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
