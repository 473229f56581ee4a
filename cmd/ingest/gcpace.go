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
// buffers, some 100 to 250 MB), but a run that keeps much open (200,000
// conversations that never end) peaks at twice its state. heapPacer keeps
// GOGC=100 up to paceFloor of live heap and above it lets the heap grow by
// a quarter of what is live before the next collection (GOGC=25): at 400
// MiB live the goal is 500 MiB rather than 800 (it was 656 with the
// headroom max(paceFloor, live/2) before). Below the floor nothing
// changes, so a run that keeps little live pays no extra collection; one
// that keeps more collects about four times as often per byte allocated.

// paceFloor is the live heap up to which the collector keeps its default
// headroom (GOGC=100).
const paceFloor = 256 << 20

// pacePercent is the GOGC for a live heap of live bytes.
func pacePercent(live uint64) int {
	if live <= paceFloor {
		return 100
	}
	return 25
}

// heapPacer sets GOGC after every collection from the live heap it left
// (pacePercent). It runs on the runtime's finalizer goroutine: a sentinel
// object, made again each time, is finalized once per collection.
type heapPacer struct {
	mu      sync.Mutex
	stopped bool
	percent int // the GOGC last set
	sample  []metrics.Sample
}

// gcTick is the sentinel whose finalizer runs after each collection.
type gcTick struct{ _ [16]byte }

// startHeapPacer starts pacing the collector unless the environment sets
// it (GOGC, GOMEMLIMIT) or limit (-memory-limit) does. stop restores
// GOGC=100 and ends the pacing; it is safe to call more than once.
func startHeapPacer(limitSet bool) (stop func()) {
	if limitSet || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	p := &heapPacer{percent: 100, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.stopped {
			p.stopped = true
			if p.percent != 100 {
				debug.SetGCPercent(100)
			}
		}
	}
}

func (p *heapPacer) arm() {
	runtime.SetFinalizer(&gcTick{}, func(*gcTick) { p.tick() })
}

func (p *heapPacer) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.sample)
	if s := p.sample[0]; s.Value.Kind() == metrics.KindUint64 {
		if pc := pacePercent(s.Value.Uint64()); pc != p.percent {
			debug.SetGCPercent(pc)
			p.percent = pc
		}
	}
	p.arm()
}
