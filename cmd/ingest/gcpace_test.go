package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc reads the runtime's GOGC.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestPacePercent: GOGC stays 100 up to the floor of live heap; above it
// the heap goal is max(1.5*paceFloor, live + live/4) (to the next whole
// percent), so the headroom is a quarter of the live heap from about 307
// MiB, and the goal never falls as the live heap grows.
func TestPacePercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{100 << 20, 100},
		{paceFloor, 100},
		{paceFloor + 1, 50},
		{300 << 20, 28},
		{307 << 20, 26},
		{320 << 20, 25},
		{384 << 20, 25},
		{512 << 20, 25},
		{700 << 20, 25},
		{4 << 30, 25},
	} {
		if got := pacePercent(c.live); got != c.want {
			t.Errorf("pacePercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
	last := uint64(0)
	for live := uint64(paceFloor) + 1; live < 8<<30; live += 1<<20 + 1 {
		want := max(paceFloor+paceFloor/2, live+live/4)
		goal := heapGoal(live)
		if goal < want || goal > want+live/100+1 {
			t.Fatalf("heapGoal(%d MiB) = %d MiB, want %d MiB to 1%% of the live heap more", live>>20, goal>>20, want>>20)
		}
		if goal+live/100 < last {
			t.Fatalf("heapGoal(%d MiB) = %d MiB, below %d MiB for a smaller live heap", live>>20, goal>>20, last>>20)
		}
		last = goal
	}
}

// TestHeapPacer: with more than the floor live, a collection lowers GOGC;
// stop puts it back to 100; a run whose environment sets GOGC is left
// alone.
func TestHeapPacer(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	live := make([]byte, 2*paceFloor) // counted live whether or not its pages are touched
	stop := startHeapPacer(false)
	var got int
	for range 100 { // the finalizer runs after the collection, on its own goroutine
		runtime.GC()
		time.Sleep(time.Millisecond)
		if got = gogc(); got != 100 {
			break
		}
	}
	stop()
	runtime.KeepAlive(live)
	if got != 25 {
		t.Errorf("GOGC %d with %d MiB live, want 25", got, len(live)>>20)
	}
	if pc := gogc(); pc != 100 {
		t.Errorf("GOGC %d after stop, want 100", pc)
	}
	stop = startHeapPacer(true) // -memory-limit set: no pacing
	for range 3 {
		runtime.GC()
		runtime.Gosched()
	}
	if pc := gogc(); pc != 100 {
		t.Errorf("GOGC %d with -memory-limit set, want 100", pc)
	}
	stop()
	runtime.KeepAlive(live)
}

// TestPacerOwningTheLimit: while the pacer owns the soft limit and little
// is live, GOGC is limitPercent from the start (the limit decides when to
// collect); with more than the floor live a collection lowers it to the
// pacer's percent; stop puts back GOGC=100 and the limit found at start.
func TestPacerOwningTheLimit(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	before := debug.SetMemoryLimit(-1)
	runtime.GC() // the live heap the pacer reads is the last collection's: not an earlier test's
	stop := startPacer(false, true)
	if pc := gogc(); pc != limitPercent {
		t.Errorf("GOGC %d at start with little live, want %d", pc, limitPercent)
	}
	if l := debug.SetMemoryLimit(-1); l < softFloor {
		t.Errorf("soft limit %d MiB at start, want at least %d MiB", l>>20, softFloor>>20)
	}
	live := make([]byte, 2*paceFloor)
	var got int
	for range 100 { // the finalizer runs after the collection, on its own goroutine
		runtime.GC()
		time.Sleep(time.Millisecond)
		if got = gogc(); got != limitPercent {
			break
		}
	}
	runtime.KeepAlive(live)
	if got != 25 {
		t.Errorf("GOGC %d with %d MiB live, want 25", got, len(live)>>20)
	}
	stop()
	if pc := gogc(); pc != 100 {
		t.Errorf("GOGC %d after stop, want 100", pc)
	}
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("soft limit %d after stop, want %d as before", l, before)
	}
}
