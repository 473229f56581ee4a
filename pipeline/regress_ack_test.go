package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/schema"
)

// pairSpy notes the rows written under merged (pair) identities and what
// each commit published.
type pairSpy struct {
	Sink
	mu        sync.Mutex
	pairRows  int
	published map[string]bool
	streams   []*Input
}

func (s *pairSpy) WriteExchanges(ctx context.Context, in *Input, rows []schema.Exchange) error {
	s.mu.Lock()
	if strings.HasPrefix(in.ID, "merged:") {
		s.pairRows += len(rows)
	}
	s.mu.Unlock()
	return s.Sink.WriteExchanges(ctx, in, rows)
}

func (s *pairSpy) Commit(ctx context.Context, inputs []*Input, final bool) error {
	err := s.Sink.Commit(ctx, inputs, final)
	s.mu.Lock()
	for _, in := range inputs {
		if err == nil {
			s.published[in.ID] = true
		}
		if in.Stream && !strings.HasPrefix(in.ID, "merged:") {
			found := false
			for _, x := range s.streams {
				found = found || x == in
			}
			if !found {
				s.streams = append(s.streams, in)
			}
		}
	}
	s.mu.Unlock()
	return err
}

// Two live streams merged (ingest -merge on <(tail -f client)
// <(tail -f server)): the periodic commits must publish the merged rows
// (filed under the pair of streams) before the streams' units that made
// them are acknowledged (the checkpoint is the future Kafka commit point).
func TestMergedStreamUnitsAckedBeforeMergedRowsPublished(t *testing.T) {
	dir := t.TempDir()
	data := streamSynth(t, 200)
	a, closeA := streamFIFO(t, dir, "client.ndjson", data)
	b, closeB := streamFIFO(t, dir, "server.ndjson", bytes.ReplaceAll(data, []byte(`"side":"client"`), []byte(`"side":"server"`)))
	spy := &pairSpy{published: map[string]bool{}}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Inputs: []string{a, b}, OutDir: filepath.Join(dir, "out"), Workers: 2, Log: zerolog.Nop(),
			Merge: "on", Lateness: 20 * time.Millisecond, MergeWindow: 20 * time.Millisecond, IdleTimeout: 50 * time.Millisecond,
			FlushInterval: 10 * time.Millisecond, CommitInterval: 30 * time.Millisecond,
			newSink: func(ctx context.Context, cfg Config, sum *Summary, kept func(*Input)) (Sink, error) {
				s, err := openDataset(ctx, cfg, sum, kept)
				spy.Sink = s
				return spy, err
			}})
		done <- err
	}()
	var acked int64
	var pairRows int
	var pairPublished bool
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		spy.mu.Lock()
		pairRows = spy.pairRows
		acked = 0
		for _, in := range spy.streams {
			acked += in.Ckpt.Committable()
		}
		pairPublished = false
		for id := range spy.published {
			pairPublished = pairPublished || strings.HasPrefix(id, "merged:")
		}
		spy.mu.Unlock()
		if pairRows > 0 && acked > 0 && time.Now().Add(12*time.Second).After(deadline) {
			break
		}
	}
	closeA()
	closeB()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("while both streams were open: %d merged rows written, %d stream records acknowledged, merged rows published: %v", pairRows, acked, pairPublished)
	if pairRows == 0 || acked == 0 {
		t.Fatalf("the streams merged %d rows and acknowledged %d records while open: the test saw nothing to check", pairRows, acked)
	}
	if !pairPublished {
		t.Errorf("%d stream records acknowledged while the %d merged rows they produced were written but never published by a commit", acked, pairRows)
	}
}
