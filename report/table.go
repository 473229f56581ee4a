package report

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Kind says how a column's values are typed and shown.
type Kind int

const (
	Text Kind = iota // string
	Int              // int64
	Rate             // float64 in [0, 1]; text shows a percentage
	MS               // float64 milliseconds
	Time             // time.Time, UTC
)

// Column is one column of a Table.
type Column struct {
	Name string // machine name: the JSON key and the CSV header
	Kind Kind
	// Head is the column's heading in text and Markdown ("" : Name).
	Head string
}

// Table is one table of a report. A nil cell is a null (no value: a rate
// with no denominator, a percentile of no latency).
type Table struct {
	Name  string // machine name, unique in its report: the JSON key
	Title string
	Note  string // one line shown under the title
	Cols  []Column
	Rows  [][]any
	// Vertical: a one-row table of figures, shown as name and value lines
	// (JSON: an object rather than an array of one).
	Vertical bool
	// Step is a table over time's bucket width (its first column holds
	// each bucket's start); 0 for other tables.
	Step time.Duration
}

// Report is one report: a name (overview, tools, clients) and its tables.
type Report struct {
	Name   string
	Title  string
	Tables []*Table
}

// Table returns the report's table called name, or nil.
func (r *Report) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// query runs q and returns its rows typed by cols (one result column per
// Column, in order).
func (d *Dataset) query(ctx context.Context, cols []Column, q string) ([][]any, error) {
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("query over %s: %w", d.Dir, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		dest := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i, c := range cols {
			switch c.Kind {
			case Text:
				dest[i] = new(sql.NullString)
			case Int:
				dest[i] = new(sql.NullInt64)
			case Rate, MS:
				dest[i] = new(sql.NullFloat64)
			case Time:
				dest[i] = new(sql.NullTime)
			}
			ptrs[i] = dest[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("query over %s: %w", d.Dir, err)
		}
		row := make([]any, len(cols))
		for i, v := range dest {
			switch v := v.(type) {
			case *sql.NullString:
				if v.Valid {
					row[i] = v.String
				}
			case *sql.NullInt64:
				if v.Valid {
					row[i] = v.Int64
				}
			case *sql.NullFloat64:
				if v.Valid {
					row[i] = v.Float64
				}
			case *sql.NullTime:
				if v.Valid {
					row[i] = v.Time.UTC()
				}
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query over %s: %w", d.Dir, err)
	}
	return out, nil
}

// table runs q into a new table.
func (d *Dataset) table(ctx context.Context, name, title, note string, cols []Column, q string) (*Table, error) {
	rows, err := d.query(ctx, cols, q)
	if err != nil {
		return nil, err
	}
	return &Table{Name: name, Title: title, Note: note, Cols: cols, Rows: rows}, nil
}

// limitSQL is a LIMIT clause for n rows (0: all).
func limitSQL(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" LIMIT %d", n)
}
