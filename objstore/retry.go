package objstore

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// Backoff between tries, as minio-go's: a random wait up to 200 ms × 2^n,
// at most 1 s.
const (
	retryUnit = 200 * time.Millisecond
	retryCap  = time.Second
)

// retry runs try up to s.tries times while it fails with an error that
// may pass, waiting between tries; the context ends the whole. try must
// build new readers for its request bodies each time.
func (s *Store) retry(ctx context.Context, try func() error) error {
	var err error
	for n := range s.tries {
		if n > 0 {
			wait := min(retryCap, retryUnit<<min(n-1, 8))
			t := time.NewTimer(rand.N(wait) + 1)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%w, after %d tries, the last: %s", ctx.Err(), n, describe(err))
			}
		}
		if err = try(); err == nil || !retryable(ctx, err) {
			return err
		}
	}
	return err
}

// retryableCodes are the S3 error codes minio-go retries.
var retryableCodes = map[string]bool{
	"RequestError": true, "RequestTimeout": true, "Throttling": true, "ThrottlingException": true,
	"RequestLimitExceeded": true, "RequestThrottled": true, "InternalError": true, "ExpiredToken": true,
	"ExpiredTokenException": true, "SlowDown": true, "SlowDownWrite": true, "SlowDownRead": true,
	"ServiceUnavailable": true,
	// A body damaged or cut on the way: the next try sends it again.
	"BadDigest": true, "IncompleteBody": true,
}

var retryableStatus = map[int]bool{
	http.StatusRequestTimeout: true, http.StatusTooManyRequests: true, 499: true,
	http.StatusInternalServerError: true, http.StatusBadGateway: true,
	http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true, 520: true,
}

// retryable says whether another try may succeed where err failed.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return retryableCodes[r.Code] || retryableStatus[r.StatusCode]
	}
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var hn x509.HostnameError
	if errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &hn) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return false
	}
	// A broken connection, a reset, a timeout waiting for an answer.
	return true
}
