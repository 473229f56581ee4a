package redact

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Actions a policy can take on an output field.
const (
	Keep         = "keep"
	Pseudonymize = "pseudonymize"
	MaskAction   = "mask"
	Truncate     = "truncate" // mask, then cut to N characters: truncate(N)
	Drop         = "drop"
)

// Action is what a policy does to one field.
type Action struct {
	Kind string
	N    int // for truncate
}

func (a Action) String() string {
	if a.Kind == Truncate {
		return "truncate(" + strconv.Itoa(a.N) + ")"
	}
	return a.Kind
}

// ParseAction reads keep, pseudonymize, mask, drop or truncate(N).
func ParseAction(s string) (Action, error) {
	s = strings.TrimSpace(s)
	switch s {
	case Keep, Pseudonymize, MaskAction, Drop:
		return Action{Kind: s}, nil
	}
	if strings.HasPrefix(s, "truncate(") && strings.HasSuffix(s, ")") {
		n, err := strconv.Atoi(strings.TrimSpace(s[len("truncate(") : len(s)-1]))
		if err == nil && n > 0 {
			return Action{Kind: Truncate, N: n}, nil
		}
	}
	return Action{}, fmt.Errorf("unknown action %q: use keep, pseudonymize, mask, truncate(N) or drop", s)
}

// Fields lists every output field whose text can come from the input, with
// its default action. Other columns hold values mcptrace computes (outcomes,
// counts, times, hashes) and are always written. A policy that does not name
// a field drops it: the policy fails closed.
var Fields = []struct {
	Name    string
	Default string
	About   string
}{
	{"exchanges.session_id", Pseudonymize, "MCP session id"},
	{"exchanges.source", Keep, "input file path"},
	{"exchanges.client_name", MaskAction, "client name"},
	{"exchanges.client_version", MaskAction, "client version"},
	{"exchanges.server_name", MaskAction, "server name"},
	{"exchanges.server_version", MaskAction, "server version"},
	{"exchanges.method", MaskAction, "JSON-RPC method"},
	{"exchanges.tool_name", MaskAction, "tool or prompt name"},
	{"exchanges.jsonrpc_id", MaskAction, "JSON-RPC id"},
	{"exchanges.url", MaskAction, "request URL (query strings included)"},
	{"exchanges.content_type", MaskAction, "response media type"},
	{"exchanges.protocol_version", MaskAction, "MCP protocol version, as the log states it"},
	{"exchanges.result_type", MaskAction, "resultType, as the server sent it"},
	{"exchanges.error_message", MaskAction, "JSON-RPC error message"},
	{"exchanges.error_data", "truncate(512)", "JSON-RPC error data, as JSON text"},
	{"exchanges.error_type", MaskAction, "error type (a code, tool_error, or what a span reported)"},
	{"exchanges.tool_error_text", Drop, "text of a tool result with isError true"},
	{"exchanges.reason", MaskAction, "why the verdict (may quote the response)"},
	{"exchanges.retry_after", MaskAction, "Retry-After header"},
	{"exchanges.scenario", MaskAction, "server-side scenario name"},
	{"exchanges.arguments_shape", Keep, "tool argument names and value types, never values"},
	{"quarantine.source", Keep, "input file path"},
	{"quarantine.detail", "truncate(200)", "what was wrong with the record"},
	{"quarantine.excerpt", "truncate(160)", "the start of the record"},
}

// Policy maps output fields to actions.
type Policy struct {
	actions map[string]Action
	byField []Action // actions by Field, what indexed made of actions
	Origin  string   // "default" or the file it was read from
}

// Field is an output field by its place in Fields: a policy answers for it
// with an index into a slice, not a map lookup by name.
type Field int

// NoField is what FieldOf says of a name that is not in Fields: its action
// is drop, as for any field a policy does not name.
const NoField Field = -1

// FieldOf returns the Field named name, or NoField.
func FieldOf(name string) Field {
	for i, f := range Fields {
		if f.Name == name {
			return Field(i)
		}
	}
	return NoField
}

// indexed fills byField from actions, once the policy is complete.
func (p *Policy) indexed() *Policy {
	p.byField = make([]Action, len(Fields))
	for i, f := range Fields {
		p.byField[i] = p.Action(f.Name)
	}
	return p
}

// ActionOf is Action for a Field.
func (p *Policy) ActionOf(f Field) Action {
	if uint(f) < uint(len(p.byField)) {
		return p.byField[f]
	}
	if f >= 0 && int(f) < len(Fields) { // a Policy not made by this package's constructors
		return p.Action(Fields[f].Name)
	}
	return Action{Kind: Drop}
}

// DefaultPolicy is safe without configuration: session ids pseudonymized,
// free text masked, tool error text dropped.
func DefaultPolicy() *Policy {
	p := &Policy{actions: map[string]Action{}, Origin: "default"}
	for _, f := range Fields {
		a, err := ParseAction(f.Default)
		if err != nil {
			panic(err)
		}
		p.actions[f.Name] = a
	}
	return p.indexed()
}

// LoadPolicy reads a YAML policy file:
//
//	fields:
//	  exchanges.session_id: pseudonymize
//	  exchanges.error_message: truncate(200)
//
// Fields the file does not name are dropped; a field or action it names
// that does not exist is an error. An error names the file, the line and
// the field, never a value the file holds (someone may have pasted a secret
// into it): not the YAML parser's message, which quotes what it read.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redaction policy %s cannot be read: %w", path, err)
	}
	bad := func(line int, format string, args ...any) error {
		where := ""
		if line > 0 {
			where = ", line " + strconv.Itoa(line)
		}
		return fmt.Errorf("redaction policy %s%s: %s", path, where, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, bad(yamlErrorLine(err), "not valid YAML (run ingest -print-policy for a valid one)")
	}
	p := &Policy{actions: map[string]Action{}, Origin: path}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, bad(0, "the file is empty (run ingest -print-policy for a valid one)")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, bad(root.Line, "the file must be a mapping with the key fields")
	}
	known := map[string]bool{}
	for _, fd := range Fields {
		known[fd.Name] = true
	}
	seenFields := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value != "fields" {
			return nil, bad(k.Line, "unknown key %s: the only key is fields", nameOrNot(k))
		}
		if seenFields {
			return nil, bad(k.Line, "fields is given twice")
		}
		seenFields = true
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		if v.Kind != yaml.MappingNode {
			return nil, bad(v.Line, "fields must be a mapping of field names to actions")
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			if fk.Kind != yaml.ScalarNode || !known[fk.Value] {
				return nil, bad(fk.Line, "unknown field %s (run ingest -print-policy for the list)", nameOrNot(fk))
			}
			if _, dup := p.actions[fk.Value]; dup {
				return nil, bad(fk.Line, "field %s is given twice", fk.Value)
			}
			if fv.Kind != yaml.ScalarNode {
				return nil, bad(fv.Line, "field %s: the action must be one of keep, pseudonymize, mask, truncate(N) or drop", fk.Value)
			}
			a, err := ParseAction(fv.Value)
			if err != nil {
				return nil, bad(fv.Line, "field %s: the action is not one of keep, pseudonymize, mask, truncate(N) (N > 0) or drop", fk.Value)
			}
			p.actions[fk.Value] = a
		}
	}
	return p.indexed(), nil
}

// nameOrNot quotes a key only if it looks like a name (letters, digits,
// _ . -, at most 64): anything else might be a value pasted in the wrong
// place.
func nameOrNot(n *yaml.Node) string {
	v := n.Value
	if n.Kind != yaml.ScalarNode || v == "" || len(v) > 64 || Mask(v) != v {
		return "(not shown)"
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return "(not shown)"
		}
	}
	return strconv.Quote(v)
}

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// yamlErrorLine is the line a YAML error names, or 0; only the number is
// taken from the message.
func yamlErrorLine(err error) int {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return n
		}
	}
	return 0
}

// Action returns what the policy does to a field (drop when it does not
// name it).
func (p *Policy) Action(field string) Action {
	if a, ok := p.actions[field]; ok {
		return a
	}
	return Action{Kind: Drop}
}

// YAML renders the effective policy, every field named, with a comment
// saying what each holds.
func (p *Policy) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# mcptrace redaction policy (%s). Actions: keep, pseudonymize, mask, truncate(N), drop.\n", p.Origin)
	b.WriteString("# A field the policy does not name is dropped.\nfields:\n")
	names := make([]string, 0, len(Fields))
	about := map[string]string{}
	for _, f := range Fields {
		names = append(names, f.Name)
		about[f.Name] = f.About
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s: %s  # %s\n", n, p.Action(n), about[n])
	}
	return b.String()
}

// Redactor applies a policy with a pseudonymizer and counts what the
// detectors replaced. It is safe for concurrent use.
type Redactor struct {
	Policy *Policy
	Pseud  *Pseudonymizer
	Stats  *Stats

	mu   sync.Mutex
	free []*Worker // idle workers (Worker, Release)
}

// Text applies the policy to one text value. The second result is false when
// the field is dropped.
func (r *Redactor) Text(field, v string) (string, bool) {
	w := r.Worker()
	s, ok := w.Text(field, v)
	w.Release()
	return s, ok
}

// Optional applies the policy to an optional text column in place; a dropped
// field becomes null.
func (r *Redactor) Optional(field string, v **string) {
	w := r.Worker()
	w.Optional(field, v)
	w.Release()
}

// Required applies the policy to a text column that cannot be null; a dropped
// field becomes empty.
func (r *Redactor) Required(field string, v *string) {
	w := r.Worker()
	w.Required(field, v)
	w.Release()
}

// NoRedaction keeps every field as it is. It exists to measure what
// redaction costs (bench/baselines.sh); ingest never uses it.
func NoRedaction() *Policy {
	p := &Policy{actions: map[string]Action{}, Origin: "no redaction (measurement only)"}
	for _, f := range Fields {
		p.actions[f.Name] = Action{Kind: Keep}
	}
	return p.indexed()
}
