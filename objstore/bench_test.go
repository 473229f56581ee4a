package objstore

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPut uploads a file to gofakes3 over loopback HTTP: the cost of
// Put itself (MD5, the upload, the HEAD after it) against a server that
// keeps objects in memory. 1 MiB goes in one PUT, 40 MiB in three parts
// of 16 MiB.
func BenchmarkPut(b *testing.B) {
	for _, size := range []int{1 << 20, 40 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			f := newFakeTB(b, "bkt")
			c := f.config()
			c.PartSize = 0 // the default, 16 MiB
			s, err := Open(context.Background(), "s3://bkt/p", c)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			local, _ := randomFile(b, b.TempDir(), "f.parquet", size)
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				if err := s.Put(context.Background(), fmt.Sprintf("t/f-%d.parquet", i%4), local); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
