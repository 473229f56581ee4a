package report

import (
	"context"
	"fmt"
	"strconv"
)

// Session is one session's timeline: every exchange whose session_id is
// id, in the order it started, with its attempts, HTTP statuses, outcome
// and the row it repeats or duplicates (#N, the row's number here; an
// exchange outside the timeline by its id). The filters apply too.
func (d *Dataset) Session(ctx context.Context, id string) (*Report, error) {
	cols := []Column{{Name: "n", Kind: Int, Head: "#"}, {Name: "started_at", Kind: Time, Head: "started"},
		{Name: "latency_ms", Kind: MS, Head: "ms"}, {Name: "method", Kind: Text}, {Name: "tool", Kind: Text},
		{Name: "jsonrpc_id", Kind: Text, Head: "id"}, {Name: "posts", Kind: Int}, {Name: "http_statuses", Kind: Text, Head: "HTTP"},
		{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "repeats", Kind: Text, Head: "repeats"},
		{Name: "retry_origin", Kind: Text, Head: "origin"}, {Name: "flags", Kind: Text}, {Name: "reason", Kind: Text},
		{Name: "exchange_id", Kind: Text}}
	t, err := d.table(ctx, "timeline", "Session "+id, "every exchange of the session in start order; repeats: the row (#N) or exchange this one repeats or duplicates", cols,
		`SELECT row_number() OVER (ORDER BY started_at, exchange_id), started_at, latency_ms, method, tool_name, jsonrpc_id, post_count,
			array_to_string(http_statuses, ' '), outcome, layer, coalesce(retry_of, duplicate_of), nullif(retry_origin, 'none'),
			concat_ws(' ', CASE WHEN retry_unsafe THEN 'unsafe_retry' END, CASE WHEN duplicate_side_effect THEN 'side_effect_twice' END,
				CASE WHEN duplicate_of IS NOT NULL THEN 'duplicate' END, CASE WHEN session_expired THEN 'session_expired' END,
				CASE WHEN session_stuck THEN 'session_stuck' END, CASE WHEN late_response THEN 'late_response' END,
				CASE WHEN false_success IS NOT NULL THEN 'false_success' END),
			reason, exchange_id
		FROM ex WHERE session_id = `+quote(id)+` ORDER BY started_at, exchange_id`)
	if err != nil {
		return nil, err
	}
	row := map[string]int64{}
	for _, r := range t.Rows {
		row[r[len(r)-1].(string)] = r[0].(int64)
	}
	for _, r := range t.Rows {
		if of, ok := r[10].(string); ok {
			if n, ok := row[of]; ok {
				r[10] = "#" + strconv.FormatInt(n, 10)
			}
		}
		if r[12] == "" {
			r[12] = nil
		}
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("no exchange of session %q in %s (with these filters): session ids are written as pseudonyms (k1:..., run:...); `analyze session` lists them", id, d.Dir)
	}
	return &Report{Name: "session", Title: "Session timeline", Tables: []*Table{t}}, nil
}

// Sessions lists the sessions, most failures first, to pick one for
// Session.
func (d *Dataset) Sessions(ctx context.Context, limit int) (*Report, error) {
	t, err := d.table(ctx, "sessions", "Sessions, most failures first", "analyze session ID shows one",
		[]Column{{Name: "session_id", Kind: Text, Head: "session"}, {Name: "exchanges", Kind: Int}, {Name: "failed", Kind: Int},
			{Name: "false_successes", Kind: Int, Head: "false succ."}, {Name: "repeats", Kind: Int},
			{Name: "client", Kind: Text}, {Name: "server", Kind: Text}, {Name: "first", Kind: Time}, {Name: "last", Kind: Time}},
		`SELECT session_id, count(*) AS n, count(*) FILTER (WHERE failed) AS f, count(false_success), count(*) FILTER (WHERE `+repeat+`),
			any_value(client_name), any_value(server_name), min(started_at), max(started_at)
		FROM ex WHERE session_id IS NOT NULL GROUP BY session_id ORDER BY f DESC, n DESC, session_id`+limitSQL(limit))
	if err != nil {
		return nil, err
	}
	return &Report{Name: "sessions", Title: "Sessions", Tables: []*Table{t}}, nil
}
