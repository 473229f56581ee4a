package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/internal/synth"
	"mcptrace/redact"
)

func review2Pair(t *testing.T, n int) (client, server string) {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	if _, _, err := synth.Write(&b, synth.Options{Exchanges: n, Days: 2, Sessions: 50}); err != nil {
		t.Fatal(err)
	}
	client = filepath.Join(dir, "client.ndjson")
	server = filepath.Join(dir, "server.ndjson")
	os.WriteFile(client, b.Bytes(), 0o644)
	os.WriteFile(server, bytes.ReplaceAll(b.Bytes(), []byte(`"side":"client"`), []byte(`"side":"server"`)), 0o644)
	return
}

// Interleaved reading (merged wire files): cancel, soft stop and sink
// failure at several moments join every goroutine; a soft stop balances.
func TestInterleavedStopCancelFailJoin(t *testing.T) {
	client, server := review2Pair(t, 20000)
	for _, d := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, err := Run(ctx, Config{Inputs: []string{client, server}, OutDir: t.TempDir(), Workers: 3, Log: zerolog.Nop(), Merge: "on"})
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "context") {
			t.Fatalf("cancel after %v: %v", d, err)
		}
		checkNoLeak(t, before)

		before = runtime.NumGoroutine()
		stop := make(chan struct{})
		timer := time.AfterFunc(d, func() { close(stop) })
		sum, err := Run(context.Background(), Config{Inputs: []string{client, server}, OutDir: t.TempDir(), Workers: 3, Log: zerolog.Nop(), Stop: stop, Merge: "on"})
		timer.Stop()
		if err != nil && !errors.Is(err, ErrStopped) {
			t.Fatalf("stop after %v: %v", d, err)
		}
		if sum != nil && !sum.Balanced() {
			t.Errorf("stop after %v: not balanced: %+v", d, sum)
		}
		checkNoLeak(t, before)

		for _, after := range []int{0} {
			before = runtime.NumGoroutine()
			sink := faultySink{failAfter: after}
			_, err = Run(context.Background(), Config{Inputs: []string{client, server}, Workers: 2, Log: zerolog.Nop(), Merge: "on",
				newSink: func(context.Context, Config, *Summary, func(*Input)) (Sink, error) { return &sink, nil }})
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("sink failure after %d: %v (writes %d rows %d quar %d committed %v)", after, err, sink.writes, sink.rows, sink.quar, sink.committed)
			}
			checkNoLeak(t, before)
		}
	}
}

func review2Hashes(t *testing.T, out string) []string {
	var hs []string
	filepath.Walk(filepath.Join(out, "exchanges"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".parquet") {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(out, p)
			hs = append(hs, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
		}
		return nil
	})
	sort.Strings(hs)
	return hs
}

// Interleaved merge: byte-identical exchange files across runs and -workers.
func TestInterleavedDeterministic(t *testing.T) {
	client, server := review2Pair(t, 20000)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	var first []string
	for i, w := range []int{1, 4, 4, 2, 1} {
		out := t.TempDir()
		sum, err := Run(context.Background(), Config{Inputs: []string{client, server}, OutDir: out, Workers: w, Log: zerolog.Nop(), Merge: "on",
			Pseudonyms: key, Lateness: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Balanced() {
			t.Errorf("workers %d: not balanced", w)
		}
		h := review2Hashes(t, out)
		if i == 0 {
			first = h
			continue
		}
		if strings.Join(h, "\n") != strings.Join(first, "\n") {
			t.Errorf("workers %d: exchange files differ from workers 1", w)
		}
	}
}
