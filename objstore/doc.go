// Package objstore puts mcptrace's dataset in S3-compatible object
// storage (AWS S3, MinIO, Ceph, R2...): it uploads files and manifests
// under a bucket and prefix, lists, reads and deletes them, and downloads
// the whole prefix into a directory. It uses
// github.com/minio/minio-go/v7.
//
// # Layout
//
// "-out s3://BUCKET/PREFIX" holds the layout of a local dataset (package
// dataset) under PREFIX, with the same relative paths:
//
//	s3://BUCKET/PREFIX/
//	  exchanges/dt=2026-10-17/kafka-...-00001.parquet   data files
//	  quarantine/dt=1970-01-01/empty.parquet
//	  .mcptrace/scopes/<scope>/manifest.json             one manifest per scope
//
// Keys are the relative paths, '/'-separated, joined under the prefix
// (ParseURL: "s3://b/p/", "s3://b/p" and "s3://b//p" are the same
// prefix; "" is the bucket's root). A relative key has no leading or
// trailing '/', no empty, "." or ".." segment and no '\', so the same
// string names the object and a file under a local directory. Readers
// glob the tables as on a disk, for example in DuckDB
// read_parquet('s3://BUCKET/PREFIX/exchanges/*/*.parquet',
// hive_partitioning = true); the .mcptrace prefix is skipped by Spark and
// Hive, whose readers ignore names starting with '.'.
//
// # Publishing a scope
//
// The writer keeps a local working dataset. After a local commit of a
// scope it calls Put for each committed data file, then PutBytes for the
// scope's manifest, under the same relative paths, and commits its input
// (Kafka offsets) only after all of them returned nil. The manifest,
// uploaded last, is the commit point: a file is in the dataset when a
// manifest in the bucket lists it.
//
// # What an object guarantees
//
// An object appears under its key only when complete. A file up to
// Config.PartSize (16 MiB by default) goes in one PUT, which the store
// makes visible whole or not at all. A larger file goes as a multipart
// upload: its parts are no object (List and Get do not see them) until
// the upload is completed, and a failed part, a failed completion or the
// end of the context aborts the upload (minio-go sends the abort with a
// context of its own, so a cancelled call still aborts). Every PUT and
// part carries its Content-MD5, which the store checks (a damaged body is
// refused with BadDigest), and after the upload Put checks with a HEAD
// that the object has the file's size.
//
// When Put fails, the key holds what it held before: no object, or the
// last complete one (a replay rewrites the same deterministic name and
// a reader sees the old object or the new, never a mix). When the check
// after the upload fails, the key may hold the new object. In every case
// of error the caller must not count the file as published; a new Put
// replaces the object. Tested against gofakes3 over HTTP: the connection
// broken partway through the body of a PUT and of a part, HTTP 500 after
// part of the body, a failed completion, each on every try (an error, no
// object, no upload left in progress, an earlier object kept), and once
// (retried, the object complete), and a cancelled context during a PUT
// and during a multipart upload.
//
// # Retries and time
//
// Requests that may pass on another try (a broken connection, HTTP 5xx,
// SlowDown, BadDigest) are tried Config.MaxRetries times (default 10),
// with a random wait of up to 200 ms × 2^n, at most 1 s, between tries.
// Requests without a body (HEAD, GET, list) are retried by minio-go. An
// upload is retried whole, here, each try reading the file again from
// new readers and a multipart upload starting anew: minio-go's own
// retry seeks the body back while the HTTP transport may still be
// reading it after an early error answer (a data race that loses bytes
// from the retry; golang/go#51907, minio-go#790), which the race
// detector found in this package's tests. The context of each call
// bounds the whole, retries and waits included: give it a deadline. An
// upload holds one part (16 MiB by default) in memory; its parts are
// sent one after another.
//
// # Configuration
//
// Open takes the URL and a Config. The writer exposes Config as flags,
// then fills what the flags left unset with ConfigFromEnv:
//
//	-s3-endpoint URL   Config.Endpoint: host[:port] or http(s)://host[:port];
//	                   env AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL; default s3.amazonaws.com
//	-s3-region R       Config.Region; env AWS_REGION, AWS_DEFAULT_REGION;
//	                   default: asked of the store (one more request; set it)
//	-s3-path-style     Config.PathStyle: https://host/BUCKET/key; default: virtual-host
//	                   style for AWS, Google and Aliyun endpoints, path style for others
//	-s3-insecure       Config.Insecure: plain HTTP (an endpoint http://... implies it)
//
// Credentials have no flags (a command line is visible to every user of
// the machine). Open takes the first of: the Config's AccessKey and
// SecretKey (and SessionToken), which ConfigFromEnv fills from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN as a
// pair; MINIO_ROOT_USER and MINIO_ROOT_PASSWORD (or MINIO_ACCESS_KEY and
// MINIO_SECRET_KEY); the AWS shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile
// AWS_PROFILE or default); IAM (a web identity token,
// AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, as on EKS; ECS and EKS
// pod container credentials; EC2 instance metadata). None gives
// anonymous requests. Config.String never prints the secrets. A private
// CA for an HTTPS endpoint is read from SSL_CERT_FILE; proxies from
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
//
// The credentials need, on the bucket: s3:ListBucket (HEAD of the
// bucket, List, Download), s3:GetObject, s3:PutObject, s3:DeleteObject
// and s3:AbortMultipartUpload.
//
// Open checks that the bucket exists and that the store accepts the
// credentials, and fails with what to do: create the bucket, set the
// credentials or the region, check the endpoint.
//
// # Errors
//
// Every error but a missing object is an *Error: the operation, the
// object's URL (s3://BUCKET/KEY), the local file if any, the cause
// (Unwrap: a minio.ErrorResponse, a context error, a network error) with
// its S3 code and HTTP status, and what to do ("uploading
// /work/x.parquet to s3://b/p/exchanges/...: Access Denied.
// (AccessDenied, HTTP 403): the store refused the credentials: set
// AWS_ACCESS_KEY_ID and ..."). Get of a missing key returns a
// *NotFoundError, matched by errors.Is(err, ErrNotFound) and
// errors.Is(err, fs.ErrNotExist). Delete of a missing key is no error.
//
// # Limits
//
//   - No atomic commit of several objects. Between the first Put of a
//     publish and its manifest, a reader globbing the bucket sees the new
//     data files before any manifest lists them; a reader that must see
//     only committed files reads the manifests (as analyze does).
//   - A crash during a publish leaves orphans: objects under final keys
//     that no manifest lists. Their names are deterministic, so the
//     replay rewrites them, and the next owner of the scope deletes those
//     that its manifest does not list (List, then Delete).
//   - A process killed during a multipart upload leaves the upload in
//     progress (no object, but its parts are stored and billed). On AWS,
//     give the bucket a lifecycle rule AbortIncompleteMultipartUpload
//     (DaysAfterInitiation 1; aws s3api
//     put-bucket-lifecycle-configuration); MinIO removes stale uploads
//     by itself (api stale_uploads_expiry, 24 h by default).
//   - The store does no locking: who writes a scope is decided outside
//     (the consumer group's partition assignment). Manifests are fenced:
//     GetVersion returns an object with its ETag and PutBytesIf writes
//     only over that version (If-Match; If-None-Match "*" for a new one),
//     failing with ErrChanged when another writer replaced it, so a
//     writer that lost its scope but still runs cannot make a manifest
//     go back. Data files are not fenced: such a writer can still upload
//     files no manifest lists (orphans, removed by the next adopt).
//   - With versioning on the bucket, every rewrite keeps a version.
//   - Over plain HTTP the request bodies are not signed (UNSIGNED-PAYLOAD,
//     as minio-go does over HTTPS; Content-MD5 protects them from damage,
//     not from a party on the path): use HTTPS beyond a local network.
//     (minio-go's default on plain HTTP, the aws-chunked streaming
//     signature, is not decoded in multipart parts by some stores:
//     gofakes3 stored the chunk framing in the object.)
//   - Get reads an object whole into memory (for manifests); Download
//     copies objects one after another, each fsynced and renamed into
//     place, and replaces local files that the bucket also has.
package objstore
