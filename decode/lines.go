package decode

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"mcptrace/schema"
)

// DefaultMaxLine is the longest line accepted unless configured otherwise.
const DefaultMaxLine = 16 << 20

// LineLimiter is implemented by an Emitter that knows the configured line
// limit (ingest -max-line); line-oriented decoders ask it through MaxLine.
type LineLimiter interface {
	MaxLineBytes() int
}

// MaxLine returns the line limit an Emitter asks for, or DefaultMaxLine.
func MaxLine(e Emitter) int {
	if l, ok := e.(LineLimiter); ok && l.MaxLineBytes() > 0 {
		return l.MaxLineBytes()
	}
	return DefaultMaxLine
}

// excerptBytes is how much of an over-long line is kept for its excerpt.
const excerptBytes = 1024

// LineReader yields lines without their terminator. A line longer than the
// limit is reported as too long: its bytes are consumed, only its first
// KiB is kept (Head), and memory stays bounded.
type LineReader struct {
	r       *bufio.Reader
	max     int
	buf     []byte
	lineNo  int64
	tooLong int64
	head    []byte
}

// NewLineReader reads r with lines of at most max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: br, max: max}
}

// LineNo is the 1-based number of the line last returned.
func (l *LineReader) LineNo() int64 { return l.lineNo }

// Head is the start of the last over-long line.
func (l *LineReader) Head() []byte { return l.head }

// TooLongSize is the length of the last over-long line.
func (l *LineReader) TooLongSize() int64 { return l.tooLong }

// TooLongDetail says what was wrong with the last over-long line.
func (l *LineReader) TooLongDetail() string {
	return fmt.Sprintf("line of %d bytes exceeds the %d-byte limit (raise -max-line)", l.tooLong, l.max)
}

// Next returns the next line (valid until the following call), whether it
// was too long, and io.EOF at the end.
func (l *LineReader) Next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	total := int64(0)
	for {
		frag, err := l.r.ReadSlice('\n')
		total += int64(len(frag))
		if !tooLong {
			if len(l.buf)+len(frag) > l.max+2 {
				tooLong = true
				l.head = append(l.head[:0], l.buf[:min(len(l.buf), excerptBytes)]...)
				l.head = append(l.head, frag[:min(len(frag), excerptBytes-len(l.head))]...)
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
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
			l.tooLong = total
			return nil, true, nil
		}
		line := bytes.TrimRight(l.buf, "\r\n")
		if len(line) > l.max {
			l.tooLong = total
			l.head = append(l.head[:0], line[:min(len(line), excerptBytes)]...)
			return nil, true, nil
		}
		return line, false, nil
	}
}

// eachLine reads r line by line for a line-oriented decoder: it drops a byte
// order mark on the first line and calls fn with each line's position. For
// a line over the limit, line is nil and tooLong is set (lr.Head and
// lr.TooLongDetail describe it). It returns a read error, or nil at the end.
func eachLine(source string, r io.Reader, maxLine int, fn func(pos schema.Position, line []byte, tooLong bool, lr *LineReader)) error {
	lr := NewLineReader(r, maxLine)
	for {
		line, tooLong, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		pos := schema.Position{Source: source, Line: lr.LineNo()}
		if pos.Line == 1 {
			line = trimBOM(line)
		}
		fn(pos, line, tooLong, lr)
	}
}

// eachRecordLine is eachLine for logs of one record per line: an over-long
// line is quarantined, a blank one skipped, and fn gets every other.
func eachRecordLine(source string, r io.Reader, e Emitter, fn func(pos schema.Position, line []byte)) error {
	return eachLine(source, r, MaxLine(e), func(pos schema.Position, line []byte, tooLong bool, lr *LineReader) {
		switch {
		case tooLong:
			e.Quarantine(pos, ReasonLineTooLong, lr.TooLongDetail(), lr.Head())
		case IsBlank(line):
			e.Skip(pos, "blank")
		default:
			fn(pos, line)
		}
	})
}
