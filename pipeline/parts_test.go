package pipeline

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/correlate"
	"mcptrace/schema"
)

// recordSink keeps the exchange ids it is given, in order, and the largest
// write.
type recordSink struct {
	mu       sync.Mutex
	ids      []string
	maxWrite int
	writes   int
}

func (s *recordSink) WriteExchanges(_ context.Context, _ *Input, rows []schema.Exchange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range rows {
		s.ids = append(s.ids, rows[i].ExchangeID+" "+rows[i].Outcome)
	}
	s.maxWrite = max(s.maxWrite, len(rows))
	s.writes++
	return nil
}
func (s *recordSink) WriteQuarantine(context.Context, *Input, []schema.Quarantine) error { return nil }
func (s *recordSink) Commit(context.Context, []*Input, bool) error                       { return nil }
func (s *recordSink) Abort()                                                             {}

// openLog writes n client sessions, each an initialize that is answered
// and a tools/call answered 202 that never is: every tools/call row is
// written when the input ends, in one round.
func openLog(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	t0 := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		head := fmt.Sprintf(`{"mcptrace":"wire/1","ts":%q,"side":"client","transport":"streamable-http","session_id":"s%d","protocol_version":"2025-11-25",`, at, i)
		fmt.Fprintf(&b, `%s"http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"},"response":{"status":200,"content_type":"application/json","body":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"}}"}}}`+"\n", head)
		fmt.Fprintf(&b, `%s"http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"n\":%d}}}"},"response":{"status":202,"body":""}}}`+"\n", head, i)
	}
	p := filepath.Join(t.TempDir(), "open.ndjson")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A round that closes more conversations than fit in one part (the end of
// input here) is handed from the correlators to the sink in bounded
// pieces, in the same order whatever the number of shards.
func TestLargeRoundsGoOutInParts(t *testing.T) {
	n := 3 * partItems
	log := openLog(t, n)
	var want []string
	for _, workers := range []int{1, 2, 3} {
		var sink recordSink
		sum, err := Run(context.Background(), Config{Inputs: []string{log}, Workers: workers, Log: zerolog.Nop(),
			newSink: func(context.Context, Config, *Summary, func(*Input)) (Sink, error) { return &sink, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.ids) != 2*n || sum.Exchanges != int64(2*n) || sum.ByOutcome[sinkOutcomeNoResponse] != int64(n) {
			t.Fatalf("workers %d: %d rows written, summary %d (%v)", workers, len(sink.ids), sum.Exchanges, sum.ByOutcome)
		}
		// A part of items holds at most partItems rows; the writer adds
		// what the Linker emits for one part before it writes.
		if sink.maxWrite > 2*partItems {
			t.Errorf("workers %d: a write of %d rows: the last round was not cut into parts", workers, sink.maxWrite)
		}
		if want == nil {
			want = sink.ids
			continue
		}
		if !slices.Equal(sink.ids, want) {
			t.Errorf("workers %d: rows in another order than with one shard", workers)
		}
	}
}

const sinkOutcomeNoResponse = "NO_RESPONSE"

// The orderer merges streams whose rounds come in parts into the order of
// a sort of the whole round.
func TestOrdererMergesParts(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const streams, rounds = 3, 4
	chans := make([]chan roundOut, streams+1)
	ord := &orderer{}
	for i := range chans {
		chans[i] = make(chan roundOut, 64)
		ord.streams = append(ord.streams, chans[i])
	}
	// Each stream wants its parts back (roundOut.free), as a shard does.
	free := make([]chan []correlate.Item, streams)
	for i := range free {
		free[i] = make(chan []correlate.Item, 1000)
	}
	parts := 0
	var want [rounds][]correlate.Key
	for r := 0; r < rounds; r++ {
		for s := 0; s < streams; s++ {
			// Keys unique in the run, increasing along each stream.
			var keys []correlate.Key
			for k := 0; k < rng.Intn(3*partItems); k++ {
				keys = append(keys, correlate.Key{Seq: int64(r*1_000_000 + k*streams + s)})
			}
			want[r] = append(want[r], keys...)
			for len(keys) > 0 {
				m := min(len(keys), 1+rng.Intn(partItems))
				items := make([]correlate.Item, m)
				for i := range items {
					items[i].Key = keys[i]
				}
				keys = keys[m:]
				chans[s] <- roundOut{items: items, partial: true, free: free[s]}
				parts++
			}
			chans[s] <- roundOut{mark: marker{mark: correlate.Mark{Seq: int64(r)}}, lowWater: int64(100 + s)}
		}
		chans[streams] <- roundOut{lowWater: 7}
		slices.SortFunc(want[r], correlate.Key.Compare)
	}
	for r := 0; r < rounds; r++ {
		var got []correlate.Key
		_, mark, low, ok, err := ord.next(context.Background(), func(items []correlate.Item) error {
			if len(items) > partItems {
				t.Errorf("a batch of %d items", len(items))
			}
			for _, it := range items {
				got = append(got, it.Key)
			}
			return nil
		})
		if !ok || err != nil || mark.mark.Seq != int64(r) || low != 7 {
			t.Fatalf("round %d: ok %v err %v mark %d low %d", r, ok, err, mark.mark.Seq, low)
		}
		if !slices.Equal(got, want[r]) {
			t.Fatalf("round %d: %d keys out of order (want %d)", r, len(got), len(want[r]))
		}
	}
	// Every part came back once passed, empty and cleared: nothing of the
	// rows it pointed to stays reachable through it.
	back := 0
	for _, ch := range free {
		for len(ch) > 0 {
			b := <-ch
			if len(b) != 0 || cap(b) == 0 {
				t.Fatalf("a part handed back with len %d cap %d", len(b), cap(b))
			}
			for _, it := range b[:cap(b)] {
				if it != (correlate.Item{}) {
					t.Fatalf("a part handed back uncleared: %+v", it.Key)
				}
			}
			back++
		}
	}
	if back != parts {
		t.Fatalf("%d of %d parts handed back", back, parts)
	}
}
