package report

import (
	"context"
	"fmt"
	"strings"

	"mcptrace/classify"
)

// FalseSuccessLabels say what each false-success class is, for people.
var FalseSuccessLabels = map[string]string{
	classify.FalseJSONRPCError:  "JSON-RPC error",
	classify.FalseToolError:     "tool error (isError)",
	classify.FalseInvalidResult: "invalid result",
	classify.FalseIncomplete:    "incomplete stream or body",
}

// outcomeOrder is an ORDER BY key putting outcomes in classify.Outcomes
// order (others last).
func outcomeOrder(col string) string {
	q := make([]string, len(classify.Outcomes))
	for i, o := range classify.Outcomes {
		q[i] = quote(o)
	}
	return "coalesce(list_position([" + strings.Join(q, ", ") + "], " + col + "), 1000), " + col
}

const is2xx = "final_status BETWEEN 200 AND 299"

// Overview is the overview report: how many exchanges, how many looked
// successful at the HTTP layer but were not (a rate over the exchanges that
// got a 2xx, by class), and the exchanges by layer and outcome.
func (d *Dataset) Overview(ctx context.Context) (*Report, error) {
	r := &Report{Name: "overview", Title: "Overview"}
	sum, err := d.table(ctx, "summary", "Summary", "", []Column{
		{Name: "exchanges", Kind: Int}, {Name: "first_started_at", Kind: Time, Head: "first exchange"},
		{Name: "last_started_at", Kind: Time, Head: "last exchange"},
		{Name: "http_2xx", Kind: Int, Head: "final HTTP status 2xx"},
		{Name: "false_successes", Kind: Int, Head: "false successes (2xx, then a failure)"},
		{Name: "false_success_rate", Kind: Rate, Head: "false-success rate (over 2xx)"},
		{Name: "failed", Kind: Int, Head: "failures (any status)"},
		{Name: "quarantined", Kind: Int, Head: "quarantined input records (unfiltered)"},
		{Name: "files", Kind: Int, Head: "exchanges files read"},
	}, fmt.Sprintf(`SELECT count(*), min(started_at), max(started_at), count(*) FILTER (WHERE %[1]s), count(false_success),
		count(false_success)::DOUBLE / nullif(count(*) FILTER (WHERE %[1]s), 0), count(*) FILTER (WHERE failed), %[2]d, %[3]d FROM ex`,
		is2xx, d.Quarantined, d.Files))
	if err != nil {
		return nil, err
	}
	sum.Vertical = true
	r.Tables = append(r.Tables, sum)
	var total2xx int64
	if n, ok := sum.Rows[0][3].(int64); ok {
		total2xx = n
	}

	// False successes by class, in classify's order, with zeros.
	counts, err := d.query(ctx, []Column{{Kind: Text}, {Kind: Int}},
		"SELECT false_success, count(*) FROM ex WHERE false_success IS NOT NULL GROUP BY 1")
	if err != nil {
		return nil, err
	}
	byClass := map[string]int64{}
	for _, row := range counts {
		byClass[row[0].(string)] = row[1].(int64)
	}
	fs := &Table{Name: "false_successes", Title: "False successes: final HTTP status 2xx, then a failure",
		Note: "rate over the exchanges whose final attempt got a 2xx; interaction outcomes and UNKNOWN are not failures (next table)",
		Cols: []Column{{Name: "class", Kind: Text}, {Name: "what", Kind: Text}, {Name: "outcomes", Kind: Text},
			{Name: "count", Kind: Int}, {Name: "rate", Kind: Rate, Head: "rate (over 2xx)"}}}
	var all int64
	for _, c := range classify.FalseSuccessOrder {
		var outs []string
		for _, o := range classify.Outcomes {
			if classify.FalseSuccessClasses[o] == c {
				outs = append(outs, o)
			}
		}
		fs.Rows = append(fs.Rows, []any{c, FalseSuccessLabels[c], strings.Join(outs, " "), byClass[c], ratio(byClass[c], total2xx)})
		all += byClass[c]
	}
	fs.Rows = append(fs.Rows, []any{"total", "false successes", "", all, ratio(all, total2xx)})
	r.Tables = append(r.Tables, fs)

	ok, err := d.table(ctx, "not_failures_2xx", "Final HTTP status 2xx, not a failure",
		"INPUT_REQUIRED and CANCELLED are the interaction flow; UNKNOWN: the log lacks the evidence",
		[]Column{{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "rate", Kind: Rate, Head: "rate (over 2xx)"}},
		fmt.Sprintf(`SELECT outcome, layer, count(*), count(*)::DOUBLE / %d FROM ex WHERE %s AND false_success IS NULL
		GROUP BY outcome, layer ORDER BY %s, layer`, max(total2xx, 1), is2xx, outcomeOrder("outcome")))
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, ok)

	layers, err := d.table(ctx, "layers", "Exchanges by layer", "", []Column{{Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "share", Kind: Rate}},
		`SELECT layer, count(*), count(*)::DOUBLE / sum(count(*)) OVER () FROM ex GROUP BY layer
		ORDER BY coalesce(list_position(['application', 'interaction', 'protocol', 'transport', 'unknown'], layer), 100), layer`)
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, layers)

	outcomes, err := d.table(ctx, "outcomes", "Exchanges by outcome and layer", "",
		[]Column{{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "share", Kind: Rate}},
		`SELECT outcome, layer, count(*), count(*)::DOUBLE / sum(count(*)) OVER () FROM ex GROUP BY outcome, layer ORDER BY `+outcomeOrder("outcome")+", layer")
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, outcomes)
	return r, nil
}

// ratio is n/d, or nil (no value) when d is 0.
func ratio(n, d int64) any {
	if d == 0 {
		return nil
	}
	return float64(n) / float64(d)
}
