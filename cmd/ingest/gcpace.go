package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The garbage collector's headroom once the live heap is large (issue 11:
// flat memory). With GOGC=100 the heap grows to twice what is live before
// the next collection: harmless while little is live (a run's queues and
// buffers, some 100 to 150 MB), but a run that keeps much open (200,000
// conversations that never end) peaks at twice its state. heapPacer keeps
// GOGC=100 up to paceFloor of live heap (limitPercent while it owns the
// soft limit, so that the limit decides); above it the heap goal is the
// larger of 1.5*paceFloor (384 MiB: the soft limit's own heap budget at the
// floor, so the budget does not jump as the live heap crosses it) and the
// live heap plus a quarter (GOGC=25 from about 307 MiB live): at 400 MiB
// live the goal is 500 MiB rather than 800, at 700 MiB 875 rather than
// 1,400. The goal never falls as the live heap grows. Below the floor
// GOGC is not lowered, so a run that keeps little live pays no extra
// collection; one that keeps much collects about four times as often per
// byte allocated.
//
// Unless -memory-limit, GOMEMLIMIT or GOGC says otherwise, the pacer also
// sets a soft memory limit (debug.SetMemoryLimit) that rises with the live
// heap (softLimit): softFloor while at most about 140 MB is live, which is
// what keeps a long wire log within 256 MiB of RSS (the heap is held near
// the limit and what it frees is returned to the system), then a heap
// budget of half as much again as the live heap, and above paceFloor the
// pacer's heap goal; each with a sixteenth more for what is not heap. The
// limit is continuous in the live heap and always leaves at least a
// quarter of it to allocate, so a run that keeps much live (300 MB and
// more) is paced by GOGC and never collects without end against a limit
// below what it needs, and what the heap frees is handed back to the
// system as it goes (a limit far above the goal let freed pages stay
// resident: 200,000 open conversations peaked some 100 MiB above the
// heap goal).

// paceFloor is the live heap up to which the collector keeps its default
// headroom (GOGC=100).
const paceFloor = 256 << 20

// pacePercent is the GOGC for a live heap of live bytes: 100 up to
// paceFloor, then the least whole percent that makes the heap goal at
// least max(paceFloor + paceFloor/2, live + live/4) (heapGoal).
func pacePercent(live uint64) int {
	if live <= paceFloor {
		return 100
	}
	const atFloor = paceFloor + paceFloor/2
	headroom := max(live/4, atFloor-min(live, atFloor))
	return int((headroom*100 + live - 1) / live)
}

// heapGoal is the heap size the collector lets a live heap of live bytes
// grow to under pacePercent.
func heapGoal(live uint64) uint64 {
	return live + live*uint64(pacePercent(live))/100
}

// limitPercent is the GOGC below paceFloor while the pacer owns the soft
// limit (softLimit): high enough that a run keeping some 60 MB or more live
// grows its heap to the limit rather than to twice what is live, so the
// limit, not GOGC, decides when it collects. A 1 GiB wire log keeps about
// 110 MB live: at GOGC=100 it collected at some 220 MB of heap, about 45
// times; held to the 224 MiB limit it collects fewer times for the same
// memory, and the run takes about 8% fewer instructions (callgrind, 200 MB
// of the log: 12.0 against 13.1 billion). A run keeping little live still
// collects at four times what it keeps, so it stays small.
const limitPercent = 300

// softFloor is the default soft memory limit while little is live.
const softFloor = 224 << 20

// softLimit is the soft memory limit for a live heap of live bytes:
// softFloor, or, once more is live (about 140 MB), a heap budget of half as
// much again as live; above paceFloor live, the pacer's own heap goal
// (heapGoal); each plus a sixteenth for stacks, the collector's own memory
// and fragmentation. The two budgets meet at paceFloor (384 MiB), so the
// limit never jumps; above the floor it is never below the pacer's heap
// goal, and it always leaves a quarter of the live heap or more to
// allocate between collections. Measured on genlog's wire logs, 2
// cores: a 1 GiB log keeps up to about 120 MB live and peaks at about 233
// MiB of RSS; a 4 GiB log keeps up to about 160 MB live and peaks at 236
// MiB (with an eighth instead of a sixteenth, 247 MiB, for 1.04 times the
// CPU of this; holding the limit at 230 MiB cost more CPU in a run on a
// busy machine).
func softLimit(live uint64) int64 {
	budget := live + live/2
	if live > paceFloor {
		budget = heapGoal(live)
	}
	return max(int64(softFloor), int64(budget+budget/16))
}

// heapPacer sets GOGC (pacePercent), and the soft memory limit when it
// owns it (softLimit), after every collection from the live heap it left.
// It runs on the runtime's finalizer goroutine: a sentinel object, made
// again each time, is finalized once per collection.
type heapPacer struct {
	mu      sync.Mutex
	stopped bool
	percent int   // the GOGC last set
	limit   int64 // the soft limit last set; 0: the pacer sets none
	before  int64 // the soft limit before the pacer set one (restored by stop)
	sample  []metrics.Sample
}

// setPercent sets GOGC for a live heap of live bytes: pacePercent, or
// limitPercent below paceFloor while the pacer owns the soft limit. p.mu
// is held.
func (p *heapPacer) setPercent(live uint64) {
	pc := pacePercent(live)
	if p.limit != 0 && live <= paceFloor {
		pc = limitPercent
	}
	if pc != p.percent {
		debug.SetGCPercent(pc)
		p.percent = pc
	}
}

// gcTick is the sentinel whose finalizer runs after each collection.
type gcTick struct{ _ [16]byte }

// startHeapPacer starts pacing the collector unless the environment sets
// it (GOGC, GOMEMLIMIT) or limit (-memory-limit) does. stop restores
// GOGC=100 and ends the pacing; it is safe to call more than once.
func startHeapPacer(limitSet bool) (stop func()) { return startPacer(limitSet, false) }

// startPacer is startHeapPacer that, with soft (-memory-limit not given),
// also sets the soft memory limit (softLimit); its stop restores the limit
// there was before too.
func startPacer(limitSet, soft bool) (stop func()) {
	if limitSet || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	p := &heapPacer{percent: 100, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	if soft {
		p.mu.Lock()
		live := p.live()
		p.before = debug.SetMemoryLimit(-1)
		p.limit = softLimit(live)
		debug.SetMemoryLimit(p.limit)
		p.setPercent(live)
		p.mu.Unlock()
	}
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.stopped {
			p.stopped = true
			if p.percent != 100 {
				debug.SetGCPercent(100)
			}
			if p.limit != 0 {
				debug.SetMemoryLimit(p.before)
			}
		}
	}
}

func (p *heapPacer) arm() {
	runtime.SetFinalizer(&gcTick{}, func(*gcTick) { p.tick() })
}

// live is the live heap the latest collection left (0 before the first).
func (p *heapPacer) live() uint64 {
	metrics.Read(p.sample)
	if s := p.sample[0]; s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

func (p *heapPacer) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	live := p.live()
	p.setPercent(live)
	if p.limit != 0 {
		if l := softLimit(live); l != p.limit {
			debug.SetMemoryLimit(l)
			p.limit = l
		}
	}
	p.arm()
}
