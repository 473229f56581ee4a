package main

import (
	"bytes"
	"math"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestMemoryLimit: -memory-limit sets the runtime's soft memory limit in
// MiB before the run, 0 leaves it as it was, a negative value is a usage
// error.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	debug.SetMemoryLimit(math.MaxInt64)
	if code := run([]string{"-out", filepath.Join(dir, "a"), "-quiet", "-memory-limit", "0", "../../samples/correlation"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("-memory-limit 0 changed the limit to %d", got)
	}
	if code := run([]string{"-out", filepath.Join(dir, "b"), "-quiet", "-memory-limit", "300", "../../samples/correlation"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("-memory-limit 300: limit %d, want %d", got, 300<<20)
	}
	if code := run([]string{"-out", filepath.Join(dir, "c"), "-memory-limit", "-5", "../../samples/correlation"}, &stdout, &stderr); code != 2 {
		t.Errorf("-memory-limit -5: exit %d, want 2", code)
	}
}
