package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startProfiles starts a CPU profile into cpuFile and arranges for a heap
// profile (in-use and allocated, after a final GC) to be written into
// memFile; either may be empty. The returned stop writes and closes them.
// They are for measuring ingest on real logs (bench/README.md): a profile
// holds function names and sizes, never log content.
func startProfiles(cpuFile, memFile, peakFile string) (stop func() error, err error) {
	var cpu *os.File
	var peak *peakHeap
	if peakFile != "" {
		f, err := os.Create(peakFile)
		if err != nil {
			return nil, fmt.Errorf("-peakheapprofile: %w", err)
		}
		peak = startPeakHeap(f)
	}
	if cpuFile != "" {
		if cpu, err = os.Create(cpuFile); err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		if err = pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("-cpuprofile %s: %w", cpuFile, err)
		}
	}
	return func() error {
		var first error
		if peak != nil {
			if err := peak.stop(); err != nil {
				first = fmt.Errorf("-peakheapprofile %s: %w", peakFile, err)
			}
		}
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				first = fmt.Errorf("-cpuprofile %s: %w", cpuFile, err)
			}
		}
		if memFile != "" {
			f, err := os.Create(memFile)
			if err != nil {
				return fmt.Errorf("-memprofile: %w", err)
			}
			runtime.GC()
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil && first == nil {
				first = fmt.Errorf("-memprofile %s: %w", memFile, err)
			}
		}
		return first
	}, nil
}

// peakHeap keeps the heap profile taken after the collection that found
// the most live heap so far: the profile's in-use figures are those of the
// latest completed collection, so the one kept shows what was live at the
// run's peak (to within one collection).
type peakHeap struct {
	f    *os.File
	done chan struct{}
	end  chan error
}

func startPeakHeap(f *os.File) *peakHeap {
	p := &peakHeap{f: f, done: make(chan struct{}), end: make(chan error, 1)}
	go p.watch()
	return p
}

func (p *peakHeap) watch() {
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	var best bytes.Buffer
	var cycles, most uint64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			var err error
			if best.Len() == 0 { // no collection ran: what is live now
				err = pprof.Lookup("heap").WriteTo(&best, 0)
			}
			if err == nil {
				_, err = p.f.Write(best.Bytes())
			}
			if cerr := p.f.Close(); err == nil {
				err = cerr
			}
			p.end <- err
			return
		case <-tick.C:
		}
		metrics.Read(samples)
		n, live := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		if n == cycles || live <= most+most/50 {
			continue
		}
		cycles, most = n, live
		best.Reset()
		if err := pprof.Lookup("heap").WriteTo(&best, 0); err != nil {
			best.Reset()
		}
	}
}

// stop writes the kept profile and waits for the watcher to end.
func (p *peakHeap) stop() error {
	close(p.done)
	return <-p.end
}
