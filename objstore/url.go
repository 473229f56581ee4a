package objstore

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// ParseURL splits "s3://BUCKET/PREFIX" into its bucket and prefix. The
// prefix may be empty ("s3://BUCKET", "s3://BUCKET/") and loses its
// leading and trailing slashes ("s3://b/data/" and "s3://b/data" are the
// same place); inside it, empty, "." and ".." segments are refused, since
// they would not mean what they mean on a disk.
func ParseURL(s string) (bucket, prefix string, err error) {
	const scheme = "s3://"
	if len(s) < len(scheme) || !strings.EqualFold(s[:len(scheme)], scheme) {
		return "", "", fmt.Errorf("%q is not an S3 URL: write s3://BUCKET or s3://BUCKET/PREFIX", s)
	}
	rest := s[len(scheme):]
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q names no bucket: write s3://BUCKET or s3://BUCKET/PREFIX", s)
	}
	if err := s3utils.CheckValidBucketName(bucket); err != nil {
		return "", "", fmt.Errorf("%q: bucket name %q is not valid (%v): S3 bucket names are 3 to 63 letters, digits, '.' and '-', starting and ending with a letter or digit", s, bucket, err)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" && !fs.ValidPath(prefix) {
		return "", "", fmt.Errorf("%q: prefix %q has an empty, \".\" or \"..\" segment: write it as a/b/c", s, prefix)
	}
	if strings.ContainsFunc(prefix, isControl) {
		return "", "", fmt.Errorf("%q: prefix %q has a control character", s, prefix)
	}
	return bucket, prefix, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkRel validates a relative key: '/'-separated, no leading or trailing
// slash, no empty, "." or ".." segment (fs.ValidPath), so that the same
// string is a key under the prefix and a path under a local directory.
func checkRel(rel string) error {
	if rel == "" || rel == "." || !fs.ValidPath(rel) || strings.ContainsFunc(rel, isControl) || strings.Contains(rel, `\`) {
		return fmt.Errorf("%q is not a relative key: use '/'-separated names with no leading or trailing '/', no empty, \".\" or \"..\" segment and no '\\'", rel)
	}
	return nil
}

// key joins a checked relative key under the store's prefix.
func (s *Store) key(rel string) string {
	if s.prefix == "" {
		return rel
	}
	return s.prefix + "/" + rel
}

// rel is the inverse of key for a key listed under the prefix.
func (s *Store) rel(key string) string {
	if s.prefix == "" {
		return key
	}
	return strings.TrimPrefix(key, s.prefix+"/")
}

// URL returns "s3://BUCKET/PREFIX/rel", the name errors and logs use for
// an object of this store (rel may be empty: the store's root).
func (s *Store) URL(rel string) string {
	k := s.key(rel)
	if rel == "" {
		k = s.prefix
	}
	if k == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + k
}
