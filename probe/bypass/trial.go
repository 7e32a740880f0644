// Package bypass is the list of ways a client might get around a limit
// (issue #33) and the rule that judges one: each trial is a request that
// differs from the probe's own in one thing a client controls, sent while
// the probe's own key is exhausted and compared with the own requests sent
// around it. It knows nothing of the network: the plan sends, this package
// says what to send and what the answers mean.
package bypass

import "fmt"

// Kind groups trials by what they change; each kind is one grading check.
type Kind string

// The kinds of trial.
const (
	Address  Kind = "address"  // a client-address header the limit may trust
	Path     Kind = "path"     // another spelling of the same path
	Method   Kind = "method"   // another method for the same resource
	Protocol Kind = "protocol" // another connection or protocol
	Identity Kind = "identity" // another User-Agent, no cookies
)

// Kinds are every kind, in the order the suite runs and reports them.
var Kinds = []Kind{Address, Path, Method, Protocol, Identity}

// Variant is how one request of a trial differs from the probe's own.
// Zero fields keep the probe's own.
type Variant struct {
	Method string   // the method, when not the probe's own
	Target string   // the request-target (path and query), when not the own
	Set    []string // header lines "Name: value", replacing the own of that name
	Drop   []string // header names left out (Cookie)
	Fresh  bool     // on a connection of its own
	// OtherProtocol names the HTTP version the probe does not speak, which
	// the request goes in ("HTTP/2" beside HTTP/1.1 over TLS, and back).
	OtherProtocol string
}

// Trial is one way around the limit.
type Trial struct {
	// Name is stable (it names the trial in JSON and in the phase of its
	// requests): "x-forwarded-for", "trailing-slash", ….
	Name string
	Kind Kind
	// What says in words what the trial changes.
	What string
	// Request is the n-th request of the trial (n from 1): fresh values
	// where it forges a new client each time.
	Request func(n int) Variant
}

// Base is what the trials are made from: the probe's own request and what
// the user allows.
type Base struct {
	Method string // the probe's method
	Target string // its request-target: path and query, as sent
	Cookie bool   // the probe's request carries cookies
	// Methods are other methods the user allows the suite to send
	// (--bypass-methods); HEAD for GET needs no permission (RFC 9110
	// §9.3.2: the same response without its content).
	Methods []string
	// TLS: the target is https, where a server may speak HTTP/2 beside
	// HTTP/1.1; HTTP2: the probe speaks HTTP/2 (--http2).
	TLS, HTTP2 bool
}

// Trials are every trial that applies to b, in the order they run: the
// first of each kind, then the rest kind by kind, so a suite cut short by
// its share of the budget has still tried every kind.
func Trials(b Base) []Trial {
	kinds := [][]Trial{addressTrials(), pathTrials(b.Target), methodTrials(b), protocolTrials(b), identityTrials(b)}
	var first, rest []Trial
	for _, ts := range kinds {
		if len(ts) > 0 {
			first, rest = append(first, ts[0]), append(rest, ts[1:]...)
		}
	}
	return append(first, rest...)
}

// forgedAddress is the n-th fresh client address of a forged header, from
// the documentation ranges (RFC 5737): never a real client's.
func forgedAddress(block, n int) string {
	prefixes := [...]string{"203.0.113", "198.51.100", "192.0.2"}
	return fmt.Sprintf("%s.%d", prefixes[block%len(prefixes)], n%254+1)
}
