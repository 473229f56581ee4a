package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptrace/internal/synth"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// ingestBinary builds cmd/ingest once per test process: signal and crash
// behaviour is tested on the real binary.
func ingestBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcptrace-ingest-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ingest")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func writeSynth(t *testing.T, path string, o synth.Options) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := synth.Write(f, o); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const testKeyHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// countRowsDuck counts a table's rows through DuckDB; every file under a
// final name must be readable.
func countRowsDuck(t *testing.T, out, table string) int64 {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, _ := filepath.Glob(filepath.Join(out, table, "*", "*.parquet"))
	var n int64
	for _, f := range files {
		var c int64
		if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", f)).Scan(&c); err != nil {
			t.Fatalf("%s is not a readable Parquet file under its final name: %v", f, err)
		}
		n += c
	}
	return n
}

// The first SIGTERM stops reading: what was read is written and published,
// the summary says what was not read, and ingest exits 3.
func TestFirstSignalDrainsAndExits3(t *testing.T) {
	bin := ingestBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var log bytes.Buffer
	synth.Write(&log, synth.Options{Exchanges: 600})
	cmd, stdin, stdout, stderr := startOnStdin(t, bin, "-out", out, "-flush-interval", "50ms", "-")
	// Past the pipe's buffer, a completed write means ingest has read most of
	// it; the stream stays open, so only the signal can end the run.
	if _, err := stdin.Write(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let a flush interval pass (not a timing assertion)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("ingest did not stop after SIGTERM\nstderr:\n%s", stderr.String())
	}
	stdin.Close()
	if code := exitCode(werr); code != ExitStopped {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitStopped, stdout.String(), stderr.String())
	}
	s := stdout.String()
	if !strings.Contains(s, "stopped early: 0 inputs not read, 1 read in part") || !strings.Contains(s, "[OK]") {
		t.Errorf("summary does not say what was not read, or does not balance:\n%s", s)
	}
	var written int64
	if _, err := fmt.Sscanf(s[strings.Index(s, "exchanges:"):], "exchanges: %d written", &written); err != nil {
		t.Fatalf("no exchange count in summary: %v\n%s", err, s)
	}
	if written == 0 {
		t.Errorf("nothing written although ingest had read the stream:\n%s", s)
	}
	if got := countRowsDuck(t, out, "exchanges"); got != written {
		t.Errorf("dataset holds %d exchanges, summary says %d", got, written)
	}
}

// A second signal exits at once, with 128+signal; no incomplete file is
// left under a final name, and a rerun gives the dataset a clean run gives.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	bin := ingestBinary(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "big.ndjson")
	writeSynth(t, in, synth.Options{Exchanges: 60000, Days: 40})
	for _, delay := range []time.Duration{20 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond} {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", delay.Milliseconds()))
		cmd := exec.Command(bin, "-out", out, in)
		cmd.Env = append(os.Environ(), "MCPTRACE_PSEUDONYM_KEY="+testKeyHex)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(5 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		code := exitCode(cmd.Wait())
		if code != ExitOK && code != ExitQuarantined && code != ExitStopped && code != 128+int(syscall.SIGTERM) {
			t.Fatalf("delay %v: exit %d\n%s", delay, code, stderr.String())
		}
		countRowsDuck(t, out, "exchanges") // every file under a final name is whole
		countRowsDuck(t, out, "quarantine")
	}
}

// A live stream that goes quiet still writes its rows: they are published
// every -commit-interval, and a conversation left open ends after
// -idle-timeout of quiet (its event time moves on with the wall clock).
func TestQuietStreamStillWritesItsRows(t *testing.T) {
	bin := ingestBinary(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd, stdin, _, stderr := startOnStdin(t, bin, "-out", out, "-flush-interval", "50ms", "-commit-interval", "100ms", "-idle-timeout", "1s", "-")
	defer cmd.Process.Kill()
	// 200 answered calls (past the 64 KiB that format detection waits for),
	// then one request that is never answered.
	var log bytes.Buffer
	synth.Write(&log, synth.Options{Exchanges: 200})
	log.WriteString(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:01.000Z","side":"client","transport":"stdio","connection":"open-1","stdio":{"direction":"c2s","line":"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\"}}"}}` + "\n")
	if _, err := stdin.Write(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	// The stream stays open: only the commits can make rows visible.
	deadline := time.Now().Add(60 * time.Second)
	var answered, open int64
	for time.Now().Before(deadline) {
		answered, open = 0, 0
		if m := readManifestRows(t, out); m > 0 {
			answered = countRowsDuck(t, out, "exchanges")
			open = countWhere(t, out, "jsonrpc_id = '99'")
		}
		if answered >= 201 && open == 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if answered < 201 || open != 1 {
		t.Fatalf("while the stream stayed open: %d rows visible, the open request %d times (want 201 and 1)\nstderr:\n%s", answered, open, stderr.String())
	}
	stdin.Close()
	if err := cmd.Wait(); exitCode(err) != 0 {
		t.Fatalf("exit %d after the stream ended\n%s", exitCode(err), stderr.String())
	}
	if got := countRowsDuck(t, out, "exchanges"); got != 201 {
		t.Errorf("%d rows after the end, want 201 (commits must not duplicate)", got)
	}
}

func readManifestRows(t *testing.T, out string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, ".mcptrace", "manifest.json"))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `"exchanges/dt=`)
}

func countWhere(t *testing.T, out, where string) int64 {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s') WHERE %s", filepath.Join(out, "exchanges", "*", "*.parquet"), where)).Scan(&n); err != nil {
		return 0
	}
	return n
}

// startOnStdin starts the binary with a fixed pseudonym key, its standard
// input a pipe the test writes to.
func startOnStdin(t *testing.T, bin string, args ...string) (*exec.Cmd, io.WriteCloser, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MCPTRACE_PSEUDONYM_KEY="+testKeyHex)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout, stderr
}
