package report

import (
	"context"
	"fmt"
)

// repeat: the exchange repeats an earlier one (retry_origin says who sent
// it again: sdk, application, manual, unknown).
const repeat = "coalesce(retry_origin, 'none') <> 'none'"

const repeatOK = "outcome IN ('SUCCESS', 'TOOL_SUCCESS')"

// Retries is the retries report: repeats by who sent them, how many ended
// in success, unsafe repeats (of tools neither read-only nor idempotent,
// after an outcome that leaves side effects uncertain), ignored
// Retry-After, duplicates and side effects done twice, then the unsafe
// ones per tool.
func (d *Dataset) Retries(ctx context.Context, limit int) (*Report, error) {
	r := &Report{Name: "retries", Title: "Retries"}
	sum, err := d.table(ctx, "summary", "Summary", "a repeat: an exchange that repeats an earlier one (retry_origin not none)", []Column{
		{Name: "repeats", Kind: Int}, {Name: "repeats_succeeded", Kind: Int, Head: "repeats that ended in success"},
		{Name: "repeat_success_rate", Kind: Rate, Head: "repeat success rate"},
		{Name: "unsafe_repeats", Kind: Int, Head: "unsafe repeats (retry_unsafe)"},
		{Name: "duplicate_side_effects", Kind: Int, Head: "side effects done twice (duplicate_side_effect)"},
		{Name: "retry_after_given", Kind: Int, Head: "repeats after a Retry-After"},
		{Name: "retry_after_ignored", Kind: Int, Head: "Retry-After ignored (repeated too soon)"},
		{Name: "duplicates", Kind: Int, Head: "duplicates (same call within 50 ms)"},
		{Name: "multi_post", Kind: Int, Head: "exchanges POSTed more than once"},
	}, fmt.Sprintf(`SELECT count(*) FILTER (WHERE %[1]s), count(*) FILTER (WHERE %[1]s AND %[2]s),
		(count(*) FILTER (WHERE %[1]s AND %[2]s))::DOUBLE / nullif(count(*) FILTER (WHERE %[1]s), 0),
		count(*) FILTER (WHERE retry_unsafe), count(*) FILTER (WHERE duplicate_side_effect),
		count(retry_after_s), count(*) FILTER (WHERE NOT retry_after_respected),
		count(duplicate_of), count(*) FILTER (WHERE post_count > 1) FROM ex`, repeat, repeatOK))
	if err != nil {
		return nil, err
	}
	sum.Vertical = true
	r.Tables = append(r.Tables, sum)
	by, err := d.table(ctx, "by_origin", "Repeats by origin", "",
		[]Column{{Name: "retry_origin", Kind: Text, Head: "origin"}, {Name: "repeats", Kind: Int}, {Name: "succeeded", Kind: Int},
			{Name: "success_rate", Kind: Rate, Head: "success"}, {Name: "unsafe", Kind: Int}, {Name: "retry_after_ignored", Kind: Int, Head: "Retry-After ignored"}},
		fmt.Sprintf(`SELECT retry_origin, count(*) AS n, count(*) FILTER (WHERE %[2]s), (count(*) FILTER (WHERE %[2]s))::DOUBLE / count(*),
			count(*) FILTER (WHERE retry_unsafe), count(*) FILTER (WHERE NOT retry_after_respected)
		FROM ex WHERE %[1]s GROUP BY retry_origin ORDER BY n DESC, retry_origin`, repeat, repeatOK))
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, by)
	unsafe, err := d.table(ctx, "unsafe", "Unsafe repeats and side effects done twice, per tool",
		"tools neither read-only nor idempotent per tools/list",
		[]Column{{Name: "tool", Kind: Text}, {Name: "unsafe_repeats", Kind: Int, Head: "unsafe repeats"},
			{Name: "duplicate_side_effects", Kind: Int, Head: "side effects twice"}},
		`SELECT coalesce(tool_name, '(none)') AS tool, count(*) FILTER (WHERE retry_unsafe) AS u, count(*) FILTER (WHERE duplicate_side_effect) AS s
		FROM ex WHERE retry_unsafe OR duplicate_side_effect GROUP BY tool ORDER BY u + s DESC, tool`+limitSQL(limit))
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, unsafe)
	return r, nil
}
