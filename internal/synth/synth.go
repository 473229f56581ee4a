// Package synth writes synthetic wire logs for benchmarks and tests that
// need volume: tools/call exchanges over many sessions with JSON and SSE
// responses, tool errors, JSON-RPC errors, 503s retried by the SDK and
// notifications. The traffic is ours, made up; it is not a capture.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// Options shape a log.
type Options struct {
	Exchanges int       // how many exchanges (stop at whichever of Exchanges or Bytes comes first; 0: no limit)
	Bytes     int64     // stop once this many bytes are written (0: no limit)
	Sessions  int       // sessions the exchanges are spread over (default 500)
	Days      int       // calendar days the log covers, in time order (default 1): one date partition each
	Start     time.Time // first timestamp (default 2026-10-17T10:00:00Z)
}

// Write writes the log to w and returns how many exchanges and bytes it
// wrote. Timestamps rise through the log; with Days > 1 the exchanges are
// spread evenly over that many days (the log must be bounded by Exchanges
// for an even spread; with Bytes alone, about 900 bytes an exchange is
// assumed).
func Write(w io.Writer, o Options) (exchanges int, written int64, err error) {
	if o.Sessions <= 0 {
		o.Sessions = 500
	}
	if o.Days <= 0 {
		o.Days = 1
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	}
	total := o.Exchanges
	if total <= 0 {
		total = int(o.Bytes / 900)
	}
	if total <= 0 {
		return 0, 0, fmt.Errorf("synth: set Exchanges or Bytes")
	}
	step := time.Duration(int64(o.Days) * int64(24*time.Hour) / int64(total))
	if o.Days == 1 {
		step = time.Millisecond
	}
	cw := &countWriter{w: bufio.NewWriterSize(w, 1<<20)}
	for i := 0; (o.Exchanges <= 0 || i < o.Exchanges) && (o.Bytes <= 0 || cw.n < o.Bytes); i++ {
		sess := fmt.Sprintf("sess-%04d", i%o.Sessions)
		id := i / o.Sessions
		at := o.Start.Add(time.Duration(i) * step)
		ts := at.Format("2006-01-02T15:04:05.000Z")
		end := at.Add(20 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		req := fmt.Sprintf(`{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"query\":\"quarterly report %d\",\"limit\":20}}}`, id, i)
		head := fmt.Sprintf(`{"mcptrace":"wire/1","ts":"%s","end_ts":"%s","side":"client","transport":"streamable-http","session_id":"%s","protocol_version":"2025-11-25","client":{"name":"bench-agent","version":"1.0.0"},"http":{"request":{"method":"POST","url":"https://mcp.example.com/mcp","headers":{"content-type":"application/json","accept":"application/json, text/event-stream","mcp-session-id":"%s","mcp-protocol-version":"2025-11-25"},"body":"%s"},`, ts, end, sess, sess, req)
		switch i % 10 {
		case 0: // a 503 retried by the SDK
			fmt.Fprintf(cw, "%s\"response\":{\"status\":503,\"headers\":{\"retry-after\":\"1\"},\"body\":\"\"}}}\n", head)
			fallthrough
		case 1, 2, 3, 4:
			fmt.Fprintf(cw, `%s"response":{"status":200,"content_type":"text/event-stream","stream_end":"complete","body":"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":50}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"12 documents found for quarterly report\"}],\"isError\":false}}\n\n"}}}`+"\n", head, id)
		case 5, 6:
			fmt.Fprintf(cw, `%s"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"upstream index unavailable\"}],\"isError\":true}}"}}}`+"\n", head, id)
		case 7:
			fmt.Fprintf(cw, `%s"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":-32602,\"message\":\"Invalid params: limit must be <= 10\"}}"}}}`+"\n", head, id)
		default:
			fmt.Fprintf(cw, `%s"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}"}}}`+"\n", head, id)
		}
		exchanges++
		if cw.err != nil {
			return exchanges, cw.n, cw.err
		}
	}
	if err := cw.w.(*bufio.Writer).Flush(); err != nil {
		return exchanges, cw.n, err
	}
	return exchanges, cw.n, cw.err
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
