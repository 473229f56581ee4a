package interop

import (
	"fmt"
	"sort"
	"strings"
)

// scenario is one interop case: a client SDK and a server SDK in one
// protocol era, a fault the proxy injects, the steps the application takes,
// and the rows ingest must write for it.
type scenario struct {
	name           string
	client, server sdk
	era            era
	// autoVersion lets the go-sdk client pick its version itself
	// (server/discover, then initialize when the server is not modern).
	autoVersion bool
	// noStandaloneGET turns the go-sdk client's standalone GET stream off
	// (mcp-go servers send a call's progress there when it is open).
	noStandaloneGET bool
	serverCfg       serverConfig
	capture         capture
	// fault describes what the proxy or the server does, for the README.
	fault string
	// rule makes the proxy's rule (nil: forward everything).
	rule func() rule
	// steps drives the SDK client, checks what every SDK call returned,
	// and returns the rows expected, in the order the requests were sent.
	steps func(h *harness) []row
}

// row is one expected exchange. Columns not named in cols take the defaults
// of defaults(); "" in cols means "not checked".
type row struct {
	method, tool string
	outcome      string
	cols         map[string]string
	// pending names the rule of issue 10 (implemented on another branch)
	// that sets a label checked here, when this branch lacks it.
	pending string
}

// layers is the README's vocabulary: each outcome's layer.
var layers = map[string]string{
	"TOOL_SUCCESS": "application", "TOOL_ERROR": "application", "SUCCESS": "application",
	"INPUT_REQUIRED": "interaction", "CANCELLED": "interaction",
	"JSONRPC_ERROR": "protocol", "MALFORMED_JSON": "protocol", "INVALID_ENVELOPE": "protocol", "INVALID_TOOL_RESULT": "protocol", "INVALID_RESULT": "protocol",
	"HTTP_ERROR": "transport", "STREAM_INCOMPLETE": "transport", "NO_RESPONSE": "transport",
	"UNKNOWN": "unknown",
}

// want returns every column this row checks, with its expected value.
func (r row) want(sc *scenario) map[string]string {
	w := map[string]string{
		"method":            r.method,
		"tool_name":         orNull(r.tool),
		"outcome":           r.outcome,
		"layer":             layers[r.outcome],
		"protocol_version":  string(sc.era),
		"post_count":        "1",
		"http_statuses":     "[200]",
		"error_code":        "null",
		"retry_origin":      "none",
		"cancelled":         "false",
		"late_response":     "false",
		"session_expired":   "false",
		"transport_failure": "null",
	}
	switch {
	case sc.capture.client() != "" && sc.capture.server():
		w["sides"] = "both"
		w["failed_hop"] = "none"
	case sc.capture.client() != "":
		w["sides"] = "client"
	default:
		w["sides"] = "server"
	}
	if sc.era == modern {
		w["session_id"] = "null"
	}
	for k, v := range r.cols {
		w[k] = v
	}
	if w["sides"] == "both" {
		// Unless the row says otherwise, the server saw what the client saw.
		for srv, cl := range map[string]string{"server_outcome": "outcome", "server_http_statuses": "http_statuses", "server_post_count": "post_count"} {
			if _, set := r.cols[srv]; !set {
				w[srv] = w[cl]
			}
		}
	}
	for k, v := range w {
		if v == "" {
			delete(w, k)
		}
	}
	return w
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// c builds a cols map from alternating names and values.
func c(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func (r row) String() string {
	keys := make([]string, 0, len(r.cols))
	for k := range r.cols {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.method, r.tool, r.outcome)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, r.cols[k])
	}
	return b.String()
}

// summary renders the row for the README: method, tool, outcome, then the
// labels the row sets beyond the defaults of every row (see README.md).
func (r row) summary(sc *scenario) string {
	var b strings.Builder
	b.WriteString("`" + r.method)
	if r.tool != "" {
		b.WriteString(" " + r.tool)
	}
	b.WriteString("` " + r.outcome)
	keys := make([]string, 0, len(r.cols))
	for k := range r.cols {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	clientOnly := r.cols["sides"] == "client"
	for _, k := range keys {
		v := r.cols[k]
		if v == "" || (clientOnly && strings.HasPrefix(k, "server_")) {
			continue
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	if r.pending != "" {
		var ns []string
		for _, p := range strings.Split(r.pending, ", ") {
			ns = append(ns, strings.SplitN(p, " (", 2)[0])
		}
		b.WriteString(" (" + strings.Join(ns, ", ") + ")")
	}
	return b.String()
}
