package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/targets/launch"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// Flag names of the target options every traffic-sending command shares.
const (
	flagNginxBin   = "nginx-bin"
	flagHAProxyBin = "haproxy-bin"
	flagKeep       = "keep"
)

// registerTargetFlags adds the flags that say how a target is started
// (nginx:PATH and haproxy:PATH targets: --nginx-bin, --haproxy-bin, --keep). attack, probe and compare call
// it; openTarget reads them back by name, so a command without them gets the
// defaults.
func registerTargetFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.String(flagNginxBin, "", "nginx: targets: the nginx binary (default: nginx on $PATH, then /usr/sbin/nginx)")
	fs.String(flagHAProxyBin, "", "haproxy: targets: the haproxy binary (default: haproxy on $PATH, then /usr/sbin/haproxy)")
	fs.Bool(flagKeep, false, "nginx: and haproxy: targets: keep the generated config and the server's logs in their temporary directory after the run")
}

// targetOptions reads the flags registerTargetFlags added, if any.
func targetOptions(c *cobra.Command) launch.Options {
	var o launch.Options
	if fl := c.Flags().Lookup(flagNginxBin); fl != nil {
		o.NginxBin = fl.Value.String()
	}
	if fl := c.Flags().Lookup(flagHAProxyBin); fl != nil {
		o.HAProxyBin = fl.Value.String()
	}
	if fl := c.Flags().Lookup(flagKeep); fl != nil {
		o.Keep = fl.Value.String() == "true"
	}
	return o
}

// printTargetNotes tells the user, on stderr, what ratecheck rewrote in an
// nginx or HAProxy config and where a kept directory is.
func printTargetNotes(w io.Writer, t *launch.Target, keep bool) {
	for _, n := range t.Notes {
		fmt.Fprintf(w, "%s: %s\n", t.Kind, n)
	}
	if keep && t.Dir != "" {
		files := "generated nginx.conf, error.log"
		if t.Kind == launch.KindHAProxy {
			files = "generated haproxy.cfg, stderr.log"
		}
		fmt.Fprintf(w, "%s: %s runs from %s (%s); kept after the run (--keep)\n", t.Kind, t.Spec, t.Dir, files)
	}
}

// refuseSimulated is exit 2 for a sim: target given to a command that runs
// an attack profile: the simulator runs the probe's plan (probe, check,
// compare --probe), not the engine's profiles.
func refuseSimulated(command string, specs ...string) error {
	for _, spec := range specs {
		if strings.HasPrefix(spec, sim.Prefix) {
			return usageErr("%s: a sim: target runs the probe's experiment only: use 'ratecheck probe', 'check' or 'compare --probe' (or the same limiter as builtin:%s)",
				spec, strings.TrimPrefix(spec, sim.Prefix))
		}
	}
	return nil
}
