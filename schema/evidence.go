package schema

import "time"

// Position is where a record sits in its source: a file and line, or (for a
// stream) a topic, partition and offset written into Source and Line.
type Position struct {
	Source string // file path as given, or topic/partition
	Line   int64  // 1-based line number, or offset
	// ID is the canonical identity of the source (the dataset's key: a
	// resolved path, a stream's fingerprint, a topic partition), set by
	// the pipeline. Exchange ids derive from it, so they do not depend on
	// how a path was spelled.
	ID string
	// Sub numbers the records of one line that holds several, from 1 (the
	// spans of an OTLP document in one Kafka message, whose line is the
	// message's offset); 0 otherwise. Exchange ids include it when set.
	Sub int32
}

// IDType is the JSON type of a JSON-RPC id. Ids are compared type-sensitively:
// 1 and "1" are different ids.
type IDType uint8

const (
	IDAbsent IDType = iota
	IDNull
	IDNumber
	IDString
	IDOther // an object, array or boolean: never a valid id
)

func (t IDType) String() string {
	switch t {
	case IDNull:
		return "null"
	case IDNumber:
		return "number"
	case IDString:
		return "string"
	case IDOther:
		return "invalid"
	}
	return ""
}

// ID is a JSON-RPC id: its type and its text (the number as written, or the
// string's value).
type ID struct {
	Type IDType
	Text string
}

// Valid reports whether the id is a string or a number.
func (id ID) Valid() bool { return id.Type == IDNumber || id.Type == IDString }

// MsgKind is what a JSON value found on the wire is, as JSON-RPC.
type MsgKind uint8

const (
	MsgInvalidJSON  MsgKind = iota // not parseable JSON
	MsgRequest                     // has method and id
	MsgNotification                // has method, no id
	MsgResponse                    // has result or error, no method
	MsgOther                       // parseable JSON that is none of the above
)

// Where says in which part of an observation a message was found.
type Where uint8

const (
	InRequestBody   Where = iota // the body of an HTTP request
	InResponseBody               // an application/json (or other) response body
	InPostStream                 // an SSE event of a POST's response stream
	InGetStream                  // an SSE event of a standalone GET stream
	InResumedStream              // an SSE event of a GET with Last-Event-ID
	InStdio                      // a stdio frame
	InRecord                     // a record that already pairs request and response (Inspector history)
)

func (w Where) String() string {
	return [...]string{"request_body", "response_body", "post_stream", "get_stream", "resumed_stream", "stdio", "record"}[w]
}

// Message is one JSON-RPC message (or something that should have been one)
// found in an observation, parsed once by the decoder.
type Message struct {
	Where      Where
	Event      int // SSE event number (1-based) for stream messages
	BatchIndex int // index inside an array body, -1 when not in a batch
	Kind       MsgKind
	ID         ID
	Method     string
	Raw        []byte // the message's own JSON text (owned, not shared)
	ParamsHash uint64 // hash of method and params, for requests
	CallHash   uint64 // hash of method, target and arguments, for requests (see decode.callHash)
	// RPC is what the decoder read from the message in the parse that made
	// it, so that no later stage parses Raw again; nil when it could not
	// (see RPC), and readers then parse Raw.
	RPC *RPC
	// Folded counts the notifications of the same event stream that
	// followed this one and were folded into it rather than kept (a
	// decoder that folds says so; decode.WireDecoder.Fold): nothing reads
	// a notification but its count, except notifications/cancelled, which
	// is never folded. A message stands for 1 + Folded notifications.
	Folded int
	// Truncated: the log cut the message short (Claude Desktop's
	// "[N chars truncated]"). Kind, ID and Method were recovered by a
	// tolerant scan of Raw, which is not valid JSON; classify recovers an
	// error code or isError from Raw when they survive, and nothing more.
	Truncated bool
	// At is when the message was sent (request-side messages, stdio frames)
	// or arrived (response bodies and stream events), as the log states it;
	// zero when the log does not say. Decoders fill it from the log's own
	// timing (a wire log's event_times, a HAR entry's _eventSourceMessages,
	// the end of the record for the last event of a POST's stream); the
	// correlator orders a cancellation and a response by it.
	At time.Time
}

// InBatch reports whether the message came from a JSON array body.
func (m *Message) InBatch() bool { return m.BatchIndex >= 0 }

// Observation is one HTTP transaction or one stdio frame from one side, in the
// same form whatever the log format it came from.
type Observation struct {
	Pos Position
	// Seq is the observation's place in the run's input order (set by the
	// pipeline, increasing, starting at 1): the order key that makes output
	// independent of how work was spread over goroutines, and the position
	// acknowledgements and low-water marks are expressed in.
	Seq int64
	// Watermark is the newest event time (EndOrStart) of the observation's
	// log (side, format, source) before it in input order, stamped by the
	// pipeline's sequencer (correlate.Clock.Stamp); zero when unstamped.
	// Lateness is judged on it, so it does not depend on which correlator
	// the observation lands on.
	Watermark       time.Time
	Side            Side
	Transport       Transport
	Time            time.Time
	EndTime         time.Time // zero when unknown
	ClientName      string
	ClientVersion   string
	ServerName      string
	ServerVersion   string
	Connection      string
	SessionID       string
	ProtocolVersion string // as logged, or from the MCP-Protocol-Version header
	Trigger         string
	Scenario        string
	Format          string // the log format it was decoded from (decode.Format)

	HTTP  *HTTPEvidence // nil for stdio
	Stdio string        // stdio direction (c2s, s2c, stderr) when HTTP is nil

	Messages []Message // request-side messages first, then response-side

	// Paired: the log already paired a request with its response (MCP
	// Inspector history, OTLP spans). Messages then hold the request (Where
	// InRecord, Kind MsgRequest) and, when the log kept it, the response
	// (Where InRecord); Reported holds what the log says instead of bodies.
	Paired   bool
	Reported *Reported
}

// Reported is what an already-correlated log (an OTLP span or log record,
// an Inspector entry) states about an exchange, used when bodies are
// missing. Empty fields mean the log does not say.
type Reported struct {
	Method     string
	ToolName   string
	ID         ID
	ErrorType  string // OpenTelemetry error.type: a JSON-RPC code as text, "tool_error", ...
	StatusCode string // rpc.response.status_code: the JSON-RPC code as text
	Message    string // status description or error message, if any
	HTTPStatus int    // 0 when unknown
	OK         bool   // the log states the exchange completed (span status OK/UNSET with an end)
	Failed     bool   // the log states it failed (span status ERROR) without saying how
}

// HTTPEvidence is what is known of one HTTP transaction, without its bodies
// (the bodies live on as Messages).
type HTTPEvidence struct {
	Method         string
	URL            string
	LastEventID    string // the request's Last-Event-ID header: a resumed stream
	RequestHasBody bool
	Responded      bool // a status was received
	Status         int
	ContentType    string // media type only, lower case
	BodyRecorded   bool   // the response body was recorded (possibly empty)
	BodyEmpty      bool   // the recorded body was empty
	SSE            bool   // a text/event-stream response
	SSEEvents      int    // dispatched events with data
	StreamEnd      string // how an SSE body ended
	// Failure is the failure kind when no response came; with Responded,
	// why a body that is not an event stream did not arrive whole (a HAR
	// entry with a status and an _error). A cut stream says so in StreamEnd.
	Failure        string
	FailureMessage string
	RetryAfter     string // the response's Retry-After header
	RespSessionID  string // Mcp-Session-Id set by the response
	// StreamLastEventID is the last SSE event id the response stream gave
	// the client (what it resumes from with Last-Event-ID); "" when none.
	StreamLastEventID string
}

// EndOrStart returns EndTime, or Time when the end is unknown.
func (o *Observation) EndOrStart() time.Time {
	if o.EndTime.IsZero() {
		return o.Time
	}
	return o.EndTime
}
