package decode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// A HAR is one JSON document, often hundreds of megabytes, but its entries
// are small: the decoder streams it and holds one entry at a time, never the
// document. It reads the input in two passes:
//
//  1. A single-pass scanner (docScanner) validates the whole document as
//     gjson.ValidBytes would, counts its nesting as depthExceeds does, and
//     finds log.entries as gjson.Get(doc, "log.entries") does: the first
//     "entries" key (of any type) in the first "log" object that has one,
//     keys compared unescaped, in any order among "version", "creator",
//     "pages" and the rest; later "entries" and "log" keys are validated
//     and ignored. Each element of that array is isolated, surveyed for
//     the legacy HTTP+SSE transport (harDecoder.survey) and written to a
//     spool: memory while it is small (harSpoolMem), else an unlinked
//     temporary file. Nothing is emitted in this pass, because the
//     transport of every entry depends on evidence anywhere in the file,
//     and because a document that turns out broken at its end is one
//     quarantined record, as it always was.
//  2. The spooled entries are decoded one by one (harDecoder.entry, with
//     gjson over the entry's own bytes) and emitted in file order.
//
// What the document limit (MaxDocument, -max-document) bounds in a HAR:
//
//   - One entry. An entry larger than the limit is quarantined at its
//     position as ReasonDocumentTooLarge (its first KiB as the excerpt), its
//     bytes validated but not held, and decoding goes on with the next
//     entry.
//   - A document judged whole (not JSON, nested too deep, blank, not an
//     object, no log.entries array) is quarantined at line 1 as before,
//     with its first 64 KiB. The input after a syntax error is read, not
//     held, as far as the limit, to tell a broken document (not_json, or
//     too_deep when the naive depth count passes MaxDepth further on) from
//     one past the limit (document_too_large; the rest not read, ErrLimit),
//     so /dev/zero read as a HAR ends at the limit. Blank input counts whole
//     against the limit.
//   - The whole document may be at most harReadFactor times the limit
//     (16 GiB at the default): past that it is quarantined at line 1 as
//     document_too_large, nothing of it emitted, and the rest not read.
//
// Memory is the read buffer (256 KiB, grown to the largest entry), the
// document's first 64 KiB, and at most harSpoolMem of spooled entries;
// a document whose spool passes harSpoolMem uses as much temporary disk as
// its entries.
const (
	harReadFactor = 64
	harSpoolMem   = 1 << 20
)

// harHeadBytes is how much of the document's start is kept for the
// excerpt of a document quarantined whole: a byte order mark and 64 KiB.
const harHeadBytes = 3 + maxQuarantineRaw

// decodeHARFile decodes a HAR document entry by entry (see above), emitting
// one observation, quarantine or skip per entry, or one quarantined record
// at line 1 for a document that is not a usable HAR.
func decodeHARFile(source string, r io.Reader, e Emitter) error {
	limit := MaxDocument(e)
	stop := stopFunc(e)
	d := &harDecoder{source: source, e: e, legacy: map[string]bool{}, lim: LimitsOf(e)}
	h := &harScan{d: d, limit: limit, stop: stop, s: newDocScanner(r, stop, limit, harHeadBytes)}
	defer h.sp.close()
	doc := schema.Position{Source: source, Line: 1}
	s := h.s

	// Pass 1.
	bom := 0
	if b := s.ensure(3); len(b) == 3 && string(b) == "\xef\xbb\xbf" {
		s.pos, bom = 3, 3
	}
	// Leading white space is held (a blank document is quarantined whole,
	// as it reads) and, with the byte order mark, counts against the limit.
	s.mark, s.keepMax, s.cap = s.pos, limit+harHeadBytes, limit
	c := s.ws()
	leading := s.fail == scanCap || c < 0 && s.total > limit
	var rootType gjson.Type
	ok, object := false, false
	switch {
	case leading:
		// Blank so far, and past the limit.
		e.Quarantine(doc, ReasonDocumentTooLarge, documentTooLarge("the HAR document", limit), s.head[:min(len(s.head), excerptBytes)])
		return fmt.Errorf("%w: the HAR document is larger than %d bytes", ErrLimit, limit)
	case c < 0 && s.fail == scanOK:
		e.Quarantine(doc, ReasonNotJSON, "empty input: not a HAR document", s.buf[s.mark:s.end])
		return nil
	case s.fail == scanOK:
		s.mark, s.keepMax, s.cap = -1, limit, harReadFactor*limit
		if c == '{' {
			object = true
			ok = h.root()
		} else {
			rootType = jsonTypeOf(byte(c))
			ok = s.value()
		}
		if ok {
			if c := s.ws(); c >= 0 {
				ok = s.bad(c)
			} else {
				ok = s.fail == scanOK
			}
		}
	}
	raw := s.head[min(bom, len(s.head)):]
	switch s.fail {
	case scanStopped:
		return ErrStopped
	case scanRead:
		return s.rerr
	case scanSpool:
		return h.err
	case scanCap:
		e.Quarantine(doc, ReasonDocumentTooLarge, fmt.Sprintf("the HAR document exceeds %d bytes (%d times the document limit); nothing of it was decoded and the rest of the input was not read (raise -max-document)", s.cap, harReadFactor), s.head[:min(len(s.head), excerptBytes)])
		return fmt.Errorf("%w: the HAR document is larger than %d bytes", ErrLimit, s.cap)
	case scanSyntax, scanDeep:
		at := s.offset()
		deepAlready := s.fail == scanDeep
		ended, deep := s.drain(limit, !deepAlready)
		switch {
		case s.fail == scanStopped:
			return ErrStopped
		case s.fail == scanRead:
			return s.rerr
		case !ended:
			e.Quarantine(doc, ReasonDocumentTooLarge, fmt.Sprintf("the HAR document is broken at byte %d and goes on for more than %d bytes (the document limit) after it; the rest of the input was not read (raise -max-document)", at, limit), s.head[:min(len(s.head), excerptBytes)])
			return fmt.Errorf("%w: the HAR document goes on for more than %d bytes after byte %d, where it is not JSON", ErrLimit, limit, at)
		case deepAlready || deep:
			e.Quarantine(doc, ReasonTooDeep, depthDetail("JSON"), clipRaw(raw))
		default:
			e.Quarantine(doc, ReasonNotJSON, "not valid JSON (truncated or corrupt HAR document)", clipRaw(raw))
		}
		return nil
	}
	switch {
	case !object:
		e.Quarantine(doc, ReasonNotObject, fmt.Sprintf("a HAR document is a JSON object, found %s", rootType), clipRaw(raw))
		return nil
	case !h.isArray:
		e.Quarantine(doc, ReasonMissingField, `no "log.entries" array: not a HAR document`, clipRaw(raw))
		return nil
	}
	s.buf = nil // the scanner is done with its buffer

	// Pass 2.
	return h.emit()
}

// jsonTypeOf is gjson's type of a valid value that starts with c (not an
// object).
func jsonTypeOf(c byte) gjson.Type {
	switch c {
	case '"':
		return gjson.String
	case 't':
		return gjson.True
	case 'f':
		return gjson.False
	case 'n':
		return gjson.Null
	case '[':
		return gjson.JSON
	}
	return gjson.Number
}

// harScan is the first pass over a HAR document.
type harScan struct {
	s       *docScanner
	d       *harDecoder
	sp      harSpool
	limit   int64
	stop    func() bool
	found   bool  // the log.entries gjson would return was seen
	isArray bool  // and it is an array
	n       int64 // its elements so far
	err     error // the spool's failure (scanSpool)
	key     [8]byte
}

// root reads the document's object, looking for the "log" objects.
func (h *harScan) root() bool {
	return h.members(func(k []byte) bool {
		if !h.found && string(k) == "log" && h.s.ws() == '{' {
			return h.members(func(k []byte) bool {
				if !h.found && string(k) == "entries" {
					h.found = true
					if h.s.ws() == '[' {
						h.isArray = true
						return h.entries()
					}
				}
				return h.s.value()
			})
		}
		return h.s.value()
	})
}

// members reads an object (pos at its '{'), calling member for each value
// (pos before it) with its key, as far as 8 bytes of it, or nil.
func (h *harScan) members(member func(key []byte) bool) bool {
	s := h.s
	s.pos++
	if !s.push() {
		return false
	}
	c := s.ws()
	if c == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if c != '"' {
			return s.bad(c)
		}
		s.pos++
		k, ok := s.key(h.key[:])
		if !ok || !s.colon() || !member(k) {
			return false
		}
		switch c = s.ws(); c {
		case ',':
			s.pos++
			c = s.ws()
		case '}':
			s.pos++
			s.depth--
			return true
		default:
			return s.bad(c)
		}
	}
}

// entries reads the entries array (pos at its '['): each element is
// validated while its bytes are held, then surveyed and spooled.
func (h *harScan) entries() bool {
	s := h.s
	s.pos++
	if !s.push() {
		return false
	}
	if s.ws() == ']' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if h.stop() {
			s.fail = scanStopped
			return false
		}
		s.ws()
		start := s.offset()
		s.mark, s.over = s.pos, false
		if !s.value() {
			s.mark = -1
			return false
		}
		h.n++
		size := s.offset() - start
		if s.over || size > h.limit {
			head := s.overHead
			if !s.over {
				head = s.buf[s.mark : s.mark+min(int(size), excerptBytes)]
			}
			h.spool(harSpoolTooLarge, start, size, head)
		} else {
			el := s.buf[s.mark:s.pos]
			// The survey reads the element where it lies; it keeps
			// nothing of it (session ids are cloned).
			h.d.survey(gjson.Parse(unsafe.String(unsafe.SliceData(el), len(el))))
			h.spool(harSpoolEntry, start, size, el)
		}
		s.mark = -1
		if h.err != nil {
			s.fail = scanSpool
			return false
		}
		switch c := s.ws(); c {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return s.bad(c)
		}
	}
}

// Spool record kinds.
const (
	harSpoolEntry    = 'e' // uvarint length, the entry's bytes
	harSpoolTooLarge = 'L' // uvarint offset, uvarint size, uvarint length, the entry's first bytes
)

func (h *harScan) spool(kind byte, off, size int64, b []byte) {
	if h.err != nil {
		return
	}
	var hdr [1 + 3*binary.MaxVarintLen64]byte
	hdr[0] = kind
	n := 1
	if kind == harSpoolTooLarge {
		n += binary.PutUvarint(hdr[n:], uint64(off))
		n += binary.PutUvarint(hdr[n:], uint64(size))
	}
	n += binary.PutUvarint(hdr[n:], uint64(len(b)))
	if err := h.sp.write(hdr[:n], b); err != nil {
		h.err = fmt.Errorf("%s: the HAR decoder keeps the entries it read in a temporary file until the document is checked whole, and that failed: %w (set TMPDIR to a directory with room, or split the HAR)", h.d.source, err)
	}
}

// emit is the second pass: the spooled entries decoded and emitted in
// order. They are read in batches; while one batch is emitted the next is
// decoded, on as many goroutines as harWorkers says (the entries are
// independent once the survey is done), each entry's one record kept with
// it until its turn. Every goroutine is joined before emit returns.
func (h *harScan) emit() error {
	rd, err := h.sp.reader()
	if err != nil {
		return fmt.Errorf("%s: reading back the HAR entries from their temporary file: %w", h.d.source, err)
	}
	workers := harWorkers()
	next := int64(1)
	batch := func(dst []harItem) ([]harItem, error) {
		dst, size := dst[:0], 0
		for next <= h.n && len(dst) < harBatchEntries && size < harBatchBytes {
			it, err := h.readItem(rd, next)
			if err != nil {
				return dst, err
			}
			next++
			size += len(it.b)
			dst = append(dst, it)
		}
		return dst, nil
	}
	cur, rerr := batch(nil)
	h.decode(cur, workers)()
	var spare []harItem
	for len(cur) > 0 {
		var nxt []harItem
		var nerr error
		wait := func() {}
		if rerr == nil {
			nxt, nerr = batch(spare)
			wait = h.decode(nxt, workers)
		}
		for i := range cur {
			if h.stop() {
				wait()
				return ErrStopped
			}
			h.put(&cur[i])
			cur[i] = harItem{} // the emitter owns what it was given
		}
		wait()
		if rerr != nil {
			return h.readBackErr(rerr)
		}
		cur, rerr, spare = nxt, nerr, cur
	}
	if rerr != nil {
		return h.readBackErr(rerr)
	}
	return nil
}

// Second-pass batches: entries read and decoded ahead of the one emitted.
const (
	harBatchEntries = 256
	harBatchBytes   = 4 << 20
)

// harWorkers is how many goroutines decode a batch: the cores the process
// may use (ingest -workers), at most 4.
func harWorkers() int { return min(runtime.GOMAXPROCS(0), 4) }

// harItem is one spooled record, then what decoding it gave.
type harItem struct {
	pos       schema.Position
	kind      byte
	b         []byte // the entry, or the first bytes of one too large
	off, size uint64 // where the one too large was, and its size
	out       harOut
}

// harOut is the one record an entry gave.
type harOut struct {
	kind           byte // 'o', 'q', 's'
	obs            *schema.Observation
	pos            schema.Position
	reason, detail string
	raw            []byte
}

// harRecorder keeps the record an entry gives (harDecoder.entry gives one).
type harRecorder struct{ out *harOut }

func (r *harRecorder) Observation(o *schema.Observation) { *r.out = harOut{kind: 'o', obs: o} }
func (r *harRecorder) Quarantine(pos schema.Position, reason, detail string, raw []byte) {
	*r.out = harOut{kind: 'q', pos: pos, reason: reason, detail: detail, raw: raw}
}
func (r *harRecorder) Skip(pos schema.Position, why string) {
	*r.out = harOut{kind: 's', pos: pos, reason: why}
}

func (h *harScan) readItem(rd spoolReader, n int64) (harItem, error) {
	it := harItem{pos: schema.Position{Source: h.d.source, Line: n}}
	kind, err := rd.ReadByte()
	if err != nil {
		return it, err
	}
	it.kind = kind
	switch kind {
	case harSpoolEntry:
		it.b, err = h.sp.next(rd)
		return it, err
	case harSpoolTooLarge:
		var err1, err2, err3 error
		it.off, err1 = binary.ReadUvarint(rd)
		it.size, err2 = binary.ReadUvarint(rd)
		it.b, err3 = h.sp.next(rd)
		return it, errors.Join(err1, err2, err3)
	}
	return it, fmt.Errorf("record kind %q", kind)
}

// decode decodes the entries of items, on up to workers goroutines, and
// returns the wait for them.
func (h *harScan) decode(items []harItem, workers int) (wait func()) {
	one := func(d *harDecoder, rec *harRecorder, it *harItem) {
		if it.kind == harSpoolEntry {
			rec.out = &it.out
			d.entry(it.pos, gjson.Parse(unsafe.String(unsafe.SliceData(it.b), len(it.b))))
		}
	}
	if workers < 2 || len(items) < 2 {
		rec := &harRecorder{}
		d := *h.d
		d.e = rec
		for i := range items {
			one(&d, rec, &items[i])
		}
		return func() {}
	}
	var wg sync.WaitGroup
	var at atomic.Int64
	for range min(workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := &harRecorder{}
			d := *h.d // the survey's results are only read from now on
			d.e = rec
			for i := at.Add(1) - 1; i < int64(len(items)); i = at.Add(1) - 1 {
				one(&d, rec, &items[i])
			}
		}()
	}
	return wg.Wait
}

// put emits an item's record.
func (h *harScan) put(it *harItem) {
	e := h.d.e
	if it.kind == harSpoolTooLarge {
		e.Quarantine(it.pos, ReasonDocumentTooLarge, fmt.Sprintf("HAR entry %d (from byte %d) is %d bytes, more than the %d-byte document limit; it was skipped and the rest of the document decoded (raise -max-document)",
			it.pos.Line, it.off, it.size, h.limit), it.b)
		return
	}
	switch o := &it.out; o.kind {
	case 'o':
		e.Observation(o.obs)
	case 'q':
		e.Quarantine(o.pos, o.reason, o.detail, o.raw)
	case 's':
		e.Skip(o.pos, o.reason)
	}
}

func (h *harScan) readBackErr(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading back the HAR entries from their temporary file: %w", h.d.source, err)
}

// harSpool holds the records of the first pass for the second: in memory
// up to harSpoolMem, then in a temporary file (os.CreateTemp: TMPDIR, mode
// 0600), unlinked as soon as it is made where the system allows it, so
// nothing of it outlives the process even when it is killed. It holds the
// entries as the input has them, secrets included: it is a copy of the
// input, never output, and it is gone when the decoder returns.
type harSpool struct {
	mem     []byte
	f       *os.File
	w       *bufio.Writer
	removed bool
	rd      *bufio.Reader
	memRd   *memRecords
}

func (sp *harSpool) write(hdr, b []byte) error {
	if sp.f == nil && len(sp.mem)+len(hdr)+len(b) <= harSpoolMem {
		sp.mem = append(append(sp.mem, hdr...), b...)
		return nil
	}
	if sp.f == nil {
		f, err := os.CreateTemp("", "mcptrace-har-*.spool")
		if err != nil {
			return err
		}
		sp.f = f
		sp.removed = os.Remove(f.Name()) == nil
		sp.w = bufio.NewWriterSize(f, 256<<10)
		if _, err := sp.w.Write(sp.mem); err != nil {
			return err
		}
		sp.mem = nil
	}
	if _, err := sp.w.Write(hdr); err != nil {
		return err
	}
	_, err := sp.w.Write(b)
	return err
}

// spoolReader is what the second pass reads records from.
type spoolReader interface {
	io.ByteReader
	io.Reader
}

// reader returns the records from the start, once the writes are done.
func (sp *harSpool) reader() (spoolReader, error) {
	if sp.f == nil {
		sp.memRd = &memRecords{b: sp.mem}
		return sp.memRd, nil
	}
	if err := sp.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	sp.rd = bufio.NewReaderSize(sp.f, 256<<10)
	return sp.rd, nil
}

// next reads a length-prefixed byte string. From memory it is the spool's
// own bytes (never written again); from the file, a new allocation, since
// the observations decoded from an entry keep strings of it.
func (sp *harSpool) next(rd spoolReader) ([]byte, error) {
	n, err := binary.ReadUvarint(rd)
	if err != nil {
		return nil, err
	}
	if m, ok := rd.(*memRecords); ok {
		return m.take(n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(rd, b)
	return b, err
}

func (sp *harSpool) close() {
	if sp.f != nil {
		sp.f.Close()
		if !sp.removed {
			os.Remove(sp.f.Name())
		}
		sp.f = nil
	}
	sp.mem = nil
}

// memRecords reads the in-memory spool.
type memRecords struct {
	b   []byte
	off int
}

func (m *memRecords) ReadByte() (byte, error) {
	if m.off >= len(m.b) {
		return 0, io.EOF
	}
	m.off++
	return m.b[m.off-1], nil
}

func (m *memRecords) Read(p []byte) (int, error) {
	if m.off >= len(m.b) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.off:])
	m.off += n
	return n, nil
}

func (m *memRecords) take(n uint64) ([]byte, error) {
	if n > uint64(len(m.b)-m.off) {
		return nil, io.ErrUnexpectedEOF
	}
	b := m.b[m.off : m.off+int(n) : m.off+int(n)]
	m.off += int(n)
	return b, nil
}
