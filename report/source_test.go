package report

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"mcptrace/classify"
)

// The SQL form of the false-success rule gives classify.FalseSuccess's
// answer for every outcome and final status, null statuses included.
func TestFalseSuccessSQL(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, o := range append(classify.Outcomes, "SOMETHING_NEW") {
		for _, st := range []int32{0, 100, 199, 200, 202, 204, 299, 300, 404, 503, -1} {
			final := fmt.Sprint(st)
			if st == -1 {
				final = "NULL"
			}
			var got sql.NullString
			q := "SELECT " + falseSuccessSQL(final) + " FROM (SELECT " + quote(o) + " AS outcome)"
			if err := db.QueryRow(q).Scan(&got); err != nil {
				t.Fatal(err)
			}
			want := ""
			if st != -1 {
				want = classify.FalseSuccess(st, o)
			}
			if got.String != want || got.Valid != (want != "") {
				t.Errorf("outcome %s, status %s: SQL says %v, classify %q", o, final, got, want)
			}
		}
	}
}

// Filter values are quoted: a quote in a value matches it literally.
func TestFilterQuoting(t *testing.T) {
	f := Filter{Tools: []string{"it's"}, Clients: []string{"a'b@1'2"}, Since: time.Date(2026, 10, 17, 1, 2, 3, 4000, time.UTC)}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	q := `SELECT count(*) FROM (SELECT 'it''s' AS tool_name, NULL AS method, NULL AS outcome, NULL AS session_id,
		'a''b' AS client_name, '1''2' AS client_version, TIMESTAMPTZ '2026-10-17 01:02:03.000004+00' AS started_at) WHERE ` + f.where()
	if err := db.QueryRow(q).Scan(&n); err != nil || n != 1 {
		t.Errorf("n = %d, err %v\n%s", n, err, q)
	}
	f.Since = f.Since.Add(time.Microsecond)
	q = `SELECT count(*) FROM (SELECT 'it''s' AS tool_name, 'a''b' AS client_name, '1''2' AS client_version,
		TIMESTAMPTZ '2026-10-17 01:02:03.000004+00' AS started_at) WHERE ` + f.where()
	if err := db.QueryRow(q).Scan(&n); err != nil || n != 0 {
		t.Errorf("after since: n = %d, err %v", n, err)
	}
}

// Partitions outside [since, until) are skipped, files outside partitions
// kept.
func TestPrune(t *testing.T) {
	files := []tableFile{{"a", "2026-10-16"}, {"b", "2026-10-17"}, {"c", "2026-10-18"}, {"d", ""}, {"e", "1970-01-01"}}
	got := prune(files, time.Date(2026, 10, 17, 23, 0, 0, 0, time.UTC), time.Date(2026, 10, 18, 0, 0, 0, 0, time.UTC))
	var names []string
	for _, f := range got {
		names = append(names, f.path)
	}
	if fmt.Sprint(names) != "[b d]" {
		t.Errorf("pruned to %v, want [b d]", names)
	}
	if len(prune(files, time.Time{}, time.Time{})) != len(files) {
		t.Error("no filter pruned files")
	}
}
