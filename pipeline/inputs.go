package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"

	"mcptrace/decode"
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
		f = stdinReader()
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

// stdinReader returns standard input as a reader whose Close interrupts a
// read that blocks: a pipe or FIFO is switched to non-blocking mode so that
// Go's poller serves it (and switched back on Close, since the mode belongs
// to the pipe, which other processes share). A terminal or a regular file is
// left as it is.
func stdinReader() io.ReadCloser {
	st, err := os.Stdin.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return io.NopCloser(os.Stdin)
	}
	fd := int(os.Stdin.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return io.NopCloser(os.Stdin)
	}
	f := os.NewFile(uintptr(fd), "stdin")
	return &stdinCloser{File: f, fd: fd}
}

type stdinCloser struct {
	*os.File
	fd int
}

func (s *stdinCloser) Close() error {
	// Interrupt a blocked read through the poller, then give the pipe back
	// its blocking mode. The descriptor itself stays open (it is fd 0).
	s.File.SetReadDeadline(time.Now())
	syscall.SetNonblock(s.fd, false)
	return nil
}
