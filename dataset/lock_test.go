package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

const holdEnv = "MCPTRACE_DATASET_TEST_HOLD"

// TestMain lets the test binary act as a second process holding a
// dataset's lock: with holdEnv set it opens that dataset, says so on
// stdout and waits to be killed. With scopeHelperEnv set it is a scoped
// writer (scope_test.go).
func TestMain(m *testing.M) {
	if spec := os.Getenv(scopeHelperEnv); spec != "" {
		os.Exit(scopeHelper(spec))
	}
	if dir := os.Getenv(holdEnv); dir != "" {
		d, err := Open(context.Background(), dir, Options{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		txn, _ := d.Begin("held", time.Now())
		tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
		tb.Write(src("file:/held"), rows("h", 10, 1))
		tb.Roll() // a staged file that the kill leaves behind
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestSecondWriterFailsAtOnce(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	start := time.Now()
	_, err := Open(context.Background(), dir, Options{})
	if err == nil {
		t.Fatal("a second Open of a locked dataset succeeded")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the second Open waited %v", time.Since(start))
	}
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("error %v is not a LockedError", err)
	}
	host, _ := os.Hostname()
	msg := err.Error()
	for _, want := range []string{d.Dir(), fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since ", "wait for it to finish, or pass -wait-lock to wait"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	if le.Holder.PID != os.Getpid() || le.Holder.Since.IsZero() {
		t.Fatalf("holder %+v", le.Holder)
	}

	// WaitLock: the second gets the lock once the first closes.
	got := make(chan error, 1)
	go func() {
		d2, err := Open(context.Background(), dir, Options{WaitLock: true})
		if err == nil {
			d2.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a waiting Open returned while the lock was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	d.Close()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiting Open: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting Open did not get the lock after it was released")
	}

	// WaitLock honours its context.
	d = open(t, dir)
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Open(ctx, dir, Options{WaitLock: true}); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), d.Dir()) {
		t.Fatalf("waiting Open with an ending context: %v", err)
	}
}

// Another process holds the lock; once it is killed with SIGKILL the
// kernel has released it, and Open removes what it left staged.
func TestLockAcrossProcessesAndSIGKILL(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "r0", RollPolicy{}, map[string][]row{"file:/a": rows("a", 5, 1)})
	before := snapshot(t, dir)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("holder said %q (%v)", line, err)
	}
	_, err = Open(context.Background(), dir, Options{})
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != cmd.Process.Pid {
		t.Fatalf("Open while pid %d holds the lock: %v", cmd.Process.Pid, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Fatalf("message does not name the holder: %v", err)
	}
	if _, err := os.Stat(dir + "/.mcptrace/staging/held"); err != nil {
		t.Fatalf("the holder's staging area: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	d, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	d.Close()
	sameSnapshot(t, "after a SIGKILLed writer", before, snapshot(t, dir))
}
