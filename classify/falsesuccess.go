package classify

// The false-success rule: an exchange whose final HTTP attempt got a 2xx,
// the status that says "it worked" to anything watching HTTP alone, yet
// whose outcome is a failure. It is the one rule ingest's summary and
// analyze's reports count with (analyze turns FalseSuccessClasses into SQL).
//
// Only a failure counts. INPUT_REQUIRED and CANCELLED after a 2xx are the
// normal interaction flow (the server asks for input; the client gave up),
// not failures; UNKNOWN says the evidence is missing, not that the call
// failed. Exchanges with no HTTP attempt (stdio, a log that kept no
// statuses) have no 2xx and are never false successes.

// False-success classes: how a 2xx exchange failed.
const (
	FalseJSONRPCError  = "jsonrpc_error"  // JSONRPC_ERROR: the body was a JSON-RPC error
	FalseToolError     = "tool_error"     // TOOL_ERROR: the tool said isError
	FalseInvalidResult = "invalid_result" // the body was not a valid response or result
	FalseIncomplete    = "incomplete"     // the stream (or body) ended without the response
)

// FalseSuccessClasses maps every outcome that is a false success after a
// 2xx to its class. An outcome not in the map is never a false success.
var FalseSuccessClasses = map[string]string{
	JSONRPCError:      FalseJSONRPCError,
	ToolError:         FalseToolError,
	MalformedJSON:     FalseInvalidResult,
	InvalidEnvelope:   FalseInvalidResult,
	InvalidToolResult: FalseInvalidResult,
	InvalidResult:     FalseInvalidResult,
	StreamIncomplete:  FalseIncomplete,
	NoResponse:        FalseIncomplete, // a 202 and no response on any stream, or a 2xx whose body was cut
}

// FalseSuccessOrder lists the classes in the order reports show them.
var FalseSuccessOrder = []string{FalseJSONRPCError, FalseToolError, FalseInvalidResult, FalseIncomplete}

// Is2xx reports whether an HTTP status is a success status.
func Is2xx(status int32) bool { return status >= 200 && status <= 299 }

// FalseSuccess returns the false-success class of an exchange whose final
// attempt got finalStatus (0: none), or "" when it is not a false success.
func FalseSuccess(finalStatus int32, outcome string) string {
	if !Is2xx(finalStatus) {
		return ""
	}
	return FalseSuccessClasses[outcome]
}

// FinalStatus returns the last of an exchange's HTTP statuses, or 0 when it
// has none.
func FinalStatus(statuses []int32) int32 {
	if len(statuses) == 0 {
		return 0
	}
	return statuses[len(statuses)-1]
}

// IsFailure reports whether an outcome is a failure: a transport or
// protocol outcome, or TOOL_ERROR. Successes, the interaction outcomes
// (INPUT_REQUIRED, CANCELLED) and UNKNOWN are not.
func IsFailure(outcome string) bool {
	switch LayerOf(outcome) {
	case LayerTransport, LayerProtocol:
		return true
	}
	return outcome == ToolError
}
