package gentab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptrace/schema"
)

func TestReplaceBlock(t *testing.T) {
	doc := "intro\n<!-- t:begin -->\nold\n<!-- t:end -->\nafter\n"
	got, err := ReplaceBlock(doc, "t", "| a |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n<!-- t:begin -->\n| a |\n<!-- t:end -->\nafter\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"no markers", "<!-- t:end -->\n<!-- t:begin -->\n", "<!-- t:begin -->\n"} {
		if _, err := ReplaceBlock(bad, "t", "x"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestFillREADMELeavesItWhenAMarkerIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	doc := "<!-- a:begin -->\n<!-- a:end -->\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := FillREADME(path, Block{"a", "A\n"}, Block{"b", "B\n"}); err == nil {
		t.Fatal("no error for the missing block b")
	}
	if b, _ := os.ReadFile(path); string(b) != doc {
		t.Errorf("README changed: %q", b)
	}
	if err := FillREADME(path, Block{"a", "A\n"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "<!-- a:begin -->\nA\n<!-- a:end -->\n" {
		t.Errorf("README: %q", b)
	}
}

func TestTables(t *testing.T) {
	e := ExpectationsTable([]Expectation{
		{File: "x/c.ndjson", Line: 3, Side: "client", Method: "tools/call", ID: "7", Outcome: "HTTP_ERROR",
			Layer: Layer("HTTP_ERROR"), Posts: 2, Statuses: Statuses([]int{503, 200})},
		{File: "x/c.ndjson", Line: 4, Side: "server", Method: "ping", ID: `"a"`, Outcome: "SUCCESS",
			Layer: Layer("SUCCESS"), Posts: 0, Statuses: Statuses(nil), Origin: "client"},
	})
	rows := strings.Split(strings.TrimSuffix(e, "\n"), "\n")
	if len(rows) != 4 || strings.Count(rows[0], "|") != 11 ||
		rows[2] != "| x/c.ndjson | 3 | client | tools/call | 7 | HTTP_ERROR | transport | 2 | [503,200] | none |" ||
		rows[3] != `| x/c.ndjson | 4 | server | ping | "a" | SUCCESS | application | 0 | [] | client |` {
		t.Errorf("expectations table:\n%s", e)
	}
	c := ColumnsTable([]Columns{{File: "f", Line: 1, Method: "m", ID: "1", Cols: [][2]string{{"a", "null"}, {"b", "true"}}}})
	if c != "| file | line | method | id | column | value |\n| --- | --- | --- | --- | --- | --- |\n"+
		"| f | 1 | m | 1 | a | null |\n| f | 1 | m | 1 | b | true |\n" {
		t.Errorf("columns table:\n%s", c)
	}
	if Layer("NOT_AN_OUTCOME") != "" {
		t.Error("an unknown outcome has a layer")
	}
}

func TestJSONAndWire(t *testing.T) {
	if got := string(Obj("b", "<x>", "a", Arr(1, "y"))); got != `{"b":"<x>","a":[1,"y"]}` {
		t.Errorf("Obj: %s", got)
	}
	body := "<b>"
	line := Wire(schema.WireRecord{Side: schema.SideClient, HTTP: &schema.WireHTTP{Request: schema.WireRequest{Method: "POST", Body: &body}}})
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["mcptrace"] != schema.WireFormat {
		t.Errorf("Wire: %s (%v)", line, err)
	}
	if !strings.Contains(line, `\u003cb\u003e`) {
		t.Errorf("Wire is not HTML escaped as encoding/json is: %s", line)
	}
	if got := string(NDJSON([]string{"a", "b"})); got != "a\nb\n" {
		t.Errorf("NDJSON: %q", got)
	}
}
