package interop

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"

	"mcptrace/schema"
)

// writeClientWire renders the proxy's transactions as a client-side mcptrace
// wire log: one line per transaction, in the order they ended (as a logger
// that writes each transaction when it completes does).
func writeClientWire(txns []*txn, connection, clientName string) []byte {
	sorted := append([]*txn(nil), txns...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].end.Before(sorted[j].end) })
	var out bytes.Buffer
	for _, x := range sorted {
		rec := schema.WireRecord{
			Format:     schema.WireFormat,
			Time:       stamp(x),
			EndTime:    x.end.UTC().Format("2006-01-02T15:04:05.000Z"),
			Side:       schema.SideClient,
			Transport:  schema.TransportStreamableHTTP,
			Client:     &schema.Implementation{Name: clientName},
			Connection: connection,
			SessionID:  x.reqHeader.Get("Mcp-Session-Id"),
			HTTP:       &schema.WireHTTP{Request: schema.WireRequest{Method: x.method, URL: x.url, Headers: wireHeaders(x.reqHeader)}},
		}
		if v := x.reqHeader.Get("Mcp-Protocol-Version"); v != "" {
			rec.ProtocolVersion = v
		}
		if rec.SessionID == "" && x.respHeader != nil {
			rec.SessionID = x.respHeader.Get("Mcp-Session-Id")
		}
		if x.reqBody != nil {
			s := string(x.reqBody)
			rec.HTTP.Request.Body = &s
		}
		if x.status == 0 {
			kind := x.failure
			if kind == "" {
				kind = schema.FailureReset
			}
			rec.HTTP.Failure = &schema.WireFailure{Kind: kind, Message: x.errText}
		} else {
			body := x.respBody.String()
			resp := &schema.WireResponse{Status: x.status, Headers: wireHeaders(x.respHeader), ContentType: x.respHeader.Get("Content-Type")}
			switch {
			case x.sse:
				resp.Body = &body
				resp.StreamEnd = x.streamEnd
			case x.errText == "":
				resp.Body = &body
			}
			// A JSON body that did not arrive whole is left out (not
			// received); the status did arrive (schema/README.md: a
			// connection lost after the status is a response).
			rec.HTTP.Response = resp
		}
		line, err := json.Marshal(rec)
		if err != nil {
			panic(err)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func stamp(x *txn) string { return x.start.UTC().Format("2006-01-02T15:04:05.000Z") }

func wireHeaders(h http.Header) map[string]any {
	if len(h) == 0 {
		return nil
	}
	out := map[string]any{}
	for k, vs := range h {
		if len(vs) == 1 {
			out[k] = vs[0]
		} else if len(vs) > 1 {
			out[k] = append([]string(nil), vs...)
		}
	}
	return out
}
