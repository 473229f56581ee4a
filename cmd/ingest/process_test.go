package main

// Tests of the real ingest binary run as a subprocess: two writers on one
// dataset, SIGKILL and rerun, endless inputs, pipes given as paths, and a
// full filesystem. The binary is built once (ingestBinary, signal_test.go).

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"mcptrace/internal/synth"
)

// hangGuard bounds every wait on a subprocess: it only turns a hang into a
// failure, it asserts nothing about speed.
const hangGuard = 120 * time.Second

// syncBuffer collects a subprocess's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ingestProc is one running subprocess.
type ingestProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed once the process has exited
	err            error         // Wait's result, set before done is closed
}

// startIngest starts the ingest binary with args and the test's fixed
// pseudonym key.
func startIngest(t *testing.T, args ...string) *ingestProc {
	t.Helper()
	return startProc(t, exec.Command(ingestBinary(t), args...))
}

// startProc starts cmd with the test's pseudonym key; the test's cleanup
// kills it if it is still running.
func startProc(t *testing.T, cmd *exec.Cmd) *ingestProc {
	t.Helper()
	cmd.Env = append(os.Environ(), "MCPTRACE_PSEUDONYM_KEY="+testKeyHex)
	p := &ingestProc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the output pipes cannot hang Wait
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *ingestProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait returns the exit status (128+signal for a signal). A process still
// running after guard is killed and fails the test.
func (p *ingestProc) wait(t *testing.T, guard time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(guard):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%v did not end within %v (a hang); killed\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, guard, p.stdout, p.stderr)
	}
	return exitCode(p.err)
}

// runIngestProc runs the binary to its end.
func runIngestProc(t *testing.T, args ...string) (*ingestProc, int) {
	t.Helper()
	p := startIngest(t, args...)
	return p, p.wait(t, hangGuard)
}

func (p *ingestProc) String() string {
	return fmt.Sprintf("%v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, p.stdout, p.stderr)
}

// writeLogWithBad writes a synth wire log with a line that is not JSON
// after every badEvery-th line and, at the end, a wire record without its
// fields, so the quarantine table gets rows too. It returns the number of
// lines written and how many of them are bad.
func writeLogWithBad(t *testing.T, path string, o synth.Options, badEvery int) (lines, bad int64) {
	t.Helper()
	var raw bytes.Buffer
	if _, _, err := synth.Write(&raw, o); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n := 0
	for l := range bytes.Lines(raw.Bytes()) {
		out.Write(l)
		lines++
		n++
		if badEvery > 0 && n%badEvery == 0 {
			fmt.Fprintf(&out, "not json, line %d\n", lines+1)
			lines++
			bad++
		}
	}
	if badEvery > 0 {
		out.WriteString(`{"mcptrace":"wire/1"}` + "\n")
		lines++
		bad++
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return lines, bad
}

var (
	reRecords      = regexp.MustCompile(`inputs:\s+\d+ files, (\d+) records`)
	reExchanges    = regexp.MustCompile(`exchanges:\s+(\d+) written`)
	reQuarantined  = regexp.MustCompile(`quarantined:\s+(\d+) records`)
	reConservation = regexp.MustCompile(`conservation:.*\[OK\]`)
)

// summaryNumber reads the number re captures in ingest's summary.
func summaryNumber(t *testing.T, summary string, re *regexp.Regexp) int64 {
	t.Helper()
	m := re.FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("summary has no match for %s:\n%s", re, summary)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkSummary asserts a normal summary that balances, with the given
// records, exchanges and quarantined counts (-1: not checked).
func checkSummary(t *testing.T, p *ingestProc, records, exchanges, quarantined int64) {
	t.Helper()
	s := p.stdout.String()
	if !strings.Contains(s, "mcptrace ingest summary") || !reConservation.MatchString(s) {
		t.Fatalf("no balanced summary: %s", p)
	}
	for _, c := range []struct {
		re   *regexp.Regexp
		want int64
	}{{reRecords, records}, {reExchanges, exchanges}, {reQuarantined, quarantined}} {
		if got := summaryNumber(t, s, c.re); c.want >= 0 && got != c.want {
			t.Errorf("summary: %s gives %d, want %d\n%s", c.re, got, c.want, s)
		}
	}
}

var tables = []string{"exchanges", "quarantine"}

// datasetFiles lists every file under out's tables, relative to out with
// '/' separators, sorted.
func datasetFiles(t *testing.T, out string) []string {
	t.Helper()
	var files []string
	for _, table := range tables {
		root := filepath.Join(out, table)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == root {
					return nil
				}
				return err
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(out, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(files)
	return files
}

// checkDataset reads every file under out's tables with DuckDB (a file
// under a final name must be whole), fails on any file there that is not a
// visible .parquet file (a temporary file under a table), and returns the
// tables' row counts.
func checkDataset(t *testing.T, out string) (exchanges, quarantine int64) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, rel := range datasetFiles(t, out) {
		base := rel[strings.LastIndex(rel, "/")+1:]
		if !strings.HasSuffix(base, ".parquet") || strings.HasPrefix(base, ".") {
			t.Errorf("%s: not a dataset file, left under a table", rel)
			continue
		}
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM read_parquet(?)", filepath.Join(out, rel)).Scan(&n); err != nil {
			t.Errorf("%s is not a readable Parquet file under its final name: %v", rel, err)
			continue
		}
		if strings.HasPrefix(rel, "exchanges/") {
			exchanges += n
		} else {
			quarantine += n
		}
	}
	return exchanges, quarantine
}

// checkNoLeftovers fails on any ".tmp" file anywhere under out and on any
// staging area left in out/.mcptrace/staging.
func checkNoLeftovers(t *testing.T, out string) {
	t.Helper()
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(d.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	staged, err := os.ReadDir(filepath.Join(out, ".mcptrace", "staging"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range staged {
		t.Errorf("staging area left: %s", filepath.Join(out, ".mcptrace", "staging", e.Name()))
	}
}

// sourceRunID returns the run_id the manifest records for the only source.
func sourceRunID(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, ".mcptrace", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sources map[string]struct {
			RunID string `json:"run_id"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest: %v\n%s", err, b)
	}
	if len(m.Sources) != 1 {
		t.Fatalf("manifest has %d sources, want 1:\n%s", len(m.Sources), b)
	}
	for _, s := range m.Sources {
		return s.RunID
	}
	return ""
}

var reHolderPID = regexp.MustCompile(`being written by mcptrace pid (\d+) `)

// Two ingest processes started together on one -out: in every try one
// succeeds, the other fails at once with the lock's message and prints no
// summary, and the dataset holds one run's rows in whole files.
func TestConcurrentWritersOneWins(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.ndjson")
	const exchanges = 8000
	lines, bad := writeLogWithBad(t, log, synth.Options{Exchanges: exchanges, Days: 2}, 3000)
	out := filepath.Join(dir, "out") // the first try creates it, the others rerun into it
	for try := range 6 {
		a := startIngest(t, "-workers", "2", "-out", out, log)
		b := startIngest(t, "-workers", "2", "-out", out, log)
		var ended []*ingestProc
		aDone, bDone := a.done, b.done
		guard := time.After(hangGuard)
		for len(ended) < 2 {
			select {
			case <-aDone:
				ended, aDone = append(ended, a), nil
			case <-bDone:
				ended, bDone = append(ended, b), nil
			case <-guard:
				t.Fatalf("try %d: the writers did not end within %v\nA: %s\nB: %s", try, hangGuard, a, b)
			}
		}
		codeA, codeB := exitCode(a.err), exitCode(b.err)
		winner, loser := a, b
		if codeA == ExitOutput {
			winner, loser = b, a
		}
		// The log has bad lines: the winner publishes with them quarantined.
		if exitCode(winner.err) != ExitQuarantined || exitCode(loser.err) != ExitOutput {
			t.Fatalf("try %d: exits %d and %d, want one %d and one %d\nA: %s\nB: %s", try, codeA, codeB, ExitQuarantined, ExitOutput, a, b)
		}
		if ended[0] != loser {
			t.Errorf("try %d: the loser did not fail at once: it ended after the winner\nloser: %s", try, loser)
		}
		msg := loser.stderr.String()
		if want := fmt.Sprintf("dataset %s is being written by", out); !strings.Contains(msg, want) {
			t.Errorf("try %d: the loser's stderr does not say %q:\n%s", try, want, msg)
		}
		if m := reHolderPID.FindStringSubmatch(msg); m == nil {
			t.Logf("try %d: the lock's message names no holder: %s", try, msg)
		} else if m[1] != strconv.Itoa(winner.cmd.Process.Pid) {
			t.Logf("try %d: the lock's message names pid %s, the winner is pid %d", try, m[1], winner.cmd.Process.Pid)
		}
		if s := loser.stdout.String(); s != "" {
			t.Errorf("try %d: the loser printed on stdout:\n%s", try, s)
		}
		checkSummary(t, winner, lines, exchanges, bad)
		ex, q := checkDataset(t, out)
		if ex != exchanges || q != bad {
			t.Errorf("try %d: dataset holds %d exchanges and %d quarantine rows, want %d and %d", try, ex, q, exchanges, bad)
		}
		checkNoLeftovers(t, out)
		if t.Failed() {
			t.FailNow()
		}
	}
}

// With -wait-lock, a second writer waits for the first instead of
// failing, then replaces its rows.
func TestWaitLockWaitsForTheWriter(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.ndjson")
	const exchanges = 8000
	lines, bad := writeLogWithBad(t, log, synth.Options{Exchanges: exchanges, Days: 2}, 3000)
	out := filepath.Join(dir, "out")
	a := startIngest(t, "-workers", "2", "-out", out, log)
	lock := filepath.Join(out, ".mcptrace", "lock")
	holder := fmt.Sprintf(`"pid":%d,`, a.cmd.Process.Pid)
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(lock); strings.Contains(string(b), holder) {
			break
		}
		if a.exited() || time.Now().After(deadline) {
			t.Fatalf("the first writer never held the lock %s: %s", lock, a)
		}
	}
	b := startIngest(t, "-wait-lock", "-workers", "2", "-out", out, log)
	if a.exited() {
		t.Fatalf("the first writer ended before the second started: waiting was not exercised (make the log bigger)\n%s", a)
	}
	if code := a.wait(t, hangGuard); code != ExitQuarantined {
		t.Fatalf("first writer: exit %d\n%s", code, a)
	}
	if code := b.wait(t, hangGuard); code != ExitQuarantined {
		t.Fatalf("second writer with -wait-lock: exit %d, want %d\n%s", code, ExitQuarantined, b)
	}
	if strings.Contains(b.stderr.String(), "is being written by") {
		t.Errorf("the second writer reported the lock instead of waiting:\n%s", b.stderr)
	}
	checkSummary(t, a, lines, exchanges, bad)
	checkSummary(t, b, lines, exchanges, bad)
	if id, want := sourceRunID(t, out), fmt.Sprintf("-%d", b.cmd.Process.Pid); !strings.HasSuffix(id, want) {
		t.Errorf("the manifest's source was last written by run %s, not by the waiting writer (pid %d)", id, b.cmd.Process.Pid)
	}
	if ex, q := checkDataset(t, out); ex != exchanges || q != bad {
		t.Errorf("dataset holds %d exchanges and %d quarantine rows, want %d and %d (the second run replaces the first)", ex, q, exchanges, bad)
	}
	checkNoLeftovers(t, out)
}

// quarantineRows returns a quarantine file's rows without the run-time
// column observed_at, sorted, one string a row.
func quarantineRows(t *testing.T, db *sql.DB, path string) []string {
	t.Helper()
	rows, err := db.Query("SELECT CAST(q AS VARCHAR) FROM (SELECT * EXCLUDE (observed_at) FROM read_parquet(?)) q ORDER BY 1", path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameDataset asserts that got holds the files of want: the same paths,
// byte-identical exchange files, and quarantine files with the same rows
// but for observed_at. It returns how many quarantine rows it compared.
func sameDataset(t *testing.T, got, want string) (quarantineCompared int) {
	t.Helper()
	gf, wf := datasetFiles(t, got), datasetFiles(t, want)
	if !slices.Equal(gf, wf) {
		t.Errorf("files differ from the clean run's:\n got  %v\n want %v", gf, wf)
		return 0
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, rel := range gf {
		g, w := filepath.Join(got, rel), filepath.Join(want, rel)
		if strings.HasPrefix(rel, "exchanges/") {
			gb, err1 := os.ReadFile(g)
			wb, err2 := os.ReadFile(w)
			if err1 != nil || err2 != nil {
				t.Fatal(errors.Join(err1, err2))
			}
			if !bytes.Equal(gb, wb) {
				t.Errorf("%s differs from the clean run's file (%d bytes, want %d)", rel, len(gb), len(wb))
			}
			continue
		}
		gr, wr := quarantineRows(t, db, g), quarantineRows(t, db, w)
		if !slices.Equal(gr, wr) {
			t.Errorf("%s: rows differ from the clean run's (observed_at aside):\n got  %v\n want %v", rel, gr, wr)
		}
		quarantineCompared += len(gr)
	}
	return quarantineCompared
}

// copyDir copies the regular files and directories of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stagedFile reports whether a finished (renamed, not temporary) file is
// in out's staging area.
func stagedFile(out string) bool {
	found := false
	filepath.WalkDir(filepath.Join(out, ".mcptrace", "staging"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// A SIGKILL at any moment, then a rerun of the same command, gives the
// dataset a clean run gives; the files the killed run left under final
// names are whole.
func TestSIGKILLThenRerunEqualsCleanRun(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.ndjson")
	const exchanges = 15000
	lines, bad := writeLogWithBad(t, log, synth.Options{Exchanges: exchanges, Days: 4}, 3000)
	// Small files, so that finished files appear in staging while the run
	// goes on.
	args := func(out string) []string { return []string{"-workers", "2", "-roll-rows", "2000", "-out", out, log} }
	clean := filepath.Join(dir, "clean")
	p, code := runIngestProc(t, args(clean)...)
	if code != ExitQuarantined {
		t.Fatalf("clean run: exit %d\n%s", code, p)
	}
	checkSummary(t, p, lines, exchanges, bad)
	if ex, q := checkDataset(t, clean); ex != exchanges || q != bad {
		t.Fatalf("clean run: %d exchanges and %d quarantine rows, want %d and %d", ex, q, exchanges, bad)
	}
	for _, c := range []struct {
		name     string
		delay    time.Duration // 0: kill once a finished file is in staging
		existing bool          // the run replaces a complete dataset (a copy of the clean run's)
	}{
		{"50ms", 50 * time.Millisecond, false},
		{"300ms", 300 * time.Millisecond, false},
		{"1s-over-dataset", time.Second, true},
		{"staged-over-dataset", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "kill-"+c.name)
			if c.existing {
				copyDir(t, clean, out)
			}
			k := startIngest(t, args(out)...)
			if c.delay > 0 {
				time.Sleep(c.delay)
			} else {
				for !stagedFile(out) && !k.exited() {
					time.Sleep(500 * time.Microsecond)
				}
				t.Logf("finished files in staging: %v", stagedFile(out))
			}
			k.cmd.Process.Signal(syscall.SIGKILL)
			switch code := k.wait(t, hangGuard); code {
			case 128 + int(syscall.SIGKILL):
			case ExitQuarantined: // the log has bad lines
				t.Logf("the run ended before the kill")
			default:
				t.Fatalf("killed run: exit %d\n%s", code, k)
			}
			ex, q := checkDataset(t, out) // whatever the kill left under final names is whole
			t.Logf("the kill left %d files (%d exchanges, %d quarantine rows) under final names", len(datasetFiles(t, out)), ex, q)
			r, code := runIngestProc(t, args(out)...)
			if code != ExitQuarantined {
				t.Fatalf("rerun after the kill: exit %d\n%s", code, r)
			}
			checkSummary(t, r, lines, exchanges, bad)
			if ex, q := checkDataset(t, out); ex != exchanges || q != bad {
				t.Errorf("after the rerun: %d exchanges and %d quarantine rows, want %d and %d", ex, q, exchanges, bad)
			}
			checkNoLeftovers(t, out)
			if n := sameDataset(t, out, clean); n != int(bad) && !t.Failed() {
				t.Errorf("compared %d quarantine rows, want %d", n, bad)
			}
		})
	}
}

// A forced format on an endless input ends at the document limit with one
// quarantined record naming it; with the default limit, a SIGTERM stops
// the run with ExitStopped.
func TestForcedFormatOnEndlessInput(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"wire", "har"} {
		t.Run(format+"/limit", func(t *testing.T) {
			out := t.TempDir()
			p, code := runIngestProc(t, "-out", out, "-format", format, "-max-document", "4194304", "/dev/zero")
			if code != ExitQuarantined {
				t.Fatalf("exit %d, want %d\n%s", code, ExitQuarantined, p)
			}
			checkSummary(t, p, 1, 0, 1)
			if !regexp.MustCompile(`document_too_large\s+1\n`).MatchString(p.stdout.String()) {
				t.Errorf("summary does not count the record as document_too_large:\n%s", p.stdout)
			}
			ex, q := checkDataset(t, out)
			if ex != 0 || q != 1 {
				t.Fatalf("dataset holds %d exchanges and %d quarantine rows, want 0 and 1", ex, q)
			}
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var reason, detail string
			if err := db.QueryRow("SELECT reason, detail FROM read_parquet(?)", filepath.Join(out, "quarantine", "*", "*.parquet")).Scan(&reason, &detail); err != nil {
				t.Fatal(err)
			}
			if reason != "document_too_large" || !strings.Contains(detail, "4194304") {
				t.Errorf("quarantine row: reason %q, detail %q; want document_too_large naming the 4194304-byte limit", reason, detail)
			}
		})
		t.Run(format+"/sigterm", func(t *testing.T) {
			out := t.TempDir()
			p := startIngest(t, "-out", out, "-format", format, "/dev/zero")
			// The handler is installed before "ingest started" is logged.
			for !strings.Contains(p.stderr.String(), "ingest started") {
				if p.exited() {
					t.Fatalf("ended before it started: %s", p)
				}
				time.Sleep(time.Millisecond)
			}
			p.cmd.Process.Signal(syscall.SIGTERM)
			if code := p.wait(t, 60*time.Second); code != ExitStopped {
				t.Fatalf("exit %d after SIGTERM, want %d\n%s", code, ExitStopped, p)
			}
			s := p.stdout.String()
			if !strings.Contains(s, "stopped early:") || !reConservation.MatchString(s) {
				t.Errorf("summary does not say the run stopped early, or does not balance:\n%s", s)
			}
			checkDataset(t, out)
			checkNoLeftovers(t, out)
		})
	}
}

// A pipe given as a path (bash's <(...)) and a FIFO are read whole: the
// format sniffing loses no byte and the FIFO does not block.
func TestPipeAsPathLosesNothing(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.ndjson")
	const exchanges = 6000 // about 6 MiB
	lines, bad := writeLogWithBad(t, log, synth.Options{Exchanges: exchanges, Days: 2}, 2500)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal(err)
	}
	t.Run("process-substitution", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command("bash", "-c", `exec "$0" -out "$1" <(cat "$2")`, ingestBinary(t), out, log)
		p := startProc(t, cmd)
		if code := p.wait(t, hangGuard); code != ExitQuarantined {
			t.Fatalf("exit %d\n%s", code, p)
		}
		checkSummary(t, p, lines, exchanges, bad)
		if ex, q := checkDataset(t, out); ex != exchanges || q != bad {
			t.Errorf("dataset holds %d exchanges and %d quarantine rows, want %d and %d", ex, q, exchanges, bad)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		tmp := t.TempDir()
		fifo := filepath.Join(tmp, "log.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		written := make(chan error, 1)
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until ingest opens it
			if err != nil {
				written <- err
				return
			}
			_, err = w.Write(data)
			written <- errors.Join(err, w.Close())
		}()
		out := filepath.Join(tmp, "out")
		p := startIngest(t, "-out", out, fifo)
		code := p.wait(t, hangGuard)
		select {
		case err := <-written:
			if err != nil {
				t.Errorf("the FIFO's writer failed: %v", err)
			}
		case <-time.After(10 * time.Second):
			// ingest never opened the FIFO: open its read end so the writer ends.
			if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				r.Close()
			}
			t.Errorf("the FIFO's writer was left blocked after ingest ended")
		}
		if code != ExitQuarantined {
			t.Fatalf("exit %d\n%s", code, p)
		}
		checkSummary(t, p, lines, exchanges, bad)
		if ex, q := checkDataset(t, out); ex != exchanges || q != bad {
			t.Errorf("dataset holds %d exchanges and %d quarantine rows, want %d and %d", ex, q, exchanges, bad)
		}
	})
}

// snapshotDataset maps every file of out but the lock to its SHA-256.
func snapshotDataset(t *testing.T, out string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			snap[rel+"/"] = "dir"
			return nil
		}
		if rel == ".mcptrace/lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		snap[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	slices.Sort(d)
	return d
}

// A run that fills the filesystem fails with a message naming the path
// and the cause, and leaves the dataset exactly as it was, whether it adds
// a source or reruns one; the next run finds nothing of it left.
func TestFullDiskLeavesDatasetAsItWas(t *testing.T) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Logf("mounting a tmpfs is not permitted here (%v): no full-disk test on a real filesystem", err)
			return
		}
		t.Fatalf("mounting a 2 MiB tmpfs on %s: %v", mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmounting %s: %v", mnt, err)
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})
	dir := t.TempDir() // the logs live off the tmpfs
	small := filepath.Join(dir, "small.ndjson")
	smallLines, smallBad := writeLogWithBad(t, small, synth.Options{Exchanges: 300}, 100)
	smallData, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.ndjson")
	writeSynth(t, big, synth.Options{Exchanges: 8000, Days: 2})

	out := filepath.Join(mnt, "out")
	p, code := runIngestProc(t, "-out", out, small)
	if code != ExitQuarantined {
		t.Fatalf("good run into the tmpfs: exit %d\n%s", code, p)
	}
	checkSummary(t, p, smallLines, 300, smallBad)
	if ex, q := checkDataset(t, out); ex != 300 || q != smallBad {
		t.Fatalf("good run: %d exchanges and %d quarantine rows, want 300 and %d", ex, q, smallBad)
	}
	before := snapshotDataset(t, out)

	// Leave about 192 KiB free: the big log's output (about 390 KiB of
	// Parquet) cannot fit; the small log's (about 35 KiB, staged beside the
	// files it replaces) can.
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if fill := free - 192<<10; fill > 0 {
		if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, fill), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	overflow := func(name string, args ...string) {
		t.Helper()
		p, code := runIngestProc(t, args...)
		if code != ExitOutput {
			t.Fatalf("%s: exit %d on a full filesystem, want %d\n%s", name, code, ExitOutput, p)
		}
		msg := p.stderr.String()
		if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, out+string(filepath.Separator)) {
			t.Errorf("%s: the message does not name a path under %s and \"no space left on device\":\n%s", name, out, msg)
		}
		if !strings.Contains(msg, "the dataset is as it was before this run") {
			t.Errorf("%s: the message does not say the dataset is as it was:\n%s", name, msg)
		}
		if strings.Contains(p.stdout.String(), "wrote ") {
			t.Errorf("%s: the failed run's summary claims files were written:\n%s", name, p.stdout)
		}
		if d := diffSnapshots(before, snapshotDataset(t, out)); len(d) > 0 {
			t.Errorf("%s: the dataset changed although the run failed: %v", name, d)
		}
		if ex, q := checkDataset(t, out); ex != 300 || q != smallBad {
			t.Errorf("%s: after the failure the dataset holds %d exchanges and %d quarantine rows, want 300 and %d", name, ex, q, smallBad)
		}
	}
	// A new source that does not fit.
	overflow("new source", "-out", out, big)
	// A rerun of the dataset's own source, grown past the free space.
	bigData, err := os.ReadFile(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, bigData, 0o644); err != nil {
		t.Fatal(err)
	}
	overflow("rerun of the same source", "-out", out, small)

	// The small log again: it fits, and its run (its Open) leaves nothing of
	// the failed runs behind.
	if err := os.WriteFile(small, smallData, 0o644); err != nil {
		t.Fatal(err)
	}
	p, code = runIngestProc(t, "-out", out, small)
	if code != ExitQuarantined {
		t.Fatalf("run after the failures: exit %d\n%s", code, p)
	}
	checkSummary(t, p, smallLines, 300, smallBad)
	checkNoLeftovers(t, out)
	if ex, q := checkDataset(t, out); ex != 300 || q != smallBad {
		t.Errorf("run after the failures: %d exchanges and %d quarantine rows, want 300 and %d", ex, q, smallBad)
	}
	after := snapshotDataset(t, out)
	for rel, sum := range before {
		if strings.HasPrefix(rel, "exchanges/") && after[rel] != sum {
			t.Errorf("%s: not byte-identical to the first run's file (same input, same key)", rel)
		}
	}
}
