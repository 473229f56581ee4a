package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Formats Render writes.
var Formats = []string{"text", "json", "csv", "markdown", "html"}

// Meta is what every rendering states about the data it covers.
type Meta struct {
	Dataset  string   `json:"dataset"`
	Files    int      `json:"files"`
	AllFiles int      `json:"all_files"`
	Filters  []string `json:"filters"`
	Warnings []string `json:"warnings"`
}

// Render writes reports in format: "text" (aligned tables), "json" (one
// object: meta, then reports by name, tables by name, rows as objects with
// rates as fractions), "csv" (one block per table, each row led by the
// table's report.table name, blocks separated by an empty line),
// "markdown", or "html" (one self-contained page: the tables, and SVG
// charts drawn from them; see html.go).
func Render(w io.Writer, format string, m Meta, reports []*Report) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "text":
		renderText(bw, m, reports)
	case "markdown":
		renderMarkdown(bw, m, reports)
	case "json":
		err = renderJSON(bw, m, reports)
	case "csv":
		err = renderCSV(bw, reports)
	case "html":
		err = renderHTML(bw, m, reports)
	default:
		return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// cellText is a cell as text and Markdown show it.
func cellText(c Column, v any) string {
	if v == nil {
		return "-"
	}
	switch c.Kind {
	case Rate:
		return strconv.FormatFloat(100*v.(float64), 'f', 1, 64) + "%"
	case MS:
		return strconv.FormatFloat(v.(float64), 'f', 1, 64)
	case Time:
		return v.(time.Time).Format("2006-01-02T15:04:05.000Z")
	case Int:
		return strconv.FormatInt(v.(int64), 10)
	}
	return v.(string)
}

// cellRaw is a cell as CSV writes it: rates as fractions, null empty.
func cellRaw(c Column, v any) string {
	if v == nil {
		return ""
	}
	switch c.Kind {
	case Rate, MS:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	case Time:
		return v.(time.Time).Format(time.RFC3339Nano)
	case Int:
		return strconv.FormatInt(v.(int64), 10)
	}
	return v.(string)
}

func head(c Column) string {
	if c.Head != "" {
		return c.Head
	}
	return c.Name
}

func metaLines(m Meta) []string {
	s := fmt.Sprintf("dataset %s: %d of %d exchanges files read", m.Dataset, m.Files, m.AllFiles)
	if len(m.Filters) > 0 {
		s += "; filters: " + strings.Join(m.Filters, " ")
	}
	out := []string{s}
	for _, w := range m.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}

func renderText(w *bufio.Writer, m Meta, reports []*Report) {
	for _, l := range metaLines(m) {
		fmt.Fprintln(w, l)
	}
	for _, r := range reports {
		fmt.Fprintf(w, "\n== %s ==\n", r.Title)
		for _, t := range r.Tables {
			fmt.Fprintf(w, "\n%s\n", t.Title)
			if t.Note != "" {
				fmt.Fprintf(w, "(%s)\n", t.Note)
			}
			if t.Vertical {
				wd := 0
				for _, c := range t.Cols {
					wd = max(wd, utf8.RuneCountInString(head(c)))
				}
				for _, row := range t.Rows {
					for i, c := range t.Cols {
						fmt.Fprintf(w, "  %s%s  %s\n", head(c), strings.Repeat(" ", wd-utf8.RuneCountInString(head(c))), cellText(c, row[i]))
					}
				}
				continue
			}
			if len(t.Rows) == 0 {
				fmt.Fprintln(w, "  (none)")
				continue
			}
			cells := [][]string{make([]string, len(t.Cols))}
			for i, c := range t.Cols {
				cells[0][i] = head(c)
			}
			for _, row := range t.Rows {
				line := make([]string, len(t.Cols))
				for i, c := range t.Cols {
					line[i] = oneLine(cellText(c, row[i]))
				}
				cells = append(cells, line)
			}
			widths := make([]int, len(t.Cols))
			for _, line := range cells {
				for i, s := range line {
					widths[i] = max(widths[i], utf8.RuneCountInString(s))
				}
			}
			for _, line := range cells {
				var b strings.Builder
				b.WriteString(" ")
				for i, s := range line {
					pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
					b.WriteString(" ")
					if t.Cols[i].Kind == Text {
						b.WriteString(s + pad)
					} else {
						b.WriteString(pad + s)
					}
				}
				fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
			}
		}
	}
}

// oneLine keeps a cell on one line and at most 80 characters wide.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:79]) + "…"
	}
	return s
}

func renderMarkdown(w *bufio.Writer, m Meta, reports []*Report) {
	for _, l := range metaLines(m) {
		fmt.Fprintf(w, "%s  \n", mdEscape(l))
	}
	for _, r := range reports {
		fmt.Fprintf(w, "\n## %s\n", r.Title)
		for _, t := range r.Tables {
			fmt.Fprintf(w, "\n### %s\n\n", t.Title)
			if t.Note != "" {
				fmt.Fprintf(w, "%s\n\n", mdEscape(t.Note))
			}
			if t.Vertical {
				fmt.Fprintln(w, "| figure | value |\n| --- | ---: |")
				for _, row := range t.Rows {
					for i, c := range t.Cols {
						fmt.Fprintf(w, "| %s | %s |\n", mdEscape(head(c)), mdEscape(cellText(c, row[i])))
					}
				}
				continue
			}
			var hd, al []string
			for _, c := range t.Cols {
				hd = append(hd, mdEscape(head(c)))
				if c.Kind == Text {
					al = append(al, "---")
				} else {
					al = append(al, "---:")
				}
			}
			fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(hd, " | "), strings.Join(al, " | "))
			for _, row := range t.Rows {
				var cs []string
				for i, c := range t.Cols {
					cs = append(cs, mdEscape(oneLine(cellText(c, row[i]))))
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(cs, " | "))
			}
		}
	}
}

var mdReplacer = strings.NewReplacer("|", `\|`, "\\", `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// orderedObject is a JSON object whose keys keep their order.
type orderedObject struct {
	keys []string
	vals []any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func jsonRow(t *Table, row []any) orderedObject {
	o := orderedObject{}
	for i, c := range t.Cols {
		v := row[i]
		if tm, ok := v.(time.Time); ok {
			v = tm.Format(time.RFC3339Nano)
		}
		o.keys = append(o.keys, c.Name)
		o.vals = append(o.vals, v)
	}
	return o
}

func renderJSON(w *bufio.Writer, m Meta, reports []*Report) error {
	if m.Filters == nil {
		m.Filters = []string{}
	}
	if m.Warnings == nil {
		m.Warnings = []string{}
	}
	reps := orderedObject{}
	for _, r := range reports {
		tabs := orderedObject{}
		for _, t := range r.Tables {
			var v any
			if t.Vertical && len(t.Rows) == 1 {
				v = jsonRow(t, t.Rows[0])
			} else {
				rows := make([]orderedObject, 0, len(t.Rows))
				for _, row := range t.Rows {
					rows = append(rows, jsonRow(t, row))
				}
				v = rows
			}
			tabs.keys = append(tabs.keys, t.Name)
			tabs.vals = append(tabs.vals, v)
		}
		reps.keys = append(reps.keys, r.Name)
		reps.vals = append(reps.vals, tabs)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(orderedObject{keys: []string{"meta", "reports"}, vals: []any{m, reps}})
}

func renderCSV(w *bufio.Writer, reports []*Report) error {
	cw := csv.NewWriter(w)
	first := true
	for _, r := range reports {
		for _, t := range r.Tables {
			if !first {
				cw.Flush()
				w.WriteString("\n")
			}
			first = false
			hd := []string{"table"}
			for _, c := range t.Cols {
				hd = append(hd, c.Name)
			}
			cw.Write(hd)
			for _, row := range t.Rows {
				line := []string{r.Name + "." + t.Name}
				for i, c := range t.Cols {
					line = append(line, cellRaw(c, row[i]))
				}
				cw.Write(line)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
