package wirelog_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"

	"mcptrace/pipeline"
	"mcptrace/redact"
	"mcptrace/wirelog"
)

// toyServer answers like a small stateful streamable-HTTP MCP server: JSON
// for initialize and tools/list, 202 for notifications, an event stream for
// tools/call (progress, then the result), an isError result for the "fail"
// tool and 503 for the "down" tool.
func toyServer(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	reply := func(result string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "toy-session-1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"toy","version":"1"}}`))
	case msg.Method == "tools/list":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}}]}`))
	case msg.Params.Name == "down":
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	case msg.Params.Name == "fail":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply(`{"content":[{"type":"text","text":"no such file"}],"isError":true}`))
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
		w.(http.Flusher).Flush()
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", reply(`{"content":[{"type":"text","text":"done"}]}`))
	}
}

// TestIngestReadsWhatItWrites runs MCP traffic through the middleware into a
// file, ingests the file, and reads the exchanges back with DuckDB.
func TestIngestReadsWhatItWrites(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.ndjson")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(wirelog.Handler(http.HandlerFunc(toyServer), f, &wirelog.Options{Server: &wirelog.Implementation{Name: "toy", Version: "1"}}))
	send := func(body string, session bool) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-live-0123456789abcdefghij")
		if session {
			req.Header.Set("Mcp-Session-Id", "toy-session-1")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, false)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, true)
	// Three calls at once: the lines must not interleave.
	var wg sync.WaitGroup
	for i, name := range []string{"ok", "fail", "down"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 3+i, name), true)
		}()
	}
	wg.Wait()
	srv.Close() // every handler has returned: every line is written
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(logPath)
	if strings.Contains(string(raw), "sk-live-") {
		t.Fatal("the Authorization value reached the log")
	}

	out := filepath.Join(dir, "out")
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: []string{logPath}, OutDir: out, Pseudonyms: key, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Quarantined != 0 || !sum.Balanced() {
		t.Fatalf("ingest quarantined %d records (balanced %v): %+v", sum.Quarantined, sum.Balanced(), sum.ByReason)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT method, coalesce(tool_name, ''), outcome, sides, format, CAST(http_statuses AS VARCHAR), coalesce(stream_end, ''),
		coalesce(sse_events, -1), session_id IS NOT NULL, coalesce(server_name, '')
		FROM read_parquet('` + filepath.Join(out, "exchanges", "*", "*.parquet") + `') ORDER BY CAST(jsonrpc_id AS INTEGER)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var method, tool, outcome, sides, format, statuses, streamEnd, serverName string
		var events int
		var hasSession bool
		if err := rows.Scan(&method, &tool, &outcome, &sides, &format, &statuses, &streamEnd, &events, &hasSession, &serverName); err != nil {
			t.Fatal(err)
		}
		if sides != "server" || format != "wire" || !hasSession || serverName != "toy" {
			t.Errorf("%s %s: sides %s format %s session %v server %q", method, tool, sides, format, hasSession, serverName)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %d", method, tool, outcome, statuses, streamEnd, events))
	}
	want := []string{
		"initialize  SUCCESS [200]  -1",
		"tools/list  SUCCESS [200]  -1",
		"tools/call ok TOOL_SUCCESS [200] complete 2",
		"tools/call fail TOOL_ERROR [200]  -1",
		"tools/call down HTTP_ERROR [503]  -1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("exchanges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
