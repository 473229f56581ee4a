package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfilesWritten: -cpuprofile and -memprofile leave pprof files
// (gzipped protocol buffers) after a run, and a profile path that cannot be
// created is a usage error before anything is read.
func TestProfilesWritten(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, peak := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof"), filepath.Join(dir, "peak.prof")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", filepath.Join(dir, "out"), "-quiet", "-cpuprofile", cpu, "-memprofile", mem, "-peakheapprofile", peak, "../../samples/correlation"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, p := range []string{cpu, mem, peak} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s is not a gzipped pprof profile (%d bytes)", p, len(b))
		}
	}
	stderr.Reset()
	if code := run([]string{"-out", filepath.Join(dir, "out2"), "-cpuprofile", filepath.Join(dir, "no", "such", "dir", "cpu.prof"), "../../samples/correlation"}, &stdout, &stderr); code != ExitUsage {
		t.Fatalf("unwritable -cpuprofile: exit %d, want %d", code, ExitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "out2")); err == nil {
		t.Error("the run went on despite the bad -cpuprofile")
	}
}
