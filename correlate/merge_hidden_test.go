package correlate_test

import (
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// When the client's log lacked the evidence (UNKNOWN) and the server's row
// carries the verdict, the merged row takes the server's suspect columns
// with it; a client row with its own verdict keeps its own.
func TestMergeKeepsSuspectWithTheVerdict(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	reason := "error_prefix"
	c := row("client", "a", "1", t0, "UNKNOWN", 200)
	s := row("server", "x", "1", t0, "TOOL_SUCCESS", 200)
	s.SuspectHiddenError, s.SuspectReason = true, &reason
	out := correlate.MergeViews([]schema.Exchange{c, s})
	if len(out) != 1 || out[0].Outcome != "TOOL_SUCCESS" || !out[0].SuspectHiddenError || out[0].SuspectReason == nil || *out[0].SuspectReason != reason {
		t.Fatalf("client UNKNOWN, server suspect: got %+v", out)
	}
	c = row("client", "a", "1", t0, "TOOL_SUCCESS", 200)
	out = correlate.MergeViews([]schema.Exchange{c, s})
	if len(out) != 1 || out[0].SuspectHiddenError || out[0].SuspectReason != nil {
		t.Errorf("client's own verdict: the server's suspect columns leaked in: %+v", out[0])
	}
}
