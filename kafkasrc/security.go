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
// SCRAM is implemented here on the standard library (RFC 5802 / RFC 7677),
// like Kafka's own Java client: the password is used as its UTF-8 bytes,
// without SASLprep, and the broker's final signature is verified, so a server
// that does not know the password is refused too.

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
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
		return scramMechanism{name: m, hash: sha256.New, user: s.SASLUser, pass: s.password()}, nil
	case SASLScramSHA512:
		return scramMechanism{name: m, hash: sha512.New, user: s.SASLUser, pass: s.password()}, nil
	}
	return nil, nil
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

// scramMechanism is SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802, RFC 7677)
// without channel binding, as Kafka speaks it. It is immutable, so one value
// serves concurrent connections; each Start begins a new exchange. (kafka-go's
// own sasl/scram package needs github.com/xdg-go/scram, which is not among
// this module's dependencies; this is the whole of what Kafka uses of it.)
type scramMechanism struct {
	name       string
	hash       func() hash.Hash
	user, pass string
}

func (m scramMechanism) Name() string { return m.name }

func (m scramMechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	sess := m.session(rand.Text()) // 26 base32 characters: printable, no ","
	return sess, []byte("n,," + sess.clientFirstBare), nil
}

// session begins an exchange with the given client nonce (tests fix it).
func (m scramMechanism) session(nonce string) *scramSession {
	// RFC 5802 section 5.1: "=" and "," in the name are escaped.
	user := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(m.user)
	return &scramSession{m: m, nonce: nonce, clientFirstBare: "n=" + user + ",r=" + nonce}
}

// Iteration counts a broker may ask for. Kafka accepts 4096 to 16384; fewer
// would weaken the stored credential (a downgrade), and a huge count would
// only burn CPU here.
const (
	scramMinIterations = 4096
	scramMaxIterations = 1 << 20
)

type scramSession struct {
	m               scramMechanism
	nonce           string
	clientFirstBare string
	serverSignature []byte // expected in server-final, once client-final is sent
	step            int
}

// scramAttrs parses "k=v,k=v" into a map; values may contain "=".
func scramAttrs(msg string) (map[byte]string, error) {
	attrs := make(map[byte]string)
	for f := range strings.SplitSeq(msg, ",") {
		if len(f) < 2 || f[1] != '=' {
			return nil, fmt.Errorf("malformed attribute %q", f)
		}
		attrs[f[0]] = f[2:]
	}
	return attrs, nil
}

func (s *scramSession) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	switch s.step {
	case 0:
		s.step++
		out, err := s.clientFinal(string(challenge))
		if err != nil {
			return false, nil, fmt.Errorf("%s: broker's first message: %w", s.m.name, err)
		}
		return false, out, nil
	case 1:
		s.step++
		if err := s.verifyServerFinal(string(challenge)); err != nil {
			return false, nil, fmt.Errorf("%s: broker's final message: %w", s.m.name, err)
		}
		return true, nil, nil
	}
	return false, nil, fmt.Errorf("%s: broker sent more messages than the exchange has", s.m.name)
}

func (s *scramSession) clientFinal(serverFirst string) ([]byte, error) {
	attrs, err := scramAttrs(serverFirst)
	if err != nil {
		return nil, err
	}
	if e, ok := attrs['e']; ok {
		return nil, fmt.Errorf("refused: %s", e)
	}
	if _, ok := attrs['m']; ok {
		return nil, errors.New("asks for a mandatory extension this client does not know")
	}
	nonce, salt64, iter64 := attrs['r'], attrs['s'], attrs['i']
	if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
		return nil, errors.New("the nonce does not extend ours: not a reply to this exchange")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return nil, fmt.Errorf("salt %q is not base64", salt64)
	}
	iter, err := strconv.Atoi(iter64)
	if err != nil || iter < scramMinIterations || iter > scramMaxIterations {
		return nil, fmt.Errorf("iteration count %q is not between %d and %d", iter64, scramMinIterations, scramMaxIterations)
	}
	salted, err := pbkdf2.Key(s.m.hash, s.m.pass, salt, iter, s.m.hash().Size())
	if err != nil {
		return nil, fmt.Errorf("deriving the key: %w", err)
	}
	withoutProof := "c=biws,r=" + nonce // biws: base64("n,,"), no channel binding
	authMessage := []byte(s.clientFirstBare + "," + serverFirst + "," + withoutProof)

	clientKey := s.hmac(salted, []byte("Client Key"))
	h := s.m.hash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)
	proof := s.hmac(storedKey, authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	s.serverSignature = s.hmac(s.hmac(salted, []byte("Server Key")), authMessage)
	return []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)), nil
}

func (s *scramSession) verifyServerFinal(serverFinal string) error {
	attrs, err := scramAttrs(serverFinal)
	if err != nil {
		return err
	}
	if e, ok := attrs['e']; ok {
		return fmt.Errorf("refused: %s", e)
	}
	v, err := base64.StdEncoding.DecodeString(attrs['v'])
	if err != nil || !hmac.Equal(v, s.serverSignature) {
		return errors.New("the broker's signature does not match: it does not know this user's credentials (wrong broker, or someone in between)")
	}
	return nil
}

func (s *scramSession) hmac(key, msg []byte) []byte {
	mac := hmac.New(s.m.hash, key)
	mac.Write(msg)
	return mac.Sum(nil)
}
