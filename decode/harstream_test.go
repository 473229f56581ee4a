package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"mcptrace/schema"
)

// record is one thing a decoder emitted, in order.
type record struct {
	kind           byte // 'o', 'q', 's'
	pos            schema.Position
	reason, detail string
	raw            string
	obs            *schema.Observation
}

// recorder keeps every emitted record in order, with optional limits.
type recorder struct {
	recs   []record
	maxDoc int64
}

func (r *recorder) Observation(o *schema.Observation) {
	r.recs = append(r.recs, record{kind: 'o', pos: o.Pos, obs: o})
}
func (r *recorder) Quarantine(pos schema.Position, reason, detail string, raw []byte) {
	r.recs = append(r.recs, record{kind: 'q', pos: pos, reason: reason, detail: detail, raw: string(raw)})
}
func (r *recorder) Skip(pos schema.Position, why string) {
	r.recs = append(r.recs, record{kind: 's', pos: pos, reason: why})
}
func (r *recorder) MaxDocumentBytes() int64 { return r.maxDoc }

// sameAsWhole decodes doc with the streaming decoder and with the decoder
// it replaced, and fails unless both emit the same records (observations
// compared field by field) and return the same error.
func sameAsWhole(t *testing.T, name, doc string, maxDoc int64) {
	t.Helper()
	got, want := &recorder{maxDoc: maxDoc}, &recorder{maxDoc: maxDoc}
	gerr := decodeHARFile("s.har", strings.NewReader(doc), got)
	werr := decodeHARWhole("s.har", strings.NewReader(doc), want)
	if (gerr == nil) != (werr == nil) || (gerr != nil && errors.Is(gerr, ErrLimit) != errors.Is(werr, ErrLimit)) {
		t.Fatalf("%s: error %v, the whole-document decoder's %v", name, gerr, werr)
	}
	if len(got.recs) != len(want.recs) {
		t.Fatalf("%s: %d records, the whole-document decoder %d:\n got %s\nwant %s", name, len(got.recs), len(want.recs), brief(got.recs), brief(want.recs))
	}
	for i := range got.recs {
		g, w := got.recs[i], want.recs[i]
		if g.reason == ReasonDocumentTooLarge && w.reason == ReasonDocumentTooLarge && strings.Contains(g.detail, "-max-document") &&
			strings.Contains(g.detail, fmt.Sprint(MaxDocument(got))) {
			// Past the limit the detail says more than it did: where the
			// document broke.
			w.detail = g.detail
		}
		if g.kind != w.kind || g.pos != w.pos || g.reason != w.reason || g.detail != w.detail || g.raw != w.raw {
			t.Fatalf("%s: record %d:\n got %c %+v %s %q raw %d bytes %.80q\nwant %c %+v %s %q raw %d bytes %.80q", name, i,
				g.kind, g.pos, g.reason, g.detail, len(g.raw), g.raw, w.kind, w.pos, w.reason, w.detail, len(w.raw), w.raw)
		}
		if g.kind == 'o' && !reflect.DeepEqual(g.obs, w.obs) {
			t.Fatalf("%s: observation %d differs:\n got %+v\nwant %+v", name, i, g.obs, w.obs)
		}
	}
}

func brief(rs []record) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "[%c %d %s] ", r.kind, r.pos.Line, r.reason)
	}
	return b.String()
}

func harSampleDocs(t *testing.T) map[string]string {
	docs := map[string]string{}
	for _, name := range []string{"mitmproxy.har", "mitmproxy-batch.har", "devtools.har", "mitmproxy.zhar"} {
		docs[name] = string(readHARSample(t, name))
	}
	return docs
}

// harOddDocs are documents whose layout, keys or values are unusual, each
// within the document limit.
func harOddDocs() map[string]string {
	good := harEntry(harT0, "", harCall, `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`)
	sess := harEntry(harT0, `[{"name":"Mcp-Session-Id","value":"s1"}]`, harCall, `{"status":202,"content":{"text":""}}`)
	endpoint := "event: endpoint\ndata: /messages?sessionId=abc\n\n"
	get := fmt.Sprintf(`{"startedDateTime":"2026-03-14T10:22:05Z","time":900,"request":{"method":"GET","url":"http://localhost:3001/sse","headers":[{"name":"Accept","value":"text/event-stream"}]},"response":{"status":200,"headers":[{"name":"Content-Type","value":"text/event-stream"}],"content":{"mimeType":"text/event-stream","text":%s}}}`, strconv.Quote(endpoint))
	post := `{"startedDateTime":"2026-03-14T10:22:05.2Z","time":3,"request":{"method":"POST","url":"http://localhost:3001/messages?sessionId=abc","headers":[],"postData":{"mimeType":"application/json","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"}},"response":{"status":202,"headers":[],"content":{"mimeType":"text/plain","text":"Accepted"}}}`
	post202Later := strings.Replace(post, `sessionId=abc`, `sessionId=s1`, 1)
	return map[string]string{
		"plain":               harDoc(good, good),
		"empty entries":       `{"log":{"entries":[]}}`,
		"entries first":       `{"log":{"entries":[` + good + `],"version":"1.2","creator":{"name":"x"},"pages":[{"id":"p"}]}}`,
		"log last":            `{"comment":"c","x":[1,{"log":{"entries":[]}}],"log":{"pages":[],"entries":[` + good + `]}}`,
		"entries twice":       `{"log":{"entries":[` + good + `],"entries":[` + good + `,` + good + `]}}`,
		"log twice":           `{"log":{"entries":[` + good + `]},"log":{"entries":[1,2,3]}}`,
		"first log has none":  `{"log":{"version":"1"},"log":{"entries":[` + good + `]}}`,
		"log not an object":   `{"log":[{"entries":[` + good + `]}],"log":"x","log":5,"log":{"entries":[` + good + `]}}`,
		"entries not array":   `{"log":{"entries":{"a":1},"entries":[` + good + `]}}`,
		"entries null":        `{"log":{},"log":{"entries":null},"log":{"entries":[` + good + `]}}`,
		"escaped keys":        `{"l\u006fg":{"entr\u0069es":[` + good + `]}}`,
		"escaped not keys":    `{"lo\"g":{"entries":[1]},"log\u0000":{"entries":[2]},"LOG":{"entries":[3]},"log":{"entries\n":[4],"entriesX":[5]}}`,
		"long keys":           `{"` + strings.Repeat("k", 5000) + `":1,"log":{"` + strings.Repeat("e", 20) + `":[],"entries":[` + good + `]}}`,
		"no log":              `{"version":"1.2"}`,
		"entries not in log":  `{"entries":[` + good + `]}`,
		"odd elements":        harDoc(good, `1`, `-0.5e+3`, `"str\u00e9\n"`, `true`, `false`, `null`, `[1,[2]]`, `{}`, `{"request":5}`, good),
		"white space":         " \r\n\t{ \"log\" :\n{ \"entries\" : [ \n" + good + " ,\t" + good + " ] } }\n\n ",
		"BOM":                 "\xef\xbb\xbf" + harDoc(good),
		"BOM only":            "\xef\xbb\xbf",
		"BOM blank":           "\xef\xbb\xbf  \n",
		"blank":               " \n\t\r ",
		"empty":               "",
		"half a BOM":          "\xef\xbb",
		"not an object":       `[{"log":{"entries":[]}}]`,
		"string root":         `"log"`,
		"number root":         `12.5`,
		"literal root":        `null`,
		"trailing garbage":    harDoc(good) + ` x`,
		"two documents":       harDoc(good) + harDoc(good),
		"deep in an entry":    harDoc(good, strings.Repeat("[", MaxDepth())+strings.Repeat("]", MaxDepth())),
		"deep enough":         harDoc(good, strings.Repeat("[", MaxDepth()-3)+strings.Repeat("]", MaxDepth()-3)),
		"deep after entries":  `{"log":{"entries":[` + good + `]},"x":` + strings.Repeat("[", MaxDepth()) + strings.Repeat("]", MaxDepth()) + `}`,
		"deep and broken":     `{"log":{"entries":[` + good + `]},"x":tru` + strings.Repeat("[", MaxDepth()+2),
		"broken then deep":    `{"log":{"entries":[x` + strings.Repeat("{", MaxDepth()+2),
		"broken in string":    `{"log":{"entries":["a` + "\x01" + `[[[` + strings.Repeat("[", MaxDepth()) + `"]}}`,
		"bad escape":          `{"log":{"entries":["\x` + strings.Repeat("[", MaxDepth()) + `"]}}`,
		"bad escape quote":    `{"log":{"entries":["\q"` + strings.Repeat("[", MaxDepth()) + `]}}`,
		"bad hex":             `{"log":{"entries":["\u00"` + strings.Repeat("[", MaxDepth()) + `]}}`,
		"bad hex in key":      `{"lo\u0g":{"entries":[]}}` + strings.Repeat("[", MaxDepth()+1),
		"bad escape in key":   `{"lo\g":{"entries":[]}}`,
		"control in key":      "{\"lo\x01g\":{}}",
		"numbers":             harDoc(`0`, `-0`, `1e5`, `1E+5`, `1.25e-3`, `-12.5`),
		"bad numbers":         harDoc(`01`),
		"bad number 2":        harDoc(`1.`),
		"bad number 3":        harDoc(`-`),
		"bad number 4":        harDoc(`1e`),
		"bad number 5":        harDoc(`.5`),
		"bad number 6":        harDoc(`+1`),
		"bad literal":         harDoc(`tru`),
		"bad literal 2":       harDoc(`nulL`),
		"trailing comma":      harDoc(good, ``),
		"trailing comma obj":  `{"log":{"entries":[],}}`,
		"missing colon":       `{"log" {"entries":[]}}`,
		"missing comma":       `{"log":{"entries":[1 2]}}`,
		"unclosed":            `{"log":{"entries":[1]}`,
		"raw non-UTF-8":       harDoc(strings.Replace(good, "tools/call", "tools/\xff\xfecall", 1)),
		"control in body":     harDoc(strings.Replace(good, `"text":"{`, "\"text\":\"\x7f{", 1)),
		"legacy by later 202": harDoc(sess, get, post202Later),
		"legacy GET then 202": harDoc(get, post),
		"legacy 202 then GET": harDoc(post, get),
		"long string entry":   harDoc(`"` + strings.Repeat(`ab\"\\\u00e9`, 30000) + `"`),
		"big entry":           harDoc(strings.Replace(good, `"text":"{`, `"text":"`+strings.Repeat("x", 600<<10)+`{`, 1), good),
	}
}

// TestHARStreamMatchesWhole: on every sample and odd document, the streaming
// decoder emits exactly what the whole-document decoder did.
func TestHARStreamMatchesWhole(t *testing.T) {
	// The second pass decodes on as many goroutines as the process may
	// use: one, two, four; several batches of entries.
	good := harEntry(harT0, `[{"name":"Mcp-Session-Id","value":"s1"}]`, harCall, `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`)
	var many []string
	for i := range 1000 {
		many = append(many, strings.Replace(good, `"id\":7`, fmt.Sprintf(`"id\":%d`, i), 1), `"x"`, `{"request":5}`, `{"startedDateTime":"2026-03-14T10:22:05Z","request":{"method":"GET","url":"http://x/logo.png"}}`)
	}
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for name, doc := range harSampleDocs(t) {
			sameAsWhole(t, fmt.Sprint(name, " on ", procs), doc, 0)
		}
		for name, doc := range harOddDocs() {
			sameAsWhole(t, fmt.Sprint(name, " on ", procs), doc, 0)
		}
		sameAsWhole(t, fmt.Sprint("many entries on ", procs), harDoc(many...), 0)
		runtime.GOMAXPROCS(prev)
	}
}

// TestHARStreamMatchesWholeCut cuts documents short at every byte (a small
// one) and at random places (the samples): truncated documents are one
// not_json record, as before, and no prefix decodes differently.
func TestHARStreamMatchesWholeCut(t *testing.T) {
	small := harOddDocs()["odd elements"]
	for i := range len(small) + 1 {
		sameAsWhole(t, fmt.Sprintf("cut at %d", i), small[:i], 0)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, doc := range harSampleDocs(t) {
		for range 150 {
			i := rng.IntN(len(doc) + 1)
			sameAsWhole(t, fmt.Sprintf("%s cut at %d", name, i), doc[:i], 0)
		}
	}
}

// TestHARStreamMatchesWholeMutated changes bytes of documents at random to
// the bytes that matter to JSON: every variant decodes as before.
func TestHARStreamMatchesWholeMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "{}[]\",:\\ \n0123456789-+.eEtrufalsn\x00\x01\x1f\x7f\xff\xc3\xa9u"
	docs := harSampleDocs(t)
	docs["odd"] = harOddDocs()["odd elements"]
	docs["legacy"] = harOddDocs()["legacy by later 202"]
	for name, doc := range docs {
		for range 300 {
			b := []byte(doc)
			for range 1 + rng.IntN(3) {
				switch i := rng.IntN(len(b)); rng.IntN(3) {
				case 0:
					b[i] = alphabet[rng.IntN(len(alphabet))]
				case 1:
					b = append(b[:i], b[i+1:]...)
				default:
					b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
				}
			}
			sameAsWhole(t, name+" mutated", string(b), 0)
		}
	}
}

// TestHARStreamMatchesWholeAtTheLimit: a document within a small document
// limit decodes as before; so does a broken one past it (document_too_large
// at line 1, the input abandoned).
func TestHARStreamMatchesWholeAtTheLimit(t *testing.T) {
	doc := harSampleDocs(t)["devtools.har"]
	sameAsWhole(t, "limit = size", doc, int64(len(doc)))
	broken := "{]" + strings.Repeat(" ", 3<<20)
	sameAsWhole(t, "broken past the limit", broken, 1<<20)
	sameAsWhole(t, "blank past the limit", strings.Repeat("\n", 3<<20), 1<<20)
	sameAsWhole(t, "blank at the limit", strings.Repeat("\n", 1<<20), 1<<20)
	sameAsWhole(t, "blank at the limit with a BOM", "\xef\xbb\xbf"+strings.Repeat("\n", 1<<20), 1<<20)
	sameAsWhole(t, "blank one past the limit", strings.Repeat("\n", 1<<20+1), 1<<20)
	sameAsWhole(t, "deep past the limit", strings.Repeat("[", MaxDepth()+1)+strings.Repeat(" ", 3<<20), 1<<20)
}

// FuzzHARStream holds the streaming decoder to the whole-document one on
// any input.
func FuzzHARStream(f *testing.F) {
	for _, doc := range harOddDocs() {
		if len(doc) < 4096 {
			f.Add(doc)
		}
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameAsWhole(t, "fuzz", doc, 0)
	})
}

// heapPeak is an Emitter that drops what it is given (as a pipeline hands
// it on) and samples the live heap every few hundred records.
type heapPeak struct {
	records, obs, asks int
	peak               uint64
	quar               []string
}

func (h *heapPeak) sample() {
	if h.records++; h.records%500 == 0 {
		h.measure()
	}
}

// Stopped samples the heap in the first pass too (asked before each
// entry).
func (h *heapPeak) Stopped() bool {
	if h.asks++; h.asks%500 == 0 {
		h.measure()
	}
	return false
}

func (h *heapPeak) measure() {
	{
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapInuse)
	}
}
func (h *heapPeak) Observation(*schema.Observation) { h.obs++; h.sample() }
func (h *heapPeak) Quarantine(_ schema.Position, reason, detail string, _ []byte) {
	h.quar = append(h.quar, reason+": "+detail)
	h.sample()
}
func (h *heapPeak) Skip(schema.Position, string) { h.sample() }

// TestHARStreamMemory decodes a HAR far larger than the document limit:
// every entry is decoded, the heap stays far below the document's size,
// and the temporary spool is gone afterwards.
func TestHARStreamMemory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const size = 96 << 20
	h := &heapPeak{}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := decodeHARFile("big.har", bigHAR(t, size), &docLimit{h, 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.quar) != 0 || h.obs < 10000 {
		t.Fatalf("%d observations of %d records, quarantined %v", h.obs, h.records, h.quar)
	}
	t.Logf("heap in use: %d MiB before, at most %d MiB decoding %d MiB", before.HeapInuse>>20, h.peak>>20, size>>20)
	if grown := h.peak - min(h.peak, before.HeapInuse); grown > 48<<20 {
		t.Errorf("the heap grew by %d MiB decoding a %d MiB HAR: the document is held", grown>>20, size>>20)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// docLimit gives an Emitter a document limit.
type docLimit struct {
	Emitter
	limit int64
}

func (d *docLimit) MaxDocumentBytes() int64 { return d.limit }

// TestHARStreamSpoolFails: when the temporary spool cannot be made, the
// decoder says so and what to do, and emits nothing.
func TestHARStreamSpoolFails(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	c := &collector{}
	err := decodeHARFile("big.har", bigHAR(t, 3*harSpoolMem), c)
	if err == nil || errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "TMPDIR") || !strings.Contains(err.Error(), "big.har") {
		t.Fatalf("err = %v", err)
	}
	if c.records() != 0 {
		t.Errorf("%d records emitted", c.records())
	}
}

// TestHAREntryPastTheLimit: an entry larger than the document limit is
// quarantined where it is, the others decoded, and the document read on.
func TestHAREntryPastTheLimit(t *testing.T) {
	good := harEntry(harT0, "", harCall, `{"status":200,"headers":[],"content":{"mimeType":"application/json","text":`+strconv.Quote(harResult)+`}}`)
	big := strings.Replace(good, `"text":"{`, `"text":"`+strings.Repeat("x", 2<<20)+`{`, 1)
	doc := harDoc(good, big, good, `"`+strings.Repeat("y", 1<<20)+`"`, good)
	for _, limit := range []int64{64 << 10, 1 << 20} {
		c := &limited{maxDoc: limit, stopAt: -1}
		cr := &countReader{r: strings.NewReader(doc)}
		if err := decodeHARFile("b.har", cr, c); err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if len(c.obs) != 3 || len(c.quar) != 2 || cr.n != int64(len(doc)) {
			t.Fatalf("limit %d: %d observations, quarantined %+v, read %d of %d bytes", limit, len(c.obs), c.quar, cr.n, len(doc))
		}
		for i, q := range c.quar {
			if q.reason != ReasonDocumentTooLarge || q.pos.Line != int64(2+2*i) || !strings.Contains(q.detail, fmt.Sprint(limit)) ||
				!strings.Contains(q.detail, "-max-document") || !strings.Contains(q.detail, fmt.Sprintf("entry %d", 2+2*i)) || len(q.raw) != excerptBytes {
				t.Errorf("limit %d: quarantine %d: %s %q (raw %d bytes)", limit, i, q.reason, q.detail, len(q.raw))
			}
		}
		if !strings.HasPrefix(c.quar[0].raw, big[:100]) || !strings.HasPrefix(c.quar[1].raw, `"yyy`) {
			t.Errorf("excerpts %.40q %.40q", c.quar[0].raw, c.quar[1].raw)
		}
		for i, o := range c.obs {
			if o.Pos.Line != int64(1+2*i) {
				t.Errorf("observation at entry %d", o.Pos.Line)
			}
		}
	}
	// A later entry past the limit does not make the document's legacy
	// evidence before it count less, nor the other way round.
	sameAsWhole(t, "within the limit", doc, 4<<20)
}

// TestHAREndlessDocument: a document that never ends, whatever it holds,
// ends at harReadFactor times the limit, quarantined whole, nothing else
// emitted.
func TestHAREndlessDocument(t *testing.T) {
	const limit = 64 << 10
	for name, r := range map[string]io.Reader{
		"entries":        io.MultiReader(strings.NewReader(`{"log":{"entries":[`), repeatReader(`{},`)),
		"string entry":   io.MultiReader(strings.NewReader(`{"log":{"entries":["`), repeatReader(`abc\"`)),
		"pages":          io.MultiReader(strings.NewReader(`{"log":{"pages":[`), repeatReader(`1,`)),
		"after entries":  io.MultiReader(strings.NewReader(`{"log":{"entries":[{}]},"x":[`), repeatReader(`[],`)),
		"white space":    repeatReader(" "),
		"broken":         io.MultiReader(strings.NewReader(`{"log":{"entries":[x`), repeatReader(`{},`)),
		"broken in text": io.MultiReader(strings.NewReader("{\"a\":\"\x01"), repeatReader(`abc`)),
	} {
		c := &limited{maxDoc: limit, stopAt: -1}
		cr := &countReader{r: io.LimitReader(r, 4*harReadFactor*limit)}
		err := decodeHARFile("e.har", cr, c)
		if !errors.Is(err, ErrLimit) {
			t.Fatalf("%s: err = %v", name, err)
		}
		if c.records() != 1 || len(c.quar) != 1 || c.quar[0].reason != ReasonDocumentTooLarge || c.quar[0].pos.Line != 1 || !strings.Contains(c.quar[0].detail, "-max-document") {
			t.Fatalf("%s: %d records, quarantined %+v", name, c.records(), c.quar)
		}
		if cr.n > harReadFactor*limit+2*scanBuf {
			t.Errorf("%s: read %d bytes", name, cr.n)
		}
	}
}

// TestHARBrokenBigDocument: a document broken near its end, longer than the
// limit, is not_json, as its detail says (it is not too large: nothing of
// it was held).
func TestHARBrokenBigDocument(t *testing.T) {
	const limit = 256 << 10
	var b bytes.Buffer
	io.Copy(&b, bigHAR(t, 4*limit))
	cut := b.Bytes()[:b.Len()-100]
	c := &limited{maxDoc: limit, stopAt: -1}
	if err := decodeHARFile("cut.har", bytes.NewReader(cut), c); err != nil {
		t.Fatal(err)
	}
	if c.records() != 1 || len(c.quar) != 1 || c.quar[0].reason != ReasonNotJSON || c.quar[0].pos.Line != 1 || len(c.quar[0].raw) != maxQuarantineRaw {
		t.Fatalf("%d records, quarantined %+v", c.records(), c.quar)
	}
}

// TestHARStopsInEitherPass: a stop during the first pass emits nothing; one
// during the second ends after the records already emitted.
func TestHARStopsInEitherPass(t *testing.T) {
	doc := harSampleDocs(t)["devtools.har"]
	n := 0
	stop := &stopAfterAsks{after: 3, asks: &n}
	err := decodeHARFile("d.har", strings.NewReader(doc), stop)
	if err != ErrStopped || stop.records() != 0 {
		t.Fatalf("stop in pass 1: %v, %d records", err, stop.records())
	}
}

type stopAfterAsks struct {
	collector
	after int
	asks  *int
}

func (s *stopAfterAsks) Stopped() bool {
	*s.asks++
	return *s.asks > s.after
}
