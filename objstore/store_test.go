package objstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/minio/minio-go/v7"
	"github.com/parquet-go/parquet-go"
)

func TestRoundTrip(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/runs/one/")
	ctx := context.Background()
	if s.Bucket() != "bkt" || s.Prefix() != "runs/one" {
		t.Fatalf("bucket, prefix = %q, %q", s.Bucket(), s.Prefix())
	}

	dir := t.TempDir()
	const rel = "exchanges/dt=2026-10-17/kafka-t-0-42-00001.parquet"
	local, data := randomFile(t, dir, "f.parquet", 64<<10)
	if err := s.Put(ctx, rel, local); err != nil {
		t.Fatal(err)
	}
	manifest := []byte(`{"version":1}`)
	if err := s.PutBytes(ctx, ".mcptrace/scopes/t-0/manifest.json", manifest); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if err := s.Put(ctx, "quarantine/dt=1970-01-01/empty.bin", empty); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		rel  string
		want []byte
	}{{rel, data}, {".mcptrace/scopes/t-0/manifest.json", manifest}, {"quarantine/dt=1970-01-01/empty.bin", nil}} {
		got, err := s.Get(ctx, c.rel)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("Get(%s) = %d bytes, %v; want the %d bytes put", c.rel, len(got), err, len(c.want))
		}
	}

	// The objects sit under the prefix, with content types, as seen by
	// a client that goes to gofakes3 directly.
	wantKeys := []string{
		"runs/one/.mcptrace/scopes/t-0/manifest.json",
		"runs/one/exchanges/dt=2026-10-17/kafka-t-0-42-00001.parquet",
		"runs/one/quarantine/dt=1970-01-01/empty.bin",
	}
	if got := f.objects("bkt"); !slices.Equal(got, wantKeys) {
		t.Fatalf("bucket holds %q, want %q", got, wantKeys)
	}
	for key, ct := range map[string]string{wantKeys[0]: "application/json", wantKeys[1]: "application/vnd.apache.parquet"} {
		st, err := f.raw.StatObject(ctx, "bkt", key, minio.StatObjectOptions{})
		if err != nil || st.ContentType != ct {
			t.Errorf("%s: content type %q, %v; want %q", key, st.ContentType, err, ct)
		}
	}
	if got := s.URL(rel); got != "s3://bkt/runs/one/"+rel {
		t.Errorf("URL = %s", got)
	}

	// Put replaces an object.
	local2, data2 := randomFile(t, dir, "g.parquet", 1000)
	if err := s.Put(ctx, rel, local2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, rel); err != nil || !bytes.Equal(got, data2) {
		t.Errorf("after a second Put, Get = %d bytes, %v; want the new %d", len(got), err, len(data2))
	}

	// At the bucket's root, keys are the relative paths.
	root := f.open("s3://bkt")
	if err := root.PutBytes(ctx, "top.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := f.objects("bkt"); !slices.Contains(got, "top.json") {
		t.Errorf("root store wrote %q", got)
	}
	if got, _ := root.List(ctx, ""); len(got) != 4 || got[0] != "runs/one/.mcptrace/scopes/t-0/manifest.json" {
		t.Errorf("root List = %q", got)
	}
	if root.URL("") != "s3://bkt" || s.URL("") != "s3://bkt/runs/one" {
		t.Errorf("URLs %s, %s", root.URL(""), s.URL(""))
	}
}

func TestPutRejects(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	dir := t.TempDir()
	local, _ := randomFile(t, dir, "f", 10)
	for _, rel := range []string{"", "/abs", "a/../b", "a//b", "dir/"} {
		if err := s.Put(ctx, rel, local); err == nil || !strings.Contains(err.Error(), "not a relative key") {
			t.Errorf("Put(%q) = %v", rel, err)
		}
	}
	err := s.Put(ctx, "a", filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing")) || !strings.Contains(err.Error(), "s3://bkt/p/a") {
		t.Errorf("missing file: %v", err)
	}
	if err := s.Put(ctx, "a", dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	if got := f.objects("bkt"); len(got) != 0 {
		t.Errorf("bucket holds %q", got)
	}
}

func TestMultipartRoundTrip(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	dir := t.TempDir()
	local, data := randomFile(t, dir, "big.parquet", 11<<20+3) // three 5 MiB parts, the last short
	if err := s.Put(ctx, "t/big.parquet", local); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "t/big.parquet")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get = %d bytes, %v; want the %d put", len(got), err, len(data))
	}
	var parts, completes int
	for _, r := range f.requests() {
		if r.Method == http.MethodPut && strings.Contains(r.Query, "partNumber=") {
			parts++
		}
		if r.Method == http.MethodPost && strings.Contains(r.Query, "uploadId=") {
			completes++
		}
	}
	if parts != 3 || completes != 1 {
		t.Errorf("%d part uploads and %d completions, want 3 and 1", parts, completes)
	}
	// Exactly one part's size goes in one PUT.
	local, data = randomFile(t, dir, "five.parquet", minPartSize)
	if err := s.Put(ctx, "t/five.parquet", local); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if r := reqs[len(reqs)-2]; r.Method != http.MethodPut || r.Path != "/bkt/p/t/five.parquet" || r.Query != "" {
		t.Errorf("a file of one part size was sent by %+v, want one PUT", r)
	}
	if got, _ := s.Get(ctx, "t/five.parquet"); !bytes.Equal(got, data) {
		t.Error("five MiB object differs")
	}
}

func TestGetNotFound(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	_, err := s.Get(context.Background(), ".mcptrace/scopes/x/manifest.json")
	var nf *NotFoundError
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &nf) ||
		err.Error() != "s3://bkt/p/.mcptrace/scopes/x/manifest.json: no such object" {
		t.Fatalf("Get of a missing key = %v", err)
	}
	// Other failures are not "not found".
	f.setRule(func(r *http.Request) fault { return fault{kind: deny403} })
	_, err = s.Get(context.Background(), "k")
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "reading s3://bkt/p/k") || !strings.Contains(err.Error(), "AccessDenied, HTTP 403") {
		t.Fatalf("Get refused = %v", err)
	}
}

func TestListDelete(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	for _, rel := range []string{"b/z", "a/y", "ab", "a/x"} {
		if err := s.PutBytes(ctx, rel, []byte(rel)); err != nil {
			t.Fatal(err)
		}
	}
	// Objects beside the prefix are not the store's.
	for _, key := range []string{"p2/q", "px", "q/p/a"} {
		if _, err := f.raw.PutObject(ctx, "bkt", key, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix string) []string {
		t.Helper()
		got, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got, want := list(""), []string{"a/x", "a/y", "ab", "b/z"}; !slices.Equal(got, want) {
		t.Errorf(`List("") = %q, want %q`, got, want)
	}
	if got, want := list("a/"), []string{"a/x", "a/y"}; !slices.Equal(got, want) {
		t.Errorf(`List("a/") = %q, want %q`, got, want)
	}
	if got, want := list("a"), []string{"a/x", "a/y", "ab"}; !slices.Equal(got, want) {
		t.Errorf(`List("a") = %q, want %q`, got, want)
	}
	if got := list("c/"); len(got) != 0 {
		t.Errorf(`List("c/") = %q`, got)
	}
	if _, err := s.List(ctx, "../"); err == nil {
		t.Error(`List("../") accepted`)
	}

	if err := s.Delete(ctx, "a/x", "b/z", "missing/k", "a/x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := list(""), []string{"a/y", "ab"}; !slices.Equal(got, want) {
		t.Errorf("after Delete, List = %q, want %q", got, want)
	}
	if got, want := f.objects("bkt"), []string{"p/a/y", "p/ab", "p2/q", "px", "q/p/a"}; !slices.Equal(got, want) {
		t.Errorf("bucket holds %q, want %q", got, want)
	}
	if err := s.Delete(ctx, "ok", "a//b"); err == nil || !strings.Contains(err.Error(), "not a relative key") {
		t.Errorf("Delete of a bad key = %v", err)
	}
	f.setRule(func(r *http.Request) fault { return fault{kind: deny403} })
	err := s.Delete(ctx, "a/y")
	if err == nil || !strings.Contains(err.Error(), "1 of 1 objects not deleted") || !strings.Contains(err.Error(), "refused the credentials") {
		t.Errorf("Delete refused = %v", err)
	}
	f.setRule(nil)
	if got := list(""); len(got) != 2 {
		t.Errorf("a refused Delete removed objects: %q", got)
	}
}

// TestListDeleteMany: listings past one page (1,000 keys) and deletes
// past one bulk request.
func TestListDeleteMany(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	var rels []string
	for i := range 1203 {
		rel := fmt.Sprintf("t/dt=2026-10-17/f-%05d.parquet", i)
		rels = append(rels, rel)
		if _, err := f.raw.PutObject(ctx, "bkt", "p/"+rel, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List(ctx, "t/")
	if err != nil || !slices.Equal(got, rels) {
		t.Fatalf("List = %d keys, %v; want %d", len(got), err, len(rels))
	}
	if err := s.Delete(ctx, rels[:1101]...); err != nil {
		t.Fatal(err)
	}
	if got, err = s.List(ctx, ""); err != nil || !slices.Equal(got, rels[1101:]) {
		t.Fatalf("after Delete, List = %d keys, %v; want %d", len(got), err, len(rels)-1101)
	}
}

type row struct {
	ExchangeID string `parquet:"exchange_id"`
	Status     int64  `parquet:"status"`
}

// TestDownloadReadByDuckDB: a dataset tree of Parquet files written with
// parquet-go and a scope manifest, published, downloaded elsewhere, is
// byte for byte the same and DuckDB reads it with its dt partitions.
func TestDownloadReadByDuckDB(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/ds")
	ctx := context.Background()

	src := t.TempDir()
	files := map[string][]row{
		"exchanges/dt=2026-10-17/kafka-t-0-0-00001.parquet":  {{"a", 200}, {"b", 500}},
		"exchanges/dt=2026-10-18/kafka-t-0-2-00001.parquet":  {{"c", 404}},
		"quarantine/dt=1970-01-01/empty.parquet":             {},
		"exchanges/dt=2026-10-18/kafka-t-1-40-00001.parquet": {{"d", 200}, {"e", 200}, {"f", 503}},
	}
	var rels []string
	for rel, rows := range files {
		p := filepath.Join(src, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := parquet.WriteFile(p, rows); err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	os.MkdirAll(filepath.Join(src, ".mcptrace/scopes/t-0"), 0o755)
	os.WriteFile(filepath.Join(src, ".mcptrace/scopes/t-0/manifest.json"), []byte(`{"version":1}`), 0o644)
	rels = append(rels, ".mcptrace/scopes/t-0/manifest.json")
	for _, rel := range rels { // data files first, the manifest last, as a publish does
		if err := s.Put(ctx, rel, filepath.Join(src, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	// A console's "folder" object is skipped.
	if _, err := f.raw.PutObject(ctx, "bkt", "ds/exchanges/", bytes.NewReader(nil), 0, minio.PutObjectOptions{DisableContentSha256: true}); err != nil {
		t.Fatal(err)
	}

	dst := filepath.Join(t.TempDir(), "copy")
	// A file already there is replaced.
	stale := filepath.Join(dst, "exchanges/dt=2026-10-17/kafka-t-0-0-00001.parquet")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("stale"), 0o644)
	if err := s.Download(ctx, dst); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dst, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	slices.Sort(got)
	slices.Sort(rels)
	if !slices.Equal(got, rels) {
		t.Fatalf("downloaded %q, want %q (no temporary file left)", got, rels)
	}
	for _, rel := range rels {
		a, _ := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		b, _ := os.ReadFile(filepath.Join(dst, filepath.FromSlash(rel)))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs after the round trip", rel)
		}
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, errs int
	var days string
	q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE status >= 500), string_agg(DISTINCT CAST(dt AS VARCHAR), ',' ORDER BY CAST(dt AS VARCHAR))
		FROM read_parquet('%s/exchanges/*/*.parquet', hive_partitioning = true)`, dst)
	if err := db.QueryRow(q).Scan(&n, &errs, &days); err != nil {
		t.Fatal(err)
	}
	if n != 6 || errs != 2 || days != "2026-10-17,2026-10-18" {
		t.Errorf("DuckDB read %d rows, %d errors, days %s; want 6, 2, 2026-10-17,2026-10-18", n, errs, days)
	}
	var ids string
	if err := db.QueryRow(fmt.Sprintf(`SELECT string_agg(exchange_id, '' ORDER BY exchange_id) FROM read_parquet('%s/exchanges/*/*.parquet')`, dst)).Scan(&ids); err != nil || ids != "abcdef" {
		t.Errorf("exchange ids %q, %v", ids, err)
	}
	var empty int
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/quarantine/*/*.parquet')`, dst)).Scan(&empty); err != nil || empty != 0 {
		t.Errorf("empty table: %d rows, %v", empty, err)
	}
}

func TestDownloadRejectsKeysThatAreNoPath(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/ds")
	ctx := context.Background()
	if _, err := f.raw.PutObject(ctx, "bkt", "ds/a//b", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err := s.Download(ctx, dst)
	if err == nil || !strings.Contains(err.Error(), `"a//b"`) || !strings.Contains(err.Error(), "s3://bkt/ds/a//b") {
		t.Fatalf("Download = %v", err)
	}
	if ents, _ := os.ReadDir(dst); len(ents) != 0 {
		t.Errorf("Download wrote %v", ents)
	}
}

// TestPutFails: an upload broken partway through its body, on every try,
// returns an error naming the file and the object, and leaves no object
// under the key (nor an upload in progress); an object already under the
// key stays as it was.
func TestPutFails(t *testing.T) {
	const rel = "exchanges/dt=2026-10-17/kafka-t-0-42-00001.parquet"
	const path = "/bkt/p/" + rel
	small, big := 64<<10, 11<<20+3
	cases := []struct {
		name  string
		size  int
		match func(r *http.Request) bool
		kind  faultKind
		after int64
	}{
		{"PUT connection cut", small, func(r *http.Request) bool { return isSinglePut(r, path) }, cut, 1000},
		{"PUT 500", small, func(r *http.Request) bool { return isSinglePut(r, path) }, fail500, 1000},
		{"part 2 connection cut", big, func(r *http.Request) bool { return isPart(r, "2") }, cut, 1 << 20},
		{"part 3 500", big, func(r *http.Request) bool { return isPart(r, "3") }, fail500, 1000},
		{"complete 500", big, func(r *http.Request) bool {
			return r.Method == http.MethodPost && r.URL.Query().Get("uploadId") != ""
		}, fail500, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, before := range []bool{false, true} {
				f := newFake(t, "bkt")
				s := f.open("s3://bkt/p")
				ctx := context.Background()
				var old []byte
				if before {
					old = []byte("the complete object of an earlier upload")
					if err := s.PutBytes(ctx, rel, old); err != nil {
						t.Fatal(err)
					}
				}
				local, _ := randomFile(t, t.TempDir(), "f.parquet", c.size)
				var mu sync.Mutex
				hits := 0
				f.setRule(func(r *http.Request) fault {
					if c.match(r) {
						mu.Lock()
						hits++
						mu.Unlock()
						return fault{kind: c.kind, after: c.after}
					}
					return fault{kind: pass}
				})
				err := s.Put(ctx, rel, local)
				f.setRule(nil)
				if err == nil {
					t.Fatal("Put succeeded through a broken upload")
				}
				if !strings.Contains(err.Error(), "uploading "+local+" to s3://bkt/p/"+rel) || !strings.Contains(err.Error(), "the key holds what it held before") {
					t.Errorf("error does not name the file, the object and the outcome: %v", err)
				}
				mu.Lock()
				if hits != 2 {
					t.Errorf("the broken request was tried %d times, want 2 (MaxRetries)", hits)
				}
				mu.Unlock()
				got, err := s.List(ctx, "")
				if before {
					if b, gerr := s.Get(ctx, rel); gerr != nil || !bytes.Equal(b, old) {
						t.Errorf("the earlier object became %d bytes, %v", len(b), gerr)
					}
				} else {
					if err != nil || len(got) != 0 {
						t.Errorf("List after a failed upload = %q, %v; want nothing", got, err)
					}
					mustNotFound(t, s, rel)
				}
				if inc := f.incomplete("bkt", ""); len(inc) != 0 {
					t.Errorf("uploads left in progress: %q", inc)
				}
				if c.size == big {
					aborted := false
					for _, r := range f.requests() {
						aborted = aborted || (r.Method == http.MethodDelete && strings.Contains(r.Query, "uploadId="))
					}
					if !aborted {
						t.Error("the multipart upload was not aborted")
					}
				}
			}
		})
	}
}

// TestIncompleteUploadsAreSeen: the check for uploads left in progress,
// used above, does see one (else it would pass for nothing).
func TestIncompleteUploadsAreSeen(t *testing.T) {
	f := newFake(t, "bkt")
	core := minio.Core{Client: f.raw}
	id, err := core.NewMultipartUpload(context.Background(), "bkt", "p/k", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if inc := f.incomplete("bkt", ""); len(inc) != 1 || inc[0] != "p/k "+id {
		t.Fatalf("incomplete uploads = %q, want p/k %s", inc, id)
	}
	s := f.open("s3://bkt/p")
	if got, err := s.List(context.Background(), ""); err != nil || len(got) != 0 {
		t.Errorf("an upload in progress is listed: %q, %v", got, err)
	}
	mustNotFound(t, s, "k")
}

// TestPutRetries: a connection broken once, or an early 500 answer
// after part of the body (the case where the transport may still read
// the body of the failed try), in a PUT and in a part: the upload is
// tried again from new readers and the object is complete.
func TestPutRetries(t *testing.T) {
	for _, kind := range []faultKind{cut, fail500} {
		for _, size := range []int{64 << 10, 11<<20 + 3} {
			f := newFake(t, "bkt")
			s := f.open("s3://bkt/p")
			var mu sync.Mutex
			broken := 0
			f.setRule(func(r *http.Request) fault {
				if !isSinglePut(r, "/bkt/p/k.parquet") && !isPart(r, "2") {
					return fault{kind: pass}
				}
				mu.Lock()
				defer mu.Unlock()
				if broken++; broken == 1 {
					return fault{kind: kind, after: 1000}
				}
				return fault{kind: pass}
			})
			local, data := randomFile(t, t.TempDir(), "f.parquet", size)
			if err := s.Put(context.Background(), "k.parquet", local); err != nil {
				t.Fatalf("fault %d, %d bytes: %v", kind, size, err)
			}
			mu.Lock()
			if broken != 2 {
				t.Errorf("fault %d, %d bytes: %d tries of the broken request, want 2", kind, size, broken)
			}
			mu.Unlock()
			if got, err := s.Get(context.Background(), "k.parquet"); err != nil || !bytes.Equal(got, data) {
				t.Errorf("fault %d, %d bytes: Get = %d bytes, %v", kind, size, len(got), err)
			}
			if inc := f.incomplete("bkt", ""); len(inc) != 0 {
				t.Errorf("fault %d, %d bytes: uploads left in progress: %q", kind, size, inc)
			}
		}
	}
}

// TestDeleteRetries: a bulk delete that fails once is tried again.
func TestDeleteRetries(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	for _, rel := range []string{"a", "b", "c"} {
		if err := s.PutBytes(ctx, rel, []byte(rel)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	posts := 0
	f.setRule(func(r *http.Request) fault {
		if r.Method != http.MethodPost || !r.URL.Query().Has("delete") {
			return fault{kind: pass}
		}
		mu.Lock()
		defer mu.Unlock()
		if posts++; posts == 1 {
			return fault{kind: fail500, after: 10}
		}
		return fault{kind: pass}
	})
	if err := s.Delete(ctx, "a", "c"); err != nil {
		t.Fatal(err)
	}
	f.setRule(nil)
	mu.Lock()
	if posts != 2 {
		t.Errorf("%d bulk deletes, want 2", posts)
	}
	mu.Unlock()
	if got, err := s.List(ctx, ""); err != nil || !slices.Equal(got, []string{"b"}) {
		t.Errorf("List = %q, %v; want [b]", got, err)
	}
}

// TestPutCancel: cancelling the context stops an upload in flight (a
// PUT, or a multipart upload in its second part); nothing is left under
// the key and the multipart upload is aborted.
func TestPutCancel(t *testing.T) {
	for _, size := range []int{3 << 20, 11<<20 + 3} {
		f := newFake(t, "bkt")
		s := f.open("s3://bkt/p")
		started := make(chan struct{})
		var once sync.Once
		f.setRule(func(r *http.Request) fault {
			if isSinglePut(r, "/bkt/p/k.parquet") || isPart(r, "2") {
				return fault{kind: stall, after: 1 << 20, started: started, once: &once}
			}
			return fault{kind: pass}
		})
		local, _ := randomFile(t, t.TempDir(), "f.parquet", size)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Put(ctx, "k.parquet", local) }()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("%d bytes: Put returned %v before the stall", size, err)
		}
		cancel()
		err := <-done
		f.setRule(nil)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("%d bytes: Put = %v, want a cancellation", size, err)
		}
		if got, lerr := s.List(context.Background(), ""); lerr != nil || len(got) != 0 {
			t.Errorf("%d bytes: List = %q, %v", size, got, lerr)
		}
		mustNotFound(t, s, "k.parquet")
		if inc := f.incomplete("bkt", ""); len(inc) != 0 {
			t.Errorf("%d bytes: uploads left in progress: %q", size, inc)
		}
	}
}

// TestContextBoundsRetries: a store that answers SlowDown forever is
// retried (up to minio-go's 10 tries, with up to 1 s between them) only
// until the context ends: here it is cancelled during the third try.
func TestContextBoundsRetries(t *testing.T) {
	f := newFake(t, "bkt")
	c := f.config()
	c.MaxRetries = 0 // minio-go's default, 10
	s, err := Open(context.Background(), "s3://bkt/p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	tries := 0
	f.setRule(func(r *http.Request) fault {
		if r.Method == http.MethodPut {
			mu.Lock()
			defer mu.Unlock()
			if tries++; tries == 3 {
				cancel()
			}
			return fault{kind: fail503}
		}
		return fault{kind: pass}
	})
	err = s.PutBytes(ctx, "m.json", []byte("{}"))
	f.setRule(nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PutBytes = %v, want the cancellation", err)
	}
	mu.Lock()
	if tries != 3 {
		t.Errorf("%d tries, want 3 (two retries, then the context ended)", tries)
	}
	mu.Unlock()
	mustNotFound(t, s, "m.json")
	if h := hint(fmt.Errorf("x: %w", context.DeadlineExceeded), "put", "h", "b"); !strings.Contains(h, "time allowed ran out") || !strings.Contains(h, "held before") {
		t.Errorf("deadline hint: %s", h)
	}
}

func TestConcurrentPuts(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	want := map[string][]byte{}
	for i := range 8 {
		local, data := randomFile(t, dir, fmt.Sprint(i), 100<<10)
		rel := fmt.Sprintf("t/f-%d.parquet", i)
		want[rel] = data
		wg.Go(func() { errs <- s.Put(context.Background(), rel, local) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for rel, data := range want {
		if got, err := s.Get(context.Background(), rel); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes, %v", rel, len(got), err)
		}
	}
}
