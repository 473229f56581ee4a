package objstore

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Config says where the store is and who we are. The zero value means
// AWS S3 over HTTPS, the region looked up from the bucket, and the
// credentials of the default chain (see Open).
type Config struct {
	// Endpoint is "host", "host:port", or a URL "http://host:port" or
	// "https://host" whose scheme sets Insecure. Empty: s3.amazonaws.com.
	Endpoint string
	// Region of the bucket. Empty: asked of the store (one more request,
	// which some stores and policies refuse: set it).
	Region string
	// AccessKey and SecretKey, with SessionToken for temporary
	// credentials. Both empty: the credentials chain of Open.
	AccessKey, SecretKey, SessionToken string
	// Insecure speaks plain HTTP instead of HTTPS (a local MinIO, a test
	// server). An Endpoint URL with a scheme sets it.
	Insecure bool
	// PathStyle addresses the bucket as https://host/BUCKET/key, never
	// as https://BUCKET.host/key. false: minio-go chooses, virtual-host
	// style for AWS, Google and Aliyun endpoints, path style for any
	// other (MinIO, Ceph, a test server), so it matters for a store
	// behind an AWS-like name or a bucket without a DNS name.
	PathStyle bool

	// PartSize is the size of a multipart upload's parts, and files up
	// to this size go in one PUT. 0: 16 MiB. At least 5 MiB (the S3
	// minimum for all parts but the last); an upload holds one part in
	// memory.
	PartSize int64
	// MaxRetries is how many times a request is tried on an error that
	// may pass (a broken connection, HTTP 5xx, SlowDown, a bad digest);
	// for an upload, how many times the upload is tried, each try
	// reading the file again from its start (a multipart upload is
	// aborted and started anew). 0: 10, minio-go's default, with a
	// random wait of up to 200 ms × 2^n, at most 1 s, between tries.
	// The context of each call bounds the whole, retries included.
	MaxRetries int
}

const (
	defaultPartSize = 16 << 20
	minPartSize     = 5 << 20
)

// String prints the configuration without its secrets, so a Config that
// reaches a log or an error says which credentials it uses, never what
// they are.
func (c Config) String() string {
	show := func(s string) string {
		if s == "" {
			return `""`
		}
		return "(set)"
	}
	access := `""`
	if c.AccessKey != "" {
		access = "(set)"
	}
	return fmt.Sprintf("objstore.Config{Endpoint:%q Region:%q AccessKey:%s SecretKey:%s SessionToken:%s Insecure:%v PathStyle:%v PartSize:%d MaxRetries:%d}",
		c.Endpoint, c.Region, access, show(c.SecretKey), show(c.SessionToken), c.Insecure, c.PathStyle, c.PartSize, c.MaxRetries)
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

// ConfigFromEnv returns base with its unset fields filled from the usual
// environment variables:
//
//   - Endpoint: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (a URL
//     "http://host:9000" or "host:9000").
//   - Region: AWS_REGION, else AWS_DEFAULT_REGION.
//   - AccessKey, SecretKey, SessionToken: AWS_ACCESS_KEY_ID (or
//     AWS_ACCESS_KEY), AWS_SECRET_ACCESS_KEY (or AWS_SECRET_KEY) and
//     AWS_SESSION_TOKEN, taken as a pair, never mixed with base's: only
//     when base has neither key and the environment has both; the session
//     token comes with its pair.
//
// Fields base sets (flags) win over the environment. Insecure and
// PathStyle have no standard variable: an Endpoint URL's scheme sets the
// one, the -s3-path-style flag the other. Other sources of credentials
// (MINIO_ROOT_USER, the AWS shared credentials file, IAM) are the chain
// Open falls back to when the Config has no key.
func ConfigFromEnv(base Config) Config {
	c := base
	if c.Endpoint == "" {
		c.Endpoint = firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	}
	if c.Region == "" {
		c.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if c.AccessKey == "" && c.SecretKey == "" {
		id := firstEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY")
		secret := firstEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
		if id != "" && secret != "" {
			c.AccessKey, c.SecretKey = id, secret
			if c.SessionToken == "" {
				c.SessionToken = firstEnv("AWS_SESSION_TOKEN")
			}
		}
	}
	return c
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// endpoint resolves Endpoint and Insecure into minio-go's host[:port] and
// secure flag.
func (c Config) endpoint() (host string, secure bool, err error) {
	e := strings.TrimSpace(c.Endpoint)
	if e == "" {
		if c.Insecure {
			return "", false, fmt.Errorf("insecure (plain HTTP) was asked with no endpoint: AWS S3 is HTTPS only; give -s3-endpoint (or AWS_ENDPOINT_URL) for a store that speaks HTTP")
		}
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(e, "://") {
		if strings.ContainsAny(e, "/?#") {
			return "", false, fmt.Errorf("S3 endpoint %q: write host, host:port, or http(s)://host:port, with no path", c.Endpoint)
		}
		return e, !c.Insecure, nil
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: %v: write host, host:port, or http(s)://host:port", c.Endpoint, err)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: write host, host:port, or http(s)://host:port, with no path, query or user", c.Endpoint)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return u.Host, false, nil
	case "https":
		if c.Insecure {
			return "", false, fmt.Errorf("S3 endpoint %q is https but plain HTTP (-s3-insecure) was asked: drop one of the two", c.Endpoint)
		}
		return u.Host, true, nil
	default:
		return "", false, fmt.Errorf("S3 endpoint %q: scheme %q: use http:// or https://", c.Endpoint, u.Scheme)
	}
}

// credentials is the chain Open uses: the keys of the Config, then
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, then MINIO_ROOT_USER/
// MINIO_ROOT_PASSWORD (MINIO_ACCESS_KEY/MINIO_SECRET_KEY), then the AWS
// shared credentials file (AWS_SHARED_CREDENTIALS_FILE or
// ~/.aws/credentials, profile AWS_PROFILE or "default"), then IAM (web
// identity via AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, ECS and EKS
// container credentials, EC2 instance metadata). The first that gives a
// key wins; none gives anonymous requests.
func (c Config) credentials() *credentials.Credentials {
	var chain []credentials.Provider
	if c.AccessKey != "" || c.SecretKey != "" {
		chain = append(chain, &credentials.Static{Value: credentials.Value{
			AccessKeyID:     c.AccessKey,
			SecretAccessKey: c.SecretKey,
			SessionToken:    c.SessionToken,
			SignerType:      credentials.SignatureV4,
		}})
	}
	chain = append(chain,
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	)
	return credentials.NewChainCredentials(chain)
}
