package classify_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mcptrace/classify"
	"mcptrace/decode"
	"mcptrace/schema"
)

var (
	fuzzOutcomes = []string{classify.ToolSuccess, classify.ToolError, classify.Success, classify.InputRequired, classify.Cancelled,
		classify.JSONRPCError, classify.MalformedJSON, classify.InvalidEnvelope, classify.InvalidToolResult, classify.InvalidResult,
		classify.HTTPError, classify.StreamIncomplete, classify.NoResponse, classify.Unknown}
	fuzzAdvice = []string{classify.AdviceRetryIfIdempotent, classify.AdviceRespectRetryAfter, classify.AdviceFixArguments,
		classify.AdviceInspectToolState, classify.AdviceInvestigateCompatibility, classify.AdviceProvideInput,
		classify.AdviceReinitializeSession, classify.AdviceNone}
	fuzzMethods  = []string{"tools/call", "tools/list", "initialize", "resources/read", "ping", "sampling/createMessage"}
	fuzzVersions = []string{"", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	fuzzStatuses = []int{200, 200, 202, 400, 401, 404, 429, 500, 503, 0}
	fuzzIDs      = []schema.ID{{Type: schema.IDNumber, Text: "1"}, {Type: schema.IDString, Text: "1"}, {Type: schema.IDNumber, Text: "1.0"}, {Type: schema.IDNull}}
)

// fuzzEvidence builds the evidence of one exchange from a fuzz input: the
// first bytes choose the method, version, id, flags and the attempts'
// statuses and ends; the rest is the final attempt's body (JSON, or an
// event stream when that attempt is one), read as decode reads it.
func fuzzEvidence(in []byte) *classify.Evidence {
	at := func(i int) int {
		if i < len(in) {
			return int(in[i])
		}
		return 0
	}
	body := []byte(nil)
	if len(in) > 6 {
		body = in[6:]
	}
	ev := &classify.Evidence{
		Method:            fuzzMethods[at(0)%len(fuzzMethods)],
		ProtocolVersion:   fuzzVersions[at(1)%len(fuzzVersions)],
		ID:                fuzzIDs[at(2)%len(fuzzIDs)],
		Cancelled:         at(3)&1 != 0,
		OnSession:         at(3)&2 != 0,
		StreamNotRecorded: at(3)&4 != 0,
		LateResponse:      at(3)&8 != 0,
	}
	where := schema.InResponseBody
	if at(3)&16 != 0 {
		ev.Reported = &schema.Reported{}
	}
	switch mode := at(4) % 4; mode {
	case 0: // stdio: the body is a frame matched by id, or stray
		msgs := decode.AppendMessages(nil, body, schema.InStdio, 0)
		if len(msgs) > 0 && at(5)&1 == 0 {
			ev.Response = &msgs[0]
		} else {
			ev.Stray = msgs
		}
	default: // attempts over HTTP, the last one carrying the body
		for n := range mode {
			a := classify.Attempt{Status: fuzzStatuses[(at(5)+n)%len(fuzzStatuses)]}
			a.Responded = a.Status != 0
			if !a.Responded {
				a.Failure = []string{schema.FailureTimeout, schema.FailureReset, schema.FailureClientAbort, schema.FailurePending}[at(5)%4]
			}
			if n == mode-1 && a.Responded {
				a.SSE = at(3)&32 != 0
				a.BodyRecorded = at(3)&64 == 0
				a.BodyEmpty = len(body) == 0
				if a.SSE {
					a.ContentType = "text/event-stream"
					a.StreamEnd = []string{schema.StreamComplete, schema.StreamReset, schema.StreamTimeout, schema.StreamClientClosed}[at(5)%4]
					for i, e := range decode.ParseSSE(string(body), a.StreamEnd == schema.StreamComplete) {
						a.Messages = decode.AppendMessages(a.Messages, []byte(e.Data), schema.InPostStream, i)
					}
				} else if a.BodyRecorded {
					a.ContentType = "application/json"
					a.Messages = decode.AppendMessages(nil, body, where, 0)
				}
			}
			ev.Attempts = append(ev.Attempts, a)
		}
	}
	return ev
}

// FuzzClassify: whatever the evidence, Classify returns a verdict from the
// vocabulary (an outcome, its layer, a retry advice, an error kind of
// ErrorKinds or none, a suspect reason of SuspectReasons only on a
// TOOL_SUCCESS), a reason, a judged message among the evidence's own; it
// is pure (the same verdict twice, the evidence unchanged); and it is the
// verdict of the code it replaced (classify.OracleClassify).
func FuzzClassify(f *testing.F) {
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error: x"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"field":"n"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`,
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`, `{"jsonrpc":"2.0","id":1,"res`, ``, `null`,
	}
	for i, b := range bodies {
		f.Add(append([]byte{byte(i), byte(i * 7), byte(i), byte(i * 13), byte(1 + i%3), byte(i)}, b...))
	}
	// Response bodies of the sample logs.
	for _, r := range sampleResponses(f) {
		if r.line%3 == 0 {
			sse := byte(0)
			if r.sse {
				sse = 32
			}
			f.Add(append([]byte{0, 3, 0, sse, 1, byte(r.line)}, r.body...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ev := fuzzEvidence(in)
		before := fuzzEvidence(in)
		v := classify.Classify(ev)
		if !reflect.DeepEqual(ev, before) {
			t.Fatalf("Classify changed its evidence")
		}
		if again := classify.Classify(ev); !reflect.DeepEqual(v, again) {
			t.Fatalf("two verdicts on one evidence:\n%+v\n%+v", v, again)
		}
		// The verdict is the old code's (classify_oracle_test.go), also
		// read from Raw alone.
		sameAsOracle(t, "fuzz", ev)
		if !slices.Contains(fuzzOutcomes, v.Outcome) || v.Layer != classify.LayerOf(v.Outcome) {
			t.Fatalf("outcome %q, layer %q", v.Outcome, v.Layer)
		}
		if !slices.Contains(fuzzAdvice, v.RetryAdvice) {
			t.Fatalf("%s: retry advice %q", v.Outcome, v.RetryAdvice)
		}
		if v.Reason == "" {
			t.Fatalf("%s: no reason", v.Outcome)
		}
		if v.ErrorKind != "" && !slices.Contains(classify.ErrorKinds, v.ErrorKind) {
			t.Fatalf("%s: error kind %q", v.Outcome, v.ErrorKind)
		}
		if v.Suspect != (v.SuspectReason != "") || v.Suspect && (v.Outcome != classify.ToolSuccess || !slices.Contains(classify.SuspectReasons, v.SuspectReason)) {
			t.Fatalf("%s: suspect %v %q", v.Outcome, v.Suspect, v.SuspectReason)
		}
		if v.Judged != nil && !ownMessage(ev, v.Judged) {
			t.Fatalf("%s: judged a message that is not the evidence's", v.Outcome)
		}
	})
}

// ownMessage: m is one of the evidence's messages (or an equal copy).
func ownMessage(ev *classify.Evidence, m *schema.Message) bool {
	same := func(list []schema.Message) bool {
		for i := range list {
			if &list[i] == m || reflect.DeepEqual(list[i], *m) {
				return true
			}
		}
		return false
	}
	if ev.Response != nil && (ev.Response == m || reflect.DeepEqual(*ev.Response, *m)) {
		return true
	}
	for _, a := range ev.Attempts {
		if same(a.Messages) {
			return true
		}
	}
	return same(ev.Stray)
}

// sampleResponse is one HTTP response body of a sample wire log.
type sampleResponse struct {
	line int  // its record's index in its file
	sse  bool // an event stream
	body string
}

// sampleResponses is every HTTP response body of the sample wire logs.
func sampleResponses(t testing.TB) []sampleResponse {
	t.Helper()
	var out []sampleResponse
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ndjson") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, l := range bytes.Split(b, []byte("\n")) {
			var rec schema.WireRecord
			if json.Unmarshal(l, &rec) == nil && rec.HTTP != nil && rec.HTTP.Response != nil && rec.HTTP.Response.Body != nil {
				out = append(out, sampleResponse{i, strings.Contains(rec.HTTP.Response.ContentType, "event-stream"), *rec.HTTP.Response.Body})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
