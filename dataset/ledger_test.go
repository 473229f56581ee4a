package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A scope's ledger (Txn.SetLedger) is committed in its manifest with the
// files it accounts for, and copied to ledger.json next to it: a commit
// that fails keeps the old one, a commit without SetLedger keeps it as it
// is, and a copy that a crash left behind (or never wrote) is rewritten
// from the manifest when the scope is opened again.
func TestScopeLedgerCommittedWithTheFiles(t *testing.T) {
	dir := t.TempDir()
	const scope = "kafka+mcp+0"
	openScope := func() *Dataset {
		d, err := Open(context.Background(), dir, Options{Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ledgerFile := filepath.Join(dir, filepath.FromSlash(LedgerFileRel(scope)))
	readFile := func() string {
		b, err := os.ReadFile(ledgerFile)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	d := openScope()
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	source := Source{ID: "kafka:mcp/0", Stem: "mcp+0+0"}
	if err := tb.Write(source, rows("a", 5, 1)); err != nil {
		t.Fatal(err)
	}
	var seen []FileInfo
	txn.SetLedger(func(published []FileInfo) ([]byte, error) {
		seen = published
		var n int64
		for _, f := range published {
			n += f.Rows
		}
		return []byte(`{"rows": ` + strconv.FormatInt(n, 10) + `}`), nil
	})
	files, err := txn.Commit([]SourceState{{ID: source.ID, Append: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(files) || len(files) != 1 {
		t.Fatalf("the ledger saw %d files, the commit published %d", len(seen), len(files))
	}
	if got := string(d.Manifest().Ledger); got != `{"rows":5}` {
		t.Fatalf("manifest ledger %s", got)
	}
	if got := readFile(); got != "{\n  \"rows\": 5\n}\n" {
		t.Fatalf("ledger.json %q", got)
	}
	// No SetLedger: the ledger stays.
	if err := tb.Write(source, rows("b", 2, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{{ID: source.ID, Append: true}}); err != nil {
		t.Fatal(err)
	}
	if got := string(d.Manifest().Ledger); got != `{"rows":5}` {
		t.Fatalf("a commit without a ledger changed it to %s", got)
	}
	// A ledger that cannot be made fails the commit before its commit
	// point: the dataset, ledger included, is as it was.
	if err := tb.Write(source, rows("c", 3, 1)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	txn.SetLedger(func([]FileInfo) ([]byte, error) { return nil, errors.New("no ledger") })
	if _, err := txn.Commit([]SourceState{{ID: source.ID, Append: true}}); err == nil || !strings.Contains(err.Error(), "unchanged") {
		t.Fatalf("commit with a failing ledger: %v", err)
	}
	if got := string(d.Manifest().Ledger); got != `{"rows":5}` {
		t.Fatalf("a failed commit changed the ledger to %s", got)
	}
	txn.SetLedger(func([]FileInfo) ([]byte, error) { return []byte(`{"rows": `), nil })
	if _, err := txn.Commit([]SourceState{{ID: source.ID, Append: true}}); err == nil {
		t.Fatal("a commit with a ledger that is not JSON succeeded")
	}
	txn.Abort()
	d.Close()
	after := snapshot(t, dir)
	for k := range after {
		if strings.Contains(k, "staging") {
			delete(after, k)
		}
	}
	for k := range before {
		if strings.Contains(k, "staging") {
			delete(before, k)
		}
	}
	sameSnapshot(t, "after failed ledger commits", before, after)
	// A crash between the manifest and its copy: the copy is stale (or
	// gone); the next open of the scope rewrites it.
	for _, damage := range []func(){
		func() { os.WriteFile(ledgerFile, []byte(`{"rows": 1}`), 0o644) },
		func() { os.Remove(ledgerFile) },
	} {
		damage()
		d = openScope()
		if got := readFile(); got != "{\n  \"rows\": 5\n}\n" {
			t.Fatalf("after reopening: ledger.json %q", got)
		}
		d.Close()
	}
	// ReadManifest (every scope's) still reads the dataset.
	if _, err := ReadManifest(dir); err != nil {
		t.Fatal(err)
	}
}
