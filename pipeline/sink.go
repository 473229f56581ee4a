package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"mcptrace/schema"
)

// Sink receives the run's rows in their final order, from one goroutine,
// and makes them durable. Rows are attributed to the input they came from,
// so a rerun can replace exactly that input's rows. Commit makes what was
// written durable and visible; after an error from any method the run
// calls Abort, which leaves the dataset as it was before the run.
type Sink interface {
	WriteExchanges(ctx context.Context, in *Input, rows []schema.Exchange) error
	WriteQuarantine(ctx context.Context, in *Input, rows []schema.Quarantine) error
	Commit(ctx context.Context, inputs []*Input) error
	Abort()
}

// parquetDataset is the sink of the dataset directory.
type parquetDataset struct {
	ex  *parquetSink[schema.Exchange]
	q   *parquetSink[schema.Quarantine]
	sum *[]string
}

func newParquetDataset(cfg Config, files []string) (Sink, error) {
	name := datasetName(files)
	return &parquetDataset{
		ex: newParquetSink[schema.Exchange](cfg.OutDir, "exchanges", name, cfg.RowGroupRows,
			func(e *schema.Exchange) time.Time { return e.StartedAt }),
		q: newParquetSink[schema.Quarantine](cfg.OutDir, "quarantine", name, cfg.RowGroupRows,
			func(q *schema.Quarantine) time.Time { return q.ObservedAt }),
	}, nil
}

func (d *parquetDataset) WriteExchanges(_ context.Context, _ *Input, rows []schema.Exchange) error {
	return d.ex.Write(rows)
}

func (d *parquetDataset) WriteQuarantine(_ context.Context, _ *Input, rows []schema.Quarantine) error {
	return d.q.Write(rows)
}

func (d *parquetDataset) Commit(context.Context, []*Input) error {
	_, err1 := d.ex.Close()
	_, err2 := d.q.Close()
	return errors.Join(err1, err2)
}

func (d *parquetDataset) Abort() {
	d.ex.Abort()
	d.q.Abort()
}

func datasetName(files []string) string {
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f)
		h.Write([]byte{0})
	}
	return "part-" + hex.EncodeToString(h.Sum(nil)[:6])
}

// parquetSink writes rows of one table into Hive-style date partitions,
// OUT/<table>/dt=YYYY-MM-DD/<name>.parquet, one open writer per partition.
// Files are written under a hidden temporary name and renamed by Close once
// closed and fsynced; Abort removes them.
type parquetSink[T any] struct {
	dir      string // OUT/<table>
	name     string // file name without extension
	rowGroup int64
	day      func(*T) time.Time
	parts    map[string]*partFile[T]
	rows     int64
}

type partFile[T any] struct {
	tmp, final string
	f          *os.File
	w          *parquet.GenericWriter[T]
	rows       int64
}

func newParquetSink[T any](outDir, table, name string, rowGroup int64, day func(*T) time.Time) *parquetSink[T] {
	return &parquetSink[T]{dir: filepath.Join(outDir, table), name: name, rowGroup: rowGroup, day: day, parts: map[string]*partFile[T]{}}
}

// Write appends rows, routing each run of rows of one date partition to
// its writer in one call.
func (s *parquetSink[T]) Write(rows []T) error {
	for start := 0; start < len(rows); {
		dt := s.day(&rows[start]).UTC().Format("2006-01-02")
		end := start + 1
		for end < len(rows) && s.day(&rows[end]).UTC().Format("2006-01-02") == dt {
			end++
		}
		p := s.parts[dt]
		if p == nil {
			var err error
			if p, err = s.open(dt); err != nil {
				return err
			}
			s.parts[dt] = p
		}
		if _, err := p.w.Write(rows[start:end]); err != nil {
			return fmt.Errorf("writing %s: %w", p.tmp, err)
		}
		p.rows += int64(end - start)
		s.rows += int64(end - start)
		start = end
	}
	return nil
}

func (s *parquetSink[T]) open(dt string) (*partFile[T], error) {
	dir := filepath.Join(s.dir, "dt="+dt)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create output directory %s: %w", dir, err)
	}
	p := &partFile[T]{tmp: filepath.Join(dir, "."+s.name+".parquet.tmp"), final: filepath.Join(dir, s.name+".parquet")}
	f, err := os.Create(p.tmp)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", p.tmp, err)
	}
	p.f = f
	p.w = parquet.NewGenericWriter[T](f,
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(s.rowGroup),
		parquet.DataPageVersion(1),
		parquet.DictionaryMaxBytes(1<<20),
		parquet.CreatedBy("mcptrace", "0.1.0", ""),
	)
	return p, nil
}

// Close finishes every partition: footer, fsync, rename, then fsync of the
// directory so the rename is durable. It returns the final paths.
func (s *parquetSink[T]) Close() ([]string, error) {
	var paths []string
	keys := make([]string, 0, len(s.parts))
	for k := range s.parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.parts[k]
		if err := p.w.Close(); err != nil {
			return paths, fmt.Errorf("finishing %s: %w", p.tmp, err)
		}
		if err := p.f.Sync(); err != nil {
			return paths, fmt.Errorf("syncing %s: %w", p.tmp, err)
		}
		if err := p.f.Close(); err != nil {
			return paths, fmt.Errorf("closing %s: %w", p.tmp, err)
		}
		if err := os.Rename(p.tmp, p.final); err != nil {
			return paths, fmt.Errorf("renaming %s: %w", p.tmp, err)
		}
		if d, err := os.Open(filepath.Dir(p.final)); err == nil {
			d.Sync()
			d.Close()
		}
		paths = append(paths, p.final)
	}
	s.parts = map[string]*partFile[T]{}
	return paths, nil
}

// Abort removes the temporary files of an unfinished run.
func (s *parquetSink[T]) Abort() {
	for _, p := range s.parts {
		p.f.Close()
		os.Remove(p.tmp)
	}
	s.parts = map[string]*partFile[T]{}
}
