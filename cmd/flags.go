package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/runner"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// requestFlags are the request-shaping, budget and target flags every
// command that sends traffic shares, bound to the spec runner and attack
// check and build (runner.ProbeSpec: the request, the engine's options, a
// probe's) and to how a target is started (launch.Options).
type requestFlags struct {
	runner.ProbeSpec
	targets launch.Options // how nginx: and haproxy: targets are started
	out     string
	output  string
	quiet   bool
}

// registerBypass adds the bypass suite's flags (probe, check, compare).
func (f *requestFlags) registerBypass(c *cobra.Command) {
	fs := c.Flags()
	fs.BoolVar(&f.NoBypass, "no-bypass", false, "skip the bypass trials (forged client-address headers, path spellings, HEAD, a new connection, User-Agent) run while the key is exhausted")
	fs.StringSliceVar(&f.Methods, "bypass-methods", nil, "`METHODS` the bypass trials may send instead of the request's own besides HEAD (POST,PUT: they may change state on the target)")
}

func (f *requestFlags) register(c *cobra.Command) {
	f.Names = flagName
	fs := c.Flags()
	fs.StringVarP(&f.Method, "method", "X", "GET", "HTTP method")
	fs.StringArrayVarP(&f.Headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	fs.StringVarP(&f.Body, "data", "d", "", "request body, or @file to read it from a file")
	fs.DurationVar(&f.Timeout, "timeout", attack.DefaultTimeout, "per-request timeout")
	fs.BoolVar(&f.TLS.Insecure, "insecure", false, "skip TLS certificate verification")
	fs.StringVar(&f.TLS.CACertFile, "cacert", "", "PEM `FILE` of CA certificates to trust for https targets (besides the system's)")
	fs.StringVar(&f.TLS.CertFile, "cert", "", "PEM `FILE` with the client certificate for mutual TLS (with --key)")
	fs.StringVar(&f.TLS.KeyFile, "key", "", "PEM `FILE` with the client certificate's private key (with --cert)")
	fs.BoolVar(&f.HTTP2, "http2", false, "speak HTTP/2 to an https target (a burst's HEADERS frames go out back to back)")
	fs.StringVar(&f.KeyHeader, "key-header", "", "header that carries each simulated client's key (tests per-key scope)")
	fs.IntVar(&f.Keys, "keys", 0, "number of distinct key values to send in --key-header")
	fs.StringVar(&f.SourceAddrs, "source-addrs", "", "local `LIST` of addresses or CIDRs (127.0.0.0/28) the connections bind: each storm/backoff client and probe identity its own")
	fs.IntVar(&f.MaxRequests, "max-requests", attack.DefaultMaxRequests, "request budget: the run stops after this many")
	fs.DurationVar(&f.MaxDuration, "max-duration", attack.DefaultMaxDuration, "time budget: the run stops after this long")
	fs.StringVar(&f.out, "out", "", "results stream file: compact for a name ending .rcs, else JSON Lines; default ratecheck-COMMAND-TIME.jsonl (attack: .rcs)")
	fs.StringVarP(&f.output, "output", "o", "text", "stdout format: text or json")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line on stderr (it is drawn only on a terminal anyway)")
	fs.StringVar(&f.targets.NginxBin, "nginx-bin", "", "nginx: targets: the nginx binary (default: nginx on $PATH, then /usr/sbin/nginx)")
	fs.StringVar(&f.targets.HAProxyBin, "haproxy-bin", "", "haproxy: targets: the haproxy binary (default: haproxy on $PATH, then /usr/sbin/haproxy)")
	fs.BoolVar(&f.targets.Keep, "keep", false, "nginx: and haproxy: targets: keep the generated config and the server's logs in their temporary directory after the run")
}

func (f *requestFlags) validate() error {
	if f.output != "text" && f.output != "json" {
		return usageErr("--output %q: use text or json", f.output)
	}
	if err := f.Check(); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// targetOptions are how the command's targets are started and checked:
// the target flags and --http2; what was rewritten in a config is said on
// stderr.
func (f *requestFlags) targetOptions(c *cobra.Command) launch.Options {
	o := f.targets
	o.Notes, o.HTTP2 = c.ErrOrStderr(), f.HTTP2
	return o
}

// startRun is a one-target command's start: its interruptible context and
// its target, opened (a bad spec or config is exit 2, a target that cannot
// be started here, nginx not installed, exit 3); done stops both.
func (f *requestFlags) startRun(c *cobra.Command, spec string) (context.Context, *launch.Target, func(), error) {
	ctx, stop := interruptible(c)
	tgt, err := runner.Open(c.Context(), spec, f.targetOptions(c))
	if err != nil {
		stop()
		return nil, nil, nil, exitOf(err)
	}
	return ctx, tgt, func() { _ = tgt.Close(); stop() }, nil
}
