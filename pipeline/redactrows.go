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
	rd.Optional("exchanges.session_id", &e.SessionID)
	rd.Required("exchanges.source", &e.Source)
	rd.Optional("exchanges.client_name", &e.ClientName)
	rd.Optional("exchanges.client_version", &e.ClientVersion)
	rd.Optional("exchanges.server_name", &e.ServerName)
	rd.Optional("exchanges.server_version", &e.ServerVersion)
	rd.Required("exchanges.method", &e.Method)
	rd.Optional("exchanges.tool_name", &e.ToolName)
	rd.Optional("exchanges.jsonrpc_id", &e.JSONRPCID)
	if e.URL != nil && rd.Policy.Action("exchanges.url").Kind != redact.Keep {
		u := redact.SanitizeURL(*e.URL, rd.Pseud, rd.Stats)
		e.URL = &u
	}
	rd.Optional("exchanges.url", &e.URL)
	rd.Optional("exchanges.content_type", &e.ContentType)
	rd.Optional("exchanges.protocol_version", &e.ProtocolVersion)
	rd.Optional("exchanges.result_type", &e.ResultType)
	rd.Optional("exchanges.error_message", &e.ErrorMessage)
	rd.Optional("exchanges.error_data", &e.ErrorData)
	rd.Optional("exchanges.error_type", &e.ErrorType)
	rd.Optional("exchanges.tool_error_text", &e.ToolErrorText)
	rd.Required("exchanges.reason", &e.Reason)
	rd.Optional("exchanges.retry_after", &e.RetryAfter)
	rd.Optional("exchanges.scenario", &e.Scenario)
	if e.Arguments != nil {
		h := rd.Pseud.HashJSON(e.Arguments)
		e.ArgumentsHash = &h
		sh := redact.Shape(e.Arguments, rd.Stats)
		e.ArgumentsShape = &sh
		rd.Optional("exchanges.arguments_shape", &e.ArgumentsShape)
		e.Arguments = nil
	}
	return e
}
