package input

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wireLog is a log of n wire-ish lines.
func wireLog(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"mcptrace":1,"seq":%d,"pad":"%s"}`+"\n", i, strings.Repeat("x", i%97))
	}
	return b.Bytes()
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// expandSoon runs Expand and fails the test if it has not returned after a
// long while (it would hang on a FIFO or a symlink loop otherwise).
func expandSoon(t *testing.T, paths []string, opt Options) ([]Input, []Skipped, error) {
	t.Helper()
	type result struct {
		in  []Input
		sk  []Skipped
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, sk, err := Expand(paths, opt)
		done <- result{in, sk, err}
	}()
	select {
	case r := <-done:
		return r.in, r.sk, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("Expand(%v) did not return: it blocks", paths)
		return nil, nil, nil
	}
}

func names(in []Input) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.Name)
	}
	return out
}

func reasons(sk []Skipped) map[string]int {
	m := map[string]int{}
	for _, s := range sk {
		m[s.Reason]++
	}
	return m
}

// TestFIFONeverOpenedByExpand: listing a FIFO must not open it (that blocks
// until a writer comes, and closing it loses the writer's data); Open then
// reads everything the writer sent.
func TestFIFONeverOpenedByExpand(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "live.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	in, sk, err := expandSoon(t, []string{fifo}, Options{})
	if err != nil || len(in) != 1 || len(sk) != 0 {
		t.Fatalf("Expand: %v %+v %+v", err, in, sk)
	}
	if in[0].Kind != Pipe || in[0].ID != "" || in[0].Path != fifo {
		t.Fatalf("FIFO listed as %+v", in[0])
	}
	data := wireLog(5000) // well over the 64 KiB head
	werr := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.Write(data)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		werr <- err
	}()
	r, err := Open(in[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Head()
	if err != nil || !bytes.Equal(head, data[:len(head)]) || len(head) == 0 {
		t.Fatalf("head: %v, %d bytes", err, len(head))
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-werr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes of the %d the writer sent", len(got), len(data))
	}
	if r.ID() != Fingerprint(data[:IDPrefix(data)]) || r.Bytes() != int64(len(data)) || r.RawBytes() != int64(len(data)) {
		t.Errorf("id %s bytes %d raw %d", r.ID(), r.Bytes(), r.RawBytes())
	}
}

// TestPipeAsPath is `ingest <(cat log)`: a pipe named /dev/fd/N. Peeking its
// head (format detection, the side of the log) must not lose a byte of it.
func TestPipeAsPath(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	data := wireLog(6000)
	if len(data) < 200<<10 {
		t.Fatalf("only %d bytes", len(data))
	}
	werr := make(chan error, 1)
	go func() {
		_, err := pw.Write(data)
		pw.Close()
		werr <- err
	}()
	path := fmt.Sprintf("/dev/fd/%d", pr.Fd())
	in, sk, err := expandSoon(t, []string{path}, Options{})
	if err != nil || len(in) != 1 || len(sk) != 0 || in[0].Kind != Pipe {
		t.Fatalf("Expand: %v %+v %+v", err, in, sk)
	}
	r, err := Open(in[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Head()
	if err != nil || len(head) != 64<<10 || !bytes.Equal(head, data[:64<<10]) {
		t.Fatalf("head: %v, %d bytes", err, len(head))
	}
	// Peek again (another stage asks): still the head.
	if p, _ := r.Peek(10); !bytes.Equal(p, data[:10]) {
		t.Fatalf("peek: %q", p)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes of %d (first byte %q)", len(got), len(data), got[:min(len(got), 1)])
	}
}

func TestSymlinksFollowed(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "elsewhere", "real.log"), wireLog(3))
	write(t, filepath.Join(root, "elsewhere", "sub", "b.log"), wireLog(2))
	write(t, filepath.Join(root, "logs", "a.log"), wireLog(1))
	symlink(t, "../elsewhere/real.log", filepath.Join(root, "logs", "cur.log"))
	symlink(t, "../elsewhere/sub", filepath.Join(root, "logs", "sub"))
	in, sk, err := expandSoon(t, []string{filepath.Join(root, "logs")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"logs/a.log", "logs/cur.log", "logs/sub/b.log"}
	got := names(in)
	for i := range got {
		got[i], _ = filepath.Rel(root, got[i])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(sk) != 0 {
		t.Fatalf("inputs %v skipped %+v, want %v", got, sk, want)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(root, "elsewhere", "real.log"))
	if in[1].ID != "file:"+real || in[1].Path != real || in[1].Kind != File || in[1].Size != int64(len(wireLog(3))) {
		t.Errorf("symlinked file: %+v", in[1])
	}
}

func TestSymlinkLoopsReportedNotFollowed(t *testing.T) {
	root := t.TempDir()
	logs := filepath.Join(root, "logs")
	write(t, filepath.Join(logs, "a.log"), wireLog(1))
	write(t, filepath.Join(logs, "deep", "b.log"), wireLog(1))
	symlink(t, "..", filepath.Join(logs, "deep", "up"))      // back to logs
	symlink(t, ".", filepath.Join(logs, "self"))             // logs itself
	symlink(t, "loop2", filepath.Join(logs, "loop1"))        // loop1 -> loop2 -> loop1
	symlink(t, "loop1", filepath.Join(logs, "loop2"))        //
	symlink(t, "missing.log", filepath.Join(logs, "broken")) // nothing there
	in, sk, err := expandSoon(t, []string{logs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 {
		t.Fatalf("inputs %v", names(in))
	}
	r := reasons(sk)
	if r[SkipSymlinkLoop] != 4 || r[SkipBrokenLink] != 1 || len(sk) != 5 {
		t.Fatalf("skipped %+v", sk)
	}
	// Named on the command line, a loop or a broken link is an error.
	for _, p := range []string{filepath.Join(logs, "loop1"), filepath.Join(logs, "broken")} {
		if _, _, err := expandSoon(t, []string{p}, Options{}); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "fix the link") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestExcludedDatasetNeverRead(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.log"), wireLog(1))
	write(t, filepath.Join(root, "out", "exchanges", "dt=2025-01-01", "part-0.parquet"), []byte("PAR1..."))
	write(t, filepath.Join(root, "out", "manifest.json"), []byte("{}"))
	symlink(t, "out/exchanges/dt=2025-01-01/part-0.parquet", filepath.Join(root, "latest.parquet"))
	symlink(t, "out", filepath.Join(root, "dataset"))
	// The -out flag spelled through a symlink and relative to the working
	// directory: still the same directory.
	t.Chdir(root)
	for _, ex := range []string{"out", "./dataset", filepath.Join(root, "out") + "/"} {
		in, sk, err := expandSoon(t, []string{root}, Options{Exclude: []string{ex}})
		if err != nil {
			t.Fatal(err)
		}
		if len(in) != 1 || in[0].Name != filepath.Join(root, "a.log") {
			t.Fatalf("exclude %s: inputs %v", ex, names(in))
		}
		if r := reasons(sk); r[SkipExcluded] != 3 || len(sk) != 3 { // dataset, latest.parquet, out
			t.Fatalf("exclude %s: skipped %+v", ex, sk)
		}
	}
	// Named outright, it is skipped too.
	in, sk, err := expandSoon(t, []string{"out/manifest.json", "out", "a.log"}, Options{Exclude: []string{"out"}})
	if err != nil || len(in) != 1 || reasons(sk)[SkipExcluded] != 2 {
		t.Fatalf("named: %v %v %+v", err, names(in), sk)
	}
	// An -out that does not exist yet excludes nothing.
	in, _, err = expandSoon(t, []string{root}, Options{Exclude: []string{"new-out"}})
	if err != nil || len(in) != 3 {
		t.Fatalf("missing exclude: %v %v", err, names(in))
	}
}

func TestSkipReasonsCounted(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.log"), wireLog(1))
	write(t, filepath.Join(root, ".hidden.log"), wireLog(1))
	write(t, filepath.Join(root, ".git", "HEAD.log"), wireLog(1))
	write(t, filepath.Join(root, "README.md"), []byte("# logs"))
	write(t, filepath.Join(root, "gen.go"), []byte("package main"))
	if err := os.Link(filepath.Join(root, "a.log"), filepath.Join(root, "b-hardlink.log")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "p.fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	in, sk, err := expandSoon(t, []string{root, filepath.Join(root, "a.log"), "-", "-"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 || in[0].Name != filepath.Join(root, "a.log") || in[1].Kind != Stdin || in[1].Name != "-" {
		t.Fatalf("inputs %+v", in)
	}
	want := map[string]int{SkipHidden: 2, SkipNotLog: 2, SkipNotRegular: 2, SkipDuplicate: 3}
	got := reasons(sk)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("skip counts %v, want %v: %+v", got, want, sk)
	}
	for _, s := range sk {
		if s.Name == "" || s.Detail == "" {
			t.Errorf("skip without name or detail: %+v", s)
		}
	}
	// A socket named outright is an error that says what to name instead.
	if _, _, err := Expand([]string{filepath.Join(root, "s.sock")}, Options{}); err == nil || !strings.Contains(err.Error(), "socket") {
		t.Errorf("socket: %v", err)
	}
}

func TestIdentityOfEverySpelling(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "logs", "a"), wireLog(1))
	symlink(t, "logs/a", filepath.Join(root, "link"))
	symlink(t, "logs", filepath.Join(root, "dirlink"))
	t.Chdir(root)
	spellings := []string{"logs/a", "./logs/a", filepath.Join(root, "logs", "a"), "link", "logs", "dirlink", "logs/../logs/a", "dirlink/a", "lo*s/a"}
	var ids []string
	for _, s := range spellings {
		in, _, err := expandSoon(t, []string{s}, Options{})
		if err != nil || len(in) != 1 {
			t.Fatalf("%s: %v %+v", s, err, in)
		}
		ids = append(ids, in[0].ID)
		r, err := Open(in[0])
		if err != nil {
			t.Fatal(err)
		}
		if r.ID() != in[0].ID {
			t.Errorf("%s: opened as %s, listed as %s", s, r.ID(), in[0].ID)
		}
		r.Close()
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(root, "logs", "a"))
	for i, id := range ids {
		if id != "file:"+real {
			t.Errorf("%s: identity %s, want file:%s", spellings[i], id, real)
		}
	}
	// All at once: one input, the rest duplicates.
	in, sk, err := expandSoon(t, spellings, Options{})
	if err != nil || len(in) != 1 || in[0].Name != "logs/a" || reasons(sk)[SkipDuplicate] != len(spellings)-1 {
		t.Fatalf("together: %v %v %+v", err, names(in), sk)
	}
}

func TestExpandErrors(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "x", "b.log"), wireLog(1))
	write(t, filepath.Join(root, "x", "a.log"), wireLog(1))
	cases := map[string]string{
		filepath.Join(root, "nope.log"): "does not exist: check the path",
		filepath.Join(root, "*.nope"):   "matched no files: check the pattern",
		filepath.Join(root, "[x"):       "is malformed",
	}
	for p, want := range cases {
		_, _, err := Expand([]string{p}, Options{})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
	in, _, err := Expand([]string{filepath.Join(root, "x", "*.log")}, Options{})
	if err != nil || len(in) != 2 || filepath.Base(in[0].Name) != "a.log" {
		t.Fatalf("glob: %v %v", err, names(in))
	}
}
