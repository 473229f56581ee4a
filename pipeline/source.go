package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExpandInputs turns paths into the list of files to read: a file is taken
// as is, a directory is walked (files in name order, hidden files and
// directories skipped). A path that does not exist or cannot be read is an
// error naming it.
func ExpandInputs(paths []string) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
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

// openInput opens a file and undoes gzip compression, detected by its magic
// bytes rather than its name.
func openInput(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("input %s cannot be opened: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, &corruptError{fmt.Errorf("starts like gzip but its header is corrupt: %w", err)}
		}
		return bufio.NewReaderSize(zr, 256<<10), f.Close, nil
	}
	return br, f.Close, nil
}

// corruptError is a file that opens but cannot be read as what it claims
// to be: quarantined, not fatal.
type corruptError struct{ err error }

func (e *corruptError) Error() string { return e.err.Error() }
