//go:build !unix

package dataset

import (
	"context"
	"fmt"
	"os"
)

type heldLocks struct {
	main, scope *os.File
}

func lockDataset(ctx context.Context, dir, scope string, wait bool) (heldLocks, error) {
	return heldLocks{}, fmt.Errorf("dataset %s: locking is only implemented on Unix systems", dir)
}

func unlockDataset(l heldLocks) error { return nil }
