package correlate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptrace/classify"
	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// FuzzCorrelate feeds the correlator sequences of records. The fuzz input
// is either a log (it starts with '{' or '[' or is a sample: decoded as
// the format Detect names) or a program in a small grammar (seqGrammar)
// that writes wire-log lines: requests answered in JSON or on an event
// stream, cut, failed, cancelled, answered on a GET stream, sessions
// deleted and re-initialized, stdio frames, clocks that jump and go back,
// two sides and two files. Whatever the sequence:
//
//   - every record is accounted for: the decoder emits an observation, a
//     quarantine or a skip for each line;
//   - every observation fed lands in exactly one of the correlator's
//     tallies (Contributing, NotificationOnly, Stray, Stderr, Other), none
//     left parked after Flush, and every exchange formed comes out as a
//     row;
//   - every row's verdict is from the vocabulary (outcome, its layer,
//     retry advice, error kind, suspect reason), with a unique exchange id;
//   - the same input gives the same rows: the one-goroutine correlator
//     (New) run twice; the sharded wiring with 1 and 3 shards, for each of
//     several round sizes (the same rows and stats); and New and the
//     sharded wiring with a Mark after every observation (the same rows).
func FuzzCorrelate(f *testing.F) {
	for _, p := range sampleFiles(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if _, ok := decode.Detect(b[:min(len(b), decode.SniffBytes)]); ok && len(b) <= 32<<10 {
			f.Add(b)
		}
	}
	for _, prog := range grammarSeeds() {
		f.Add(prog)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return // bounded: a run of the grammar makes a few lines per byte
		}
		obs := fuzzObservations(t, in)
		checkCorrelation(t, obs)
	})
}

// grammarSeeds are programs in seqGrammar (each byte picks an op, its
// value modulo the number of ops, and the bytes after it its arguments):
// a few written by hand and 40 drawn at random, with a fixed seed.
func grammarSeeds() [][]byte {
	seeds := [][]byte{
		[]byte("\x0b\x03\x00\x01\x00\x00\x01\x01\x00\x02\x00\x00"),
		[]byte("\x09\x01\x0b\x03\x01\x00\x04\x02\x05\x01\x00\x02\x00\x05\x00\x09\x02\x00\x04\x02\x00"),
		[]byte("\x0a\x00\x06\x00\x02\x06\x01\x02\x06\x02\x00\x06\x03\x01\x0a\x01\x06\x01\x02"),
	}
	r := rand.New(rand.NewPCG(13, 2))
	for range 40 {
		prog := make([]byte, 40+r.IntN(200))
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		seeds = append(seeds, prog)
	}
	return seeds
}

// fuzzEmitter collects what a decoder makes of a log.
type fuzzEmitter struct {
	obs         []*schema.Observation
	quarantined int
	skipped     int
}

func (e *fuzzEmitter) Observation(o *schema.Observation)                  { e.obs = append(e.obs, o) }
func (e *fuzzEmitter) Quarantine(schema.Position, string, string, []byte) { e.quarantined++ }
func (e *fuzzEmitter) Skip(schema.Position, string)                       { e.skipped++ }

// fuzzObservations turns a fuzz input into observations, checking that the
// decoder accounts for every line.
func fuzzObservations(t *testing.T, in []byte) []*schema.Observation {
	if len(in) > 0 && (in[0] == '{' || in[0] == '[') || bytes.HasPrefix(in, []byte("20")) {
		fm, ok := decode.Detect(in[:min(len(in), decode.SniffBytes)])
		if !ok {
			return nil
		}
		dec, _ := decode.DecoderFor(fm)
		e := &fuzzEmitter{}
		if err := dec("fuzz", bytes.NewReader(in), e); err != nil {
			t.Fatalf("%s decoder: %v", fm, err)
		}
		return e.obs
	}
	var obs []*schema.Observation
	lines := seqGrammar(in)
	for i, l := range lines {
		o, err := decode.WireLine([]byte(l.text), schema.Position{Source: l.source, ID: l.source, Line: int64(i + 1)})
		if err != nil {
			if l.valid {
				t.Fatalf("line %d of the grammar quarantined: %v\n%s", i+1, err, l.text)
			}
			continue
		}
		if !l.valid {
			t.Fatalf("line %d is not a wire record, yet decoded: %s", i+1, l.text)
		}
		obs = append(obs, &o)
	}
	return obs
}

type seqLine struct {
	source string
	text   string
	valid  bool // a well-formed wire record
}

// seqGrammar writes the wire-log lines a program describes.
func seqGrammar(prog []byte) []seqLine {
	var (
		out     []seqLine
		pos     int
		at      = time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
		session = "s1"
		side    = "client"
		source  = "a.ndjson"
		version = "2025-11-25"
	)
	next := func() int {
		if pos >= len(prog) {
			return 0
		}
		pos++
		return int(prog[pos-1])
	}
	pick := func(list ...string) string { return list[next()%len(list)] }
	ts := func(d time.Duration) string { return at.Add(d).Format("2006-01-02T15:04:05.000Z07:00") }
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	id := func() string { return pick("1", "2", "3", `"a"`, "1.0", "null") }
	head := func(transport string, dur time.Duration) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"mcptrace":"wire/1","ts":%q,"end_ts":%q,"side":%q,"transport":%q,"client":{"name":"c","version":"1"},"server":{"name":"s","version":"2"}`,
			ts(0), ts(dur), side, transport)
		if version != "" {
			fmt.Fprintf(&b, `,"protocol_version":%q`, version)
		}
		if session != "" && transport != "stdio" {
			fmt.Fprintf(&b, `,"session_id":%q`, session)
		}
		return b.String()
	}
	emit := func(text string, valid bool) {
		out = append(out, seqLine{source: source, text: text, valid: valid})
		at = at.Add(time.Duration(1+next()%50) * time.Millisecond)
	}
	post := func(body, response string) {
		hdr := ""
		if session != "" {
			hdr = fmt.Sprintf(`,"headers":{"mcp-session-id":%q}`, session)
		}
		emit(fmt.Sprintf(`%s,"http":{"request":{"method":"POST","url":"https://h.example/mcp"%s,"body":%s},%s}}`,
			head("streamable-http", 40*time.Millisecond), hdr, quote(body), response), true)
	}
	request := func(rid, method string) string {
		params := `{}`
		if method == "tools/call" {
			params = fmt.Sprintf(`{"name":%q,"arguments":{"n":%d}}`, pick("send_invoice", "get_weather", "delete_file"), next()%3)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, rid, method, params)
	}
	result := func(rid string) string {
		return pick(
			`{"jsonrpc":"2.0","id":`+rid+`,"result":{"content":[{"type":"text","text":"ok"}]}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"result":{"content":[{"type":"text","text":"Error: permission denied"}],"isError":true}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"error":{"code":-32602,"message":"Invalid params: n"}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"error":{"code":-32001,"message":"Session not found"}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"error":"boom"}}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"result":{"resultType":"input_required","requestState":"r1"}}`,
			`{"jsonrpc":"2.0","id":`+rid+`,"res`,
			`{"jsonrpc":"2.0","id":9,"result":{}}`,
			`[{"jsonrpc":"2.0","id":`+rid+`,"result":{}}]`,
			`not json`,
		)
	}
	methods := []string{"tools/call", "tools/call", "tools/list", "resources/read", "ping", "prompts/get"}
	for pos < len(prog) && len(out) < 4096 {
		switch next() % 13 {
		case 0: // a request answered with a JSON body
			rid := id()
			method := methods[next()%len(methods)]
			status := []int{200, 200, 200, 400, 401, 404, 429, 500, 502, 503}[next()%10]
			body := result(rid)
			resp := fmt.Sprintf(`"response":{"status":%d,"content_type":"application/json","body":%s}`, status, quote(body))
			switch next() % 6 {
			case 1:
				resp = fmt.Sprintf(`"response":{"status":%d,"content_type":"application/json"}`, status) // body not recorded
			case 2:
				resp = fmt.Sprintf(`"response":{"status":%d,"headers":{"Retry-After":"%d"},"body":""}`, status, next()%5)
			}
			post(request(rid, method), resp)
		case 1: // a request answered on an event stream
			rid := id()
			var sse strings.Builder
			for range next() % 4 {
				sse.WriteString(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` + "\n\n")
			}
			if next()%3 != 0 {
				fmt.Fprintf(&sse, "id: e%d\nevent: message\ndata: %s\n\n", next()%3, result(rid))
			}
			end := pick("complete", "reset", "timeout", "client_closed")
			post(request(rid, methods[next()%len(methods)]),
				fmt.Sprintf(`"response":{"status":200,"content_type":"text/event-stream","stream_end":%q,"body":%s}`, end, quote(sse.String())))
		case 2: // a notification
			note := pick(
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id()+`,"reason":"user"}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
			)
			post(note, fmt.Sprintf(`"response":{"status":%d,"body":""}`, []int{202, 202, 400, 404}[next()%4]))
		case 3: // no response
			post(request(id(), methods[next()%len(methods)]),
				fmt.Sprintf(`"failure":{"kind":%q,"message":"x"}`, pick("connection_refused", "reset", "timeout", "client_abort")))
		case 4: // a GET stream carrying responses or server requests
			var sse strings.Builder
			for range 1 + next()%3 {
				switch next() % 3 {
				case 0:
					fmt.Fprintf(&sse, "data: %s\n\n", result(id()))
				case 1:
					fmt.Fprintf(&sse, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n", 100+next()%2)
				default:
					sse.WriteString(": keepalive\n\n")
				}
			}
			hdr := ""
			if session != "" {
				hdr = fmt.Sprintf(`,"headers":{"mcp-session-id":%q}`, session)
			}
			body := fmt.Sprintf(`"body":%s,`, quote(sse.String()))
			if next()%4 == 0 {
				body = "" // not recorded
			}
			emit(fmt.Sprintf(`%s,"http":{"request":{"method":"GET","url":"https://h.example/mcp"%s},"response":{"status":%d,"content_type":"text/event-stream",%s"stream_end":%q}}}`,
				head("streamable-http", 2*time.Second), hdr, []int{200, 200, 405}[next()%3], body, pick("complete", "reset")), true)
		case 5: // the session ends
			emit(fmt.Sprintf(`%s,"http":{"request":{"method":"DELETE","url":"https://h.example/mcp"},"response":{"status":%d,"body":""}}}`,
				head("streamable-http", time.Millisecond), []int{200, 204, 404, 405}[next()%4]), true)
		case 6: // a stdio frame
			dir, line := "c2s", request(id(), methods[next()%len(methods)])
			switch next() % 5 {
			case 1:
				dir, line = "s2c", result(id())
			case 2:
				dir, line = "stderr", "warning: something"
			case 3:
				dir, line = "s2c", `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`
			case 4:
				dir, line = "c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id()+`}}`
			}
			emit(fmt.Sprintf(`%s,"stdio":{"direction":%q,"line":%s}}`, head("stdio", 0), dir, quote(line)), true)
		case 7: // the clock jumps ahead (up to about two hours)
			at = at.Add(time.Duration(next()*30) * time.Second)
		case 8: // the clock goes back (up to about four minutes, or an hour)
			at = at.Add(-time.Duration(next()) * time.Second)
			if next()%8 == 0 {
				at = at.Add(-time.Hour)
			}
		case 9: // another session (or none)
			session = pick("s1", "s2", "s3", "")
		case 10: // the other side, or the other file
			if next()%2 == 0 {
				side = map[string]string{"client": "server", "server": "client"}[side]
			} else {
				source = map[string]string{"a.ndjson": "b.ndjson", "b.ndjson": "a.ndjson"}[source]
			}
		case 11: // (re-)initialize, perhaps to a new session
			version = pick("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "")
			v := version
			if v == "" {
				v = "2025-11-25"
			}
			was := session
			if next()%2 == 0 {
				session = ""
			}
			newSession := pick("s1", "s2", "s4")
			post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
				fmt.Sprintf(`"response":{"status":200,"content_type":"application/json","headers":{"Mcp-Session-Id":%q},"body":%s}`, newSession,
					quote(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+v+`","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"2"}}}`)))
			session = newSession
			_ = was
		case 12: // a line that is not a wire record
			emit(pick(`{"mcptrace":"wire/1","ts":"x"}`, `not json`, `{"mcptrace":"wire/1"`, `{}`), false)
		}
	}
	return out
}

// checkCorrelation runs obs through the correlator and checks the
// properties FuzzCorrelate lists.
func checkCorrelation(t *testing.T, obs []*schema.Observation) {
	one := func() ([]schema.Exchange, correlate.Stats) {
		var rows []schema.Exchange
		c := correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
		c.IdleTimeout, c.Lateness = sampleIdle, sampleLateness
		for _, o := range obs {
			c.Add(cloneObservation(o))
		}
		c.Flush()
		return rows, c.Stats
	}
	newRows, st := one()
	checkStats(t, "New", st, len(obs), len(newRows))
	checkRows(t, newRows)
	if again, st2 := one(); !reflect.DeepEqual(newRows, again) || st != st2 {
		t.Fatalf("two runs of one input differ: %d rows then %d, stats %+v then %+v", len(newRows), len(again), st, st2)
	}
	// Parking (park.go) changes no row: with every waiting row parked one
	// observation after its own, and with none parked.
	for _, p := range []struct {
		after int64
		off   bool
	}{{1, false}, {0, true}} {
		restore := correlate.SetParking(p.after, p.off)
		rows, st2 := one()
		restore()
		if !reflect.DeepEqual(newRows, rows) || st != st2 {
			t.Fatalf("parking after %d (off %v) changed the rows: %d rows then %d, stats %+v then %+v", p.after, p.off, len(newRows), len(rows), st, st2)
		}
	}
	// The sharded wiring: for one round size, the same rows and the same
	// stats whatever the number of shards; with a Mark after every
	// observation (round 1), the rows New gives. Across round sizes rows
	// may differ by design (see "Sharding, order keys and time" in the
	// package documentation: an idle timeout or a held row's release acts
	// at the first Mark after its limit), which the fuzzer finds at once
	// with a clock that goes back past IdleTimeout.
	//
	// The rows are compared in order: the package promises the same order
	// whatever the number of shards (testdata/fuzz/FuzzCorrelate/
	// held-same-id-order: rows held for a same-id repeat came out in
	// another order with three shards than with one while the held rows'
	// heap was keyed on a time that moved under it). Against New (round
	// 1) they are compared as sets: New's Linker sees one Mark per
	// observation too, but its rows' order is not part of that promise.
	sorted := func(rows []schema.Exchange) []schema.Exchange {
		rows = slices.Clone(rows)
		slices.SortFunc(rows, func(a, b schema.Exchange) int { return strings.Compare(a.ExchangeID, b.ExchangeID) })
		return rows
	}
	want := sorted(newRows)
	for _, round := range []int{1, 3, 1 << 20} {
		var first []schema.Exchange
		var firstStats correlate.Stats
		for _, shards := range []int{1, 3} {
			in := make([]*schema.Observation, len(obs))
			for j, o := range obs {
				in[j] = cloneObservation(o)
			}
			rows, st := shardedRun(t, in, shards, round, false, 0)
			checkStats(t, fmt.Sprintf("%d shards", shards), st, len(obs), len(rows))
			checkRows(t, rows)
			if shards == 1 {
				first, firstStats = rows, st
				if round == 1 && !reflect.DeepEqual(sorted(rows), want) {
					diffRows(t, "a Mark after every observation against New", sorted(rows), want)
				}
				continue
			}
			if !reflect.DeepEqual(rows, first) || st != firstStats {
				diffRows(t, fmt.Sprintf("round %d, %d shards against 1", round, shards), rows, first)
				t.Fatalf("round %d, %d shards: stats %+v; 1 shard: %+v", round, shards, st, firstStats)
			}
		}
	}
}

// diffRows fails with the first row that differs.
func diffRows(t *testing.T, what string, got, want []schema.Exchange) {
	t.Helper()
	for k := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Fatalf("%s: row %d differs:\n%s\n%s\n%+v\n%+v", what, k, verdict(&got[k]), verdict(&want[k]), got[k], want[k])
		}
	}
	t.Fatalf("%s: %d rows, %d", what, len(got), len(want))
}

// cloneObservation copies what the correlator may change (Seq, Watermark)
// so that each run starts from the decoded observation.
func cloneObservation(o *schema.Observation) *schema.Observation {
	c := *o
	return &c
}

func checkStats(t *testing.T, what string, st correlate.Stats, observations, rows int) {
	t.Helper()
	if st.Observations != int64(observations) {
		t.Fatalf("%s: %d observations fed, the correlator counted %d", what, observations, st.Observations)
	}
	if sum := st.Contributing + st.NotificationOnly + st.Stray + st.Stderr + st.Other + st.Parked; sum != st.Observations || st.Parked != 0 {
		t.Fatalf("%s: %d observations, tallied %d (%+v)", what, st.Observations, sum, st)
	}
	if st.Exchanges != int64(rows) {
		t.Fatalf("%s: %d exchanges formed, %d rows out", what, st.Exchanges, rows)
	}
}

var (
	outcomes = []string{classify.ToolSuccess, classify.ToolError, classify.Success, classify.InputRequired, classify.Cancelled,
		classify.JSONRPCError, classify.MalformedJSON, classify.InvalidEnvelope, classify.InvalidToolResult, classify.InvalidResult,
		classify.HTTPError, classify.StreamIncomplete, classify.NoResponse, classify.Unknown}
	advice = []string{classify.AdviceRetryIfIdempotent, classify.AdviceRespectRetryAfter, classify.AdviceFixArguments,
		classify.AdviceInspectToolState, classify.AdviceInvestigateCompatibility, classify.AdviceProvideInput,
		classify.AdviceReinitializeSession, classify.AdviceNone}
)

func checkRows(t *testing.T, rows []schema.Exchange) {
	t.Helper()
	ids := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(outcomes, r.Outcome) || r.Layer != classify.LayerOf(r.Outcome) {
			t.Fatalf("row %d: outcome %q layer %q", i, r.Outcome, r.Layer)
		}
		if !slices.Contains(advice, r.RetryAdvice) {
			t.Fatalf("row %d: retry advice %q", i, r.RetryAdvice)
		}
		if r.ErrorKind != nil && !slices.Contains(classify.ErrorKinds, *r.ErrorKind) {
			t.Fatalf("row %d: error kind %q", i, *r.ErrorKind)
		}
		if r.ExchangeID == "" || ids[r.ExchangeID] {
			t.Fatalf("row %d: exchange id %q empty or given twice", i, r.ExchangeID)
		}
		ids[r.ExchangeID] = true
		if r.Reason == "" {
			t.Fatalf("row %d (%s): no reason", i, r.Outcome)
		}
	}
}

// The grammar's seeds make lines of every kind, and the decoder reads
// each well-formed one.
func TestFuzzGrammar(t *testing.T) {
	kinds := map[string]bool{}
	for _, prog := range grammarSeeds() {
		lines := seqGrammar(prog)
		for _, l := range lines {
			_, err := decode.WireLine([]byte(l.text), schema.Position{Source: l.source, Line: 1})
			if (err == nil) != l.valid {
				t.Errorf("%v: %s", err, l.text)
			}
			for _, k := range []string{`"stdio"`, `"GET"`, `"DELETE"`, `"failure"`, `event-stream`, `initialize`, `notifications/cancelled`, `"side":"server"`, `b.ndjson`} {
				if strings.Contains(l.text, k) || l.source == k {
					kinds[k] = true
				}
			}
		}
		obs := fuzzObservations(t, prog)
		checkCorrelation(t, obs)
	}
	if len(kinds) < 9 {
		t.Errorf("the seeds make only %v", kinds)
	}
}
