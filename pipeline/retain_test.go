package pipeline

import (
	"bufio"
	"bytes"
	"runtime"
	"testing"
	"weak"

	"mcptrace/correlate"
	"mcptrace/internal/traffic"
	"mcptrace/schema"
)

// TestOpenConversationsPinNoObservation: a conversation that never ends
// keeps what the correlator copied out of its records, never the decoded
// observation (whose allocation holds its messages and HTTP evidence) nor,
// through it, the bodies. The observations are decoded as the decode stage
// decodes them, correlated as a shard correlates them (marks after each
// chunk, items to the Linker), and each is watched through a weak pointer:
// once they have all been added, a collection must leave none of them
// reachable while every conversation is still open.
func TestOpenConversationsPinNoObservation(t *testing.T) {
	var log bytes.Buffer
	if _, err := traffic.Write(&log, traffic.Options{Seed: 1, Side: "client", Shape: traffic.ShapeOpenConversations, Conversations: 2000}); err != nil {
		t.Fatal(err)
	}
	lk := correlate.NewLinker(func(correlate.Row) {})
	c := correlate.NewShard(lk.Add)
	clock := correlate.NewClock()
	var watched []weak.Pointer[schema.Observation]
	sc := bufio.NewScanner(&log)
	sc.Buffer(nil, 1<<24)
	var n int64
	for sc.Scan() {
		n++
		o, reason, detail := wireRecord(append([]byte(nil), sc.Bytes()...), schema.Position{Source: "open.ndjson", Line: n})
		if reason != "" {
			t.Fatalf("line %d: %s: %s", n, reason, detail)
		}
		o.Seq, o.Pos.ID = n, "file:open.ndjson"
		clock.Stamp(o)
		watched = append(watched, weak.Make(o))
		c.Add(o)
		if n%chunkLines == 0 {
			m := clock.Mark(n)
			c.Advance(m)
			lk.Advance(m)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	m := clock.Mark(n + 1)
	c.Advance(m)
	lk.Advance(m)
	runtime.GC()
	if open := c.OpenConversations(); open != 2000 {
		t.Fatalf("%d conversations open, want 2000 (the log never ends one)", open)
	}
	pinned := 0
	for _, w := range watched {
		if w.Value() != nil {
			pinned++
		}
	}
	if pinned > 0 {
		t.Errorf("%d of %d observations still reachable with their conversations open", pinned, len(watched))
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(lk)
}
