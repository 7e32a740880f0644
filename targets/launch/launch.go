// Package launch turns a target string into a URL to attack, starting what
// it names: a builtin: reference server in-process, a real nginx from a
// config file (nginx:PATH) or a real HAProxy (haproxy:PATH). Plain http(s)
// URLs pass through. A sim: target starts nothing: it is a simulated
// network (targets/sim) the probe runs on instead of sockets.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/fleet"
	"github.com/ratecheck/ratecheck/targets/haproxy"
	"github.com/ratecheck/ratecheck/targets/nginx"
	"github.com/ratecheck/ratecheck/targets/refserver"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// NginxPrefix starts a target string that names an nginx config to run.
const NginxPrefix = "nginx:"

// HAProxyPrefix starts a target string that names an HAProxy config to run.
const HAProxyPrefix = "haproxy:"

// Kinds of target.
const (
	KindURL     = "url"     // an http(s) URL: ratecheck started nothing
	KindBuiltin = "builtin" // an in-process reference server, fresh
	KindNginx   = "nginx"   // an nginx ratecheck started from a config, fresh
	KindHAProxy = "haproxy" // an HAProxy ratecheck started from a config, fresh
	KindSim     = "sim"     // a simulated network and server (Network), fresh
)

// simURL is the address a simulated server answers at: a loopback one, so
// the probe's scope trials present another loopback source as they would
// to a local server.
const simURL = "http://127.0.0.1/"

// Target is a started target. Close stops whatever was started.
type Target struct {
	Spec string // as the user wrote it
	URL  string
	Kind string // KindURL, KindBuiltin, KindNginx or KindHAProxy
	// Notes are what ratecheck rewrote in, or noticed about, the user's
	// nginx or HAProxy config (nginx.Instance.Notes, haproxy.Instance.Notes),
	// most prefixed with FILE:LINE.
	Notes []string
	// Dir is an nginx or HAProxy target's private directory (generated
	// config, logs); it survives Close only with Options.Keep.
	Dir string
	// Stopped is closed once a started nginx or HAProxy has fully stopped
	// (processes gone, Dir removed), whether by Close or because the
	// context given to Open was cancelled; nil for other kinds.
	Stopped <-chan struct{}
	// Network, for a sim: target, is the simulated network to run on
	// instead of sockets; nil for every other kind.
	Network attack.NetworkFunc
	close   func() error
}

// Fresh reports whether ratecheck started the target for this run, so no
// earlier traffic has touched its limiter state.
func (t *Target) Fresh() bool { return t.Kind != KindURL }

// Close stops the target; safe to call on a URL target and more than once.
func (t *Target) Close() error {
	if t.close == nil {
		return nil
	}
	c := t.close
	t.close = nil
	return c()
}

// UsageError is a target string (or a file it names) the user must fix:
// exit 2. Every other error from Open means the target could not be started
// in this environment (nginx not installed, a port not bound): exit 3.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Options configure how targets are started. The zero value is usable.
type Options struct {
	// NginxBin is the nginx binary for nginx: targets (a path, or a name
	// looked up on $PATH). Empty: nginx on $PATH, then /usr/sbin/nginx.
	NginxBin string
	// HAProxyBin is the haproxy binary for haproxy: targets. Empty:
	// haproxy on $PATH, then /usr/sbin/haproxy.
	HAProxyBin string
	// Keep keeps an nginx or HAProxy target's directory (generated config,
	// logs) after Close, for debugging.
	Keep bool
	// HTTP2 says the run will speak HTTP/2, which ratecheck speaks only
	// over TLS: a target served over plain http is then a usage error,
	// said before anything is sent to it.
	HTTP2 bool
	// Notes, when set, is told what ratecheck rewrote in a target's
	// config and where a kept directory is, as each target opens.
	Notes io.Writer
}

// startNginx is nginx.Start; tests replace it.
var startNginx = nginx.Start

// startHAProxy is haproxy.Start; tests replace it.
var startHAProxy = haproxy.Start

// Open starts or validates the target spec with default Options.
func Open(ctx context.Context, spec string) (*Target, error) {
	return OpenWith(ctx, spec, Options{})
}

// OpenWith starts or validates the target spec. For an nginx: or haproxy:
// target, cancelling ctx stops the server as Close does; Close must still be
// called.
func OpenWith(ctx context.Context, spec string, opt Options) (*Target, error) {
	t, err := open(ctx, spec, opt)
	if err != nil {
		return nil, err
	}
	if err := t.checkHTTP2(opt.HTTP2); err != nil {
		_ = t.Close()
		return nil, err
	}
	if opt.Notes != nil {
		t.writeNotes(opt.Notes, opt.Keep)
	}
	return t, nil
}

func open(ctx context.Context, spec string, opt Options) (*Target, error) {
	switch {
	case spec == fleet.Prefix || strings.HasPrefix(spec, fleet.Prefix+"?"):
		return openFleet(ctx, spec)
	case strings.HasPrefix(spec, refserver.BuiltinPrefix):
		s, err := refserver.StartBuiltin(spec)
		if err != nil {
			return nil, &UsageError{err}
		}
		return &Target{Spec: spec, URL: s.URL, Kind: KindBuiltin, close: s.Close}, nil
	case strings.HasPrefix(spec, sim.Prefix):
		cfg, err := sim.ParseSpec(spec)
		if err != nil {
			return nil, &UsageError{err}
		}
		return &Target{Spec: spec, URL: simURL, Kind: KindSim, Network: sim.Func(cfg)}, nil
	case strings.HasPrefix(spec, NginxPrefix):
		return openNginx(ctx, spec, opt)
	case strings.HasPrefix(spec, HAProxyPrefix):
		return openHAProxy(ctx, spec, opt)
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		if err := checkURL(spec); err != nil {
			return nil, &UsageError{err}
		}
		return &Target{Spec: spec, URL: spec, Kind: KindURL}, nil
	}
	return nil, &UsageError{fmt.Errorf("target %q: use an http(s) URL, builtin:ALGO?key=value (e.g. builtin:token_bucket?rate=10/s&burst=20), sim:ALGO?key=value (the same limiter on a simulated network), nginx:PATH (an nginx config or snippet) or haproxy:PATH (an HAProxy config or snippet)", spec)}
}

// openFleet starts a builtin:fleet target (targets/fleet): a spec that
// cannot run is a usage error, a Redis that cannot be started or reached
// leaves the target untested.
func openFleet(ctx context.Context, spec string) (*Target, error) {
	f, err := fleet.Start(ctx, spec)
	if err != nil {
		var se *fleet.SpecError
		if errors.As(err, &se) {
			return nil, &UsageError{err}
		}
		return nil, fmt.Errorf("target %s: %w", spec, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	return &Target{Spec: spec, URL: f.URL, Kind: KindBuiltin, close: func() error { stop(); return f.Close() }}, nil
}

// configPath is the file a server target names; a missing file or a
// directory is a usage error, found before the server is looked for.
func configPath(spec, prefix, server, example string) (string, error) {
	path := strings.TrimPrefix(spec, prefix)
	if path == "" {
		return "", &UsageError{fmt.Errorf("target %q: name the config file, e.g. %s%s", spec, prefix, example)}
	}
	if fi, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &UsageError{fmt.Errorf("target %s: no such file %s", spec, path)}
		}
		return "", &UsageError{fmt.Errorf("target %s: %w", spec, err)}
	} else if fi.IsDir() {
		return "", &UsageError{fmt.Errorf("target %s: %s is a directory; name an %s config file", spec, path, server)}
	}
	return path, nil
}

func openNginx(ctx context.Context, spec string, opt Options) (*Target, error) {
	return openServer[*nginx.ConfigError](spec, realServer{
		prefix: NginxPrefix, name: "nginx", example: "limits.conf", kind: KindNginx,
		binFlag: "--nginx-bin", bin: opt.NginxBin, find: nginx.FindBinary,
		start: func(path string) (*Target, error) {
			inst, err := startNginx(ctx, path, nginx.Options{Bin: opt.NginxBin, Keep: opt.Keep})
			if err != nil {
				return nil, err
			}
			return &Target{URL: inst.URL, Notes: inst.Notes, Dir: inst.Dir, Stopped: inst.Done(), close: inst.Stop}, nil
		},
	})
}

func openHAProxy(ctx context.Context, spec string, opt Options) (*Target, error) {
	return openServer[*haproxy.ConfigError](spec, realServer{
		prefix: HAProxyPrefix, name: "HAProxy", example: "limits.cfg", kind: KindHAProxy,
		binFlag: "--haproxy-bin", bin: opt.HAProxyBin, find: haproxy.FindBinary,
		start: func(path string) (*Target, error) {
			inst, err := startHAProxy(ctx, path, haproxy.Options{Bin: opt.HAProxyBin, Keep: opt.Keep})
			if err != nil {
				return nil, err
			}
			return &Target{URL: inst.URL, Notes: inst.Notes, Dir: inst.Dir, Stopped: inst.Done(), close: inst.Stop}, nil
		},
	})
}

// realServer is a kind of target that runs a real server from the user's
// config.
type realServer struct {
	prefix, name, example string // "nginx:", "nginx", "limits.conf" (for messages)
	kind                  string
	binFlag, bin          string // the flag naming the binary, and its value
	find                  func(bin string) (string, error)
	start                 func(path string) (*Target, error) // URL, Notes, Dir, close
}

// openServer opens a real-server target. Problems the user must fix come
// first, before the server is looked for: the config path, then an
// explicit binary flag that does not resolve (a flag to fix, not a missing
// installation). A config the server refuses (CE, its ConfigError, which
// names the user's FILE:LINE itself) is a usage error; anything else (not
// installed, with its install hint; start-up failures) is the
// environment's, not the target string's.
func openServer[CE error](spec string, rs realServer) (*Target, error) {
	path, err := configPath(spec, rs.prefix, rs.name, rs.example)
	if err != nil {
		return nil, err
	}
	if rs.bin != "" {
		if _, err := rs.find(rs.bin); err != nil {
			return nil, &UsageError{fmt.Errorf("%s: %w", rs.binFlag, err)}
		}
	}
	tg, err := rs.start(path)
	if err != nil {
		if _, ok := errors.AsType[CE](err); ok {
			return nil, &UsageError{err}
		}
		return nil, fmt.Errorf("target %s: %w", spec, err)
	}
	tg.Spec, tg.Kind = spec, rs.kind
	return tg, nil
}

// checkURL refuses what would otherwise go out as a malformed request or a
// dial to nowhere: no host, a port outside 1–65535, and unescaped spaces or
// control characters (they would be written into the request line as is).
func checkURL(spec string) error {
	if i := strings.IndexFunc(spec, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("target %q has a space or control character at byte %d: escape it (a space is %%20)", spec, i+1)
	}
	u, err := url.Parse(spec)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("target %q is not a valid URL: write e.g. http://127.0.0.1:8080/", spec)
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("target %q: port %q is not a number from 1 to 65535", spec, p)
		}
	}
	return nil
}
