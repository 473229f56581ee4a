//go:build !unix

package dataset

import (
	"context"
	"fmt"
	"os"
)

func lockDataset(ctx context.Context, dir string, wait bool) (*os.File, error) {
	return nil, fmt.Errorf("dataset %s: locking is only implemented on Unix systems", dir)
}

func unlockDataset(f *os.File) error { return f.Close() }
