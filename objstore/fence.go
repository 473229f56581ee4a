package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/minio/minio-go/v7"
)

// ErrChanged is matched (errors.Is) by the error of PutBytesIf when the
// object is no longer the version the caller read: another writer has
// replaced it (or created it) since.
var ErrChanged = errors.New("the object was changed by another writer")

// GetVersion reads a small object and its ETag, the version PutBytesIf
// expects. A missing object gives a *NotFoundError.
func (s *Store) GetVersion(ctx context.Context, rel string) (data []byte, etag string, err error) {
	if err := checkRel(rel); err != nil {
		return nil, "", &Error{Op: "get", URL: s.URL(rel), Err: err}
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(rel), minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s.getErr(rel, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, "", s.getErr(rel, err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(obj); err != nil {
		return nil, "", s.getErr(rel, err)
	}
	return b.Bytes(), st.ETag, nil
}

// PutBytesIf writes a small object only if it is still the version etag
// (If-Match), or, with etag "", only if it does not exist (If-None-Match),
// and returns the new version. A writer that lost its object to another
// (a Kafka member evicted while it was still publishing) gets ErrChanged
// and must stop writing: its manifest would undo the other's. A try whose
// success was not heard of is recognised on the next: the object then
// holds exactly these bytes.
func (s *Store) PutBytesIf(ctx context.Context, rel string, data []byte, etag string) (string, error) {
	if err := checkRel(rel); err != nil {
		return "", &Error{Op: "put", URL: s.URL(rel), Err: err}
	}
	key := s.key(rel)
	sum := md5.Sum(data)
	mine := hex.EncodeToString(sum[:])
	var info minio.UploadInfo
	tries := 0
	err := s.retry(ctx, func() (err error) {
		tries++
		opts := minio.PutObjectOptions{ContentType: contentType(rel), SendContentMd5: true, DisableContentSha256: true}
		if etag == "" {
			opts.SetMatchETagExcept("*")
		} else {
			opts.SetMatchETag(etag)
		}
		info, err = s.once.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), opts)
		return err
	})
	if err == nil {
		return info.ETag, nil
	}
	var r minio.ErrorResponse
	if errors.As(err, &r) && r.Code == "PreconditionFailed" {
		if tries > 1 {
			// An earlier try may have written it and its answer been lost.
			if st, serr := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{}); serr == nil && strings.Trim(st.ETag, `"`) == mine {
				return st.ETag, nil
			}
		}
		return "", &Error{Op: "put", URL: s.URL(rel), Err: ErrChanged,
			Hint: "another writer replaced it since it was read: this writer no longer owns it and stops"}
	}
	return "", s.fail("put", rel, "", err)
}
