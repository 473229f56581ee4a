package report

import (
	"context"
	"fmt"
)

// Tools is the tools report: per tool of tools/call, the calls, the error
// rate by layer, false successes and latency percentiles; then each tool's
// most frequent errors (outcome, JSON-RPC code and the redacted message).
// limit bounds the tools listed (0: all), top the errors per tool.
func (d *Dataset) Tools(ctx context.Context, limit, top int) (*Report, error) {
	r := &Report{Name: "tools", Title: "Tools"}
	t, err := d.table(ctx, "tools", "Tool calls (tools/call)",
		"rates over the tool's calls; failure: a transport or protocol outcome, or TOOL_ERROR; latency over the calls that got a response (linear interpolation)",
		[]Column{{Name: "tool", Kind: Text}, {Name: "calls", Kind: Int}, {Name: "failed", Kind: Int},
			{Name: "error_rate", Kind: Rate, Head: "error rate"}, {Name: "transport_rate", Kind: Rate, Head: "transport"},
			{Name: "protocol_rate", Kind: Rate, Head: "protocol"}, {Name: "tool_error_rate", Kind: Rate, Head: "tool error"},
			{Name: "interaction", Kind: Int}, {Name: "false_successes", Kind: Int, Head: "false succ."},
			{Name: "p50_ms", Kind: MS, Head: "p50 ms"}, {Name: "p90_ms", Kind: MS, Head: "p90 ms"}, {Name: "p99_ms", Kind: MS, Head: "p99 ms"}},
		`SELECT tool_name, count(*) AS calls, count(*) FILTER (WHERE failed),
			count(*) FILTER (WHERE failed)::DOUBLE / count(*),
			count(*) FILTER (WHERE layer = 'transport')::DOUBLE / count(*),
			count(*) FILTER (WHERE layer = 'protocol')::DOUBLE / count(*),
			count(*) FILTER (WHERE outcome = 'TOOL_ERROR')::DOUBLE / count(*),
			count(*) FILTER (WHERE layer = 'interaction'), count(false_success),
			quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.9), quantile_cont(latency_ms, 0.99)
		FROM ex WHERE method = 'tools/call' AND tool_name IS NOT NULL
		GROUP BY tool_name ORDER BY calls DESC, tool_name`+limitSQL(limit))
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, t)
	if top <= 0 {
		top = 1 << 30
	}
	errs, err := d.table(ctx, "tool_errors", "Top errors per tool",
		fmt.Sprintf("at most %d per tool, most frequent first; HTTP: the final status (0: no response); messages as redacted at ingest", min(top, 1<<20)),
		[]Column{{Name: "tool", Kind: Text}, {Name: "outcome", Kind: Text}, {Name: "http_status", Kind: Int, Head: "HTTP"}, {Name: "error_code", Kind: Int, Head: "code"},
			{Name: "error_message", Kind: Text, Head: "message"}, {Name: "count", Kind: Int}},
		fmt.Sprintf(`SELECT tool_name, outcome, final_status, error_code, error_message, n FROM (
			SELECT tool_name, outcome, final_status, error_code, error_message, count(*) AS n,
				row_number() OVER (PARTITION BY tool_name ORDER BY count(*) DESC, outcome, final_status NULLS LAST, error_code NULLS LAST, error_message NULLS LAST) AS rk
			FROM ex WHERE method = 'tools/call' AND tool_name IS NOT NULL AND failed
			GROUP BY tool_name, outcome, final_status, error_code, error_message)
		WHERE rk <= %d ORDER BY tool_name, rk`, top))
	if err != nil {
		return nil, err
	}
	if limit > 0 {
		keep := map[any]bool{}
		for _, row := range t.Rows {
			keep[row[0]] = true
		}
		rows := errs.Rows[:0]
		for _, row := range errs.Rows {
			if keep[row[0]] {
				rows = append(rows, row)
			}
		}
		errs.Rows = rows
	}
	r.Tables = append(r.Tables, errs)
	return r, nil
}
