package pipeline

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"mcptrace/kafkasrc"
)

// kafkaSource is the Source of one consumer-group generation: the owned
// partitions' messages, cut into units per partition. A unit's positions
// are offset+1 (positions start at 1), so an input's Checkpoint.Committable
// is the offset to commit: the next one to read.
type kafkaSource struct {
	cfg   *Config
	gen   *kafkasrc.Generation
	parts map[kafkasrc.TopicPartition]*kafkaPart
	stats *progressCounters
	// untilCaughtUp ends the source once every partition has been read to
	// the end offset seen when it was first assigned.
	untilCaughtUp bool
	caughtUp      atomic.Bool // the source ended caught up: open state is finished
	ready         []*Unit
	revoked       <-chan struct{}
	ended         bool
	onMessage     func(p *kafkaPart, m *kafkasrc.Message)
	onDrop        func(p *kafkaPart)
}

// kafkaPart is one owned partition.
type kafkaPart struct {
	in   *Input
	tp   kafkasrc.TopicPartition
	end  int64        // end offset to reach with -kafka-until-caught-up
	next int64        // next offset expected
	read atomic.Int64 // next, for other goroutines
	hw   atomic.Int64 // the partition's high watermark when last read
	buf  []message
	size int
}

func (p *kafkaPart) done() bool { return p.next >= p.end }

// kafkaChunk bounds the messages of a unit: a unit is acknowledged
// whole, so an open conversation that starts inside it holds back the
// commit of the whole unit; smaller units commit closer to it.
const kafkaChunk = 256

// kafkaChunkWait is how long the source waits for more messages before it
// cuts what it holds: short, so a quiet partition's records move on.
const kafkaChunkWait = 20 * time.Millisecond

func (s *kafkaSource) Next(ctx context.Context) (*Unit, error) {
	for {
		if len(s.ready) > 0 {
			u := s.ready[0]
			s.ready = s.ready[1:]
			return u, nil
		}
		if s.ended {
			return nil, io.EOF
		}
		if s.untilCaughtUp && s.allDone() {
			s.caughtUp.Store(true)
			s.ended = true
			continue
		}
		// Wait for a message, then take what follows at once, up to a chunk.
		var timeout <-chan time.Time
		var timer *time.Timer
		n := 0
	gather:
		for n < kafkaChunk {
			select {
			case m := <-s.gen.Messages():
				s.add(&m)
				n++
				if n == 1 {
					timer = time.NewTimer(kafkaChunkWait)
					timeout = timer.C
				}
				if s.untilCaughtUp && s.allDone() {
					break gather
				}
			case <-timeout:
				break gather
			case <-s.revoked:
				s.ended = true
				break gather
			case <-s.cfg.Stop:
				s.ended = true
				break gather
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if timer != nil {
			timer.Stop()
		}
		s.cut()
	}
}

// add buffers a message of an owned partition. Past the end offset of a
// run until caught up, messages are left for the next run (not read, not
// committed).
func (s *kafkaSource) add(m *kafkasrc.Message) {
	p := s.parts[m.TopicPartition]
	if p == nil || m.Offset < p.next {
		if p != nil && s.onDrop != nil {
			s.onDrop(p)
		}
		return // not owned, or redelivered below the position (kafka-go #1398)
	}
	if s.untilCaughtUp && m.Offset >= p.end {
		return
	}
	if s.onMessage != nil {
		s.onMessage(p, m)
	}
	p.next = m.Offset + 1
	p.read.Store(p.next)
	p.hw.Store(m.HighWater)
	p.buf = append(p.buf, message{offset: m.Offset, value: m.Value, control: m.Control})
	p.size += len(m.Value)
	s.stats.records.Add(1)
	s.stats.bytes.Add(int64(len(m.Value)))
	p.in.Records.Add(1)
}

// cut turns every partition's buffered messages into a unit.
func (s *kafkaSource) cut() {
	for _, p := range s.sorted() {
		if len(p.buf) == 0 {
			continue
		}
		s.ready = append(s.ready, &Unit{Input: p.in, First: p.buf[0].offset + 1, Last: p.buf[len(p.buf)-1].offset + 1, msgs: p.buf, Ack: nopAck})
		p.buf, p.size = nil, 0
	}
}

func (s *kafkaSource) allDone() bool {
	for _, p := range s.parts {
		if !p.done() {
			return false
		}
	}
	return true
}

func (s *kafkaSource) sorted() []*kafkaPart {
	out := make([]*kafkaPart, 0, len(s.parts))
	for _, p := range s.parts {
		out = append(out, p)
	}
	sortParts(out)
	return out
}

func (s *kafkaSource) Close() error { return nil }
