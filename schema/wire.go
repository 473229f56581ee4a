package schema

// WireFormat is the value of the "mcptrace" key that marks a line of the
// mcptrace wire log, version 1. See schema/README.md and
// schema/wirelog.schema.json.
const WireFormat = "wire/1"

// Side says which end of the traffic wrote a log.
type Side string

const (
	SideClient Side = "client"
	SideServer Side = "server"
)

// Transport names an MCP transport.
type Transport string

const (
	TransportStreamableHTTP Transport = "streamable-http"
	TransportHTTPSSE        Transport = "http+sse"
	TransportStdio          Transport = "stdio"
)

// Failure kinds: an HTTP request that got no response.
const (
	FailureConnectionRefused = "connection_refused"
	FailureReset             = "reset"
	FailureTimeout           = "timeout"
	FailureClientAbort       = "client_abort"
	// FailurePending is not a wire-log value: decoders of exported captures
	// (HAR) use it for a request that had no response yet when the capture
	// was written. Its outcome is UNKNOWN.
	FailurePending = "pending"
)

// Stream ends: how a text/event-stream response body ended.
const (
	StreamComplete     = "complete"
	StreamReset        = "reset"
	StreamTimeout      = "timeout"
	StreamClientClosed = "client_closed"
)

// Stdio directions.
const (
	DirClientToServer = "c2s"
	DirServerToClient = "s2c"
	DirStderr         = "stderr"
)

// Triggers: what made a logger send a request.
const (
	TriggerSDK         = "sdk"
	TriggerApplication = "application"
	TriggerManual      = "manual"
)

// WireRecord is one line of the mcptrace wire log: one HTTP transaction or one
// stdio frame, as seen by one side. The JSON names are the contract; the Go
// type exists for writers (tests, sample generators, loggers written in Go).
// The decoder in package decode reads lines with its own one-pass scanner
// (gjson for the rare line out of the ordinary) rather than
// encoding/json, and keeps "absent" apart from "empty" where it matters
// (a response body that was not recorded is not an empty body).
type WireRecord struct {
	Format          string            `json:"mcptrace"`
	Time            string            `json:"ts"`
	EndTime         string            `json:"end_ts,omitempty"`
	Side            Side              `json:"side"`
	Transport       Transport         `json:"transport"`
	Client          *Implementation   `json:"client,omitempty"`
	Server          *Implementation   `json:"server,omitempty"`
	Connection      string            `json:"connection,omitempty"`
	SessionID       string            `json:"session_id,omitempty"`
	ProtocolVersion string            `json:"protocol_version,omitempty"`
	HTTP            *WireHTTP         `json:"http,omitempty"`
	Stdio           *WireStdio        `json:"stdio,omitempty"`
	Trigger         string            `json:"trigger,omitempty"`
	Scenario        string            `json:"scenario,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
}

// Implementation is a client's or server's name and version.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// WireHTTP is one HTTP transaction: a request and either a response or a
// failure.
type WireHTTP struct {
	Request  WireRequest   `json:"request"`
	Response *WireResponse `json:"response,omitempty"`
	Failure  *WireFailure  `json:"failure,omitempty"`
}

// WireRequest is the HTTP request. Header values are a string or, for a
// repeated header, an array of strings; names are case-insensitive.
type WireRequest struct {
	Method  string         `json:"method"`
	URL     string         `json:"url"`
	Headers map[string]any `json:"headers,omitempty"`
	Body    *string        `json:"body,omitempty"`
}

// WireResponse is the HTTP response. Body is the body text as received; for a
// text/event-stream response it is the raw stream text, and StreamEnd says how
// the stream ended. A nil Body means the logger did not record the body.
type WireResponse struct {
	Status      int            `json:"status"`
	Headers     map[string]any `json:"headers,omitempty"`
	ContentType string         `json:"content_type,omitempty"`
	Body        *string        `json:"body,omitempty"`
	StreamEnd   string         `json:"stream_end,omitempty"`
	// EventTimes says when each dispatched event of a text/event-stream
	// body arrived (RFC 3339; nil for unknown), in order. Optional.
	EventTimes []*string `json:"event_times,omitempty"`
}

// WireFailure replaces a response when none came.
type WireFailure struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// WireStdio is one stdio frame.
type WireStdio struct {
	Direction string `json:"direction"`
	Line      string `json:"line"`
}
