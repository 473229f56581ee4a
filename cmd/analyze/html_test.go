package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"
)

// The HTML report, opened from disk in headless Chromium with networking
// off, shows the sections, charts and numbers DuckDB computes over the
// same dataset; the page's screenshot is a real picture.
//
// The browser is Debian's chromium (.ci/run installs it when absent; the
// environment variable MCPTRACE_CHROMIUM names another binary). Without
// one the test fails: it never skips. MCPTRACE_SCREENSHOT_DIR keeps the
// screenshots (default: the test's temporary directory).
//
// Driven with chromedp rather than chromium --dump-dom and --screenshot:
// one browser for both pages, the text read after layout (innerText, the
// charts' boxes), network requests watched, offline emulation, and the
// screenshot of the whole page, where --dump-dom gives back the markup
// before any rendering and each flag starts a browser of its own.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := samplesDataset(t)
	db := duck(t, dir)
	shots := os.Getenv("MCPTRACE_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	pages := t.TempDir()
	reportHTML := filepath.Join(pages, "report.html")
	analyzeOut(t, "-data", dir, "-format", "html", "-o", reportHTML) // as people get it: at most 20 tools
	id := sqlRows(t, db, `SELECT session_id FROM x WHERE session_id IS NOT NULL GROUP BY 1 ORDER BY count(*) FILTER (WHERE retry_of IS NOT NULL) DESC, 1 LIMIT 1`)[0][0].(string)
	sessionHTML := filepath.Join(pages, "session.html")
	analyzeOut(t, "session", "-data", dir, "-format", "html", "-o", sessionHTML, id) // the ID after the flags, as -h shows

	b := openBrowser(t, bin)

	// The report page.
	p := b.load(t, reportHTML, filepath.Join(shots, "report.png"))
	if want := []string{"overview", "tools", "clients", "retries", "streams"}; !slices.Equal(p.Sections, want) {
		t.Errorf("sections %v, want %v", p.Sections, want)
	}
	for _, h := range []string{"Overview", "Outcome breakdown", "False successes by class", "False successes over time", "Tools",
		"Error rate per tool, by layer", "Clients and servers", "Retries", "Retry flows", "Streams and sessions", "MRTR chains by how they ended"} {
		if !strings.Contains(p.Text, h) {
			t.Errorf("the page does not show %q", h)
		}
	}
	for _, c := range []string{"outcomes", "false-classes", "over-time", "tool-errors", "retry-flow", "unsafe", "stream-ends"} {
		ch, ok := p.Charts[c]
		if !ok {
			t.Errorf("no chart %s", c)
			continue
		}
		if ch.Width < 100 || ch.Height < 20 || len(ch.Bars)+ch.Bands == 0 {
			t.Errorf("chart %s drawn %.0f×%.0f px with %d bars and %d bands", c, ch.Width, ch.Height, len(ch.Bars), ch.Bands)
		}
	}

	// Overview, as DuckDB counts it.
	s := sqlRows(t, db, `SELECT count(*), count(*) FILTER (WHERE `+test2xx+`), count(*) FILTER (WHERE `+testFalseOK+`),
		(count(*) FILTER (WHERE `+testFalseOK+`)) / nullif(count(*) FILTER (WHERE `+test2xx+`), 0), count(*) FILTER (WHERE `+testFailed+`) FROM x`)[0]
	sum := p.row(t, "overview.summary", 0)
	for i, c := range []string{"exchanges", "http_2xx", "false_successes", "false_success_rate", "failed"} {
		want := intText(s[i])
		if c == "false_success_rate" {
			want = rateText(s[i])
		}
		if sum[c] != want {
			t.Errorf("overview summary %s: the page shows %q, DuckDB says %s", c, sum[c], want)
		}
	}
	outcomes := sqlRows(t, db, `SELECT outcome, layer, count(*), count(*) / (SELECT count(*) FROM x) FROM x GROUP BY ALL`)
	var wantBars, gotBars []string
	for _, r := range outcomes {
		wantBars = append(wantBars, intText(r[2])+" ("+rateText(r[3])+")")
	}
	gotBars = append(gotBars, p.Charts["outcomes"].Bars...)
	slices.Sort(wantBars)
	slices.Sort(gotBars)
	if !slices.Equal(gotBars, wantBars) {
		t.Errorf("outcome breakdown bars %v, DuckDB says %v", gotBars, wantBars)
	}
	for _, r := range outcomes {
		label := r[0].(string) + " · " + r[1].(string)
		if !slices.Contains(p.Charts["outcomes"].Texts, label) {
			t.Errorf("the outcome breakdown has no bar labelled %q", label)
		}
	}

	// False successes over time: the buckets the title names, counted by
	// DuckDB.
	m := regexp.MustCompile(`per (?:(\d+) )?(minute|hour|day)s?\)`).FindStringSubmatch(p.Titles["overview.over_time"])
	if m == nil {
		t.Fatalf("over-time title %q names no bucket width", p.Titles["overview.over_time"])
	}
	n := 1
	if m[1] != "" {
		n, _ = strconv.Atoi(m[1])
	}
	width := n * map[string]int{"minute": 60, "hour": 3600, "day": 86400}[m[2]]
	buckets := sqlRows(t, db, fmt.Sprintf(`SELECT floor(epoch(started_at) / %[1]d)::BIGINT * %[1]d AS b, count(*), count(*) FILTER (WHERE %[2]s),
		count(*) FILTER (WHERE %[3]s), (count(*) FILTER (WHERE %[3]s)) / nullif(count(*) FILTER (WHERE %[2]s), 0), count(*) FILTER (WHERE %[4]s)
		FROM x WHERE started_at IS NOT NULL GROUP BY b ORDER BY b`, width, test2xx, testFalseOK, testFailed))
	if len(buckets) > 48 {
		t.Errorf("%d buckets of %d s: more than 48", len(buckets), width)
	}
	var got, want [][]any
	for i, r := range p.Tables["overview.over_time"] {
		got = append(got, []any{r["bucket"], r["exchanges"], r["http_2xx"], r["false_successes"], r["false_success_rate"], r["failed"]})
		if i < len(p.Charts["over-time"].Bars) {
			got[i] = append(got[i], p.Charts["over-time"].Bars[i])
		}
	}
	for _, r := range buckets {
		want = append(want, []any{time.Unix(int64(r[0].(float64)), 0).UTC().Format("2006-01-02T15:04:05.000Z"),
			intText(r[1]), intText(r[2]), intText(r[3]), rateText(r[4]), intText(r[5]), rateText(r[4])})
	}
	sameRows(t, "overview.over_time on the page", got, want)

	// Tools: calls and error rate per tool, in the table and on the bars.
	got, want = nil, nil
	for _, r := range p.Tables["tools.tools"] {
		got = append(got, []any{r["tool"], r["calls"], r["error_rate"], r["tool_error_rate"]})
	}
	tools := map[any][]any{}
	for _, r := range sqlRows(t, db, `SELECT tool_name, count(*), (count(*) FILTER (WHERE `+testFailed+`)) / count(*), avg(CASE WHEN outcome = 'TOOL_ERROR' THEN 1 ELSE 0 END)
		FROM x WHERE method = 'tools/call' AND tool_name IS NOT NULL GROUP BY 1`) {
		tools[r[0]] = []any{r[0], intText(r[1]), rateText(r[2]), rateText(r[3])}
	}
	if len(got) != min(20, len(tools)) || len(p.Charts["tool-errors"].Texts) != 2*len(got) {
		t.Errorf("%d tools on the page, %d texts in their chart; DuckDB counts %d tools (the page shows at most 20)", len(got), len(p.Charts["tool-errors"].Texts), len(tools))
	}
	for _, g := range got {
		w := tools[g[0]]
		want = append(want, w)
		if w != nil && !slices.Contains(p.Charts["tool-errors"].Texts, w[2].(string)+" of "+w[1].(string)+" calls") {
			t.Errorf("the tool chart has no %q for %s", w[2].(string)+" of "+w[1].(string)+" calls", w[0])
		}
	}
	sameRows(t, "tools.tools on the page", got, want)

	// Retries: repeats by origin, and the flow's two ends.
	got, want = nil, nil
	for _, r := range p.Tables["retries.by_origin"] {
		got = append(got, []any{r["retry_origin"], r["repeats"], r["succeeded"], r["unsafe"]})
	}
	var repeats, succeeded float64
	for _, r := range sqlRows(t, db, `SELECT retry_origin, count(*), count(*) FILTER (WHERE outcome IN ('SUCCESS', 'TOOL_SUCCESS')), count(*) FILTER (WHERE retry_unsafe)
		FROM x WHERE retry_origin <> 'none' GROUP BY 1`) {
		want = append(want, []any{r[0], intText(r[1]), intText(r[2]), intText(r[3])})
		repeats += r[1].(float64)
		succeeded += r[2].(float64)
	}
	sameRowSet(t, "retries.by_origin on the page", got, want)
	for _, end := range []string{"ended in success: " + intText(succeeded), "did not: " + intText(repeats-succeeded)} {
		if !slices.Contains(p.Charts["retry-flow"].Texts, end) {
			t.Errorf("the retry flow has no %q: %v", end, p.Charts["retry-flow"].Texts)
		}
	}
	st := sqlRows(t, db, `SELECT count(*) FILTER (WHERE outcome = 'STREAM_INCOMPLETE'), count(*) FILTER (WHERE session_expired), count(*) FILTER (WHERE outcome = 'CANCELLED') FROM x`)[0]
	ss := p.row(t, "streams.summary", 0)
	if g := []string{ss["incomplete_streams"], ss["sessions_expired"], ss["cancelled"]}; !slices.Equal(g, []string{intText(st[0]), intText(st[1]), intText(st[2])}) {
		t.Errorf("streams summary on the page %v, DuckDB says %v", g, st)
	}

	// The session page: a sequence diagram with one request arrow per
	// attempt and an arc per repeat inside the session.
	p = b.load(t, sessionHTML, filepath.Join(shots, "session.png"))
	seq, ok := p.Charts["sequence"]
	if !ok {
		t.Fatalf("the session page has no sequence diagram")
	}
	w := sqlRows(t, db, `SELECT sum(greatest(len(http_statuses), post_count, 1))::BIGINT, count(*), count(*) FILTER (WHERE coalesce(retry_of, duplicate_of) IN (SELECT exchange_id FROM x WHERE session_id = '`+id+`'))
		FROM x WHERE session_id = '`+id+`'`)[0]
	if float64(seq.Requests) != w[0].(float64) || float64(seq.Retries) != w[2].(float64) || w[2].(float64) == 0 {
		t.Errorf("sequence diagram: %d request arrows and %d repeat arcs, DuckDB says %v and %v", seq.Requests, seq.Retries, w[0], w[2])
	}
	if !slices.Contains(seq.Texts, "client") || !slices.Contains(seq.Texts, "server") {
		t.Errorf("the sequence diagram has no client and server lanes")
	}
	got, want = nil, nil
	for _, r := range p.Tables["session.timeline"] {
		got = append(got, []any{r["n"], r["http_statuses"], r["outcome"]})
	}
	for _, r := range sqlRows(t, db, `SELECT row_number() OVER (ORDER BY started_at, exchange_id), array_to_string(http_statuses, ' '), outcome
		FROM x WHERE session_id = '`+id+`' ORDER BY started_at, exchange_id`) {
		want = append(want, []any{intText(r[0]), r[1], r[2]})
	}
	sameRows(t, "session.timeline on the page", got, want)
	b.noNetwork(t)
}

func intText(v any) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(v.(float64), 'f', 0, 64)
}

func rateText(v any) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(100*v.(float64), 'f', 1, 64) + "%"
}

// chromium is the browser's path; the test fails without one.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCPTRACE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium to open the HTML report in: install Debian's chromium (apt-get install chromium; .ci/run does) or set MCPTRACE_CHROMIUM to a Chromium binary")
	return ""
}

type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	urls []string
}

// openBrowser starts headless Chromium with a fresh profile, no proxy that
// goes anywhere, no name resolution and the network emulated offline;
// every request the pages make is recorded.
func openBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	// Not a timed assertion: a bound so that a browser that hangs ends
	// the test instead of the test binary's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("proxy-server", "127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &browser{ctx: bctx}
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.urls = append(b.urls, e.Request.URL)
			b.mu.Unlock()
		}
	}); err != nil {
		// bcancel would wait for a browser that never started.
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() { chromedp.Cancel(bctx); bcancel() })
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(bctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}}); err != nil {
		t.Fatal(err)
	}
	return b
}

// noNetwork fails the test when a page asked for anything but its file.
func (b *browser) noNetwork(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	files := 0
	for _, u := range b.urls {
		if strings.HasPrefix(u, "file://") {
			files++
			continue
		}
		t.Errorf("the page requested %s", u)
	}
	if files == 0 {
		t.Errorf("no request for the page's file was seen (requests: %v)", b.urls)
	}
}

// page is what a loaded page shows, read from the DOM after layout.
type page struct {
	Sections []string                       `json:"sections"`
	Text     string                         `json:"text"`
	Tables   map[string][]map[string]string `json:"tables"`
	Titles   map[string]string              `json:"titles"`
	Charts   map[string]struct {
		Width    float64  `json:"width"`
		Height   float64  `json:"height"`
		Bars     []string `json:"bars"`
		Bands    int      `json:"bands"`
		Texts    []string `json:"texts"`
		Requests int      `json:"requests"`
		Retries  int      `json:"retries"`
	} `json:"charts"`
}

// row is a table's row i, cells by column name.
func (p *page) row(t *testing.T, table string, i int) map[string]string {
	t.Helper()
	rows := p.Tables[table]
	if i >= len(rows) {
		t.Fatalf("table %s on the page has %d rows", table, len(rows))
	}
	return rows[i]
}

const readPage = `(() => {
	const tables = {}, titles = {}, charts = {};
	for (const t of document.querySelectorAll('table[data-table]')) {
		const rows = [];
		for (const tr of t.tBodies[0].rows) {
			const r = {};
			for (const td of tr.querySelectorAll('td[data-col]')) r[td.dataset.col] = td.innerText;
			if (Object.keys(r).length) rows.push(r);
		}
		tables[t.dataset.table] = t.tHead ? rows : [Object.assign({}, ...rows)];
		titles[t.dataset.table] = t.closest('.table').querySelector('h3').innerText;
	}
	for (const f of document.querySelectorAll('figure[data-chart]')) {
		const svg = f.querySelector('svg'), box = svg.getBoundingClientRect();
		charts[f.dataset.chart] = {width: box.width, height: box.height,
			bars: [...svg.querySelectorAll('rect.bar')].map(r => r.dataset.value || ''),
			bands: svg.querySelectorAll('path.band').length,
			texts: [...svg.querySelectorAll('text')].map(e => e.textContent),
			requests: svg.querySelectorAll('line.req').length, retries: svg.querySelectorAll('path.retry').length};
	}
	return {sections: [...document.querySelectorAll('section[data-report]')].map(s => s.dataset.report),
		text: document.body.innerText, tables, titles, charts};
})()`

// load opens file, reads the page and saves a screenshot of its top as
// shot, which must decode as PNG and not be blank.
func (b *browser) load(t *testing.T, file, shot string) *page {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("opening %s: %v", file, err)
	}
	p, err := chromedp.Run(b.ctx, chromedp.Evaluate[*page](readPage))
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	img, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot()) // the first 1280×900 pixels
	if err != nil {
		t.Fatalf("screenshot of %s: %v", file, err)
	}
	if err := os.WriteFile(shot, img, 0o644); err != nil {
		t.Fatal(err)
	}
	checkPicture(t, shot, img)
	return p
}

// checkPicture fails unless img is a PNG of a page with something drawn:
// many colours, and a fair share of pixels that are not the background.
func checkPicture(t *testing.T, name string, img []byte) {
	t.Helper()
	m, err := png.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	bd := m.Bounds()
	if bd.Dx() < 1000 || bd.Dy() < 700 {
		t.Errorf("screenshot %s is %v", name, bd.Size())
	}
	colours := map[[3]uint32]bool{}
	ink := 0
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := m.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			if r>>8 < 200 || g>>8 < 200 || b>>8 < 200 {
				ink++
			}
		}
	}
	px := (bd.Dx() / 2) * (bd.Dy() / 2)
	if len(colours) < 16 || ink*100 < px {
		t.Errorf("screenshot %s looks blank: %d colours, %d of %d sampled pixels not background", name, len(colours), ink, px)
	}
}

// On the generated dataset, every cell of every table the HTML page shows
// is the JSON report's value as text shows it: the page is built from the
// same reports (the browser test checks them against DuckDB).
func TestHTMLSameNumbersAsJSON(t *testing.T) {
	dir := generatedDataset(t)
	args := []string{"-data", dir, "-limit", "20", "-top", "3"}
	j := analyzeJSON(t, args...)
	page := analyzeOut(t, append(args, "-format", "html")...)
	tables := htmlTables(t, page)
	checked := 0
	for rep, tabs := range j.Reports {
		for name := range tabs {
			key := rep + "." + name
			cells, ok := tables[key]
			if !ok {
				t.Errorf("the page has no table %s", key)
				continue
			}
			var rows []map[string]any
			raw := tabs[name]
			if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
				var o map[string]any
				if err := json.Unmarshal(raw, &o); err != nil {
					t.Fatal(err)
				}
				rows = []map[string]any{o}
			} else if err := json.Unmarshal(raw, &rows); err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(cells) {
				t.Errorf("%s: %d rows on the page, %d in the JSON", key, len(cells), len(rows))
				continue
			}
			for i, r := range rows {
				for col, v := range r {
					got, ok := cells[i][col]
					if !ok {
						t.Errorf("%s row %d: no cell %s on the page", key, i, col)
						continue
					}
					if !sameCell(got, v) {
						t.Errorf("%s row %d %s: the page shows %q, the JSON %v", key, i, col, got, v)
					}
					checked++
				}
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d cells compared", checked)
	}
	if _, ok := tables["overview.over_time"]; !ok {
		t.Errorf("the page has no over-time table")
	}
}

// htmlTables parses the page's tables: table data-table, rows of cells
// by data-col (a vertical table's figures are one row).
func htmlTables(t *testing.T, page string) map[string][]map[string]string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	var text func(n *html.Node) string
	text = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			b.WriteString(text(c))
		}
		return b.String()
	}
	out := map[string][]map[string]string{}
	var walk func(n *html.Node, key string, vertical bool)
	walk = func(n *html.Node, key string, vertical bool) {
		if n.Type == html.ElementNode {
			switch {
			case n.Data == "table" && attr(n, "data-table") != "":
				key = attr(n, "data-table")
				out[key] = nil
				vertical = true
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.Data == "thead" {
						vertical = false
					}
				}
				if vertical {
					out[key] = []map[string]string{{}}
				}
			case n.Data == "tr" && key != "" && !vertical:
				if n.Parent.Data == "tbody" && n.FirstChild != nil && attr(n.FirstChild, "class") != "none" {
					out[key] = append(out[key], map[string]string{})
				}
			case n.Data == "td" && key != "" && attr(n, "data-col") != "":
				rows := out[key]
				rows[len(rows)-1][attr(n, "data-col")] = text(n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, key, vertical)
		}
	}
	walk(doc, "", false)
	return out
}

// sameCell reports whether a page's cell shows the JSON value v as text
// does: null as "-", rates as percentages with one decimal, milliseconds
// with one decimal, times to the millisecond.
func sameCell(cell string, v any) bool {
	switch v := v.(type) {
	case nil:
		return cell == "-"
	case string:
		if tm, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return cell == tm.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		return cell == v
	case float64:
		if p, ok := strings.CutSuffix(cell, "%"); ok {
			return p == strconv.FormatFloat(100*v, 'f', 1, 64)
		}
		if strings.Contains(cell, ".") {
			return cell == strconv.FormatFloat(v, 'f', 1, 64)
		}
		return cell == strconv.FormatFloat(v, 'f', 0, 64) && v == math.Trunc(v)
	}
	return false
}
