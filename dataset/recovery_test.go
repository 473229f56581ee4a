package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

var errCrash = errors.New("simulated crash")

func withFaults(t *testing.T, f *faults) {
	t.Helper()
	fault = f
	t.Cleanup(func() { fault = nil })
}

// tablesOnly is a snapshot without the manifest and lock (to compare two
// datasets written by different runs).
func tablesOnly(s map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		if !strings.HasPrefix(k, metaDir) {
			out[k] = v
		}
	}
	return out
}

// rerunA is the second run of the crash tests: a again, shrunk to two
// days, with a quarantine table that gets its zero-row file.
func rerunA(t *testing.T, dir string) (*Dataset, *Txn, error) {
	d := open(t, dir)
	txn := begin(t, d, "r2")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	rs := rows("a2", 8, 2)
	if err := tb.Write(src("file:/a"), rs); err != nil {
		t.Fatal(err)
	}
	_, err := txn.Commit([]SourceState{done("file:/a")})
	return d, txn, err
}

// A commit stopped after its commit point, at every step of its apply, is
// finished by the next Open: the dataset equals that of an uninterrupted
// run.
func TestCrashAfterCommitPointRollsForward(t *testing.T) {
	first := map[string][]row{"file:/a": rows("a", 30, 3), "file:/b": rows("b", 3, 1)}
	clean := t.TempDir()
	run(t, clean, "r1", RollPolicy{}, first)
	d, txn, err := rerunA(t, clean)
	if err != nil {
		t.Fatal(err)
	}
	txn.Close()
	wantManifest := d.Manifest()
	d.Close()
	want := tablesOnly(snapshot(t, clean))

	type crash struct {
		name string
		f    func(*faults)
	}
	var crashes []crash
	crashes = append(crashes, crash{"before the first operation", func(f *faults) {
		f.rename = func(from, to string) error {
			if strings.Contains(from, "staging") && !strings.Contains(to, "staging") {
				return errCrash
			}
			return nil
		}
	}})
	for i := 0; i < 4; i++ { // 3 renames (2 of a's files, quarantine's zero-row file), 1 delete
		crashes = append(crashes, crash{fmt.Sprintf("after operation %d", i), func(f *faults) {
			f.applied = func(j int) error {
				if j == i {
					return errCrash
				}
				return nil
			}
		}})
	}
	crashes = append(crashes, crash{"before the final manifest", func(f *faults) {
		n := 0
		f.write = func(path string, _ int) error {
			if strings.HasSuffix(path, ".manifest.json.tmp") {
				if n++; n == 2 {
					return errCrash
				}
			}
			return nil
		}
	}})
	for _, c := range crashes {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, "r1", RollPolicy{}, first)
			f := &faults{}
			c.f(f)
			withFaults(t, f)
			d, txn, err := rerunA(t, dir)
			fault = nil
			if err == nil || !errors.Is(err, errCrash) || !strings.Contains(err.Error(), "next run finishes it") {
				t.Fatalf("commit with a crash: %v", err)
			}
			if _, err := txn.Commit(nil); err == nil {
				t.Fatal("a broken transaction accepted another commit")
			}
			txn.Abort() // must keep the staged files the pending commit needs
			d.Close()
			if m, _ := ReadManifest(dir); m.Pending == nil && c.name != "before the final manifest" {
				t.Fatal("the manifest has no pending operations after a crash")
			}
			d = open(t, dir)
			m := d.Manifest()
			d.Close()
			if m.Pending != nil {
				t.Fatalf("Open left pending operations: %+v", m.Pending)
			}
			if !reflect.DeepEqual(m.Files("events"), wantManifest.Files("events")) || m.EmptyFile("quarantine") != wantManifest.EmptyFile("quarantine") {
				t.Fatalf("manifest after recovery:\n%+v\nwant\n%+v", m.Files("events"), wantManifest.Files("events"))
			}
			sameSnapshot(t, "recovered vs clean", want, tablesOnly(snapshot(t, dir)))
			if _, err := os.Stat(filepath.Join(dir, metaDir, stagingDir)); !os.IsNotExist(err) {
				t.Fatalf("staging area left after recovery: %v", err)
			}
		})
	}
}

func TestOpenRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rows("a", 6, 2)})
	before := snapshot(t, dir)
	put := func(rel string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("events/dt=2026-10-17/.file-0123456789ab-00001.parquet.tmp") // a writer's temp file
	put("events/dt=2026-10-21/.part-old.parquet.tmp")                // today's sink's temp name, alone in its partition
	put(".mcptrace/staging/crashed-run/events/dt=2026-10-17/file-0123456789ab-00001.parquet")
	put(".mcptrace/staging/crashed-run/events/dt=2026-10-17/.file-0123456789ab-00002.parquet.tmp")
	put(".mcptrace/.manifest.json.tmp")
	os.MkdirAll(filepath.Join(dir, "events", "dt=2026-11-01"), 0o755)
	put("notes/.keep.tmp") // not a partition directory: not ours to remove
	d := open(t, dir)
	d.Close()
	after := snapshot(t, dir)
	if _, ok := after["notes/.keep.tmp"]; !ok {
		t.Fatal("Open removed a file outside the tables' partitions")
	}
	delete(after, "notes/.keep.tmp")
	delete(after, "notes/")
	sameSnapshot(t, "after Open", before, after)
}

// A failure before the commit point (the new manifest cannot be written)
// leaves the dataset and its manifest as they were; the staged files stay
// for a retry.
func TestManifestWriteFailureLeavesDataset(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rows("a", 30, 3), "file:/b": rows("b", 3, 1)})
	before := snapshot(t, dir)
	withFaults(t, &faults{write: func(path string, _ int) error {
		if strings.HasSuffix(path, ".manifest.json.tmp") {
			return syscall.ENOSPC
		}
		return nil
	}})
	d, txn, err := rerunA(t, dir)
	if err == nil {
		t.Fatal("commit succeeded with a full disk")
	}
	for _, want := range []string{filepath.Join(d.Dir(), ".mcptrace", ".manifest.json.tmp"), "no space left on device", "dataset is unchanged"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q lacks %q", err, want)
		}
	}
	snap := snapshot(t, dir)
	for k := range snap {
		if strings.HasPrefix(k, ".mcptrace/staging") {
			delete(snap, k)
		}
	}
	sameSnapshot(t, "after a failed commit (staging aside)", before, snap)
	// The disk has room again: the same transaction commits.
	fault = nil
	if _, err := txn.Commit([]SourceState{done("file:/a")}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := rowsOf(d.Manifest(), "file:/a"); n != 8 {
		t.Fatalf("after the retry a has %d rows, want 8", n)
	}
	txn.Close()
	d.Close()
}

// fullDisk runs a rerun that does not fit and checks that the error names
// the path and the cause and that the dataset is as it was.
func fullDisk(t *testing.T, dir string) {
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rows("a", 20, 2), "file:/b": rows("b", 3, 1)})
	before := snapshot(t, dir)
	d := open(t, dir)
	txn := begin(t, d, "r2")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{MaxRows: 4096})
	NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	rng := rand.New(rand.NewPCG(1, 2))
	var err error
	for batch := 0; batch < 40 && err == nil; batch++ {
		rs := rows("a", 1000, 3)
		for i := range rs {
			rs[i].Payload = fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
		}
		err = tb.Write(src("file:/a"), rs)
	}
	if err == nil {
		_, err = txn.Commit([]SourceState{done("file:/a")})
	}
	if err == nil {
		t.Fatal("2.5 MB of incompressible rows fit on a 1 MiB disk")
	}
	t.Logf("error: %v", err)
	if !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), d.Dir()+string(filepath.Separator)) {
		t.Fatalf("the error does not name the path and the cause: %v", err)
	}
	if err := txn.Abort(); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after a full disk", before, snapshot(t, dir))
	d.Close()
	d = open(t, dir)
	d.Close()
	sameSnapshot(t, "after reopening", before, snapshot(t, dir))
}

func TestFullDisk(t *testing.T) {
	t.Run("injected", func(t *testing.T) {
		var written int64
		withFaults(t, &faults{write: func(path string, n int) error {
			if strings.Contains(path, "staging") {
				if written += int64(n); written > 512<<10 {
					return syscall.ENOSPC
				}
			}
			return nil
		}})
		fullDisk(t, t.TempDir())
	})
	t.Run("tmpfs", func(t *testing.T) {
		dir := t.TempDir()
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			// A sandbox that refuses mounts: the injected case above is
			// all this run shows.
			t.Logf("cannot mount a 1 MiB tmpfs (%v): only the injected full disk was tested", err)
			return
		}
		t.Cleanup(func() { unix.Unmount(dir, 0) })
		fullDisk(t, dir)
	})
}

func TestSyncFailure(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "r1", RollPolicy{}, map[string][]row{"file:/a": rows("a", 6, 2)})
	before := snapshot(t, dir)
	withFaults(t, &faults{sync: func(path string) error {
		if strings.HasSuffix(path, ".parquet.tmp") {
			return syscall.EIO
		}
		return nil
	}})
	d := open(t, dir)
	defer d.Close()
	txn := begin(t, d, "r2")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	if err := tb.Write(src("file:/a"), rows("a", 5, 1)); err != nil {
		t.Fatal(err)
	}
	_, err := txn.Commit([]SourceState{done("file:/a")})
	if err == nil || !strings.Contains(err.Error(), "syncing "+d.Dir()) || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("commit with a failing fsync: %v", err)
	}
	txn.Abort()
	sameSnapshot(t, "after a failed fsync", before, snapshot(t, dir))
}
