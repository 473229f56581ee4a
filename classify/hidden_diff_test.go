package classify

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"mcptrace/internal/traffic"
)

// checkSame compares the detector with its oracle on one tool result
// object (raw JSON), and the text rules on every string in it.
func checkSame(t testing.TB, where string, result string) {
	t.Helper()
	content, sc := members(result, "content", "structuredContent")
	raw, ok := firstText(content)
	if ok {
		checkPlainLiteral(t, where, raw)
	}
	gs, gr := hiddenFailure(raw, ok, sc)
	ws, wr := oldHiddenFailure(raw, ok, sc)
	if gs != ws || gr != wr {
		t.Fatalf("%s: result %.300q: new (%v, %q), old (%v, %q)", where, result, gs, gr, ws, wr)
	}
}

// checkText compares the text rules with their oracle on one text, whole
// and cut, and the error kind read from it (checkKind) and the first-line
// rules (checkLines).
func checkText(t testing.TB, where, text string) {
	t.Helper()
	checkKind(t, where, text)
	checkLines(t, where, text)
	checkPlain(t, where, text)
	for _, cut := range []bool{false, true} {
		checkStatus(t, where, text)
		gs, gr := judgeText(text, cut)
		ws, wr := oldJudgeText(text, cut)
		if gs != ws || gr != wr {
			t.Fatalf("%s: text %.300q (cut %v): new (%v, %q), old (%v, %q)", where, text, cut, gs, gr, ws, wr)
		}
	}
	lit, _ := json.Marshal(text)
	checkPlainLiteral(t, where, string(lit))
	if s := string(lit); stringValue(s) != gjson.Parse(s).Str {
		t.Fatalf("%s: stringValue(%.300q) differs from gjson", where, s)
	}
}

// walk visits every JSON value of v: each object is judged as a tool
// result, each string as a text and, when it holds JSON (a body inside a
// log record), walked in turn. It returns how many objects it judged.
func walk(t testing.TB, where string, v gjson.Result, depth int) int {
	n := 0
	switch {
	case v.IsObject():
		checkSame(t, where, v.Raw)
		checkNotEnvelope(t, where, v.Raw)
		n++
		v.ForEach(func(_, x gjson.Result) bool { n += walk(t, where, x, depth); return true })
	case v.IsArray():
		v.ForEach(func(_, x gjson.Result) bool { n += walk(t, where, x, depth); return true })
	case v.Type == gjson.String:
		checkText(t, where, v.Str)
		if depth < 4 {
			n += walkBody(t, where, v.Str, depth+1)
		}
	}
	return n
}

// walkBody walks a body: a JSON value, or lines of them (NDJSON, an event
// stream's data lines).
func walkBody(t testing.TB, where, body string, depth int) int {
	if gjson.Valid(body) {
		return walk(t, where, gjson.Parse(body), depth)
	}
	n := 0
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		if line = strings.TrimSpace(line); line != "" && gjson.Valid(line) {
			n += walk(t, where, gjson.Parse(line), depth)
		}
	}
	return n
}

// TestHiddenFailureSameAsOracle: the detector gives the oracle's verdict
// on the detector's corpus, every test input of the package, every sample
// and generated traffic (both sides, wire and HAR).
func TestHiddenFailureSameAsOracle(t *testing.T) {
	judged := 0
	var files []string
	for _, root := range []string{"testdata", "../samples"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
	}
	matches, _ := filepath.Glob("*_test.go")
	files = append(files, matches...)
	if len(files) < 20 {
		t.Fatalf("only %d input files found", len(files))
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		judged += walkBody(t, p, s, 0)
		if strings.HasSuffix(p, ".go") {
			// Go test sources: every string literal is a text, and a
			// JSON one a result.
			for _, lit := range goLiterals(s) {
				checkText(t, p, lit)
				judged += walkBody(t, p, lit, 1)
			}
		}
		if strings.HasSuffix(p, ".txt") {
			// Corpus records: each as a text and as a tool result.
			for _, rec := range strings.Split(s, "----8<----") {
				checkText(t, p, rec)
				checkHead(t, p, rec)
				lit, _ := json.Marshal(rec)
				checkSame(t, p, `{"content":[{"type":"text","text":`+string(lit)+`}]}`)
				judged++
			}
		}
	}
	for _, o := range []traffic.Options{
		{Format: "wire", Side: "client", Seed: 1, Bytes: 6 << 20},
		{Format: "wire", Side: "server", Seed: 2, Bytes: 3 << 20},
		{Format: "har", Seed: 3, Bytes: 3 << 20},
	} {
		var buf bytes.Buffer
		if _, err := traffic.Write(&buf, o); err != nil {
			t.Fatal(err)
		}
		judged += walkBody(t, o.Format+"/"+o.Side, buf.String(), 0)
	}
	if judged < 10000 {
		t.Fatalf("only %d objects judged", judged)
	}
	t.Logf("%d objects judged the same", judged)
}

// goLiterals returns the contents of the back-quoted and double-quoted
// string literals of a Go source (roughly: enough to find the inputs).
func goLiterals(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '`':
			j := strings.IndexByte(src[i+1:], '`')
			if j < 0 {
				return out
			}
			out = append(out, src[i+1:i+1+j])
			i += j + 1
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(src) && src[j] == '"' {
				var s string
				if json.Unmarshal([]byte(src[i:j+1]), &s) == nil {
					out = append(out, s)
				}
			}
			i = j
		}
	}
	return out
}

// FuzzHiddenFailureSameAsOracle: on any text (as a first text block, as
// structuredContent, as a raw result) the detector and its oracle agree.
func FuzzHiddenFailureSameAsOracle(f *testing.F) {
	for _, s := range []string{"Error: x", "HTTP 503 Service Unavailable", "what does Error: mean", "ls: cannot access 'x'",
		`{"error":"x"}`, "<title>404 Not Found</title>", "Found 3 \"x\":\n1. a", "  \ufeff❌ **Failed to fetch**",
		"x is a 404 status", "a\\b\"c", "\u2028", "ERROR [2026-01-02] x", strings.Repeat("a ", 400) + "timed out",
		`{"total":1,"items":[{"a":1}],"more":false}`, `[{"id":1,"error":"x"}]`, `{'a': 1, 'b': 2, 'c': 3}`,
		"{\n  \"a\": 1,\n  \"b\": [1],\n  \"c\": {\"d\": null, \"e\": \"f\"}" + strings.Repeat(",\n  \"g\": \"h\"", 200) + "\n}",
		"[" + strings.Repeat(`{"id":1,"title":"Error: failed"},`, 60) + "{}]", `{"error":"x","a":1,"b":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkText(t, "fuzz", s)
		lit, _ := json.Marshal(s)
		checkSame(t, "fuzz", `{"content":[{"type":"text","text":`+string(lit)+`}]}`)
		checkSame(t, "fuzz", `{"content":[],"structuredContent":`+s+`}`)
		checkSame(t, "fuzz", s)
		if strings.HasPrefix(s, "{") {
			checkNotEnvelope(t, "fuzz", s)
		}
		// The literal as written, escapes and all (not only as
		// encoding/json writes it).
		if strings.HasPrefix(s, `"`) {
			checkSame(t, "fuzz", `{"content":[{"type":"text","text":`+s+`}]}`)
		}
	})
}

// checkStatus compares statusInText with the regular expression it
// replaced, on a text as textKind reads it (lower-cased) and as written.
func checkStatus(t testing.TB, where, text string) {
	t.Helper()
	for _, s := range []string{strings.ToLower(text), text} {
		if got, want := statusInText(s), oldStatus(s); got != want {
			t.Fatalf("%s: statusInText(%.300q) = %q, the regular expression says %q", where, s, got, want)
		}
	}
}

func TestStatusInTextSameAsRegexp(t *testing.T) {
	for _, s := range []string{"HTTP 401", "http:503", "status code: 503", "status code 503", "status: 429",
		"status codes 503", "error 429", "error429", "xerror 429", "error 4290", "error 429_", "error 429.",
		"Error:\t\n 504 x", "status code", "status code:", "http::503", "statuscode 503", "status  code 503",
		"error: 500", "http 40", "e", "", "status code 408 and http 401"} {
		checkStatus(t, "table", s)
	}
}

func FuzzStatusInTextSameAsRegexp(f *testing.F) {
	for _, s := range []string{"HTTP 401", "status code: 503", "status codes 503", "error 429_", "x http\t:\f502"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkStatus(t, "fuzz", s) })
}

// checkNotEnvelope holds notEnvelope to judgeEnvelope on a valid JSON
// object and on prefixes of it: when it says a prefix rules an envelope
// out, judgeEnvelope of the whole finds none. It also makes sure the
// shortcut is taken on plain payloads (a data object of three members).
func checkNotEnvelope(t testing.TB, where, obj string) {
	t.Helper()
	if !gjson.Valid(obj) {
		return
	}
	whole, reason := judgeEnvelope(gjson.Parse(obj))
	if obj[0] == '{' && dataObject(obj) && (whole || reason != "") {
		t.Fatalf("%s: dataObject(%.300q) but judgeEnvelope finds an envelope (%q)", where, obj, reason)
	}
	for k := 1; k <= len(obj); k++ {
		if k > 64 && k < len(obj) && k%61 != 0 {
			continue // every prefix of the first 64 bytes, then a sample
		}
		if notEnvelope(obj[:k]) && whole {
			t.Fatalf("%s: notEnvelope(%.300q) but judgeEnvelope finds an envelope in %.300q", where, obj[:k], obj)
		}
	}
}

// TestNotEnvelope: the shortcut decides on data objects and stays out of
// envelopes and of what it cannot read.
func TestNotEnvelope(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want bool
	}{
		{`{"a":1,"b":"x","c":[1]}`, true},
		{`{"a":1,"b":"x","c":[1`, true}, // the third value is known not empty
		{`{"a":1,"b":"x","c":1`, true},  // a number is never empty
		{`{"a":1,"b":"x","c":[]}`, false},
		{`{"a":1,"b":2`, false}, // a number that may go on, before the third
		{`{"a":1,"b":2,`, false},
		{`{"a":1,"b":"x","c":{"d":null}}`, false},
		{`{"a":1,"b":"x","c":{"d":null,"e":0}}`, true},
		{`{"a":null,"b":"","c":[],"d":{}}`, false},
		{`{"error":"x","a":1,"b":2,"c":3}`, true},
		{`{"Error":"x","Message":"y","Status":500}`, false},
		{`{"a":1,"b":2}`, false},
		{`{"a":1 "b":2,"c":3,"d":4}`, false},
		{`{'a': 1, 'b': 2, 'c': 3}`, false},
		{`{"a\u0041":1,"b":2,"c":3}`, true},
		{`{"\u0065rror":"x","b":2,"c":3}`, false}, // "error", escaped
	} {
		if got := notEnvelope(c.obj); got != c.want {
			t.Errorf("notEnvelope(%s) = %v, want %v", c.obj, got, c.want)
		}
		checkNotEnvelope(t, "table", c.obj)
	}
}

// TestDataObject: the shortcut for a structuredContent without envelope
// keys decides on data objects of any size and stays out of objects with
// an envelope key (in any case, escaped or not) and of what it cannot read.
func TestDataObject(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want bool
	}{
		{`{"rows":40}`, true},
		{`{}`, true},
		{` { "a" : 1 , "b" : [ {"error":"x"} ] } `[1:], true}, // an envelope key inside a value is data
		{`{"a":null,"b":""}`, true},
		{`{"rows":40,"error":"x"}`, false},
		{`{"Error":"x"}`, false},
		{`{"STATUS":500}`, false},
		{`{"\u0065rror":"x"}`, false}, // "error", escaped
		{`{"message":"Forbidden"}`, false},
		{`{"detail":"Not Found"}`, false},
		{`{"a":1,"b":2,"ok":false}`, false},
		{`{"a\u0041":1}`, true},
		{`{'a': 1}`, false},
		{`{"a":1 "b":2}`, false},
		{`{"a":1`, false},
	} {
		if got := dataObject(c.obj); got != c.want {
			t.Errorf("dataObject(%s) = %v, want %v", c.obj, got, c.want)
		}
		checkNotEnvelope(t, "table", c.obj)
	}
	// Generated objects: keys drawn from envelopeKeys (in both cases) and
	// from data words, values of every kind, the shortcut held to
	// judgeEnvelope on each.
	var keys []string
	for k := range envelopeKeys {
		keys = append(keys, k, strings.ToUpper(k[:1])+k[1:])
	}
	keys = append(keys, "rows", "data", "items", "total", "name", "id", "results", "x_error", "errorx", "Status2")
	values := []string{`1`, `0`, `-1`, `404`, `"500"`, `"error"`, `"failed"`, `"ok"`, `""`, `null`, `true`, `false`,
		`[]`, `[1]`, `{}`, `{"a":null}`, `{"a":1}`, `"Forbidden"`, `"x"`, `["e"]`}
	r := uint64(1)
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	decided := 0
	for range 20000 {
		var b strings.Builder
		b.WriteByte('{')
		for j, m := 0, next(5); j < m; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			k := keys[next(len(keys))]
			if next(4) > 0 {
				k = []string{"rows", "data", "items", "total", "name", "id", "results", "x_error"}[next(8)]
			}
			b.WriteString(`"` + k + `":` + values[next(len(values))])
		}
		b.WriteByte('}')
		obj := b.String()
		if dataObject(obj) {
			decided++
		}
		checkNotEnvelope(t, "generated", obj)
	}
	if decided < 2000 {
		t.Fatalf("the shortcut decided only %d generated objects", decided)
	}
}
