package cmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/runner"
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
		RunE: func(c *cobra.Command, _ []string) error { return runDemo(c, output, jsonFile) },
	}
	c.Flags().StringVar(&jsonFile, "json", "", "also write the outcomes as JSON to this file")
	c.Flags().StringVarP(&output, "output", "o", "text", "stdout format: text or json")
	return c
}

func runDemo(c *cobra.Command, output, jsonFile string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: use text or json", output)
	}
	ctx, stop := interruptible(c)
	defer stop()
	var progress io.Writer
	if output == "text" {
		progress = c.ErrOrStderr()
	}
	outcomes, err := runner.Demo(ctx, progress)
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return exitOf(err)
	}
	// What was measured is printed and written even when interrupted: the
	// entries say which limiter was cut short, and the exit is 3.
	if output == "json" {
		if perr := printJSON(c.OutOrStdout(), outcomes); perr != nil {
			return perr
		}
	}
	if jsonFile != "" {
		if werr := outfiles.WriteJSON(jsonFile, outcomes); werr != nil {
			return outputErr(c, "--"+flagJSON, jsonFile, werr, nil)
		}
	}
	if interrupted {
		// A cut-short probe names nothing, so the text shows no table, no
		// ✓ or ✗.
		if output == "text" {
			report.Interrupted(c.OutOrStdout(), "")
		}
		return exitOf(err)
	}
	if output == "text" {
		report.Demo(c.OutOrStdout(), runner.Outcomes(outcomes))
	}
	return exitOf(runner.Misidentified(outcomes))
}
