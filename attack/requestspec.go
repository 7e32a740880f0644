package attack

import (
	"net/netip"
	"strings"
	"time"
)

// RequestSpec is the request and the engine's options as a command line
// gives them (the flags bind to its fields): Check refuses what cannot be
// sent before anything is, Request builds the request once the target's
// URL is known, Options the engine's options. Messages name fields as
// Names says (Options.Names).
type RequestSpec struct {
	Method      string
	Headers     []string // "Name: value"
	Body        string   // literal, or @file
	KeyHeader   string   // the header that carries each client's key
	Keys        int      // distinct key values to send in KeyHeader
	Timeout     time.Duration
	TLS         TLSOptions
	HTTP2       bool
	SourceAddrs string // addresses or CIDRs the connections bind (LocalSources)
	MaxRequests int
	MaxDuration time.Duration
	// Methods are those a shot's Variation may send instead of the
	// request's own (a probe's bypass trials), besides HEAD.
	Methods []string
	Names   func(field string) string
}

// Check refuses a spec that cannot be sent: a budget or timeout that is
// not positive, keys with no header to carry them, a certificate without
// its key, source addresses that are not this machine's, TLS files that
// do not load. Each error is a *ConfigError.
func (s RequestSpec) Check() error {
	o := Options{Names: s.Names}
	switch {
	case s.MaxRequests < 1:
		return configErr("Options.MaxRequests", "%s must be ≥ 1", o.name("Options.MaxRequests"))
	case !ValidMethods(s.Methods):
		return configErr("RequestSpec.Methods", "%s %q: write HTTP methods joined by commas, e.g. POST,PUT", o.name("RequestSpec.Methods"), strings.Join(s.Methods, ","))
	case s.MaxDuration <= 0:
		return configErr("Options.MaxDuration", "%s must be positive", o.name("Options.MaxDuration"))
	case s.Timeout <= 0:
		return configErr("Options.Timeout", "%s must be positive", o.name("Options.Timeout"))
	case s.Keys < 0:
		return configErr("RequestSpec.Keys", "%s must be ≥ 0", o.name("RequestSpec.Keys"))
	case s.Keys > 0 && s.KeyHeader == "":
		return configErr("RequestSpec.Keys", "%s needs %s NAME to say where the key goes", o.name("RequestSpec.Keys"), o.name("RequestSpec.KeyHeader"))
	case (s.TLS.CertFile == "") != (s.TLS.KeyFile == ""):
		return configErr("TLSOptions.CertFile", "%s and %s go together: give the client certificate and its private key",
			o.name("TLSOptions.CertFile"), o.name("TLSOptions.KeyFile"))
	}
	if s.SourceAddrs != "" {
		if _, err := LocalSources(s.SourceAddrs); err != nil {
			return configErr("RequestSpec.SourceAddrs", "%s: %v", o.name("RequestSpec.SourceAddrs"), err)
		}
	}
	if _, err := s.TLS.Config(""); err != nil {
		return configErr("TLSOptions", "TLS options (%s, %s, %s): %v",
			o.name("TLSOptions.CACertFile"), o.name("TLSOptions.CertFile"), o.name("TLSOptions.KeyFile"), err)
	}
	return nil
}

// Request is the request to url: the method, headers and body the spec
// gives (NewRequest), the key in KeyHeader.
func (s RequestSpec) Request(url string) (*Request, error) {
	r, err := NewRequest(s.Method, url, s.Headers, s.Body)
	if err != nil {
		return nil, err
	}
	r.KeyHeader = s.KeyHeader
	return r, nil
}

// Options are the engine's options the spec gives; Check has refused bad
// source addresses.
func (s RequestSpec) Options() Options {
	var sources []netip.Addr
	if s.SourceAddrs != "" {
		sources, _ = ParseSources(s.SourceAddrs)
	}
	return Options{Timeout: s.Timeout, TLS: s.TLS, HTTP2: s.HTTP2, MaxRequests: s.MaxRequests, MaxDuration: s.MaxDuration,
		Keys: s.Keys, Sources: sources, Names: s.Names}
}
