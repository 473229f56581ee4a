package kafkasrc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// secPassword is distinctive so that tests can assert it appears in no
// error message and no rendering of a Security.
const secPassword = "s3cr3t-Pa55word-do-not-print"

// secPKI is a throwaway CA with broker and client certificates, written as
// PEM files into a test's temporary directory.
type secPKI struct {
	caFile, otherCAFile string
	caPool              *x509.CertPool
	server              tls.Certificate // SANs 127.0.0.1 and localhost
	serverDNSOnly       tls.Certificate // SAN broker.kafka.test only
	clientCert          string          // client certificate signed by the CA
	clientKey           string
	strangerCert        string // client certificate signed by the other CA
	strangerKey         string
}

type secCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func secKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func secSerial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func secNewCA(t *testing.T, name string) secCA {
	t.Helper()
	key := secKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          secSerial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return secCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate and returns its PEM certificate and key.
func (ca secCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (certPEM, keyPEM []byte) {
	t.Helper()
	key := secKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: secSerial(t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func secWrite(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newSecPKI(t *testing.T) *secPKI {
	t.Helper()
	dir := t.TempDir()
	ca, other := secNewCA(t, "mcptrace test CA"), secNewCA(t, "some other CA")
	p := &secPKI{
		caFile:      secWrite(t, dir, "ca.pem", ca.pem),
		otherCAFile: secWrite(t, dir, "other-ca.pem", other.pem),
		caPool:      x509.NewCertPool(),
	}
	p.caPool.AddCert(ca.cert)
	var err error
	c, k := ca.issue(t, "broker", x509.ExtKeyUsageServerAuth, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if p.server, err = tls.X509KeyPair(c, k); err != nil {
		t.Fatal(err)
	}
	c, k = ca.issue(t, "broker", x509.ExtKeyUsageServerAuth, []string{"broker.kafka.test"}, nil)
	if p.serverDNSOnly, err = tls.X509KeyPair(c, k); err != nil {
		t.Fatal(err)
	}
	c, k = ca.issue(t, "mcptrace", x509.ExtKeyUsageClientAuth, nil, nil)
	p.clientCert, p.clientKey = secWrite(t, dir, "client.pem", c), secWrite(t, dir, "client-key.pem", k)
	c, k = other.issue(t, "stranger", x509.ExtKeyUsageClientAuth, nil, nil)
	p.strangerCert, p.strangerKey = secWrite(t, dir, "stranger.pem", c), secWrite(t, dir, "stranger-key.pem", k)
	return p
}

// secCluster starts a one-broker kfake cluster with topic seeded (one
// partition) and returns its address.
func secCluster(t *testing.T, topic string, opts ...kfake.Opt) string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, topic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func secCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// secRoundTrip proves that s connects every way the consumer and its tests
// use kafka-go: a Writer and a Client (ListOffsets) on s.Transport, a Conn
// and a consumer-group Reader (join, fetch, commit) on s.Dialer.
func secRoundTrip(t *testing.T, addr, topic string, s Security) {
	t.Helper()
	ctx := secCtx(t, 60*time.Second)

	tr, err := s.Transport()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{
		Addr: kafka.TCP(addr), Topic: topic, Transport: tr,
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 3,
	}
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("session-1"), Value: []byte("via writer")}); err != nil {
		t.Fatalf("Writer on Transport: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := s.Dialer(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.DialLeader(ctx, "tcp", addr, topic, 0)
	if err != nil {
		t.Fatalf("Conn on Dialer: %v", err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.WriteMessages(kafka.Message{Key: []byte("session-2"), Value: []byte("via conn")}); err != nil {
		t.Fatalf("Conn on Dialer: write: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}

	cl := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: 10 * time.Second}
	lo, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0)}},
	})
	if err != nil {
		t.Fatalf("Client.ListOffsets on Transport: %v", err)
	}
	if ps := lo.Topics[topic]; len(ps) != 1 || ps[0].Error != nil || ps[0].LastOffset != 2 {
		t.Fatalf("ListOffsets = %+v, want partition 0 with end offset 2", lo.Topics)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{addr}, Topic: topic, GroupID: "g-" + topic, Dialer: d,
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond,
	})
	defer r.Close()
	for i, want := range []string{"via writer", "via conn"} {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("group Reader on Dialer: message %d: %v", i, err)
		}
		if string(m.Value) != want || m.Offset != int64(i) {
			t.Fatalf("message %d = %q at offset %d, want %q at %d", i, m.Value, m.Offset, want, i)
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatalf("commit on Dialer: %v", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	committed, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "g-" + topic, Topics: map[string][]int{topic: {0}}})
	if err != nil {
		t.Fatalf("OffsetFetch: %v", err)
	}
	if ps := committed.Topics[topic]; len(ps) != 1 || ps[0].CommittedOffset != 2 {
		t.Fatalf("committed = %+v, want offset 2", committed.Topics)
	}
}

// secRefused asserts that s cannot connect to addr, by the Dialer and by
// the Transport, within the deadline (so a refusal, not a hang), that the
// errors do not carry the password and that s.Explain adds a hint
// mentioning hint to both. It returns the Dialer's error.
func secRefused(t *testing.T, addr, topic string, s Security, hint string) error {
	t.Helper()
	ctx := secCtx(t, 20*time.Second)
	d, err := s.Dialer(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn, derr := d.DialLeader(ctx, "tcp", addr, topic, 0)
	if derr == nil {
		// With TLS 1.3 the broker judges the client certificate after the
		// client's handshake is done: the refusal arrives on first use.
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, derr = conn.ReadPartitions(topic)
		conn.Close()
	}
	if derr == nil {
		t.Fatal("Dialer: connected, want a refusal")
	}
	tr, err := s.Transport()
	if err != nil {
		t.Fatal(err)
	}
	tr.DialTimeout = 5 * time.Second
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: 10 * time.Second}
	_, terr := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if terr == nil {
		t.Fatal("Transport: Metadata succeeded, want a refusal")
	}
	for _, err := range []error{derr, terr} {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			t.Fatalf("timed out instead of being refused: %v", err)
		}
		if strings.Contains(err.Error(), secPassword) {
			t.Fatalf("error shows the password: %v", err)
		}
		if x := s.Explain(err); !strings.Contains(x.Error(), hint) || !errors.Is(x, err) {
			t.Errorf("Explain(%v) = %v, want a hint naming %s", err, x, hint)
		}
	}
	t.Logf("refused as expected: dialer: %v; transport: %v", s.Explain(derr), s.Explain(terr))
	return derr
}

func TestSecuritySASL(t *testing.T) {
	for _, mech := range []string{SASLPlain, SASLScramSHA256, SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			topic := "sasl-" + strings.ToLower(mech)
			addr := secCluster(t, topic, kfake.EnableSASL(),
				kfake.Superuser(mech, "mcptrace", secPassword),
				kfake.Superuser(SASLScramSHA256, "other", "other-password"))
			// The mechanism is case-insensitive on the command line.
			secRoundTrip(t, addr, topic, Security{SASLMechanism: strings.ToLower(mech), SASLUser: "mcptrace", SASLPassword: secPassword})

			t.Run("wrong password", func(t *testing.T) {
				err := secRefused(t, addr, topic, Security{SASLMechanism: mech, SASLUser: "mcptrace", SASLPassword: secPassword + "x"}, "-kafka-sasl-user")
				if !errors.Is(err, kafka.SASLAuthenticationFailed) {
					t.Errorf("dialer error %v is not kafka.SASLAuthenticationFailed", err)
				}
			})
			t.Run("unknown user", func(t *testing.T) {
				secRefused(t, addr, topic, Security{SASLMechanism: mech, SASLUser: "nobody", SASLPassword: secPassword}, "-kafka-sasl-user")
			})
			t.Run("no SASL", func(t *testing.T) {
				// The broker really enforces authentication: without it
				// nothing but the handshake is answered.
				secRefused(t, addr, topic, Security{}, "-kafka-sasl-mechanism")
			})
		})
	}
}

func TestSecuritySASLPasswordFromEnvironment(t *testing.T) {
	topic := "sasl-env"
	addr := secCluster(t, topic, kfake.EnableSASL(), kfake.Superuser(SASLScramSHA512, "mcptrace", secPassword))
	t.Setenv(EnvSASLPassword, secPassword)
	secRoundTrip(t, addr, topic, Security{SASLMechanism: SASLScramSHA512, SASLUser: "mcptrace"})
}

func TestSecurityTLS(t *testing.T) {
	pki := newSecPKI(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12}

	t.Run("verified by CA", func(t *testing.T) {
		t.Parallel()
		addr := secCluster(t, "tls", kfake.TLS(serverTLS))
		// -kafka-tls-ca alone implies TLS.
		secRoundTrip(t, addr, "tls", Security{CAFile: pki.caFile})
	})
	t.Run("unknown CA", func(t *testing.T) {
		t.Parallel()
		addr := secCluster(t, "tls-unknown-ca", kfake.TLS(serverTLS))
		err := secRefused(t, addr, "tls-unknown-ca", Security{CAFile: pki.otherCAFile}, "-kafka-tls-ca")
		if !errors.As(err, new(x509.UnknownAuthorityError)) {
			t.Errorf("error %v is not x509.UnknownAuthorityError", err)
		}
		// Without -kafka-tls-ca the system's roots do not know the CA either.
		err = secRefused(t, addr, "tls-unknown-ca", Security{TLS: true}, "-kafka-tls-ca")
		if !errors.As(err, new(x509.UnknownAuthorityError)) {
			t.Errorf("error %v is not x509.UnknownAuthorityError", err)
		}
		// Unless verification is switched off.
		secRoundTrip(t, addr, "tls-unknown-ca", Security{TLS: true, InsecureSkipVerify: true})
	})
	t.Run("server name", func(t *testing.T) {
		t.Parallel()
		addr := secCluster(t, "tls-name", kfake.TLS(&tls.Config{Certificates: []tls.Certificate{pki.serverDNSOnly}, MinVersion: tls.VersionTLS12}))
		// The certificate does not name 127.0.0.1, the address dialled.
		err := secRefused(t, addr, "tls-name", Security{CAFile: pki.caFile}, "-kafka-tls-server-name")
		if !errors.As(err, new(x509.HostnameError)) {
			t.Errorf("error %v is not x509.HostnameError", err)
		}
		secRoundTrip(t, addr, "tls-name", Security{CAFile: pki.caFile, ServerName: "broker.kafka.test"})
	})
	t.Run("client certificate", func(t *testing.T) {
		t.Parallel()
		mtls := serverTLS.Clone()
		mtls.ClientAuth = tls.RequireAndVerifyClientCert
		mtls.ClientCAs = pki.caPool
		addr := secCluster(t, "mtls", kfake.TLS(mtls))
		secRoundTrip(t, addr, "mtls", Security{CAFile: pki.caFile, CertFile: pki.clientCert, KeyFile: pki.clientKey})
		t.Run("none", func(t *testing.T) {
			secRefused(t, addr, "mtls", Security{CAFile: pki.caFile}, "-kafka-tls-cert")
		})
		t.Run("from another CA", func(t *testing.T) {
			secRefused(t, addr, "mtls", Security{CAFile: pki.caFile, CertFile: pki.strangerCert, KeyFile: pki.strangerKey}, "-kafka-tls-cert")
		})
	})
	t.Run("plain-text client", func(t *testing.T) {
		t.Parallel()
		addr := secCluster(t, "tls-plain-client", kfake.TLS(serverTLS))
		secRefused(t, addr, "tls-plain-client", Security{}, "-kafka-tls")
	})
	t.Run("with SCRAM", func(t *testing.T) {
		t.Parallel()
		// SASL_SSL, what managed clusters usually ask for.
		addr := secCluster(t, "tls-scram", kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.Superuser(SASLScramSHA256, "mcptrace", secPassword))
		secRoundTrip(t, addr, "tls-scram", Security{CAFile: pki.caFile, SASLMechanism: SASLScramSHA256, SASLUser: "mcptrace", SASLPassword: secPassword})
		secRefused(t, addr, "tls-scram", Security{CAFile: pki.caFile, SASLMechanism: SASLScramSHA256, SASLUser: "mcptrace", SASLPassword: "wrong"}, "-kafka-sasl-user")
	})
}

func TestSecurityTLSFileErrors(t *testing.T) {
	pki := newSecPKI(t)
	dir := t.TempDir()
	notPEM := secWrite(t, dir, "not.pem", []byte("hello"))
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		s    Security
		want []string
	}{
		{"missing CA", Security{CAFile: missing}, []string{"-kafka-tls-ca", missing}},
		{"CA not PEM", Security{CAFile: notPEM}, []string{"-kafka-tls-ca", notPEM, "no PEM certificate"}},
		{"cert not PEM", Security{CertFile: notPEM, KeyFile: pki.clientKey}, []string{"-kafka-tls-cert", notPEM, pki.clientKey}},
		{"key of another cert", Security{CertFile: pki.clientCert, KeyFile: pki.strangerKey}, []string{"-kafka-tls-cert", pki.clientCert, pki.strangerKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.s.Dialer(time.Second); err == nil {
				t.Fatal("Dialer: no error")
			}
			_, err := tc.s.Transport()
			if err == nil {
				t.Fatal("Transport: no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestSecurityValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Security
		want []string // substrings of the error; none: valid
	}{
		{"zero value", Security{}, nil},
		{"scram", Security{SASLMechanism: "scram-sha-256", SASLUser: "u", SASLPassword: secPassword}, nil},
		{"unknown mechanism", Security{SASLMechanism: "GSSAPI", SASLUser: "u", SASLPassword: secPassword},
			[]string{"-kafka-sasl-mechanism", "GSSAPI", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"}},
		{"no user", Security{SASLMechanism: "SCRAM-SHA-256", SASLPassword: secPassword},
			[]string{"-kafka-sasl-mechanism SCRAM-SHA-256 needs -kafka-sasl-user"}},
		{"no password", Security{SASLMechanism: "plain", SASLUser: "u"},
			[]string{"-kafka-sasl-mechanism PLAIN needs a password", "-kafka-sasl-password-file", EnvSASLPassword}},
		{"neither", Security{SASLMechanism: "SCRAM-SHA-512"},
			[]string{"needs -kafka-sasl-user", "needs a password"}},
		{"user without mechanism", Security{SASLUser: "u"}, []string{"-kafka-sasl-user is set but -kafka-sasl-mechanism is not"}},
		{"password without mechanism", Security{SASLPassword: secPassword}, []string{"-kafka-sasl-mechanism is not"}},
		{"cert without key", Security{CertFile: "c.pem"}, []string{"-kafka-tls-cert needs -kafka-tls-key"}},
		{"key without cert", Security{KeyFile: "k.pem"}, []string{"-kafka-tls-key needs -kafka-tls-cert"}},
		{"skip verify and CA", Security{CAFile: "ca.pem", InsecureSkipVerify: true}, []string{"-kafka-tls-insecure-skip-verify", "-kafka-tls-ca"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			_, derr := tc.s.Dialer(time.Second)
			_, terr := tc.s.Transport()
			if tc.want == nil {
				if err != nil || derr != nil || terr != nil {
					t.Fatalf("Validate, Dialer, Transport: %v, %v, %v; want no error", err, derr, terr)
				}
				return
			}
			if err == nil || derr == nil || terr == nil {
				t.Fatalf("Validate, Dialer, Transport: %v, %v, %v; want errors", err, derr, terr)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			for _, e := range []error{err, derr, terr} {
				if strings.Contains(e.Error(), secPassword) {
					t.Errorf("error shows the password: %v", e)
				}
			}
		})
	}
}

func TestSecurityValidatePasswordFromEnvironment(t *testing.T) {
	s := Security{SASLMechanism: "SCRAM-SHA-256", SASLUser: "u"}
	t.Setenv(EnvSASLPassword, "")
	if err := s.Validate(); err == nil {
		t.Fatal("no password anywhere: want an error")
	}
	t.Setenv(EnvSASLPassword, secPassword)
	if err := s.Validate(); err != nil {
		t.Fatalf("password in %s: %v", EnvSASLPassword, err)
	}
	// Set without a mechanism it is ignored: the environment may be shared.
	if err := (Security{}).Validate(); err != nil {
		t.Fatalf("zero value with %s set: %v", EnvSASLPassword, err)
	}
}

func TestSecurityFlags(t *testing.T) {
	dir := t.TempDir()
	pwFile := secWrite(t, dir, "pw", []byte(secPassword+"\r\n"))
	var s Security
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.Flags(fs)
	err := fs.Parse([]string{
		"-kafka-tls", "-kafka-tls-ca", "ca.pem", "-kafka-tls-cert", "c.pem", "-kafka-tls-key", "k.pem",
		"-kafka-tls-server-name", "b.example", "-kafka-tls-insecure-skip-verify",
		"-kafka-sasl-mechanism", "scram-sha-512", "-kafka-sasl-user", "bob", "-kafka-sasl-password-file", pwFile,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Security{TLS: true, CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem", ServerName: "b.example",
		InsecureSkipVerify: true, SASLMechanism: "scram-sha-512", SASLUser: "bob", SASLPassword: secPassword, passwordFile: pwFile}
	if s != want {
		t.Fatalf("parsed %#v\nwant   %#v", s, want)
	}

	// Every flag has a help text.
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Usage) < 20 {
			t.Errorf("-%s: help text %q says too little", f.Name, f.Usage)
		}
	})
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if got := strings.Join(names, " "); got != "kafka-sasl-mechanism kafka-sasl-password-file kafka-sasl-user kafka-tls kafka-tls-ca kafka-tls-cert kafka-tls-insecure-skip-verify kafka-tls-key kafka-tls-server-name" {
		t.Errorf("flags = %s", got)
	}
}

func TestSecurityFlagsPasswordFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file string
		want       string
	}{
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"empty", secWrite(t, dir, "empty", []byte("\n")), "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Security
			fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			s.Flags(fs)
			err := fs.Parse([]string{"-kafka-sasl-password-file", tc.file})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range []string{"-kafka-sasl-password-file", tc.file, tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestSecurityPasswordNeverRendered(t *testing.T) {
	s := Security{CAFile: "ca.pem", SASLMechanism: "PLAIN", SASLUser: "bob", SASLPassword: secPassword}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{s.String(), fmt.Sprintf("%v %+v %#v %s", s, s, s, s), fmt.Sprint(&s), string(js)} {
		if strings.Contains(out, secPassword) {
			t.Errorf("password shown in %q", out)
		}
		if !strings.Contains(out, "bob") {
			t.Errorf("%q does not show the user", out)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil || back["SASLPassword"] != "[REDACTED]" || back["CAFile"] != "ca.pem" {
		t.Errorf("JSON %s (%v): want CAFile and a redacted password", js, err)
	}
}

// SASLprep (done by xdg-go/scram) refuses a control character in the
// password or the user name: the error names the flags, not the password.
func TestSecuritySCRAMRefusesUnpreppable(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Security
		want string
	}{
		{"password", Security{SASLMechanism: SASLScramSHA512, SASLUser: "mcptrace", SASLPassword: secPassword + "\a"}, "password"},
		{"user", Security{SASLMechanism: SASLScramSHA256, SASLUser: "mcp\x00trace", SASLPassword: secPassword}, "username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.s.SASL()
			if err == nil {
				t.Fatalf("SASL() = %v, want a SASLprep error", m)
			}
			for _, want := range []string{tc.want, "-kafka-sasl-mechanism " + strings.ToUpper(tc.s.SASLMechanism), "fix -kafka-sasl-user or the password"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if strings.Contains(err.Error(), secPassword) {
				t.Fatalf("error shows the password: %v", err)
			}
			if _, err := tc.s.Dialer(time.Second); err == nil {
				t.Error("Dialer accepted settings SASL() refuses")
			}
			if _, err := tc.s.Transport(); err == nil {
				t.Error("Transport accepted settings SASL() refuses")
			}
		})
	}
}

// A TLS client at a plain-text listener: the broker waits for the rest of
// what it takes for a huge request, so the client gives up at its deadline,
// and Explain points at the TLS flags.
func TestSecurityTLSClientAtPlainTextListener(t *testing.T) {
	t.Parallel()
	addr := secCluster(t, "plain")
	s := Security{TLS: true, InsecureSkipVerify: true}
	ctx := secCtx(t, 20*time.Second)
	d, err := s.Dialer(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, derr := d.DialLeader(ctx, "tcp", addr, "plain", 0)
	tr, err := s.Transport()
	if err != nil {
		t.Fatal(err)
	}
	tr.DialTimeout = time.Second
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: 2 * time.Second}
	_, terr := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"plain"}})
	if ctx.Err() != nil {
		t.Fatal("the test's own deadline passed: the dial timeouts did not bound the attempt")
	}
	for _, err := range []error{derr, terr} {
		if err == nil {
			t.Fatal("connected over TLS to a plain-text listener")
		}
		if x := s.Explain(err); !strings.Contains(x.Error(), "drop the -kafka-tls flags") {
			t.Errorf("Explain(%v) = %v, want the hint at the TLS flags", err, x)
		}
	}
}

func TestSecurityExplainLeavesOtherErrors(t *testing.T) {
	var s Security
	if s.Explain(nil) != nil {
		t.Fatal("Explain(nil) != nil")
	}
	e := errors.New("topic not found")
	if s.Explain(e) != e {
		t.Fatal("an unrelated error was changed")
	}
	// A timeout without TLS says nothing about security settings.
	if s.Explain(context.DeadlineExceeded) != context.DeadlineExceeded {
		t.Fatal("a plain-text timeout got a TLS hint")
	}
}
