package report

import "context"

// Streams is the streams-and-sessions report: event streams and how they
// ended, incomplete streams and broken resumptions; expired sessions and
// whether the client re-initialised, requests stuck on a dead session;
// cancellations and late responses; MRTR chains and how they ended.
func (d *Dataset) Streams(ctx context.Context) (*Report, error) {
	r := &Report{Name: "streams", Title: "Streams and sessions"}
	sum, err := d.table(ctx, "summary", "Summary", "", []Column{
		{Name: "event_streams", Kind: Int, Head: "answered on an event stream"},
		{Name: "incomplete_streams", Kind: Int, Head: "incomplete streams (STREAM_INCOMPLETE)"},
		{Name: "resume_problems", Kind: Int, Head: "broken stream resumptions (resume_problem)"},
		{Name: "sessions_expired", Kind: Int, Head: "expired sessions (404 on a known session)"},
		{Name: "reinitialized", Kind: Int, Head: "  then re-initialised"},
		{Name: "not_reinitialized", Kind: Int, Head: "  not re-initialised"},
		{Name: "session_stuck", Kind: Int, Head: "stuck on a dead session (session_stuck)"},
		{Name: "cancelled", Kind: Int, Head: "cancelled by the client (CANCELLED)"},
		{Name: "late_responses", Kind: Int, Head: "late responses (after the cancel)"},
		{Name: "mrtr_chains", Kind: Int, Head: "MRTR chains"},
	}, `SELECT count(*) FILTER (WHERE sse_events IS NOT NULL), count(*) FILTER (WHERE outcome = 'STREAM_INCOMPLETE'),
		count(resume_problem), count(*) FILTER (WHERE session_expired), count(*) FILTER (WHERE session_expired AND reinitialized),
		count(*) FILTER (WHERE session_expired AND NOT reinitialized), count(*) FILTER (WHERE session_stuck),
		count(*) FILTER (WHERE outcome = 'CANCELLED'), count(*) FILTER (WHERE late_response), count(*) FILTER (WHERE mrtr_round = 1) FROM ex`)
	if err != nil {
		return nil, err
	}
	sum.Vertical = true
	r.Tables = append(r.Tables, sum)
	ends, err := d.table(ctx, "stream_ends", "Event streams by how they ended", "stream_end as logged; complete: the stream delivered the response",
		[]Column{{Name: "stream_end", Kind: Text, Head: "end"}, {Name: "streams", Kind: Int}, {Name: "complete", Kind: Int},
			{Name: "incomplete", Kind: Int, Head: "STREAM_INCOMPLETE"}, {Name: "cancelled", Kind: Int, Head: "CANCELLED"}},
		`SELECT coalesce(stream_end, '(not logged)') AS e, count(*) AS n, count(*) FILTER (WHERE stream_complete),
			count(*) FILTER (WHERE outcome = 'STREAM_INCOMPLETE'), count(*) FILTER (WHERE outcome = 'CANCELLED')
		FROM ex WHERE sse_events IS NOT NULL GROUP BY e ORDER BY n DESC, e`)
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, ends)
	mrtr, err := d.table(ctx, "mrtr", "MRTR chains by how they ended", "a chain: a request answered input_required and the rounds that continued it",
		[]Column{{Name: "chain_outcome", Kind: Text, Head: "chain outcome"}, {Name: "chains", Kind: Int}, {Name: "rounds", Kind: Int}, {Name: "max_round", Kind: Int, Head: "longest"}},
		`SELECT coalesce(chain_outcome, '(unknown)') AS c, count(*) FILTER (WHERE mrtr_round = 1) AS n, count(*), max(mrtr_round)
		FROM ex WHERE mrtr_round IS NOT NULL GROUP BY c ORDER BY n DESC, c`)
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, mrtr)
	return r, nil
}
