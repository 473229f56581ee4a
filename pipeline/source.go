package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mcptrace/schema"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/decode"
	"mcptrace/input"
)

// Source yields the run's input as units, in order. Next returns io.EOF
// once every input has been handed out (a batch source); a stream source
// never does. Close releases what the source holds; it is called once,
// after the last Next, on every path. The Kafka source of issue 9 is a
// second implementation.
type Source interface {
	Next(ctx context.Context) (*Unit, error)
	Close() error
}

// Input is one input of a run: a file, standard input or a pipe (later a
// Kafka topic partition). Its Checkpoint follows how far its units are
// durable.
type Input struct {
	Src    input.Input // what was named, and how to open it
	Name   string      // as given or as walked: shown in messages, kept in the source column
	ID     string      // canonical identity (input.Reader.ID): the dataset's key for what a rerun replaces
	Stream bool        // standard input or a pipe: no end known in advance
	Format string      // detected or forced format, "" until opened
	Ckpt   Checkpoint
	// Ledger, filled as the run goes.
	Records  atomic.Int64 // records read
	commitAt atomic.Int64 // the position a commit records: how far its rows are in the commit
	Opened   atomic.Bool
	Finished atomic.Bool         // read to its end
	acct     schema.LedgerCounts // where its records went (ledger.go), kept by the sequencer
}

// fileSource reads files, directories, glob patterns and standard input,
// one input after another, opening each once: the format is detected from
// the head of the same reader that is then decoded.
type fileSource struct {
	cfg    *Config
	inputs []*Input
	next   int // next input to open
	stats  *progressCounters

	// The input being cut into chunks of lines.
	cur   *Input
	lines *lineFeed

	// Streams are read side by side, after the files, each by a goroutine
	// of its own that cuts its units and hands them over streamUnits in
	// the order they are cut.
	streams     []*Input
	streamUnits chan *Unit
	// interleave: every input is a wire file, read side by side in
	// event-time order (a merge of client and server logs).
	interleave bool
	feeds      []*feedHead
	pending    []*Unit // units of inputs that have no feed
	opened     bool
	streamErr  chan error
	streamDone chan struct{} // closed by Close: stream goroutines give up
	swg        sync.WaitGroup
}

type progressCounters struct {
	records atomic.Int64
	bytes   atomic.Int64
	mu      sync.Mutex
	readers []func() int64 // every input opened: how far each is read, in its own (raw) bytes
}

// opened adds r to the inputs whose raw bytes read make the progress share
// (its count only: a closed reader's buffers are not kept).
func (c *progressCounters) opened(r *input.Reader) {
	c.mu.Lock()
	c.readers = append(c.readers, r.RawBytesFunc())
	c.mu.Unlock()
}

// rawRead is how many bytes of the inputs' files (compressed as they are)
// have been read.
func (c *progressCounters) rawRead() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, read := range c.readers {
		n += read()
	}
	return n
}

func newFileSource(cfg *Config, inputs []*Input, stats *progressCounters) *fileSource {
	return &fileSource{cfg: cfg, inputs: inputs, stats: stats}
}

// A line log is cut into units of at most chunkLines lines or chunkBytes
// bytes. A unit is what moves between stages: its lines wait in the
// source's queue and are decoded at once, and its observations go to the
// shards as one part, so every unit in flight is held twice over (lines,
// then observations with their bodies). Units of 1 MiB (about 340 lines of
// genlog's wire log) instead of 4 MiB cut the peak live heap of a 1 GiB
// run from about 185 to 125 MB for the same CPU (issue 11). The rounds
// (one per unit) move with it: the same rows, in another order.
const (
	chunkLines = 2048
	chunkBytes = 1 << 20
)

// Next returns the next unit: the next chunk of the line log being read, or
// the first unit of the next file; once the files are done, the next unit
// any stream has cut. After a soft stop it hands out what the streams still
// cut (they stop at once) and then io.EOF.
func (s *fileSource) Next(ctx context.Context) (*Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.interleave {
		return s.nextInterleaved(ctx)
	}
	if s.lines != nil {
		u, done, err := s.chunk(ctx)
		if done {
			s.endLines()
		}
		if err != nil || u != nil {
			return u, err
		}
	}
	for s.next < len(s.inputs) && !stopped(s.cfg.Stop) {
		in := s.inputs[s.next]
		s.next++
		if in.Stream {
			s.streams = append(s.streams, in)
			continue
		}
		u, err := s.open(ctx, in)
		if err != nil {
			return nil, err
		}
		if u != nil {
			return u, nil
		}
	}
	if s.streamUnits == nil && len(s.streams) > 0 && !stopped(s.cfg.Stop) {
		s.startStreams(ctx)
	}
	if s.streamUnits == nil {
		return nil, io.EOF
	}
	select {
	case err := <-s.streamErr:
		return nil, err // a stream that cannot be opened ends the run at once
	case u, ok := <-s.streamUnits:
		if !ok {
			select {
			case err := <-s.streamErr:
				return nil, err
			default:
				return nil, io.EOF
			}
		}
		return u, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startStreams opens every stream and reads them side by side.
func (s *fileSource) startStreams(ctx context.Context) {
	s.streamUnits = make(chan *Unit, len(s.streams))
	s.streamErr = make(chan error, len(s.streams))
	s.streamDone = make(chan struct{})
	for _, in := range s.streams {
		s.swg.Add(1)
		go func() {
			defer s.swg.Done()
			if err := s.readStream(ctx, in); err != nil {
				s.streamErr <- err
			}
		}()
	}
	go func() { s.swg.Wait(); close(s.streamUnits) }()
}

// readStream opens one stream and cuts it into units until it ends, a
// soft stop, or the run ends.
func (s *fileSource) readStream(ctx context.Context, in *Input) error {
	send := func(u *Unit) bool {
		select {
		case s.streamUnits <- u:
			return true
		case <-ctx.Done():
		case <-s.streamDone:
		}
		u.discard()
		return false
	}
	u, feed, err := s.openInput(ctx, in)
	if err != nil {
		return err
	}
	if u != nil && !send(u) {
		if feed != nil {
			feed.close()
		}
		return nil
	}
	if feed == nil {
		return nil
	}
	defer func() {
		if feed.close() {
			in.Finished.Store(true)
		}
	}()
	for {
		u, done, err := s.cutChunk(ctx, in, feed)
		if err != nil {
			return nil // the run is over
		}
		if u != nil && !send(u) {
			return nil
		}
		if done {
			return nil
		}
	}
}

func (s *fileSource) Close() error {
	s.endLines()
	for _, f := range s.feeds {
		if f.next != nil {
			releaseLines([]lineItem{*f.next})
			f.next = nil
		}
		if !f.done {
			f.done = true
			f.feed.close()
		}
	}
	if s.streamDone != nil {
		close(s.streamDone)
		for range s.streamUnits {
		}
		s.swg.Wait()
	}
	return nil
}

func (s *fileSource) endLines() {
	if s.lines != nil {
		if s.lines.close() {
			s.cur.Finished.Store(true)
		}
	}
	s.lines, s.cur = nil, nil
}

// open starts an input: it is opened once, its head is peeked from the
// same reader that is then decoded (nothing of a pipe is lost to format
// detection). Only an input that cannot be opened at all is an error;
// anything else is quarantined.
func (s *fileSource) open(ctx context.Context, in *Input) (*Unit, error) {
	u, feed, err := s.openInput(ctx, in)
	if err != nil || feed == nil {
		return u, err
	}
	s.cur, s.lines = in, feed
	u, done, err := s.chunk(ctx)
	if done {
		s.endLines()
	}
	return u, err
}

// openInput opens an input and returns its first unit, or, for a line
// log, the feed its chunks are cut from.
func (s *fileSource) openInput(ctx context.Context, in *Input) (*Unit, *lineFeed, error) {
	// A stream's head is what arrived until it paused for a flush interval,
	// so a quiet, low-volume stream is not stuck waiting for 64 KiB; a stop
	// ends the wait for its first bytes.
	r, err := input.OpenWith(in.Src, input.OpenOptions{HeadWait: s.cfg.FlushInterval,
		Stop: func() bool { return stopped(s.cfg.Stop) || ctx.Err() != nil }})
	if err == nil {
		s.stats.opened(r)
	}
	if err != nil {
		in.Opened.Store(true)
		return nil, nil, err
	}
	// The identity is set before the input is marked opened: the sink,
	// on another goroutine, reads in.ID only of inputs it sees opened, so
	// the atomic store orders the two.
	in.ID = r.ID()
	in.Opened.Store(true)
	head, herr := r.Head()
	if errors.Is(herr, input.ErrStopped) {
		r.Close()
		in.Opened.Store(false) // nothing was read: it keeps what an earlier run wrote
		return nil, nil, nil
	}
	var ce *input.CorruptError
	if errors.As(herr, &ce) && len(head) == 0 {
		r.Close()
		in.Format = "corrupt"
		in.Finished.Store(true)
		return s.noteUnit(in, lineItem{reason: decode.ReasonReadError, lineNo: 1, size: r.RawBytes(),
			detail: ce.Error() + "; nothing of it could be read"}), nil, nil
	}
	format := decode.Format(s.cfg.Format)
	if len(head) == 0 {
		r.Close()
		in.Format = "empty"
		in.Finished.Store(true)
		return &Unit{Input: in, Ack: nopAck}, nil, nil
	}
	if format == "" {
		f, ok := decode.Detect(head)
		if !ok {
			r.Close()
			in.Format = "unknown"
			in.Finished.Store(true)
			h := append([]byte(nil), head[:min(len(head), 512)]...)
			return s.noteUnit(in, lineItem{reason: ReasonUnknownFormat, lineNo: 1, head: h, size: int64(len(head)),
				detail: fmt.Sprintf("matches none of the formats %v; name one with -format if it is one of them", decode.Formats())}), nil, nil
		}
		format = f
	}
	in.Format = string(format)
	if format == decode.FormatWire {
		return nil, startLineFeed(r, r.Close, decode.LineOptions{MaxLine: s.cfg.MaxLineBytes, MaxDocument: s.cfg.MaxDocumentBytes}, in.Stream), nil
	}
	dec, _ := decode.DecoderFor(format)
	return &Unit{Input: in, First: 1, Ack: nopAck,
		file: &fileJob{maxLine: s.cfg.MaxLineBytes, maxDoc: s.cfg.MaxDocumentBytes, in: in, format: format, dec: dec, r: &countingReader{r: r, stats: s.stats}, close: r.Close}}, nil, nil
}

func (s *fileSource) noteUnit(in *Input, it lineItem) *Unit {
	s.stats.records.Add(1)
	in.Records.Add(1)
	return &Unit{Input: in, First: 1, Last: 1, note: &it, Ack: nopAck}
}

// ReasonUnknownFormat is the quarantine reason of a file that matches no
// format.
const ReasonUnknownFormat = "unknown_format"

type countingReader struct {
	r     io.Reader
	n     int64
	stats *progressCounters
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.stats.bytes.Add(int64(n))
	return n, err
}

// chunk cuts the next run of whole lines of the current line log: up to
// chunkLines lines or chunkBytes bytes, or, for a stream, what arrived
// within the flush interval. done reports that the log has ended (the unit,
// if any, is its last).
func (s *fileSource) chunk(ctx context.Context) (u *Unit, done bool, err error) {
	return s.cutChunk(ctx, s.cur, s.lines)
}

// cutChunk cuts the next chunk of in from its feed.
func (s *fileSource) cutChunk(ctx context.Context, in *Input, feed *lineFeed) (u *Unit, done bool, err error) {
	items := newItems()
	size := 0
	var timeout <-chan time.Time
loop:
	for len(items) < chunkLines && size < chunkBytes {
		select {
		case it, ok := <-feed.items:
			if !ok {
				done = true
				break loop
			}
			if len(items) == 0 && in.Stream {
				t := time.NewTimer(s.cfg.FlushInterval)
				defer t.Stop()
				timeout = t.C
			}
			s.stats.bytes.Add(it.size)
			items = append(items, it)
			size += len(it.line)
		case <-timeout:
			break loop // a stream's flush interval: cut what arrived
		case <-s.cfg.Stop:
			done = true
			break loop
		case <-ctx.Done():
			releaseLines(items)
			return nil, true, ctx.Err()
		}
	}
	s.stats.records.Add(int64(len(items)))
	in.Records.Add(int64(len(items)))
	if len(items) == 0 {
		if in.Records.Load() == 0 && done {
			return &Unit{Input: in, Ack: nopAck}, done, nil // an input with no records still reports its format
		}
		return nil, done, nil
	}
	return &Unit{Input: in, First: items[0].lineNo, Last: items[len(items)-1].lineNo, lines: items, Ack: nopAck}, done, nil
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// lineFeed reads a line log in a goroutine of its own (decode.ReadLines, the
// one line loop) and hands its lines over a channel: whole chunks' worth
// for a file, one line at a time for a stream, so that the source can cut a
// chunk on time and stop while a read blocks.
type lineFeed struct {
	items  chan lineItem
	done   chan struct{}
	wg     sync.WaitGroup
	closer func() error
	end    atomic.Bool // the input was read to its end (or to a read error)
}

func startLineFeed(r io.Reader, closeFn func() error, opt decode.LineOptions, stream bool) *lineFeed {
	f := &lineFeed{items: make(chan lineItem, 256), done: make(chan struct{}), closer: closeFn}
	opt.Stop = func() bool { return stopped(f.done) }
	opt.Keep = true // long lines are freed once decoded (releaseLines)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(f.items)
		send := func(it lineItem) bool {
			select {
			case f.items <- it:
				return true
			case <-f.done:
				return false
			}
		}
		var last int64
		var slabs slabber
		defer slabs.seal()
		err := decode.ReadLines(r, opt, func(l decode.Line) error {
			last = l.No
			it := lineItem{lineNo: l.No, size: l.Size}
			switch {
			case l.TooLong:
				it.reason, it.detail = l.Reason(), l.Detail
				it.head = append([]byte(nil), l.Head...)
			case l.Owned:
				it.line, it.release = l.Text, l.Release // a long line: ReadLines made it a slice of its own, no copy
			default:
				it.line, it.slab = slabs.copyLine(l.Text)
			}
			if !send(it) {
				releaseLines([]lineItem{it})
				return decode.ErrStopped
			}
			return nil
		})
		switch {
		case err == nil, errors.Is(err, decode.ErrLimit):
			f.end.Store(true)
		case errors.Is(err, decode.ErrStopped) || stopped(f.done):
		default:
			// A read error (a corrupt compressed stream, say) ends this
			// input; it is quarantined where it happened.
			f.end.Store(true)
			send(lineItem{reason: decode.ReasonReadError, lineNo: last + 1,
				detail: fmt.Sprintf("reading stopped: %v; the rest of the input was not read", err)})
		}
	}()
	return f
}

// close stops the reader (closing the input interrupts a blocked read of a
// pipe), joins its goroutine, and reports whether the input was read to its
// end.
func (f *lineFeed) close() bool {
	close(f.done)
	f.closer()
	for it := range f.items {
		releaseLines([]lineItem{it})
	}
	f.wg.Wait()
	return f.end.Load()
}

// maxInterleaved bounds the inputs read side by side (one open file and
// one goroutine each); a run with more reads them one after another.
const maxInterleaved = 64

// feedHead is one input read side by side with others: its feed and the
// next line, with the event time it carries.
type feedHead struct {
	in   *Input
	feed *lineFeed
	next *lineItem
	ts   time.Time // of next, or of the last line that had one
	done bool
	idx  int
}

// nextInterleaved cuts the next unit of the inputs read side by side: the
// run of lines of the input whose next line is oldest (ties: the input
// named first), up to where another input's next line is older, or a
// chunk is full. The order depends only on the logs, never on timing.
func (s *fileSource) nextInterleaved(ctx context.Context) (*Unit, error) {
	if !s.opened {
		s.opened = true
		for i, in := range s.inputs {
			u, feed, err := s.openInput(ctx, in)
			if err != nil {
				return nil, err
			}
			if u != nil {
				s.pending = append(s.pending, u) // a bad or empty input: one unit of its own
			}
			if feed != nil {
				s.feeds = append(s.feeds, &feedHead{in: in, feed: feed, idx: i})
			}
		}
	}
	if len(s.pending) > 0 {
		u := s.pending[0]
		s.pending = s.pending[1:]
		return u, nil
	}
	if stopped(s.cfg.Stop) {
		return nil, io.EOF
	}
	var best *feedHead
	for _, f := range s.feeds {
		if f.next == nil && !f.done {
			if u := s.peekFeed(ctx, f); u != nil {
				return u, nil
			}
		}
		if f.next != nil && (best == nil || f.ts.Before(best.ts) || f.ts.Equal(best.ts) && f.idx < best.idx) {
			best = f
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if best == nil {
		return nil, io.EOF
	}
	before := func(f, g *feedHead) bool { return f.ts.Before(g.ts) || f.ts.Equal(g.ts) && f.idx < g.idx }
	items := newItems()
	size := 0
	for len(items) < chunkLines && size < chunkBytes && best.next != nil {
		it := *best.next
		best.next = nil
		items = append(items, it)
		size += len(it.line)
		s.stats.bytes.Add(it.size)
		best.in.Records.Add(1) // before the peek: an input with records needs no unit of its own at its end
		s.peekFeed(ctx, best)
		if best.next == nil {
			break
		}
		stop := false
		for _, g := range s.feeds {
			if g != best && g.next != nil && before(g, best) {
				stop = true
			}
		}
		if stop {
			break
		}
	}
	s.stats.records.Add(int64(len(items)))
	return &Unit{Input: best.in, First: items[0].lineNo, Last: items[len(items)-1].lineNo, lines: items, Ack: nopAck}, nil
}

// peekFeed reads an input's next line and its event time. At the end of
// an input with no records it returns the unit that reports its format.
func (s *fileSource) peekFeed(ctx context.Context, f *feedHead) *Unit {
	var it lineItem
	var ok bool
	select {
	case it, ok = <-f.feed.items:
	case <-ctx.Done():
		return nil
	case <-s.cfg.Stop:
		return nil
	}
	if !ok {
		f.done = true
		if f.feed.close() {
			f.in.Finished.Store(true)
		}
		if f.in.Records.Load() == 0 {
			return &Unit{Input: f.in, Ack: nopAck}
		}
		return nil
	}
	f.next = &it
	if it.line != nil {
		if t, err := time.Parse(time.RFC3339Nano, gjson.GetBytes(it.line, "ts").String()); err == nil {
			f.ts = t
		}
	}
	return nil
}
