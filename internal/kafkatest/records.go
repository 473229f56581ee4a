package kafkatest

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/tidwall/gjson"

	"mcptrace/internal/synth"
)

// Record is one Kafka message: its topic, partition, key and value.
type Record struct {
	Topic     string
	Partition int32
	Key       []byte
	Value     []byte
}

// hash is kafka-go's key balancer, FNV-1a as Sarama computes it: what the
// README tells producers to use, called here rather than re-implemented.
var hash = &kafka.Hash{}

// PartitionFor returns the partition kafka-go's kafka.Hash balancer picks
// for key among partitions 0..partitions-1 (a nil key has none: -1).
func PartitionFor(key []byte, partitions int) int32 {
	if key == nil || partitions <= 0 {
		return -1
	}
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	return int32(hash.Balance(kafka.Message{Key: key}, ps...))
}

// KeyOf returns the conversation key of a wire-log line, the way the
// correlator groups lines into conversations: the session (session_id,
// else the Mcp-Session-Id request header, else the legacy sessionId query
// parameter of the URL), else the connection. It returns nil for a line
// that names neither (its conversation is its whole log) or is not JSON.
func KeyOf(line []byte) []byte {
	r := gjson.ParseBytes(line)
	if !r.IsObject() {
		return nil
	}
	if s := r.Get("session_id").String(); s != "" {
		return []byte(s)
	}
	var hdr string
	r.Get("http.request.headers").ForEach(func(k, v gjson.Result) bool {
		if strings.EqualFold(k.String(), "mcp-session-id") {
			if v.IsArray() {
				v = v.Get("0")
			}
			hdr = v.String()
			return false
		}
		return true
	})
	if hdr != "" {
		return []byte(hdr)
	}
	if u, err := url.Parse(r.Get("http.request.url").String()); err == nil {
		if s := u.Query().Get("sessionId"); s != "" {
			return []byte(s)
		}
	}
	if s := r.Get("connection").String(); s != "" {
		return []byte(s)
	}
	return nil
}

// Keyed makes records of wire-log lines for topic: each keyed by KeyOf, or
// by fallback for lines without a session or connection (so that one log's
// key-less lines stay together, as the correlator keeps them), and put on
// the partition PartitionFor gives over partitions. Lines are kept in
// order; empty lines are skipped; values are not copied.
func Keyed(topic string, partitions int, fallback string, lines [][]byte) []Record {
	recs := make([]Record, 0, len(lines))
	for _, l := range lines {
		if len(l) == 0 {
			continue
		}
		key := KeyOf(l)
		if key == nil {
			key = []byte(fallback)
		}
		recs = append(recs, Record{Topic: topic, Partition: PartitionFor(key, partitions), Key: key, Value: l})
	}
	return recs
}

// SynthOptions shape Synth's records.
type SynthOptions struct {
	Topic      string // the client-side topic (required)
	Partitions int    // its partition count (required)
	Records    int    // about how many client-side records (lines); synth writes 1.1 a exchange
	Sessions   int    // sessions the traffic is spread over (default 500)

	// Seed names a batch: with Seed != 0 session ids are "s<Seed>-NNNN"
	// instead of "sess-NNNN", so batches with different seeds never share
	// a conversation (the same seed gives the same records).
	Seed int64

	Start time.Time // first timestamp (default synth's, 2026-10-17T10:00:00Z)
	Days  int       // calendar days the traffic covers (default 1)

	// Server adds the server's view of the same traffic on ServerTopic
	// (default Topic+"-server"), with the same keys and partitions over
	// the same partition count, so both views of a conversation meet in
	// one consumer. The server logs each transaction 2 ms after the
	// client sent it and 2 ms before the client saw it end.
	Server      bool
	ServerTopic string
}

// Synth returns wire-log records made by internal/synth: tools/call
// exchanges over many sessions (JSON and SSE responses, tool errors,
// JSON-RPC errors, 503s retried by the SDK), one record a line, in the
// order synth writes them, keyed and partitioned as Keyed does. With
// o.Server the server-side records follow, in the same order. It panics on
// options it cannot honour (no topic, no partitions, no records).
func Synth(o SynthOptions) []Record {
	if o.Topic == "" || o.Partitions <= 0 || o.Records <= 0 {
		panic(fmt.Sprintf("kafkatest.Synth: need Topic, Partitions and Records, got %+v", o))
	}
	// synth writes two lines (a 503, then its retry) for every tenth
	// exchange: lines(n) = n + ceil(n/10). Take the most exchanges whose
	// lines do not exceed o.Records.
	lines := func(n int) int { return n + (n+9)/10 }
	n := o.Records * 10 / 11
	for lines(n+1) <= o.Records {
		n++
	}
	for n > 1 && lines(n) > o.Records {
		n--
	}
	n = max(n, 1)
	var buf bytes.Buffer
	if _, _, err := synth.Write(&buf, synth.Options{Exchanges: n, Sessions: o.Sessions, Days: o.Days, Start: o.Start}); err != nil {
		panic(fmt.Sprintf("kafkatest.Synth: synth.Write: %v", err))
	}
	data := buf.Bytes()
	if o.Seed != 0 {
		// the session id appears as "sess-NNNN" in session_id and in the
		// mcp-session-id header; nothing else in synth's lines has "sess-
		data = bytes.ReplaceAll(data, []byte(`"sess-`), fmt.Appendf(nil, `"s%d-`, o.Seed))
	}
	ls := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	recs := Keyed(o.Topic, o.Partitions, o.Topic, ls)
	if !o.Server {
		return recs
	}
	topic := o.ServerTopic
	if topic == "" {
		topic = o.Topic + "-server"
	}
	srv := make([][]byte, len(ls))
	for i, l := range ls {
		srv[i] = serverView(l)
	}
	return append(recs, Keyed(topic, o.Partitions, topic, srv)...)
}

// serverView turns a client's line from synth into the server's log of the
// same transaction: side server, received 2 ms after the client sent it and
// finished 2 ms before the client saw the end.
func serverView(line []byte) []byte {
	const layout = "2006-01-02T15:04:05.000Z"
	out := bytes.Replace(line, []byte(`"side":"client"`), []byte(`"side":"server"`), 1)
	for _, f := range []struct {
		name  string
		shift time.Duration
	}{{"ts", 2 * time.Millisecond}, {"end_ts", -2 * time.Millisecond}} {
		v := gjson.GetBytes(line, f.name).String()
		at, err := time.Parse(layout, v)
		if err != nil {
			panic(fmt.Sprintf("kafkatest.Synth: synth wrote %s %q: %v", f.name, v, err))
		}
		old := fmt.Appendf(nil, `"%s":"%s"`, f.name, v)
		out = bytes.Replace(out, old, fmt.Appendf(nil, `"%s":"%s"`, f.name, at.Add(f.shift).Format(layout)), 1)
	}
	return out
}

// Poison returns a message no format accepts: binary bytes (NUL, invalid
// UTF-8, no JSON, no gzip magic) with no newline or carriage return, so it
// is also one (bad) line in a file written by WriteFiles.
func Poison(topic string, partition int32, key []byte) Record {
	return Record{Topic: topic, Partition: partition, Key: key,
		Value: []byte("\x00\xff\xfe\x80\x81poison\x00\xc3\x28\x01\x02\x7f\xf0\x90\x80")}
}

// PoisonWire returns a wire-log line whose JSON is broken: it starts as a
// valid record (the "mcptrace":"wire/1" marker, session, HTTP request) and
// is cut off mid-string, as a truncated write leaves it.
func PoisonWire(topic string, partition int32, key []byte) Record {
	v := `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.000Z","end_ts":"2026-10-17T10:00:00.020Z","side":"client","transport":"streamable-http","session_id":"` +
		string(key) + `","http":{"request":{"method":"POST","url":"https://mcp.example.com/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"meth`
	return Record{Topic: topic, Partition: partition, Key: key, Value: []byte(v)}
}
