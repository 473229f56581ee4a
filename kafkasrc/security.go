package kafkasrc

// Connecting to a secured cluster (TLS and SASL flags)
//
// By default ingest talks to the brokers in plain text without
// authentication. For real clusters:
//
//	-kafka-tls                       connect over TLS. Implied by every other
//	                                 -kafka-tls-* flag. Without -kafka-tls-ca
//	                                 the system's trusted CAs verify the brokers.
//	-kafka-tls-ca FILE               PEM file with the CA certificate(s) that
//	                                 signed the brokers' certificates.
//	-kafka-tls-cert FILE             PEM client certificate, for clusters that
//	-kafka-tls-key FILE              require one (mutual TLS); give both.
//	                                 The key must not be encrypted.
//	-kafka-tls-server-name NAME      host name the brokers' certificates are
//	                                 checked against, when it is not the host in
//	                                 -kafka-brokers (e.g. brokers reached by IP).
//	                                 The same name is checked for every broker.
//	-kafka-tls-insecure-skip-verify  do not verify the brokers' certificates.
//	                                 For tests only: anyone on the path can then
//	                                 pose as the broker and read the traffic.
//	-kafka-sasl-mechanism M          PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
//	                                 (case does not matter; empty: no SASL).
//	                                 PLAIN sends the password as it is: use it
//	                                 only together with TLS.
//	-kafka-sasl-user USER            the SASL user name.
//	-kafka-sasl-password-file FILE   file holding the SASL password (trailing
//	                                 line breaks are ignored). Or set the
//	                                 environment variable
//	                                 MCPTRACE_KAFKA_SASL_PASSWORD; the file wins
//	                                 when both are given.
//
// There is deliberately no flag that takes the password itself: command lines
// end up in shell history and in ps output. The password is never logged and
// never part of an error message.
//
// Example (SASL_SSL with SCRAM, the usual managed-cluster setup):
//
//	ingest -kafka-brokers b1.example.com:9093,b2.example.com:9093 \
//	  -kafka-topic mcp -kafka-group mcptrace -out DIR \
//	  -kafka-tls-ca /etc/kafka/ca.pem \
//	  -kafka-sasl-mechanism SCRAM-SHA-512 -kafka-sasl-user mcptrace \
//	  -kafka-sasl-password-file /run/secrets/kafka-password
//
// In a container whose secrets arrive as environment variables, map the
// secret to MCPTRACE_KAFKA_SASL_PASSWORD instead of the password file.
//
// When a connection is refused, the error says which flag to look at: an
// unknown CA (-kafka-tls-ca), a certificate for another name
// (-kafka-tls-server-name), a missing client certificate (-kafka-tls-cert),
// a refused login (-kafka-sasl-*), a TLS/plain-text mismatch (-kafka-tls).
//
// SCRAM-SHA-256 and SCRAM-SHA-512 are kafka-go's sasl/scram mechanisms, built
// on github.com/xdg-go/scram (RFC 5802 / RFC 7677): the user name and the
// password are normalised with SASLprep (RFC 4013) before use, and the
// broker's final signature is verified, so a server that does not know the
// password is refused too. A user name or password that SASLprep refuses
// (control characters, characters unassigned in Unicode 3.2 such as emoji)
// is an error from SASL, Dialer and Transport, before any connection; the
// error never shows the password.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// EnvSASLPassword is the environment variable the SASL password is read from
// when SASLPassword is empty (that is, when no password file was given).
const EnvSASLPassword = "MCPTRACE_KAFKA_SASL_PASSWORD"

// The SASL mechanisms Security accepts, in their canonical spelling.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// Security is how ingest connects to the brokers: TLS, SASL, both or neither.
// The zero value is plain text without authentication. Flags registers one
// flag per field; Dialer and Transport turn it into kafka-go's connection
// settings. String and MarshalJSON never show the password.
type Security struct {
	// TLS turns TLS on. Any of CAFile, CertFile, KeyFile, ServerName and
	// InsecureSkipVerify turns it on too.
	TLS bool
	// CAFile is a PEM file of the CA certificates that verify the brokers
	// (empty: the system's roots).
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its unencrypted
	// key, for brokers that require client certificates.
	CertFile, KeyFile string
	// ServerName is the name the brokers' certificates are verified against
	// (empty: the host of the address dialled).
	ServerName string
	// InsecureSkipVerify accepts any broker certificate. Tests only.
	InsecureSkipVerify bool

	// SASLMechanism is "", "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512"
	// (case-insensitive).
	SASLMechanism string
	SASLUser      string
	// SASLPassword is the password; when empty, EnvSASLPassword is used.
	// LoadPassword fills it from a file.
	SASLPassword string

	passwordFile string // where SASLPassword came from, for messages
}

// Flags registers the -kafka-tls* and -kafka-sasl-* flags on fs, bound to s.
// The password file named by -kafka-sasl-password-file is read while fs is
// parsed, so a missing or empty file is a parse error naming the flag.
func (s *Security) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&s.TLS, "kafka-tls", s.TLS,
		"connect to the Kafka brokers over TLS (implied by the other -kafka-tls-* flags); "+
			"without -kafka-tls-ca the system's trusted CAs verify the brokers")
	fs.StringVar(&s.CAFile, "kafka-tls-ca", s.CAFile,
		"PEM `file` with the CA certificate(s) that signed the Kafka brokers' certificates (default: the system's trusted CAs)")
	fs.StringVar(&s.CertFile, "kafka-tls-cert", s.CertFile,
		"PEM client certificate `file` for clusters that require one (mutual TLS); needs -kafka-tls-key")
	fs.StringVar(&s.KeyFile, "kafka-tls-key", s.KeyFile,
		"PEM `file` with the unencrypted private key of -kafka-tls-cert")
	fs.StringVar(&s.ServerName, "kafka-tls-server-name", s.ServerName,
		"host `name` to verify the brokers' certificates against when it differs from the host in -kafka-brokers "+
			"(e.g. brokers reached by IP); the same name is checked for every broker")
	fs.BoolVar(&s.InsecureSkipVerify, "kafka-tls-insecure-skip-verify", s.InsecureSkipVerify,
		"do not verify the brokers' TLS certificates: for tests only, anyone on the network path can pose as the broker")
	fs.StringVar(&s.SASLMechanism, "kafka-sasl-mechanism", s.SASLMechanism,
		"SASL `mechanism` to log in with: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL); "+
			"needs -kafka-sasl-user and a password. PLAIN sends the password as it is: use it only with TLS")
	fs.StringVar(&s.SASLUser, "kafka-sasl-user", s.SASLUser, "SASL user `name` to log in as (with -kafka-sasl-mechanism)")
	fs.Func("kafka-sasl-password-file",
		"`file` holding the SASL password (trailing line breaks ignored); instead, the environment variable "+
			EnvSASLPassword+" may hold it. There is no flag for the password itself, so it stays out of ps and shell history",
		s.LoadPassword)
}

// LoadPassword sets SASLPassword to the contents of file, without trailing
// line breaks. The error names the file, never its contents.
func (s *Security) LoadPassword(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("-kafka-sasl-password-file: %w (give a readable file that holds only the password)", err)
	}
	pw := strings.TrimRight(string(b), "\r\n")
	if pw == "" {
		return fmt.Errorf("-kafka-sasl-password-file %s is empty: write the SASL password into it", file)
	}
	s.SASLPassword = pw
	s.passwordFile = file
	return nil
}

// mechanism returns SASLMechanism in canonical spelling, "" for none.
func (s Security) mechanism() (string, error) {
	m := strings.ToUpper(strings.TrimSpace(s.SASLMechanism))
	switch m {
	case "", SASLPlain, SASLScramSHA256, SASLScramSHA512:
		return m, nil
	}
	return "", fmt.Errorf("-kafka-sasl-mechanism %q is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, or leave it empty for no SASL", s.SASLMechanism)
}

// password returns SASLPassword, or else the environment variable.
func (s Security) password() string {
	if s.SASLPassword != "" {
		return s.SASLPassword
	}
	return os.Getenv(EnvSASLPassword)
}

// TLSEnabled reports whether connections use TLS: TLS is set, or any
// TLS-only setting is.
func (s Security) TLSEnabled() bool {
	return s.TLS || s.CAFile != "" || s.CertFile != "" || s.KeyFile != "" ||
		s.ServerName != "" || s.InsecureSkipVerify
}

// Validate checks that the settings fit together, without reading any file.
// Its errors name the flag that is wrong and say what to do.
func (s Security) Validate() error {
	return errors.Join(s.validateTLS(), s.validateSASL())
}

func (s Security) validateTLS() error {
	var errs []error
	if s.CertFile != "" && s.KeyFile == "" {
		errs = append(errs, errors.New("-kafka-tls-cert needs -kafka-tls-key: give the PEM file with the certificate's private key"))
	}
	if s.KeyFile != "" && s.CertFile == "" {
		errs = append(errs, errors.New("-kafka-tls-key needs -kafka-tls-cert: give the PEM client certificate the key belongs to"))
	}
	if s.InsecureSkipVerify && s.CAFile != "" {
		errs = append(errs, errors.New("-kafka-tls-insecure-skip-verify switches off the check -kafka-tls-ca is for: drop one of the two"))
	}
	return errors.Join(errs...)
}

func (s Security) validateSASL() error {
	m, err := s.mechanism()
	if err != nil {
		return err
	}
	var errs []error
	if m == "" {
		if s.SASLUser != "" {
			errs = append(errs, errors.New("-kafka-sasl-user is set but -kafka-sasl-mechanism is not: add -kafka-sasl-mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"))
		}
		if s.SASLPassword != "" {
			errs = append(errs, errors.New("a SASL password is set (-kafka-sasl-password-file) but -kafka-sasl-mechanism is not: add -kafka-sasl-mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"))
		}
		return errors.Join(errs...)
	}
	if s.SASLUser == "" {
		errs = append(errs, fmt.Errorf("-kafka-sasl-mechanism %s needs -kafka-sasl-user", m))
	}
	if s.password() == "" {
		errs = append(errs, fmt.Errorf("-kafka-sasl-mechanism %s needs a password: put it in a file named by -kafka-sasl-password-file, or in the environment variable %s", m, EnvSASLPassword))
	}
	return errors.Join(errs...)
}

// TLSConfig returns the TLS client configuration, nil when TLS is off. It
// reads CAFile, CertFile and KeyFile.
func (s Security) TLSConfig() (*tls.Config, error) {
	if !s.TLSEnabled() {
		return nil, nil
	}
	if err := s.validateTLS(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         s.ServerName,
		InsecureSkipVerify: s.InsecureSkipVerify,
	}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("-kafka-tls-ca: %w (give the PEM file of the CA that signed the brokers' certificates)", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-kafka-tls-ca %s holds no PEM certificate (\"-----BEGIN CERTIFICATE-----\"): give the CA certificate in PEM form", s.CAFile)
		}
		cfg.RootCAs = pool
	}
	if s.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("-kafka-tls-cert %s / -kafka-tls-key %s: %w (give a PEM certificate and its unencrypted PEM private key)", s.CertFile, s.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// SASL returns the SASL mechanism to log in with, nil when SASL is off.
func (s Security) SASL() (sasl.Mechanism, error) {
	if err := s.validateSASL(); err != nil {
		return nil, err
	}
	m, _ := s.mechanism()
	switch m {
	case SASLPlain:
		return plain.Mechanism{Username: s.SASLUser, Password: s.password()}, nil
	case SASLScramSHA256:
		return s.scram(scram.SHA256)
	case SASLScramSHA512:
		return s.scram(scram.SHA512)
	}
	return nil, nil
}

// scram builds kafka-go's SCRAM mechanism. The only error is SASLprep
// refusing the user name or the password; xdg-go/scram names the user in it
// but never echoes the password or a character of it.
func (s Security) scram(algo scram.Algorithm) (sasl.Mechanism, error) {
	m, err := scram.Mechanism(algo, s.SASLUser, s.password())
	if err != nil {
		return nil, fmt.Errorf("-kafka-sasl-mechanism %s: %v (SASLprep, RFC 4013, refuses control characters, characters unassigned in Unicode 3.2 such as emoji, and mixed left-to-right/right-to-left text: fix -kafka-sasl-user or the password)", algo.Name(), err)
	}
	return m, nil
}

func (s Security) build() (*tls.Config, sasl.Mechanism, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, fmt.Errorf("kafka connection settings: %w", err)
	}
	t, err := s.TLSConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kafka connection settings: %w", err)
	}
	m, err := s.SASL()
	if err != nil {
		return nil, nil, fmt.Errorf("kafka connection settings: %w", err)
	}
	return t, m, nil
}

// Dialer returns a kafka-go Dialer (for Reader, Conn and consumer groups)
// with these settings; timeout bounds each dial including the TLS handshake
// and the SASL exchange (<= 0: 10 s, kafka-go's default).
func (s Security) Dialer(timeout time.Duration) (*kafka.Dialer, error) {
	t, m, err := s.build()
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &kafka.Dialer{Timeout: timeout, DualStack: true, TLS: t, SASLMechanism: m}, nil
}

// Transport returns a kafka-go Transport (for Writer and Client, e.g.
// ListOffsets) with these settings and kafka-go's default timeouts.
func (s Security) Transport() (*kafka.Transport, error) {
	t, m, err := s.build()
	if err != nil {
		return nil, err
	}
	return &kafka.Transport{TLS: t, SASL: m}, nil
}

// Explain returns err with a hint at the flag to fix when err looks like a
// connection refused for security reasons: an untrusted or misnamed broker
// certificate, a missing client certificate, a refused SASL login, or a
// broker that closed the connection or never answered (TLS or SASL expected
// on one side only). Other errors, and nil, come back unchanged; errors.Is
// and errors.As still see the original.
func (s Security) Explain(err error) error {
	if err == nil {
		return nil
	}
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		remote    *net.OpError
		record    tls.RecordHeaderError
	)
	var hint string
	switch {
	case errors.As(err, &unknownCA):
		hint = "the broker's certificate is signed by a CA this host does not trust: give that CA's PEM certificate with -kafka-tls-ca"
	case errors.As(err, &hostname):
		hint = "the broker's certificate does not name the host dialled: list the brokers by the names in their certificates, or set -kafka-tls-server-name"
	case errors.As(err, &invalid):
		hint = "the broker's certificate is not valid (expired, or not for a server): renew it on the broker"
	case errors.As(err, &remote) && remote.Op == "remote error" && strings.Contains(remote.Err.Error(), "certificate"):
		// The broker's TLS alert: certificate required, bad certificate,
		// unknown certificate authority, ...
		hint = "the broker wants a client certificate it trusts: give -kafka-tls-cert and -kafka-tls-key"
	case errors.As(err, &record):
		hint = "the broker does not speak TLS on this port: drop the -kafka-tls flags, or use the cluster's TLS listener"
	case errors.Is(err, kafka.SASLAuthenticationFailed):
		hint = "the broker refused the SASL login: check -kafka-sasl-mechanism, -kafka-sasl-user and the password"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		m, _ := s.mechanism()
		switch {
		case m == "" && !s.TLSEnabled():
			hint = "the broker closed the connection: if the cluster needs TLS or SASL, set -kafka-tls or -kafka-sasl-mechanism"
		case m == "":
			hint = "the broker closed the connection: if the cluster needs SASL, set -kafka-sasl-mechanism"
		default:
			hint = "the broker closed the connection: a refused SASL login (check -kafka-sasl-mechanism, -kafka-sasl-user and the password) or a TLS listener reached without -kafka-tls"
		}
	case s.TLSEnabled() && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)):
		hint = "no answer in time: if the port is a plain-text listener, drop the -kafka-tls flags"
	default:
		return err
	}
	return fmt.Errorf("%w; %s", err, hint)
}

// String describes the settings with the password masked.
func (s Security) String() string {
	var b strings.Builder
	b.WriteString("kafka security: ")
	if s.TLSEnabled() {
		fmt.Fprintf(&b, "TLS (ca=%q cert=%q key=%q server-name=%q insecure-skip-verify=%t)",
			s.CAFile, s.CertFile, s.KeyFile, s.ServerName, s.InsecureSkipVerify)
	} else {
		b.WriteString("no TLS")
	}
	if s.SASLMechanism == "" {
		b.WriteString(", no SASL")
	} else {
		pw := "none"
		switch {
		case s.SASLPassword != "" && s.passwordFile != "":
			pw = "from " + s.passwordFile
		case s.SASLPassword != "":
			pw = "set"
		case os.Getenv(EnvSASLPassword) != "":
			pw = "from $" + EnvSASLPassword
		}
		fmt.Fprintf(&b, ", SASL %s user=%q password %s", s.SASLMechanism, s.SASLUser, pw)
	}
	return b.String()
}

// GoString is String, so %#v does not print the password either.
func (s Security) GoString() string { return s.String() }

// MarshalJSON writes the settings with the password replaced by "[REDACTED]",
// so a logger that marshals the struct does not leak it.
func (s Security) MarshalJSON() ([]byte, error) {
	type plainSecurity Security // no methods: no recursion
	c := plainSecurity(s)
	if c.SASLPassword != "" {
		c.SASLPassword = "[REDACTED]"
	}
	return json.Marshal(c)
}
