package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Source names where rows came from.
type Source struct {
	// ID is the canonical identity of the source, the manifest's key:
	// "file:/abs/resolved/path", "stdin:sha256:<hex>", "kafka:topic/partition".
	ID string
	// Stem, when set, starts the names of the files this source's rows
	// open from now on (Kafka passes "<topic>+<partition>+<first offset>",
	// the offset of the file's first row). The stem of a file is the one of
	// the Write that opened it: a later Write with another stem adds to the
	// open file, under its name. Files are numbered per stem (and
	// partition): "<stem>-00001.parquet", "-00002" for the next file opened
	// with the same stem in the run. Letters, digits, '.', '_', '-' and
	// '+', at most 200; it must not start with '.' or '_' (Spark and Hive
	// skip such files). Empty: derived from ID (see DefaultStem).
	Stem string
}

var stemRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$`)

// DefaultStem is the file-name stem of a source that gives none: the
// scheme of its identity (the part before the first ':', when it is a
// short lower-case word) and the first 12 hex digits of the SHA-256 of the
// identity, e.g. "file-3f2a9c1b7d4e". It is stable: the same identity
// gives the same names on every run.
func DefaultStem(id string) string {
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:6])
	if i := strings.IndexByte(id, ':'); i > 0 && i <= 16 && regexp.MustCompile(`^[a-z]+$`).MatchString(id[:i]) {
		return id[:i] + "-" + h
	}
	return "src-" + h
}

// FileInfo describes a data file this package wrote.
type FileInfo struct {
	Table  string
	DT     string // the partition, YYYY-MM-DD
	Path   string // final path relative to the dataset, slash-separated
	Source string // the source identity whose rows it holds
	Rows   int64
	Bytes  int64
}

// RollPolicy says when a table's writers finish a file and start the next.
// Zero fields take the defaults below.
type RollPolicy struct {
	// MaxRows per file. Default 1,048,576.
	MaxRows int64
	// MaxBytes per file, as parquet-go estimates it (bytes written plus
	// the uncompressed size of the rows buffered), checked every
	// CheckEvery rows of a file. Default 128 MiB.
	MaxBytes int64
	// MaxAge rolls a file this long after it was opened (checked on Write
	// and on Tick). 0, the default, turns it off: a roll by age makes the
	// file names depend on the clock, not only on the rows.
	MaxAge time.Duration
	// MaxOpen bounds the writers open at once in the table; opening one
	// more rolls the least recently used. Default 8. Memory is about
	// MaxOpen times RowGroupBytes, whatever the number of partitions.
	MaxOpen int
	// RowGroupRows and RowGroupBytes end a row group (and free its
	// buffers). Defaults 65,536 rows and 8 MiB.
	RowGroupRows  int64
	RowGroupBytes int64
	// OnDurable, when set, is called for each file as soon as it is staged
	// durably (closed, fsynced, renamed within the staging area), from the
	// goroutine whose Write, Roll, Tick or Commit rolled it. It must not
	// call back into the Table. A staged file is not yet in the dataset:
	// acknowledge input only once Commit has returned the file.
	OnDurable func(FileInfo)
	// Now is the clock for MaxAge; nil: time.Now.
	Now func() time.Time
}

// zstdCodec is shared by every writer: a codec pools its encoders, and one
// per file allocated a fresh encoder for each (a fifth of all bytes
// allocated over a thousand partitions).
var zstdCodec = &smallZstd{} // zstd.go: a 2 MiB window

// CheckEvery is the number of rows between two size checks of a file. Size
// checks (for MaxBytes and RowGroupBytes) happen at fixed row counts so
// the same rows give the same files however the caller batches its
// Writes.
const CheckEvery = 1024

func (p RollPolicy) withDefaults() RollPolicy {
	if p.MaxRows <= 0 {
		p.MaxRows = 1 << 20
	}
	if p.MaxBytes <= 0 {
		p.MaxBytes = 128 << 20
	}
	if p.MaxOpen <= 0 {
		p.MaxOpen = 8
	}
	if p.RowGroupRows <= 0 {
		p.RowGroupRows = 65536
	}
	if p.RowGroupBytes <= 0 {
		p.RowGroupBytes = 8 << 20
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

// Table writes the rows of one table of a transaction into its staging
// area: one writer per (partition, source), rolled by the RollPolicy. Its
// methods are safe for concurrent use.
type Table[T any] struct {
	txn   *Txn
	name  string
	dayOf func(*T) time.Time
	pol   RollPolicy

	mu     sync.Mutex
	err    error // sticky: a failed write poisons the table until Abort
	open   map[wkey]*writer[T]
	clock  uint64            // LRU clock
	seq    map[seqKey]int    // last sequence number per (dt, source, stem)
	names  map[string]string // staged file name (table-relative) -> source ID
	staged []FileInfo        // staged since the last Roll, for its result
	// uncommitted files per source, waiting for Commit.
	uncommitted map[string][]stagedFile
	maxOpenSeen int // the most writers open at once (tests check the bound)
}

type wkey struct{ dt, src string }

type seqKey struct{ dt, src, stem string }

type stagedFile struct {
	FileInfo
	staged string // relative to DIR
}

type writer[T any] struct {
	key     wkey
	name    string // file name
	rel     string // final path relative to DIR
	tmp     string // absolute, hidden, in staging
	staged  string // absolute, in staging
	f       *os.File
	ff      *faultFile
	pw      *parquet.GenericWriter[T]
	rows    int64
	rgRows  int64 // rows in the current row group
	rgStart int64 // Size() when the current row group started
	opened  time.Time
	used    uint64
}

var tableRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,63}$`)

// NewTable registers table in txn and returns its writer. dayOf gives a
// row's partition (its UTC date). The table name must be lower-case
// letters, digits and '_' (not first); registering an invalid name or the
// same table twice in a transaction is a programming error and panics.
func NewTable[T any](txn *Txn, table string, dayOf func(*T) time.Time, roll RollPolicy) *Table[T] {
	if !tableRE.MatchString(table) {
		panic(fmt.Sprintf("dataset.NewTable: invalid table name %q", table))
	}
	t := &Table[T]{txn: txn, name: table, dayOf: dayOf, pol: roll.withDefaults(),
		open: map[wkey]*writer[T]{}, seq: map[seqKey]int{}, names: map[string]string{}, uncommitted: map[string][]stagedFile{}}
	if err := txn.register(t); err != nil {
		panic("dataset.NewTable: " + err.Error())
	}
	return t
}

func (t *Table[T]) writerOptions() []parquet.WriterOption {
	// As pipeline/sink.go configured it, so files keep their bytes, but
	// without statistics in each data page's header: parquet-go computes
	// a page's min and max once for the header and again for the column
	// index and the column chunk's statistics, which stay (the row group
	// min/max that DuckDB, Spark and Trino prune by, and the page index).
	// The header copy is deprecated by the column index, and was half of
	// the writer's cost of bounds (a dictionary page's bounds look up
	// every index).
	return []parquet.WriterOption{
		parquet.Compression(zstdCodec),
		parquet.MaxRowsPerRowGroup(t.pol.RowGroupRows),
		parquet.DataPageVersion(1),
		parquet.DictionaryMaxBytes(1 << 20),
		parquet.CreatedBy("mcptrace", "0.1.0", ""),
		parquet.DataPageStatistics(false),
	}
}

// Write appends rows of src, each to the writer of its partition.
// Consecutive rows of one partition go to their writer in one call. An
// error names the file and the cause; the table then refuses further
// writes and the transaction should be aborted.
func (t *Table[T]) Write(src Source, rows []T) error {
	if src.ID == "" {
		return fmt.Errorf("table %s: a source without identity", t.name)
	}
	if src.Stem != "" && !stemRE.MatchString(src.Stem) {
		return fmt.Errorf("table %s: source %s: invalid file-name stem %q (at most 200 letters, digits, '.', '_', '-', '+'; not starting with '.' or '_')", t.name, src.ID, src.Stem)
	}
	// Checked before taking the table's lock: Commit holds the
	// transaction's lock while it takes the tables' (lock order txn, then
	// table). A transaction that ends meanwhile has discarded the table,
	// which t.err then reports.
	if err := t.txn.usable(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	now := t.pol.Now()
	for start := 0; start < len(rows); {
		day := t.dayOf(&rows[start]).UTC()
		dt := day.Format("2006-01-02")
		y, m, d := day.Date()
		end := start + 1
		for end < len(rows) && sameDay(t.dayOf(&rows[end]).UTC(), y, m, d) {
			end++
		}
		if err := t.writeRun(src, dt, rows[start:end], now); err != nil {
			t.err = err
			return err
		}
		start = end
	}
	return nil
}

// sameDay says t falls on the day y-m-d: what comparing their
// "2006-01-02" partitions says, without formatting every row.
func sameDay(t time.Time, y int, m time.Month, d int) bool {
	ty, tm, td := t.Date()
	return ty == y && tm == m && td == d
}

func (t *Table[T]) writeRun(src Source, dt string, rows []T, now time.Time) error {
	k := wkey{dt, src.ID}
	for len(rows) > 0 {
		w := t.open[k]
		if w != nil && t.pol.MaxAge > 0 && now.Sub(w.opened) >= t.pol.MaxAge {
			if err := t.roll(w); err != nil {
				return err
			}
			w = nil
		}
		if w == nil {
			var err error
			if w, err = t.openWriter(k, src, now); err != nil {
				return err
			}
		}
		t.clock++
		w.used = t.clock
		// Up to the next size check or the row limit, whichever is first.
		n := int64(len(rows))
		if c := CheckEvery - w.rows%CheckEvery; n > c {
			n = c
		}
		if c := t.pol.MaxRows - w.rows; n > c {
			n = c
		}
		if c := t.pol.RowGroupRows - w.rgRows; n > c {
			n = c
		}
		if _, err := w.pw.Write(rows[:n]); err != nil {
			return fmt.Errorf("writing %s: %w", w.tmp, err)
		}
		w.rows += n
		w.rgRows += n
		rows = rows[n:]
		if w.rgRows >= t.pol.RowGroupRows {
			w.rgRows, w.rgStart = 0, w.pw.Size() // the writer flushed it
		}
		if w.rows >= t.pol.MaxRows {
			if err := t.roll(w); err != nil {
				return err
			}
			continue
		}
		if w.rows%CheckEvery == 0 {
			size := w.pw.Size()
			if size >= t.pol.MaxBytes {
				if err := t.roll(w); err != nil {
					return err
				}
				continue
			}
			if size-w.rgStart >= t.pol.RowGroupBytes {
				if err := w.pw.Flush(); err != nil {
					return fmt.Errorf("writing %s: %w", w.tmp, err)
				}
				w.rgRows, w.rgStart = 0, w.pw.Size()
			}
		}
	}
	return nil
}

func (t *Table[T]) openWriter(k wkey, src Source, now time.Time) (*writer[T], error) {
	for len(t.open) >= t.pol.MaxOpen {
		var lru *writer[T]
		for _, w := range t.open {
			if lru == nil || w.used < lru.used {
				lru = w
			}
		}
		if err := t.roll(lru); err != nil {
			return nil, err
		}
	}
	stem := src.Stem
	if stem == "" {
		stem = DefaultStem(src.ID)
	}
	sk := seqKey{k.dt, k.src, stem}
	t.seq[sk]++
	name := fmt.Sprintf("%s-%05d.parquet", stem, t.seq[sk])
	local := "dt=" + k.dt + "/" + name
	if other, ok := t.names[local]; ok && other != src.ID {
		return nil, fmt.Errorf("table %s: file %s of source %s would have the name of a file of source %s: give the sources distinct stems", t.name, local, src.ID, other)
	}
	if _, ok := t.names[local]; ok {
		return nil, fmt.Errorf("table %s: source %s: file %s written twice: the stem must change when the sequence restarts", t.name, src.ID, local)
	}
	// Staging directories and entries are made durable by the Commit
	// that publishes their files (one fsync per directory, not per file):
	// before a commit nothing needs them to survive a crash.
	dir := filepath.Join(t.txn.staging, t.name, "dt="+k.dt)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating directory %s: %w", dir, err)
	}
	w := &writer[T]{key: k, name: name, rel: path.Join(t.name, "dt="+k.dt, name),
		tmp: filepath.Join(dir, "."+name+".tmp"), staged: filepath.Join(dir, name), opened: now}
	f, err := os.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", w.tmp, err)
	}
	w.f = f
	w.ff = &faultFile{f: f, path: w.tmp}
	w.pw = parquet.NewGenericWriter[T](w.ff, t.writerOptions()...)
	t.names[local] = src.ID
	t.open[k] = w
	if len(t.open) > t.maxOpenSeen {
		t.maxOpenSeen = len(t.open)
	}
	return w, nil
}

// roll finishes w durably in the staging area: footer, fsync, close,
// rename from its hidden name. (The staging directory is fsynced by the
// Commit that publishes the file.)
func (t *Table[T]) roll(w *writer[T]) error {
	delete(t.open, w.key)
	fail := func(err error) error {
		w.f.Close()
		os.Remove(w.tmp)
		return err
	}
	if err := w.pw.Close(); err != nil {
		return fail(fmt.Errorf("writing %s: %w", w.tmp, err))
	}
	if err := syncFile(w.f, w.tmp); err != nil {
		return fail(err)
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("closing %s: %w", w.tmp, err)
	}
	if err := rename(w.tmp, w.staged); err != nil {
		os.Remove(w.tmp)
		return err
	}
	fi := FileInfo{Table: t.name, DT: w.key.dt, Path: w.rel, Source: w.key.src, Rows: w.rows, Bytes: w.ff.n}
	rel, _ := filepath.Rel(t.txn.d.dir, w.staged)
	t.uncommitted[w.key.src] = append(t.uncommitted[w.key.src], stagedFile{FileInfo: fi, staged: filepath.ToSlash(rel)})
	t.staged = append(t.staged, fi)
	if t.pol.OnDurable != nil {
		t.pol.OnDurable(fi)
	}
	return nil
}

// rollWhere rolls the open writers for which keep is true, in a
// deterministic order (partition, then source).
func (t *Table[T]) rollWhere(keep func(wkey) bool) error {
	keys := make([]wkey, 0, len(t.open))
	for k := range t.open {
		if keep(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dt != keys[j].dt {
			return keys[i].dt < keys[j].dt
		}
		return keys[i].src < keys[j].src
	})
	for _, k := range keys {
		if err := t.roll(t.open[k]); err != nil {
			t.err = err
			return err
		}
	}
	return nil
}

// Roll finishes every open file durably in the staging area (a flush
// marker) and returns every file staged since the previous Roll, whether
// by this call or by an automatic roll (rows, bytes, age, the open-writer
// bound, a Commit). Staged files enter the dataset at the next Commit of
// their source.
func (t *Table[T]) Roll() ([]FileInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	err := t.rollWhere(func(wkey) bool { return true })
	out := t.staged
	t.staged = nil
	return out, err
}

// Tick rolls the files opened at least MaxAge ago (nothing when MaxAge is
// 0) and returns every file staged since the previous Roll or Tick. A live
// source that goes quiet calls it from a timer.
func (t *Table[T]) Tick() ([]FileInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	var err error
	if t.pol.MaxAge > 0 {
		now := t.pol.Now()
		err = t.rollWhere(func(k wkey) bool { return now.Sub(t.open[k].opened) >= t.pol.MaxAge })
	}
	out := t.staged
	t.staged = nil
	return out, err
}

// OpenWriters returns the number of writers open now.
func (t *Table[T]) OpenWriters() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// MaxOpenSeen returns the most writers that were open at once.
func (t *Table[T]) MaxOpenSeen() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxOpenSeen
}

// The txn's view of a table.
type tableHandle interface {
	tableName() string
	// take rolls the open writers of sources and returns their staged,
	// uncommitted files, without forgetting them (see committed).
	take(sources map[string]bool) ([]stagedFile, error)
	// committed forgets the uncommitted files of sources.
	committed(sources map[string]bool)
	// writeEmpty writes a zero-row file with the table's schema at path.
	writeEmpty(path string) error
	// discard closes every open writer without finishing it.
	discard()
	uncommittedSources() []string
}

func (t *Table[T]) tableName() string { return t.name }

func (t *Table[T]) take(sources map[string]bool) ([]stagedFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	if err := t.rollWhere(func(k wkey) bool { return sources[k.src] }); err != nil {
		return nil, err
	}
	var out []stagedFile
	for id := range sources {
		out = append(out, t.uncommitted[id]...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (t *Table[T]) committed(sources map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range sources {
		delete(t.uncommitted, id)
	}
}

func (t *Table[T]) uncommittedSources() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	for id, fs := range t.uncommitted {
		if len(fs) > 0 {
			seen[id] = true
		}
	}
	for k := range t.open {
		seen[k.src] = true
	}
	var ids []string
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (t *Table[T]) discard() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, w := range t.open {
		w.f.Close()
		os.Remove(w.tmp)
		delete(t.open, k)
	}
	if t.err == nil {
		t.err = errors.New("table " + t.name + ": the transaction has ended")
	}
}

func (t *Table[T]) writeEmpty(path string) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating directory %s: %w", dir, err)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	pw := parquet.NewGenericWriter[T](&faultFile{f: f, path: tmp}, t.writerOptions()...)
	if err = pw.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err = syncFile(f, tmp); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	return rename(tmp, path) // the Commit fsyncs the directory
}
