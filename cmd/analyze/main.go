// Command analyze reads a dataset written by ingest and prints reports.
//
//	analyze [-data DIR]
//
// For now it prints outcome × layer counts and the number of false successes
// (HTTP 2xx on the final attempt, yet not a success).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"mcptrace/classify"
	"mcptrace/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./out", "dataset directory written by ingest")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		*data = fs.Arg(0)
	}
	rep, err := load(*data)
	if err != nil {
		fmt.Fprintf(stderr, "analyze: %v\n", err)
		return 1
	}
	rep.print(stdout)
	return 0
}

type report struct {
	files        int
	exchanges    int64
	counts       map[[2]string]int64 // outcome, layer
	falseSuccess int64
	quarantined  int64
}

func parquetFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return files, err
}

func load(dir string) (*report, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("dataset %s not found: run `go run ./cmd/ingest` first, or pass -data DIR", dir)
	}
	files, err := parquetFiles(filepath.Join(dir, "exchanges"))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	qfiles, err := parquetFiles(filepath.Join(dir, "quarantine"))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(files) == 0 && len(qfiles) == 0 {
		return nil, fmt.Errorf("no exchanges/**/*.parquet or quarantine/**/*.parquet under %s: is it a dataset written by ingest?", dir)
	}
	rep := &report{counts: map[[2]string]int64{}}
	for _, f := range files {
		rows, err := parquet.ReadFile[schema.Exchange](f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		rep.files++
		for i := range rows {
			r := &rows[i]
			rep.exchanges++
			rep.counts[[2]string{r.Outcome, r.Layer}]++
			if n := len(r.HTTPStatuses); n > 0 && r.HTTPStatuses[n-1] >= 200 && r.HTTPStatuses[n-1] <= 299 &&
				r.Outcome != classify.ToolSuccess && r.Outcome != classify.Success {
				rep.falseSuccess++
			}
		}
	}
	for _, f := range qfiles {
		n, err := countRows(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		rep.quarantined += n
	}
	return rep, nil
}

func countRows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	p, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, err
	}
	return p.NumRows(), nil
}

func (r *report) print(w io.Writer) {
	if r.exchanges == 0 {
		fmt.Fprintf(w, "0 exchanges, %d quarantined\n", r.quarantined)
		return
	}
	fmt.Fprintf(w, "%d exchanges in %d files\n\n", r.exchanges, r.files)
	fmt.Fprintf(w, "%-20s %-12s %8s %7s\n", "outcome", "layer", "count", "share")
	keys := make([][2]string, 0, len(r.counts))
	for k := range r.counts {
		keys = append(keys, k)
	}
	order := map[string]int{}
	for i, o := range classify.Outcomes {
		order[o] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, oki := order[keys[i][0]]
		oj, okj := order[keys[j][0]]
		if oki != okj {
			return oki
		}
		if oi != oj {
			return oi < oj
		}
		return keys[i][0] < keys[j][0]
	})
	for _, k := range keys {
		n := r.counts[k]
		fmt.Fprintf(w, "%-20s %-12s %8d %6.1f%%\n", k[0], k[1], n, 100*float64(n)/float64(r.exchanges))
	}
	fmt.Fprintf(w, "\nfalse successes (final HTTP status 2xx, outcome not a success): %d\n", r.falseSuccess)
	fmt.Fprintf(w, "quarantined input lines: %d\n", r.quarantined)
}
