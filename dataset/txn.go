package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrUnfinished is matched (errors.Is) by a Commit error after the commit
// point: the run's output is recorded as published, and the next Open
// finishes moving it into place. The dataset is then not as it was before
// the run, but as the run left it.
var ErrUnfinished = errors.New("commit recorded, to be finished by the next run")

// SourceState is what a commit records about one source.
type SourceState struct {
	ID       string   // canonical identity, as in Source.ID
	Position Position // the position range the source's files cover, kept as given
	Complete bool     // the source was read to its end
	// Append keeps the files the source has in the dataset from earlier
	// runs even on its first commit in this transaction (a live stream
	// resuming from its committed position). Without it, the first commit
	// of a source in a transaction replaces all its earlier files.
	Append bool
	// Keys replace the source's dedupe keys in the manifest
	// (SourceEntry.Keys): opaque strings, stored sorted and without
	// duplicates; nil or empty clears them.
	Keys []string
}

// normKeys returns keys sorted, without duplicates, nil when empty.
func normKeys(keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}

// Txn is one run's transaction: tables write into its staging area, and
// each Commit publishes what was staged for the sources it names.
type Txn struct {
	d       *Dataset
	id      string
	runTime time.Time
	staging string // absolute: DIR/.mcptrace/staging/<run-id>

	mu        sync.Mutex
	tables    []tableHandle
	committed map[string]bool // sources committed at least once in this txn
	ended     bool
	// broken: a commit failed after its commit point. The staging area
	// must stay for the roll-forward of the next Open.
	broken error
	ledger func([]FileInfo) ([]byte, error) // the next commit's ledger (SetLedger)
}

// SetLedger has the next Commit record the writer's ledger (JSON, opaque
// here) in the manifest: ledger is called with the files the commit
// publishes, before its commit point, so the ledger is published with the
// files it accounts for, or not at all (a failed commit keeps the old
// one). After the commit it is copied to ledger.json next to the
// manifest (the next Open rewrites that copy if a crash came between).
// Commits without a SetLedger keep the manifest's ledger as it is.
func (t *Txn) SetLedger(ledger func(published []FileInfo) ([]byte, error)) {
	t.mu.Lock()
	t.ledger = ledger
	t.mu.Unlock()
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Begin starts a transaction. runID names the run in the manifest and its
// staging directory (letters, digits, '.', '_', '-'); "" derives one from
// runTime and the process id. runTime is recorded for the sources it
// commits. One transaction at a time per Dataset.
func (d *Dataset) Begin(runID string, runTime time.Time) (*Txn, error) {
	if runID == "" {
		runID = fmt.Sprintf("run-%s-%d", runTime.UTC().Format("20060102T150405Z"), os.Getpid())
	}
	if !runIDRE.MatchString(runID) {
		return nil, fmt.Errorf("dataset %s: invalid run id %q (letters, digits, '.', '_', '-')", d.name(), runID)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("dataset %s is closed", d.name())
	}
	if d.txn != nil {
		return nil, fmt.Errorf("dataset %s: run %s is still open: commit or abort it first", d.name(), d.txn.id)
	}
	staging := filepath.Join(d.stagingPath(), runID)
	if _, err := os.Stat(staging); err == nil {
		return nil, fmt.Errorf("dataset %s: staging area %s exists: run ids must be unique", d.name(), staging)
	}
	if err := mkdirAll(staging); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.name(), err)
	}
	t := &Txn{d: d, id: runID, runTime: runTime.UTC(), staging: staging, committed: map[string]bool{}}
	d.txn = t
	return t, nil
}

// ID returns the run id.
func (t *Txn) ID() string { return t.id }

// stagingRel is the staging area relative to the dataset, slash-separated.
func (t *Txn) stagingRel() string {
	rel, _ := filepath.Rel(t.d.dir, t.staging)
	return filepath.ToSlash(rel)
}

// checkForeign refuses new final paths that belong to another writer of
// the dataset. Without scope, the other writers are the scopes, which the
// exclusive lock keeps out meanwhile: their manifests are exact. With a
// scope, the other scopes commit concurrently, so what counts is the file
// system: a path that exists and is not one of own (the scope's files in
// its manifest, replaced ones included) is another scope's, the unscoped
// writer's, or not mcptrace's; it is never overwritten. (Two scopes that
// publish one new name at the same instant both pass: scopes must give
// their sources distinct stems, see Source.Stem.)
func (d *Dataset) checkForeign(paths map[string]bool, own map[string]string) error {
	if len(paths) == 0 {
		return nil
	}
	if d.scope == "" {
		scopes, err := ReadScopes(d.dir)
		if err != nil {
			return err
		}
		for _, s := range scopes {
			sm, err := readManifestFile(scopeManifestPath(d.dir, s))
			if err != nil {
				return err
			}
			live := sm.livePaths()
			for p := range paths {
				if id, ok := live[p]; ok {
					return fmt.Errorf("dataset %s: the new file %s would overwrite a file of scope %s (source %q): give the sources distinct stems", d.dir, p, s, id)
				}
			}
		}
		return nil
	}
	var names []string
	for p := range paths {
		if _, ok := own[p]; ok {
			continue
		}
		if _, err := os.Lstat(d.Path(p)); err == nil {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	whose := "not a file of this scope"
	if u, err := ReadManifest(d.dir); err == nil {
		for _, f := range u.Files(strings.SplitN(names[0], "/", 2)[0]) {
			if f.Path == names[0] {
				whose = fmt.Sprintf("a file of source %q of another writer", f.Source)
			}
		}
	}
	return fmt.Errorf("dataset %s: the new file %s would overwrite %s, which is %s: the stems of a scope's sources must name the scope (Kafka: topic and partition)", d.name(), names[0], d.Path(names[0]), whose)
}

func (t *Txn) register(h tableHandle) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range t.tables {
		if o.tableName() == h.tableName() {
			return fmt.Errorf("table %s registered twice in run %s", h.tableName(), t.id)
		}
	}
	t.tables = append(t.tables, h)
	return nil
}

func (t *Txn) usable() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return t.broken
	}
	if t.ended {
		return fmt.Errorf("dataset %s: run %s has ended", t.d.name(), t.id)
	}
	return nil
}

// Commit publishes, for each source named, the files staged for it (open
// files of those sources are rolled first), and records its state. The
// first commit of a source in the transaction replaces every file the
// source had in the dataset, in every table and partition, even when it
// staged nothing (unless Append); later commits add to it. Sources not
// named are untouched. After a commit, every table of the transaction
// with no data file in the dataset has a zero-row file.
//
// It returns the files it published. An error before the commit point
// (writing the new manifest) leaves the dataset and its manifest as they
// were, and the staged files stay for a retry or Abort. An error after it
// leaves a commit that the next Open finishes; the transaction can then
// only be closed.
func (t *Txn) Commit(sources []SourceState) ([]FileInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return nil, t.broken
	}
	if t.ended {
		return nil, fmt.Errorf("dataset %s: run %s has ended", t.d.name(), t.id)
	}
	d := t.d
	named := map[string]bool{}
	for _, s := range sources {
		if s.ID == "" {
			return nil, fmt.Errorf("dataset %s: commit of a source without identity", d.name())
		}
		if named[s.ID] {
			return nil, fmt.Errorf("dataset %s: source %s named twice in one commit", d.name(), s.ID)
		}
		named[s.ID] = true
	}
	staged := map[string][]stagedFile{}
	for _, tb := range t.tables {
		files, err := tb.take(named)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			staged[f.Source] = append(staged[f.Source], f)
		}
	}

	d.mu.Lock()
	old := d.manifest
	d.mu.Unlock()
	m := old.clone()
	p := &Pending{RunID: t.id}
	newFinal := map[string]bool{}
	var published []FileInfo
	var replaced []string
	for _, s := range sources {
		e := m.Sources[s.ID]
		if e == nil {
			e = &SourceEntry{}
			m.Sources[s.ID] = e
		}
		if !t.committed[s.ID] && !s.Append {
			for _, fs := range e.Files {
				for _, f := range fs {
					replaced = append(replaced, f.Path)
				}
			}
			e.Files = nil
		}
		if e.Files == nil {
			e.Files = map[string][]FileEntry{}
		}
		e.RunID, e.RunTime, e.Position, e.Complete = t.id, t.runTime, s.Position, s.Complete
		e.Keys = normKeys(s.Keys)
		for _, f := range staged[s.ID] {
			e.Files[f.Table] = append(e.Files[f.Table], FileEntry{Path: f.Path, DT: f.DT, Rows: f.Rows, Bytes: f.Bytes})
			p.Renames = append(p.Renames, Rename{From: f.staged, To: f.Path})
			newFinal[f.Path] = true
			published = append(published, f.FileInfo)
		}
		for tb, fs := range e.Files {
			sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
			if len(fs) == 0 {
				delete(e.Files, tb)
			}
		}
	}
	// A new file may take the name of a replaced file of its own source;
	// never that of a file that stays, nor one of another writer.
	own := old.livePaths()
	stays := maps.Clone(own)
	for _, r := range replaced {
		delete(stays, r)
	}
	for path := range newFinal {
		if owner, ok := stays[path]; ok {
			return nil, fmt.Errorf("dataset %s: the new file %s would overwrite a file of source %q that stays: give the sources distinct stems", d.name(), path, owner)
		}
	}
	if err := d.checkForeign(newFinal, own); err != nil {
		return nil, err
	}
	for _, r := range replaced {
		if !newFinal[r] {
			p.Deletes = append(p.Deletes, r)
		}
	}

	// Empty tables: a zero-row file while a table has no data file.
	hasData := map[string]bool{}
	for _, s := range m.Sources {
		for tb, fs := range s.Files {
			if len(fs) > 0 {
				hasData[tb] = true
			}
		}
	}
	var emptyStaged []string
	for _, tb := range t.tables {
		name := tb.tableName()
		if m.Tables[name] == nil {
			m.Tables[name] = &TableEntry{}
		}
		if !hasData[name] && m.Tables[name].Empty == "" {
			rel := path.Join(name, "dt="+emptyDT, emptyFileName(d.scope))
			staged := path.Join(t.stagingRel(), ".empty", name, emptyFileName(d.scope))
			if err := tb.writeEmpty(d.Path(staged)); err != nil {
				return nil, err
			}
			emptyStaged = append(emptyStaged, staged)
			m.Tables[name].Empty = rel
			p.Renames = append(p.Renames, Rename{From: staged, To: rel})
		}
	}
	for _, name := range m.TableNames() {
		if e := m.Tables[name]; hasData[name] && e.Empty != "" {
			p.Deletes = append(p.Deletes, e.Empty)
			e.Empty = ""
		}
	}
	sort.Slice(p.Renames, func(i, j int) bool { return p.Renames[i].To < p.Renames[j].To })
	sort.Strings(p.Deletes)

	// The staged files' directory entries must survive a crash from the
	// commit point on: the pending renames name them.
	syncs := map[string]bool{}
	meta := d.metaPath()
	for _, r := range p.Renames {
		for dir := filepath.Dir(d.Path(r.From)); dir != meta && len(dir) > len(meta); dir = filepath.Dir(dir) {
			syncs[dir] = true
		}
	}
	dirs := make([]string, 0, len(syncs))
	for dir := range syncs {
		dirs = append(dirs, dir)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // children before parents
	for _, dir := range dirs {
		if err := syncDir(dir); err != nil {
			for _, s := range emptyStaged {
				os.Remove(d.Path(s))
			}
			return nil, fmt.Errorf("commit of run %s failed, the dataset is unchanged: %w", t.id, err)
		}
	}

	if t.ledger != nil {
		b, err := t.ledger(published)
		var c bytes.Buffer
		if err == nil {
			err = json.Compact(&c, b)
		}
		if err != nil {
			for _, s := range emptyStaged {
				os.Remove(d.Path(s))
			}
			return nil, fmt.Errorf("commit of run %s failed, the dataset is unchanged: its ledger: %w", t.id, err)
		}
		m.Ledger, t.ledger = c.Bytes(), nil
	}
	// The commit point: the manifest with its pending operations.
	m.Pending = p
	if err := writeManifest(d.manifestPath(), m); err != nil {
		for _, s := range emptyStaged {
			os.Remove(d.Path(s))
		}
		return nil, fmt.Errorf("commit of run %s failed, the dataset is unchanged: %w", t.id, err)
	}
	d.mu.Lock()
	d.manifest = m.clone()
	d.mu.Unlock()
	for _, tb := range t.tables {
		tb.committed(named)
	}
	for id := range named {
		t.committed[id] = true
	}
	var after func(int) error
	if fault != nil {
		after = fault.applied
	}
	if err := d.apply(p, after); err != nil {
		t.broken = fmt.Errorf("dataset %s: the commit of run %s is recorded but not fully applied (%w): the next run finishes it on open: %w", d.name(), t.id, err, ErrUnfinished)
		return nil, t.broken
	}
	m.Pending = nil
	if err := writeManifest(d.manifestPath(), m); err != nil {
		t.broken = fmt.Errorf("dataset %s: the commit of run %s is applied but its manifest could not be finalised (%w): the next run finishes it on open: %w", d.name(), t.id, err, ErrUnfinished)
		return nil, t.broken
	}
	d.mu.Lock()
	d.manifest = m
	d.mu.Unlock()
	if err := d.syncLedger(m); err != nil {
		t.broken = fmt.Errorf("dataset %s: the commit of run %s is applied but its ledger file could not be written (%w): the next run writes it on open: %w", d.name(), t.id, err, ErrUnfinished)
		return nil, t.broken
	}
	return published, nil
}

// Abort ends the transaction and removes its staging area: what it did not
// commit is gone. A transaction that never committed leaves the dataset
// exactly as it was. Abort after Abort or Close does nothing.
func (t *Txn) Abort() error {
	_, err := t.end()
	return err
}

// Close ends the transaction like Abort, and reports as an error any
// source whose staged rows were never committed (they are discarded).
func (t *Txn) Close() error {
	lost, err := t.end()
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		return fmt.Errorf("dataset %s: run %s ended with rows of %s staged but not committed; they were discarded", t.d.name(), t.id, strings.Join(lost, ", "))
	}
	return nil
}

func (t *Txn) end() ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil, nil
	}
	t.ended = true
	lost := map[string]bool{}
	for _, tb := range t.tables {
		for _, id := range tb.uncommittedSources() {
			lost[id] = true
		}
		tb.discard()
	}
	t.d.mu.Lock()
	if t.d.txn == t {
		t.d.txn = nil
	}
	t.d.mu.Unlock()
	var ids []string
	for id := range lost {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if t.broken != nil {
		// The staging area holds files the pending commit still renames.
		return ids, nil
	}
	if err := os.RemoveAll(t.staging); err != nil {
		return ids, fmt.Errorf("dataset %s: removing the staging area %s: %w", t.d.name(), t.staging, err)
	}
	if removeIfEmpty(filepath.Dir(t.staging)) {
		syncDir(t.d.metaPath())
	} else {
		syncDir(filepath.Dir(t.staging))
	}
	return ids, nil
}
