package decode

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// Raw stdio transcripts: newline-delimited JSON, one frame per line with its
// direction. Two shapes are read:
//
//   - mcpsnoop's per-session JSONL (~/.local/state/mcpsnoop/sessions/<id>.jsonl):
//     {session_id, server_label, seq, ts, direction: c2s|s2c|stderr|meta,
//     transport: stdio|http, raw|text, mcp_method, mcp_name,
//     mcp_protocol_version, status, auth_challenge, truncated, conn_id}. raw is
//     the JSON-RPC frame embedded as JSON; text holds a frame that was not
//     JSON (and stderr lines); a frame cut at mcpsnoop's size cap is in text
//     with truncated: true.
//   - a generic shape {"ts", "direction", "message"|"frame"|"raw"|"text"},
//     where the frame is embedded JSON or a string holding it.
//
// Directions (case and spaces ignored): c2s, client->server,
// client-to-server, client_to_server, to-server, server<-client,
// editor->server are client to server; s2c, server->client,
// server-to-client, server_to_client, to-client, client<-server,
// server->editor are server to client; stderr is the server's stderr; meta
// (mcpsnoop's session header) is skipped. Relative directions are read from
// the client's viewpoint unless the line says "viewpoint":"server": out,
// outgoing, outbound, send, sent, tx are client to server; in, incoming,
// inbound, recv, receive, received, rx are server to client.
//
// Each line is one stdio observation (Side client, or server when the line
// states that viewpoint; transport stdio unless the line says http or sse).
// A frame that is not JSON is still an observation: its message is
// MsgInvalidJSON and the correlator judges it (stdout pollution). Only a line
// that is not a JSON object, or has no direction (or one not listed), or no
// frame at all, is quarantined. HTTP frames (mcpsnoop http) are read as
// frames too: their status and auth_challenge are not turned into HTTP
// attempts.

func init() {
	register(FormatStdioJSONL, 50, sniffStdioJSONL, decodeStdioJSONL)
}

// sniffStdioJSONL: one of the first five lines is a JSON object with
// "direction" and a frame key (a transcript may open with a session "meta"
// line that has neither), every one of them is a JSON object, and none is a
// wire log line.
func sniffStdioJSONL(head []byte) bool {
	found, ok, n := false, true, 0
	headLines(head, func(l []byte) bool {
		if l = bytes.TrimSpace(l); len(l) == 0 {
			return true
		}
		n++
		keys := jscanKeys(l)
		if l[0] != '{' || keys["mcptrace"] {
			ok = false
			return false
		}
		if keys["direction"] && (keys["raw"] || keys["text"] || keys["message"] || keys["frame"]) {
			found = true
		}
		return n < 5
	})
	return ok && found
}

func decodeStdioJSONL(source string, r io.Reader, e Emitter) error {
	return eachRecordLine(source, r, e, func(pos schema.Position, line []byte) { sjlLine(pos, line, e) })
}

func sjlLine(pos schema.Position, line []byte, e Emitter) {
	switch {
	case !utf8.Valid(line):
		e.Quarantine(pos, ReasonInvalidUTF8, "line is not valid UTF-8", line)
		return
	case depthExceeds(line, MaxDepth()):
		e.Quarantine(pos, ReasonTooDeep, depthDetail("JSON"), line)
		return
	case !validJSON(line):
		e.Quarantine(pos, ReasonNotJSON, "not valid JSON (a transcript line is one JSON object)", line)
		return
	}
	v := gjson.ParseBytes(line)
	if !v.IsObject() {
		e.Quarantine(pos, ReasonNotObject, fmt.Sprintf("a transcript line is a JSON object, found a %s", jscanKind(v)), line)
		return
	}
	var f struct {
		dir, ts, transport, session, conn, label, version, viewpoint, truncated gjson.Result
		frames                                                                  [4]gjson.Result // raw, message, frame, text
	}
	v.ForEach(func(k, x gjson.Result) bool {
		switch k.Str {
		case "direction":
			f.dir = x
		case "ts", "timestamp", "time":
			if !f.ts.Exists() {
				f.ts = x
			}
		case "transport":
			f.transport = x
		case "session_id", "sessionId":
			f.session = x
		case "conn_id", "connection":
			f.conn = x
		case "server_label", "server":
			if x.Type == gjson.String {
				f.label = x
			}
		case "mcp_protocol_version", "protocol_version":
			f.version = x
		case "viewpoint":
			f.viewpoint = x
		case "truncated":
			f.truncated = x
		case "raw":
			f.frames[0] = x
		case "message":
			f.frames[1] = x
		case "frame":
			f.frames[2] = x
		case "text":
			f.frames[3] = x
		}
		return true
	})
	if f.dir.Type != gjson.String || strings.TrimSpace(f.dir.Str) == "" {
		e.Quarantine(pos, ReasonMissingField, `no "direction" (c2s, s2c, in/out, send/recv, ...)`, line)
		return
	}
	serverView := strings.EqualFold(f.viewpoint.String(), "server")
	dir, ok := sjlDirection(f.dir.Str, serverView)
	if !ok {
		e.Quarantine(pos, ReasonBadValue, fmt.Sprintf(`"direction" %q is not one mcptrace knows (c2s, s2c, in/out, send/recv, stderr)`, clipStr(f.dir.Str)), line)
		return
	}
	if dir == "meta" {
		e.Skip(pos, "session_meta")
		return
	}
	t, lerr := sjlTime(f.ts)
	if lerr != nil {
		e.Quarantine(pos, lerr.Reason, lerr.Detail, line)
		return
	}
	var frame gjson.Result
	for _, x := range f.frames {
		if x.Exists() && x.Type != gjson.Null {
			frame = x
			break
		}
	}
	if !frame.Exists() && dir != schema.DirStderr {
		e.Quarantine(pos, ReasonMissingField, `no frame: a line needs "raw", "text", "message" or "frame"`, line)
		return
	}
	o := &schema.Observation{
		Pos:             pos,
		Format:          string(FormatStdioJSONL),
		Side:            schema.SideClient,
		Transport:       schema.TransportStdio,
		Time:            t,
		Stdio:           dir,
		SessionID:       f.session.String(),
		Connection:      f.conn.String(),
		ServerName:      f.label.String(),
		ProtocolVersion: f.version.String(),
	}
	if serverView {
		o.Side = schema.SideServer
	}
	switch strings.ToLower(f.transport.String()) {
	case "http", "streamable-http", "streamable_http":
		o.Transport = schema.TransportStreamableHTTP
	case "sse", "http+sse":
		o.Transport = schema.TransportHTTPSSE
	}
	if dir != schema.DirStderr {
		body := []byte(frame.Raw)
		if frame.Type == gjson.String {
			body = []byte(frame.Str)
		}
		o.Messages = AppendMessages(o.Messages, body, schema.InStdio, 0)
		if f.truncated.Type == gjson.True && len(o.Messages) == 1 && o.Messages[0].Kind == schema.MsgInvalidJSON {
			o.Messages[0] = TruncatedMessage(bytes.TrimSpace(body), schema.InStdio, 0)
		}
		stampAt(o.Messages, o.Time)
		if dir == schema.DirClientToServer && len(o.Messages) == 1 && o.Messages[0].Method == "initialize" {
			ci := gjson.GetBytes(o.Messages[0].Raw, "params.clientInfo")
			o.ClientName, o.ClientVersion = ci.Get("name").String(), ci.Get("version").String()
		}
	}
	e.Observation(o)
}

// sjlDirections maps a direction, lower-cased and without spaces, to c2s,
// s2c, stderr or meta; "out" and "in" are relative to the viewpoint.
var sjlDirections = func() map[string]string {
	m := map[string]string{"stderr": schema.DirStderr, "meta": "meta"}
	for dir, names := range map[string][]string{
		schema.DirClientToServer: {"c2s", "client->server", "client-to-server", "client_to_server", "clienttoserver",
			"client2server", "to-server", "to_server", "server<-client", "editor->server"},
		schema.DirServerToClient: {"s2c", "server->client", "server-to-client", "server_to_client", "servertoclient",
			"server2client", "to-client", "to_client", "client<-server", "server->editor"},
		"out": {"out", "outgoing", "outbound", "send", "sent", "tx"},
		"in":  {"in", "incoming", "inbound", "recv", "receive", "received", "rx"},
	} {
		for _, n := range names {
			m[n] = dir
		}
	}
	return m
}()

func sjlDirection(s string, serverView bool) (string, bool) {
	d, ok := sjlDirections[strings.ToLower(strings.Join(strings.Fields(s), ""))]
	switch {
	case !ok:
		return "", false
	case d == "out" && serverView, d == "in" && !serverView:
		return schema.DirServerToClient, true
	case d == "out", d == "in":
		return schema.DirClientToServer, true
	}
	return d, true
}

// sjlTime reads "ts": an RFC 3339 string, or a Unix time number in seconds,
// milliseconds, microseconds or nanoseconds (told apart by size). A line
// without one has no time.
func sjlTime(v gjson.Result) (time.Time, *LineError) {
	switch v.Type {
	case gjson.String:
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v.Str))
		if err != nil {
			return time.Time{}, lineErr(ReasonBadValue, `"ts" is not an RFC 3339 time: %q`, clipStr(v.Str))
		}
		return t.UTC(), nil
	case gjson.Number:
		x := v.Float()
		switch {
		case x <= 0 || math.IsInf(x, 0) || math.IsNaN(x):
			return time.Time{}, lineErr(ReasonBadValue, `"ts" must be a positive Unix time`)
		case x >= 1e17:
			return time.Unix(0, v.Int()).UTC(), nil
		case x >= 1e14:
			return time.UnixMicro(v.Int()).UTC(), nil
		case x >= 1e11:
			return time.UnixMilli(v.Int()).UTC(), nil
		}
		sec, frac := math.Modf(x)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC().Round(time.Microsecond), nil
	case gjson.Null:
		return time.Time{}, nil
	}
	if v.Exists() {
		return time.Time{}, lineErr(ReasonBadValue, `"ts" must be a time string or a Unix time number`)
	}
	return time.Time{}, nil
}
