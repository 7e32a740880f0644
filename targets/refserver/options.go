// Package refserver exposes a reference limiter from package targets/limiter over
// HTTP: the server behind `ratecheck serve` and builtin: limiter. Its
// response contract (status, Retry-After, quota headers, problem+json) is
// configurable so every grading check can be shown passing and failing.
package refserver

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Header modes.
const (
	HeadersNone       = "none"
	HeadersXRateLimit = "x-ratelimit"
	HeadersIETF       = "ietf"
	HeadersBoth       = "both"
)

// Options is everything a reference server is built from.
type Options struct {
	Limiter    limiter.Config
	Status     int    // rejection status: 429 or 503
	Headers    string // one of the Headers* modes
	RetryAfter bool   // send Retry-After on rejections
	Scope      string // "global", "ip", "connection" or "header:NAME"
	// Key is where scope=ip reads the client's address: "peer" (the TCP
	// peer), "forwarded" (X-Forwarded-For, X-Real-IP or Forwarded when
	// present, as many libraries trust by default: spoofable) or
	// "client-ip" (the first of the CDN and proxy client-address headers).
	Key string
	// KeyPath and KeyUserAgent add the raw request target (query
	// included) and the User-Agent to the key: the defects of a limit keyed
	// on what the client writes (key=path, key=user-agent; key.go).
	KeyPath, KeyUserAgent bool
	// Methods are the methods the limit counts (none: every method); a
	// request of another method is answered without counting (methods=).
	Methods []string
	Latency time.Duration // fixed backend time for admitted requests
	Fault   Faults        // deliberate contract violations (faults.go); none by default
}

// DefaultOptions is a token bucket 10/s burst 20 answering 429 with
// Retry-After and both header styles.
func DefaultOptions() Options {
	return Options{Limiter: limiter.Defaults(), Status: 429, Headers: HeadersBoth, RetryAfter: true, Scope: "global", Key: KeyPeer}
}

// Set assigns one option by its command-line name (serve's flag names and
// builtin: query keys are the same words).
func (o *Options) Set(name, value string) error {
	switch name {
	case "status":
		n, err := strconv.Atoi(value)
		if err != nil || (n != 429 && n != 503) {
			return fmt.Errorf("status %q: use 429 or 503", value)
		}
		o.Status = n
	case "headers":
		modes := []string{HeadersNone, HeadersXRateLimit, HeadersIETF, HeadersBoth}
		if !slices.Contains(modes, value) {
			return fmt.Errorf("headers %q: use one of %s", value, strings.Join(modes, ", "))
		}
		o.Headers = value
	case "retry-after":
		switch value {
		case "on", "true", "1":
			o.RetryAfter = true
		case "off", "false", "0":
			o.RetryAfter = false
		default:
			return fmt.Errorf("retry-after %q: use on or off", value)
		}
	case "scope":
		if value != "global" && value != "ip" && value != "connection" && !(strings.HasPrefix(value, "header:") && len(value) > len("header:")) {
			return fmt.Errorf("scope %q: use global, ip, connection or header:NAME", value)
		}
		o.Scope = value
	case "key":
		return o.setKey(value)
	case "methods":
		return o.setMethods(value)
	case "latency":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return fmt.Errorf("latency %q: write a non-negative duration like 20ms", value)
		}
		o.Latency = d
	case "fault":
		f, err := ParseFaults(value)
		if err != nil {
			return err
		}
		// Faults accumulate, so a builtin: target may repeat the key.
		if o.Fault, err = o.Fault.Add(f...); err != nil {
			return err
		}
	default:
		if !slices.Contains(limiter.ParamNames(), name) {
			return fmt.Errorf("unknown key %q: use one of %s", name, strings.Join(KeyNames(), ", "))
		}
		return o.Limiter.Set(name, value)
	}
	return nil
}

// Configure is DefaultOptions with each setting (a name and its value, as
// serve's flags and builtin: keys give them) set in turn, then checked as
// ParseBuiltin checks a spec: the limiter can run, the key is usable.
func Configure(settings [][2]string) (Options, error) {
	o := DefaultOptions()
	for _, kv := range settings {
		if err := o.Set(kv[0], kv[1]); err != nil {
			return o, err
		}
	}
	if err := o.Limiter.Validate(); err != nil {
		return o, err
	}
	return o, o.CheckKey()
}

// KeyNames are every key Set accepts but algo (a builtin: target names its
// algorithm before the '?'; serve has --algo).
func KeyNames() []string {
	var out []string
	for _, n := range limiter.ParamNames() {
		if n != "algo" {
			out = append(out, n)
		}
	}
	return append(out, optionNames[:]...)
}

// optionNames are the server options Set accepts besides the limiter's.
var optionNames = [...]string{"status", "headers", "retry-after", "scope", "key", "methods", "latency", "fault"}

// OptionNames are the server options Set accepts besides the limiter's (a
// new slice each call).
func OptionNames() []string { return append([]string(nil), optionNames[:]...) }

// BuiltinPrefix starts a target string that names a reference limiter.
const BuiltinPrefix = "builtin:"

// ParseBuiltin reads "builtin:ALGO?key=value&..." into Options, starting from
// DefaultOptions. Keys are serve's flag names.
func ParseBuiltin(spec string) (Options, error) {
	o := DefaultOptions()
	rest, ok := strings.CutPrefix(spec, BuiltinPrefix)
	if !ok {
		return o, fmt.Errorf("%q is not a builtin: target", spec)
	}
	algo, query, _ := strings.Cut(rest, "?")
	if algo == "" {
		return o, fmt.Errorf("%q names no algorithm: write e.g. builtin:token_bucket?rate=10/s&burst=20", spec)
	}
	o.Limiter.Algo = algo
	// ParseQuery would turn '+' into a space; rates never contain one, but a
	// header scope could, so use PathUnescape per pair instead.
	seen := map[string]string{} // key → the pair that first set it
	for pair := range strings.SplitSeq(query, "&") {
		if pair == "" {
			continue
		}
		k, v, found := strings.Cut(pair, "=")
		if !found {
			return o, fmt.Errorf("%s: %q has no value: write key=value", spec, pair)
		}
		if k == "algo" {
			return o, fmt.Errorf("%s: the algorithm is the word after builtin:, not a key: write builtin:%s?...", spec, v)
		}
		// A repeated key would silently keep the last value (rate=10/s&rate=1/s
		// runs at 1/s); only fault accumulates, so only it may repeat.
		if first, dup := seen[k]; dup && k != "fault" {
			return o, fmt.Errorf("%s: key %q is given twice (%s and %s): keep one", spec, k, first, pair)
		}
		seen[k] = pair
		uv, err := url.PathUnescape(v)
		if err != nil {
			return o, fmt.Errorf("%s: %q: %v", spec, pair, err)
		}
		if err := o.Set(k, uv); err != nil {
			return o, fmt.Errorf("%s: %w", spec, err)
		}
	}
	if err := o.Limiter.Validate(); err != nil {
		return o, fmt.Errorf("%s: %w", spec, err)
	}
	if err := o.CheckKey(); err != nil {
		return o, fmt.Errorf("%s: %w", spec, err)
	}
	return o, nil
}
