package redact

import (
	"fmt"
	"os"
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
	Origin  string // "default" or the file it was read from
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
	return p
}

type policyFile struct {
	Fields map[string]string `yaml:"fields"`
}

// LoadPolicy reads a YAML policy file:
//
//	fields:
//	  exchanges.session_id: pseudonymize
//	  exchanges.error_message: truncate(200)
//
// Fields the file does not name are dropped; a field or action it names
// that does not exist is an error.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redaction policy %s cannot be read: %w", path, err)
	}
	var f policyFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("redaction policy %s is not valid: %w", path, err)
	}
	known := map[string]bool{}
	for _, fd := range Fields {
		known[fd.Name] = true
	}
	p := &Policy{actions: map[string]Action{}, Origin: path}
	for name, s := range f.Fields {
		if !known[name] {
			return nil, fmt.Errorf("redaction policy %s names unknown field %q (run ingest -print-policy for the list)", path, name)
		}
		a, err := ParseAction(s)
		if err != nil {
			return nil, fmt.Errorf("redaction policy %s, field %s: %w", path, name, err)
		}
		p.actions[name] = a
	}
	return p, nil
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
	return p
}
