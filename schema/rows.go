package schema

import "time"

// Exchange is one row of the exchanges table: one JSON-RPC request, every
// attempt that carried it, its response and how it was judged. Column names
// are a contract with users' queries; see README.md "Output columns".
// Optional (nullable) columns are pointers: null means the evidence does not
// say, never a guessed value.
//
// Encodings: a string column whose values repeat (names, versions, media
// types, and also session_id, jsonrpc_id, reason, error_message, url and
// arguments_shape) is dictionary-encoded ("dict"): the pages then hold
// small indexes, and zstd and the page bounds work on far fewer bytes
// (with dataset's writer options, ingest of a 100 MB wire log ran 3.7%
// fewer instructions in all, and the file of the 1 GiB log is 10% smaller).
// Columns that seldom repeat a value (exchange_id, arguments_hash,
// retry_of, duplicate_of) stay plain: a dictionary would only add an insert
// for every value. A dictionary that outgrows 1 MiB in a row group falls
// back to plain pages (parquet-go); until then it costs heap: a row group
// of 65,536 rows whose session_id, jsonrpc_id, reason and error_message
// are all distinct held about 35 MiB more writer heap than plain columns.
type Exchange struct {
	ExchangeID      string    `parquet:"exchange_id"`
	Source          string    `parquet:"source,dict"`
	SourceLine      int64     `parquet:"source_line"`
	Sides           string    `parquet:"sides,dict"`
	Initiator       string    `parquet:"initiator,dict"`
	StartedAt       time.Time `parquet:"started_at,timestamp(microsecond:utc)"`
	EndedAt         time.Time `parquet:"ended_at,timestamp(microsecond:utc)"`
	LatencyMS       *float64  `parquet:"latency_ms,optional"`
	Transport       string    `parquet:"transport,dict"`
	ProtocolVersion *string   `parquet:"protocol_version,optional,dict"`
	SessionID       *string   `parquet:"session_id,optional,dict"`
	ClientName      *string   `parquet:"client_name,optional,dict"`
	ClientVersion   *string   `parquet:"client_version,optional,dict"`
	ServerName      *string   `parquet:"server_name,optional,dict"`
	ServerVersion   *string   `parquet:"server_version,optional,dict"`
	Method          string    `parquet:"method,dict"`
	ToolName        *string   `parquet:"tool_name,optional,dict"`
	JSONRPCID       *string   `parquet:"jsonrpc_id,optional,dict"`
	JSONRPCIDType   *string   `parquet:"jsonrpc_id_type,optional,dict"`
	PostCount       int32     `parquet:"post_count"`
	HTTPStatuses    []int32   `parquet:"http_statuses,list"`
	ContentType     *string   `parquet:"content_type,optional,dict"`
	SSEEvents       *int32    `parquet:"sse_events,optional"`
	StreamComplete  *bool     `parquet:"stream_complete,optional"`
	StreamEnd       *string   `parquet:"stream_end,optional,dict"`
	TransportFail   *string   `parquet:"transport_failure,optional,dict"`
	ResponseWhere   *string   `parquet:"response_where,optional,dict"`
	Outcome         string    `parquet:"outcome,dict"`
	Layer           string    `parquet:"layer,dict"`
	Reason          string    `parquet:"reason,dict"`
	ErrorCode       *int64    `parquet:"error_code,optional"`
	ErrorMessage    *string   `parquet:"error_message,optional,dict"`
	ErrorData       *string   `parquet:"error_data,optional"`
	ToolErrorText   *string   `parquet:"tool_error_text,optional"`
	URL             *string   `parquet:"url,optional,dict"`
	ArgumentsHash   *string   `parquet:"arguments_hash,optional"`
	ArgumentsShape  *string   `parquet:"arguments_shape,optional,dict"`
	ErrorType       *string   `parquet:"error_type,optional,dict"`
	ResultType      *string   `parquet:"result_type,optional,dict"`
	IsError         *bool     `parquet:"is_error,optional"`
	Cancelled       bool      `parquet:"cancelled"`
	Truncated       bool      `parquet:"truncated"`
	Format          string    `parquet:"format,dict"`
	RetryOrigin     string    `parquet:"retry_origin,dict"`
	RetryOf         *string   `parquet:"retry_of,optional"`
	RetryAdvice     string    `parquet:"retry_advice,dict"`
	RetryAfter      *string   `parquet:"retry_after,optional"`
	RetryBasis      *string   `parquet:"retry_basis,optional,dict"`
	DuplicateOf     *string   `parquet:"duplicate_of,optional"`
	RetryUnsafe     bool      `parquet:"retry_unsafe"`
	RetryAfterS     *float64  `parquet:"retry_after_s,optional"`
	RetryAfterOK    *bool     `parquet:"retry_after_respected,optional"`
	SessionExpired  bool      `parquet:"session_expired"`
	Reinitialized   *bool     `parquet:"reinitialized,optional"`
	LateResponse    bool      `parquet:"late_response"`
	Late            bool      `parquet:"late"`
	Continues       *string   `parquet:"continues,optional"`
	MRTRRound       *int32    `parquet:"mrtr_round,optional"`
	ChainOutcome    *string   `parquet:"chain_outcome,optional,dict"`
	Scenario        *string   `parquet:"scenario,optional,dict"`
	// HoldCut: the conversation was still active when -max-hold closed it
	// (a Kafka consumer bounds how far an open conversation holds its
	// partition's commit back); its later records form a new conversation.
	HoldCut bool `parquet:"hold_cut"`

	// Diagnosis (classify and correlate docs state each rule).
	// ErrorKind: what kind of failure, comparable across SDKs and versions
	// (validation, unknown_tool, auth, rate_limit, timeout, ...); null on
	// success.
	ErrorKind *string `parquet:"error_kind,optional,dict"`
	// RPCStatusCode: OpenTelemetry rpc.response.status_code, the JSON-RPC
	// error code as text; null when the response carried no error code.
	RPCStatusCode *string `parquet:"rpc_response_status_code,optional,dict"`
	// ServerError: the server side counts the exchange as its error
	// (OpenTelemetry mcp.server.status.attributes: error.type is set and is
	// not one of the caller's mistakes -32700, -32600, -32601, -32602,
	// -32002).
	ServerError bool `parquet:"server_error"`
	// SuspectHiddenError: a TOOL_SUCCESS whose content says the tool
	// failed; SuspectReason names the pattern (a fixed vocabulary, never
	// the text).
	SuspectHiddenError bool    `parquet:"suspect_hidden_error"`
	SuspectReason      *string `parquet:"suspect_reason,optional,dict"`
	// SessionStuck: sent on a session already answered 404 without
	// re-initialising, or answered for an unknown session with something
	// other than 404; SessionStuckReason says which.
	SessionStuck       bool    `parquet:"session_stuck"`
	SessionStuckReason *string `parquet:"session_stuck_reason,optional,dict"`
	// ResumeProblem: what went wrong resuming a cut stream
	// (no_last_event_id, not_replayed); null when nothing did.
	ResumeProblem *string `parquet:"resume_problem,optional,dict"`
	// DuplicateSideEffect: a tool that is neither read-only nor idempotent
	// ran (or may have run) more than once for one logical call.
	DuplicateSideEffect bool `parquet:"duplicate_side_effect"`
	// IDConflict: the request reused the id of a request still open in the
	// same conversation.
	IDConflict bool `parquet:"id_conflict"`

	// Filled when client and server views are merged (sides "both").
	FailedHop       string   `parquet:"failed_hop,dict"`
	ClientPostCount *int32   `parquet:"client_post_count,optional"`
	ServerPostCount *int32   `parquet:"server_post_count,optional"`
	ServerOutcome   *string  `parquet:"server_outcome,optional,dict"`
	ServerStatuses  []int32  `parquet:"server_http_statuses,list"`
	ClockSkewMS     *float64 `parquet:"clock_skew_ms,optional"`

	// Not written: what the merge of client and server views matches on,
	// and the tool arguments as sent (redaction turns them into
	// arguments_hash and arguments_shape, then drops them).
	MatchHash uint64 `parquet:"-"`
	ConvKey   string `parquet:"-"`
	// ServerSource is the source of the server's row a merged row was made
	// from (Source is the client's): the pipeline files the row under both.
	ServerSource string `parquet:"-"`
	// ServerExchangeID and ServerLine are the server row's exchange_id and
	// source_line: a Kafka consumer records them in the server partition's
	// keys, so a replay of that partition alone does not write the server
	// row again beside the merged one.
	ServerExchangeID string `parquet:"-"`
	ServerLine       int64  `parquet:"-"`
	Arguments        []byte `parquet:"-"`
}

// Quarantine is one row of the quarantine table: an input record that could
// not be used, where it was, and why. Excerpt is short and masked.
type Quarantine struct {
	Source     string    `parquet:"source,dict"`
	Line       int64     `parquet:"line"`
	ObservedAt time.Time `parquet:"observed_at,timestamp(microsecond:utc)"`
	Reason     string    `parquet:"reason,dict"`
	Detail     string    `parquet:"detail"`
	Bytes      int64     `parquet:"bytes"`
	Excerpt    string    `parquet:"excerpt"`
}

// Str returns a pointer to s, or nil when s is empty: the usual way a
// decoder or correlator fills an optional text column.
func Str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
