package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/selftest"
	"github.com/ratecheck/ratecheck/report"
)

func newDemoCmd() *cobra.Command {
	var jsonFile, output string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Probe one built-in limiter of every family and compare the inference with the truth",
		Long: `demo starts one reference limiter per family in-process on loopback, probes
each with the same plan 'ratecheck probe' uses, and prints what it inferred
beside the truth. It needs nothing but the binary. Exit 1 if any family or
parameter came out wrong.`,
		Example: `  ratecheck demo
  ratecheck demo --json demo.json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return usageErr("--output %q: use text or json", output)
			}
			ctx, stop := interruptible(c)
			defer stop()
			var outcomes []selftest.Outcome
			wrong := 0
			for _, spec := range selftest.DemoTargets() {
				if output == "text" {
					fmt.Fprintf(c.ErrOrStderr(), "probing %s ...\n", spec)
				}
				o, err := selftest.ProbeBuiltin(ctx, spec, probe.Options{})
				if ctx.Err() != nil {
					// A cut-short probe names nothing, so there is nothing to
					// score: no table, no ✓ or ✗, exit 3.
					if output == "text" {
						report.Interrupted(c.OutOrStdout(), "")
					}
					return exitWith(ExitUntested, fmt.Errorf("demo interrupted while probing %s (%d of %d limiters done): nothing was scored", spec, len(outcomes), len(selftest.DemoTargets())))
				}
				if err != nil {
					return exitWith(ExitUntested, fmt.Errorf("%s: %w", spec, err))
				}
				if !o.FamilyOK || !o.ParamsOK {
					wrong++
				}
				outcomes = append(outcomes, o)
			}
			if jsonFile != "" {
				if err := writeJSONFile(jsonFile, outcomes); err != nil {
					return exitWith(ExitUntested, err)
				}
			}
			if output == "json" {
				if err := printJSON(c.OutOrStdout(), outcomes); err != nil {
					return err
				}
			} else {
				report.Demo(c.OutOrStdout(), outcomes)
			}
			if wrong > 0 {
				return exitWith(ExitFailed, fmt.Errorf("%d of %d built-in limiters were not identified within the bars", wrong, len(outcomes)))
			}
			return nil
		},
	}
	c.Flags().StringVar(&jsonFile, "json", "", "also write the outcomes as JSON to this file")
	c.Flags().StringVarP(&output, "output", "o", "text", "stdout format: text or json")
	return c
}
