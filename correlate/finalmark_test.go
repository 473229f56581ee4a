package correlate_test

import (
	"testing"

	"mcptrace/decode"
	"mcptrace/schema"
)

// The last round of a run advances the correlators to Mark(last Seq), which
// may close idle conversations, keyed {last Seq, their first Seq}; Finish
// then closes the others. Finish's Mark has a Seq of its own, or a
// conversation it closes with a smaller first Seq would be keyed before
// those (the keys of a correlator must increase). Here log b's time jumps two
// hours on its last record, so its first conversation (first Seq 2) goes idle
// in the last Advance, while log a's conversation (first Seq 1, a request
// waiting for a re-POST) stays open until Finish.
func TestFinalMarkKeysAfterLastAdvance(t *testing.T) {
	lines := []struct{ source, line string }{
		{"a.ndjson", `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.000Z","side":"client","connection":"a1","http":{"request":{"method":"POST","url":"http://127.0.0.1:9/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"},"failure":{"kind":"reset"}}}`},
		{"b.ndjson", `{"mcptrace":"wire/1","ts":"2026-10-17T10:00:01.000Z","end_ts":"2026-10-17T10:00:01.010Z","side":"client","connection":"b1","http":{"request":{"method":"POST","url":"http://127.0.0.1:9/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"}}}`},
		{"b.ndjson", `{"mcptrace":"wire/1","ts":"2026-10-17T12:00:00.000Z","end_ts":"2026-10-17T12:00:00.010Z","side":"client","connection":"b2","http":{"request":{"method":"POST","url":"http://127.0.0.1:9/mcp","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}"}}}`},
	}
	var obs []*schema.Observation
	for i, l := range lines {
		o, err := decode.WireLine([]byte(l.line), schema.Position{Source: l.source, Line: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, &o)
	}
	for _, shards := range []int{1, 2} {
		rows, _ := shardedRun(t, obs, shards, 1, false, 0) // fails the test if keys go back
		if len(rows) != 3 {
			t.Fatalf("%d shards: %d rows", shards, len(rows))
		}
	}
}
