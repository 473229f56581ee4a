package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// ManifestVersion is the version of the manifest format this package
// writes and reads.
const ManifestVersion = 1

const (
	metaDir      = ".mcptrace"
	lockFile     = "lock"
	manifestFile = "manifest.json"
	stagingDir   = "staging"
	scopesDir    = "scopes"
	// emptyDT and emptyName place a table's zero-row file: see the package
	// documentation, "Empty tables" (a scope's is "empty-SCOPE.parquet").
	emptyDT   = "1970-01-01"
	emptyName = "empty.parquet"
)

// emptyFileName is the name of the zero-row file of a table without data
// of the writer of scope ("" for the whole dataset).
func emptyFileName(scope string) string {
	if scope == "" {
		return emptyName
	}
	return "empty-" + scope + ".parquet"
}

// Manifest is the dataset's record of what it holds: for each source, the
// files that hold its rows and how far it was read. Its JSON form is
// DIR/.mcptrace/manifest.json (see the package documentation).
type Manifest struct {
	Version int `json:"version"`
	// Tables known to the dataset; Empty is the table's zero-row file
	// while it has no data file.
	Tables map[string]*TableEntry `json:"tables"`
	// Sources by canonical identity.
	Sources map[string]*SourceEntry `json:"sources"`
	// Pending is set only between a commit's commit point and the end of
	// its apply: the operations that make the directory match this
	// manifest. Open rolls it forward.
	Pending *Pending `json:"pending,omitempty"`
	// Ledger is the writer's accounting as of this commit (Txn.SetLedger),
	// opaque JSON here: kept in the manifest so that it is committed with
	// the files it accounts for, and copied to ledger.json next to it.
	Ledger json.RawMessage `json:"ledger,omitempty"`
}

// TableEntry is one table of the manifest.
type TableEntry struct {
	Empty string `json:"empty,omitempty"` // path of the zero-row file, relative to DIR
}

// SourceEntry is what the dataset holds of one source.
type SourceEntry struct {
	RunID    string    `json:"run_id"`   // the run that last committed this source
	RunTime  time.Time `json:"run_time"` // that run's time
	Position Position  `json:"position"` // as given by the last commit
	Complete bool      `json:"complete"` // the source was read to its end
	// Files holds, per table, the files with this source's rows, sorted by
	// path. A source may have no files (it produced no rows).
	Files map[string][]FileEntry `json:"files,omitempty"`
	// Keys are the source's dedupe keys as its last commit gave them
	// (SourceState.Keys), sorted, without duplicates: opaque to this
	// package. The Kafka sink keeps there the ids of rows already in the
	// dataset for records past the committed offset, so that a replay does
	// not write them twice.
	Keys []string `json:"keys,omitempty"`
}

// FileEntry is one data file of the manifest.
type FileEntry struct {
	Path  string `json:"path"` // relative to DIR, slash-separated: TABLE/dt=YYYY-MM-DD/NAME.parquet
	DT    string `json:"dt"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// Position is how far a source was read: opaque to this package, which
// keeps it in the manifest as the caller gave it. The pipeline uses
// Unit "byte" or "record" for files, "offset" for Kafka.
type Position struct {
	Unit  string `json:"unit,omitempty"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
}

// Pending is the operations of a commit not yet known to be applied.
type Pending struct {
	RunID   string   `json:"run_id"`
	Renames []Rename `json:"renames,omitempty"`
	Deletes []string `json:"deletes,omitempty"` // paths relative to DIR
}

// Rename moves a staged file (From, relative to DIR, under
// .mcptrace/staging/) to its final path To.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func newManifest() *Manifest {
	return &Manifest{Version: ManifestVersion, Tables: map[string]*TableEntry{}, Sources: map[string]*SourceEntry{}}
}

// ReadManifest reads the manifest of the dataset at dir without taking its
// lock (for readers such as analyze): the dataset's own and, when scoped
// writers have written it, the union with every scope's (see
// ReadScopes). A directory without a manifest gives an empty manifest.
//
// In the union, Sources and Tables are the union of all (scopes' sources
// have distinct identities; should one appear in several manifests, its
// files are merged and its position, keys and run are those of its latest
// run), EmptyFile names one zero-row file of a table that has no data file
// in any of them, and Pending merges the pending operations of all. When
// Pending is set, a commit is being applied (or was interrupted) and the
// directory may not yet match the manifest. Each manifest is read as one
// writer left it at a commit; the union is not one instant of the whole
// dataset when scoped writers are committing meanwhile.
func ReadManifest(dir string) (*Manifest, error) {
	m, err := readManifestFile(filepath.Join(dir, metaDir, manifestFile))
	if err != nil {
		return nil, err
	}
	scopes, err := ReadScopes(dir)
	if err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		return m, nil
	}
	parts := []*Manifest{m}
	for _, s := range scopes {
		sm, err := readManifestFile(scopeManifestPath(dir, s))
		if err != nil {
			return nil, err
		}
		parts = append(parts, sm)
	}
	return union(parts), nil
}

// ReadScopes returns the scopes of the dataset at dir (those a scoped Open
// has created, whether or not they have committed), sorted.
func ReadScopes(dir string) ([]string, error) {
	path := filepath.Join(dir, metaDir, scopesDir)
	ents, err := os.ReadDir(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the scopes of dataset %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && ValidScope(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func scopeManifestPath(dir, scope string) string {
	return filepath.Join(dir, metaDir, scopesDir, scope, manifestFile)
}

// union merges manifests read for the occasion (it takes their maps).
func union(parts []*Manifest) *Manifest {
	u := newManifest()
	var pending []*Pending
	for _, p := range parts {
		for id, s := range p.Sources {
			e := u.Sources[id]
			if e == nil {
				u.Sources[id] = s
				continue
			}
			// One identity in two manifests: the files of both, the
			// rest as its latest run left it.
			files := map[string][]FileEntry{}
			for _, from := range []*SourceEntry{e, s} {
				for t, fs := range from.Files {
					files[t] = append(files[t], fs...)
				}
			}
			for _, fs := range files {
				sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
			}
			if s.RunTime.After(e.RunTime) {
				*e = *s
			}
			e.Files = files
		}
		for name, t := range p.Tables {
			if u.Tables[name] == nil {
				u.Tables[name] = &TableEntry{}
			}
			if u.Tables[name].Empty == "" {
				u.Tables[name].Empty = t.Empty
			}
		}
		if p.Pending != nil {
			pending = append(pending, p.Pending)
		}
	}
	for _, s := range u.Sources {
		for name, fs := range s.Files {
			if t := u.Tables[name]; t != nil && len(fs) > 0 {
				t.Empty = ""
			}
		}
	}
	if len(pending) > 0 {
		var runs []string
		u.Pending = &Pending{}
		for _, p := range pending {
			runs = append(runs, p.RunID)
			u.Pending.Renames = append(u.Pending.Renames, p.Renames...)
			u.Pending.Deletes = append(u.Pending.Deletes, p.Deletes...)
		}
		u.Pending.RunID = strings.Join(runs, ",")
	}
	return u
}

// readManifestFile reads one manifest (the dataset's or a scope's); a
// missing file gives an empty manifest.
func readManifestFile(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newManifest(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the manifest %s: %w", path, err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest reads a manifest from its JSON form (one kept elsewhere,
// such as a scope's manifest in an object store).
func ParseManifest(b []byte) (*Manifest, error) {
	m := newManifest()
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w (the manifest is damaged: restore it from a backup, or remove the dataset and ingest again)", err)
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("manifest version %d, this mcptrace reads version %d: use a matching mcptrace", m.Version, ManifestVersion)
	}
	if m.Tables == nil {
		m.Tables = map[string]*TableEntry{}
	}
	if m.Sources == nil {
		m.Sources = map[string]*SourceEntry{}
	}
	return m, nil
}

func writeManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the manifest %s: %w", path, err)
	}
	return writeFileDurable(path, append(b, '\n'))
}

// clone returns a deep copy.
func (m *Manifest) clone() *Manifest {
	c := &Manifest{Version: m.Version, Tables: make(map[string]*TableEntry, len(m.Tables)), Sources: make(map[string]*SourceEntry, len(m.Sources))}
	for k, v := range m.Tables {
		t := *v
		c.Tables[k] = &t
	}
	for k, v := range m.Sources {
		s := *v
		s.Files = make(map[string][]FileEntry, len(v.Files))
		for t, fs := range v.Files {
			s.Files[t] = append([]FileEntry(nil), fs...)
		}
		s.Keys = slices.Clone(v.Keys)
		c.Sources[k] = &s
	}
	c.Ledger = slices.Clone(m.Ledger)
	if m.Pending != nil {
		p := *m.Pending
		p.Renames = append([]Rename(nil), m.Pending.Renames...)
		p.Deletes = append([]string(nil), m.Pending.Deletes...)
		c.Pending = &p
	}
	return c
}

// TableNames returns the tables of the dataset, sorted.
func (m *Manifest) TableNames() []string {
	names := make([]string, 0, len(m.Tables))
	for t := range m.Tables {
		names = append(names, t)
	}
	sort.Strings(names)
	return names
}

// SourceIDs returns the identities of the sources of the dataset, sorted.
func (m *Manifest) SourceIDs() []string {
	ids := make([]string, 0, len(m.Sources))
	for id := range m.Sources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Files returns the data files of table, sorted by path, each with the
// source whose rows it holds. The zero-row file of an empty table is not
// among them (see EmptyFile).
func (m *Manifest) Files(table string) []FileInfo {
	var out []FileInfo
	for id, s := range m.Sources {
		for _, f := range s.Files[table] {
			out = append(out, FileInfo{Table: table, DT: f.DT, Path: f.Path, Source: id, Rows: f.Rows, Bytes: f.Bytes})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Rows returns the number of rows of table in the dataset.
func (m *Manifest) Rows(table string) int64 {
	var n int64
	for _, s := range m.Sources {
		for _, f := range s.Files[table] {
			n += f.Rows
		}
	}
	return n
}

// EmptyFile returns the path (relative to DIR) of table's zero-row file, or
// "" when the table has data files or is unknown.
func (m *Manifest) EmptyFile(table string) string {
	if t := m.Tables[table]; t != nil {
		return t.Empty
	}
	return ""
}

// livePaths returns every file the manifest says is in the dataset.
func (m *Manifest) livePaths() map[string]string {
	live := map[string]string{}
	for id, s := range m.Sources {
		for _, fs := range s.Files {
			for _, f := range fs {
				live[f.Path] = id
			}
		}
	}
	for _, t := range m.Tables {
		if t.Empty != "" {
			live[t.Empty] = ""
		}
	}
	return live
}

// ledgerFile holds the accounting of the last run that published
// (schema.Ledger), next to the manifest.
const ledgerFile = "ledger.json"

// WriteLedger writes the run's ledger (JSON) next to the manifest,
// durably and atomically: a reader sees the previous run's or this one's.
func (d *Dataset) WriteLedger(b []byte) error {
	return writeFileDurable(d.LedgerPath(), append(b, '\n'))
}

// LedgerPath is the ledger file next to this writer's manifest:
// DIR/.mcptrace/ledger.json, or DIR/.mcptrace/scopes/SCOPE/ledger.json.
func (d *Dataset) LedgerPath() string { return filepath.Join(d.metaPath(), ledgerFile) }

// LedgerFileRel is the ledger file of a scope ("" for the dataset's own),
// relative to the dataset, slash-separated.
func LedgerFileRel(scope string) string {
	if scope == "" {
		return metaDir + "/" + ledgerFile
	}
	return metaDir + "/" + scopesDir + "/" + scope + "/" + ledgerFile
}

// LedgerBytes is the form of a manifest's ledger (Manifest.Ledger) in its
// ledger.json file: indented, with a final newline.
func LedgerBytes(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("the ledger is not JSON: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// syncLedger makes ledger.json next to the manifest a copy of the
// manifest's ledger, when it has one and the file differs (a crash
// between a commit and the file's write).
func (d *Dataset) syncLedger(m *Manifest) error {
	if len(m.Ledger) == 0 {
		return nil
	}
	want, err := LedgerBytes(m.Ledger)
	if err != nil {
		return fmt.Errorf("dataset %s: %w", d.name(), err)
	}
	if have, err := os.ReadFile(d.LedgerPath()); err == nil && bytes.Equal(have, want) {
		return nil
	}
	return writeFileDurable(d.LedgerPath(), want)
}
