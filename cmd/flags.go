package cmd

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/targets/launch"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// requestFlags are the request-shaping and budget flags every command that
// sends traffic shares.
type requestFlags struct {
	method      string
	headers     []string
	body        string
	timeout     time.Duration
	insecure    bool
	caCert      string
	cert        string
	key         string
	http2       bool
	keyHeader   string
	keys        int
	sourceAddrs string
	maxRequests int
	maxDuration time.Duration
	out         string
	output      string
	quiet       bool
	// The bypass suite of a probe (registerBypass): off, and the methods
	// it may send besides HEAD.
	noBypass      bool
	bypassMethods []string
}

// registerBypass adds the bypass suite's flags (probe, check, compare).
func (f *requestFlags) registerBypass(c *cobra.Command) {
	fs := c.Flags()
	fs.BoolVar(&f.noBypass, "no-bypass", false, "skip the bypass trials (forged client-address headers, path spellings, HEAD, a new connection, User-Agent) run while the key is exhausted")
	fs.StringSliceVar(&f.bypassMethods, "bypass-methods", nil, "`METHODS` the bypass trials may send instead of the request's own besides HEAD (POST,PUT: they may change state on the target)")
}

func (f *requestFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVarP(&f.method, "method", "X", "GET", "HTTP method")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	fs.StringVarP(&f.body, "data", "d", "", "request body, or @file to read it from a file")
	fs.DurationVar(&f.timeout, "timeout", attack.DefaultTimeout, "per-request timeout")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fs.StringVar(&f.caCert, "cacert", "", "PEM `FILE` of CA certificates to trust for https targets (besides the system's)")
	fs.StringVar(&f.cert, "cert", "", "PEM `FILE` with the client certificate for mutual TLS (with --key)")
	fs.StringVar(&f.key, "key", "", "PEM `FILE` with the client certificate's private key (with --cert)")
	fs.BoolVar(&f.http2, "http2", false, "speak HTTP/2 to an https target (a burst's HEADERS frames go out back to back)")
	fs.StringVar(&f.keyHeader, "key-header", "", "header that carries each simulated client's key (tests per-key scope)")
	fs.IntVar(&f.keys, "keys", 0, "number of distinct key values to send in --key-header")
	fs.StringVar(&f.sourceAddrs, "source-addrs", "", "local `LIST` of addresses or CIDRs (127.0.0.0/28) the connections bind: each storm/backoff client and probe identity its own")
	fs.IntVar(&f.maxRequests, "max-requests", attack.DefaultMaxRequests, "request budget: the run stops after this many")
	fs.DurationVar(&f.maxDuration, "max-duration", attack.DefaultMaxDuration, "time budget: the run stops after this long")
	fs.StringVar(&f.out, "out", "", "results stream file (JSON Lines); default ratecheck-COMMAND-TIME.jsonl")
	fs.StringVarP(&f.output, "output", "o", "text", "stdout format: text or json")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line on stderr (it is drawn only on a terminal anyway)")
}

func (f *requestFlags) validate() error {
	switch {
	case f.output != "text" && f.output != "json":
		return usageErr("--output %q: use text or json", f.output)
	case f.maxRequests < 1:
		return usageErr("--max-requests must be ≥ 1")
	case !attack.ValidMethods(f.bypassMethods):
		return usageErr("--bypass-methods %q: write HTTP methods joined by commas, e.g. POST,PUT", strings.Join(f.bypassMethods, ","))
	case f.maxDuration <= 0:
		return usageErr("--max-duration must be positive")
	case f.timeout <= 0:
		return usageErr("--timeout must be positive")
	case f.keys < 0:
		return usageErr("--keys must be ≥ 0")
	case f.keys > 0 && f.keyHeader == "":
		return usageErr("--keys needs --key-header NAME to say where the key goes")
	case (f.cert == "") != (f.key == ""):
		return usageErr("--cert and --key go together: give the client certificate and its private key")
	}
	if f.sourceAddrs != "" {
		if _, err := attack.LocalSources(f.sourceAddrs); err != nil {
			return usageErr("--source-addrs: %v", err)
		}
	}
	if _, err := f.tlsOptions().Config(""); err != nil {
		return usageErr("TLS options (--cacert, --cert, --key): %v", err)
	}
	return nil
}

func (f *requestFlags) request(url string) (*attack.Request, error) {
	r, err := attack.NewRequest(f.method, url, f.headers, f.body)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	r.KeyHeader = f.keyHeader
	return r, nil
}

func (f *requestFlags) options() attack.Options {
	return attack.Options{Timeout: f.timeout, TLS: f.tlsOptions(), HTTP2: f.http2, MaxRequests: f.maxRequests, MaxDuration: f.maxDuration, Keys: f.keys, Sources: f.sources(), Names: flagName}
}

// sources is --source-addrs parsed (validate has refused a bad list).
func (f *requestFlags) sources() []netip.Addr {
	if f.sourceAddrs == "" {
		return nil
	}
	s, _ := attack.ParseSources(f.sourceAddrs)
	return s
}

func (f *requestFlags) tlsOptions() attack.TLSOptions {
	return attack.TLSOptions{Insecure: f.insecure, CACertFile: f.caCert, CertFile: f.cert, KeyFile: f.key}
}

func (f *requestFlags) outPath(command string) string {
	if f.out != "" {
		return f.out
	}
	return outfiles.Base(command, time.Now()) + ".jsonl"
}

// openTarget starts the target with the command's target flags (see
// registerTargetFlags), mapping a bad spec or nginx config to exit 2 and a
// target that cannot be started here (nginx not installed) to exit 3.
func openTarget(c *cobra.Command, spec string) (*launch.Target, error) {
	return openTargetCtx(c.Context(), c, spec)
}

// startRun is a traffic command's start: its interruptible context and its
// one target, opened; done stops both.
func startRun(c *cobra.Command, spec string) (context.Context, *launch.Target, func(), error) {
	ctx, stop := interruptible(c)
	tgt, err := openTarget(c, spec)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return ctx, tgt, func() { _ = tgt.Close(); stop() }, nil
}

// openTargetCtx is openTarget with the context that stops the target when
// cancelled (an nginx target is stopped at once).
func openTargetCtx(ctx context.Context, c *cobra.Command, spec string) (*launch.Target, error) {
	opt := targetOptions(c)
	t, err := launch.OpenWith(ctx, spec, opt)
	if err != nil {
		var ue *launch.UsageError
		if errors.As(err, &ue) {
			return nil, usageErr("%v", err)
		}
		return nil, exitWith(ExitUntested, err)
	}
	if err := checkHTTP2(c, t); err != nil {
		_ = t.Close()
		return nil, err
	}
	printTargetNotes(c.ErrOrStderr(), t, opt.Keep)
	return t, nil
}

// checkHTTP2 is exit 2 when --http2 is asked of a target served over plain
// http (builtin:, nginx: and haproxy: targets always are): ratecheck speaks
// HTTP/2 only over TLS. Said once the target is resolved to its URL, before
// anything is sent to it.
func checkHTTP2(c *cobra.Command, t *launch.Target) error {
	if fl := c.Flags().Lookup("http2"); fl == nil || fl.Value.String() != "true" || strings.HasPrefix(t.URL, "https://") {
		return nil
	}
	served := t.URL + " is plain http"
	if t.Spec != t.URL {
		served = t.Spec + " is served over plain http (" + t.URL + ")"
	}
	return usageErr("--http2 needs an https target (HTTP/2 here is spoken over TLS): %s; drop --http2 or name an https:// URL", served)
}

// rateFlag parses a rate flag, accepting "max" where allowed.
func rateFlag(name, v string, allowMax bool) (float64, error) {
	if allowMax && v == "max" {
		return 0, nil
	}
	r, err := limiter.ParseRate(v)
	if err != nil {
		return 0, usageErr("--%s: %v", name, err)
	}
	return r, nil
}

// openTargets starts every target before any request is sent, so a bad
// spec or config stops the command before it spends time on the others.
// where(i, err) may reword target i's error (e.g. with a config line). The
// returned func closes whatever was started; call it even on error.
func openTargets(ctx context.Context, c *cobra.Command, specs []string, where func(i int, err error) error) ([]*launch.Target, func(), error) {
	tgts := make([]*launch.Target, len(specs))
	closeAll := func() {
		for _, t := range tgts {
			if t != nil {
				_ = t.Close()
			}
		}
	}
	for i, spec := range specs {
		t, err := openTargetCtx(ctx, c, spec)
		if err != nil {
			if where != nil {
				err = where(i, err)
			}
			return tgts, closeAll, err
		}
		tgts[i] = t
	}
	return tgts, closeAll, nil
}
