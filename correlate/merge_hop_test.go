package correlate_test

import (
	"testing"
	"time"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// A stream that the client saw reset while the server saw the client close
// it was cut between them (a proxy, the network): failed_hop network, not
// server, although both views are STREAM_INCOMPLETE.
func TestMergedHopBrokenBetween(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	reset, closed, complete := "reset", "client_closed", "complete"
	cl := row("client", "a", "1", t0, "STREAM_INCOMPLETE", 200)
	cl.StreamEnd = &reset
	sv := row("server", "x", "1", t0, "STREAM_INCOMPLETE", 200)
	sv.StreamEnd = &closed
	// The same, but the server ended the stream itself without the answer:
	// the server failed.
	cl2 := row("client", "a", "2", t0.Add(time.Second), "STREAM_INCOMPLETE", 200)
	cl2.StreamEnd = &complete
	sv2 := row("server", "x", "2", t0.Add(time.Second), "STREAM_INCOMPLETE", 200)
	sv2.StreamEnd = &complete
	out := correlate.MergeViews([]schema.Exchange{cl, sv, cl2, sv2})
	want := map[string]string{"1": "network", "2": "server"}
	if len(out) != 2 {
		t.Fatalf("%d rows", len(out))
	}
	for _, r := range out {
		if r.Sides != "both" || r.FailedHop != want[*r.JSONRPCID] {
			t.Errorf("id %s: sides %s failed_hop %s, want both %s", *r.JSONRPCID, r.Sides, r.FailedHop, want[*r.JSONRPCID])
		}
	}
}

// A request the client abandoned (it aborted before any status, without a
// cancel) that the server had not answered: failed_hop client, as for a
// cancelled one. The server having answered, it stays network.
func TestMergedHopClientGaveUp(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	abort := "client_abort"
	cl := row("client", "a", "1", t0, "NO_RESPONSE", 0)
	cl.TransportFail = &abort
	sv := row("server", "x", "1", t0, "NO_RESPONSE", 0)
	sv.TransportFail = &abort
	cl2 := row("client", "a", "2", t0.Add(time.Second), "NO_RESPONSE", 0)
	cl2.TransportFail = &abort
	sv2 := row("server", "x", "2", t0.Add(time.Second), "TOOL_SUCCESS", 200)
	out := correlate.MergeViews([]schema.Exchange{cl, sv, cl2, sv2})
	want := map[string]string{"1": "client", "2": "network"}
	if len(out) != 2 {
		t.Fatalf("%d rows", len(out))
	}
	for _, r := range out {
		if r.Sides != "both" || r.FailedHop != want[*r.JSONRPCID] {
			t.Errorf("id %s: sides %s failed_hop %s, want both %s", *r.JSONRPCID, r.Sides, r.FailedHop, want[*r.JSONRPCID])
		}
	}
}
