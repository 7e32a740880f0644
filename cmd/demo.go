package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
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
		RunE: func(c *cobra.Command, _ []string) error { return runDemo(c, output, jsonFile) },
	}
	c.Flags().StringVar(&jsonFile, "json", "", "also write the outcomes as JSON to this file")
	c.Flags().StringVarP(&output, "output", "o", "text", "stdout format: text or json")
	return c
}

// demoOutcome is one entry of demo's JSON: a limiter's outcome, marked
// when the demo was interrupted while probing it (it is then not scored).
type demoOutcome struct {
	selftest.Outcome
	Interrupted bool `json:"interrupted,omitempty"`
}

func runDemo(c *cobra.Command, output, jsonFile string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: use text or json", output)
	}
	ctx, stop := interruptible(c)
	defer stop()
	outcomes, err := probeDemoTargets(ctx, c, output == "text")
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return err
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
			return outputErr(c, flagJSON, jsonFile, werr, nil)
		}
	}
	if interrupted {
		// A cut-short probe names nothing, so the text shows no table, no
		// ✓ or ✗.
		if output == "text" {
			report.Interrupted(c.OutOrStdout(), "")
		}
		return err
	}
	return demoVerdict(c, output, outcomes)
}

// probeDemoTargets probes every demo target in turn. Interrupted, it
// returns the outcomes so far, the cut-short one last and marked, with
// exit 3.
func probeDemoTargets(ctx context.Context, c *cobra.Command, progress bool) ([]demoOutcome, error) {
	targets := selftest.DemoTargets()
	outs := []demoOutcome{}
	for _, spec := range targets {
		if progress {
			fmt.Fprintf(c.ErrOrStderr(), "probing %s ...\n", spec)
		}
		o, err := selftest.ProbeBuiltin(ctx, spec, probe.Options{})
		if ctx.Err() != nil {
			done := len(outs)
			if o.Spec != "" {
				o.FamilyOK, o.ParamsOK, o.ParamErrs, o.Equivalent = false, false, nil, false
				outs = append(outs, demoOutcome{Outcome: o, Interrupted: true})
			}
			return outs, exitWith(ExitUntested, fmt.Errorf("demo interrupted while probing %s (%d of %d limiters done): nothing was scored", spec, done, len(targets)))
		}
		if err != nil {
			return outs, exitWith(ExitUntested, fmt.Errorf("%s: %w", spec, err))
		}
		outs = append(outs, demoOutcome{Outcome: o})
	}
	return outs, nil
}

// demoVerdict prints the text table and is exit 1 when any limiter was not
// identified within the bars.
func demoVerdict(c *cobra.Command, output string, outs []demoOutcome) error {
	plain := make([]selftest.Outcome, len(outs))
	wrong := 0
	for i, o := range outs {
		plain[i] = o.Outcome
		if !o.FamilyOK || !o.ParamsOK {
			wrong++
		}
	}
	if output == "text" {
		report.Demo(c.OutOrStdout(), plain)
	}
	if wrong > 0 {
		return exitWith(ExitFailed, fmt.Errorf("%d of %d built-in limiters were not identified within the bars", wrong, len(outs)))
	}
	return nil
}
