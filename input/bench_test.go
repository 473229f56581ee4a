package input

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkRead measures Open, Head and reading a 4 MiB log to the end,
// plain and gzip-compressed.
func BenchmarkRead(b *testing.B) {
	data := wireLog(60000)
	for _, c := range []struct {
		name string
		raw  []byte
	}{{"plain", data}, {"gzip", gzipBytes(b, data)}, {"zstd", zstdBytes(b, data)}} {
		p := filepath.Join(b.TempDir(), c.name)
		write(b, p, c.raw)
		in, _, err := Expand([]string{p}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open(in[0])
				if err != nil {
					b.Fatal(err)
				}
				r.Head()
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		})
	}
}
