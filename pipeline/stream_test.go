package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/dataset"
	"mcptrace/internal/synth"
	"mcptrace/schema"
)

// streamFIFO makes a FIFO and opens its writing end in the background (the
// open waits for the run to open the reading end). The returned function
// closes the writer.
func streamFIFO(t *testing.T, dir, name string, data []byte) (path string, closeWriter func()) {
	return streamFIFOWith(t, dir, name, data, false)
}

// streamFIFOWith: with closeAfterWrite, the writer closes once its data is
// written (the stream ends when it has been read).
func streamFIFOWith(t *testing.T, dir, name string, data []byte, closeAfterWrite bool) (path string, closeWriter func()) {
	t.Helper()
	path = filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var w *os.File
	closed := false
	opened := make(chan struct{})
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			close(opened)
			return
		}
		f.Write(data)
		mu.Lock()
		if closed || closeAfterWrite {
			f.Close()
		} else {
			w = f
		}
		mu.Unlock()
		close(opened)
	}()
	closeWriter = func() {
		mu.Lock()
		closed = true
		if w != nil {
			w.Close()
			w = nil
		}
		mu.Unlock()
		// Unblock a writer still waiting in open (the run never opened
		// the reading end).
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			select {
			case <-opened:
			case <-time.After(5 * time.Second):
			}
			r.Close()
		}
	}
	t.Cleanup(closeWriter)
	return path, closeWriter
}

func streamSynth(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, _, err := synth.Write(&b, synth.Options{Exchanges: n, Sessions: 5}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func manifestExchangeRows(t *testing.T, out string) int64 {
	m, err := dataset.ReadManifest(out)
	if err != nil {
		return 0
	}
	return m.Rows("exchanges")
}

// a live stream whose first 64 KiB have not arrived yet (a quiet,
// low-volume log behind `tail -f`) is never decoded: input.Open waits in
// Peek(decode.SniffBytes) for the head, so neither the idle tick nor the
// periodic commit publishes its rows while it stays open.
func TestQuietSmallStreamPublishesRows(t *testing.T) {
	dir := t.TempDir()
	data := streamSynth(t, 20) // about 18 KiB: less than the sniffing head
	fifo, closeWriter := streamFIFO(t, dir, "live.ndjson", data)
	out := filepath.Join(dir, "out")
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Inputs: []string{fifo}, OutDir: out, Workers: 2, Log: zerolog.Nop(),
			FlushInterval: 20 * time.Millisecond, CommitInterval: 50 * time.Millisecond})
		done <- err
	}()
	var rows int64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if rows = manifestExchangeRows(t, out); rows >= 20 {
			break
		}
	}
	closeWriter()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rows < 20 {
		t.Errorf("while the stream stayed open (15s, commit interval 50ms): %d exchange rows published, want 20", rows)
	}
}

// the first SIGINT/SIGTERM (Config.Stop) must stop reading "even
// in a blocked read of a quiet pipe" (README, Stopping). A pipe that has
// sent less than 64 KiB and stays open blocks the source inside input.Open
// (the head Peek), where Stop is not looked at: Run only returns when the
// writer closes.
func TestSoftStopInterruptsQuietSmallStream(t *testing.T) {
	dir := t.TempDir()
	fifo, closeWriter := streamFIFO(t, dir, "live.ndjson", streamSynth(t, 20))
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Inputs: []string{fifo}, OutDir: filepath.Join(dir, "out"), Workers: 2, Log: zerolog.Nop(),
			FlushInterval: 20 * time.Millisecond, CommitInterval: 50 * time.Millisecond, Stop: stop})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, ErrStopped) {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		closeWriter()
		<-done
		t.Fatal("Run did not return within 15s of the soft stop while a quiet pipe (less than 64 KiB sent) stayed open")
	}
}

// ackSpy wraps the dataset sink and remembers the file inputs it was given
// rows for, and whether their checkpoint had advanced before the commit
// that first publishes them.
type ackSpy struct {
	Sink
	mu         sync.Mutex
	files      map[*Input]bool
	published  map[*Input]bool
	earlyAcked []string
}

func (s *ackSpy) WriteExchanges(ctx context.Context, in *Input, rows []schema.Exchange) error {
	s.mu.Lock()
	if !in.Stream {
		s.files[in] = true
	}
	s.check()
	s.mu.Unlock()
	return s.Sink.WriteExchanges(ctx, in, rows)
}

// check notes a file input acknowledged (checkpoint advanced) although no
// commit has published it yet.
func (s *ackSpy) check() {
	for in := range s.files {
		if !s.published[in] && in.Ckpt.Committable() > 0 {
			s.earlyAcked = append(s.earlyAcked, in.Name)
			s.published[in] = true // report once
		}
	}
}

func (s *ackSpy) Commit(ctx context.Context, inputs []*Input, final bool) error {
	s.mu.Lock()
	s.check()
	s.mu.Unlock()
	err := s.Sink.Commit(ctx, inputs, final)
	s.mu.Lock()
	for _, in := range inputs {
		if err == nil && in.Opened.Load() {
			s.published[in] = true
		}
	}
	s.mu.Unlock()
	return err
}

// a run that reads a stream and a file publishes the stream every
// CommitInterval, and then releases every unit below the commit's mark,
// the file's units too, although the file's rows are only published by
// the final commit. An acknowledgement (here the per-input checkpoint, the
// ledger and later the Kafka commit point) must come only once the unit's
// rows are in a published file.
func TestFileUnitsNotAckedByStreamCommit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.ndjson")
	// Conversations that end early (one exchange per session, an idle
	// timeout of a minute), so open state does not hold the file's units.
	var fb bytes.Buffer
	if _, _, err := synth.Write(&fb, synth.Options{Exchanges: 6000, Sessions: 6000, Days: 2}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, fb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo, _ := streamFIFOWith(t, dir, "live.ndjson", streamSynth(t, 100), true)
	spy := &ackSpy{files: map[*Input]bool{}, published: map[*Input]bool{}}
	cfg := Config{Inputs: []string{file, fifo}, OutDir: filepath.Join(dir, "out"), Workers: 2, Log: zerolog.Nop(),
		FlushInterval: 10 * time.Millisecond, CommitInterval: time.Nanosecond, IdleTimeout: time.Minute,
		newSink: func(ctx context.Context, cfg Config, sum *Summary, kept func(*Input)) (Sink, error) {
			s, err := openDataset(ctx, cfg, sum, kept)
			spy.Sink = s
			return spy, err
		}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(spy.earlyAcked) > 0 {
		t.Errorf("file inputs acknowledged (checkpoint advanced) before any commit published their rows: %v", spy.earlyAcked)
	}
}

// with two live streams (ingest <(tail -f client) <(tail -f
// server), the case the streaming merge and -lateness are for: "both sides
// arrive together"), the source reads inputs one after another, so the
// second stream is not even opened while the first stays open: its rows
// never appear and its writer blocks.
func TestTwoLiveStreamsAreBothRead(t *testing.T) {
	dir := t.TempDir()
	a, closeA := streamFIFO(t, dir, "a.ndjson", streamSynth(t, 200))
	b, closeB := streamFIFO(t, dir, "b.ndjson", bytes.ReplaceAll(streamSynth(t, 200), []byte("sess-"), []byte("other-")))
	out := filepath.Join(dir, "out")
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Inputs: []string{a, b}, OutDir: out, Workers: 2, Log: zerolog.Nop(),
			FlushInterval: 20 * time.Millisecond, CommitInterval: 50 * time.Millisecond})
		done <- err
	}()
	var sources int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m, err := dataset.ReadManifest(out)
		if err == nil {
			sources = 0
			for _, id := range m.SourceIDs() {
				if len(m.Sources[id].Files["exchanges"]) > 0 {
					sources++
				}
			}
		}
		if sources >= 2 {
			break
		}
	}
	closeA()
	closeB()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sources < 2 {
		t.Errorf("while both streams stayed open (15s): rows of %d stream(s) published, want 2", sources)
	}
}

// when the sink fails (or the run is cancelled) while the source
// waits for a quiet pipe's head inside input.Open, cancellation does not
// reach the source goroutine, so Run does not return (every goroutine must
// be joined on the error path, and promptly).
func TestSinkFailureWhileSourceWaitsOnPipe(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.ndjson")
	if err := os.WriteFile(file, streamSynth(t, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo, closeWriter := streamFIFO(t, dir, "live.ndjson", streamSynth(t, 10))
	sink := &faultySink{failAfter: 0}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Inputs: []string{file, fifo}, OutDir: filepath.Join(dir, "out"), Workers: 2, Log: zerolog.Nop(),
			FlushInterval: 20 * time.Millisecond, CommitInterval: 50 * time.Millisecond,
			newSink: func(context.Context, Config, *Summary, func(*Input)) (Sink, error) { return sink, nil }})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errDiskFull) {
			t.Errorf("got %v, want the sink's error", err)
		}
	case <-time.After(15 * time.Second):
		closeWriter()
		<-done
		t.Fatal("Run did not return within 15s of a sink failure while a quiet pipe (less than 64 KiB sent) stayed open")
	}
}
