package cmd

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// tlsHintTimeout bounds the one handshake the hint costs: a port that
// speaks TLS answers a ClientHello at once.
const tlsHintTimeout = time.Second

// httpsHint says, for an http:// target whose port speaks TLS, to use an
// https:// URL: the mirror of attack's "is it plain http? use an http://
// URL". An HTTPS server answers a plain request with a 400 (Go, nginx), a
// TLS alert (bytes 0x15 0x03) or a closed connection, none of which names
// TLS for certain; a TLS handshake with the port does. It is tried only
// after a run got no limiter decision at all, so a working target never
// pays for it. "" when the port does not speak TLS.
func httpsHint(target string) string {
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

// withHTTPSHint adds httpsHint to the verdict and the error of a run that
// tested nothing.
func withHTTPSHint(res *attack.RunResult, target string, err error) error {
	if res.Untested == "" {
		return err
	}
	hint := httpsHint(target)
	if hint == "" {
		return err
	}
	res.Report.Verdict += "; " + hint
	return fmt.Errorf("%w; %s", err, hint)
}

// withProbeHTTPSHint adds httpsHint to the inconclusive reason (and the
// error) of a probe that was answered but reached no limiter.
func withProbeHTTPSHint(res *probe.Result, target string, err error) error {
	if res.Inference.Family != probe.Inconclusive || res.Observation.Stopped != "" || !answeredWithoutDecision(res.Observation.Results) {
		return err
	}
	hint := httpsHint(target)
	if hint == "" {
		return err
	}
	res.Inference.Reason += "; " + hint
	if err != nil {
		err = fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// answeredWithoutDecision says whether something answered (a status, or
// the first bytes of a reply) but none of the answers was an admission or
// a rejection: what a plain request to an HTTPS port gets. A server that
// never answers is left out, so that it does not cost a handshake's
// timeout more.
func answeredWithoutDecision(results []results.Result) bool {
	answered := false
	for i := range results {
		r := &results[i]
		if r.Admitted() || r.Rejected() {
			return false
		}
		answered = answered || r.Status > 0 || r.FirstByte > 0
	}
	return answered
}
