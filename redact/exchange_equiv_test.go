package redact_test

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/pipeline"
	"mcptrace/redact"
	"mcptrace/schema"
)

// The redaction of whole rows, as pipeline.RedactExchange does it with a
// worker's memos, must write what it wrote before, under every action:
// oldRedactExchange is RedactExchange as it was, on the implementation of
// before (oldimpl_test.go).

func oldRedactExchange(e schema.Exchange, rd *redact.OldRedactor) schema.Exchange {
	rd.Optional("exchanges.session_id", &e.SessionID)
	rd.Required("exchanges.source", &e.Source)
	rd.Optional("exchanges.client_name", &e.ClientName)
	rd.Optional("exchanges.client_version", &e.ClientVersion)
	rd.Optional("exchanges.server_name", &e.ServerName)
	rd.Optional("exchanges.server_version", &e.ServerVersion)
	rd.Required("exchanges.method", &e.Method)
	rd.Optional("exchanges.tool_name", &e.ToolName)
	rd.Optional("exchanges.jsonrpc_id", &e.JSONRPCID)
	if e.URL != nil && rd.Policy.Action("exchanges.url").Kind != redact.Keep {
		u := redact.OldSanitizeURL(*e.URL, rd.Pseud, rd.Stats)
		e.URL = &u
	}
	rd.Optional("exchanges.url", &e.URL)
	rd.Optional("exchanges.content_type", &e.ContentType)
	rd.Optional("exchanges.protocol_version", &e.ProtocolVersion)
	rd.Optional("exchanges.result_type", &e.ResultType)
	rd.Optional("exchanges.error_message", &e.ErrorMessage)
	rd.Optional("exchanges.error_data", &e.ErrorData)
	rd.Optional("exchanges.error_type", &e.ErrorType)
	rd.Optional("exchanges.tool_error_text", &e.ToolErrorText)
	rd.Required("exchanges.reason", &e.Reason)
	rd.Optional("exchanges.retry_after", &e.RetryAfter)
	rd.Optional("exchanges.scenario", &e.Scenario)
	if e.Arguments != nil {
		h := rd.Pseud.HashJSON(e.Arguments)
		e.ArgumentsHash = &h
		sh := redact.OldShape(e.Arguments, rd.Stats)
		e.ArgumentsShape = &sh
		rd.Optional("exchanges.arguments_shape", &e.ArgumentsShape)
		e.Arguments = nil
	}
	return e
}

// sampleRows decodes and correlates the samples (one correlator per
// lineage, as the correlator's own sample test does).
func sampleRows(t *testing.T) []schema.Exchange {
	var rows []schema.Exchange
	err := filepath.WalkDir("../samples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) == ".md" || filepath.Ext(p) == ".go" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = redact.UndoCompressionForTest(t, p, b)
		format, ok := decode.Detect(b[:min(len(b), decode.SniffBytes)])
		if !ok {
			return nil
		}
		dec, _ := decode.DecoderFor(format)
		em := &emitter{}
		if err := dec(p, bytes.NewReader(b), em); err != nil {
			return nil // a log the decoder gives up on: its rows so far
		}
		cs := map[string]*correlate.Correlator{}
		for _, o := range em.obs {
			k := correlate.LineageKey(o)
			if cs[k] == nil {
				cs[k] = correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
			}
			cs[k].Add(o)
		}
		for _, c := range cs {
			c.Flush()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

type emitter struct{ obs []*schema.Observation }

func (e *emitter) Observation(o *schema.Observation)                  { e.obs = append(e.obs, o) }
func (e *emitter) Quarantine(schema.Position, string, string, []byte) {}
func (e *emitter) Skip(schema.Position, string)                       {}

// mixedRows fills every field from the differential corpus, values
// repeating (as in a log) so that the memos are used and filled past their
// bounds.
func mixedRows(t *testing.T, n int) []schema.Exchange {
	texts, jsons, urls := redact.EquivCorpusForTest(t)
	r := rand.New(rand.NewPCG(5, 8))
	pick := func(xs []string) *string {
		switch r.IntN(6) {
		case 0:
			return nil
		case 1, 2: // a value that recurs
			s := xs[r.IntN(min(len(xs), 40))]
			return &s
		}
		s := xs[r.IntN(len(xs))]
		return &s
	}
	str := func(xs []string) string {
		if p := pick(xs); p != nil {
			return *p
		}
		return ""
	}
	rows := make([]schema.Exchange, n)
	for i := range rows {
		rows[i] = schema.Exchange{
			SessionID: pick(texts), Source: str(texts), ClientName: pick(texts), ClientVersion: pick(texts),
			ServerName: pick(texts), ServerVersion: pick(texts), Method: str(texts), ToolName: pick(texts),
			JSONRPCID: pick(texts), URL: pick(urls), ContentType: pick(texts), ProtocolVersion: pick(texts),
			ResultType: pick(texts), ErrorMessage: pick(texts), ErrorData: pick(texts), ErrorType: pick(texts),
			ToolErrorText: pick(texts), Reason: str(texts), RetryAfter: pick(texts), Scenario: pick(texts),
		}
		if r.IntN(4) > 0 {
			rows[i].Arguments = jsons[r.IntN(len(jsons))]
		}
	}
	return rows
}

func opt(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return "=" + *p
}

func sameRow(t *testing.T, i int, got, want schema.Exchange) {
	t.Helper()
	for _, f := range []struct {
		name string
		g, w *string
	}{
		{"session_id", got.SessionID, want.SessionID}, {"client_name", got.ClientName, want.ClientName},
		{"client_version", got.ClientVersion, want.ClientVersion}, {"server_name", got.ServerName, want.ServerName},
		{"server_version", got.ServerVersion, want.ServerVersion}, {"tool_name", got.ToolName, want.ToolName},
		{"jsonrpc_id", got.JSONRPCID, want.JSONRPCID}, {"url", got.URL, want.URL}, {"content_type", got.ContentType, want.ContentType},
		{"protocol_version", got.ProtocolVersion, want.ProtocolVersion}, {"result_type", got.ResultType, want.ResultType},
		{"error_message", got.ErrorMessage, want.ErrorMessage}, {"error_data", got.ErrorData, want.ErrorData},
		{"error_type", got.ErrorType, want.ErrorType}, {"tool_error_text", got.ToolErrorText, want.ToolErrorText},
		{"retry_after", got.RetryAfter, want.RetryAfter}, {"scenario", got.Scenario, want.Scenario},
		{"arguments_hash", got.ArgumentsHash, want.ArgumentsHash}, {"arguments_shape", got.ArgumentsShape, want.ArgumentsShape},
		{"source", &got.Source, &want.Source}, {"method", &got.Method, &want.Method}, {"reason", &got.Reason, &want.Reason},
	} {
		if opt(f.g) != opt(f.w) {
			t.Errorf("row %d %s: %q, before %q", i, f.name, opt(f.g), opt(f.w))
		}
	}
	if got.Arguments != nil {
		t.Errorf("row %d: arguments written", i)
	}
}

// policies returns each policy twice, for the current and the old
// implementation.
func policies(t *testing.T) map[string][2]any {
	ps := map[string][2]any{
		"default":      {redact.DefaultPolicy(), redact.OldDefaultPolicy()},
		"no redaction": {redact.NoRedaction(), redact.OldNoRedaction()},
	}
	dir := t.TempDir()
	for _, action := range []string{"keep", "pseudonymize", "mask", "truncate(7)", "truncate(300)", "drop"} {
		var y bytes.Buffer
		y.WriteString("fields:\n")
		for _, f := range redact.Fields {
			y.WriteString("  " + f.Name + ": " + action + "\n")
		}
		p := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(p, y.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		np, err := redact.LoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		op, err := redact.OldLoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		ps["all "+action] = [2]any{np, op}
	}
	return ps
}

func TestRedactExchangeMatchesBefore(t *testing.T) {
	redact.BaseRulesOnlyForTest(t)
	key := []byte("0123456789abcdef0123456789abcdef")
	sets := map[string][]schema.Exchange{"samples": sampleRows(t), "mixed": mixedRows(t, 6000)}
	if len(sets["samples"]) < 200 {
		t.Fatalf("only %d rows from the samples", len(sets["samples"]))
	}
	for pname, ps := range policies(t) {
		for set, rows := range sets {
			np, _ := redact.NewPseudonymizer("k1", key)
			op, _ := redact.OldNewPseudonymizer("k1", key)
			rd := &redact.Redactor{Policy: ps[0].(*redact.Policy), Pseud: np, Stats: &redact.Stats{}}
			ord := &redact.OldRedactor{Policy: ps[1].(*redact.OldPolicy), Pseud: op, Stats: &redact.OldStats{}}
			want := make([]schema.Exchange, len(rows))
			for i := range rows {
				want[i] = oldRedactExchange(rows[i], ord)
			}
			// Twice: the second time every memo is warm.
			for round := range 2 {
				got := make([]schema.Exchange, len(rows))
				// Four goroutines with a worker each, as the pipeline
				// redacts rows.
				var wg sync.WaitGroup
				per := (len(rows) + 3) / 4
				for start := 0; start < len(rows); start += per {
					wg.Add(1)
					go func(a, b int) {
						defer wg.Done()
						w := rd.Worker()
						defer w.Release()
						for i := a; i < b; i++ {
							if i%3 == 0 {
								got[i] = pipeline.RedactExchange(rows[i], rd)
							} else {
								got[i] = pipeline.RedactExchangeWith(rows[i], w)
							}
						}
					}(start, min(start+per, len(rows)))
				}
				wg.Wait()
				for i := range rows {
					sameRow(t, i, got[i], want[i])
					if t.Failed() {
						t.Fatalf("policy %s, %s rows, round %d", pname, set, round)
					}
				}
				n, o := rd.Stats.Counts(), ord.Stats.Counts()
				for k, v := range o {
					o[k] = v * int64(round+1)
				}
				if !maps.Equal(n, o) {
					t.Fatalf("policy %s, %s rows, round %d: counts %v, before %v", pname, set, round, n, o)
				}
			}
		}
	}
}
