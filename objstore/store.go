package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Store is one prefix of one bucket. Its methods are safe for concurrent
// use; each call's context bounds it, retries included.
type Store struct {
	client    *minio.Client // requests without a body: minio-go retries them
	once      *minio.Client // requests with a body: one try each, retried by retry
	tries     int           // of a request or an upload
	transport *http.Transport
	bucket    string
	prefix    string
	host      string // the endpoint, for messages
	partSize  int64
}

// Open connects to the store of rawURL ("s3://BUCKET/PREFIX") and checks
// that the bucket exists and that the credentials are accepted. It makes
// no object. Credentials: the Config's keys, else the environment
// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN;
// MINIO_ROOT_USER and MINIO_ROOT_PASSWORD), else the AWS shared
// credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials,
// profile AWS_PROFILE), else IAM (web identity, ECS/EKS, EC2 metadata).
// Call ConfigFromEnv first for the endpoint and region variables.
func Open(ctx context.Context, rawURL string, cfg Config) (*Store, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	host, secure, err := cfg.endpoint()
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", rawURL, err)
	}
	if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
		return nil, fmt.Errorf("opening %s: an access key needs its secret key and a secret key its access key: give both (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) or neither", rawURL)
	}
	partSize := cfg.PartSize
	switch {
	case partSize == 0:
		partSize = defaultPartSize
	case partSize < minPartSize || partSize > 5<<30:
		return nil, fmt.Errorf("opening %s: part size %d is outside S3's limits: give 5 MiB to 5 GiB, or 0 for 16 MiB", rawURL, partSize)
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", rawURL, err)
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	tries := cfg.MaxRetries
	if tries <= 0 {
		tries = minio.MaxRetry
	}
	creds := cfg.credentials()
	newClient := func(tries int) (*minio.Client, error) {
		return minio.New(host, &minio.Options{
			Creds:        creds,
			Secure:       secure,
			Transport:    tr,
			Region:       cfg.Region,
			BucketLookup: lookup,
			MaxRetries:   tries,
		})
	}
	client, err := newClient(tries)
	if err != nil {
		return nil, fmt.Errorf("opening %s at endpoint %s: %w: check -s3-endpoint (or AWS_ENDPOINT_URL)", rawURL, host, err)
	}
	// minio-go retries a request by seeking its body back while the
	// transport may still be reading it (after an early error answer: a
	// data race, and bytes lost from the retry; golang/go#51907). Requests
	// with a body therefore go through a client that tries once, and
	// retry builds new readers for each try.
	once, err := newClient(1)
	if err != nil {
		return nil, fmt.Errorf("opening %s at endpoint %s: %w: check -s3-endpoint (or AWS_ENDPOINT_URL)", rawURL, host, err)
	}
	s := &Store{client: client, once: once, tries: tries, transport: tr, bucket: bucket, prefix: prefix, host: host, partSize: partSize}
	ok, err := client.BucketExists(ctx, bucket)
	if err != nil {
		tr.CloseIdleConnections()
		return nil, &Error{Op: "open", URL: s.URL(""), Err: err, Hint: hint(err, "open", host, bucket)}
	}
	if !ok {
		tr.CloseIdleConnections()
		return nil, &Error{Op: "open", URL: s.URL(""), Err: errors.New("the bucket does not exist"),
			Hint: "create bucket " + bucket + " at " + host + " (aws s3 mb s3://" + bucket + ", mc mb ALIAS/" + bucket + ") or fix the URL and -s3-endpoint"}
	}
	return s, nil
}

// Bucket returns the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the prefix keys are joined under, without slashes at
// its ends ("" for the bucket's root).
func (s *Store) Prefix() string { return s.prefix }

// Close releases the store's idle connections. Calls in flight finish;
// the Store must not be used afterwards.
func (s *Store) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

func (s *Store) fail(op, rel, local string, err error) error {
	return &Error{Op: op, URL: s.URL(rel), Local: local, Err: err, Hint: hint(err, op, s.host, s.bucket)}
}

// Put uploads the regular file localPath under rel. The object appears
// under its key only when complete: one PUT up to Config.PartSize, a
// multipart upload above it, whose parts are no object until the upload
// is completed, and which is aborted when any part fails or ctx ends.
// Every PUT and part carries its Content-MD5, which the store checks;
// the object's size is checked after the upload. When the upload fails,
// the key holds what it held before (no object, or the last complete
// one); when the check after it fails, the key may hold the new object.
// Either way the caller must not count the file as published, and a new
// Put replaces the object.
func (s *Store) Put(ctx context.Context, rel, localPath string) error {
	if err := checkRel(rel); err != nil {
		return &Error{Op: "put", URL: s.URL(rel), Local: localPath, Err: err}
	}
	f, err := os.Open(localPath)
	if err != nil {
		return &Error{Op: "put", URL: s.URL(rel), Local: localPath, Err: err, Hint: "nothing was uploaded"}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &Error{Op: "put", URL: s.URL(rel), Local: localPath, Err: err, Hint: "nothing was uploaded"}
	}
	if !st.Mode().IsRegular() {
		return &Error{Op: "put", URL: s.URL(rel), Local: localPath, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type()), Hint: "only files are uploaded"}
	}
	size := st.Size()
	return s.put(ctx, rel, localPath, func() io.Reader { return io.NewSectionReader(f, 0, size) }, size)
}

// PutBytes uploads data under rel, with Put's guarantees (the scope
// manifest, the commit point of a publish).
func (s *Store) PutBytes(ctx context.Context, rel string, data []byte) error {
	if err := checkRel(rel); err != nil {
		return &Error{Op: "put", URL: s.URL(rel), Err: err}
	}
	return s.put(ctx, rel, "", func() io.Reader { return bytes.NewReader(data) }, int64(len(data)))
}

// put uploads size bytes under rel, each try reading from a new reader
// of body (the readers of earlier tries may still be read by the
// transport).
func (s *Store) put(ctx context.Context, rel, local string, body func() io.Reader, size int64) error {
	key := s.key(rel)
	var info minio.UploadInfo
	err := s.retry(ctx, func() (err error) {
		info, err = s.once.PutObject(ctx, s.bucket, key, body(), size, minio.PutObjectOptions{
			ContentType: contentType(rel),
			// The store checks each PUT and part against its MD5. With
			// it, minio-go uploads parts one after another from one
			// buffer (no parallel part uploads), so an upload holds one
			// part in memory.
			SendContentMd5: true,
			// UNSIGNED-PAYLOAD and a plain body, as minio-go does over
			// HTTPS, on plain HTTP too: its default there, the
			// aws-chunked streaming signature, is not decoded in
			// multipart parts by some stores (gofakes3 keeps the chunk
			// framing in the object), and Content-MD5 already protects
			// the bytes.
			DisableContentSha256: true,
			PartSize:             uint64(s.partSize),
		})
		return err
	})
	if err != nil {
		return s.fail("put", rel, local, err)
	}
	if info.Size != size {
		return &Error{Op: "put", URL: s.URL(rel), Local: local,
			Err:  fmt.Errorf("the store took %d bytes of %d", info.Size, size),
			Hint: "the file may have changed while it was read; run again"}
	}
	st, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return &Error{Op: "put", URL: s.URL(rel), Local: local,
			Err: fmt.Errorf("checking the object after the upload: %w", err), Hint: hint(err, "check", s.host, s.bucket)}
	}
	if st.Size != size {
		return &Error{Op: "put", URL: s.URL(rel), Local: local,
			Err:  fmt.Errorf("the object has %d bytes, the upload had %d", st.Size, size),
			Hint: "another writer may have replaced it meanwhile; run again"}
	}
	return nil
}

// contentType is the MIME type of an object by its name's extension.
func contentType(rel string) string {
	switch ext := path.Ext(rel); ext {
	case ".parquet":
		return "application/vnd.apache.parquet"
	case ".json":
		return "application/json"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// Get reads the object under rel whole (meant for small objects: the
// manifests). A missing object gives a *NotFoundError, which
// errors.Is(err, ErrNotFound) and errors.Is(err, fs.ErrNotExist) match.
func (s *Store) Get(ctx context.Context, rel string) ([]byte, error) {
	if err := checkRel(rel); err != nil {
		return nil, &Error{Op: "get", URL: s.URL(rel), Err: err}
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(rel), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.getErr(rel, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, s.getErr(rel, err)
	}
	return data, nil
}

func (s *Store) getErr(rel string, err error) error {
	var r minio.ErrorResponse
	if errors.As(err, &r) && (r.Code == "NoSuchKey" || (r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket")) {
		return &NotFoundError{URL: s.URL(rel)}
	}
	return s.fail("get", rel, "", err)
}

// List returns the relative keys of the objects whose key starts with
// relPrefix (a plain string prefix, as in S3: "exchanges/" lists a
// table, "" everything), recursively, sorted. Only complete objects are
// listed; incomplete multipart uploads are not objects.
func (s *Store) List(ctx context.Context, relPrefix string) ([]string, error) {
	objs, err := s.list(ctx, relPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.rel
	}
	return out, nil
}

type listed struct {
	rel  string
	size int64
}

func (s *Store) list(ctx context.Context, relPrefix string) ([]listed, error) {
	if relPrefix != "" {
		if err := checkRel(strings.TrimSuffix(relPrefix, "/")); err != nil {
			return nil, &Error{Op: "list", URL: s.URL(""), Err: fmt.Errorf("prefix: %w", err)}
		}
	}
	full := relPrefix
	if s.prefix != "" {
		full = s.prefix + "/" + relPrefix
	}
	var out []listed
	for o := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if o.Err != nil {
			return nil, &Error{Op: "list", URL: s.URL(strings.TrimSuffix(relPrefix, "/")), Err: o.Err, Hint: hint(o.Err, "list", s.host, s.bucket)}
		}
		out = append(out, listed{rel: s.rel(o.Key), size: o.Size})
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "list", URL: s.URL(strings.TrimSuffix(relPrefix, "/")), Err: err, Hint: hint(err, "list", s.host, s.bucket)}
	}
	slices.SortFunc(out, func(a, b listed) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// Delete removes the objects under rels (bulk deletes of up to 1,000
// keys a request, retried like uploads for the keys not yet confirmed).
// A key that holds no object is not an error. The error names the keys
// whose removal the store did not confirm (the first ten).
func (s *Store) Delete(ctx context.Context, rels ...string) error {
	keys := make(map[string]string, len(rels)) // key -> rel
	for _, rel := range rels {
		if err := checkRel(rel); err != nil {
			return &Error{Op: "delete", URL: s.URL(rel), Err: err}
		}
		keys[s.key(rel)] = rel
	}
	pending := slices.Sorted(maps.Keys(keys))
	var failed map[string]error
	err := s.retry(ctx, func() error {
		objs := func(yield func(minio.ObjectInfo) bool) {
			for _, k := range pending {
				if !yield(minio.ObjectInfo{Key: k}) {
					return
				}
			}
		}
		results, err := s.once.RemoveObjectsWithIter(ctx, s.bucket, objs, minio.RemoveObjectsOptions{})
		if err != nil {
			return err
		}
		done := make(map[string]bool, len(pending))
		failed = map[string]error{}
		var again error // an error another try may pass, if any
		var last error
		for r := range results {
			var er minio.ErrorResponse
			switch {
			case r.Err == nil, errors.As(r.Err, &er) && er.Code == "NoSuchKey":
				done[r.ObjectName] = true
			default:
				if _, ok := keys[r.ObjectName]; ok {
					failed[r.ObjectName] = r.Err
				}
				last = r.Err
				if retryable(ctx, r.Err) {
					again = r.Err
				}
			}
		}
		pending = slices.DeleteFunc(pending, func(k string) bool { return done[k] })
		if len(pending) == 0 {
			return nil
		}
		if again != nil {
			return again
		}
		if last != nil {
			return last
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("the store did not confirm the removal")
	})
	if len(pending) == 0 {
		return nil
	}
	var errs []error
	for _, k := range pending[:min(len(pending), 10)] {
		cause := failed[k]
		if cause == nil {
			cause = err
		}
		errs = append(errs, s.fail("delete", keys[k], "", cause))
	}
	return fmt.Errorf("%d of %d objects not deleted: %w", len(pending), len(keys), errors.Join(errs...))
}

// Download copies every object under the store's prefix into localDir
// under the same relative paths (localDir/TABLE/dt=.../NAME.parquet),
// for tests and for analyze. Each file is written under a temporary name
// (".NAME.*.tmp"), its size checked against the listing, fsynced and
// renamed, so a file under its final name is complete. Files already in
// localDir are replaced when the store has their path, and kept
// otherwise. Zero-byte "directory" objects (keys ending in '/') are
// skipped; a key that is no valid relative path is an error.
func (s *Store) Download(ctx context.Context, localDir string) error {
	objs, err := s.list(ctx, "")
	if err != nil {
		return err
	}
	for _, o := range objs {
		if strings.HasSuffix(o.rel, "/") && o.size == 0 {
			continue
		}
		dst := filepath.Join(localDir, filepath.FromSlash(o.rel))
		if err := checkRel(o.rel); err != nil || !filepath.IsLocal(filepath.FromSlash(o.rel)) {
			return &Error{Op: "download", URL: s.URL(o.rel), Local: localDir,
				Err:  fmt.Errorf("the key is no relative path under the prefix: %q", o.rel),
				Hint: "remove or rename that object; nothing after it was downloaded"}
		}
		if err := s.download(ctx, o, dst); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) download(ctx context.Context, o listed, dst string) (err error) {
	fail := func(err error, hint string) error {
		return &Error{Op: "download", URL: s.URL(o.rel), Local: dst, Err: err, Hint: hint}
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err, "check the local directory")
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(o.rel), minio.GetObjectOptions{})
	if err != nil {
		return fail(err, hint(err, "get", s.host, s.bucket))
	}
	defer obj.Close()
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return fail(err, "check the local directory")
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := io.Copy(tmp, obj)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fail(err, "check the local disk")
		}
		return fail(err, hint(err, "get", s.host, s.bucket))
	}
	if n != o.size {
		return fail(fmt.Errorf("read %d bytes, the listing said %d", n, o.size), "the object changed meanwhile; run again")
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err, "check the local disk")
	}
	if err := tmp.Sync(); err != nil {
		return fail(err, "check the local disk")
	}
	if err := tmp.Close(); err != nil {
		return fail(err, "check the local disk")
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fail(err, "check the local directory")
	}
	return nil
}
