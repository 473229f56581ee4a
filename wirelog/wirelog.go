package wirelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"mcptrace/schema"
)

// DefaultMaxBody is the number of bytes of each body (request, response) a
// record keeps when Options.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// Dropped replaces the value of a header named in Options.DropHeaders.
const Dropped = "[dropped]"

// Labels set on a record whose body was longer than the limit; the value is
// the body's size in bytes (a request body's as far as the handler read it).
const (
	LabelRequestBodyCut  = "wirelog.request_body_cut"
	LabelResponseBodyCut = "wirelog.response_body_cut"
)

// DefaultDropHeaders are the headers whose values are not written when
// Options.DropHeaders is nil.
var DefaultDropHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// Implementation names the server in every record (schema "server").
type Implementation = schema.Implementation

// Options configure Handler. The zero value (or nil) is usable.
type Options struct {
	// MaxBody is the most bytes kept of each body: 0 is DefaultMaxBody, a
	// negative value keeps every byte. A longer body is left out of the
	// record and labelled (LabelRequestBodyCut, LabelResponseBodyCut).
	MaxBody int
	// DropHeaders names the headers (request and response, any case) whose
	// values are replaced by Dropped. nil is DefaultDropHeaders; an empty
	// non-nil slice drops none.
	DropHeaders []string
	// Transport is the record's transport: "" is streamable-http; set
	// schema.TransportHTTPSSE for a 2024-11-05 HTTP+SSE server.
	Transport schema.Transport
	// Server, when set, names the server on every record.
	Server *Implementation
	// Connection gives the record's connection id (nil, or "": none). See
	// the package comment for what makes a good one.
	Connection func(*http.Request) string
	// Scenario and Labels are copied onto every record (labels of a record
	// whose body was cut get the cut label besides).
	Scenario string
	Labels   map[string]string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// OnError receives the errors of writing the log (nil: they are
	// dropped). The response is never affected.
	OnError func(error)
}

// Handler returns next wrapped so that every HTTP transaction it serves is
// written to w as one wire-log line when it ends. See the package comment.
func Handler(next http.Handler, w io.Writer, opts *Options) http.Handler {
	l := &logger{next: next, out: w}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.MaxBody == 0 {
		l.opts.MaxBody = DefaultMaxBody
	}
	drop := l.opts.DropHeaders
	if drop == nil {
		drop = DefaultDropHeaders
	}
	l.drop = make(map[string]bool, len(drop))
	for _, h := range drop {
		l.drop[http.CanonicalHeaderKey(h)] = true
	}
	if l.opts.Transport == "" {
		l.opts.Transport = schema.TransportStreamableHTTP
	}
	if l.opts.Now == nil {
		l.opts.Now = time.Now
	}
	return l
}

type logger struct {
	next http.Handler
	opts Options
	drop map[string]bool

	mu  sync.Mutex // one line at a time
	out io.Writer
}

func (l *logger) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	start := l.opts.Now()
	rec := &schema.WireRecord{
		Format:    schema.WireFormat,
		Side:      schema.SideServer,
		Transport: l.opts.Transport,
		Server:    l.opts.Server,
		Scenario:  l.opts.Scenario,
		HTTP: &schema.WireHTTP{Request: schema.WireRequest{
			Method:  r.Method,
			URL:     requestURL(r),
			Headers: l.headers(r.Header),
		}},
	}
	if l.opts.Connection != nil {
		rec.Connection = l.opts.Connection(r)
	}
	rec.SessionID = r.Header.Get("Mcp-Session-Id")
	rec.ProtocolVersion = validVersion(r.Header.Get("Mcp-Protocol-Version"))
	var labels map[string]string
	label := func(k, v string) {
		if labels == nil {
			labels = make(map[string]string, len(l.opts.Labels)+1)
			for k, v := range l.opts.Labels {
				labels[k] = v
			}
		}
		labels[k] = v
	}
	var rb *requestBody
	if r.Body != nil && r.Body != http.NoBody {
		rb = l.readRequestBody(r)
		if rb.whole {
			s := string(rb.head)
			rec.HTTP.Request.Body = &s
		}
	}

	cw := &captureWriter{rw: rw, max: l.opts.MaxBody}
	defer func() {
		p := recover()
		if rb != nil && rb.rest != nil {
			label(LabelRequestBodyCut, strconv.FormatInt(int64(len(rb.head))+rb.rest.n, 10))
		}
		l.finish(rec, cw, r, start, p != nil, label)
		if labels != nil {
			rec.Labels = labels
		} else if len(l.opts.Labels) > 0 {
			rec.Labels = l.opts.Labels
		}
		l.write(rec)
		if p != nil {
			panic(p)
		}
	}()
	l.next.ServeHTTP(cw, r)
}

// requestBody is what was read of a request's body before the handler ran.
type requestBody struct {
	head  []byte          // the bytes read (at most the limit plus one)
	whole bool            // head is the whole body
	rest  *countingReader // the body was longer than the limit: counts what the handler reads past head
}

// readRequestBody reads up to the limit of r's body and puts back a body that
// yields every byte, and the same error where the body broke.
func (l *logger) readRequestBody(r *http.Request) *requestBody {
	var buf bytes.Buffer
	var err error
	limit := int64(l.opts.MaxBody)
	if limit < 0 {
		_, err = buf.ReadFrom(r.Body)
	} else {
		_, err = buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	}
	head := buf.Bytes()
	rb := &requestBody{head: head}
	switch {
	case err != nil:
		// Not recorded: the handler meets the same error.
		r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(head), errReader{err}), Closer: r.Body}
	case limit < 0 || int64(len(head)) <= limit:
		rb.whole = true
		r.Body = readCloser{Reader: bytes.NewReader(head), Closer: r.Body}
	default:
		rb.rest = &countingReader{r: r.Body}
		r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(head), rb.rest), Closer: r.Body}
	}
	return rb
}

// finish fills the response (or the failure) of rec once the handler is done.
func (l *logger) finish(rec *schema.WireRecord, cw *captureWriter, r *http.Request, start time.Time, panicked bool, label func(k, v string)) {
	end := l.opts.Now()
	rec.Time = stamp(start)
	rec.EndTime = stamp(end)
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.wroteHeader {
		switch {
		case panicked:
			rec.HTTP.Failure = &schema.WireFailure{Kind: schema.FailureReset, Message: "the handler aborted before sending a status"}
			return
		case r.Context().Err() != nil:
			// The client went away and the handler gave up without a word:
			// nothing was sent (net/http's implicit 200 goes nowhere).
			rec.HTTP.Failure = &schema.WireFailure{Kind: schema.FailureClientAbort, Message: "the client went away before the handler wrote a response"}
			return
		}
		// net/http sends 200 with an empty body for a handler that wrote
		// nothing.
		cw.writeHeaderLocked(http.StatusOK)
	}
	resp := &schema.WireResponse{Status: cw.status, Headers: l.headers(cw.header), ContentType: cw.header.Get("Content-Type")}
	if rec.SessionID == "" {
		rec.SessionID = cw.header.Get("Mcp-Session-Id")
	}
	switch {
	case cw.cut:
		label(LabelResponseBodyCut, strconv.FormatInt(cw.size, 10))
	default:
		s := cw.body.String()
		resp.Body = &s
	}
	if isEventStream(resp.ContentType) {
		switch {
		case panicked || (cw.writeErr != nil && r.Context().Err() == nil):
			resp.StreamEnd = schema.StreamReset
		case r.Context().Err() != nil:
			resp.StreamEnd = schema.StreamClientClosed
		default:
			resp.StreamEnd = schema.StreamComplete
		}
	}
	rec.HTTP.Response = resp
}

func (l *logger) write(rec *schema.WireRecord) {
	line, err := json.Marshal(rec)
	if err != nil {
		l.fail(fmt.Errorf("wirelog: encoding the record of %s %s: %w", rec.HTTP.Request.Method, rec.HTTP.Request.URL, err))
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	_, err = l.out.Write(line)
	l.mu.Unlock()
	if err != nil {
		l.fail(fmt.Errorf("wirelog: writing the record of %s %s: %w", rec.HTTP.Request.Method, rec.HTTP.Request.URL, err))
	}
}

func (l *logger) fail(err error) {
	if l.opts.OnError != nil {
		l.opts.OnError(err)
	}
}

// headers converts h to the wire log's header object, dropping the values of
// the headers it was told to.
func (l *logger) headers(h http.Header) map[string]any {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]any, len(h))
	for name, vs := range h {
		if len(vs) == 0 {
			continue
		}
		if l.drop[http.CanonicalHeaderKey(name)] {
			out[name] = Dropped
			continue
		}
		if len(vs) == 1 {
			out[name] = vs[0]
		} else {
			out[name] = append([]string(nil), vs...)
		}
	}
	return out
}

// captureWriter passes everything through to rw and keeps the status, the
// headers as sent and up to max bytes of the body.
type captureWriter struct {
	rw  http.ResponseWriter
	max int

	mu          sync.Mutex
	wroteHeader bool
	status      int
	header      http.Header // a copy, taken when the status was sent
	body        bytes.Buffer
	size        int64
	cut         bool
	writeErr    error
}

func (c *captureWriter) Header() http.Header { return c.rw.Header() }

func (c *captureWriter) WriteHeader(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wroteHeader || status < 200 && status >= 100 {
		// A repeated WriteHeader is ignored by net/http; 1xx are interim.
		c.rw.WriteHeader(status)
		return
	}
	c.writeHeaderLocked(status)
	c.rw.WriteHeader(status)
}

func (c *captureWriter) writeHeaderLocked(status int) {
	c.wroteHeader = true
	c.status = status
	c.header = c.rw.Header().Clone()
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.wroteHeader {
		// net/http sniffs a Content-Type for a body written without one.
		if _, set := c.rw.Header()["Content-Type"]; !set {
			c.rw.Header().Set("Content-Type", http.DetectContentType(p))
		}
		c.writeHeaderLocked(http.StatusOK)
	}
	c.mu.Unlock()
	n, err := c.rw.Write(p)
	c.mu.Lock()
	c.keep(p[:n])
	if err != nil && c.writeErr == nil {
		c.writeErr = err
	}
	c.mu.Unlock()
	return n, err
}

func (c *captureWriter) keep(p []byte) {
	c.size += int64(len(p))
	if c.cut {
		return
	}
	if c.max >= 0 && c.body.Len()+len(p) > c.max {
		c.cut = true
		c.body = bytes.Buffer{}
		return
	}
	c.body.Write(p)
}

// Flush sends what was written to the client now (http.Flusher).
func (c *captureWriter) Flush() { _ = c.FlushError() }

// FlushError is Flush reporting the error (used by http.ResponseController).
func (c *captureWriter) FlushError() error {
	c.mu.Lock()
	if !c.wroteHeader {
		c.writeHeaderLocked(http.StatusOK)
	}
	c.mu.Unlock()
	err := http.NewResponseController(c.rw).Flush()
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		c.mu.Lock()
		if c.writeErr == nil {
			c.writeErr = err
		}
		c.mu.Unlock()
	}
	return err
}

// Unwrap gives http.ResponseController the underlying writer (deadlines,
// full-duplex).
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.rw }

type readCloser struct {
	io.Reader
	io.Closer
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// requestURL is the full URL the client asked for.
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	return scheme + "://" + host + r.URL.RequestURI()
}

// validVersion keeps a protocol version header that has the schema's
// YYYY-MM-DD shape (anything else stays in the headers only).
func validVersion(v string) string {
	v = strings.TrimSpace(v)
	if len(v) != 10 || !utf8.ValidString(v) {
		return ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if i == 4 || i == 7 {
			if c != '-' {
				return ""
			}
		} else if c < '0' || c > '9' {
			return ""
		}
	}
	return v
}

func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
	}
	return strings.EqualFold(mt, "text/event-stream")
}

// stamp is the schema's time format: UTC, milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
