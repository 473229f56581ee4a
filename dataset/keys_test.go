package dataset

import (
	"slices"
	"testing"
)

// Each commit of a source sets its dedupe keys (sorted, without
// duplicates); nil clears them; a source not named keeps its own; they
// survive a reopen.
func TestKeysRoundTrip(t *testing.T) {
	dir := t.TempDir()
	const K, L = "kafka:events/0", "kafka:events/1"
	d := open(t, dir)
	txn := begin(t, d, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	if err := tb.Write(Source{ID: K, Stem: "events+0+0"}, rows("k", 3, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit([]SourceState{
		{ID: K, Position: Position{Unit: "offset", End: 3}, Keys: []string{"ex-7", "ex-10", "q:events/0/5", "ex-7"}},
		{ID: L, Keys: []string{"only-l"}},
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ex-10", "ex-7", "q:events/0/5"}
	m := d.Manifest()
	if got := m.Sources[K].Keys; !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	m.Sources[K].Keys[0] = "changed" // a copy: the dataset's own stays
	if got := d.Manifest().Sources[K].Keys; !slices.Equal(got, want) {
		t.Fatalf("Manifest() shares its keys: %q", got)
	}
	txn.Close()
	d.Close()
	for _, read := range []func() *Manifest{
		func() *Manifest { m, err := ReadManifest(dir); must(t, err); return m },
		func() *Manifest { d := open(t, dir); defer d.Close(); return d.Manifest() },
	} {
		m := read()
		if got := m.Sources[K].Keys; !slices.Equal(got, want) {
			t.Fatalf("keys read back %q, want %q", got, want)
		}
	}

	// A commit without keys clears them; L, not named, keeps its own.
	d = open(t, dir)
	txn = begin(t, d, "r2")
	if _, err := txn.Commit([]SourceState{{ID: K, Append: true, Position: Position{Unit: "offset", End: 3}}}); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	d.Close()
	m, err := ReadManifest(dir)
	must(t, err)
	if m.Sources[K].Keys != nil || !slices.Equal(m.Sources[L].Keys, []string{"only-l"}) || rowsOf(m, K) != 3 {
		t.Fatalf("after a commit without keys: K %q (%d rows), L %q", m.Sources[K].Keys, rowsOf(m, K), m.Sources[L].Keys)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
