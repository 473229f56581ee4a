// Package gentab writes what the sample generators under samples/ produce:
// it finds the samples directory, renders JSON text and wire records as
// ndjson lines, and fills the hand-stated tables of a README between its
// <!-- name:begin --> and <!-- name:end --> markers. It judges nothing: the
// expectations it formats are stated by hand in each generator.
package gentab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mcptrace/schema"
)

// Fail prints err prefixed with "gen:" and exits with status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// Dir returns samples/ joined with elem, found next to the module's go.mod
// from the working directory upwards.
func Dir(elem ...string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir, "samples"}, elem...)...), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// JS marshals v compactly, without HTML escaping; it panics if v does not
// marshal (a generator bug).
func JS(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Obj builds a JSON object from key, value pairs, keeping the key order they
// are written in (as real SDKs' output does). Keys must be strings.
func Obj(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(JS(kv[i].(string)))
		b.WriteByte(':')
		b.WriteString(JS(kv[i+1]))
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

// Arr builds a JSON array.
func Arr(vs ...any) json.RawMessage {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = JS(v)
	}
	return json.RawMessage("[" + strings.Join(parts, ",") + "]")
}

// Stamp formats t as the wire log writes times: UTC, milliseconds, Z.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Wire marshals r as one wire log line (encoding/json, HTML escaped), with
// the wire marker set; it panics if r does not marshal (a generator bug).
func Wire(r schema.WireRecord) string {
	r.Format = schema.WireFormat
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// NDJSON joins lines, each ended by a newline.
func NDJSON(lines []string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Block is one generated table of a README: Table goes between the lines
// <!-- Name:begin --> and <!-- Name:end -->.
type Block struct{ Name, Table string }

// ReplaceBlock puts table between the lines <!-- name:begin --> and
// <!-- name:end --> of doc.
func ReplaceBlock(doc, name, table string) (string, error) {
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("README.md: markers %q and %q not found in order", strings.TrimSpace(begin), end)
	}
	return doc[:i+len(begin)] + table + doc[j:], nil
}

// FillREADME replaces every block of the README at path and writes it back;
// nothing is written when a block's markers are missing.
func FillREADME(path string, blocks ...Block) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := string(text)
	for _, block := range blocks {
		if out, err = ReplaceBlock(out, block.Name, block.Table); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// layers maps each outcome to its layer, as listed in classify/doc.go.
var layers = map[string]string{
	"TOOL_SUCCESS": "application", "TOOL_ERROR": "application", "SUCCESS": "application",
	"INPUT_REQUIRED": "interaction", "CANCELLED": "interaction",
	"JSONRPC_ERROR": "protocol", "MALFORMED_JSON": "protocol", "INVALID_ENVELOPE": "protocol",
	"INVALID_TOOL_RESULT": "protocol", "INVALID_RESULT": "protocol",
	"HTTP_ERROR": "transport", "STREAM_INCOMPLETE": "transport", "NO_RESPONSE": "transport",
	"UNKNOWN": "unknown",
}

// Layer is the layer of outcome, as listed in classify/doc.go ("" for an
// outcome it does not list).
func Layer(outcome string) string { return layers[outcome] }

// Statuses formats HTTP statuses as the expectations table states them:
// [200,404], [] for none.
func Statuses(st []int) string {
	s := make([]string, len(st))
	for i, v := range st {
		s[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// Expectation is one row of a 10-column expectations table, stated by hand.
type Expectation struct {
	File                             string // relative to samples/
	Line                             int
	Side, Method, ID, Outcome, Layer string // ID as JSON text
	Posts                            int
	Statuses                         string // as Statuses writes them
	Origin                           string // retry_origin; "" is written as none
}

// ExpectationsTable renders rows, in their order, as the expectations table
// cmd/ingest's TestSamplesMatchREADME reads.
func ExpectationsTable(rows []Expectation) string {
	var b strings.Builder
	b.WriteString("| file | line | side | method | id | outcome | layer | post_count | http_statuses | retry_origin |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, e := range rows {
		origin := e.Origin
		if origin == "" {
			origin = "none"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %d | %s | %s |\n",
			e.File, e.Line, e.Side, e.Method, e.ID, e.Outcome, e.Layer, e.Posts, e.Statuses, origin)
	}
	return b.String()
}

// Columns are the columns stated for one exchange: column name and value
// (DuckDB text of the column, "null" for null).
type Columns struct {
	File       string // relative to samples/
	Line       int
	Method, ID string
	Cols       [][2]string
}

// ColumnsTable renders rows, in their order, one line per column, as the
// columns table cmd/ingest's column tests read.
func ColumnsTable(rows []Columns) string {
	var b strings.Builder
	b.WriteString("| file | line | method | id | column | value |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, e := range rows {
		for _, c := range e.Cols {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", e.File, e.Line, e.Method, e.ID, c[0], c[1])
		}
	}
	return b.String()
}
