package dataset

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdWindow is the window of the zstd encoders that compress pages. A
// page is at most about parquet-go's page buffer (256 KiB) or a
// dictionary (DictionaryMaxBytes, 1 MiB), so a window of 2 MiB sees all
// of it, and compresses it to the same bytes as the library's default
// window of 8 MiB; the default made every encoder keep 16 MiB of history
// (32 MiB of a run's heap for the two that the writers use).
const zstdWindow = 2 << 20

// smallZstd is the ZSTD page codec with the window above, at zstd's
// default level (the level of parquet-go's own codec). One encoder and
// one decoder serve every writer: both are safe for concurrent use and
// keep one internal coder per core.
type smallZstd struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	err  error
}

func (c *smallZstd) init() {
	c.once.Do(func() {
		n := runtime.GOMAXPROCS(0)
		c.enc, c.err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(zstdWindow),
			zstd.WithEncoderConcurrency(n), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
		if c.err != nil {
			return
		}
		c.dec, c.err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(n))
	})
}

func (c *smallZstd) String() string { return "ZSTD" }

func (c *smallZstd) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *smallZstd) Encode(dst, src []byte) ([]byte, error) {
	if c.init(); c.err != nil {
		return dst[:0], c.err
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (c *smallZstd) Decode(dst, src []byte) ([]byte, error) {
	if c.init(); c.err != nil {
		return dst[:0], c.err
	}
	return c.dec.DecodeAll(src, dst[:0])
}
