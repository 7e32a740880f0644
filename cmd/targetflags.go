package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/targets/launch"
)

// Flag names of the target options every traffic-sending command shares.
const (
	flagNginxBin   = "nginx-bin"
	flagHAProxyBin = "haproxy-bin"
	flagKeep       = "keep"
)

// registerTargetFlags adds the flags that say how a target is started
// (nginx:PATH and haproxy:PATH targets: --nginx-bin, --haproxy-bin, --keep). attack, probe and compare call
// it; targetOptions reads them back by name, so a command without them gets the
// defaults.
func registerTargetFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.String(flagNginxBin, "", "nginx: targets: the nginx binary (default: nginx on $PATH, then /usr/sbin/nginx)")
	fs.String(flagHAProxyBin, "", "haproxy: targets: the haproxy binary (default: haproxy on $PATH, then /usr/sbin/haproxy)")
	fs.Bool(flagKeep, false, "nginx: and haproxy: targets: keep the generated config and the server's logs in their temporary directory after the run")
}

// targetOptions are how the command's targets are started and checked:
// the flags registerTargetFlags added, if any, and --http2; what was
// rewritten in a config is said on stderr.
func targetOptions(c *cobra.Command) launch.Options {
	o := launch.Options{Notes: c.ErrOrStderr()}
	if fl := c.Flags().Lookup(flagNginxBin); fl != nil {
		o.NginxBin = fl.Value.String()
	}
	if fl := c.Flags().Lookup(flagHAProxyBin); fl != nil {
		o.HAProxyBin = fl.Value.String()
	}
	if fl := c.Flags().Lookup(flagKeep); fl != nil {
		o.Keep = fl.Value.String() == "true"
	}
	if fl := c.Flags().Lookup("http2"); fl != nil {
		o.HTTP2 = fl.Value.String() == "true"
	}
	return o
}

// startRun is a one-target command's start: its interruptible context and
// its target, opened (a bad spec or config is exit 2, a target that cannot
// be started here, nginx not installed, exit 3); done stops both.
func startRun(c *cobra.Command, spec string) (context.Context, *launch.Target, func(), error) {
	ctx, stop := interruptible(c)
	tgt, err := launch.OpenWith(c.Context(), spec, targetOptions(c))
	if err != nil {
		stop()
		var ue *launch.UsageError
		if errors.As(err, &ue) {
			return nil, nil, nil, usageErr("%v", err)
		}
		return nil, nil, nil, exitWith(ExitUntested, err)
	}
	return ctx, tgt, func() { _ = tgt.Close(); stop() }, nil
}
