package input

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"mcptrace/decode"
)

// bufSize is the read buffer of an input, raw and decompressed: larger than
// decode.SniffBytes, so the head can be peeked whole.
const bufSize = 256 << 10

// The compressions Open undoes, as Reader.Compression names them.
const (
	Gzip = "gzip"
	Zlib = "zlib"
	Zstd = "zstd"
)

// Reader reads one opened input: the decompressed bytes, once, with the
// head available through Head and Peek before they are read. Read and Peek
// belong to one goroutine; RawBytes and Bytes may be called from any (for
// progress).
type Reader struct {
	in               Input
	id               string
	file             *os.File // nil for standard input, which is not closed
	stdin            *os.File // standard input served by the poller (a pipe), or nil
	stopped          bool     // OpenOptions.Stop ended the wait for the first bytes
	short            int      // a stream's head that is shorter than SniffBytes because the stream paused
	stdinWasNonblock bool     // standard input's pipe was non-blocking before the run
	raw              *rawCounter
	rawBuf           *bufio.Reader
	comp             string
	zr               *zstd.Decoder
	dec              *decompressor // nil when not compressed
	buf              *bufio.Reader // what Read and Peek read
	n                atomic.Int64  // decompressed bytes handed out by Read
	closed           bool
}

// Open opens an input once and prepares it for reading: it reads the raw
// head (up to decode.SniffBytes, or to the end of a shorter input; for a
// pipe this waits until that much has arrived or the writer closed it), fixes
// the identity (Reader.ID) and recognises gzip, zlib or zstd compression by
// its magic bytes, whatever the name says.
//
// Opening a FIFO waits until a writer opens it, as reading one must.
//
// It fails only when the input cannot be opened or read at all. A stream
// that fails to decompress opens fine: its failure comes back as a
// *CorruptError from Head, Peek or Read, and keeps coming back.
func Open(in Input) (*Reader, error) { return OpenWith(in, OpenOptions{}) }

// OpenOptions tune how a stream's head is gathered.
type OpenOptions struct {
	// HeadWait, for a stream (standard input, a pipe or FIFO), bounds how
	// long Open waits for more of the head once some of it has arrived: a
	// live, low-volume log (behind tail -f) may take hours to send 64 KiB.
	// The head is then what arrived (at least one byte), and the identity
	// is the fingerprint of that. 0: wait for the whole head or the end.
	HeadWait time.Duration
	// Stop, checked every HeadWait while a stream has sent nothing yet,
	// ends the wait: Open then returns a Reader with an empty head and
	// ErrStopped from Head.
	Stop func() bool
}

// ErrStopped is returned by Head when OpenOptions.Stop ended the wait for a
// stream's first bytes.
var ErrStopped = errors.New("stopped before the input sent anything")

// OpenWith is Open with options for streams.
func OpenWith(in Input, opt OpenOptions) (*Reader, error) {
	r := &Reader{in: in}
	if in.Kind == Stdin {
		r.stdin, r.stdinWasNonblock = pollableStdin()
		if r.stdin != nil {

			r.raw = &rawCounter{r: r.stdin}
		} else {
			r.raw = &rawCounter{r: os.Stdin}
		}
	} else {
		f, err := openWaiting(in, opt)
		if err == ErrStopped {
			r.stopped = true
			r.raw = &rawCounter{r: strings.NewReader("")}
			r.rawBuf = bufio.NewReaderSize(r.raw, 16)
			r.buf = r.rawBuf
			return r, nil
		}
		if err != nil {
			return nil, fmt.Errorf("input %s cannot be opened: %w (check that it still exists and its permissions)", in.Name, err)
		}
		r.file = f
		r.raw = &rawCounter{r: f}
	}
	r.rawBuf = bufio.NewReaderSize(r.raw, bufSize)
	head, idEnd, err := r.peekHead(opt)
	if err == ErrStopped {
		r.stopped = true
		err = nil
	}
	if err == nil && len(head) < decode.SniffBytes {
		r.short = len(head) // a stream's head, shorter than SniffBytes until more arrives
	}
	if err != nil && err != io.EOF {
		r.Close()
		return nil, fmt.Errorf("input %s cannot be read: %w", in.Name, err)
	}
	switch in.Kind {
	case File:
		r.id = in.ID
		if r.id == "" {
			r.id = "file:" + in.Path
		}
	default:
		r.id = Fingerprint(head[:idEnd])
	}
	r.buf = r.rawBuf
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		r.comp = Gzip
		r.dec = &decompressor{rd: r}
		if gz, err := gzip.NewReader(r.rawBuf); err != nil {
			r.dec.fail(err)
		} else {
			r.dec.r = gz
		}
	case len(head) >= 4 && bytes.Equal(head[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		r.comp = Zstd
		r.dec = &decompressor{rd: r}
		// One frame at a time on this goroutine: no decoder goroutines to
		// join.
		if zr, err := zstd.NewReader(r.rawBuf, zstd.WithDecoderConcurrency(1)); err != nil {
			r.dec.fail(err)
		} else {
			r.zr, r.dec.r = zr, zr
		}
	case len(head) >= 2 && head[0] == 0x78 && (head[1] == 0x01 || head[1] == 0x5e || head[1] == 0x9c || head[1] == 0xda):
		r.comp = Zlib
		r.dec = &decompressor{rd: r}
		if zr, err := zlib.NewReader(r.rawBuf); err != nil {
			r.dec.fail(err)
		} else {
			r.dec.r = zr
		}
	}
	if r.dec != nil {
		r.buf = bufio.NewReaderSize(r.dec, bufSize)
	}
	return r, nil
}

// Fingerprint is the identity of standard input and pipes: "stdin:sha256:"
// and the hex SHA-256 of the raw identity prefix (IDPrefix: the first line
// ending at or past byte 64, or the first decode.SniffBytes, of the bytes
// as they arrive, before decompression; all of a shorter input). See the
// package documentation for why.
func Fingerprint(rawHead []byte) string {
	if len(rawHead) > decode.SniffBytes {
		rawHead = rawHead[:decode.SniffBytes]
	}
	sum := sha256.Sum256(rawHead)
	return "stdin:sha256:" + hex.EncodeToString(sum[:])
}

// Input is what was opened.
func (r *Reader) Input() Input { return r.in }

// ID is the canonical identity of the input, for the dataset manifest and
// exchange ids: "file:" + resolved path for a file, Fingerprint of the raw
// head for standard input and pipes.
func (r *Reader) ID() string { return r.id }

// Compression names the compression undone (Gzip, Zlib, Zstd), or "".
func (r *Reader) Compression() string { return r.comp }

// RawBytes is how many bytes were read from the source so far (compressed
// bytes when it is compressed), read ahead included.
func (r *Reader) RawBytes() int64 { return r.raw.n.Load() }

// RawBytesFunc is RawBytes as a function that keeps only the count alive,
// not the reader and its buffers: for progress over many inputs.
func (r *Reader) RawBytesFunc() func() int64 {
	raw := r.raw
	return raw.n.Load
}

// Bytes is how many decompressed bytes Read has handed out.
func (r *Reader) Bytes() int64 { return r.n.Load() }

// Read reads the decompressed input. A decompression failure is a
// *CorruptError, after the bytes decoded before it.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.buf.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// Peek returns the next n decompressed bytes without consuming them (n at
// most 256 KiB), like bufio.Reader.Peek: fewer with an error when the input
// ends (io.EOF) or fails (*CorruptError) before n.
func (r *Reader) Peek(n int) ([]byte, error) {
	return r.buf.Peek(n)
}

// Head returns up to decode.SniffBytes of the decompressed input without
// consuming them, for format detection and for learning the side of a log;
// call it before the first Read. A short input is no error. The error is a
// *CorruptError when decompression failed inside the head (the bytes before
// the failure come with it; with none, the input yields nothing at all and
// must be quarantined, not read as empty), or a read error.
func (r *Reader) Head() ([]byte, error) {
	if r.stopped {
		return nil, ErrStopped
	}
	n := decode.SniffBytes
	if r.short > 0 && r.dec == nil {
		n = r.short // a stream's head, as it had arrived (OpenOptions.HeadWait)
	}
	head, err := r.buf.Peek(n)
	if err == io.EOF {
		err = nil
	}
	return head, err
}

// Close releases the input (standard input stays open). It may be called
// more than once.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.zr != nil {
		r.zr.Close()
	}
	if r.stdin != nil {
		// Interrupt a read that blocks, then give the pipe back its
		// blocking mode; descriptor 0 itself stays open.
		r.stdin.SetReadDeadline(time.Now())
		err := r.stdin.Close() // the duplicate; descriptor 0 stays open
		if !r.stdinWasNonblock {
			syscall.SetNonblock(int(os.Stdin.Fd()), false) // the pipe's mode as it was
		}
		return err
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// pollableStdin returns standard input as a file served by Go's poller when
// it is a pipe or FIFO, so that Close can interrupt a read that blocks on
// a quiet stream (a pipe or FIFO opened by path is served by the poller
// already). The pipe is switched to non-blocking mode for the run and back
// on Close, since the mode belongs to the pipe, which other processes
// share. A terminal or a regular file is left alone (nil).
//
// The duplicate, not descriptor 0, is what is read and closed.
func pollableStdin() (f *os.File, wasNonblock bool) {
	st, err := os.Stdin.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return nil, false
	}
	// A duplicate descriptor of our own, registered with the poller (the
	// original may be registered already, or not be pollable).
	fd, err := syscall.Dup(int(os.Stdin.Fd()))
	if err != nil {
		return nil, false
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		syscall.Close(fd)
		return nil, false
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, false
	}
	return os.NewFile(uintptr(fd), "stdin"), flags&unix.O_NONBLOCK != 0
}

// openWaiting opens an input. Opening a FIFO waits for its writer; with a
// Stop and a HeadWait, the wait is watched and a stop ends it: the pending
// open is completed by opening the FIFO's writing end ourselves (at once
// closed, so the open returns and the input reads as ended), and Open
// returns ErrStopped.
func openWaiting(in Input, opt OpenOptions) (*os.File, error) {
	st, err := os.Stat(in.Path)
	if in.Kind != Pipe || opt.Stop == nil || opt.HeadWait <= 0 || err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(in.Path)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.Open(in.Path)
		done <- result{f, err}
	}()
	t := time.NewTicker(opt.HeadWait)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.f, r.err
		case <-t.C:
			if !opt.Stop() {
				continue
			}
			// Our open counts as a reader, so a non-blocking open of the
			// writing end succeeds and releases it (tried again until the
			// pending open has returned).
			for {
				if w, err := os.OpenFile(in.Path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				select {
				case r := <-done:
					if r.f != nil {
						r.f.Close()
					}
					return nil, ErrStopped
				case <-time.After(opt.HeadWait):
				}
			}
		}
	}
}

// deadliner is a stream whose reads can be given a deadline (a pipe or
// FIFO served by the poller).
type deadliner interface{ SetReadDeadline(time.Time) error }

// peekHead peeks the raw head and says how much of it makes the identity.
// A regular file gives its first decode.SniffBytes (or all of a shorter
// file). A stream gives what has arrived once its identity prefix is
// complete (IDPrefix), or its first decode.SniffBytes, or all of it at its
// end: how long a stream takes to send its first line does not change
// what is read, so the identity does not depend on timing. While a stream
// has not sent that much, Open waits, checking opt.Stop every
// opt.HeadWait (when set).
func (r *Reader) peekHead(opt OpenOptions) (head []byte, idEnd int, err error) {
	if r.in.Kind == File {
		head, err = r.rawBuf.Peek(decode.SniffBytes)
		return head, len(head), err
	}
	var dl deadliner
	if opt.HeadWait > 0 {
		if r.stdin != nil {
			dl = r.stdin
		} else if r.file != nil {
			dl = r.file
		}
		if dl != nil && dl.SetReadDeadline(time.Time{}) != nil {
			dl = nil // not served by the poller: a plain blocking read
		}
	}
	if dl != nil {
		defer dl.SetReadDeadline(time.Time{})
	}
	for {
		have, _ := r.rawBuf.Peek(r.rawBuf.Buffered())
		if end := IDPrefix(have); end > 0 {
			return have, end, nil
		}
		if dl != nil {
			dl.SetReadDeadline(time.Now().Add(opt.HeadWait))
		}
		_, err := r.rawBuf.Peek(len(have) + 1)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			r.raw.err = nil // a deadline is not a read failure
			if opt.Stop != nil && opt.Stop() {
				return nil, 0, ErrStopped
			}
		default: // the end, or a read failure
			have, _ = r.rawBuf.Peek(r.rawBuf.Buffered())
			return have, len(have), err
		}
	}
}

// idMinBytes is where the line that ends a stream's identity prefix may end
// at the earliest.
const idMinBytes = 64

// IDPrefix returns how much of a stream's first bytes make its identity:
// up to the first line break at or past byte 64, or the first
// decode.SniffBytes when there is none by then; 0 when more bytes are
// needed to tell.
func IDPrefix(raw []byte) int {
	if len(raw) > idMinBytes-1 {
		if i := bytes.IndexByte(raw[idMinBytes-1:min(len(raw), decode.SniffBytes)], '\n'); i >= 0 {
			return idMinBytes + i
		}
	}
	if len(raw) >= decode.SniffBytes {
		return decode.SniffBytes
	}
	return 0
}

// rawCounter counts the raw bytes read from the source and keeps its last
// error, to tell a read failure from corrupt data.
type rawCounter struct {
	r   io.Reader
	n   atomic.Int64
	err error
}

func (c *rawCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// decompressor wraps gzip, zlib or zstd: it counts what it produces and
// turns a failure into a sticky *CorruptError with its offsets.
type decompressor struct {
	rd  *Reader
	r   io.Reader
	n   int64 // decompressed bytes produced
	err error // sticky
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	d.n += int64(n)
	if err == io.EOF {
		d.err = io.EOF
	} else if err != nil {
		d.fail(err)
		err = d.err
	}
	return n, err
}

// fail records why decompression stopped.
func (d *decompressor) fail(err error) {
	rd := d.rd
	rawOff := rd.raw.n.Load() - int64(rd.rawBuf.Buffered())
	if rd.raw.err != nil && errors.Is(err, rd.raw.err) {
		d.err = fmt.Errorf("input %s: reading failed at byte %d: %w", rd.in.Name, rawOff, err)
		return
	}
	d.err = &CorruptError{Name: rd.in.Name, Compression: rd.comp, RawOffset: rawOff, Offset: d.n, Err: err}
}

// CorruptError is a compressed input that fails to decompress: a corrupt
// header, a stream cut short (with or without decodable bytes before the
// cut), corrupt data in the middle. The bytes decompressed before the
// failure are delivered first; nothing after it can be read. The pipeline
// quarantines it with its reason and offsets; it is never read as empty.
type CorruptError struct {
	Name        string // the input, as named
	Compression string // Gzip, Zlib or Zstd
	// RawOffset is how far into the compressed input the decompressor had
	// read when it failed (exact for gzip and zlib; for zstd the end of the
	// block it was reading).
	RawOffset int64
	// Offset is how many decompressed bytes came out before the failure: 0
	// when the input yields nothing at all.
	Offset int64
	Err    error // what the decompressor said
}

func (e *CorruptError) Error() string {
	if e.Offset == 0 {
		return fmt.Sprintf("input %s starts like %s but yields no data (at compressed byte %d: %v): it is cut short or not really %s; copy it again from its source (%s)",
			e.Name, e.Compression, e.RawOffset, e.Err, e.Compression, check(e.Compression))
	}
	return fmt.Sprintf("input %s: the %s stream breaks at compressed byte %d, after %d decompressed bytes (%v); what came before is kept, the rest cannot be read: copy it again from its source (%s)",
		e.Name, e.Compression, e.RawOffset, e.Offset, e.Err, check(e.Compression))
}

func (e *CorruptError) Unwrap() error { return e.Err }

func check(comp string) string {
	switch comp {
	case Gzip:
		return "gzip -t tells whether a copy is whole"
	case Zstd:
		return "zstd -t tells whether a copy is whole"
	}
	return "a zlib stream has no checker of its own; compare sizes with the source"
}
