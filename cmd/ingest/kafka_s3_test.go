package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"mcptrace/internal/kafkatest"
	"mcptrace/objstore"
)

// failingS3 is gofakes3 over real HTTP, with a switch that makes every
// upload of an object whose name contains failKey fail partway through its
// body (the store keeps no object: a PUT is whole or nothing).
type failingS3 struct {
	srv     *httptest.Server
	mu      sync.Mutex
	failKey string
	failed  map[string]bool // keys of uploads that failed
}

func startS3(t *testing.T, bucket string) *failingS3 {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(be).Server()
	f := &failingS3{failed: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fail := r.Method == http.MethodPut && f.failKey != "" && strings.Contains(r.URL.Path, f.failKey)
		if fail {
			f.failed[strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")] = true
		}
		f.mu.Unlock()
		if fail {
			io.CopyN(io.Discard, r.Body, 1024) // part of the body, then an error
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *failingS3) setFail(key string) {
	f.mu.Lock()
	f.failKey = key
	f.mu.Unlock()
}

func TestKafkaToObjectStorage100k(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 6}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 6, Records: 100000, Sessions: 600})
	kafkatest.Produce(t, c.Addrs(), recs)
	base := fileBaseline(t, recs)
	s3 := startS3(t, "traces")
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	url := "s3://traces/mcp/dataset"
	args := func(cache string) []string {
		return kafkaArgs(c, "s3", url, "-kafka-until-caught-up", "-s3-endpoint", s3.srv.URL, "-s3-path-style", "-s3-cache-dir", cache)
	}
	store, err := objstore.Open(context.Background(), url, objstore.ConfigFromEnv(objstore.Config{Endpoint: s3.srv.URL, PathStyle: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	// Uploads of partition 3's data files fail: the consumer gives up with
	// an error and commits nothing it did not upload.
	s3.setFail("/mcp+3+")
	p, code := runIngestProc(t, args(t.TempDir())...)
	if code == 0 {
		t.Fatalf("the consumer succeeded although uploads failed\n%s", p)
	}
	keys, err := store.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if s3.failed[k] {
			t.Errorf("%s is in the bucket although its upload failed", k)
		}
	}
	if len(s3.failed) == 0 {
		t.Fatal("no upload failed: the test injected nothing")
	}
	committed := kafkatest.Committed(t, c.Addrs(), "s3", kafkaTopic)
	if committed[kafkaTopic][3] != 0 {
		t.Errorf("partition 3 committed to %d although none of its files was uploaded", committed[kafkaTopic][3])
	}

	// Uploads work again: two consumers, on machines of their own (each
	// with its own working directory), finish the job.
	s3.setFail("")
	a := startIngest(t, args(t.TempDir())...)
	b := startIngest(t, args(t.TempDir())...)
	for _, p := range []*ingestProc{a, b} {
		if code := p.wait(t, hangGuard*2); code != 0 {
			t.Fatalf("consumer exited %d\n%s", code, p)
		}
	}
	checkCommittedAtEnd(t, c, "s3")
	down := t.TempDir()
	if err := store.Download(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	exch, _ := checkDataset(t, down) // every object a whole Parquet file
	n := sameVerdicts(t, down, base)
	if exch != n {
		t.Errorf("objects hold %d exchanges, the dataset's query %d", exch, n)
	}
	checkDurableCommitted(t, c, "s3", down)
}
