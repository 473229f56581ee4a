package main

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcptrace/internal/traffic"
)

// TestSoftLimit: the default soft limit is softFloor while little is live,
// then a heap budget of half as much again as the live heap, and above
// paceFloor the pacer's goal, each plus a sixteenth; the two budgets meet at
// the floor, so the limit never falls and never jumps as the live heap
// grows; it always leaves a quarter of the live heap to allocate, and
// above the floor it is never below the pacer's heap goal.
func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, softFloor},
		{100 << 20, softFloor},
		{140 << 20, softFloor},
		{160 << 20, 240 << 20 * 17 / 16},
		{200 << 20, 300 << 20 * 17 / 16},
		{paceFloor, 384 << 20 * 17 / 16},
		{300 << 20, 384 << 20 * 17 / 16},
		{320 << 20, 400 << 20 * 17 / 16},
		{512 << 20, 640 << 20 * 17 / 16},
		{4 << 30, 5 << 30 * 17 / 16},
	} {
		if got := softLimit(c.live); got != c.want {
			t.Errorf("softLimit(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
	const step = 3 << 20
	last := softLimit(0)
	for live := uint64(0); live < 8<<30; live += step {
		l := softLimit(live)
		if l < int64(live+live/4) {
			t.Fatalf("softLimit(%d MiB) = %d MiB: less than a quarter of the live heap to allocate", live>>20, l>>20)
		}
		if goal := heapGoal(live); live > paceFloor && l < int64(goal) {
			t.Fatalf("softLimit(%d MiB) = %d MiB: below the pacer's heap goal %d MiB", live>>20, l>>20, goal>>20)
		}
		// Within 1% of the live heap: heapGoal rounds GOGC up to a whole percent.
		if l+int64(live/100) < last || l > last+2*step+int64(live/50) {
			t.Fatalf("softLimit(%d MiB) = %d MiB after %d MiB %d MiB before: it falls or jumps", live>>20, l>>20, last>>20, step>>20)
		}
		last = l
	}
}

// gcCycles is how many collections the runtime has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// churn allocates n MiB of garbage, a MiB at a time, and says how many
// collections ran meanwhile.
func churn(n int) uint64 {
	before := gcCycles()
	var keep []byte
	for range n {
		keep = make([]byte, 1<<20)
		keep[0] = 1
	}
	runtime.KeepAlive(keep)
	return gcCycles() - before
}

// TestSoftLimitRisesWithLiveHeap: with the default soft limit, a run that
// keeps much more live than softFloor (512 MiB here) has its limit raised
// after a collection and collects about as often as the pacer alone would
// (a limit left at softFloor would have the collector run without end,
// held back only by its CPU limiter); stop restores the limit there was before. -memory-limit given (or
// GOMEMLIMIT) leaves the limit alone.
func TestSoftLimitRisesWithLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	live := make([]byte, 2*paceFloor) // counted live whether or not its pages are touched

	stop := startPacer(false, true)
	if got := debug.SetMemoryLimit(-1); got < softFloor {
		t.Errorf("limit %d MiB at the start, want at least %d MiB", got>>20, softFloor>>20)
	}
	var limit int64
	for range 100 { // the finalizer runs after the collection, on its own goroutine
		runtime.GC()
		time.Sleep(time.Millisecond)
		if limit = debug.SetMemoryLimit(-1); limit > softFloor {
			break
		}
	}
	if want := softLimit(uint64(len(live))); limit < want {
		t.Errorf("limit %d MiB with %d MiB live, want at least %d MiB", limit>>20, len(live)>>20, want>>20)
	}
	paced := churn(1024)
	stop()
	runtime.KeepAlive(live)
	// 1 GiB of garbage with 256 MiB of headroom: about 4 collections.
	if paced > 16 {
		t.Errorf("%d collections for 1 GiB of garbage with %d MiB live under the default soft limit, want at most 16", paced, len(live)>>20)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after stop, want the one before (none)", got)
	}

	debug.SetMemoryLimit(300 << 20)
	stop = startPacer(true, false) // -memory-limit 300
	runtime.GC()
	time.Sleep(time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("limit %d MiB under -memory-limit 300, want 300", got>>20)
	}
	stop()
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	stop = startPacer(false, true) // GOMEMLIMIT set
	runtime.GC()
	time.Sleep(time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit %d MiB under GOMEMLIMIT=1GiB, want 1024", got>>20)
	}
	stop()
	runtime.KeepAlive(live)
}

// TestDefaultSoftLimitBinary: the real binary, on a 256 MiB wire log of
// genlog's traffic, stays within 256 MiB of peak RSS without any flag, and
// -memory-limit 0 (no limit) still runs (its peak is logged beside).
func TestDefaultSoftLimitBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 256 MiB log")
	}
	bin := ingestBinary(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "wire.ndjson")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := traffic.Write(w, traffic.Options{Seed: 1, Bytes: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The peak is GNU time's: a child started from this process counts
	// this process's own resident memory in its peak (Linux starts it in
	// this process's memory before exec), GNU time's child does not.
	gnuTime, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		t.Skip("GNU time (/usr/bin/time) is not installed")
	}
	peak := func(name string, flags ...string) int64 {
		rss := filepath.Join(dir, name+".rss")
		args := append([]string{"-f", "%M", "-o", rss, bin, "-quiet", "-out", filepath.Join(dir, name)}, flags...)
		cmd := exec.Command(gnuTime, append(args, log)...)
		cmd.Env = append(os.Environ(), "GOGC=", "GOMEMLIMIT=", "MCPTRACE_PSEUDONYM_KEY=000102030405060708090a0b0c0d0e0f")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ingest %s: %v\n%s", strings.Join(flags, " "), err, out)
		}
		if !strings.Contains(string(out), "[OK]") {
			t.Fatalf("ingest %s: the summary does not balance:\n%s", strings.Join(flags, " "), out)
		}
		b, err := os.ReadFile(rss)
		if err != nil {
			t.Fatal(err)
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatalf("GNU time wrote %q: %v", b, err)
		}
		return kib >> 10
	}
	def := peak("default")
	none := peak("none", "-memory-limit", "0")
	t.Logf("peak RSS on a 256 MiB wire log: %d MiB by default, %d MiB with -memory-limit 0", def, none)
	if def > 256 {
		t.Errorf("peak RSS %d MiB by default, want at most 256 MiB", def)
	}
}
