package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/internal/synth"
	"mcptrace/schema"
)

// faultySink is a Sink that fails on a chosen call, and records what it was
// asked to do.
type faultySink struct {
	mu              sync.Mutex
	failAfter       int // fail the write after this many successful writes (-1: never)
	failCommit      bool
	writes          int
	rows, quar      int
	committed       bool
	aborted         bool
	blockUntilAbort chan struct{} // when set, writes block until ctx ends
}

var errDiskFull = errors.New("writing out/exchanges/dt=2026-10-17/.x.parquet.tmp: no space left on device")

func (s *faultySink) write(ctx context.Context, n int, quar bool) error {
	if s.blockUntilAbort != nil {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAfter >= 0 && s.writes >= s.failAfter {
		return errDiskFull
	}
	s.writes++
	if quar {
		s.quar += n
	} else {
		s.rows += n
	}
	return nil
}

func (s *faultySink) WriteExchanges(ctx context.Context, _ *Input, rows []schema.Exchange) error {
	return s.write(ctx, len(rows), false)
}
func (s *faultySink) WriteQuarantine(ctx context.Context, _ *Input, rows []schema.Quarantine) error {
	return s.write(ctx, len(rows), true)
}
func (s *faultySink) Commit(context.Context, []*Input, bool) error {
	if s.failCommit {
		return errDiskFull
	}
	s.committed = true
	return nil
}
func (s *faultySink) Abort() { s.aborted = true }

func synthLog(t *testing.T, n, days int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "synth.ndjson")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := synth.Write(f, synth.Options{Exchanges: n, Days: days}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// checkNoLeak fails when goroutines started by the test outlive it.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	t.Fatalf("%d goroutines left running (had %d before):\n%s", runtime.NumGoroutine(), before, buf[:n])
}

// A sink that fails on write ends the run with its error, the run aborts
// the sink (nothing is published), and every goroutine is joined: on a
// failing write, a failing commit, and a cancellation while the sink
// blocks.
func TestSinkFailureAbortsAndJoinsEveryGoroutine(t *testing.T) {
	log := synthLog(t, 8000, 3)
	cases := []struct {
		name string
		sink *faultySink
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"first write fails", &faultySink{failAfter: 0}, nil, errDiskFull},
		{"a later write fails", &faultySink{failAfter: 2}, nil, errDiskFull},
		{"commit fails", &faultySink{failAfter: -1, failCommit: true}, nil, errDiskFull},
		{"cancelled while the sink blocks", &faultySink{failAfter: -1, blockUntilAbort: make(chan struct{})},
			func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 300*time.Millisecond)
			},
			context.DeadlineExceeded},
	}
	for _, tc := range cases {
		for _, workers := range []int{1, 4} {
			t.Run(tc.name, func(t *testing.T) {
				before := runtime.NumGoroutine()
				sink := faultySink{failAfter: tc.sink.failAfter, failCommit: tc.sink.failCommit, blockUntilAbort: tc.sink.blockUntilAbort}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tc.ctx != nil {
					ctx, cancel = tc.ctx()
				}
				defer cancel()
				_, err := Run(ctx, Config{Inputs: []string{log}, Workers: workers, Log: zerolog.Nop(),
					newSink: func(context.Context, Config, *Summary, func(*Input)) (Sink, error) { return &sink, nil }})
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if !sink.aborted || sink.committed {
					t.Errorf("aborted %v committed %v: a failed run must abort and publish nothing", sink.aborted, sink.committed)
				}
				checkNoLeak(t, before)
			})
		}
	}
}

// Cancelling at any moment joins every goroutine, for every kind of input.
func TestCancelJoinsEveryGoroutine(t *testing.T) {
	log := synthLog(t, 12000, 2)
	for _, d := range []time.Duration{0, time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		for _, in := range []string{log, "../samples"} {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			_, err := Run(ctx, Config{Inputs: []string{in}, OutDir: t.TempDir(), Workers: 3, Log: zerolog.Nop()})
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "context") {
				t.Fatalf("cancel after %v: %v", d, err)
			}
			checkNoLeak(t, before)
		}
	}
}

func TestCheckpointContiguous(t *testing.T) {
	var c Checkpoint
	r1, _ := c.Track(1, 10)
	r2, _ := c.Track(11, 20)
	r3, _ := c.Track(21, 25)
	if _, err := c.Track(5, 30); err == nil {
		t.Error("an overlapping range was accepted")
	}
	r2()
	if got := c.Committable(); got != 0 {
		t.Errorf("committable %d before the first range is released", got)
	}
	r1()
	if got := c.Committable(); got != 20 {
		t.Errorf("committable %d, want 20", got)
	}
	r3()
	r3()
	if got, p := c.Committable(), c.Pending(); got != 25 || p != 0 {
		t.Errorf("committable %d pending %d, want 25 and 0", got, p)
	}
}

// A soft stop at any moment drains, publishes what was read, says what was
// not, and joins every goroutine.
func TestSoftStopJoinsEveryGoroutine(t *testing.T) {
	log := synthLog(t, 12000, 2)
	for _, d := range []time.Duration{0, 5 * time.Millisecond, 50 * time.Millisecond} {
		before := runtime.NumGoroutine()
		stop := make(chan struct{})
		timer := time.AfterFunc(d, func() { close(stop) })
		sum, err := Run(context.Background(), Config{Inputs: []string{log, "../samples"}, OutDir: t.TempDir(), Workers: 3, Log: zerolog.Nop(), Stop: stop})
		timer.Stop()
		if err != nil && !errors.Is(err, ErrStopped) {
			t.Fatalf("stop after %v: %v", d, err)
		}
		if errors.Is(err, ErrStopped) && len(sum.NotRead)+len(sum.Partial) == 0 {
			t.Errorf("stop after %v: ErrStopped but the summary says everything was read", d)
		}
		if err == nil && (len(sum.NotRead) > 0 || len(sum.Partial) > 0) {
			t.Errorf("stop after %v: no ErrStopped but inputs were left: %v %v", d, sum.NotRead, sum.Partial)
		}
		if !sum.Balanced() {
			t.Errorf("stop after %v: conservation fails: %+v", d, sum)
		}
		checkNoLeak(t, before)
	}
}
