package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// faults lets tests inject failures at the points where a real file system
// fails (a full disk on write, an I/O error on fsync or rename) and stop a
// commit half-way as a crash would. It is nil outside tests.
type faults struct {
	// write is called before len(p) bytes go to the file at path; an
	// error is returned in place of the write.
	write func(path string, n int) error
	sync  func(path string) error
	// rename is called before every rename, staging ones included.
	rename func(from, to string) error
	// applied is called after the i-th operation of a commit's pending
	// list is applied (after the commit point). An error stops the commit
	// there, as a crash would: nothing after it runs, not even cleanup.
	applied func(i int) error
}

var fault *faults

// faultFile is where every byte of a data file or manifest goes through,
// so tests can make a write fail as a full disk does.
type faultFile struct {
	f    *os.File
	path string
	n    int64 // bytes written
}

func (w *faultFile) Write(p []byte) (int, error) {
	if fault != nil && fault.write != nil {
		if err := fault.write(w.path, len(p)); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

func syncFile(f *os.File, path string) error {
	if fault != nil && fault.sync != nil {
		if err := fault.sync(path); err != nil {
			return fmt.Errorf("syncing %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

func rename(from, to string) error {
	if fault != nil && fault.rename != nil {
		if err := fault.rename(from, to); err != nil {
			return fmt.Errorf("renaming %s to %s: %w", from, to, err)
		}
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", from, to, err)
	}
	return nil
}

// syncDir makes the entries of dir (creations, renames, removals) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	err = syncFile(d, dir)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("syncing directory %s: %w", dir, cerr)
	}
	return err
}

// syncDirIfExists is syncDir for a directory that may be gone.
func syncDirIfExists(dir string) error {
	if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// mkdirAll creates dir and its missing parents, and fsyncs the parent of
// every directory it created so the new entries survive a crash. A
// directory that another process created meanwhile gets the same fsync:
// the caller's file may be in it before that process's fsync.
func mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return syncDir(parent)
		}
		return fmt.Errorf("creating directory %s: %w", dir, err)
	}
	return syncDir(parent)
}

// writeFileDurable writes data to path through a hidden temporary file in
// the same directory: write, fsync, close, rename, fsync the directory. A
// failure leaves path as it was and removes the temporary file.
func writeFileDurable(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	tmp := filepath.Join(dir, "."+base+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := &faultFile{f: f, path: tmp}
	if _, err = io.Copy(w, bytesReader(data)); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = syncFile(f, tmp); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if err = rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Clean(dir))
}

type byteSliceReader struct{ b []byte }

func bytesReader(b []byte) *byteSliceReader { return &byteSliceReader{b} }

// Read hands out at most 64 KiB at a time, so a fault that fails the n-th
// write of a large manifest can be injected.
func (r *byteSliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// removeIfEmpty removes dir when it holds nothing; it reports whether it did.
func removeIfEmpty(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 0 {
		return false
	}
	return os.Remove(dir) == nil
}
