package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The sessions list and one session's timeline match DuckDB, retry links
// pointing at the row repeated.
func TestSession(t *testing.T) {
	dir := samplesDataset(t)
	db := duck(t, dir)
	j := analyzeJSONCmd(t, "session", "-data", dir)
	sameRowSet(t, "sessions", j.rows(t, "sessions", "sessions", "session_id", "exchanges", "failed", "false_successes", "repeats", "first", "last"),
		sqlRows(t, db, `SELECT session_id, count(*), count(*) FILTER (WHERE `+testFailed+`), count(*) FILTER (WHERE `+testFalseOK+`),
			count(*) FILTER (WHERE retry_origin <> 'none'), min(started_at), max(started_at) FROM x WHERE session_id IS NOT NULL GROUP BY ALL`))
	// The session with the most repeats.
	id := sqlRows(t, db, `SELECT session_id FROM x WHERE session_id IS NOT NULL GROUP BY 1 ORDER BY count(*) FILTER (WHERE retry_of IS NOT NULL) DESC, 1 LIMIT 1`)[0][0].(string)
	j = analyzeJSONCmd(t, "session", id, "-data", dir)
	got := j.rows(t, "session", "timeline", "n", "started_at", "method", "jsonrpc_id", "posts", "http_statuses", "outcome", "repeats", "exchange_id")
	want := sqlRows(t, db, `SELECT row_number() OVER (ORDER BY started_at, exchange_id), started_at, method, jsonrpc_id, post_count,
		array_to_string(http_statuses, ' '), outcome, coalesce(retry_of, duplicate_of), exchange_id FROM x WHERE session_id = '`+id+`' ORDER BY started_at, exchange_id`)
	row := map[any]string{}
	for _, r := range want {
		row[r[8]] = fmt.Sprintf("#%v", r[0])
	}
	links := 0
	for _, r := range want {
		if r[7] != nil {
			if n, ok := row[r[7]]; ok {
				r[7] = n
				links++
			}
		}
	}
	if links == 0 {
		t.Fatalf("session %s has no repeat inside it", id)
	}
	sameRows(t, "timeline", got, want)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"session", "k1:nosuch", "-data", dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `no exchange of session "k1:nosuch"`) {
		t.Errorf("unknown session: exit %d, %s", code, stderr.String())
	}
}

// analyzeJSONCmd runs `analyze cmd [ID] -format json ... args`.
func analyzeJSONCmd(t *testing.T, cmd string, args ...string) *jsonOut {
	t.Helper()
	head := []string{cmd}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		head, args = append(head, args[0]), args[1:]
	}
	out := analyzeOut(t, append(append(head, "-format", "json", "-limit", "0"), args...)...)
	var j jsonOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("analyze's JSON: %v\n%s", err, out)
	}
	return &j
}
