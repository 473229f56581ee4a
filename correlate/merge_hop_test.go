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

// A client that read a JSON-RPC error and then closed the stream (go-sdk's
// client does, and its HAR entry shows net::ERR_ABORTED) did not give up on
// the request: the server sent the error, failed_hop server.
func TestMergedHopClosedAfterAnswer(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	closed, complete := "client_closed", "complete"
	code := int64(-32602)
	cl := row("client", "a", "5", t0, "JSONRPC_ERROR", 200)
	cl.StreamEnd, cl.ErrorCode = &closed, &code
	sv := row("server", "x", "5", t0, "JSONRPC_ERROR", 200)
	sv.StreamEnd, sv.ErrorCode = &complete, &code
	// Without the answer the close is still the client giving up.
	cl2 := row("client", "a", "6", t0.Add(time.Second), "STREAM_INCOMPLETE", 200)
	cl2.StreamEnd = &closed
	sv2 := row("server", "x", "6", t0.Add(time.Second), "STREAM_INCOMPLETE", 200)
	sv2.StreamEnd = &closed
	out := correlate.MergeViews([]schema.Exchange{cl, sv, cl2, sv2})
	want := map[string]string{"5": "server", "6": "client"}
	if len(out) != 2 {
		t.Fatalf("%d rows", len(out))
	}
	for _, r := range out {
		if r.Sides != "both" || r.FailedHop != want[*r.JSONRPCID] {
			t.Errorf("id %s: sides %s failed_hop %s, want both %s", *r.JSONRPCID, r.Sides, r.FailedHop, want[*r.JSONRPCID])
		}
	}
}

// The server answered isError and the client was told the call succeeded (a
// gateway rewrote the answer): the failure was hidden between them,
// failed_hop network; the outcome stays the client's.
func TestMergedHopHiddenOnTheWay(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	cl := row("client", "a", "2", t0, "TOOL_SUCCESS", 200)
	sv := row("server", "x", "2", t0, "TOOL_ERROR", 200)
	// A server view without an answer does not contradict a success.
	cl2 := row("client", "a", "3", t0.Add(time.Second), "TOOL_SUCCESS", 200)
	sv2 := row("server", "x", "3", t0.Add(time.Second), "STREAM_INCOMPLETE", 200)
	out := correlate.MergeViews([]schema.Exchange{cl, sv, cl2, sv2})
	want := map[string]string{"2": "network", "3": "none"}
	if len(out) != 2 {
		t.Fatalf("%d rows", len(out))
	}
	for _, r := range out {
		if r.Sides != "both" || r.FailedHop != want[*r.JSONRPCID] || r.Outcome != "TOOL_SUCCESS" {
			t.Errorf("id %s: sides %s failed_hop %s outcome %s, want both %s TOOL_SUCCESS", *r.JSONRPCID, r.Sides, r.FailedHop, r.Outcome, want[*r.JSONRPCID])
		}
	}
}
