package decode

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// repeatLines is an endless reader of one short line, like `yes`.
type repeatLines struct {
	head []byte
	line string
}

func (r *repeatLines) Read(p []byte) (int, error) {
	n := 0
	if len(r.head) > 0 {
		n = copy(p, r.head)
		r.head = r.head[n:]
	}
	for n < len(p) {
		n += copy(p[n:], r.line)
	}
	return n, nil
}

// An OTLP JSON document (pretty-printed, so read in document mode)
// with one line over the line limit stops growing its buffer (docCut), and
// from then on the document limit is never checked again: an endless input
// is read forever although the document is far past -max-document. The
// decoder must end with ErrLimit (document_too_large) once the document
// has run past the limit, however its lines were cut.
func TestOTLPDocumentLimitAfterLongLine(t *testing.T) {
	const maxDoc = 64 << 10
	head := "{\n" + strings.Repeat("a", 300) + "\n"
	src := &countReader{r: &repeatLines{head: []byte(head), line: "\"a\",\n"}}
	// Bound the test: stop reading after 64x the limit; a decoder that
	// honours the limit stops long before.
	bounded := &countReader{r: io.LimitReader(src, 64*maxDoc)}
	dec, _ := DecoderFor(FormatOTLPTraces)
	c := &limited{maxLine: 100, maxDoc: maxDoc, stopAt: -1}
	err := dec("endless.json", bounded, c)
	if !errors.Is(err, ErrLimit) {
		t.Errorf("decoder returned %v after reading %d bytes (limit %d): want ErrLimit once the document passes the limit", err, bounded.n, maxDoc)
	}
	if bounded.n > 4*maxDoc {
		t.Errorf("read %d bytes of a document limited to %d", bounded.n, maxDoc)
	}
	var tooLarge bool
	for _, q := range c.quar {
		if q.reason == ReasonDocumentTooLarge {
			tooLarge = true
		}
	}
	if !tooLarge {
		t.Errorf("no document_too_large quarantine; got %+v", c.quar)
	}
}
