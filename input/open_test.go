package input

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"mcptrace/decode"
	"mcptrace/schema"
)

func gzipBytes(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zlibBytes(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zstdBytes(t testing.TB, data []byte) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

// openFile writes data to a file and opens it as Expand lists it.
func openFile(t *testing.T, name string, data []byte) *Reader {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	write(t, p, data)
	in, _, err := Expand([]string{p}, Options{})
	if err != nil || len(in) != 1 {
		t.Fatalf("Expand: %v", err)
	}
	r, err := Open(in[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestOpenUndoesCompression(t *testing.T) {
	data := wireLog(4000)
	for _, c := range []struct {
		comp string
		raw  []byte
	}{{"", data}, {Gzip, gzipBytes(t, data)}, {Zlib, zlibBytes(t, data)}, {Zstd, zstdBytes(t, data)}} {
		r := openFile(t, "log.bin", c.raw) // the name says nothing
		if r.Compression() != c.comp {
			t.Errorf("%q: compression %q", c.comp, r.Compression())
		}
		head, err := r.Head()
		if err != nil || !bytes.Equal(head, data[:decode.SniffBytes]) {
			t.Fatalf("%q: head %v, %d bytes", c.comp, err, len(head))
		}
		if f, ok := decode.Detect(head); !ok || f != decode.FormatWire {
			t.Errorf("%q: detected %q", c.comp, f)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%q: read %v, %d of %d bytes", c.comp, err, len(got), len(data))
		}
		if r.Bytes() != int64(len(data)) || r.RawBytes() != int64(len(c.raw)) {
			t.Errorf("%q: counted %d decompressed, %d raw; want %d, %d", c.comp, r.Bytes(), r.RawBytes(), len(data), len(c.raw))
		}
		if !strings.HasPrefix(r.ID(), "file:/") {
			t.Errorf("id %s", r.ID())
		}
	}
}

// A compressed input cut before its first decodable byte must say so, not
// read as an empty file.
func TestCutStreamWithNoDataIsCorrupt(t *testing.T) {
	data := wireLog(4000)
	for _, c := range []struct {
		comp string
		raw  []byte
	}{
		{Gzip, gzipBytes(t, data)[:16]}, // header whole, deflate cut
		{Gzip, gzipBytes(t, data)[:5]},  // header cut
		{Zstd, zstdBytes(t, data)[:16]}, // frame header, block cut
		{Zlib, zlibBytes(t, data)[:8]},
	} {
		r := openFile(t, "cut.log.gz", c.raw)
		head, err := r.Head()
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s cut at %d: head %d bytes, err %v; want a *CorruptError", c.comp, len(c.raw), len(head), err)
		}
		if len(head) != 0 || ce.Offset != 0 || ce.RawOffset <= 0 || ce.RawOffset > int64(len(c.raw)) || ce.Compression != c.comp {
			t.Errorf("%s cut at %d: head %d, %+v", c.comp, len(c.raw), len(head), ce)
		}
		msg := ce.Error()
		if !strings.Contains(msg, "cut.log.gz") || !strings.Contains(msg, "yields no data") || !strings.Contains(msg, "copy it again") {
			t.Errorf("message: %s", msg)
		}
		// Reading says the same, every time.
		for range 2 {
			n, err := r.Read(make([]byte, 100))
			if n != 0 || !errors.As(err, &ce) {
				t.Errorf("%s read: %d %v", c.comp, n, err)
			}
		}
	}
}

func TestMidStreamFailureHasOffsets(t *testing.T) {
	data := wireLog(20000)
	gz := gzipBytes(t, data)
	zs := zstdBytes(t, data)
	corrupt := func(b []byte) []byte {
		b = bytes.Clone(b)
		for i := len(b) / 2; i < len(b)/2+64; i++ {
			b[i] ^= 0xa5
		}
		return b
	}
	for _, c := range []struct {
		what string
		raw  []byte
	}{
		{"gzip corrupt in the middle", corrupt(gz)},
		{"gzip cut in the middle", gz[:len(gz)/2]},
		{"zstd corrupt in the middle", corrupt(zs)},
		{"zstd cut in the middle", zs[:len(zs)/2]},
	} {
		r := openFile(t, "mid.log", c.raw)
		got, err := io.ReadAll(r)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err %v after %d bytes, want a *CorruptError", c.what, err, len(got))
		}
		if ce.Offset != int64(len(got)) || ce.Offset == 0 || r.Bytes() != ce.Offset {
			t.Errorf("%s: offset %d, %d bytes delivered", c.what, ce.Offset, len(got))
		}
		if !bytes.Equal(got, data[:len(got)]) && !strings.Contains(c.what, "corrupt") {
			t.Errorf("%s: the bytes before the cut differ", c.what)
		}
		if ce.RawOffset <= 0 || ce.RawOffset > int64(len(c.raw)) {
			t.Errorf("%s: raw offset %d of %d", c.what, ce.RawOffset, len(c.raw))
		}
		if !strings.Contains(ce.Error(), "breaks at compressed byte") || !strings.Contains(ce.Error(), "mid.log") {
			t.Errorf("message: %s", ce.Error())
		}
	}
}

func TestStdinFingerprint(t *testing.T) {
	data := wireLog(6000)
	idOf := func(content, want []byte) string {
		t.Helper()
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = pr
		defer func() { os.Stdin = old; pr.Close() }()
		done := make(chan struct{})
		go func() { pw.Write(content); pw.Close(); close(done) }()
		r, err := Open(Input{Name: StdinName, Path: StdinName, Kind: Stdin})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		<-done
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("stdin read %v, %d of %d bytes", err, len(got), len(want))
		}
		return r.ID()
	}
	id := func(content []byte) string { return idOf(content, content) }
	first := id(data)
	if !strings.HasPrefix(first, "stdin:sha256:") || len(first) != len("stdin:sha256:")+64 {
		t.Fatalf("id %s", first)
	}
	// The same log grown: the same identity, so it replaces its earlier run.
	if grown := id(append(bytes.Clone(data), wireLog(100)...)); grown != first {
		t.Errorf("grown log: %s, was %s", grown, first)
	}
	if other := id(wireLog(5999)[1:]); other == first {
		t.Errorf("another log has the same identity")
	}
	// Compressed: the raw bytes are fingerprinted.
	if z := gzipBytes(t, data); idOf(z, data) == first || idOf(z, data) != Fingerprint(z[:IDPrefix(z)]) {
		t.Errorf("gzip stdin: %s", idOf(z, data))
	}
	if empty := id(nil); empty != "stdin:sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("empty stdin: %s", empty)
	}
}

// TestBOMWireLogThroughOneReader: a wire log that starts with a byte order
// mark, compressed, through a pipe: detected from the head, then every line
// of the same reader decodes, the first one included.
func TestBOMWireLogThroughOneReader(t *testing.T) {
	seed, err := os.ReadFile("../samples/seed/client.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	data := append([]byte("\xef\xbb\xbf"), seed...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() { pw.Write(gzipBytes(t, data)); pw.Close() }()
	r, err := Open(Input{Name: "/dev/fd/x", Path: "/dev/fd/" + itoa(pr.Fd()), Kind: Pipe})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Head()
	if f, ok := decode.Detect(head); err != nil || !ok || f != decode.FormatWire {
		t.Fatalf("detected %q %v", f, err)
	}
	lines := 0
	err = decode.ReadLines(r, decode.LineOptions{}, func(l decode.Line) error {
		if decode.IsBlank(l.Text) {
			return nil
		}
		lines++
		if _, err := decode.WireLine(l.Text, schema.Position{Source: "x", Line: l.No}); err != nil {
			t.Errorf("line %d: %v", l.No, err)
		}
		return nil
	})
	if err != nil || lines != bytes.Count(bytes.TrimSpace(seed), []byte("\n"))+1 {
		t.Fatalf("%v, %d lines", err, lines)
	}
}

func itoa(fd uintptr) string { return strconv.FormatUint(uint64(fd), 10) }

// TestNoGoroutinesLeft: the zstd decoder runs on the reading goroutine, so
// there is nothing to join after Close.
func TestNoGoroutinesLeft(t *testing.T) {
	data := wireLog(20000)
	raw := zstdBytes(t, data)
	before := runtime.NumGoroutine()
	for range 5 {
		r := openFile(t, "log.zst", raw)
		if _, err := io.CopyN(io.Discard, r, 512<<10); err != nil {
			t.Fatal(err)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines while reading, %d before", n, before)
		}
		r.Close()
	}
}

// A stream's identity does not depend on how fast it arrives, a quiet live
// stream is opened once its first line is in, and a stop ends the wait for
// a stream that sends nothing.
func TestStreamHeadTiming(t *testing.T) {
	data := wireLog(300)
	openPipe := func(write func(w *os.File)) (*Reader, error) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pr.Close(); pw.Close() })
		go write(pw)
		return OpenWith(Input{Name: "/dev/fd/x", Path: "/dev/fd/" + itoa(pr.Fd()), Kind: Pipe}, OpenOptions{HeadWait: 20 * time.Millisecond, Stop: func() bool { return false }})
	}
	whole, err := openPipe(func(w *os.File) { w.Write(data); w.Close() })
	if err != nil {
		t.Fatal(err)
	}
	trickled, err := openPipe(func(w *os.File) {
		for i := 0; i < 400 && i < len(data); i += 40 {
			w.Write(data[i:min(i+40, len(data))])
			time.Sleep(30 * time.Millisecond) // pauses longer than HeadWait
		}
		w.Write(data[min(400, len(data)):])
		w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if whole.ID() != trickled.ID() {
		t.Errorf("the same stream sent at two speeds has two identities: %s, %s", whole.ID(), trickled.ID())
	}
	// A live stream: its first line, then silence. Open returns (the test
	// would hang otherwise) with a head that holds the line.
	first := []byte(`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00.000Z","side":"client","connection":"c1"}` + "\n")
	quiet, err := openPipe(func(w *os.File) { w.Write(first) }) // never closed until cleanup
	if err != nil {
		t.Fatal(err)
	}
	if head, err := quiet.Head(); err != nil || !bytes.Equal(head, first) {
		t.Errorf("quiet stream head %q, %v", head, err)
	}
	// Nothing at all, and a stop: Open returns and Head says stopped.
	var stop atomic.Bool
	pr, pw, _ := os.Pipe()
	t.Cleanup(func() { pr.Close(); pw.Close() })
	time.AfterFunc(100*time.Millisecond, func() { stop.Store(true) })
	r, err := OpenWith(Input{Name: "/dev/fd/y", Path: "/dev/fd/" + itoa(pr.Fd()), Kind: Pipe}, OpenOptions{HeadWait: 20 * time.Millisecond, Stop: stop.Load})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(); !errors.Is(err, ErrStopped) {
		t.Errorf("Head after a stop: %v, want ErrStopped", err)
	}
}
