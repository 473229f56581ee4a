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

// redactInPlace is RedactExchangeWith on the row where it is: a row is
// 840 bytes, and redactRows would copy each one in and out.
func redactInPlace(e *schema.Exchange, w *redact.Worker) {
	w.Optional("exchanges.session_id", &e.SessionID)
	w.Required("exchanges.source", &e.Source)
	w.Optional("exchanges.client_name", &e.ClientName)
	w.Optional("exchanges.client_version", &e.ClientVersion)
	w.Optional("exchanges.server_name", &e.ServerName)
	w.Optional("exchanges.server_version", &e.ServerVersion)
	w.Required("exchanges.method", &e.Method)
	w.Optional("exchanges.tool_name", &e.ToolName)
	w.Optional("exchanges.jsonrpc_id", &e.JSONRPCID)
	w.URL("exchanges.url", &e.URL)
	w.Optional("exchanges.content_type", &e.ContentType)
	w.Optional("exchanges.protocol_version", &e.ProtocolVersion)
	w.Optional("exchanges.result_type", &e.ResultType)
	w.Optional("exchanges.error_message", &e.ErrorMessage)
	w.Optional("exchanges.error_data", &e.ErrorData)
	w.Optional("exchanges.error_type", &e.ErrorType)
	w.Optional("exchanges.tool_error_text", &e.ToolErrorText)
	w.Required("exchanges.reason", &e.Reason)
	w.Optional("exchanges.retry_after", &e.RetryAfter)
	w.Optional("exchanges.scenario", &e.Scenario)
	if e.Arguments != nil {
		h, sh := w.Arguments(e.Arguments)
		e.ArgumentsHash, e.ArgumentsShape = w.Str(h), w.Str(sh)
		w.Optional("exchanges.arguments_shape", &e.ArgumentsShape)
		e.Arguments = nil
	}
}
