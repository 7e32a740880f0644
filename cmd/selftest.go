package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/probe/selftest"
	"github.com/ratecheck/ratecheck/runner"
)

// selftestFlags are selftest's flags.
type selftestFlags struct {
	probes int
	seed   uint64
	output string
}

func newSelftestCmd() *cobra.Command {
	var f selftestFlags
	c := &cobra.Command{
		Use:   "selftest --sim N",
		Short: "Probe N simulated limiters drawn from every family and score the inference",
		Long: `selftest --sim N draws N limiters over the whole model space (every family and
variant, parameters in realistic ranges, networks from loopback to 80 ms with
jitter and stalls, some servers that fail, some runs interrupted), probes each
on the simulated network (sim: targets) with the default plan, and scores the
answers against the truth: family and parameter accuracy with 95 % intervals,
the reliability of the confidence, what stayed inconclusive and why. Every run
is checked against the invariants (budgets kept, answers earned, failures never
admitted, faults and interruptions never a clean pass); a run that breaks one,
or names a wrong family at confidence >= 0.8, is listed with the command that
replays it, and the exit code is 1. The same --seed gives the same output.`,
		Example: `  ratecheck selftest --sim 300 --seed 1
  ratecheck selftest --sim 2000 --seed 7 -o json > sweep.json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runSelftest(c, &f) },
	}
	c.Flags().IntVar(&f.probes, "sim", 0, "number of simulated probes (required)")
	c.Flags().Uint64Var(&f.seed, "seed", 1, "the sweep's seed: the same seed draws the same limiters and networks")
	c.Flags().StringVarP(&f.output, "output", "o", "text", "stdout format: text or json")
	return c
}

func runSelftest(c *cobra.Command, f *selftestFlags) error {
	switch {
	case f.probes <= 0:
		return usageErr("--sim N is required: how many simulated probes to run (e.g. --sim 300)")
	case f.output != "text" && f.output != "json":
		return usageErr("--output %q: use text or json", f.output)
	}
	ctx, stop := interruptible(c)
	defer stop()
	rep, err := runner.Sweep(ctx, f.probes, f.seed, c.ErrOrStderr())
	if err != nil {
		return exitOf(err)
	}
	if f.output == "json" {
		if err := printJSON(c.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		selftest.WriteSweep(c.OutOrStdout(), rep)
	}
	return exitOf(runner.SweepErr(rep))
}
