package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"mcptrace/schema"
)

// DefaultMaxLine is the longest line accepted unless configured otherwise.
const DefaultMaxLine = 16 << 20

// DefaultMaxDocument is the document limit unless configured otherwise
// (ingest -max-document): the most one whole-document input (an Inspector
// export, a pretty-printed OTLP document) or one HAR entry (a HAR is
// streamed: harstream.go) may make the process hold, and how far an
// over-long line is skipped looking for its newline before the rest of the
// input is abandoned.
//
// 256 MiB: a decoder holds a document at about two to three times its size
// (the bytes, the observations copied out of it), so the default keeps one
// document under a gigabyte of memory on a small machine, while the largest
// real exports seen (DevTools and mitmproxy HARs of a long session) stay
// well below it. It must not be smaller than the line limit.
const DefaultMaxDocument = 256 << 20

// LineLimiter is implemented by an Emitter that knows the configured line
// limit (ingest -max-line); line-oriented decoders ask it through MaxLine.
type LineLimiter interface {
	MaxLineBytes() int
}

// DocumentLimiter is implemented by an Emitter that knows the configured
// document limit (ingest -max-document); decoders ask it through
// MaxDocument.
type DocumentLimiter interface {
	MaxDocumentBytes() int64
}

// Stopper is implemented by an Emitter that can report that the run was
// cancelled. Every decoder asks it before each record (and between reads of
// a whole document) and returns ErrStopped as soon as it says so.
type Stopper interface {
	Stopped() bool
}

// ErrStopped is returned by a decoder (and ReadLines) that stopped because
// its Emitter's Stopped (or LineOptions.Stop) reported a stop. What was
// emitted before stands; nothing more was read.
var ErrStopped = errors.New("decoding stopped: the run was cancelled")

// ErrLimit is wrapped by the error a decoder (and ReadLines) returns after a
// record ran past the document limit: the decoder has already quarantined
// that record (ReasonDocumentTooLarge, the limit named) and read no further.
// The caller must not report it again, nor read the rest of the input (it
// may be endless, like /dev/zero).
var ErrLimit = errors.New("input abandoned at the document limit")

// MaxLine returns the line limit an Emitter asks for, or DefaultMaxLine.
func MaxLine(e Emitter) int {
	if l, ok := e.(LineLimiter); ok && l.MaxLineBytes() > 0 {
		return l.MaxLineBytes()
	}
	return DefaultMaxLine
}

// MaxDocument returns the document limit an Emitter asks for, or
// DefaultMaxDocument.
func MaxDocument(e Emitter) int64 {
	if l, ok := e.(DocumentLimiter); ok && l.MaxDocumentBytes() > 0 {
		return l.MaxDocumentBytes()
	}
	return DefaultMaxDocument
}

// stopFunc returns the Emitter's stop check, or one that never stops.
func stopFunc(e Emitter) func() bool {
	if s, ok := e.(Stopper); ok {
		return s.Stopped
	}
	return never
}

func never() bool { return false }

// excerptBytes is how much of an over-long line is kept for its excerpt.
const excerptBytes = 1024

// LineReader yields lines without their terminator. A line longer than the
// limit is reported as too long: its bytes are consumed, only its first
// KiB is kept (Head), and memory stays bounded. ReadLines is the loop most
// callers want.
type LineReader struct {
	r         *bufio.Reader
	max       int
	skipMax   int64 // how far an over-long line is skipped looking for its newline
	buf       []byte
	lineNo    int64
	off       int64 // bytes consumed
	start     int64 // offset of the last line
	tooLong   int64
	abandoned bool
	head      []byte
	err       error // sticky, once a line was abandoned
	// A line longer than bigLine is gathered in chunks (chunks, chunked
	// bytes in them), not by growing buf: growing a slice by append copies
	// the line again at every step (about five times its size allocated for
	// a line of 150 MB, two or three times its size live at once), where
	// the chunks hold it once and join copies it once, into a slice of
	// exactly its size that the caller may keep (owned).
	chunks  [][]byte
	chunked int
	owned   bool
	// With mapLong (LineOptions.Keep), a line longer than bigLine is
	// gathered into mapped, memory reserved outside the heap at the line
	// limit's size (mapBig), instead of chunks; the caller frees it with
	// the Release of its Line. unmap frees mapped; release is that of the
	// line last returned, until ReadLines hands it over.
	mapLong bool
	mapped  []byte
	unmap   func()
	release func()
}

// bigLine is the length past which a line is gathered in chunks; the
// reader's reused buffer never grows past it.
var bigLine = 1 << 20 // a variable for the tests, which make it small

// add appends frag (a slice of the bufio.Reader's buffer) to the line.
func (l *LineReader) add(frag []byte) {
	if l.mapped != nil {
		l.mapped = append(l.mapped, frag...) // within its capacity: longer lines are too long before they get here
		return
	}
	if l.chunks == nil && len(l.buf)+len(frag) <= bigLine {
		l.buf = append(l.buf, frag...)
		return
	}
	if l.chunks == nil && l.mapLong {
		if b, unmap, ok := mapBig(l.max + 2); ok {
			l.mapped, l.unmap = append(append(b, l.buf...), frag...), unmap
			l.buf = l.buf[:0]
			return
		}
	}
	if l.chunks == nil {
		l.chunks = [][]byte{l.buf}
		l.chunked = len(l.buf)
		l.buf = nil // the reused buffer went into the chunks; a fresh one is made for the next line
	}
	last := &l.chunks[len(l.chunks)-1]
	if len(*last)+len(frag) > cap(*last) {
		// A new chunk, as large as what is gathered so far (up to 64 MiB):
		// few chunks, and at most that much capacity unused.
		n := max(len(frag), min(l.chunked, 64<<20), bigLine)
		l.chunks = append(l.chunks, make([]byte, 0, n))
		last = &l.chunks[len(l.chunks)-1]
	}
	*last = append(*last, frag...)
	l.chunked += len(frag)
}

// size is the length of the line gathered so far.
func (l *LineReader) size() int {
	if l.mapped != nil {
		return len(l.mapped)
	}
	if l.chunks != nil {
		return l.chunked
	}
	return len(l.buf)
}

// first is the start of the line gathered so far.
func (l *LineReader) first() []byte {
	if l.mapped != nil {
		return l.mapped
	}
	if l.chunks != nil {
		return l.chunks[0]
	}
	return l.buf
}

// join copies the chunks into one slice of the line's size and drops them.
func (l *LineReader) join() []byte {
	b := make([]byte, 0, l.chunked)
	for _, c := range l.chunks {
		b = append(b, c...)
	}
	l.chunks, l.chunked = nil, 0
	return b
}

// dropMapped frees a mapped line that is not handed over.
func (l *LineReader) dropMapped() {
	if l.unmap != nil {
		l.unmap()
	}
	l.mapped, l.unmap = nil, nil
}

// Owned says the line last returned is not reused by the reader: the
// caller may keep it past the next call (a line longer than bigLine).
func (l *LineReader) Owned() bool { return l.owned }

// NewLineReader reads r with lines of at most max bytes. It skips an
// over-long line up to its newline, or abandons the input when the skip runs
// past DefaultMaxDocument without one (Abandoned). ReadLines takes the
// document limit from its options.
func NewLineReader(r io.Reader, max int) *LineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: br, max: max, skipMax: DefaultMaxDocument}
}

// newLineReader is NewLineReader with the document limit of opt.
func newLineReader(r io.Reader, opt LineOptions) *LineReader {
	lr := NewLineReader(r, opt.MaxLine)
	if opt.MaxDocument > 0 {
		lr.skipMax = opt.MaxDocument
	}
	// No line is held past the document limit either.
	if int64(lr.max) > lr.skipMax {
		lr.max = int(lr.skipMax)
	}
	return lr
}

// LineNo is the 1-based number of the line last returned.
func (l *LineReader) LineNo() int64 { return l.lineNo }

// Offset is the byte offset of the start of the line last returned.
func (l *LineReader) Offset() int64 { return l.start }

// Head is the start of the last over-long line.
func (l *LineReader) Head() []byte { return l.head }

// TooLongSize is the length of the last over-long line (as far as it was
// read, when it was abandoned).
func (l *LineReader) TooLongSize() int64 { return l.tooLong }

// Abandoned says the last over-long line ran past the document limit
// without a newline: it is the last line; Next returns an error wrapping
// ErrLimit from now on.
func (l *LineReader) Abandoned() bool { return l.abandoned }

// TooLongDetail says what was wrong with the last over-long line.
func (l *LineReader) TooLongDetail() string {
	if l.abandoned {
		return fmt.Sprintf("line %d (from byte %d) has no newline within the %d-byte document limit; the rest of the input was not read (raise -max-document)",
			l.lineNo, l.start, l.skipMax)
	}
	return fmt.Sprintf("line of %d bytes exceeds the %d-byte limit (raise -max-line)", l.tooLong, l.max)
}

// Next returns the next line (valid until the following call), whether it
// was too long, and io.EOF at the end.
func (l *LineReader) Next() (line []byte, tooLong bool, err error) {
	if l.err != nil {
		return nil, false, l.err
	}
	l.buf = l.buf[:0]
	l.chunks, l.chunked = nil, 0
	l.dropMapped()
	if l.release != nil {
		l.release() // the last line was not handed over
		l.release = nil
	}
	l.owned = false
	l.abandoned = false
	l.start = l.off
	total := int64(0)
	for {
		frag, err := l.r.ReadSlice('\n')
		total += int64(len(frag))
		l.off += int64(len(frag))
		if !tooLong {
			if l.size()+len(frag) > l.max+2 {
				tooLong = true
				l.head = append(l.head[:0], l.first()[:min(len(l.first()), excerptBytes)]...)
				l.chunks, l.chunked = nil, 0
				l.dropMapped()
				l.head = append(l.head, frag[:min(len(frag), excerptBytes-len(l.head))]...)
				l.buf = l.buf[:0]
			} else {
				l.add(frag)
			}
		}
		if err == bufio.ErrBufferFull {
			if tooLong && total > l.skipMax {
				l.lineNo++
				l.tooLong = total
				l.abandoned = true
				l.err = fmt.Errorf("%w: line %d (from byte %d) has no newline within %d bytes", ErrLimit, l.lineNo, l.start, l.skipMax)
				return nil, true, nil
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		if total == 0 && err == io.EOF {
			return nil, false, io.EOF
		}
		l.lineNo++
		if tooLong {
			l.chunks, l.chunked = nil, 0
			l.tooLong = total
			return nil, true, nil
		}
		buf := l.buf
		l.owned = false
		switch {
		case l.mapped != nil:
			buf, l.release = l.mapped, l.unmap
			l.mapped, l.unmap = nil, nil
			l.owned = true
		case l.chunks != nil:
			buf = l.join()
			l.owned = true
		}
		line := bytes.TrimRight(buf, "\r\n")
		if len(line) > l.max {
			l.tooLong = total
			l.head = append(l.head[:0], line[:min(len(line), excerptBytes)]...)
			if l.release != nil {
				l.release()
				l.release = nil
			}
			return nil, true, nil
		}
		return line, false, nil
	}
}

// LineOptions configure ReadLines. Zero values take the defaults.
type LineOptions struct {
	MaxLine     int         // longest line kept (DefaultMaxLine)
	MaxDocument int64       // how far an over-long line is skipped before the input is abandoned (DefaultMaxDocument); also caps MaxLine
	Stop        func() bool // checked before each line; true ends ReadLines with ErrStopped
	// Keep says the callee keeps owned lines: a line longer than 1 MiB may
	// then be gathered in memory outside the heap (on Linux), which the
	// callee frees with Line.Release once done with it. Without Keep,
	// ReadLines frees every line itself.
	Keep bool
}

// LineOptionsFor returns the options an Emitter asks for: its line limit,
// document limit and stop check.
func LineOptionsFor(e Emitter) LineOptions {
	return LineOptions{MaxLine: MaxLine(e), MaxDocument: MaxDocument(e), Stop: stopFunc(e)}
}

// Line is one line of a line-oriented input, as ReadLines delivers it.
type Line struct {
	No     int64  // 1-based line number
	Offset int64  // byte offset of the line's start in the (decompressed) input
	Text   []byte // without its terminator, a byte order mark dropped on line 1; nil when TooLong; valid only during the call
	Size   int64  // bytes the line takes in the input, terminator included
	// TooLong marks a line over the line limit: Text is nil, Head holds its
	// first KiB (valid only during the call), Detail says what is wrong and
	// Reason gives the quarantine reason.
	TooLong bool
	// Abandoned marks a too-long line that ran past the document limit
	// without a newline: it is the last line ReadLines delivers, and
	// ReadLines then returns an error wrapping ErrLimit.
	Abandoned bool
	Head      []byte
	Detail    string
	// Owned says Text is not reused by ReadLines after the call: the callee
	// may keep it instead of copying it (a long line, gathered into a slice
	// of its own).
	Owned bool
	// Release, when set (only with LineOptions.Keep), frees Text, which
	// is memory outside the heap: the callee must call it exactly once,
	// after the last use of Text or of anything pointing into it (any
	// later access faults).
	Release func()
}

// Reason is the quarantine reason of a too-long line (ReasonLineTooLong, or
// ReasonDocumentTooLarge when it was abandoned), or "".
func (l *Line) Reason() string {
	switch {
	case l.Abandoned:
		return ReasonDocumentTooLarge
	case l.TooLong:
		return ReasonLineTooLong
	}
	return ""
}

// ReadLines is the one line loop of one-record-per-line inputs, used by the
// decoders here and by the pipeline's chunking of wire logs: it calls fn
// with every line of r in order. It drops a UTF-8 byte order mark at the
// start of line 1. A line over opt.MaxLine is delivered as TooLong (its
// bytes skipped up to its newline, memory bounded); when that skip runs past
// opt.MaxDocument without a newline the line is delivered as Abandoned and
// reading ends there, so an endless input without newlines (/dev/zero) ends.
//
// ReadLines returns nil at the end of r; fn's error as is; ErrStopped when
// opt.Stop reported a stop (checked before each line); an error wrapping
// ErrLimit after an Abandoned line; or r's read error as is (for instance a
// corrupt compressed stream), after the last whole line.
func ReadLines(r io.Reader, opt LineOptions, fn func(l Line) error) error {
	lr := newLineReader(r, opt)
	lr.mapLong = opt.Keep
	defer lr.dropMapped()
	defer func() {
		if lr.release != nil {
			lr.release()
		}
	}()
	stop := opt.Stop
	if stop == nil {
		stop = never
	}
	for {
		if stop() {
			return ErrStopped
		}
		text, tooLong, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		l := Line{No: lr.LineNo(), Offset: lr.Offset(), Size: lr.off - lr.start, TooLong: tooLong}
		if tooLong {
			l.Abandoned = lr.Abandoned()
			l.Head = lr.Head()
			if l.No == 1 {
				l.Head = trimBOM(l.Head)
			}
			l.Detail = lr.TooLongDetail()
		} else {
			l.Text = text
			l.Owned = lr.Owned()
			l.Release, lr.release = lr.release, nil // the callee's now
			if l.No == 1 {
				l.Text = trimBOM(l.Text)
			}
		}
		if err := fn(l); err != nil {
			return err
		}
		if l.Abandoned {
			_, _, err := lr.Next()
			return err
		}
	}
}

// eachLine reads r line by line for a line-oriented decoder, with the
// Emitter's limits and stop check, calling fn with each line's position.
func eachLine(source string, r io.Reader, opt LineOptions, fn func(pos schema.Position, l *Line)) error {
	return ReadLines(r, opt, func(l Line) error {
		fn(schema.Position{Source: source, Line: l.No}, &l)
		return nil
	})
}

// eachRecordLine is eachLine for logs of one record per line: an over-long
// line is quarantined, a blank one skipped, and fn gets every other.
func eachRecordLine(source string, r io.Reader, e Emitter, fn func(pos schema.Position, line []byte)) error {
	return eachLine(source, r, LineOptionsFor(e), func(pos schema.Position, l *Line) {
		switch {
		case l.TooLong:
			e.Quarantine(pos, l.Reason(), l.Detail, l.Head)
		case IsBlank(l.Text):
			e.Skip(pos, "blank")
		default:
			fn(pos, l.Text)
		}
	})
}

// readDocument reads a whole-document input (an Inspector export) up to
// the Emitter's document limit, checking its stop between reads. Past the
// limit it quarantines the document at line 1 with the limit named and
// returns an error wrapping ErrLimit; it never holds more than the limit
// plus one byte.
func readDocument(source string, r io.Reader, e Emitter, what string) ([]byte, error) {
	limit := MaxDocument(e)
	stop := stopFunc(e)
	buf := make([]byte, 0, min(limit+1, 64<<10))
	for {
		if stop() {
			return nil, ErrStopped
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				e.Quarantine(schema.Position{Source: source, Line: 1}, ReasonDocumentTooLarge, documentTooLarge(what, limit), buf[:min(len(buf), excerptBytes)])
				return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrLimit, what, limit)
			}
			next := min(int64(cap(buf))*2, limit+1)
			buf = append(make([]byte, 0, next), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func documentTooLarge(what string, limit int64) string {
	return fmt.Sprintf("%s exceeds %d bytes, the document limit; the rest of the input was not read (raise -max-document)", what, limit)
}
