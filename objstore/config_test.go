package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	good := []struct{ in, bucket, prefix string }{
		{"s3://bkt", "bkt", ""},
		{"s3://bkt/", "bkt", ""},
		{"s3://bkt/data", "bkt", "data"},
		{"s3://bkt/data/", "bkt", "data"},
		{"s3://bkt//data//", "bkt", "data"},
		{"s3://bkt/a/b/c", "bkt", "a/b/c"},
		{"S3://bkt/a", "bkt", "a"},
		{"s3://my.bucket-1/x=1/y", "my.bucket-1", "x=1/y"},
	}
	for _, g := range good {
		b, p, err := ParseURL(g.in)
		if err != nil || b != g.bucket || p != g.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", g.in, b, p, err, g.bucket, g.prefix)
		}
	}
	bad := []struct{ in, want string }{
		{"bkt/data", "not an S3 URL"},
		{"/local/dir", "not an S3 URL"},
		{"gs://bkt/data", "not an S3 URL"},
		{"s3:/bkt", "not an S3 URL"},
		{"s3://", "names no bucket"},
		{"s3:///data", "names no bucket"},
		{"s3://b/data", "not valid"}, // too short
		{"s3://bkt..x/a", "not valid"},
		{"s3://-bkt/a", "not valid"},
		{"s3://bkt/a//b", "segment"},
		{"s3://bkt/a/../b", "segment"},
		{"s3://bkt/./a", "segment"},
		{"s3://bkt/a\nb", "control"},
	}
	for _, b := range bad {
		_, _, err := ParseURL(b.in)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseURL(%q) error = %v, want one saying %q", b.in, err, b.want)
		}
	}
}

func TestCheckRel(t *testing.T) {
	for _, ok := range []string{"a", "exchanges/dt=2026-10-17/f-00001.parquet", ".mcptrace/scopes/t-0/manifest.json"} {
		if err := checkRel(ok); err != nil {
			t.Errorf("checkRel(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "/a", "a/", "a//b", "../a", "a/./b", `a\b`, "a\x00b"} {
		if err := checkRel(bad); err == nil {
			t.Errorf("checkRel(%q) accepted", bad)
		}
	}
}

// clearEnv empties every variable ConfigFromEnv and the credentials chain
// read, so the tests do not depend on the machine's environment.
func clearEnv(t *testing.T) {
	for _, k := range []string{
		"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
		"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	} {
		t.Setenv(k, "")
	}
}

func TestConfigFromEnv(t *testing.T) {
	clearEnv(t)
	if got := ConfigFromEnv(Config{}); got != (Config{}) {
		t.Fatalf("empty environment filled %v", got)
	}

	t.Setenv("AWS_ENDPOINT_URL", "http://generic:9000")
	t.Setenv("AWS_DEFAULT_REGION", "eu-west-3")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
	t.Setenv("AWS_SESSION_TOKEN", "envtoken")
	got := ConfigFromEnv(Config{PathStyle: true})
	want := Config{Endpoint: "http://generic:9000", Region: "eu-west-3", AccessKey: "AKIAENV", SecretKey: "envsecret", SessionToken: "envtoken", PathStyle: true}
	if got != want {
		t.Fatalf("ConfigFromEnv = %#v, want %#v", got, want)
	}

	// The S3-specific endpoint and AWS_REGION win over the generic ones.
	t.Setenv("AWS_ENDPOINT_URL_S3", "https://s3.example:443")
	t.Setenv("AWS_REGION", "eu-central-1")
	got = ConfigFromEnv(Config{})
	if got.Endpoint != "https://s3.example:443" || got.Region != "eu-central-1" {
		t.Fatalf("endpoint, region = %q, %q", got.Endpoint, got.Region)
	}

	// Flags win; keys come as a pair, with their token, never mixed.
	got = ConfigFromEnv(Config{Endpoint: "flag:9000", Region: "flag-region", AccessKey: "AKIAFLAG", SecretKey: "flagsecret"})
	if got.Endpoint != "flag:9000" || got.Region != "flag-region" || got.AccessKey != "AKIAFLAG" || got.SecretKey != "flagsecret" || got.SessionToken != "" {
		t.Fatalf("flags lost: %#v", got)
	}
	got = ConfigFromEnv(Config{AccessKey: "AKIAFLAG"})
	if got.SecretKey != "" || got.SessionToken != "" {
		t.Fatalf("an env secret was paired with a flag key: %#v", got)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SECRET_KEY", "legacysecret")
	got = ConfigFromEnv(Config{})
	if got.AccessKey != "AKIAENV" || got.SecretKey != "legacysecret" {
		t.Fatalf("legacy AWS_SECRET_KEY not read: %#v", got)
	}
	t.Setenv("AWS_SECRET_KEY", "")
	got = ConfigFromEnv(Config{})
	if got.AccessKey != "" || got.SecretKey != "" || got.SessionToken != "" {
		t.Fatalf("an access key without its secret was taken: %#v", got)
	}
}

func TestConfigStringHidesSecrets(t *testing.T) {
	c := Config{Endpoint: "h:1", AccessKey: "AKIAVISIBLE", SecretKey: "s3cr3t-value", SessionToken: "t0ken-value"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(&c)} {
		if strings.Contains(s, "s3cr3t") || strings.Contains(s, "t0ken") || strings.Contains(s, "AKIAVISIBLE") {
			t.Errorf("secret printed: %s", s)
		}
		if !strings.Contains(s, `Endpoint:"h:1"`) || !strings.Contains(s, "SecretKey:(set)") {
			t.Errorf("configuration not printed: %s", s)
		}
	}
}

func TestEndpoint(t *testing.T) {
	good := []struct {
		c      Config
		host   string
		secure bool
	}{
		{Config{}, "s3.amazonaws.com", true},
		{Config{Endpoint: "minio:9000"}, "minio:9000", true},
		{Config{Endpoint: "minio:9000", Insecure: true}, "minio:9000", false},
		{Config{Endpoint: "http://minio:9000"}, "minio:9000", false},
		{Config{Endpoint: "http://minio:9000/"}, "minio:9000", false},
		{Config{Endpoint: "HTTPS://s3.example"}, "s3.example", true},
		{Config{Endpoint: " http://[::1]:9000 "}, "[::1]:9000", false},
	}
	for _, g := range good {
		host, secure, err := g.c.endpoint()
		if err != nil || host != g.host || secure != g.secure {
			t.Errorf("endpoint(%q, insecure %v) = %q, %v, %v; want %q, %v", g.c.Endpoint, g.c.Insecure, host, secure, err, g.host, g.secure)
		}
	}
	bad := []struct {
		c    Config
		want string
	}{
		{Config{Insecure: true}, "no endpoint"},
		{Config{Endpoint: "https://s3.example", Insecure: true}, "drop one"},
		{Config{Endpoint: "ftp://h"}, "scheme"},
		{Config{Endpoint: "http://h:9000/bucket"}, "no path"},
		{Config{Endpoint: "h:9000/bucket"}, "no path"},
		{Config{Endpoint: "http://user:pw@h"}, "no path, query or user"},
	}
	for _, b := range bad {
		_, _, err := b.c.endpoint()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("endpoint(%q, insecure %v) error = %v, want one saying %q", b.c.Endpoint, b.c.Insecure, err, b.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	f := newFake(t, "bkt")
	ctx := context.Background()

	_, err := Open(ctx, "s3://nosuchbucket/p", f.config())
	if err == nil || !strings.Contains(err.Error(), "s3://nosuchbucket/p") || !strings.Contains(err.Error(), "create bucket nosuchbucket") {
		t.Errorf("missing bucket: %v", err)
	}

	c := f.config()
	c.SecretKey = ""
	if _, err := Open(ctx, "s3://bkt", c); err == nil || !strings.Contains(err.Error(), "secret key") {
		t.Errorf("key without secret: %v", err)
	}
	c = f.config()
	c.PartSize = 1 << 20
	if _, err := Open(ctx, "s3://bkt", c); err == nil || !strings.Contains(err.Error(), "part size") {
		t.Errorf("1 MiB parts: %v", err)
	}
	if _, err := Open(ctx, "/local/dir", f.config()); err == nil || !strings.Contains(err.Error(), "not an S3 URL") {
		t.Errorf("local path: %v", err)
	}

	f.setRule(func(r *http.Request) fault { return fault{kind: deny403} })
	_, err = Open(ctx, "s3://bkt/p", f.config())
	var e *Error
	if !errors.As(err, &e) || e.Op != "open" || !strings.Contains(err.Error(), "s3://bkt/p") ||
		!strings.Contains(err.Error(), "refused the credentials") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("credentials refused: %v", err)
	}
	f.setRule(nil)

	// Nothing listens: the error names the endpoint and says what to check.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c = f.config()
	c.Endpoint = "http://" + addr
	c.MaxRetries = 1
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = Open(tctx, "s3://bkt", c)
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "-s3-endpoint") {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

// TestCredentialsChain: with no keys in the Config, Open signs with the
// environment's keys, else with the AWS shared credentials file's.
func TestCredentialsChain(t *testing.T) {
	clearEnv(t)
	f := newFake(t, "bkt")
	c := f.config()
	c.AccessKey, c.SecretKey = "", ""
	signedBy := func() string {
		reqs := f.requests()
		auth := reqs[len(reqs)-1].Auth
		_, after, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return "(unsigned: " + auth + ")"
		}
		id, _, _ := strings.Cut(after, "/")
		return id
	}
	open := func() {
		t.Helper()
		s, err := Open(context.Background(), "s3://bkt", c)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFROMENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
	open()
	if got := signedBy(); got != "AKIAFROMENV" {
		t.Errorf("signed by %s, want the environment's AKIAFROMENV", got)
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("MINIO_ROOT_USER", "minioroot")
	t.Setenv("MINIO_ROOT_PASSWORD", "miniopassword")
	open()
	if got := signedBy(); got != "minioroot" {
		t.Errorf("signed by %s, want MINIO_ROOT_USER's minioroot", got)
	}

	t.Setenv("MINIO_ROOT_USER", "")
	t.Setenv("MINIO_ROOT_PASSWORD", "")
	file := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(file, []byte("[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = x\n\n[ingest]\naws_access_key_id = AKIAFROMFILE\naws_secret_access_key = filesecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	t.Setenv("AWS_PROFILE", "ingest")
	open()
	if got := signedBy(); got != "AKIAFROMFILE" {
		t.Errorf("signed by %s, want the file's profile ingest, AKIAFROMFILE", got)
	}

	// Keys in the Config win over all of these.
	c = f.config()
	open()
	if got := signedBy(); got != "AKIATEST" {
		t.Errorf("signed by %s, want the Config's AKIATEST", got)
	}
}

// TestOpenEndpointForms: "host:port" with Insecure reaches the HTTP
// server; without it the client speaks HTTPS to it and the error says to
// check -s3-insecure.
func TestOpenEndpointForms(t *testing.T) {
	f := newFake(t, "bkt")
	c := f.config()
	c.Endpoint = strings.TrimPrefix(f.srv.URL, "http://")
	c.Insecure = true
	s, err := Open(context.Background(), "s3://bkt/p", c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutBytes(context.Background(), "a.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	c.Insecure = false
	_, err = Open(context.Background(), "s3://bkt/p", c)
	if err == nil || !strings.Contains(err.Error(), "-s3-insecure") || !strings.Contains(err.Error(), c.Endpoint) {
		t.Fatalf("HTTPS to an HTTP server: %v", err)
	}
}
