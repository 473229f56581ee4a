package schema

// JSONKind is the JSON type of a value as the decoder read it.
type JSONKind uint8

const (
	JSONAbsent JSONKind = iota // no such member
	JSONNull
	JSONFalse
	JSONTrue
	JSONNumber
	JSONString
	JSONObject
	JSONArray
)

// Exists reports whether the member was there.
func (k JSONKind) Exists() bool { return k != JSONAbsent }

// RPC is what the decoder read from one JSON-RPC message in the single parse
// that made the Message (decode.AppendMessages and the wire decoder): the
// fields classify judges and the correlator links, learns and diagnoses on.
// Stages after the decoder read these instead of parsing Raw again.
//
// A message the decoder does not read this way has RPC nil, and readers
// parse Raw as they always did: a notification other than
// notifications/cancelled (nothing reads one but its count), a value that
// is not a JSON object, a body
// that is not JSON, a frame the log cut short, a message built by hand, and
// a message in which a member the readers use is repeated or has an escaped
// name (readers differ on which of two members counts, first or last, and
// comparing escaped names takes unescaping: the rare message is left to the
// general path rather than copied here with every rule). So every member
// below is unique where it is read, and "the first" and "the last" member
// of that name are the same.
//
// Strings share the memory of Raw (or of the decoder's owned copy of the
// body): a reader that keeps one beyond the message clones it. "As text" is
// what gjson's Result.String gives: a string's value, a number or literal as
// written ("true", "false"; "" for null), an object or array as raw JSON.
type RPC struct {
	JSONRPC20 bool     // "jsonrpc" is the string "2.0"
	Result    JSONKind // the kind of "result"
	Error     JSONKind // the kind of "error"
	Params    JSONKind // the kind of "params"

	// The members of "error", "result" and "params", each read when that
	// member is an object. None is nil: one that is absent or not an
	// object points at a zero value shared by every message (NoRPCError,
	// NoRPCResult, NoRPCParams), so that a message, which is a request or
	// a response, holds only the part it has. Readers never write
	// through them.
	Err *RPCError
	Res *RPCResult
	Req *RPCParams
}

// The shared zero parts of an RPC (see RPC.Err): read-only.
var (
	NoRPCError  = new(RPCError)
	NoRPCResult = new(RPCResult)
	NoRPCParams = new(RPCParams)
)

// RPCError is the members of a JSON-RPC error object.
type RPCError struct {
	Code JSONKind
	// CodeInt is code read as an integer the way gjson's Result.Int reads
	// any value (a number truncated, a string parsed, true is 1, else 0).
	CodeInt int64
	// CodeInteger: code is a number with an integral value that fits an
	// int64 (1.0 and 1e3 are integers, 1.5 is not).
	CodeInteger bool
	Message     JSONKind
	MessageText string // message as text
	Data        string // raw JSON of data, "" when absent
}

// Result members whose kind RPCResult.Kinds records.
const (
	ResResultType = iota
	ResInputRequests
	ResRequestState
	ResContent
	ResIsError
	ResStructuredContent
	ResProtocolVersion
	ResCapabilities
	ResServerInfo
	ResTools
	ResResources
	ResResourceTemplates
	ResContents
	ResPrompts
	ResMessages
	ResCompletion
	ResSupportedVersions
	ResRoots
	ResRole
	ResAction
	NumResultMembers
)

// ResultMembers names the members of RPCResult.Kinds, by index.
var ResultMembers = [NumResultMembers]string{"resultType", "inputRequests", "requestState", "content", "isError",
	"structuredContent", "protocolVersion", "capabilities", "serverInfo", "tools", "resources", "resourceTemplates",
	"contents", "prompts", "messages", "completion", "supportedVersions", "roots", "role", "action"}

// ResultMember returns the index of a result member in RPCResult.Kinds, or
// -1 when its kind is not recorded.
func ResultMember(name string) int {
	for i, n := range ResultMembers {
		if n == name {
			return i
		}
	}
	return -1
}

// RPCResult is the members of a JSON-RPC result object.
type RPCResult struct {
	Kinds           [NumResultMembers]JSONKind
	ResultType      string // resultType's value, when a string
	RequestState    string // requestState as text
	ProtocolVersion string // protocolVersion as text
	// ServerInfo is serverInfo's name and version as text, when it is an
	// object.
	ServerInfo Implementation
	// StructuredContent is the raw JSON of structuredContent, "" when
	// absent.
	StructuredContent string
	// Tools are the objects of a tools array (a tools/list result) that
	// have a name, in order.
	Tools []ToolInfo
	// TextBlocks counts the elements of a content array that are objects
	// whose type is "text"; Texts holds the raw JSON string literals of the
	// first two blocks' text. TextsPlain: every block's text is a string
	// (else a reader wanting them all parses Raw); FirstText: the first
	// block's text is a string (Texts[0]).
	TextBlocks int
	Texts      [2]string
	TextsPlain bool
	FirstText  bool
}

// ToolInfo is one tool of a tools/list result: its name as text, and its
// annotations' readOnlyHint and idempotentHint read as booleans the way
// gjson's Result.Bool reads them.
type ToolInfo struct {
	Name                 string
	ReadOnly, Idempotent bool
}

// RPCParams is the members of a request's or notification's params object.
type RPCParams struct {
	Name      JSONKind
	NameText  string // name's value, when a string
	Arguments string // raw JSON of arguments, "" when absent
	// InputResponses and RequestState are an MRTR continuation's members.
	InputResponses   bool
	RequestState     JSONKind
	RequestStateText string // as text
	// MetaProtocolVersion is _meta["io.modelcontextprotocol/protocolVersion"]
	// as text.
	MetaProtocolVersion string
	// ClientInfo is clientInfo (initialize); MetaClientInfo is
	// _meta["io.modelcontextprotocol/clientInfo"] (2026-07-28 requests).
	ClientInfo, MetaClientInfo ImplInfo
	// RequestID is requestId (notifications/cancelled) when it is a string
	// or a number, its Type IDAbsent otherwise.
	RequestID ID
}

// ImplInfo is a clientInfo or serverInfo member: whether it is an object,
// and its name and version as text.
type ImplInfo struct {
	Object        bool
	Name, Version string
}
