package report

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"mcptrace/classify"
)

// FalseSuccessLabels say what each false-success class is, for people.
var FalseSuccessLabels = map[string]string{
	classify.FalseJSONRPCError:  "JSON-RPC error",
	classify.FalseToolError:     "tool error (isError)",
	classify.FalseInvalidResult: "invalid result",
	classify.FalseIncomplete:    "incomplete stream or body",
}

const is2xx = "final_status BETWEEN 200 AND 299"

// Overview is the overview report: how many exchanges, how many looked
// successful at the HTTP layer but were not (a rate over the exchanges that
// got a 2xx, by class), and the exchanges by layer and outcome.
//
// It reads the dataset once: counts by outcome, layer and final status
// (a few dozen groups), from which every table is computed here with
// classify's own functions.
func (d *Dataset) Overview(ctx context.Context) (*Report, error) {
	groups, err := d.query(ctx, []Column{{Kind: Text}, {Kind: Text}, {Kind: Int}, {Kind: Int}, {Kind: Time}, {Kind: Time}},
		"SELECT outcome, layer, final_status, count(*), min(started_at), max(started_at) FROM ex GROUP BY ALL")
	if err != nil {
		return nil, err
	}
	type ol struct{ outcome, layer string }
	var total, n2xx, failed int64
	var first, last any
	byClass := map[string]int64{}
	byOutcome := map[ol]int64{}
	ok2xx := map[ol]int64{}
	byLayer := map[string]int64{}
	for _, g := range groups {
		k := ol{g[0].(string), g[1].(string)}
		var status int32
		if s, ok := g[2].(int64); ok {
			status = int32(s)
		}
		n := g[3].(int64)
		total += n
		byOutcome[k] += n
		byLayer[k.layer] += n
		if classify.IsFailure(k.outcome) {
			failed += n
		}
		if classify.Is2xx(status) {
			n2xx += n
			if c := classify.FalseSuccess(status, k.outcome); c != "" {
				byClass[c] += n
			} else {
				ok2xx[k] += n
			}
		}
		if t, ok := g[4].(time.Time); ok && (first == nil || t.Before(first.(time.Time))) {
			first = t
		}
		if t, ok := g[5].(time.Time); ok && (last == nil || t.After(last.(time.Time))) {
			last = t
		}
	}
	var all int64
	for _, n := range byClass {
		all += n
	}
	r := &Report{Name: "overview", Title: "Overview"}
	r.Tables = append(r.Tables, &Table{Name: "summary", Title: "Summary", Vertical: true, Cols: []Column{
		{Name: "exchanges", Kind: Int}, {Name: "first_started_at", Kind: Time, Head: "first exchange"},
		{Name: "last_started_at", Kind: Time, Head: "last exchange"},
		{Name: "http_2xx", Kind: Int, Head: "final HTTP status 2xx"},
		{Name: "false_successes", Kind: Int, Head: "false successes (2xx, then a failure)"},
		{Name: "false_success_rate", Kind: Rate, Head: "false-success rate (over 2xx)"},
		{Name: "failed", Kind: Int, Head: "failures (any status)"},
		{Name: "quarantined", Kind: Int, Head: "quarantined input records (unfiltered)"},
		{Name: "files", Kind: Int, Head: "exchanges files read"},
	}, Rows: [][]any{{total, first, last, n2xx, all, ratio(all, n2xx), failed, d.Quarantined, int64(d.Files)}}})

	fs := &Table{Name: "false_successes", Title: "False successes: final HTTP status 2xx, then a failure",
		Note: "rate over the exchanges whose final attempt got a 2xx; interaction outcomes and UNKNOWN are not failures (next table)",
		Cols: []Column{{Name: "class", Kind: Text}, {Name: "what", Kind: Text}, {Name: "outcomes", Kind: Text},
			{Name: "count", Kind: Int}, {Name: "rate", Kind: Rate, Head: "rate (over 2xx)"}}}
	for _, c := range classify.FalseSuccessOrder {
		var outs []string
		for _, o := range classify.Outcomes {
			if classify.FalseSuccessClasses[o] == c {
				outs = append(outs, o)
			}
		}
		fs.Rows = append(fs.Rows, []any{c, FalseSuccessLabels[c], strings.Join(outs, " "), byClass[c], ratio(byClass[c], n2xx)})
	}
	fs.Rows = append(fs.Rows, []any{"total", "false successes", "", all, ratio(all, n2xx)})
	r.Tables = append(r.Tables, fs)

	olRows := func(m map[ol]int64, denom int64) [][]any {
		keys := make([]ol, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if a, b := outcomeRank(keys[i].outcome), outcomeRank(keys[j].outcome); a != b {
				return a < b
			}
			if keys[i].outcome != keys[j].outcome {
				return keys[i].outcome < keys[j].outcome
			}
			return keys[i].layer < keys[j].layer
		})
		var rows [][]any
		for _, k := range keys {
			rows = append(rows, []any{k.outcome, k.layer, m[k], ratio(m[k], denom)})
		}
		return rows
	}
	r.Tables = append(r.Tables, &Table{Name: "not_failures_2xx", Title: "Final HTTP status 2xx, not a failure",
		Note: "INPUT_REQUIRED and CANCELLED are the interaction flow; UNKNOWN: the log lacks the evidence",
		Cols: []Column{{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "rate", Kind: Rate, Head: "rate (over 2xx)"}},
		Rows: olRows(ok2xx, n2xx)})

	layers := &Table{Name: "layers", Title: "Exchanges by layer", Cols: []Column{{Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "share", Kind: Rate}}}
	names := sortedKeys(byLayer)
	sort.SliceStable(names, func(i, j int) bool { return layerRank(names[i]) < layerRank(names[j]) })
	for _, l := range names {
		layers.Rows = append(layers.Rows, []any{l, byLayer[l], ratio(byLayer[l], total)})
	}
	r.Tables = append(r.Tables, layers)
	r.Tables = append(r.Tables, &Table{Name: "outcomes", Title: "Exchanges by outcome and layer",
		Cols: []Column{{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "count", Kind: Int}, {Name: "share", Kind: Rate}},
		Rows: olRows(byOutcome, total)})
	return r, nil
}

var layerOrder = []string{classify.LayerApplication, classify.LayerInteraction, classify.LayerProtocol, classify.LayerTransport, classify.LayerUnknown}

func layerRank(l string) int {
	if i := slices.Index(layerOrder, l); i >= 0 {
		return i
	}
	return len(layerOrder)
}

func outcomeRank(o string) int {
	if i := slices.Index(classify.Outcomes, o); i >= 0 {
		return i
	}
	return len(classify.Outcomes)
}

// ratio is n/d, or nil (no value) when d is 0.
func ratio(n, d int64) any {
	if d == 0 {
		return nil
	}
	return float64(n) / float64(d)
}
