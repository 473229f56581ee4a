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

// lockDataset takes the exclusive lock of the dataset at dir (an flock on
// DIR/.mcptrace/lock). The kernel drops an flock when its holder exits,
// however it exits (SIGKILL included), so a crashed writer never leaves
// the dataset locked. The file records who holds it; it is never removed
// (removing an flock'ed file lets two processes lock two different files).
func lockDataset(ctx context.Context, dir string, wait bool) (*os.File, error) {
	path := filepath.Join(dir, metaDir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock of dataset %s: %w", dir, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking dataset %s (%s): %w", dir, path, err)
		}
		if !wait {
			h := currentHolder(path)
			f.Close()
			return nil, &LockedError{Dataset: dir, Holder: h}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock of dataset %s: %w", dir, ctx.Err())
		case <-time.After(lockPollInterval):
		}
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.Marshal(h)
	// Best effort: the record is for the message a second writer prints;
	// the lock itself is the flock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	return f, nil
}

func unlockDataset(f *os.File) error {
	// Closing the descriptor drops the flock.
	return f.Close()
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
