package attack

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"
)

// tlsHintTimeout bounds the one handshake the hint costs: a port that
// speaks TLS answers a ClientHello at once.
const tlsHintTimeout = time.Second

// HTTPSHint says, for an http:// target whose port speaks TLS, to use an
// https:// URL: the mirror of tls.go's "is it plain http? use an http://
// URL". An HTTPS server answers a plain request with a 400 (Go, nginx), a
// TLS alert (bytes 0x15 0x03) or a closed connection, none of which names
// TLS for certain; a TLS handshake with the port does. It is tried only
// after a run got no limiter decision at all, so a working target never
// pays for it. "" when the port does not speak TLS.
func HTTPSHint(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		return ""
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	// Only the handshake matters: whose certificate it is does not, and
	// nothing is sent over the connection.
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: tlsHintTimeout}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
	if err != nil {
		return ""
	}
	conn.Close()
	u.Scheme = "https"
	return fmt.Sprintf("%s speaks TLS: use an https:// URL (%s)", u.Host, u)
}

// WithHTTPSHint adds HTTPSHint to the verdict and the error of a run that
// tested nothing.
func (res *RunResult) WithHTTPSHint(target string, err error) error {
	if res.Untested == "" {
		return err
	}
	hint := HTTPSHint(target)
	if hint == "" {
		return err
	}
	res.Report.Verdict += "; " + hint
	return fmt.Errorf("%w; %s", err, hint)
}
