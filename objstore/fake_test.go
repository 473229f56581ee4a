package objstore

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// fakeS3 is gofakes3 (in memory) served over real HTTP, behind a handler
// that logs every request and can break some of them (rule). raw is a
// minio-go client that talks to gofakes3 directly, past the faults, to
// look at what the store holds.
type fakeS3 struct {
	t      testing.TB
	srv    *httptest.Server // faults in front of gofakes3
	direct *httptest.Server // gofakes3 alone
	s3     http.Handler
	raw    *minio.Client
	stop   chan struct{} // closed at cleanup: releases stalled handlers

	mu   sync.Mutex
	rule func(r *http.Request) fault
	log  []request
}

type request struct {
	Method, Path, Query, Auth string
}

// fault is what the front handler does with a request.
type fault struct {
	kind    faultKind
	after   int64         // bytes of the body read first
	started chan struct{} // stall: closed once the stall begins
	once    *sync.Once
}

type faultKind int

const (
	pass    faultKind = iota
	cut               // gofakes3 gets the first `after` bytes, then the connection breaks
	fail500           // read `after` bytes, answer 500 InternalError
	fail503           // answer 503 SlowDown
	deny403           // answer 403 AccessDenied
	stall             // read `after` bytes, then wait (reading the rest) until the client goes away
)

func newFake(t *testing.T, buckets ...string) *fakeS3 { return newFakeTB(t, buckets...) }

func newFakeTB(t testing.TB, buckets ...string) *fakeS3 {
	t.Helper()
	be := s3mem.New()
	for _, b := range buckets {
		if err := be.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeS3{t: t, s3: gofakes3.New(be).Server(), stop: make(chan struct{})}
	f.srv = httptest.NewServer(f)
	f.direct = httptest.NewServer(f.s3)
	t.Cleanup(func() {
		close(f.stop)
		f.srv.CloseClientConnections()
		f.srv.Close()
		f.direct.Close()
	})
	raw, err := minio.New(strings.TrimPrefix(f.direct.URL, "http://"), &minio.Options{
		Creds:        credentials.NewStaticV4("raw", "rawsecret", ""),
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.raw = raw
	return f
}

func (f *fakeS3) setRule(rule func(r *http.Request) fault) {
	f.mu.Lock()
	f.rule = rule
	f.mu.Unlock()
}

func (f *fakeS3) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.log...)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.log = append(f.log, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")})
	rule := f.rule
	f.mu.Unlock()
	act := fault{kind: pass}
	if rule != nil {
		act = rule(r)
	}
	switch act.kind {
	case pass:
		f.s3.ServeHTTP(w, r)
	case cut:
		r.Body = io.NopCloser(&cutReader{r: r.Body, left: act.after})
		f.s3.ServeHTTP(discard{}, r) // gofakes3 sees a body that ends too early
		breakConn(f.t, w)
	case fail500:
		io.CopyN(io.Discard, r.Body, act.after)
		writeS3Error(w, http.StatusInternalServerError, "InternalError", "injected failure")
	case fail503:
		writeS3Error(w, http.StatusServiceUnavailable, "SlowDown", "injected slow down")
	case deny403:
		writeS3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied.")
	case stall:
		io.CopyN(io.Discard, r.Body, act.after)
		act.once.Do(func() { close(act.started) })
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return // the client went away mid-body
		}
		select {
		case <-r.Context().Done(): // the client closed the connection
		case <-f.stop:
		}
	}
}

func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>`+msg+`</Message><RequestId>1</RequestId></Error>`)
}

func breakConn(t testing.TB, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("response writer cannot be hijacked")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

type cutReader struct {
	r    io.Reader
	left int64
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// config is a Config for the front server: static keys, 5 MiB parts,
// two tries a request (the tests of failures stay short).
func (f *fakeS3) config() Config {
	return Config{
		Endpoint:   f.srv.URL, // "http://127.0.0.1:PORT": the scheme sets Insecure
		Region:     "us-east-1",
		AccessKey:  "AKIATEST",
		SecretKey:  "testsecret",
		PathStyle:  true,
		PartSize:   minPartSize,
		MaxRetries: 2,
	}
}

func (f *fakeS3) open(url string) *Store {
	f.t.Helper()
	s, err := Open(context.Background(), url, f.config())
	if err != nil {
		f.t.Fatalf("Open(%s): %v", url, err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

// incomplete lists the multipart uploads in progress under prefix.
func (f *fakeS3) incomplete(bucket, prefix string) []string {
	f.t.Helper()
	var out []string
	for u := range f.raw.ListIncompleteUploads(context.Background(), bucket, prefix, true) {
		if minio.ToErrorResponse(u.Err).Code == "NoSuchUpload" {
			// gofakes3's answer for a bucket that never had a multipart
			// upload (TestIncompleteUploadsAreSeen checks one that had).
			continue
		}
		if u.Err != nil {
			f.t.Fatalf("listing incomplete uploads: %v", u.Err)
		}
		out = append(out, u.Key+" "+u.UploadID)
	}
	return out
}

// objects lists every key of the bucket, past the store's prefix.
func (f *fakeS3) objects(bucket string) []string {
	f.t.Helper()
	var out []string
	for o := range f.raw.ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			f.t.Fatalf("listing: %v", o.Err)
		}
		out = append(out, o.Key)
	}
	return out
}

func randomFile(t testing.TB, dir, name string, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	rand.Read(data)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// isPart says whether r uploads part n of a multipart upload ("": any part).
func isPart(r *http.Request, n string) bool {
	q := r.URL.Query()
	return r.Method == http.MethodPut && q.Get("uploadId") != "" && (n == "" || q.Get("partNumber") == n)
}

// isSinglePut says whether r is a whole-object PUT of key (path /BUCKET/KEY).
func isSinglePut(r *http.Request, path string) bool {
	return r.Method == http.MethodPut && r.URL.Path == path && r.URL.Query().Get("uploadId") == ""
}

func mustNotFound(t *testing.T, s *Store, rel string) {
	t.Helper()
	_, err := s.Get(context.Background(), rel)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(%s) = %v, want ErrNotFound", rel, err)
	}
}
