package pipeline

import (
	"context"
	"math"
	"sync"
)

// AckFunc acknowledges a unit: a nil error says every row and quarantine
// record the unit produced is in a durable, published file (or that it
// produced none); a non-nil error says they will not be, and the source may
// replay the unit. It is called exactly once per unit. (Benthos's shape.)
type AckFunc func(ctx context.Context, err error) error

// Unit is a run of records of one input that a Source hands to decoding: a
// chunk of whole lines of a line log, or a whole input for its format's
// decoder. First and Last are the positions (1-based record numbers, or
// offsets for a stream) of its first and last record; Last of a whole-input
// unit is known once it has been decoded.
type Unit struct {
	Input       *Input
	First, Last int64
	// Exactly one of the payloads is set.
	lines []lineItem // a chunk of a line log (wire)
	file  *fileJob   // a whole input for a FileDecoder
	note  *lineItem  // the whole input is one bad record (unknown format, corrupt)
	msgs  []message  // messages of one Kafka partition, each a record
	Ack   AckFunc    // never nil
	seq   int64      // the unit's place in the run (set by the pipeline)
	last  int64      // the last observation/quarantine seq it produced (set by the sequencer)
	acct  *unitAcct  // a Kafka unit's part of its partition's ledger (set by the sequencer)
}

// nopAck acknowledges nothing.
func nopAck(context.Context, error) error { return nil }

// ackQueue holds the units whose output is not yet durable, in run order,
// and acknowledges them once a flush has made everything below a bound
// durable. Units enter in the order the sequencer finished them, which is
// their run order, so release is a walk from the front.
type ackQueue struct {
	mu    sync.Mutex
	units []*Unit
}

func (q *ackQueue) push(u *Unit) {
	q.mu.Lock()
	q.units = append(q.units, u)
	q.mu.Unlock()
}

// releaseAll acknowledges every queued unit with err (nil: durable), in
// order: the end of a run.
func (q *ackQueue) releaseAll(ctx context.Context, err error) (int, error) {
	return q.releaseBy(ctx, func(*Input) int64 { return math.MaxInt64 }, nil, err)
}

// releaseBy acknowledges, in order, the units of the inputs of of (nil:
// every input) all of whose records have a seq below their input's bound
// (a commit's round, capped by the oldest record that open state of that
// input still holds) and every earlier unit of whose input has been; units
// of other inputs do not wait for it. err nil says durable. It returns how
// many were acknowledged.
func (q *ackQueue) releaseBy(ctx context.Context, boundOf func(*Input) int64, of func(*Input) bool, err error) (int, error) {
	q.mu.Lock()
	var done, keep []*Unit
	blocked := map[*Input]bool{}
	for _, u := range q.units {
		switch {
		case of != nil && !of(u.Input):
			keep = append(keep, u)
		case blocked[u.Input] || u.last >= boundOf(u.Input):
			blocked[u.Input] = true
			keep = append(keep, u)
		default:
			done = append(done, u)
		}
	}
	q.units = keep
	q.mu.Unlock()
	var first error
	for _, u := range done {
		if aerr := u.Ack(ctx, err); aerr != nil && first == nil {
			first = aerr
		}
	}
	return len(done), first
}

// durableUpTo is the last position of in's queued units whose records all
// have a seq below bound (and so have those of every earlier unit of in):
// how far a commit at bound covers the input.
func (q *ackQueue) durableUpTo(in *Input, bound int64) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	pos := in.Ckpt.Committable()
	for _, u := range q.units {
		if u.Input != in {
			continue
		}
		if u.last >= bound {
			break
		}
		pos = max(pos, u.Last)
	}
	return pos
}
