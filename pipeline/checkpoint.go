package pipeline

import (
	"fmt"
	"sort"
	"sync"
)

// Checkpoint keeps, for one partition of a source (a file, a Kafka topic
// partition), the highest position below which every tracked range has been
// released: the Kafka commit point, and for files the ledger's "durable up
// to". Ranges are tracked in position order and may be released in any
// order (Benthos's capped checkpointer without the cap: a tracked range is
// a few words, and the pipeline bounds what is in flight upstream).
type Checkpoint struct {
	mu        sync.Mutex
	committed int64 // highest contiguous released position (0: none)
	ranges    []ckRange
}

type ckRange struct {
	first, last int64
	released    bool
}

// Track registers the range [first, last] of positions, which must start
// after every range tracked before, and returns the function that releases
// it. Releasing twice is a no-op.
func (c *Checkpoint) Track(first, last int64) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.ranges); n > 0 && first <= c.ranges[n-1].last || first <= c.committed || last < first {
		return nil, fmt.Errorf("checkpoint: range %d-%d is not after the ones tracked (a bug)", first, last)
	}
	c.ranges = append(c.ranges, ckRange{first: first, last: last})
	var once sync.Once
	return func() { once.Do(func() { c.release(first) }) }, nil
}

func (c *Checkpoint) release(first int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].first >= first })
	if i < len(c.ranges) && c.ranges[i].first == first {
		c.ranges[i].released = true
	}
	n := 0
	for n < len(c.ranges) && c.ranges[n].released {
		c.committed = c.ranges[n].last
		n++
	}
	c.ranges = c.ranges[n:]
}

// Committable is the highest position P such that every tracked position up
// to P has been released (0 when none).
func (c *Checkpoint) Committable() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}

// Pending is how many tracked ranges are not yet committable.
func (c *Checkpoint) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ranges)
}
