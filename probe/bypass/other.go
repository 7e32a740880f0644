package bypass

import (
	"fmt"
	"net/http"
)

// methodTrials send the same resource with another method: HEAD for GET
// (safe, and a router that serves GET serves HEAD), others only when the
// user allows them (--bypass-methods): they may change state.
func methodTrials(b Base) []Trial {
	var methods []string
	if b.Method == http.MethodGet || b.Method == "" {
		methods = append(methods, http.MethodHead)
	}
	for _, m := range b.Methods {
		if m != b.Method && m != http.MethodHead {
			methods = append(methods, m)
		}
	}
	out := make([]Trial, 0, len(methods))
	for _, m := range methods {
		out = append(out, Trial{Name: "method-" + headerTrialName(m), Kind: Method, What: fmt.Sprintf("%s instead of %s", m, b.Method),
			Request: func(int) Variant { return Variant{Method: m} }})
	}
	return out
}

// protocolTrials send the own request on a new connection (a limit keyed
// on the connection gives every reconnect a fresh quota) and, on an https
// target, in the other HTTP version (a limit that counts one of them only:
// a rule written before HTTP/2 was switched on, a frontend per protocol).
func protocolTrials(b Base) []Trial {
	out := []Trial{{Name: "new-connection", Kind: Protocol, What: "the same request on a new connection",
		Request: func(int) Variant { return Variant{Fresh: true} }}}
	if b.TLS {
		name, other, own := "http2", "HTTP/2", "HTTP/1.1"
		if b.HTTP2 {
			name, other, own = "http1.1", own, other
		}
		out = append(out, Trial{Name: name, Kind: Protocol, What: other + " instead of " + own,
			Request: func(int) Variant { return Variant{OtherProtocol: other} }})
	}
	return out
}

// identityTrials change what names the client but is not its address: the
// User-Agent (new each request), and the cookies when the request has any.
func identityTrials(b Base) []Trial {
	out := []Trial{{Name: "user-agent", Kind: Identity, What: "a new User-Agent each request",
		Request: func(n int) Variant {
			return Variant{Set: []string{fmt.Sprintf("User-Agent: Mozilla/5.0 (ratecheck %d)", n)}}
		}}}
	if b.Cookie {
		out = append(out, Trial{Name: "no-cookies", Kind: Identity, What: "the request without its cookies",
			Request: func(int) Variant { return Variant{Drop: []string{"Cookie"}} }})
	}
	return out
}
