package refserver

import (
	"net"
	"net/http"
	"strings"
)

// Where scope=ip takes the client's address (Options.Key).
const (
	KeyPeer      = "peer"      // the TCP peer: what a client cannot choose
	KeyForwarded = "forwarded" // the proxy headers when present: any client can choose
	KeyClientIP  = "client-ip" // the CDN and proxy client-address headers: any client can choose
)

// clientIPHeaders are the client-address headers CDNs and proxies set, in
// the order a library that trusts them all reads them (key=client-ip).
var clientIPHeaders = []string{"X-Client-IP", "True-Client-IP", "CF-Connecting-IP", "X-Originating-IP",
	"X-Remote-IP", "X-Remote-Addr", "Client-IP", "X-Cluster-Client-IP"}

// clientAddr is the address a request is limited by. With KeyForwarded it
// is what X-Forwarded-For (its first entry), X-Real-IP or Forwarded (its
// first for=) say, as a library behind a "trust proxy" switch reads them;
// behind no proxy that overwrites them, every client names its own key.
func clientAddr(r *http.Request, key string) string {
	if key == KeyForwarded {
		if v := r.Header.Get("X-Forwarded-For"); v != "" {
			first, _, _ := strings.Cut(v, ",")
			return strings.TrimSpace(first)
		}
		if v := strings.TrimSpace(r.Header.Get("X-Real-IP")); v != "" {
			return v
		}
		if v := forwardedFor(r.Header.Get("Forwarded")); v != "" {
			return v
		}
	}
	if key == KeyClientIP {
		for _, name := range clientIPHeaders {
			if v := strings.TrimSpace(r.Header.Get(name)); v != "" {
				return v
			}
		}
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return host
}

// forwardedFor is the first for= of an RFC 7239 Forwarded header.
func forwardedFor(v string) string {
	first, _, _ := strings.Cut(v, ",")
	for pair := range strings.SplitSeq(first, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(name, "for") {
			return strings.Trim(value, `"`)
		}
	}
	return ""
}
