package classify_test

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"mcptrace/classify"
)

// record is one entry of a corpus file in classify/testdata/hidden.
type record struct {
	label string
	line  int // the separator line
	text  string
}

// readCorpus reads a corpus file: records start at a line beginning with
// "----8<----" (the rest of that line is the record's label) and run to the
// next such line; text before the first one is a preamble.
func readCorpus(t testing.TB, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		recs []record
		cur  *record
		body []string
	)
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimRight(strings.Join(body, "\n"), "\n")
			recs = append(recs, *cur)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "----8<----") {
			flush()
			cur = &record{label: strings.TrimSpace(strings.TrimPrefix(line, "----8<----")), line: n}
			body = body[:0]
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	for _, r := range recs {
		if strings.TrimSpace(r.text) == "" {
			t.Fatalf("%s:%d: empty record %q", path, r.line, r.label)
		}
	}
	return recs
}

// resultOf builds the tools/call result a server would send for a record:
// the text as the one text block, or (label "structured: …") the JSON as
// structuredContent with no text.
func resultOf(t testing.TB, r record) string {
	if strings.HasPrefix(r.label, "structured:") {
		if !gjson.Valid(r.text) {
			t.Fatalf("line %d: structured record %q is not JSON", r.line, r.label)
		}
		return `{"content":[],"structuredContent":` + r.text + `,"isError":false}`
	}
	b, err := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": r.text}}, "isError": false})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func judge(t testing.TB, r record) (bool, string) {
	ok, reason := classify.HiddenFailure(gjson.Parse(resultOf(t, r)))
	if ok != (reason != "") || (ok && !slices.Contains(classify.SuspectReasons, reason)) {
		t.Fatalf("line %d %q: suspect %v with reason %q (not in the vocabulary)", r.line, r.label, ok, reason)
	}
	return ok, reason
}

// TestHiddenFailureCorpus measures the detector on the corpus: the false
// positive rate on ordinary outputs must be at most 1%, the recall on
// failure texts at least 95%.
func TestHiddenFailureCorpus(t *testing.T) {
	ordinary := readCorpus(t, "testdata/hidden/ordinary.txt")
	failures := readCorpus(t, "testdata/hidden/failures.txt")
	if len(ordinary) < 400 || len(failures) < 200 {
		t.Fatalf("corpus too small: %d ordinary (want ≥ 400), %d failures (want ≥ 200)", len(ordinary), len(failures))
	}
	fp := 0
	for _, r := range ordinary {
		if ok, reason := judge(t, r); ok {
			fp++
			t.Logf("false positive: ordinary.txt:%d %q (%s)", r.line, r.label, reason)
		}
	}
	hit := 0
	reasons := map[string]int{}
	for _, r := range failures {
		if ok, reason := judge(t, r); ok {
			hit++
			reasons[reason]++
		} else {
			t.Logf("missed: failures.txt:%d %q", r.line, r.label)
		}
	}
	fpRate := float64(fp) / float64(len(ordinary))
	recall := float64(hit) / float64(len(failures))
	t.Logf("false positive rate: %d/%d = %.2f%% (bound ≤ 1%%)", fp, len(ordinary), 100*fpRate)
	t.Logf("recall: %d/%d = %.2f%% (bound ≥ 95%%)", hit, len(failures), 100*recall)
	t.Logf("reasons on failures: %v", reasons)
	if fpRate > 0.01 {
		t.Errorf("false positive rate %.2f%% is above 1%%", 100*fpRate)
	}
	if recall < 0.95 {
		t.Errorf("recall %.2f%% is below 95%%", 100*recall)
	}
}

func text(s string) gjson.Result {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}})
	return gjson.ParseBytes(b)
}

// The guards against the false positives users report, and the strong
// signs, one by one.
func TestHiddenFailureRules(t *testing.T) {
	cases := []struct {
		name, result string
		reason       string // "" = not suspect
	}{
		{"error null", text(`{"data":{"id":1},"error":null}`).Raw, ""},
		{"errors empty", text(`{"errors":[],"result":{"n":3}}`).Raw, ""},
		{"error false", text(`{"error":false,"message":"saved"}`).Raw, ""},
		{"error_rate field", text(`{"service":"api","error_rate":0.01}`).Raw, ""},
		{"0 errors found", text("0 errors found in 12 files").Raw, ""},
		{"no errors", text("No errors found.").Raw, ""},
		{"error handling prose", text("Error handling: wrap errors with %w and check them with errors.Is.").Raw, ""},
		{"error count zero", text("Error count: 0").Raw, ""},
		{"standard error number", text("Standard error: 0.12").Raw, ""},
		{"code snippet", text("if err != nil {\n\treturn fmt.Errorf(\"open: %w\", err)\n}").Raw, ""},
		{"log excerpt", text("2026-11-12T09:12:03Z ERROR charge failed: connection refused\n2026-11-12T09:12:04Z ERROR charge failed").Raw, ""},
		{"grep listing", text("app.log:12:ERROR permission denied: /var/lib/app").Raw, ""},
		{"quoted message", text(`Found 3 lines matching "connection refused" in app.log`).Raw, ""},
		{"definition", text("HTTP 503 Service Unavailable means the server is not ready to handle the request.").Raw, ""},
		{"domain object with error", text(`{"job_id":"j1","state":"failed","error":"OOM","attempts":3,"created_at":"x","queue":"q"}`).Raw, ""},
		{"json array of errors", text(`[{"error":"a"},{"error":"b"}]`).Raw, ""},
		{"long document mentioning an error", text("# Guide\n\n" + strings.Repeat("Some words about retries. ", 40) + "\nError: this is an example.").Raw, ""},
		{"image only", `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, ""},
		{"no content", `{"content":[]}`, ""},

		{"Error prefix", text("Error: Paper 2499.99999 not found").Raw, classify.SuspectErrorPrefix},
		{"error executing", text("Error executing tool search: index missing").Raw, classify.SuspectErrorPrefix},
		{"traceback", text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nKeyError: 'a'").Raw, classify.SuspectTraceback},
		{"go panic", text("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:").Raw, classify.SuspectTraceback},
		{"exception", text("java.net.ConnectException: Connection refused").Raw, classify.SuspectException},
		{"exception repr", text("NotFoundError(404, 'index_not_found_exception', 'no such index [x]')").Raw, classify.SuspectException},
		{"http status", text("404 Not Found").Raw, classify.SuspectHTTPStatus},
		{"status code", text("Request failed with status code 503").Raw, classify.SuspectHTTPStatus},
		{"html error page", text("<html><head><title>502 Bad Gateway</title></head><body></body></html>").Raw, classify.SuspectHTTPStatus},
		{"failed to", text("Failed to navigate to https://x.example: net::ERR_NAME_NOT_RESOLVED").Raw, classify.SuspectFailedTo},
		{"go error chain", text("open /etc/app.yaml: permission denied").Raw, classify.SuspectPermission},
		{"connection refused", text("dial tcp 10.0.0.1:5432: connect: connection refused").Raw, classify.SuspectNetwork},
		{"timeout", text("Request timed out after 30 seconds.").Raw, classify.SuspectTimeout},
		{"rate limit", text("Rate limit exceeded. Retry in 60 s.").Raw, classify.SuspectRateLimited},
		{"not found", text("User 'bob' not found.").Raw, classify.SuspectNotFound},
		{"invalid input", text("Invalid input: 'next tuesday' is not a date").Raw, classify.SuspectInvalid},
		{"json error object", text(`{"error":{"type":"index_not_found_exception","reason":"no such index [x]"},"status":404}`).Raw, classify.SuspectErrorField},
		{"json success false", text(`{"success":false,"message":"Timesheet already running"}`).Raw, classify.SuspectStatusField},
		{"json ok false", text(`{"ok":false,"error":"channel_not_found"}`).Raw, classify.SuspectErrorField},
		{"json status error", text(`{"status":"error","message":"upstream unavailable"}`).Raw, classify.SuspectStatusField},
		{"graphql errors", text(`{"data":null,"errors":[{"message":"Not authorized"}]}`).Raw, classify.SuspectErrorField},
		{"fastapi detail", text(`{"detail":"Not Found"}`).Raw, classify.SuspectErrorField},
		{"lone message", text(`{"message":"Internal server error"}`).Raw, classify.SuspectErrorField},
		{"xml error", text(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code></Error>`).Raw, classify.SuspectErrorField},
		{"structuredContent", `{"content":[{"type":"text","text":"see structured content"}],"structuredContent":{"error":"quota exceeded"}}`, classify.SuspectErrorField},
		{"decorated", text("❌ Error: could not find the calendar").Raw, classify.SuspectErrorPrefix},
		{"markdown bold", text("**Error:** the sheet is in the trash").Raw, classify.SuspectErrorPrefix},
		{"first text block decides", `{"content":[{"type":"image","data":"AA"},{"type":"text","text":"Error: boom"},{"type":"text","text":"ok"}]}`, classify.SuspectErrorPrefix},
	}
	for _, c := range cases {
		ok, reason := classify.HiddenFailure(gjson.Parse(c.result))
		if ok != (c.reason != "") || reason != c.reason {
			t.Errorf("%s: got (%v, %q), want %q", c.name, ok, reason, c.reason)
		}
	}
}

// A long text is judged on its head only: a long file that starts with an
// error marker is suspect, a long JSON payload is never an envelope, and
// the head of an escaped string is cut cleanly.
func TestHiddenFailureLongText(t *testing.T) {
	long := strings.Repeat("line of ordinary output\n", 2000)
	if ok, r := classify.HiddenFailure(text("Error: export failed\n" + long)); !ok || r != classify.SuspectErrorPrefix {
		t.Errorf("long text starting with Error: got (%v, %q)", ok, r)
	}
	if ok, r := classify.HiddenFailure(text(long + "Error: at the end")); ok {
		t.Errorf("long text with an error at the end: suspect (%q)", r)
	}
	big := `{"error":"x","rows":[` + strings.Repeat(`{"id":1},`, 3000) + `{"id":2}]}`
	if ok, r := classify.HiddenFailure(text(big)); ok {
		t.Errorf("large JSON payload: suspect (%q)", r)
	}
	if ok, r := classify.HiddenFailureText(big); ok {
		t.Errorf("large JSON payload (text): suspect (%q)", r)
	}
	// Cuts through escapes at every offset: never a panic, the head stays right.
	for pad := 0; pad < 8; pad++ {
		s := strings.Repeat("x", 1020+pad) + `\"é\u00e9\\` + long
		if ok, r := classify.HiddenFailure(text("Traceback (most recent call last):\n" + s)); !ok || r != classify.SuspectTraceback {
			t.Errorf("pad %d: got (%v, %q)", pad, ok, r)
		}
	}
}

// Classify sets Suspect on TOOL_SUCCESS only: the outcome stays the
// protocol's verdict, and a tool error, a cancelled exchange or another
// method is never suspect.
func TestClassifySuspect(t *testing.T) {
	body := func(text string, isError bool) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
			"content": []any{map[string]string{"type": "text", "text": text}}, "isError": isError}})
		return string(b)
	}
	v := check(t, "hidden failure", toolCall(post(200, "application/json", body("Error: index not found", false))), classify.ToolSuccess, classify.LayerApplication)
	if !v.Suspect || v.SuspectReason != classify.SuspectErrorPrefix {
		t.Errorf("hidden failure: Suspect %v %q, want true error_prefix", v.Suspect, v.SuspectReason)
	}
	v = check(t, "hidden failure over SSE", toolCall(post(200, "text/event-stream", sse(body("Traceback (most recent call last):\n  x", false)))), classify.ToolSuccess, classify.LayerApplication)
	if !v.Suspect || v.SuspectReason != classify.SuspectTraceback {
		t.Errorf("hidden failure over SSE: Suspect %v %q, want true traceback", v.Suspect, v.SuspectReason)
	}
	v = check(t, "ordinary", toolCall(post(200, "application/json", body(`{"rows":3,"error":null}`, false))), classify.ToolSuccess, classify.LayerApplication)
	if v.Suspect || v.SuspectReason != "" {
		t.Errorf("ordinary: Suspect %v %q", v.Suspect, v.SuspectReason)
	}
	v = check(t, "tool error", toolCall(post(200, "application/json", body("Error: index not found", true))), classify.ToolError, classify.LayerApplication)
	if v.Suspect {
		t.Errorf("tool error: Suspect %q", v.SuspectReason)
	}
	ev := toolCall(post(200, "application/json", body("Error: index not found", false)))
	ev.Cancelled, ev.LateResponse = true, true
	v = check(t, "late response", ev, classify.Cancelled, classify.LayerInteraction)
	if v.Suspect {
		t.Errorf("late response: Suspect %q on a CANCELLED exchange", v.SuspectReason)
	}
	ev = toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"Error: x"}]}}`))
	ev.Method = "prompts/list"
	v = check(t, "other method", ev, classify.Success, classify.LayerApplication)
	if v.Suspect {
		t.Errorf("other method: Suspect %q", v.SuspectReason)
	}
}

// The detector runs on every TOOL_SUCCESS row.
func BenchmarkHiddenFailureCorpus(b *testing.B) {
	var results []gjson.Result
	n := 0
	for _, f := range []string{"testdata/hidden/ordinary.txt", "testdata/hidden/failures.txt"} {
		for _, r := range readCorpus(b, f) {
			s := resultOf(b, r)
			results = append(results, gjson.Parse(s))
			n += len(s)
		}
	}
	b.SetBytes(int64(n / len(results))) // per result
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		classify.HiddenFailure(results[i%len(results)])
	}
}

// A large ordinary result (a 256 KiB file read): the cost must not grow
// with the text.
func BenchmarkHiddenFailureLargeText(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 256<<10 {
		sb.WriteString("func handle(w http.ResponseWriter, r *http.Request) {\n\tif err := r.ParseForm(); err != nil {\n\t\thttp.Error(w, \"bad form\", 400)\n\t}\n}\n")
	}
	res := text(sb.String())
	b.SetBytes(int64(len(res.Raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		classify.HiddenFailure(res)
	}
}

// The whole Classify of a TOOL_SUCCESS with and without the detector's
// share: the message as the correlator hands it over.
func BenchmarkClassifyToolSuccess(b *testing.B) {
	ev := toolCall(post(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Found 3 results for \"retry\":\n1. Retry policies\n2. Backoff\n3. Jitter"}],"isError":false}}`))
	b.SetBytes(int64(len(ev.Attempts[0].Messages[0].Raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		classify.Classify(ev)
	}
}

// Any bytes as a text, a content array or structuredContent: never a
// panic, and a suspect always has a reason from the vocabulary.
func FuzzHiddenFailure(f *testing.F) {
	for _, path := range []string{"testdata/hidden/ordinary.txt", "testdata/hidden/failures.txt"} {
		for i, r := range readCorpus(f, path) {
			if i%5 == 0 {
				f.Add(r.text)
			}
		}
	}
	f.Add(`{"content":[{"type":"text","text":"Error: \u00e9\\"}],"structuredContent":{"error":"x"}}`)
	f.Add("İ\u212a ERROR: x")
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}})
		for _, in := range []string{string(b), s, `{"content":` + s + `}`, `{"content":[],"structuredContent":` + s + `}`} {
			ok, reason := classify.HiddenFailure(gjson.Parse(in))
			if ok != (reason != "") || ok && !slices.Contains(classify.SuspectReasons, reason) {
				t.Fatalf("input %q: (%v, %q)", in, ok, reason)
			}
			for cut := 0; cut < len(in); cut += 1 + len(in)/16 {
				classify.HiddenFailure(gjson.Parse(in[:cut]))
			}
		}
		classify.HiddenFailureText(s)
	})
}
