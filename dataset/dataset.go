package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
	// Scope, when set, opens one scope of the dataset: a writer that
	// shares the dataset with the writers of other scopes (Kafka consumers
	// of one group, each owning some partitions), with its own lock,
	// manifest and staging area (see the package documentation, "Scopes").
	// Letters, digits, '.', '_', '-' and '+', at most 150, not "." or "..".
	// Empty: the whole dataset, exclusively.
	Scope string
}

var scopeRE = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,150}$`)

// ValidScope reports why scope is not a valid scope name, or nil.
func ValidScope(scope string) error {
	if !scopeRE.MatchString(scope) || scope == "." || scope == ".." {
		return fmt.Errorf("invalid dataset scope %q: use at most 150 letters, digits, '.', '_', '-' and '+' (not \".\" or \"..\")", scope)
	}
	return nil
}

// Dataset is an open, locked dataset directory, or one scope of it.
type Dataset struct {
	dir   string // absolute
	scope string // "" for the whole dataset
	locks heldLocks

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

// ScopeHolder is the holder of one scope's lock.
type ScopeHolder struct {
	Scope string
	Holder
}

// ErrLocked is matched (errors.Is) by the error Open returns when another
// writer holds the dataset.
var ErrLocked = errors.New("dataset is locked by another writer")

// LockedError is the error of an Open that found the dataset locked.
type LockedError struct {
	Dataset string
	// Scope is the scope whose lock another writer holds; "" when the
	// Open could not take the dataset's own lock.
	Scope  string
	Holder Holder // zero when the lock file could not be read, or Scoped
	// Scoped says that an Open without scope found the dataset held by
	// scoped writers (Kafka consumers). Writers lists those whose scope's
	// lock file names a holder that may be alive.
	Scoped  bool
	Writers []ScopeHolder
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "another mcptrace process"
	}
	return fmt.Sprintf("mcptrace pid %d on host %s since %s", h.PID, h.Host, h.Since.Format(time.RFC3339))
}

func (e *LockedError) Error() string {
	switch {
	case e.Scoped:
		msg := fmt.Sprintf("dataset %s is being written by Kafka consumers (scoped writers)", e.Dataset)
		var ws []string
		for i, w := range e.Writers {
			if i == 3 {
				ws = append(ws, fmt.Sprintf("and %d more", len(e.Writers)-i))
				break
			}
			ws = append(ws, fmt.Sprintf("scope %s by %s", w.Scope, w.Holder))
		}
		if len(ws) > 0 {
			msg += ": " + strings.Join(ws, ", ")
		}
		return msg + "; wait for them to stop, or pass -wait-lock to wait"
	case e.Scope != "":
		return fmt.Sprintf("scope %s of dataset %s is being written by %s: wait for it to finish, or pass -wait-lock to wait", e.Scope, e.Dataset, e.Holder)
	}
	return fmt.Sprintf("dataset %s is being written by %s: wait for it to finish, or pass -wait-lock to wait", e.Dataset, e.Holder)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Open opens the dataset at dir, creating it if needed, takes its lock and
// recovers it from a crashed run: a commit that passed its commit point is
// rolled forward, then staging areas of crashed runs, stale temporary files
// (".*.tmp" in the tables' partition directories) and empty dt=
// directories are removed. Another writer holding the lock makes Open fail
// at once with a *LockedError, or, with opt.WaitLock, wait for it until ctx
// ends.
//
// With opt.Scope, Open opens that scope: it shares the dataset's lock with
// the other scopes' writers, takes the scope's own exclusively, and
// recovers only the scope's manifest and staging area (nothing in the
// tables' directories is swept: other scopes write there meanwhile).
func Open(ctx context.Context, dir string, opt Options) (*Dataset, error) {
	if opt.Scope != "" {
		if err := ValidScope(opt.Scope); err != nil {
			return nil, fmt.Errorf("dataset %s: %w", dir, err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	if err := mkdirAll(filepath.Join(abs, metaDir)); err != nil {
		return nil, fmt.Errorf("cannot create the dataset %s: %w", abs, err)
	}
	locks, err := lockDataset(ctx, abs, opt.Scope, opt.WaitLock)
	if err != nil {
		return nil, err
	}
	d := &Dataset{dir: abs, scope: opt.Scope, locks: locks}
	if err := d.recover(); err != nil {
		unlockDataset(locks)
		return nil, err
	}
	return d, nil
}

// Scope returns the scope the dataset was opened with ("" for the whole
// dataset).
func (d *Dataset) Scope() string { return d.scope }

// name is how errors name the dataset: "DIR", or "DIR (scope S)".
func (d *Dataset) name() string {
	if d.scope == "" {
		return d.dir
	}
	return d.dir + " (scope " + d.scope + ")"
}

// metaPath is the directory of this writer's manifest and staging area:
// DIR/.mcptrace, or DIR/.mcptrace/scopes/SCOPE.
func (d *Dataset) metaPath() string {
	if d.scope == "" {
		return filepath.Join(d.dir, metaDir)
	}
	return filepath.Join(d.dir, metaDir, scopesDir, d.scope)
}

func (d *Dataset) manifestPath() string { return filepath.Join(d.metaPath(), manifestFile) }
func (d *Dataset) stagingPath() string  { return filepath.Join(d.metaPath(), stagingDir) }

// Dir returns the dataset's absolute directory.
func (d *Dataset) Dir() string { return d.dir }

// Path turns a manifest path (relative to the dataset, slash-separated)
// into a path on this system.
func (d *Dataset) Path(rel string) string { return filepath.Join(d.dir, filepath.FromSlash(rel)) }

// Manifest returns a copy of the dataset's manifest as of the last commit:
// with a scope, the scope's own (ReadManifest gives the union of all).
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
	if err := unlockDataset(d.locks); err != nil {
		return fmt.Errorf("releasing the lock of dataset %s: %w", d.name(), err)
	}
	return nil
}

func (d *Dataset) recover() error {
	m, err := readManifestFile(d.manifestPath())
	if err != nil {
		return err
	}
	d.manifest = m
	if m.Pending != nil {
		if err := d.apply(m.Pending, nil); err != nil {
			return fmt.Errorf("dataset %s: finishing the interrupted commit of run %s: %w", d.name(), m.Pending.RunID, err)
		}
		m.Pending = nil
		if err := writeManifest(d.manifestPath(), m); err != nil {
			return fmt.Errorf("dataset %s: finishing the interrupted commit: %w", d.name(), err)
		}
	}
	if err := d.syncLedger(m); err != nil {
		return err
	}
	// Staging areas of crashed or aborted runs: no run of this writer (the
	// dataset, or the scope) is alive, we hold its lock.
	if err := os.RemoveAll(d.stagingPath()); err != nil {
		return fmt.Errorf("dataset %s: removing the staging area of a crashed run: %w", d.name(), err)
	}
	os.Remove(filepath.Join(d.metaPath(), "."+manifestFile+".tmp"))
	if d.scope != "" {
		// Other scopes write in the tables' directories meanwhile: a
		// temporary file there may be theirs.
		return nil
	}
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
		if err := renameInto(from, to); err != nil {
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
	// A directory may be gone: the staging area of a run that finished
	// before a crash, or, with scopes, a dt= directory that another
	// scope's commit found empty and removed (then nothing of ours is in
	// it).
	for _, dir := range dirs {
		if !strings.HasPrefix(filepath.Base(dir), "dt=") {
			if err := syncDirIfExists(dir); err != nil {
				return err
			}
			continue
		}
		parents[filepath.Dir(dir)] = true
		if removeIfEmpty(dir) {
			continue
		}
		if err := syncDirIfExists(dir); err != nil {
			return err
		}
	}
	for parent := range parents {
		if err := syncDirIfExists(parent); err != nil {
			return err
		}
	}
	return nil
}

// renameInto renames from to to, creating to's directory. Scopes share
// the tables' dt= directories, and a commit removes the ones it leaves
// empty (see apply): when one goes between our mkdir and our rename, the
// rename fails with ENOENT while from is still there; then the directory
// is made again and the rename retried. rmdir only removes an empty
// directory, so once our file is in it, it stays.
func renameInto(from, to string) error {
	for attempt := 0; ; attempt++ {
		if err := mkdirAll(filepath.Dir(to)); err != nil {
			return err
		}
		err := rename(from, to)
		if err == nil || attempt == 100 || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if _, serr := os.Stat(from); serr != nil {
			return err // the staged file is gone: the caller knows what that means
		}
	}
}
