package classify_test

import (
	"reflect"
	"testing"

	"mcptrace/classify"
	"mcptrace/schema"
)

// sameAsOracle fails when Classify and the code it replaced
// (classify.OracleClassify) give ev different verdicts, or when they do on
// ev with its messages stripped of the decoder's typed fields (read from
// Raw instead).
func sameAsOracle(t testing.TB, where string, ev *classify.Evidence) {
	t.Helper()
	for _, e := range []*classify.Evidence{ev, withoutRPC(ev)} {
		got, want := classify.Classify(e), classify.OracleClassify(e)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Classify and its oracle differ:\nnew %+v\nold %+v", where, got, want)
		}
	}
}

// withoutRPC is a copy of ev whose messages have no schema.RPC.
func withoutRPC(ev *classify.Evidence) *classify.Evidence {
	strip := func(ms []schema.Message) []schema.Message {
		out := append([]schema.Message(nil), ms...)
		for i := range out {
			out[i].RPC = nil
		}
		return out
	}
	c := *ev
	c.Attempts = append([]classify.Attempt(nil), ev.Attempts...)
	for i := range c.Attempts {
		c.Attempts[i].Messages = strip(c.Attempts[i].Messages)
	}
	if ev.Response != nil {
		r := *ev.Response
		r.RPC = nil
		c.Response = &r
	}
	c.Stray = strip(ev.Stray)
	return &c
}

// TestClassifySameAsOracle: Classify gives the old code's verdict on
// BenchmarkClassify's mix, on the exchanges of generated traffic (both
// sides, as BenchmarkClassifyTraffic builds them) and on every response
// body of the sample logs under each way FuzzClassify frames one (method,
// version, id, flags, attempts, stream or not).
func TestClassifySameAsOracle(t *testing.T) {
	n := 0
	for _, ev := range benchMix(t) {
		sameAsOracle(t, "mix", ev)
		n++
	}
	for _, ev := range trafficEvidence(t, 16<<20) {
		sameAsOracle(t, "traffic", ev)
		n++
	}
	var bodies [][]byte
	for _, r := range sampleResponses(t) {
		bodies = append(bodies, []byte(r.body))
	}
	if len(bodies) < 100 {
		t.Fatalf("only %d sample bodies", len(bodies))
	}
	for i, body := range bodies {
		for _, head := range [][]byte{{0, 3, 0, 0, 1, 0}, {0, 2, 1, 32, 1, 0}, {0, 4, 0, 2, 2, 1}, {1, 3, 0, 0, 1, 0},
			{2, 1, 0, 64, 3, 4}, {0, 3, 2, 9, 1, 0}, {0, 4, 3, 16, 0, 0}, {3, 3, 0, 1, 1, 8}, {0, 4, 0, 0, 1, 6}} {
			sameAsOracle(t, "sample body "+string(rune('0'+i%10)), fuzzEvidenceOf(head, body))
			n++
		}
	}
	t.Logf("%d exchanges judged the same", n)
}

// fuzzEvidenceOf is fuzzEvidence of head (the choice bytes) and body.
func fuzzEvidenceOf(head, body []byte) *classify.Evidence {
	return fuzzEvidence(append(append([]byte(nil), head...), body...))
}
