package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"

	"mcptrace/decode"
	"mcptrace/redact"
)

// Stdin is the input name that reads standard input.
const Stdin = "-"

// ExpandInputs turns paths into the list of files to read: a file is taken
// as is, a directory is walked (files in name order, hidden files and
// directories skipped), a glob pattern (*, ?, [...]) is expanded, and "-"
// stands for standard input. A path that does not exist or cannot be read,
// or a pattern that matches nothing, is an error naming it.
func ExpandInputs(paths []string) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	var expanded []string
	for _, p := range paths {
		if p == Stdin {
			expanded = append(expanded, p)
			continue
		}
		if _, err := os.Stat(p); err != nil && strings.ContainsAny(p, "*?[") {
			matches, gerr := filepath.Glob(p)
			if gerr != nil {
				return nil, fmt.Errorf("input pattern %s is malformed: %w", p, gerr)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input pattern %s matched no files", p)
			}
			expanded = append(expanded, matches...)
			continue
		}
		expanded = append(expanded, p)
	}
	for _, p := range expanded {
		if p == Stdin {
			add(p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("input %s does not exist: check the path", p)
			}
			return nil, fmt.Errorf("input %s cannot be read: %w", p, err)
		}
		if !st.IsDir() {
			if err := canRead(p); err != nil {
				return nil, err
			}
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("input %s cannot be read: %w", path, err)
			}
			name := d.Name()
			if path != p && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && isLogName(name) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		for _, f := range found {
			if err := canRead(f); err != nil {
				return nil, err
			}
			add(f)
		}
	}
	return files, nil
}

// isLogName keeps documentation and code out of a directory walk: a
// directory of samples holds a README beside its logs.
func isLogName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".go", ".json5", ".txt~":
		return false
	}
	return true
}

func canRead(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("input %s cannot be opened: %w (check its permissions)", p, err)
	}
	return f.Close()
}

// corruptError is a file that opens but cannot be read as what it claims
// to be: quarantined, not fatal.
type corruptError struct{ err error }

func (e *corruptError) Error() string { return e.err.Error() }

// openInput opens a file (or standard input) and undoes gzip, zlib or zstd
// compression, detected by magic bytes rather than the file name.
func openInput(path string) (*bufio.Reader, func() error, error) {
	var f io.ReadCloser
	if path == Stdin {
		f = io.NopCloser(os.Stdin)
	} else {
		file, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("input %s cannot be opened: %w", path, err)
		}
		f = file
	}
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(4)
	var (
		r   io.Reader
		err error
		cl  = f.Close
	)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		r, err = gzip.NewReader(br)
		if err != nil {
			err = fmt.Errorf("starts like gzip but its header is corrupt: %w", err)
		}
	case len(magic) >= 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		var zr *zstd.Decoder
		zr, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err == nil {
			r = zr
			cl = func() error { zr.Close(); return f.Close() }
		} else {
			err = fmt.Errorf("starts like zstd but cannot be read: %w", err)
		}
	case len(magic) >= 2 && magic[0] == 0x78 && (magic[1] == 0x01 || magic[1] == 0x5e || magic[1] == 0x9c || magic[1] == 0xda):
		r, err = zlib.NewReader(br)
		if err != nil {
			err = fmt.Errorf("starts like zlib but cannot be read: %w", err)
		}
	default:
		return br, f.Close, nil
	}
	if err != nil {
		f.Close()
		return nil, nil, &corruptError{err}
	}
	return bufio.NewReaderSize(r, 256<<10), cl, nil
}

// source opens inputs in order, detects their format and hands decode jobs
// to the workers.
type source struct {
	rd      *redact.Redactor
	cfg     *Config
	jobs    chan<- job
	runTime time.Time
	seq     int64
	records atomic.Int64 // for progress
	bytes   atomic.Int64
}

func (s *source) send(ctx context.Context, j job) error {
	select {
	case s.jobs <- j:
		s.seq++
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read turns one input into jobs. Only an input that cannot be opened at all
// is an error; anything else is quarantined.
func (s *source) read(ctx context.Context, path string) error {
	r, closeFn, err := openInput(path)
	var ce *corruptError
	if errors.As(err, &ce) {
		s.records.Add(1)
		return s.send(ctx, &lineChunk{rd: s.rd, seq: s.seq, source: path, format: "corrupt", items: []lineItem{{reason: decode.ReasonReadError, lineNo: 1,
			detail: ce.Error() + "; the file was skipped"}}})
	}
	if err != nil {
		return err
	}
	head, _ := r.Peek(decode.SniffBytes)
	format := decode.Format(s.cfg.Format)
	if len(head) == 0 {
		closeFn()
		return s.send(ctx, &lineChunk{rd: s.rd, seq: s.seq, source: path, format: "empty"})
	}
	if format == "" {
		f, ok := decode.Detect(head)
		if !ok {
			closeFn()
			s.records.Add(1)
			h := append([]byte(nil), head[:min(len(head), 512)]...)
			return s.send(ctx, &lineChunk{rd: s.rd, seq: s.seq, source: path, format: "unknown", items: []lineItem{{reason: ReasonUnknownFormat, lineNo: 1,
				head: h, size: int64(len(head)), detail: fmt.Sprintf("matches none of the formats %v; name one with -format if it is one of them", decode.Formats())}}})
		}
		format = f
	}
	if format == decode.FormatWire {
		defer closeFn()
		return s.readLines(ctx, path, r)
	}
	dec, _ := decode.DecoderFor(format)
	return s.send(ctx, &fileJob{rd: s.rd, seq: s.seq, maxLine: s.cfg.MaxLineBytes, source: path, format: format, dec: dec, r: &countingReader{r: r, src: s}, close: closeFn})
}

// ReasonUnknownFormat is the quarantine reason of a file that matches no
// format.
const ReasonUnknownFormat = "unknown_format"

type countingReader struct {
	r   io.Reader
	n   int64
	src *source
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.src.bytes.Add(int64(n))
	return n, err
}

const chunkLines = 2048
const chunkBytes = 4 << 20

// readLines cuts a wire log into chunks of whole lines, decoded in parallel.
func (s *source) readLines(ctx context.Context, path string, r io.Reader) error {
	lr := decode.NewLineReader(r, s.cfg.MaxLineBytes)
	c := &lineChunk{rd: s.rd, seq: s.seq, source: path, format: string(decode.FormatWire)}
	size := 0
	flush := func() error {
		if err := s.send(ctx, c); err != nil {
			return err
		}
		c = &lineChunk{rd: s.rd, seq: s.seq, source: path}
		size = 0
		return nil
	}
	for {
		line, tooLong, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A read error (a corrupt compressed stream, say) ends this file;
			// it is quarantined at the line where it happened.
			c.items = append(c.items, lineItem{reason: decode.ReasonReadError, lineNo: lr.LineNo() + 1,
				detail: fmt.Sprintf("reading stopped: %v; the rest of the file was not read", err)})
			s.records.Add(1)
			break
		}
		s.records.Add(1)
		it := lineItem{lineNo: lr.LineNo()}
		if tooLong {
			it.reason = decode.ReasonLineTooLong
			it.size = lr.TooLongSize()
			it.detail = lr.TooLongDetail()
			it.head = append([]byte(nil), lr.Head()...)
		} else {
			it.line = append([]byte(nil), line...)
			it.size = int64(len(line)) + 1
		}
		s.bytes.Add(it.size)
		c.items = append(c.items, it)
		size += len(it.line)
		if len(c.items) >= chunkLines || size >= chunkBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(c.items) > 0 || c.format != "" {
		return s.send(ctx, c)
	}
	return nil
}

// mergeWanted decides whether client and server views are merged. In auto
// mode it reads the head of every input (cheap: what format detection reads)
// to learn which sides the run holds; standard input cannot be read twice and
// does not count.
func mergeWanted(cfg Config, files []string) (bool, error) {
	switch cfg.Merge {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "", "auto":
	default:
		return false, fmt.Errorf("merge mode %q: use auto, on or off", cfg.Merge)
	}
	var client, server bool
	for _, f := range files {
		if f == Stdin {
			continue
		}
		r, closeFn, err := openInput(f)
		if err != nil {
			continue // reported when the file is read
		}
		head, _ := r.Peek(decode.SniffBytes)
		closeFn()
		format := decode.Format(cfg.Format)
		if format == "" {
			format, _ = decode.Detect(head)
		}
		switch format {
		case "":
		case decode.FormatWire, decode.FormatStdioJSONL:
			first := decode.FirstLine(head)
			if gjson.GetBytes(first, "side").String() == "server" || gjson.GetBytes(first, "viewpoint").String() == "server" {
				server = true
			} else {
				client = true
			}
		case decode.FormatOTLPTraces, decode.FormatOTLPLogs:
			client, server = true, true // spans of either kind
		default:
			client = true // HAR, Claude Desktop, VS Code, Inspector: the client's view
		}
	}
	return client && server, nil
}
