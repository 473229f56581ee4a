package pipeline

import (
	"mcptrace/redact"
	"mcptrace/schema"
)

// RedactExchange applies the redaction policy to one row, before anything
// is written: every text field that can carry input is kept, pseudonymized,
// masked, truncated or dropped as the policy says; tool arguments become a
// keyed hash and, if the policy keeps it, their shape; the arguments
// themselves are never written.
func RedactExchange(e schema.Exchange, rd *redact.Redactor) schema.Exchange {
	w := rd.Worker()
	e = RedactExchangeWith(e, w)
	w.Release()
	return e
}

// RedactExchangeWith is RedactExchange on the buffers and memos of one
// goroutine's worker (the rows of a log repeat their names, URLs and session
// ids): what it writes is the same.
func RedactExchangeWith(e schema.Exchange, w *redact.Worker) schema.Exchange {
	redactInPlace(&e, w)
	return e
}

// The exchange fields by index: the policy answers for each with a slice
// index, not a map lookup by name, 21 times a row.
var (
	fSessionID       = mustField("exchanges.session_id")
	fSource          = mustField("exchanges.source")
	fClientName      = mustField("exchanges.client_name")
	fClientVersion   = mustField("exchanges.client_version")
	fServerName      = mustField("exchanges.server_name")
	fServerVersion   = mustField("exchanges.server_version")
	fMethod          = mustField("exchanges.method")
	fToolName        = mustField("exchanges.tool_name")
	fJSONRPCID       = mustField("exchanges.jsonrpc_id")
	fURL             = mustField("exchanges.url")
	fContentType     = mustField("exchanges.content_type")
	fProtocolVersion = mustField("exchanges.protocol_version")
	fResultType      = mustField("exchanges.result_type")
	fErrorMessage    = mustField("exchanges.error_message")
	fErrorData       = mustField("exchanges.error_data")
	fErrorType       = mustField("exchanges.error_type")
	fToolErrorText   = mustField("exchanges.tool_error_text")
	fReason          = mustField("exchanges.reason")
	fRetryAfter      = mustField("exchanges.retry_after")
	fScenario        = mustField("exchanges.scenario")
	fArgumentsShape  = mustField("exchanges.arguments_shape")
)

func mustField(name string) redact.Field {
	f := redact.FieldOf(name)
	if f == redact.NoField {
		panic("redact.Fields has no " + name)
	}
	return f
}

// redactInPlace is RedactExchangeWith on the row where it is: a row is
// 840 bytes, and redactRows would copy each one in and out.
func redactInPlace(e *schema.Exchange, w *redact.Worker) {
	w.OptionalField(fSessionID, &e.SessionID)
	w.RequiredField(fSource, &e.Source)
	w.OptionalField(fClientName, &e.ClientName)
	w.OptionalField(fClientVersion, &e.ClientVersion)
	w.OptionalField(fServerName, &e.ServerName)
	w.OptionalField(fServerVersion, &e.ServerVersion)
	w.RequiredField(fMethod, &e.Method)
	w.OptionalField(fToolName, &e.ToolName)
	w.OptionalField(fJSONRPCID, &e.JSONRPCID)
	w.URLField(fURL, &e.URL)
	w.OptionalField(fContentType, &e.ContentType)
	w.OptionalField(fProtocolVersion, &e.ProtocolVersion)
	w.OptionalField(fResultType, &e.ResultType)
	w.OptionalField(fErrorMessage, &e.ErrorMessage)
	w.OptionalField(fErrorData, &e.ErrorData)
	w.OptionalField(fErrorType, &e.ErrorType)
	w.OptionalField(fToolErrorText, &e.ToolErrorText)
	w.RequiredField(fReason, &e.Reason)
	w.OptionalField(fRetryAfter, &e.RetryAfter)
	w.OptionalField(fScenario, &e.Scenario)
	if e.Arguments != nil {
		h, sh := w.Arguments(e.Arguments)
		e.ArgumentsHash, e.ArgumentsShape = w.Str(h), w.Str(sh)
		w.OptionalField(fArgumentsShape, &e.ArgumentsShape)
		e.Arguments = nil
	}
}
