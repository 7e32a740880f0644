package refserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Key words (Options.Key and its additions). The address sources say where
// scope=ip reads the client's address; path and user-agent add what the
// client writes to the key. Every word but peer is a defect a bypass trial
// finds: the honest limit is keyed on what the client cannot choose.
const (
	KeyPath      = "path"       // the raw request target, query included: each spelling its own counter
	KeyUserAgent = "user-agent" // the User-Agent: a new one is a new client
)

// addressSources are the words that say where scope=ip reads the address.
var addressSources = []string{KeyPeer, KeyForwarded, KeyClientIP}

// keyWords are every word key= accepts.
var keyWords = append(slices.Clone(addressSources), KeyPath, KeyUserAgent)

// setKey reads key=WORD[,WORD...]: at most one address source, and path
// or user-agent.
func (o *Options) setKey(value string) error {
	o.Key, o.KeyPath, o.KeyUserAgent = KeyPeer, false, false
	sources := 0
	for w := range strings.SplitSeq(value, ",") {
		switch w = strings.TrimSpace(w); {
		case slices.Contains(addressSources, w):
			if sources++; sources > 1 {
				return fmt.Errorf("key %q names two address sources: keep one of %s", value, strings.Join(addressSources, ", "))
			}
			o.Key = w
		case w == KeyPath:
			o.KeyPath = true
		case w == KeyUserAgent:
			o.KeyUserAgent = true
		default:
			return fmt.Errorf("key %q: use peer (the TCP peer address), forwarded (trust X-Forwarded-For, X-Real-IP, Forwarded), client-ip (trust X-Client-IP, True-Client-IP, CF-Connecting-IP and the like), path (the raw request target) or user-agent, several joined by commas", value)
		}
	}
	return nil
}

// setMethods reads methods=GET[,POST...]: the methods the limit counts.
func (o *Options) setMethods(value string) error {
	o.Methods = nil
	for m := range strings.SplitSeq(value, ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == "" || strings.ContainsFunc(m, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			return fmt.Errorf("methods %q: write HTTP methods joined by commas, e.g. GET,POST", value)
		}
		o.Methods = append(o.Methods, m)
	}
	return nil
}

// CheckKey refuses an address source without an address to read: forwarded
// and client-ip read the client's address, so they need scope=ip.
func (o *Options) CheckKey() error {
	if o.Key != KeyPeer && o.Key != "" && o.Scope != "ip" {
		return fmt.Errorf("key=%s reads the client address, so it needs scope=ip", o.Key)
	}
	return nil
}

// counts reports whether the limit counts r: every method, unless Methods
// names the ones it does.
func (o *Options) counts(r *http.Request) bool {
	return len(o.Methods) == 0 || slices.Contains(o.Methods, r.Method)
}

// requestKey is the key r is limited by: its scope's, then what key= adds.
func (h *Handler) requestKey(r *http.Request) string {
	k := h.key(r)
	if h.opt.KeyPath {
		k += " " + r.RequestURI
	}
	if h.opt.KeyUserAgent {
		k += " " + r.UserAgent()
	}
	return k
}
