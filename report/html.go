package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"mcptrace/classify"
)

// The HTML report is one file with nothing to fetch: inline CSS, inline
// SVG charts drawn here from the same tables the other formats print (the
// numbers shown are cellText's, as in text and Markdown), no script, and a
// Content-Security-Policy that forbids loading anything. html/template
// escapes every text, dataset values included.

//go:embed html.tmpl
var htmlTemplate string

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"f": func(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) },
}).Parse(htmlTemplate))

type hPage struct {
	Title    string
	Meta     []string
	Sections []hSection
}

type hSection struct {
	ID, Name, Title string
	Charts          []*svgChart
	Tables          []hTable
}

type hTable struct {
	ID, Key, Title, Note string
	Vertical             bool
	Heads                []hCell
	Rows                 [][]hCell
	Pairs                []hPair // a vertical table's figures
}

type hPair struct{ Head, Col, Text string }

type hCell struct {
	Col, Text string
	Num       bool
}

// svgChart is one chart: a box of W×H pixels and what is drawn in it.
type svgChart struct {
	ID, Title, Note string
	W, H            float64
	Els             []svgEl
	Legend          []legendEntry
}

type legendEntry struct{ Class, Text string }

// svgEl is one SVG element: Kind rect (X, Y, W, H), text (X, Y, Anchor),
// line (X, Y to X2, Y2) or path (D). Tip is its tooltip, Data a value the
// element stands for (data-value), for a test to read.
type svgEl struct {
	Kind, Class, Text, Tip, D, Anchor, Data string
	X, Y, W, H, X2, Y2                      float64
}

func (c *svgChart) rect(class string, x, y, w, h float64, tip, data string) {
	c.Els = append(c.Els, svgEl{Kind: "rect", Class: class, X: x, Y: y, W: w, H: h, Tip: tip, Data: data})
}

func (c *svgChart) text(class string, x, y float64, anchor, s string) {
	c.Els = append(c.Els, svgEl{Kind: "text", Class: class, X: x, Y: y, Anchor: anchor, Text: s})
}

func (c *svgChart) line(class string, x, y, x2, y2 float64, tip string) {
	c.Els = append(c.Els, svgEl{Kind: "line", Class: class, X: x, Y: y, X2: x2, Y2: y2, Tip: tip})
}

func (c *svgChart) path(class, d, tip string) {
	c.Els = append(c.Els, svgEl{Kind: "path", Class: class, D: d, Tip: tip})
}

func renderHTML(w *bufio.Writer, m Meta, reports []*Report) error {
	p := hPage{Title: "mcptrace analyze: " + m.Dataset, Meta: metaLines(m)}
	for _, r := range reports {
		s := hSection{ID: "r-" + r.Name, Name: r.Name, Title: r.Title, Charts: charts(r)}
		for _, t := range r.Tables {
			s.Tables = append(s.Tables, htmlTable(r, t))
		}
		p.Sections = append(p.Sections, s)
	}
	return htmlPage.Execute(w, p)
}

func htmlTable(r *Report, t *Table) hTable {
	h := hTable{ID: "t-" + r.Name + "-" + t.Name, Key: r.Name + "." + t.Name, Title: t.Title, Note: t.Note, Vertical: t.Vertical}
	for _, c := range t.Cols {
		h.Heads = append(h.Heads, hCell{Col: c.Name, Text: head(c), Num: c.Kind != Text})
	}
	for _, row := range t.Rows {
		var cells []hCell
		for i, c := range t.Cols {
			cells = append(cells, hCell{Col: c.Name, Text: cellText(c, row[i]), Num: c.Kind != Text})
		}
		h.Rows = append(h.Rows, cells)
		if t.Vertical {
			for i, c := range t.Cols {
				h.Pairs = append(h.Pairs, hPair{Head: head(c), Col: c.Name, Text: cellText(c, row[i])})
			}
		}
	}
	return h
}

// charts are the charts drawn for a report, from its tables.
func charts(r *Report) []*svgChart {
	var out []*svgChart
	add := func(c *svgChart) {
		if c != nil {
			out = append(out, c)
		}
	}
	switch r.Name {
	case "overview":
		add(outcomeChart(r.Table("outcomes")))
		add(falseClassChart(r.Table("false_successes")))
		add(overTimeChart(r.Table("over_time")))
	case "tools":
		add(toolChart(r.Table("tools")))
	case "retries":
		add(retryFlowChart(r.Table("by_origin")))
		add(unsafeChart(r.Table("unsafe")))
	case "streams":
		add(streamEndChart(r.Table("stream_ends")))
	case "session":
		add(sequenceChart(r.Table("timeline")))
	}
	return out
}

// col returns the index of t's column name (it panics on a name t lacks:
// the charts are written for these tables).
func col(t *Table, name string) int {
	for i, c := range t.Cols {
		if c.Name == name {
			return i
		}
	}
	panic("report: table " + t.Name + " has no column " + name)
}

func intOf(v any) int64 {
	n, _ := v.(int64)
	return n
}

func floatOf(v any) float64 {
	f, _ := v.(float64)
	return f
}

func strOf(v any) string {
	s, _ := v.(string)
	return s
}

// cell is row's cell of column name as text shows it.
func cell(t *Table, row []any, name string) string {
	i := col(t, name)
	return cellText(t.Cols[i], row[i])
}

// outcomeClass is the colour class of an outcome: success, a failure by
// its layer, the interaction flow, or unknown.
func outcomeClass(outcome string) string {
	switch {
	case outcome == classify.Success || outcome == classify.ToolSuccess:
		return "c-ok"
	case outcome == "":
		return "c-unknown"
	}
	switch classify.LayerOf(outcome) {
	case classify.LayerTransport:
		return "c-transport"
	case classify.LayerProtocol:
		return "c-protocol"
	case classify.LayerApplication:
		return "c-tool"
	case classify.LayerInteraction:
		return "c-interaction"
	}
	return "c-unknown"
}

var outcomeLegend = []legendEntry{{"c-ok", "success"}, {"c-tool", "tool error (application)"}, {"c-protocol", "protocol"},
	{"c-transport", "transport"}, {"c-interaction", "interaction"}, {"c-unknown", "unknown"}}

type bar struct {
	Label, Value, Tip, Class string
	N                        float64
}

// hbars draws one horizontal bar per item, scaled to the largest.
func hbars(id, title, note string, bars []bar, legend []legendEntry) *svgChart {
	if len(bars) == 0 {
		return nil
	}
	const labelW, barW, rowH = 260.0, 420.0, 22.0
	c := &svgChart{ID: id, Title: title, Note: note, W: labelW + barW + 190, H: rowH*float64(len(bars)) + 10, Legend: legend}
	top := 0.0
	for _, b := range bars {
		top = max(top, b.N)
	}
	for i, b := range bars {
		y := 5 + rowH*float64(i)
		c.text("label", labelW-8, y+15, "end", oneLine(b.Label))
		wd := 0.0
		if top > 0 {
			wd = barW * b.N / top
		}
		if b.N > 0 {
			wd = max(wd, 1)
		}
		c.rect("bar "+b.Class, labelW, y+3, wd, rowH-6, b.Tip, b.Value)
		c.text("value", labelW+wd+6, y+15, "start", b.Value)
	}
	return c
}

func outcomeChart(t *Table) *svgChart {
	if t == nil {
		return nil
	}
	var bars []bar
	for _, row := range t.Rows {
		o := strOf(row[col(t, "outcome")])
		l := strOf(row[col(t, "layer")])
		v := cell(t, row, "count") + " (" + cell(t, row, "share") + ")"
		bars = append(bars, bar{Label: o + " · " + l, Value: v, Tip: o + " (" + l + "): " + v, Class: outcomeClass(o), N: float64(intOf(row[col(t, "count")]))})
	}
	return hbars("outcomes", "Outcome breakdown", "exchanges by outcome and layer, share of all exchanges", bars, outcomeLegend)
}

func falseClassChart(t *Table) *svgChart {
	if t == nil {
		return nil
	}
	var bars []bar
	for _, row := range t.Rows {
		class := strOf(row[col(t, "class")])
		if class == "total" {
			continue
		}
		v := cell(t, row, "count") + " (" + cell(t, row, "rate") + ")"
		what := strOf(row[col(t, "what")])
		bars = append(bars, bar{Label: what, Value: v, Tip: what + ": " + v + " of the 2xx exchanges", Class: "c-false", N: float64(intOf(row[col(t, "count")]))})
	}
	return hbars("false-classes", "False successes by class", "final HTTP status 2xx, then a failure; rate over the 2xx exchanges", bars, nil)
}

func overTimeChart(t *Table) *svgChart {
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	const left, plotW, plotH, top = 70.0, 760.0, 200.0, 12.0
	c := &svgChart{ID: "over-time", Title: t.Title, Note: "bars: false-success rate over the bucket's 2xx exchanges; hover a bar for its counts",
		W: left + plotW + 20, H: top + plotH + 48}
	iRate, iB := col(t, "false_success_rate"), col(t, "bucket")
	peak := 0.0
	for _, row := range t.Rows {
		peak = max(peak, floatOf(row[iRate]))
	}
	scale := niceCeil(peak)
	for _, f := range []float64{0, 0.5, 1} {
		y := top + plotH - plotH*f
		c.line("grid", left, y, left+plotW, y, "")
		c.text("axis", left-6, y+4, "end", strconv.FormatFloat(100*scale*f, 'f', -1, 64)+"%")
	}
	// A bar's place is its bucket's: buckets without an exchange (not
	// listed) stay empty.
	first, w := t.Rows[0][iB].(time.Time), t.Step
	if w <= 0 {
		w = time.Hour
	}
	slots := t.Rows[len(t.Rows)-1][iB].(time.Time).Sub(first)/w + 1
	slot := plotW / float64(slots)
	for _, row := range t.Rows {
		x := left + slot*float64(row[iB].(time.Time).Sub(first)/w)
		r := floatOf(row[iRate])
		h := 0.0
		if scale > 0 {
			h = plotH * r / scale
		}
		if row[iRate] != nil && r > 0 {
			h = max(h, 1)
		}
		from := row[iB].(time.Time).Format("2006-01-02 15:04")
		tip := fmt.Sprintf("%s UTC: %s false successes of %s 2xx (%s); %s exchanges, %s failed", from,
			cell(t, row, "false_successes"), cell(t, row, "http_2xx"), cell(t, row, "false_success_rate"), cell(t, row, "exchanges"), cell(t, row, "failed"))
		c.rect("bar c-false", x+slot*0.1, top+plotH-h, max(slot*0.8, 1), h, tip, cell(t, row, "false_success_rate"))
	}
	c.line("axisline", left, top+plotH, left+plotW, top+plotH, "")
	last := first.Add((slots - 1) * w)
	c.text("axis", left, top+plotH+18, "start", first.Format("2006-01-02 15:04"))
	if slots > 2 {
		c.text("axis", left+plotW/2, top+plotH+18, "middle", first.Add(slots/2*w).Format("2006-01-02 15:04"))
	}
	if slots > 1 {
		c.text("axis", left+plotW, top+plotH+18, "end", last.Format("2006-01-02 15:04"))
	}
	c.text("axis", left, top+plotH+38, "start", fmt.Sprintf("UTC, %d buckets of %s, %d with exchanges", slots, widthPhrase(w), len(t.Rows)))
	return c
}

// widthPhrase is a bucket width with its count ("one hour", "28 days").
func widthPhrase(w time.Duration) string {
	s := widthText(w)
	if s[0] < '0' || s[0] > '9' {
		s = "one " + s
	}
	return s
}

// niceCeil is the smallest 1, 2 or 5 times a power of ten at or above v
// (0 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

func toolChart(t *Table) *svgChart {
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	const labelW, barW, rowH = 200.0, 460.0, 22.0
	c := &svgChart{ID: "tool-errors", Title: "Error rate per tool, by layer", Note: "share of the tool's calls that failed, stacked by the layer that failed; scale: the highest rate",
		W: labelW + barW + 230, H: rowH*float64(len(t.Rows)) + 10,
		Legend: []legendEntry{{"c-transport", "transport"}, {"c-protocol", "protocol"}, {"c-tool", "tool error"}}}
	peak := 0.0
	for _, row := range t.Rows {
		peak = max(peak, floatOf(row[col(t, "transport_rate")])+floatOf(row[col(t, "protocol_rate")])+floatOf(row[col(t, "tool_error_rate")]))
	}
	for i, row := range t.Rows {
		y := 5 + rowH*float64(i)
		tool := strOf(row[col(t, "tool")])
		c.text("label", labelW-8, y+15, "end", oneLine(tool))
		x := labelW
		for _, s := range []struct{ name, class, what string }{{"transport_rate", "c-transport", "transport"}, {"protocol_rate", "c-protocol", "protocol"}, {"tool_error_rate", "c-tool", "tool error"}} {
			r := floatOf(row[col(t, s.name)])
			if r <= 0 || peak <= 0 {
				continue
			}
			wd := max(barW*r/peak, 1)
			c.rect("bar "+s.class, x, y+3, wd, rowH-6, tool+": "+s.what+" "+cell(t, row, s.name)+" of "+cell(t, row, "calls")+" calls", cell(t, row, s.name))
			x += wd
		}
		c.text("value", x+6, y+15, "start", cell(t, row, "error_rate")+" of "+cell(t, row, "calls")+" calls")
	}
	return c
}

// retryFlowChart draws the repeats of each origin flowing to "ended in
// success" and "did not", band widths by count.
func retryFlowChart(t *Table) *svgChart {
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	const x1, x2, nodeW, gap, span = 300.0, 640.0, 14.0, 12.0, 240.0
	var total, ok int64
	for _, row := range t.Rows {
		total += intOf(row[col(t, "repeats")])
		ok += intOf(row[col(t, "succeeded")])
	}
	if total == 0 {
		return nil
	}
	k := span / float64(total)
	h := span + gap*float64(len(t.Rows)) + 20
	c := &svgChart{ID: "retry-flow", Title: "Retry flows", Note: "repeats by who sent them (retry_origin) and how they ended; band width: repeats",
		W: 900, H: h, Legend: []legendEntry{{"c-ok", "ended in success"}, {"c-fail", "did not"}}}
	okY, failY := 10.0, 10.0+float64(ok)*k+gap
	c.rect("node", x2, okY, nodeW, max(float64(ok)*k, 1), "", strconv.FormatInt(ok, 10))
	c.text("label", x2+nodeW+6, okY+12, "start", "ended in success: "+strconv.FormatInt(ok, 10))
	c.rect("node", x2, failY, nodeW, max(float64(total-ok)*k, 1), "", strconv.FormatInt(total-ok, 10))
	c.text("label", x2+nodeW+6, failY+12, "start", "did not: "+strconv.FormatInt(total-ok, 10))
	y := 10.0
	for _, row := range t.Rows {
		origin := strOf(row[col(t, "retry_origin")])
		n, s := intOf(row[col(t, "repeats")]), intOf(row[col(t, "succeeded")])
		hn := float64(n) * k
		c.rect("node", x1-nodeW, y, nodeW, max(hn, 1), "", cell(t, row, "repeats"))
		lbl := fmt.Sprintf("%s: %s repeats, %s succeeded", origin, cell(t, row, "repeats"), cell(t, row, "success_rate"))
		c.text("label", x1-nodeW-6, y+12, "end", lbl)
		var extra []string
		if u := intOf(row[col(t, "unsafe")]); u > 0 {
			extra = append(extra, cell(t, row, "unsafe")+" unsafe")
		}
		if ig := intOf(row[col(t, "retry_after_ignored")]); ig > 0 {
			extra = append(extra, cell(t, row, "retry_after_ignored")+" Retry-After ignored")
		}
		if len(extra) > 0 {
			c.text("label warn", x1-nodeW-6, y+26, "end", strings.Join(extra, ", "))
		}
		hs := float64(s) * k
		if s > 0 {
			c.path("band c-ok", band(x1, y, x2, okY, hs), fmt.Sprintf("%s: %d ended in success", origin, s))
			okY += hs
		}
		if n-s > 0 {
			c.path("band c-fail", band(x1, y+hs, x2, failY, hn-hs), fmt.Sprintf("%s: %d did not end in success", origin, n-s))
			failY += hn - hs
		}
		y += max(hn, 28) + gap
	}
	c.H = max(c.H, y+10, failY+20)
	return c
}

// band is a band of height h from (xa, ya) to (xb, yb).
func band(xa, ya, xb, yb, h float64) string {
	m := (xa + xb) / 2
	return fmt.Sprintf("M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f L%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f Z",
		xa, ya, m, ya, m, yb, xb, yb, xb, yb+h, m, yb+h, m, ya+h, xa, ya+h)
}

func unsafeChart(t *Table) *svgChart {
	if t == nil {
		return nil
	}
	var bars []bar
	for _, row := range t.Rows {
		tool := strOf(row[col(t, "tool")])
		u, s := intOf(row[col(t, "unsafe_repeats")]), intOf(row[col(t, "duplicate_side_effects")])
		v := cell(t, row, "unsafe_repeats") + " unsafe, " + cell(t, row, "duplicate_side_effects") + " twice"
		bars = append(bars, bar{Label: tool, Value: v, Tip: tool + ": " + v, Class: "c-fail", N: float64(u + s)})
	}
	return hbars("unsafe", "Unsafe repeats per tool", "unsafe repeats and side effects done twice, of tools neither read-only nor idempotent", bars, nil)
}

func streamEndChart(t *Table) *svgChart {
	if t == nil {
		return nil
	}
	var bars []bar
	for _, row := range t.Rows {
		e := strOf(row[col(t, "stream_end")])
		v := cell(t, row, "streams") + " (" + cell(t, row, "incomplete") + " incomplete)"
		class := "c-ok"
		if intOf(row[col(t, "incomplete")]) > 0 {
			class = "c-fail"
		}
		bars = append(bars, bar{Label: e, Value: v, Tip: e + ": " + v, Class: class, N: float64(intOf(row[col(t, "streams")]))})
	}
	return hbars("stream-ends", "Event streams by how they ended", "", bars, []legendEntry{{"c-ok", "all complete"}, {"c-fail", "some incomplete"}})
}

// maxSequence bounds the exchanges the sequence diagram draws (the table
// lists all).
const maxSequence = 300

// sequenceChart draws a session's timeline as a sequence diagram: a
// client and a server lane, each attempt a request arrow and its HTTP
// status back, the final one with the outcome, and an arc from each
// repeat to the row it repeats.
func sequenceChart(t *Table) *svgChart {
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	const cx, sx, attH, gap, top = 260.0, 700.0, 46.0, 8.0, 44.0
	rows := t.Rows
	note := "each attempt: the request (→) and its HTTP status (←); the final answer with the outcome; arcs on the left: a repeat and the row it repeats"
	if len(rows) > maxSequence {
		rows = rows[:maxSequence]
		note += fmt.Sprintf("; the first %d of %d exchanges (the table lists all)", maxSequence, len(t.Rows))
	}
	c := &svgChart{ID: "sequence", Title: "Sequence diagram", Note: note, W: 1000, Legend: outcomeLegend}
	c.text("lane", cx, 20, "middle", "client")
	c.text("lane", sx, 20, "middle", "server")
	at := map[string]float64{} // #N -> y of its first request
	y := top
	type link struct {
		from, to float64
		unsafe   bool
		label    string
	}
	var links []link
	for _, row := range rows {
		n := cell(t, row, "n")
		statuses := strings.Fields(strOf(row[col(t, "http_statuses")]))
		atts := max(len(statuses), int(intOf(row[col(t, "posts")])), 1)
		outcome := strOf(row[col(t, "outcome")])
		what := strOf(row[col(t, "method")])
		if tool := strOf(row[col(t, "tool")]); tool != "" {
			what += " " + tool
		}
		if id := strOf(row[col(t, "jsonrpc_id")]); id != "" {
			what += " id=" + id
		}
		started := ""
		if tm, ok := row[col(t, "started_at")].(time.Time); ok {
			started = tm.Format("15:04:05.000")
		}
		c.text("rowlabel", 10, y+4, "start", "#"+n+" "+started)
		at["#"+n] = y
		for a := 0; a < atts; a++ {
			label := what
			if atts > 1 {
				label += fmt.Sprintf(" (attempt %d of %d)", a+1, atts)
			}
			c.line("msg req", cx, y, sx, y, "#"+n+" "+label)
			c.text("msgtext", (cx+sx)/2, y-4, "middle", oneLine(label))
			st := "no status logged"
			if a < len(statuses) {
				st = "HTTP " + statuses[a]
				if statuses[a] == "0" {
					st = "no response"
				}
			}
			class := "msg resp"
			if a == atts-1 {
				st += " · " + outcome + " (" + strOf(row[col(t, "layer")]) + ")"
				if ms := cell(t, row, "latency_ms"); ms != "-" {
					st += " · " + ms + " ms"
				}
				class += " " + outcomeClass(outcome)
			} else {
				class += " c-fail"
			}
			c.line(class, sx, y+14, cx, y+14, "#"+n+" "+st)
			c.text("msgtext", (cx+sx)/2, y+28, "middle", oneLine(st))
			y += attH
		}
		if fl := strOf(row[col(t, "flags")]); fl != "" || row[col(t, "reason")] != nil {
			txt := fl
			if r := strOf(row[col(t, "reason")]); r != "" {
				txt = strings.TrimSpace(txt + " — " + r)
			}
			c.text("flags", sx+12, y-attH+18, "start", oneLine(txt))
		}
		if of := strOf(row[col(t, "repeats")]); strings.HasPrefix(of, "#") {
			links = append(links, link{to: y - attH*float64(atts), label: of, unsafe: strings.Contains(strOf(row[col(t, "flags")]), "unsafe_retry")})
			links[len(links)-1].from = -1
			if fy, ok := at[of]; ok {
				links[len(links)-1].from = fy
			}
		}
		y += gap
	}
	c.line("lifeline", cx, 28, cx, y, "")
	c.line("lifeline", sx, 28, sx, y, "")
	for i, l := range links {
		if l.from < 0 {
			continue
		}
		xo := cx - 30 - float64(i%4)*12
		class := "retry"
		if l.unsafe {
			class += " unsafe"
		}
		c.path(class, fmt.Sprintf("M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", cx, l.from, xo-40, l.from, xo-40, l.to, cx, l.to),
			"repeats "+l.label)
		c.text("retrytext", xo-44, (l.from+l.to)/2+4, "end", "↻ "+l.label)
	}
	c.H = y + 10
	return c
}
