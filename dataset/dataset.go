package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configure Open.
type Options struct {
	// WaitLock makes Open wait for another writer to release the dataset
	// (until the context ends) instead of failing at once.
	WaitLock bool
}

// Dataset is an open, exclusively locked dataset directory.
type Dataset struct {
	dir  string // absolute
	lock *os.File

	mu       sync.Mutex
	manifest *Manifest
	txn      *Txn // the open transaction, if any
	closed   bool
}

// Holder says who holds a dataset's lock, as its lock file records it.
type Holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// ErrLocked is matched (errors.Is) by the error Open returns when another
// writer holds the dataset.
var ErrLocked = errors.New("dataset is locked by another writer")

// LockedError is the error of an Open that found the dataset locked.
type LockedError struct {
	Dataset string
	Holder  Holder // zero when the lock file could not be read
}

func (e *LockedError) Error() string {
	who := "another mcptrace process"
	if e.Holder.PID != 0 {
		who = fmt.Sprintf("mcptrace pid %d on host %s since %s", e.Holder.PID, e.Holder.Host, e.Holder.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("dataset %s is being written by %s: wait for it to finish, or pass -wait-lock to wait", e.Dataset, who)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Open opens the dataset at dir, creating it if needed, takes its lock and
// recovers it from a crashed run: a commit that passed its commit point is
// rolled forward, then staging areas of crashed runs, stale temporary files
// (".*.tmp" in the tables' partition directories) and empty dt=
// directories are removed. Another writer holding the lock makes Open fail
// at once with a *LockedError, or, with opt.WaitLock, wait for it until ctx
// ends.
func Open(ctx context.Context, dir string, opt Options) (*Dataset, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	if err := mkdirAll(filepath.Join(abs, metaDir)); err != nil {
		return nil, fmt.Errorf("cannot create the dataset %s: %w", abs, err)
	}
	lock, err := lockDataset(ctx, abs, opt.WaitLock)
	if err != nil {
		return nil, err
	}
	d := &Dataset{dir: abs, lock: lock}
	if err := d.recover(); err != nil {
		unlockDataset(lock)
		return nil, err
	}
	return d, nil
}

// Dir returns the dataset's absolute directory.
func (d *Dataset) Dir() string { return d.dir }

// Path turns a manifest path (relative to the dataset, slash-separated)
// into a path on this system.
func (d *Dataset) Path(rel string) string { return filepath.Join(d.dir, filepath.FromSlash(rel)) }

// Manifest returns a copy of the dataset's manifest as of the last commit.
func (d *Dataset) Manifest() *Manifest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.manifest.clone()
}

// Close releases the lock. An open transaction is aborted first (its
// uncommitted files are discarded; what it committed stays).
func (d *Dataset) Close() error {
	d.mu.Lock()
	t := d.txn
	d.mu.Unlock()
	if t != nil {
		t.Abort()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := unlockDataset(d.lock); err != nil {
		return fmt.Errorf("releasing the lock of dataset %s: %w", d.dir, err)
	}
	return nil
}

func (d *Dataset) recover() error {
	m, err := ReadManifest(d.dir)
	if err != nil {
		return err
	}
	d.manifest = m
	if m.Pending != nil {
		if err := d.apply(m.Pending, nil); err != nil {
			return fmt.Errorf("dataset %s: finishing the interrupted commit of run %s: %w", d.dir, m.Pending.RunID, err)
		}
		m.Pending = nil
		if err := writeManifest(d.dir, m); err != nil {
			return fmt.Errorf("dataset %s: finishing the interrupted commit: %w", d.dir, err)
		}
	}
	// Staging areas of crashed or aborted runs: no run is alive, we hold
	// the lock.
	staging := filepath.Join(d.dir, metaDir, stagingDir)
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("dataset %s: removing the staging area of a crashed run: %w", d.dir, err)
	}
	os.Remove(filepath.Join(d.dir, metaDir, "."+manifestFile+".tmp"))
	return d.sweep()
}

// sweep removes stale temporary files and empty partition directories
// from every table directory: DIR/<table>/dt=*/.*.tmp, and DIR/<table>/dt=*
// left empty. Only directories named dt=... under non-hidden top-level
// directories are looked at, so a dataset directory that also holds other
// things is not disturbed.
func (d *Dataset) sweep() error {
	tops, err := os.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("dataset %s: %w", d.dir, err)
	}
	for _, top := range tops {
		if !top.IsDir() || strings.HasPrefix(top.Name(), ".") || strings.HasPrefix(top.Name(), "_") {
			continue
		}
		tdir := filepath.Join(d.dir, top.Name())
		parts, err := os.ReadDir(tdir)
		if err != nil {
			continue
		}
		for _, p := range parts {
			if !p.IsDir() || !strings.HasPrefix(p.Name(), "dt=") {
				continue
			}
			pdir := filepath.Join(tdir, p.Name())
			files, err := os.ReadDir(pdir)
			if err != nil {
				continue
			}
			removed := false
			for _, f := range files {
				if n := f.Name(); f.Type().IsRegular() && strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp") {
					if err := os.Remove(filepath.Join(pdir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return fmt.Errorf("dataset %s: removing the stale temporary file %s: %w", d.dir, filepath.Join(pdir, n), err)
					}
					removed = true
				}
			}
			if removeIfEmpty(pdir) {
				removed = true
			}
			if removed {
				syncDir(pdir)
				syncDir(tdir)
			}
		}
	}
	return nil
}

// apply performs a commit's operations idempotently: a rename whose source
// is gone and whose target exists was done already; a delete of a missing
// file was done already. Directories left empty are removed, and every
// directory touched is fsynced. after, when set, is called after each
// operation (tests use it to stop half-way).
func (d *Dataset) apply(p *Pending, after func(i int) error) error {
	touched := map[string]bool{}
	i := 0
	for _, r := range p.Renames {
		from, to := d.Path(r.From), d.Path(r.To)
		if err := mkdirAll(filepath.Dir(to)); err != nil {
			return err
		}
		if err := rename(from, to); err != nil {
			if _, serr := os.Stat(from); errors.Is(serr, fs.ErrNotExist) {
				if _, terr := os.Stat(to); terr == nil {
					err = nil // done before a crash
				} else {
					err = fmt.Errorf("%w: the staged file is missing, so the commit of run %s cannot be finished: ingest those sources again", err, p.RunID)
				}
			}
			if err != nil {
				return err
			}
		}
		touched[filepath.Dir(to)] = true
		touched[filepath.Dir(from)] = true
		if after != nil {
			if err := after(i); err != nil {
				return err
			}
		}
		i++
	}
	for _, rel := range p.Deletes {
		path := d.Path(rel)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		touched[filepath.Dir(path)] = true
		if after != nil {
			if err := after(i); err != nil {
				return err
			}
		}
		i++
	}
	dirs := make([]string, 0, len(touched))
	for dir := range touched {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	parents := map[string]bool{}
	for _, dir := range dirs {
		if !strings.HasPrefix(filepath.Base(dir), "dt=") {
			if _, err := os.Stat(dir); err == nil {
				if err := syncDir(dir); err != nil {
					return err
				}
			}
			continue
		}
		parents[filepath.Dir(dir)] = true
		if removeIfEmpty(dir) {
			continue
		}
		if _, err := os.Stat(dir); err == nil {
			if err := syncDir(dir); err != nil {
				return err
			}
		}
	}
	for parent := range parents {
		if _, err := os.Stat(parent); err == nil {
			if err := syncDir(parent); err != nil {
				return err
			}
		}
	}
	return nil
}
