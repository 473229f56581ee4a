package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"

	"github.com/minio/minio-go/v7"
)

// ErrNotFound is matched (errors.Is) by the error Get returns for a key
// that holds no object; so is fs.ErrNotExist.
var ErrNotFound = errors.New("no such object")

// NotFoundError is Get's error for a missing object.
type NotFoundError struct {
	URL string // s3://BUCKET/KEY
}

func (e *NotFoundError) Error() string {
	return e.URL + ": no such object"
}

// Is makes errors.Is(err, ErrNotFound) and errors.Is(err, fs.ErrNotExist)
// true.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrNotFound || target == fs.ErrNotExist
}

// Error is every other failure of a Store: the operation, the object (and
// the local file, if any), the cause, and what to do. Unwrap gives the
// cause (a minio.ErrorResponse, a context error, a *url.Error...).
type Error struct {
	Op    string // "open", "put", "get", "list", "delete", "download"
	URL   string // s3://BUCKET/KEY, or s3://BUCKET/PREFIX for open and list
	Local string // the local file of put and download, else ""
	Err   error
	Hint  string // what to do
}

func (e *Error) Error() string {
	var what string
	switch e.Op {
	case "put":
		if e.Local != "" {
			what = "uploading " + e.Local + " to " + e.URL
		} else {
			what = "uploading " + e.URL
		}
	case "get":
		what = "reading " + e.URL
	case "list":
		what = "listing " + e.URL
	case "delete":
		what = "deleting " + e.URL
	case "download":
		what = "downloading " + e.URL + " to " + e.Local
	default:
		what = "opening " + e.URL
	}
	msg := what + ": " + describe(e.Err)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// describe adds the S3 error code and HTTP status to minio-go's message,
// which alone is often just "Access Denied."
func describe(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) && r.Code != "" {
		if r.StatusCode != 0 {
			return fmt.Sprintf("%s (%s, HTTP %d)", r.Error(), r.Code, r.StatusCode)
		}
		return fmt.Sprintf("%s (%s)", r.Error(), r.Code)
	}
	return err.Error()
}

// hint says what to do about err. host is the endpoint, bucket the
// bucket; op words the advice for uploads (what stays under the key).
func hint(err error, op, host, bucket string) string {
	var r minio.ErrorResponse
	errors.As(err, &r)
	kept := ""
	if op == "put" {
		kept = "; the key holds what it held before (no object, or the last complete upload)"
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted" + kept
	case errors.Is(err, context.DeadlineExceeded):
		return "the time allowed ran out (the store is slow or unreachable); run again" + kept
	}
	switch r.Code {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
		"TokenRefreshRequired", "InvalidSecurity", "AccountProblem", "AllAccessDisabled":
		return "the store refused the credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or an IAM role), " +
			"check that they may list, read, write and delete in bucket " + bucket + " and that the region (-s3-region, AWS_REGION) is the bucket's" + kept
	case "NoSuchBucket":
		return "bucket " + bucket + " does not exist at " + host + ": create it (aws s3 mb s3://" + bucket + ", mc mb ALIAS/" + bucket + ") or fix the URL"
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "InvalidRegion", "IllegalLocationConstraintException":
		return "the bucket is in another region: set -s3-region (or AWS_REGION) to the bucket's region" + kept
	case "BadDigest", "InvalidDigest", "IncompleteBody", "XAmzContentSHA256Mismatch":
		return "the data was damaged or cut on the way; run again" + kept
	case "EntityTooLarge", "EntityTooSmall", "InvalidPart", "InvalidPartOrder":
		return "the store refused the size or the parts of the upload (its limits may differ from S3's: see Config.PartSize)" + kept
	case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "RequestTimeTooSkewed":
		if r.Code == "RequestTimeTooSkewed" {
			return "this machine's clock is too far from the store's: fix the clock (NTP)" + kept
		}
		return "the store failed, retries included; run again later" + kept
	}
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe) {
		return "cannot talk to the endpoint " + host + ": check -s3-endpoint (or AWS_ENDPOINT_URL), -s3-insecure (HTTP or HTTPS) and the network" + kept
	}
	if r.StatusCode >= 500 {
		return "the store failed, retries included; run again later" + kept
	}
	return "run again; if it keeps failing, check the endpoint, the region and the credentials" + kept
}
