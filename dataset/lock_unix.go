//go:build unix

package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lockPollInterval is how often a waiting Open retries the lock.
var lockPollInterval = 100 * time.Millisecond

// heldLocks are the flocks of an open Dataset: the dataset's lock
// (exclusive without scope, shared with one) and, with a scope, the
// scope's exclusive lock.
type heldLocks struct {
	main, scope *os.File
}

// lockDataset takes the locks of the dataset at dir: without scope, an
// exclusive flock on DIR/.mcptrace/lock; with one, a shared flock there
// (scoped writers exclude unscoped ones, not each other), then an
// exclusive flock on DIR/.mcptrace/scopes/SCOPE/lock. The kernel drops an
// flock when its holder exits, however it exits (SIGKILL included), so a
// crashed writer never leaves the dataset locked. The exclusive holder
// records who it is in the file; lock files are never removed (removing an
// flock'ed file lets two processes lock two different files).
func lockDataset(ctx context.Context, dir, scope string, wait bool) (heldLocks, error) {
	path := filepath.Join(dir, metaDir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return heldLocks{}, fmt.Errorf("opening the lock of dataset %s: %w", dir, err)
	}
	how := unix.LOCK_EX
	if scope != "" {
		how = unix.LOCK_SH
	}
	err = flockWait(ctx, f, how, wait, "dataset "+dir, func() error {
		if scope == "" && heldShared(f) {
			return &LockedError{Dataset: dir, Scoped: true, Writers: scopeWriters(dir)}
		}
		return &LockedError{Dataset: dir, Holder: currentHolder(path)}
	})
	if err != nil {
		f.Close()
		return heldLocks{}, err
	}
	if scope == "" {
		writeHolder(f)
		return heldLocks{main: f}, nil
	}
	sdir := filepath.Join(dir, metaDir, scopesDir, scope)
	if err := mkdirAll(sdir); err != nil {
		f.Close()
		return heldLocks{}, fmt.Errorf("cannot create scope %s of dataset %s: %w", scope, dir, err)
	}
	spath := filepath.Join(sdir, lockFile)
	g, err := os.OpenFile(spath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		f.Close()
		return heldLocks{}, fmt.Errorf("opening the lock of scope %s of dataset %s: %w", scope, dir, err)
	}
	err = flockWait(ctx, g, unix.LOCK_EX, wait, "scope "+scope+" of dataset "+dir, func() error {
		return &LockedError{Dataset: dir, Scope: scope, Holder: currentHolder(spath)}
	})
	if err != nil {
		g.Close()
		f.Close()
		return heldLocks{}, err
	}
	writeHolder(g)
	return heldLocks{main: f, scope: g}, nil
}

// flockWait takes the flock how (LOCK_EX or LOCK_SH) on f without
// blocking; while another process holds a conflicting one, it returns
// busy() or, with wait, retries every lockPollInterval until ctx ends.
func flockWait(ctx context.Context, f *os.File, how int, wait bool, what string, busy func() error) error {
	for {
		ok, err := tryFlock(f, how)
		if err != nil {
			return fmt.Errorf("locking %s (%s): %w", what, f.Name(), err)
		}
		if ok {
			return nil
		}
		if !wait {
			return busy()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the lock of %s: %w", what, ctx.Err())
		case <-time.After(lockPollInterval):
		}
	}
}

func tryFlock(f *os.File, how int) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// heldShared reports whether the lock f failed to take exclusively is held
// shared (by scoped writers): a shared flock is then granted, and dropped
// at once.
func heldShared(f *os.File) bool {
	ok, _ := tryFlock(f, unix.LOCK_SH)
	if ok {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	return ok
}

// writeHolder records the holder of the exclusive lock f: best effort, the
// record is for the message a second writer prints; the lock itself is the
// flock.
func writeHolder(f *os.File) {
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.Marshal(h)
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
}

func unlockDataset(l heldLocks) error {
	var err error
	if l.scope != nil {
		// A scope's record is cleared before its lock is dropped, so the
		// scope files of writers that closed name nobody (scopeWriters).
		l.scope.Truncate(0)
		err = l.scope.Close()
	}
	// Closing the descriptor drops the flock.
	if cerr := l.main.Close(); err == nil {
		err = cerr
	}
	return err
}

// scopeWriters returns the holders recorded in the lock files of the
// dataset's scopes that may be alive: a record of this host's names a
// running process; one of another host cannot be checked.
func scopeWriters(dir string) []ScopeHolder {
	scopes, _ := ReadScopes(dir)
	host, _ := os.Hostname()
	var out []ScopeHolder
	for _, s := range scopes {
		h := readHolder(filepath.Join(dir, metaDir, scopesDir, s, lockFile))
		if h.PID != 0 && (h.Host != host || alive(h.PID)) {
			out = append(out, ScopeHolder{Scope: s, Holder: h})
		}
	}
	return out
}

// currentHolder reads the holder's record. The holder writes it just after
// taking the lock, so a record that is empty or names a process that is
// gone (the previous holder) is read again for a moment; then a zero Holder
// makes the message say "another mcptrace process".
func currentHolder(path string) Holder {
	host, _ := os.Hostname()
	for i := 0; ; i++ {
		h := readHolder(path)
		if h.PID != 0 && (h.Host != host || alive(h.PID)) {
			return h
		}
		if i == 10 {
			return Holder{}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readHolder(path string) Holder {
	var h Holder
	b, err := os.ReadFile(path)
	if err == nil {
		json.Unmarshal([]byte(strings.TrimSpace(string(b))), &h)
	}
	return h
}

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
