package attack

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// TLS in the lean client.
//
// https targets go through the same h1conn as plain http: the connection is
// dialled and handshaken before it is needed (a burst prepares every one
// before its instant), and a request is written as TLS records. For a burst,
// all but the request's final byte go out in advance, and the final byte is
// encrypted in advance too, into a record of its own, which is held back
// (recordingConn) and written at the instant straight onto the TCP socket by
// the release threads — so releasing an https burst costs exactly what
// releasing an http one does: one small write per connection, no
// encryption, no handshake, no scheduler hand-off.
//
// This works because a TLS connection's records are sequenced only by the
// order they are encrypted in: the held record is the next one the server
// expects, and nothing else is written on that connection until it has gone
// out.

// TLSOptions say how https targets are verified and how the client
// identifies itself. The zero value verifies against the system's CAs.
type TLSOptions struct {
	Insecure   bool   // skip certificate verification
	CACertFile string // PEM file of CA certificates trusted in addition to the system's
	CertFile   string // PEM client certificate (mutual TLS); needs KeyFile
	KeyFile    string // PEM private key of CertFile
}

// Config builds the client configuration for serverName (the target URL's
// host). Sessions are resumed where the server offers tickets, and ALPN asks
// for HTTP/1.1, the only protocol this client speaks.
func (o TLSOptions) Config(serverName string) (*tls.Config, error) {
	conf := &tls.Config{
		ServerName:         serverName,
		MinVersion:         tls.VersionTLS12,
		NextProtos:         []string{"http/1.1"},
		ClientSessionCache: tls.NewLRUClientSessionCache(0),
		InsecureSkipVerify: o.Insecure, //nolint:gosec // the user asked for it
	}
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("CA certificate file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA certificate file %s holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)", o.CACertFile)
		}
		conf.RootCAs = pool
	}
	switch {
	case o.CertFile != "" && o.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s with key %s: %w", o.CertFile, o.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	case o.CertFile == "" && o.KeyFile == "":
		conf.GetClientCertificate = noteCertRequest
	case o.CertFile != "":
		return nil, fmt.Errorf("client certificate %s has no key file: give both a certificate and its private key", o.CertFile)
	default:
		return nil, fmt.Errorf("client key %s has no certificate file: give both a certificate and its private key", o.KeyFile)
	}
	return conf, nil
}

// leanClient returns the address the h1 connections dial for u and the
// constructor of those connections. A TLS configuration that cannot be
// built (an unreadable CA file, ...) makes every connection fail with why.
func leanClient(u *url.URL, opt Options) (addr string, newConn func() *h1conn) {
	addr = u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Scheme != "https" {
		return addr, func() *h1conn { return newH1conn(addr, nil, opt.Timeout) }
	}
	conf, err := opt.TLS.Config(u.Hostname())
	if err != nil {
		return addr, func() *h1conn { return &h1conn{addr: addr, timeout: opt.Timeout, broken: err} }
	}
	return addr, func() *h1conn { return newH1conn(addr, conf, opt.Timeout) }
}

// recordingConn is the TCP connection under a TLS client. While holding, it
// keeps what TLS writes instead of sending it: the encrypted final record of
// a burst request, for the release threads to write at the instant.
type recordingConn struct {
	net.Conn
	holding bool
	held    []byte
	sealed  []byte // seal's buffer
}

func (c *recordingConn) Write(b []byte) (int, error) {
	if c.holding {
		c.held = append(c.held, b...)
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// hold encrypts b through tc as it would be sent, and returns the records
// instead of sending them.
func (c *recordingConn) hold(tc *tls.Conn, b []byte) ([]byte, error) {
	c.holding, c.held = true, nil
	_, err := tc.Write(b)
	c.holding = false
	held := c.held
	c.held = nil
	return held, err
}

// seal encrypts b through tc as it would be sent and returns the records
// instead of sending them, in a buffer of c's own that the next seal
// reuses: a request's records, which the read of its response writes
// (rawTCP.sendOnRead).
func (c *recordingConn) seal(tc *tls.Conn, b []byte) ([]byte, error) {
	c.holding, c.held = true, c.sealed[:0]
	_, err := tc.Write(b)
	c.holding = false
	c.sealed, c.held = c.held, nil
	return c.sealed, err
}

// certAsked is the context key under which a connection's handshake finds
// where to note that the server asked for a client certificate.
type certAsked struct{}

// noteCertRequest records, when no client certificate is configured, that
// the server asked for one: under TLS 1.3 the handshake still succeeds and
// the server's refusal arrives later as an alert, or only as a closed
// connection, which alone would not say why.
func noteCertRequest(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if asked, ok := cri.Context().Value(certAsked{}).(*bool); ok {
		*asked = true
	}
	return &tls.Certificate{}, nil
}

// errClientCertWanted wraps the failure of a connection whose server asked
// for a client certificate that was not given.
type errClientCertWanted struct{ err error }

func (e errClientCertWanted) Error() string { return e.err.Error() }
func (e errClientCertWanted) Unwrap() error { return e.err }

// clientCertRequired is one message for the several ways a server refuses a
// client without a certificate (an alert, a reset, a closed connection), so
// a run's error counts group them.
func clientCertRequired(addr string) string {
	return fmt.Sprintf("%s requires a client certificate (it asked for one and refused the connection without it): pass one with --cert FILE --key FILE", addr)
}

// errNoHTTP1 is a server whose ALPN offers no HTTP/1.1.
var errNoHTTP1 = errors.New("server does not speak HTTP/1.1 over TLS (its ALPN offers only other protocols, e.g. h2)")

// describeTLSErr says what went wrong in a TLS handshake or session and how
// to fix it; ok is false for an error that is not TLS's.
func describeTLSErr(addr string, err error) (msg string, ok bool) {
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		var unknown x509.UnknownAuthorityError
		var host x509.HostnameError
		var invalid x509.CertificateInvalidError
		switch {
		case errors.As(certErr.Err, &unknown):
			return fmt.Sprintf("TLS certificate of %s is signed by an unknown authority: pass its CA certificate with --cacert FILE, or skip verification with --insecure", addr), true
		case errors.As(certErr.Err, &host):
			return fmt.Sprintf("TLS certificate of %s is not valid for this host: %v (target the name it was issued for, or skip verification with --insecure)", addr, host), true
		case errors.As(certErr.Err, &invalid):
			return fmt.Sprintf("TLS certificate of %s is not valid: %v (renew it, or skip verification with --insecure)", addr, invalid), true
		}
		return fmt.Sprintf("TLS certificate of %s not trusted: %v (pass its CA with --cacert FILE, or skip verification with --insecure)", addr, certErr.Err), true
	}
	var wanted errClientCertWanted
	if errors.As(err, &wanted) {
		return clientCertRequired(addr), true
	}
	if errors.Is(err, errNoHTTP1) || errors.Is(err, errNoH2) {
		return fmt.Sprintf("%s: %v", addr, err), true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "remote error" {
		alert := opErr.Err.Error()
		switch {
		case strings.Contains(alert, "certificate required"):
			return clientCertRequired(addr), true
		case strings.Contains(alert, "bad certificate"), strings.Contains(alert, "unknown certificate authority"),
			strings.Contains(alert, "certificate unknown"), strings.Contains(alert, "expired certificate"):
			return fmt.Sprintf("%s rejected the client certificate, or wants one (TLS alert %q): check --cert and --key, and that the server trusts their CA", addr, alert), true
		case strings.Contains(alert, "no application protocol"):
			return fmt.Sprintf("%s: %v", addr, errNoHTTP1), true
		case strings.Contains(alert, "protocol version"):
			return fmt.Sprintf("%s refused the TLS version (TLS alert %q): it needs TLS 1.2 or newer on both sides", addr, alert), true
		}
		return fmt.Sprintf("TLS handshake with %s failed: the server sent alert %q", addr, alert), true
	}
	var recErr tls.RecordHeaderError
	if errors.As(err, &recErr) {
		return fmt.Sprintf("%s did not answer with TLS (is it plain http? use an http:// URL)", addr), true
	}
	return "", false
}
