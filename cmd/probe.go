package cmd

import (
	"cmp"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/runner"
	"github.com/ratecheck/ratecheck/targets/launch"
	"github.com/ratecheck/ratecheck/targets/sim"
)

type probeFlags struct {
	requestFlags
	jsonFile string
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	c := &cobra.Command{
		Use:   "probe TARGET",
		Short: "Infer the limiter's algorithm and parameters from its behaviour",
		Long: `probe runs an adaptive experiment against TARGET — calibration, a burst, sequential
requests, a recovery trace, a second key — and fits every reference model
(the same code 'serve' runs) to what it saw. It names the family, its
parameters with uncertainty, its confidence, and the facts that decided it.
Headers are used only as hints: inference works from behaviour alone.`,
		Example: `  ratecheck probe 'builtin:token_bucket?rate=10/s&burst=20'
  ratecheck probe --key-header X-Api-Key http://127.0.0.1:8080/
  ratecheck probe -o json 'builtin:fixed_window?limit=20&window=2s' > probe.json`,
		Args: exactArgs(1, "a TARGET (URL or builtin:...)"),
		RunE: func(c *cobra.Command, args []string) error { return runProbe(c, &f, args[0]) },
	}
	f.registerProbe(c, "the experiment")
	c.Flags().StringVar(&f.jsonFile, "json", "", "also write the JSON result to this file")
	registerOutputFlags(c) // --html, --junit (probe keeps its own --json)
	return c
}

func runProbe(c *cobra.Command, f *probeFlags, spec string) error {
	if err := f.validateProbe(c); err != nil {
		return err
	}
	p := f.Probing()
	if err := runner.CheckBudget(p.Options); err != nil {
		return exitOf(err)
	}
	path := outfiles.StreamPath("probe", f.out, time.Now())
	if err := guardStreams(c, []string{path}); err != nil {
		return err
	}
	ctx, tgt, done, err := f.startRun(c, spec)
	if err != nil {
		return err
	}
	defer done()
	p.Command, p.Stderr, p.Progress = "probe", c.ErrOrStderr(), progressEnabled(c.ErrOrStderr(), f.quiet)
	run, err := runner.Probe(ctx, tgt, path, p)
	if err = exitOf(err); run == nil {
		return err
	}
	// The verdict first, then the files: a file that cannot be written
	// must not cost the user the answer (the run is in its stream).
	out := report.NewProbeOutput(spec, run.Res, run.Grade)
	if perr := printProbe(c, f, out); perr != nil {
		return perr
	}
	if werr := writeProbeFiles(c, f, run, out); werr != nil {
		return werr
	}
	if err == nil { // an unreachable target is untested already: the document above says so too
		err = exitOf(run.Untested())
	}
	if err != nil && tgt.Kind == launch.KindSim {
		fmt.Fprintf(c.ErrOrStderr(), "replay: ratecheck probe '%s'\n", sim.ReplaySpec(spec))
	}
	return err
}

// printProbe prints the probe's answer on stdout, in the -o format.
func printProbe(c *cobra.Command, f *probeFlags, out report.ProbeOutput) error {
	if f.output == "json" {
		return printJSON(c.OutOrStdout(), out)
	}
	report.ProbeText(c.OutOrStdout(), out)
	return nil
}

// writeProbeFiles writes probe's own --json and the report files; the
// first that fails is the error, after the others are written.
func writeProbeFiles(c *cobra.Command, f *probeFlags, run *runner.Graded, out report.ProbeOutput) error {
	var jsonErr error
	if f.jsonFile != "" {
		if err := outfiles.WriteJSON(f.jsonFile, out); err != nil {
			jsonErr = outputErr(c, "--"+flagJSON, f.jsonFile, err, []string{out.Results})
		}
	}
	return cmp.Or(jsonErr, writeOutputs(c, run.Document))
}

// Flag names of the two time budgets: an attack profile's and a probe's.
const (
	flagMaxDuration = "max-duration"
	flagMaxTime     = "max-time"
)

// oneTimeBudget is exit 2 when a run is given the time budget flag of the
// other kind of run: probe, check and compare --probe are bounded by
// --max-time, an attack profile by --max-duration. Both used to be
// accepted, and the one that did not apply was silently ignored (probe
// --max-duration 3s ran 10 s).
func oneTimeBudget(c *cobra.Command, isProbe bool) error {
	have, want, who := flagMaxDuration, flagMaxTime, c.Name()
	switch {
	case !isProbe:
		have, want, who = flagMaxTime, flagMaxDuration, c.Name()+" without --probe"
	case c.Name() == "compare":
		who = "compare --probe"
	}
	if fl := c.Flags().Lookup(have); fl != nil && fl.Changed {
		return usageErr("--%s does not apply to %s: its time budget is --%s (give --%s %s)", have, who, want, want, fl.Value)
	}
	return nil
}

// registerProbe adds the flags of a command whose only run is a probe
// (probe, check): the request, bypass and target flags, --max-time, the
// time budget of what (--max-duration is hidden: oneTimeBudget refuses
// it), and a probe's own request budget, smaller than an attack's, as
// --max-requests's default.
func (f *requestFlags) registerProbe(c *cobra.Command, what string) {
	f.register(c)
	f.registerBypass(c)
	fs := c.Flags()
	fs.DurationVar(&f.MaxTime, flagMaxTime, 0, "time budget of "+what+" (default 1m, grown to what a long window needs, up to 5m; a value given is a hard cap)")
	_ = fs.MarkHidden(flagMaxDuration)
	f.MaxRequests = probe.DefaultMaxRequests
	fs.Lookup("max-requests").DefValue = fmt.Sprint(probe.DefaultMaxRequests)
}

// validateProbe checks the flags registerProbe added: one time budget,
// the request flags, a positive --max-time.
func (f *requestFlags) validateProbe(c *cobra.Command) error {
	if err := oneTimeBudget(c, true); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	return checkMaxTime(c, f.MaxTime)
}

// checkMaxTime is exit 2 for a --max-time given as zero or less (not
// given, it is 0: the probe's own budget, which grows with the limit).
func checkMaxTime(c *cobra.Command, d time.Duration) error {
	if d < 0 || d == 0 && c.Flags().Changed(flagMaxTime) {
		return usageErr("--max-time must be positive")
	}
	return nil
}
