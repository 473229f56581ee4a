package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scopeHelperEnv makes the test binary a scoped writer (see scopeHelper).
const scopeHelperEnv = "MCPTRACE_DATASET_TEST_SCOPE"

// helperSpec is what a helper process does.
type helperSpec struct {
	Dir   string `json:"dir"`
	Scope string `json:"scope"`
	// Mode "hold": open the scope, stage a file, say "locked", wait to be
	// killed. Mode "work": run scopeIteration N times (from where the
	// scope's manifest says the last run stopped), saying "committed I"
	// after each commit; with Go, say "ready" once open and wait for a
	// line on stdin before the first.
	Mode       string `json:"mode"`
	N          int    `json:"n"`
	Go         bool   `json:"go"`
	Quarantine bool   `json:"quarantine"`
	// PauseAt > 0 makes the first commit say "applying" and wait to be
	// killed after operation PauseAt-1 of its apply (past its commit
	// point).
	PauseAt int `json:"pause_at"`
}

func scopeHelper(spec string) int {
	var s helperSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Println("error:", err)
		return 2
	}
	d, err := Open(context.Background(), s.Dir, Options{Scope: s.Scope})
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	if s.Mode == "hold" {
		txn, _ := d.Begin("held", time.Now())
		tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
		tb.Write(Source{ID: "kafka:" + s.Scope + "/held", Stem: s.Scope + "+held"}, rows("h", 10, 1))
		tb.Roll() // a staged file that the kill leaves behind
		fmt.Println("locked")
		time.Sleep(time.Minute)
		return 3
	}
	start := nextIteration(d.Manifest(), s.Scope)
	if s.PauseAt > 0 {
		fault = &faults{applied: func(i int) error {
			if i == s.PauseAt-1 {
				fmt.Println("applying")
				time.Sleep(time.Minute)
			}
			return nil
		}}
	}
	if s.Go {
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	first := time.Now()
	for i := start; i < start+s.N; i++ {
		if err := scopeIteration(d, s.Scope, i, s.Quarantine); err != nil {
			fmt.Println("error:", err)
			return 2
		}
		fmt.Println("committed", i)
	}
	last := time.Now()
	if err := d.Close(); err != nil {
		fmt.Println("error:", err)
		return 2
	}
	fmt.Println("done", first.UnixNano(), last.UnixNano())
	return 0
}

// The work of a scoped writer, as a Kafka consumer's would be: a source
// that a partition's replay replaces ("rep", one stem, on one of 4 dates
// that moves at each iteration and that no other source uses, so commits
// of two scopes empty, remove and make the same dt= directories), and one that appends ("app", a stem per
// iteration as Kafka's first offset, 3 rows per iteration over 3 dates,
// with dedupe keys). With quarantine, "rep" has a quarantine row on even
// iterations only: the scope's zero-row file comes and goes.
func repID(scope string) string { return "kafka:" + scope + "/rep" }
func appID(scope string) string { return "kafka:" + scope + "/app" }

func scopeIteration(d *Dataset, scope string, i int, quarantine bool) error {
	txn, err := d.Begin(fmt.Sprintf("r%04d", i), day0)
	if err != nil {
		return err
	}
	defer txn.Abort()
	ev := NewTable[row](txn, "events", dayOf, RollPolicy{})
	q := NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
	rep := make([]row, 5+i%3)
	for j := range rep {
		rep[j] = row{Day: day0.AddDate(0, 0, 3+i%4), Src: "rep", N: int64(j), Payload: fmt.Sprintf("%s/rep/%d/%d", scope, i, j)}
	}
	if err := ev.Write(Source{ID: repID(scope), Stem: scope + "+rep"}, rep); err != nil {
		return err
	}
	if quarantine && i%2 == 0 {
		if err := q.Write(Source{ID: repID(scope), Stem: scope + "+rep"}, []row{{Day: day0, Src: "q", Payload: fmt.Sprintf("%s/q/%d", scope, i)}}); err != nil {
			return err
		}
	}
	for j := 0; j < 3; j++ {
		r := row{Day: day0.AddDate(0, 0, j), Src: "app", N: int64(3*i + j), Payload: fmt.Sprintf("%s/app/%d/%d", scope, i, j)}
		// The caller passes the first offset of the row: the file keeps
		// the stem of the Write that opened it.
		if err := ev.Write(Source{ID: appID(scope), Stem: fmt.Sprintf("%s+%d", scope, 3*i+j)}, []row{r}); err != nil {
			return err
		}
	}
	if _, err := txn.Commit([]SourceState{
		{ID: repID(scope), Complete: true},
		{ID: appID(scope), Append: true, Position: Position{Unit: "offset", End: int64(3 * (i + 1))}, Keys: []string{fmt.Sprintf("x-%d", i)}},
	}); err != nil {
		return err
	}
	return txn.Close()
}

// nextIteration is where a scope's writer resumes: the iterations its
// manifest says were committed.
func nextIteration(m *Manifest, scope string) int {
	if e := m.Sources[appID(scope)]; e != nil {
		return int(e.Position.End / 3)
	}
	return 0
}

// checkIteration checks that a scope's manifest is the one its writer
// left after iteration i: both sources of each commit, together.
func checkIteration(t testing.TB, m *Manifest, scope string, i int, quarantine bool) {
	t.Helper()
	rep, app := m.Sources[repID(scope)], m.Sources[appID(scope)]
	if rep == nil || app == nil {
		t.Fatalf("scope %s: sources %v", scope, m.SourceIDs())
	}
	wantDT := day0.AddDate(0, 0, 3+i%4).Format("2006-01-02")
	if len(rep.Files["events"]) != 1 || rep.Files["events"][0].Rows != int64(5+i%3) || rep.Files["events"][0].DT != wantDT {
		t.Fatalf("scope %s after iteration %d: rep's files %+v", scope, i, rep.Files)
	}
	var n int64
	for _, f := range app.Files["events"] {
		n += f.Rows
	}
	if n != int64(3*(i+1)) || app.Position.End != n || !slices.Equal(app.Keys, []string{fmt.Sprintf("x-%d", i)}) {
		t.Fatalf("scope %s after iteration %d: app has %d rows, position %+v, keys %q", scope, i, n, app.Position, app.Keys)
	}
	wantQ := 0
	if quarantine && i%2 == 0 {
		wantQ = 1
	}
	if len(rep.Files["quarantine"]) != wantQ {
		t.Fatalf("scope %s after iteration %d: rep's quarantine files %+v", scope, i, rep.Files["quarantine"])
	}
	empty := ""
	if wantQ == 0 {
		empty = "quarantine/dt=1970-01-01/empty-" + scope + ".parquet"
	}
	if m.EmptyFile("quarantine") != empty || m.EmptyFile("events") != "" {
		t.Fatalf("scope %s after iteration %d: empty files %q, %q", scope, i, m.EmptyFile("quarantine"), m.EmptyFile("events"))
	}
}

// startHelper runs the test binary as a helper process.
func startHelper(t *testing.T, spec helperSpec) (*exec.Cmd, *bufio.Reader, io.WriteCloser) {
	t.Helper()
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scopeHelperEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	in, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(out), in
}

func readLine(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, want) {
		t.Fatalf("helper said %q (%v), want %q", line, err, want)
	}
	return strings.TrimSpace(line)
}

func openScope(t testing.TB, dir, scope string) *Dataset {
	t.Helper()
	d, err := Open(context.Background(), dir, Options{Scope: scope})
	if err != nil {
		t.Fatalf("Open scope %s: %v", scope, err)
	}
	return d
}

// scopeManifests reads the dataset's own manifest ("") and each scope's.
func scopeManifests(t testing.TB, dir string) map[string]*Manifest {
	t.Helper()
	out := map[string]*Manifest{}
	m, err := readManifestFile(filepath.Join(dir, metaDir, manifestFile))
	must(t, err)
	out[""] = m
	scopes, err := ReadScopes(dir)
	must(t, err)
	for _, s := range scopes {
		m, err := readManifestFile(scopeManifestPath(dir, s))
		must(t, err)
		out[s] = m
	}
	return out
}

// scopeSnapshot is the part of snapshot that belongs to scope: its files
// (whose stems start with the scope), its zero-row files, its manifest.
func scopeSnapshot(t testing.TB, dir, scope string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, h := range snapshot(t, dir) {
		base := filepath.Base(p)
		if strings.HasPrefix(base, scope+"+") || base == "empty-"+scope+".parquet" || strings.HasPrefix(p, ".mcptrace/scopes/"+scope+"/") {
			out[p] = h
		}
	}
	if len(out) < 3 {
		t.Fatalf("scope %s has %d files: %v", scope, len(out), out)
	}
	return out
}

// checkConsistent checks what any reader may rely on once every writer
// has opened (or closed) cleanly: no file is in two manifests; the files
// under the tables are exactly those the manifests list (data and
// zero-row files), each with the rows and bytes recorded; the union
// manifest lists the same data files; nothing is pending; no staging area
// is left.
func checkConsistent(t *testing.T, dir string, tables ...string) *Manifest {
	t.Helper()
	owner := map[string]string{}
	for s, m := range scopeManifests(t, dir) {
		if m.Pending != nil {
			t.Fatalf("scope %q: pending operations %+v", s, m.Pending)
		}
		for p := range m.livePaths() {
			if o, ok := owner[p]; ok {
				t.Fatalf("%s is in the manifests of scopes %q and %q", p, o, s)
			}
			owner[p] = s
		}
	}
	u, err := ReadManifest(dir)
	must(t, err)
	var onDisk, listed []string
	for _, tb := range tables {
		onDisk = append(onDisk, tableFiles(t, dir, tb)...)
		for _, f := range u.Files(tb) {
			listed = append(listed, f.Path)
			fi, err := os.Stat(filepath.Join(dir, f.Path))
			if err != nil || fi.Size() != f.Bytes {
				t.Fatalf("%s: %v, size %v, manifest says %d bytes", f.Path, err, fi, f.Bytes)
			}
			if n, err := parquetRows(filepath.Join(dir, f.Path)); err != nil || n != f.Rows {
				t.Fatalf("%s: %d rows (%v), manifest says %d", f.Path, n, err, f.Rows)
			}
		}
	}
	slices.Sort(onDisk)
	if all := slices.Sorted(maps.Keys(owner)); !slices.Equal(onDisk, all) {
		t.Fatalf("files under the tables:\n%s\nfiles in the manifests:\n%s", strings.Join(onDisk, "\n"), strings.Join(all, "\n"))
	}
	for _, p := range listed {
		if strings.Contains(p, "dt=1970-01-01") {
			t.Fatalf("a zero-row file is listed as a data file: %s", p)
		}
	}
	if u.Pending != nil {
		t.Fatalf("union pending: %+v", u.Pending)
	}
	filepath.WalkDir(filepath.Join(dir, metaDir), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() && e.Name() == stagingDir {
			t.Fatalf("staging area left: %s", p)
		}
		return nil
	})
	return u
}

func TestScopeNames(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{".", "..", "a/b", "../x", "a b", "é", "a*b", "a\x00", "a[0]", strings.Repeat("x", 151)} {
		_, err := Open(context.Background(), dir, Options{Scope: bad})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("invalid dataset scope %q", bad)) {
			t.Fatalf("scope %q: %v", bad, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, metaDir, scopesDir)); len(ents) > 0 {
		t.Fatalf("bad scopes left directories: %v", ents)
	}
	for _, good := range []string{"events+0", "my.topic_v2-x+11", "_schemas+0", strings.Repeat("x", 150)} {
		d := openScope(t, dir, good)
		if d.Scope() != good {
			t.Fatalf("Scope() = %q", d.Scope())
		}
		d.Close()
	}
	got, err := ReadScopes(dir)
	must(t, err)
	if want := []string{"_schemas+0", "events+0", "my.topic_v2-x+11", strings.Repeat("x", 150)}; !slices.Equal(got, want) {
		t.Fatalf("ReadScopes = %q", got)
	}
}

// The layout of a scoped dataset: each scope's manifest and staging under
// .mcptrace/scopes/S, a zero-row file per scope, the union read by
// ReadManifest and by DuckDB, an unscoped run beside them.
func TestScopeLayout(t *testing.T) {
	dir := t.TempDir()
	a := openScope(t, dir, "t+0")
	must(t, scopeIteration(a, "t+0", 0, false))
	b := openScope(t, dir, "t+1")
	must(t, scopeIteration(b, "t+1", 0, true)) // quarantine rows at 0
	for _, p := range []string{".mcptrace/scopes/t+0/manifest.json", ".mcptrace/scopes/t+1/manifest.json", ".mcptrace/scopes/t+0/lock", "quarantine/dt=1970-01-01/empty-t+0.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{".mcptrace/manifest.json", ".mcptrace/staging", ".mcptrace/scopes/t+0/staging", "quarantine/dt=1970-01-01/empty.parquet", "quarantine/dt=1970-01-01/empty-t+1.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	// Each open scope's Manifest is its own.
	checkIteration(t, a.Manifest(), "t+0", 0, false)
	checkIteration(t, b.Manifest(), "t+1", 0, true)
	if ids := a.Manifest().SourceIDs(); !slices.Equal(ids, []string{appID("t+0"), repID("t+0")}) {
		t.Fatalf("scope t+0's manifest holds %v", ids)
	}
	u := checkConsistent(t, dir, "events", "quarantine")
	if ids := u.SourceIDs(); len(ids) != 4 || u.Rows("events") != 2*(5+3) || u.Rows("quarantine") != 1 || u.EmptyFile("quarantine") != "" {
		t.Fatalf("union: %v, %d events, %d quarantined, empty %q", ids, u.Rows("events"), u.Rows("quarantine"), u.EmptyFile("quarantine"))
	}
	if !slices.Equal(u.Sources[appID("t+1")].Keys, []string{"x-0"}) {
		t.Fatalf("union keys %q", u.Sources[appID("t+1")].Keys)
	}

	// t+1 at iteration 1 has no quarantine row: two zero-row files.
	must(t, scopeIteration(b, "t+1", 1, true))
	checkIteration(t, b.Manifest(), "t+1", 1, true)
	u = checkConsistent(t, dir, "events", "quarantine")
	if e := u.EmptyFile("quarantine"); e != "quarantine/dt=1970-01-01/empty-t+0.parquet" && e != "quarantine/dt=1970-01-01/empty-t+1.parquet" {
		t.Fatalf("union EmptyFile %q", e)
	}
	db := duck(t)
	glob := filepath.Join(dir, "quarantine", "*", "*.parquet")
	if n := duckCount(t, db, glob, true, ""); n != 0 {
		t.Fatalf("quarantine: %d rows", n)
	}
	var cols string
	must(t, db.QueryRow(`SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true))`, glob).Scan(&cols))
	if want := "day TIMESTAMP WITH TIME ZONE, src VARCHAR, n BIGINT, payload VARCHAR, dt DATE"; cols != want {
		t.Fatalf("schema over two zero-row files: %q, want %q", cols, want)
	}

	// An unscoped run waits for the scopes, then writes beside them.
	a.Close()
	b.Close()
	before := scopeManifests(t, dir)
	run(t, dir, "main", RollPolicy{}, map[string][]row{"file:/x": rows("x", 7, 2)})
	after := scopeManifests(t, dir)
	for _, s := range []string{"t+0", "t+1"} {
		if !slices.Equal(manifestPaths(before[s], "events"), manifestPaths(after[s], "events")) {
			t.Fatalf("the unscoped run changed scope %s", s)
		}
	}
	u = checkConsistent(t, dir, "events", "quarantine")
	wantEvents := int64(5 + 3 + 6 + 6 + 7) // t+0 at 0, t+1 at 1 (rep 6, app 6), x
	if u.Rows("events") != wantEvents {
		t.Fatalf("union: %d events, want %d", u.Rows("events"), wantEvents)
	}
	for _, glob := range []string{"*/*.parquet", "**/*.parquet"} {
		if n := duckCount(t, db, filepath.Join(dir, "events", glob), true, ""); n != wantEvents {
			t.Fatalf("DuckDB reads %d events over %s, want %d", n, glob, wantEvents)
		}
	}
	var distinct int64
	must(t, db.QueryRow(`SELECT count(DISTINCT payload) FROM read_parquet(?, hive_partitioning = true)`, filepath.Join(dir, "events", "*", "*.parquet")).Scan(&distinct))
	if distinct != wantEvents {
		t.Fatalf("%d distinct rows of %d", distinct, wantEvents)
	}
	// The scope reopens on the same manifest and resumes.
	a = openScope(t, dir, "t+0")
	defer a.Close()
	if i := nextIteration(a.Manifest(), "t+0"); i != 1 {
		t.Fatalf("scope t+0 resumes at %d", i)
	}
	must(t, scopeIteration(a, "t+0", 1, false))
	checkIteration(t, a.Manifest(), "t+0", 1, false)
}

// A scoped Open removes what is provably its own (its staging, its
// manifest's temporary file) and sweeps nothing in the tables' directories
// nor another scope's; an unscoped Open sweeps as before.
func TestScopedOpenSweepsOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	d := openScope(t, dir, "a")
	must(t, scopeIteration(d, "a", 0, false))
	d.Close()
	put := func(rel string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		must(t, os.WriteFile(p, []byte("partial"), 0o644))
	}
	theirs := []string{
		"events/dt=2026-10-17/.b+7-00001.parquet.tmp",
		".mcptrace/scopes/b/staging/r1/events/dt=2026-10-17/b+7-00001.parquet",
		".mcptrace/scopes/b/.manifest.json.tmp",
		".mcptrace/staging/run-x/events/dt=2026-10-17/file-0123456789ab-00001.parquet",
	}
	for _, p := range theirs {
		put(p)
	}
	put(".mcptrace/scopes/a/staging/r9/events/dt=2026-10-17/a+rep-00001.parquet")
	put(".mcptrace/scopes/a/.manifest.json.tmp")
	must(t, os.MkdirAll(filepath.Join(dir, "events", "dt=2026-11-01"), 0o755))
	d = openScope(t, dir, "a")
	d.Close()
	for _, p := range append(theirs, "events/dt=2026-11-01") {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("a scoped Open removed %s: %v", p, err)
		}
	}
	for _, p := range []string{".mcptrace/scopes/a/staging", ".mcptrace/scopes/a/.manifest.json.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a scoped Open left its own %s: %v", p, err)
		}
	}
	open(t, dir).Close()
	for _, p := range []string{"events/dt=2026-10-17/.b+7-00001.parquet.tmp", "events/dt=2026-11-01", ".mcptrace/staging"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("an unscoped Open left %s: %v", p, err)
		}
	}
}

// Files of two writers never share a name: a scope's commit refuses a new
// file whose name exists and is not its own, an unscoped commit one that a
// scope's manifest lists; both before their commit point.
func TestScopeFileCollisions(t *testing.T) {
	dir := t.TempDir()
	a := openScope(t, dir, "a")
	defer a.Close()
	txn := begin(t, a, "r1")
	tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
	must(t, tb.Write(Source{ID: "kafka:t/0", Stem: "t+0+0"}, rows("a", 3, 1)))
	_, err := txn.Commit([]SourceState{{ID: "kafka:t/0"}})
	must(t, err)
	txn.Close()
	// A replay in the same scope rewrites its own file.
	txn = begin(t, a, "r2")
	tb = NewTable[row](txn, "events", dayOf, RollPolicy{})
	must(t, tb.Write(Source{ID: "kafka:t/0", Stem: "t+0+0"}, rows("a", 4, 1)))
	_, err = txn.Commit([]SourceState{{ID: "kafka:t/0"}})
	must(t, err)
	txn.Close()
	if n := rowsOf(a.Manifest(), "kafka:t/0"); n != 4 {
		t.Fatalf("the replay left %d rows", n)
	}
	b := openScope(t, dir, "b")
	defer b.Close()
	before := snapshot(t, dir)
	txn = begin(t, b, "r1")
	tb = NewTable[row](txn, "events", dayOf, RollPolicy{})
	must(t, tb.Write(Source{ID: "kafka:t/1", Stem: "t+0+0"}, rows("b", 2, 1))) // a stem without b's partition
	_, err = txn.Commit([]SourceState{{ID: "kafka:t/1"}})
	if err == nil || !strings.Contains(err.Error(), "events/dt=2026-10-17/t+0+0-00001.parquet would overwrite") || !strings.Contains(err.Error(), `source "kafka:t/0"`) || !strings.Contains(err.Error(), "(scope b)") {
		t.Fatalf("a scope's commit over another's file: %v", err)
	}
	txn.Abort()
	// A file that no manifest lists is not overwritten either.
	hand := filepath.Join(dir, "events", "dt=2026-10-17", "b+1+0-00001.parquet")
	must(t, os.WriteFile(hand, []byte("by hand"), 0o644))
	txn = begin(t, b, "r2")
	tb = NewTable[row](txn, "events", dayOf, RollPolicy{})
	must(t, tb.Write(Source{ID: "kafka:t/1", Stem: "b+1+0"}, rows("b", 2, 1)))
	if _, err = txn.Commit([]SourceState{{ID: "kafka:t/1"}}); err == nil || !strings.Contains(err.Error(), "not a file of this scope") {
		t.Fatalf("a scope's commit over a file of no manifest: %v", err)
	}
	txn.Abort()
	must(t, os.Remove(hand))
	b.Close()
	sameSnapshot(t, "after refused commits", before, snapshot(t, dir))

	// An unscoped run with a scope's name.
	a.Close()
	d := open(t, dir)
	defer d.Close()
	txn = begin(t, d, "r3")
	tb = NewTable[row](txn, "events", dayOf, RollPolicy{})
	must(t, tb.Write(Source{ID: "file:/x", Stem: "t+0+0"}, rows("x", 2, 1)))
	if _, err = txn.Commit([]SourceState{done("file:/x")}); err == nil || !strings.Contains(err.Error(), "would overwrite a file of scope a") {
		t.Fatalf("an unscoped commit over a scope's file: %v", err)
	}
	txn.Abort()
	d.Close()
	sameSnapshot(t, "after a refused unscoped commit", before, snapshot(t, dir))
}

// Scoped writers share the dataset's lock and exclude each other per
// scope; an unscoped writer excludes them all and is excluded by any.
func TestScopeLocks(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs(dir)
	me := fmt.Sprintf("mcptrace pid %d on host ", os.Getpid())
	a := openScope(t, dir, "a")
	_, err := Open(context.Background(), dir, Options{Scope: "a"})
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.Scope != "a" || le.Holder.PID != os.Getpid() {
		t.Fatalf("a second writer of scope a: %v", err)
	}
	if want := "scope a of dataset " + abs + " is being written by " + me; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "pass -wait-lock to wait") {
		t.Fatalf("message %q lacks %q", err, want)
	}
	b := openScope(t, dir, "b")
	_, err = Open(context.Background(), dir, Options{})
	if !errors.As(err, &le) || !le.Scoped || le.Scope != "" || len(le.Writers) != 2 || le.Writers[0].Scope != "a" || le.Writers[1].PID != os.Getpid() {
		t.Fatalf("an unscoped Open beside scoped writers: %#v", err)
	}
	for _, want := range []string{"dataset " + abs + " is being written by Kafka consumers (scoped writers): scope a by " + me, ", scope b by " + me, "; wait for them to stop, or pass -wait-lock to wait"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q lacks %q", err, want)
		}
	}

	// WaitLock: the unscoped writer gets the dataset once both scopes close.
	got := make(chan *Dataset, 1)
	go func() {
		d, err := Open(context.Background(), dir, Options{WaitLock: true})
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	notYet := func(what string) {
		select {
		case <-got:
			t.Fatalf("a waiting Open returned while %s", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	notYet("two scopes were open")
	a.Close()
	notYet("scope b was open")
	b.Close()
	var d *Dataset
	select {
	case d = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting unscoped Open did not get the dataset")
	}

	// The unscoped writer excludes scoped ones, which can wait for it.
	_, err = Open(context.Background(), dir, Options{Scope: "a"})
	if !errors.As(err, &le) || le.Scoped || le.Scope != "" || le.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "dataset "+abs+" is being written by "+me) {
		t.Fatalf("a scoped Open beside an unscoped writer: %v", err)
	}
	if _, err := Open(context.Background(), dir, Options{Scope: "c"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("scope c beside an unscoped writer: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, metaDir, scopesDir, "c")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused scoped Open made its scope: %v", err)
	}
	go func() {
		d, err := Open(context.Background(), dir, Options{Scope: "a", WaitLock: true})
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	notYet("an unscoped writer was open")
	d.Close()
	select {
	case a = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting scoped Open did not get its scope")
	}
	defer a.Close()

	// WaitLock on a held scope honours its context.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Open(ctx, dir, Options{Scope: "a", WaitLock: true}); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "scope a of dataset "+abs) {
		t.Fatalf("waiting for a held scope with an ending context: %v", err)
	}
	// A closed scope's lock file names nobody: only a is listed.
	_, err = Open(context.Background(), dir, Options{})
	if !errors.As(err, &le) || !le.Scoped || len(le.Writers) != 1 || le.Writers[0].Scope != "a" {
		t.Fatalf("an unscoped Open beside scope a alone: %v", err)
	}
}

// The same across processes, and the kernel's release of a SIGKILLed
// scoped writer's locks.
func TestScopeLocksAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	d := openScope(t, dir, "b")
	must(t, scopeIteration(d, "b", 0, false))
	d.Close()

	cmd, out, _ := startHelper(t, helperSpec{Dir: dir, Scope: "a", Mode: "hold"})
	readLine(t, out, "locked")
	pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
	_, err := Open(context.Background(), dir, Options{})
	var le *LockedError
	if !errors.As(err, &le) || !le.Scoped || len(le.Writers) != 1 || le.Writers[0].PID != cmd.Process.Pid || !strings.Contains(err.Error(), "scope a by mcptrace "+pid) {
		t.Fatalf("an unscoped Open while pid %d writes scope a: %v", cmd.Process.Pid, err)
	}
	if _, err = Open(context.Background(), dir, Options{Scope: "a"}); !errors.As(err, &le) || le.Scope != "a" || !strings.Contains(err.Error(), pid) {
		t.Fatalf("Open of scope a while pid %d holds it: %v", cmd.Process.Pid, err)
	}
	b := openScope(t, dir, "b") // another scope: fine
	must(t, scopeIteration(b, "b", 1, false))
	b.Close()
	if _, err := os.Stat(filepath.Join(dir, ".mcptrace/scopes/a/staging/held")); err != nil {
		t.Fatalf("the holder's staging area: %v", err)
	}
	must(t, cmd.Process.Kill())
	cmd.Wait()
	a := openScope(t, dir, "a")
	a.Close()
	if _, err := os.Stat(filepath.Join(dir, ".mcptrace/scopes/a/staging")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the killed writer's staging area: %v", err)
	}
	b = openScope(t, dir, "b")
	checkIteration(t, b.Manifest(), "b", 1, false)
	b.Close()
	checkConsistent(t, dir, "events", "quarantine")

	// An unscoped writer in another process excludes scoped ones.
	hold := exec.Command(os.Args[0], "-test.run=^$")
	hold.Env = append(os.Environ(), holdEnv+"="+dir)
	hout, err := hold.StdoutPipe()
	must(t, err)
	must(t, hold.Start())
	defer func() { hold.Process.Kill(); hold.Wait() }()
	readLine(t, bufio.NewReader(hout), "locked")
	if _, err := Open(context.Background(), dir, Options{Scope: "b"}); !errors.As(err, &le) || le.Holder.PID != hold.Process.Pid || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", hold.Process.Pid)) {
		t.Fatalf("a scoped Open while pid %d writes the dataset: %v", hold.Process.Pid, err)
	}
}

// Two processes write two scopes of one directory at the same time, many
// commits each, replacing and appending in the same dt= partitions: the
// result is the union of what each wrote alone.
func TestScopesConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 30
	scopes := []string{"events+0", "events+1"}
	type helper struct {
		cmd *exec.Cmd
		out *bufio.Reader
		in  io.WriteCloser
	}
	var hs []helper
	for i, s := range scopes {
		cmd, out, in := startHelper(t, helperSpec{Dir: dir, Scope: s, Mode: "work", N: n, Go: true, Quarantine: i == 1})
		readLine(t, out, "ready")
		hs = append(hs, helper{cmd, out, in})
	}
	for _, h := range hs {
		io.WriteString(h.in, "go\n")
	}
	// A reader meanwhile: the union is always readable.
	stop := make(chan struct{})
	reads := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				reads <- nil
				return
			default:
			}
			if _, err := ReadManifest(dir); err != nil {
				reads <- err
				return
			}
		}
	}()
	var spans [][2]int64
	for _, h := range hs {
		var last string
		for i := 0; i < n; i++ {
			last = readLine(t, h.out, "committed")
		}
		if last != fmt.Sprintf("committed %d", n-1) {
			t.Fatalf("last commit %q", last)
		}
		f := strings.Fields(readLine(t, h.out, "done"))
		a, _ := strconv.ParseInt(f[1], 10, 64)
		b, _ := strconv.ParseInt(f[2], 10, 64)
		spans = append(spans, [2]int64{a, b})
		if err := h.cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	close(stop)
	if err := <-reads; err != nil {
		t.Fatalf("ReadManifest while scopes commit: %v", err)
	}
	if spans[0][0] > spans[1][1] || spans[1][0] > spans[0][1] {
		t.Fatalf("the two writers did not overlap: %v", spans)
	}
	t.Logf("overlap of the two writers: %v", time.Duration(min(spans[0][1], spans[1][1])-max(spans[0][0], spans[1][0])))

	u := checkConsistent(t, dir, "events", "quarantine")
	ms := scopeManifests(t, dir)
	for i, s := range scopes {
		checkIteration(t, ms[s], s, n-1, i == 1)
	}
	wantEvents := int64(2 * (5 + (n-1)%3 + 3*n))
	wantQ := int64(0)
	if (n-1)%2 == 0 {
		wantQ = 1
	}
	if u.Rows("events") != wantEvents || u.Rows("quarantine") != wantQ {
		t.Fatalf("union: %d events, %d quarantined; want %d, %d", u.Rows("events"), u.Rows("quarantine"), wantEvents, wantQ)
	}
	db := duck(t)
	if got := duckCount(t, db, filepath.Join(dir, "events", "*", "*.parquet"), true, ""); got != wantEvents {
		t.Fatalf("DuckDB reads %d events, want %d", got, wantEvents)
	}
	var distinct int64
	must(t, db.QueryRow(`SELECT count(DISTINCT payload) FROM read_parquet(?, hive_partitioning = true)`, filepath.Join(dir, "events", "*", "*.parquet")).Scan(&distinct))
	if distinct != wantEvents {
		t.Fatalf("%d distinct rows of %d", distinct, wantEvents)
	}
	if got := duckCount(t, db, filepath.Join(dir, "quarantine", "*", "*.parquet"), true, ""); got != wantQ {
		t.Fatalf("DuckDB reads %d quarantined, want %d", got, wantQ)
	}
	if e := emptyDirs(t, dir); len(e) > 0 {
		t.Fatalf("empty directories: %v", e)
	}
}

// A crash of one scope's writer (SIGKILL at random moments, often in the
// middle of a commit, and in the middle of applying a commit past its
// commit point) is recovered by the next Open of that scope, and the other
// scope, open and committing meanwhile, is not disturbed.
func TestScopeSIGKILLRecovery(t *testing.T) {
	dir := t.TempDir()
	b := openScope(t, dir, "b")
	defer b.Close()
	must(t, scopeIteration(b, "b", 0, true))
	rolledForward := 0
	const rounds = 8
	rng := rand.New(rand.NewPCG(9, uint64(time.Now().UnixNano())))
	for k := 0; k < rounds; k++ {
		bFiles := scopeSnapshot(t, dir, "b")
		spec := helperSpec{Dir: dir, Scope: "a", Mode: "work", N: 1000, Quarantine: true}
		if k%2 == 1 {
			spec.PauseAt = 1 + k%5 // operations 0 to 4 of 5 to 7
		}
		cmd, out, _ := startHelper(t, spec)
		if spec.PauseAt > 0 {
			readLine(t, out, "applying")
		} else {
			for i := 0; i <= k%3; i++ {
				readLine(t, out, "committed")
			}
			time.Sleep(time.Duration(rng.IntN(50_000)) * time.Microsecond) // about one commit
		}
		must(t, cmd.Process.Kill())
		cmd.Wait()

		sameSnapshot(t, "scope b after a's crash", bFiles, scopeSnapshot(t, dir, "b"))
		if m, err := readManifestFile(scopeManifestPath(dir, "a")); err == nil && m.Pending != nil {
			rolledForward++
		}
		a := openScope(t, dir, "a")
		m := a.Manifest()
		i := nextIteration(m, "a")
		checkIteration(t, m, "a", i-1, true)
		// b keeps committing beside the recovered scope.
		must(t, scopeIteration(b, "b", k+1, true))
		checkConsistent(t, dir, "events", "quarantine")
		must(t, scopeIteration(a, "a", i, true))
		a.Close()
	}
	t.Logf("%d of %d kills landed after a commit point and were rolled forward", rolledForward, rounds)
	if rolledForward < rounds/2 {
		t.Fatalf("only %d kills were past a commit point, %d were paused there", rolledForward, rounds/2)
	}
	checkIteration(t, b.Manifest(), "b", rounds, true)
}

// A commit of one scope stopped after its commit point, at each step of
// its apply (fault injection), is finished by the next Open of that scope;
// the other scope, open meanwhile, is untouched.
func TestScopeCrashAfterCommitPoint(t *testing.T) {
	// Operations of iteration 1 of a with quarantine: renames of rep's
	// file, app's 3 files and the zero-row file; deletes of rep's old
	// events and quarantine files.
	for step := 0; step < 7; step++ {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			dir := t.TempDir()
			b := openScope(t, dir, "b")
			defer b.Close()
			must(t, scopeIteration(b, "b", 0, true))
			a := openScope(t, dir, "a")
			must(t, scopeIteration(a, "a", 0, true))
			bBefore := scopeManifests(t, dir)["b"]
			snapB := scopeSnapshot(t, dir, "b")
			withFaults(t, &faults{applied: func(i int) error {
				if i == step {
					return errCrash
				}
				return nil
			}})
			err := scopeIteration(a, "a", 1, true)
			fault = nil
			if !errors.Is(err, errCrash) || !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), "(scope a)") {
				t.Fatalf("commit with a crash at step %d: %v", step, err)
			}
			a.Close()
			if m := scopeManifests(t, dir)["a"]; m.Pending == nil {
				t.Fatal("no pending operations after the crash")
			}
			a = openScope(t, dir, "a")
			defer a.Close()
			checkIteration(t, a.Manifest(), "a", 1, true)
			checkConsistent(t, dir, "events", "quarantine")
			if !slices.Equal(manifestPaths(bBefore, "events"), manifestPaths(b.Manifest(), "events")) {
				t.Fatal("scope b's manifest changed")
			}
			sameSnapshot(t, "scope b", snapB, scopeSnapshot(t, dir, "b"))
			must(t, scopeIteration(b, "b", 1, true))
		})
	}
}

// Scopes share dt= directories, and a commit removes those it leaves
// empty: another scope's commit may remove the directory that this one
// has just made for its file, before the rename. The rename is retried.
func TestScopeDirectoryRemovedBeforeRename(t *testing.T) {
	dir := t.TempDir()
	a := openScope(t, dir, "a")
	defer a.Close()
	removed := 0
	withFaults(t, &faults{rename: func(from, to string) error {
		pdir := filepath.Dir(to)
		if strings.Contains(from, stagingDir) && !strings.Contains(to, stagingDir) && removed < 3 {
			if err := os.Remove(pdir); err == nil { // empty: as another scope's commit would
				removed++
			}
		}
		return nil
	}})
	must(t, scopeIteration(a, "a", 0, true))
	fault = nil
	if removed == 0 {
		t.Fatal("no directory was removed before a rename: the test tests nothing")
	}
	t.Logf("%d directories removed between mkdir and rename", removed)
	checkIteration(t, a.Manifest(), "a", 0, true)
	checkConsistent(t, dir, "events", "quarantine")
}

// Should one identity appear in two scopes (a partition moved between
// scopes named after consumers, say), the union holds the files of both
// and the position and keys of its latest run.
func TestReadManifestUnionOfOneSourceInTwoScopes(t *testing.T) {
	dir := t.TempDir()
	const K = "kafka:t/0"
	for i, s := range []string{"b", "a"} { // b's run is the older one
		d := openScope(t, dir, s)
		txn, err := d.Begin("r", day0.Add(time.Duration(i)*time.Hour))
		must(t, err)
		tb := NewTable[row](txn, "events", dayOf, RollPolicy{})
		NewTable[row](txn, "quarantine", dayOf, RollPolicy{})
		must(t, tb.Write(Source{ID: K, Stem: s + "+t+0"}, rows(s, 2+i, 1)))
		_, err = txn.Commit([]SourceState{{ID: K, Position: Position{Unit: "offset", End: int64(10 * (i + 1))}, Keys: []string{s}}})
		must(t, err)
		txn.Close()
		d.Close()
	}
	u, err := ReadManifest(dir)
	must(t, err)
	e := u.Sources[K]
	if got := manifestPaths(u, "events"); !slices.Equal(got, []string{"events/dt=2026-10-17/a+t+0-00001.parquet", "events/dt=2026-10-17/b+t+0-00001.parquet"}) {
		t.Fatalf("union files %v", got)
	}
	if e.Position.End != 20 || !slices.Equal(e.Keys, []string{"a"}) || u.Rows("events") != 5 || !e.RunTime.Equal(day0.Add(time.Hour)) {
		t.Fatalf("union entry %+v, %d rows", e, u.Rows("events"))
	}
	if q := u.EmptyFile("quarantine"); q != "quarantine/dt=1970-01-01/empty-a.parquet" && q != "quarantine/dt=1970-01-01/empty-b.parquet" {
		t.Fatalf("EmptyFile %q", q)
	}
	if u.EmptyFile("events") != "" {
		t.Fatalf("events has data, yet EmptyFile is %q", u.EmptyFile("events"))
	}
}
