package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// a FIFO whose writer has not opened it yet (mkfifo p; ingest p,
// then Ctrl-C) blocks its stream goroutine in os.Open (open(2) of a FIFO
// waits for a writer, and neither Stop nor ctx reaches it), so a soft stop
// or a cancellation never returns: fileSource.Close waits for the stream
// goroutines.
func TestFIFOWithoutWriterStopAndCancel(t *testing.T) {
	for _, mode := range []string{"soft stop", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "live.ndjson")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, Config{Inputs: []string{fifo}, OutDir: filepath.Join(dir, "out"), Workers: 2, Log: zerolog.Nop(),
					FlushInterval: 20 * time.Millisecond, Stop: stop})
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if mode == "soft stop" {
				close(stop)
			} else {
				cancel()
			}
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, ErrStopped) && !errors.Is(err, context.Canceled) {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				// Unblock the open so the test can end.
				if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					defer w.Close()
				}
				<-done
				t.Fatalf("%s: Run did not return within 10s while a FIFO had no writer yet", mode)
			}
		})
	}
}
