package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// probeRun is one probe experiment carried out and graded: what 'probe'
// does, for the commands that build on it (check, compare --probe).
type probeRun struct {
	Spec, URL string
	Res       *probe.Result
	Grade     *grade.Report // nil when the probe was interrupted
}

// probeOptions are the probe options the request flags and budget give.
func probeOptions(rf *requestFlags, maxTime time.Duration) probe.Options {
	eo := rf.options()
	// The probe's time budget is the engine's: its flag is --max-time.
	eo.Names = func(field string) string {
		if field == "Options.MaxDuration" {
			return "--max-time"
		}
		return flagName(field)
	}
	return probe.Options{MaxTime: maxTime, MaxRequests: rf.maxRequests, ScopeKey: rf.keyHeader != "", Engine: eo,
		NoBypass: rf.noBypass, BypassMethods: rf.bypassMethods}
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

// hideMaxDuration hides --max-duration from a command whose only run is a
// probe: its budget is --max-time (oneTimeBudget refuses the other).
func hideMaxDuration(c *cobra.Command) {
	_ = c.Flags().MarkHidden(flagMaxDuration)
}

// checkMaxTime is exit 2 for a --max-time given as zero or less (not
// given, it is 0: the probe's own budget, which grows with the limit).
func checkMaxTime(c *cobra.Command, d time.Duration) error {
	if d < 0 || d == 0 && c.Flags().Changed(flagMaxTime) {
		return usageErr("--max-time must be positive")
	}
	return nil
}

// progressBudget is the time budget a progress line counts down from: the
// probe's starting one when --max-time was not given.
func progressBudget(maxTime time.Duration) time.Duration {
	if maxTime <= 0 {
		return probe.DefaultMaxTime
	}
	return maxTime
}

// checkProbeBudget is exit 2, naming the flag, when the budget cannot hold
// the smallest probe plan: said before anything is started or sent.
func checkProbeBudget(rf *requestFlags, maxTime time.Duration) error {
	return probeBudgetErr(probeOptions(rf, maxTime).Validate())
}

func probeBudgetErr(err error) error {
	var be *probe.BudgetError
	if !errors.As(err, &be) {
		return err
	}
	flag := "--max-requests"
	if be.What == "time" {
		flag = "--max-time"
	}
	need := be.Need
	if be.What == "requests" {
		need += " requests"
	}
	return usageErr("%s %s is too small: the smallest probe plan needs at least %s; raise %s", flag, be.Have, need, flag)
}

// execProbe runs probe.Run against an opened target with the request flags'
// budget — results streamed at path, extra sinks (progress) on the engine —
// and grades it. An unreachable target is exit 3, with the run (its
// inference inconclusive, not graded) for the commands that still print
// it; a budget too small or a stream that cannot be created exit 2.
func execProbe(ctx context.Context, stderr io.Writer, rf *requestFlags, maxTime time.Duration, command string, tgt *launch.Target, path string, prog *report.Progress, stated []probe.Stated) (*probeRun, error) {
	req, err := rf.request(tgt.URL)
	if err != nil {
		return nil, err
	}
	opt := probeOptions(rf, maxTime)
	opt.ResultsFile, opt.Command, opt.Target, opt.Stated = path, command, tgt.Spec, stated
	if prog != nil {
		opt.Sinks, opt.OnBudget = []func(*results.Result){prog.Add}, prog.SetBudget
	}
	opt.Network = tgt.Network // nil: real sockets
	res, err := probe.Run(ctx, req, opt)
	var costly *probe.QuotaCostError
	if errors.As(err, &costly) {
		// Refused after the calibration: its requests are in the stream.
		fmt.Fprintf(stderr, "results: %s\n", path)
		return nil, usageErr("%v", err)
	}
	if res == nil {
		if err = probeBudgetErr(err); err != nil {
			var ee *exitError
			if !errors.As(err, &ee) {
				err = usageErr("%v (choose another place with --out)", err)
			}
		}
		return nil, err
	}
	fmt.Fprintf(stderr, "results: %s\n", path)
	if tgt.Network == nil { // a simulated server has no port to try TLS on
		err = res.WithHTTPSHint(tgt.URL, err)
	}
	if errors.Is(err, probe.ErrUnreachable) {
		return &probeRun{Spec: tgt.Spec, URL: tgt.URL, Res: res}, exitWith(ExitUntested, fmt.Errorf("%s: %w", tgt.Spec, err))
	}
	if err != nil {
		fmt.Fprintf(stderr, "ratecheck: %v\n", err)
	}
	return &probeRun{Spec: tgt.Spec, URL: tgt.URL, Res: res, Grade: grade.OfProbe(res)}, nil
}

// runConfigErr is exit 2 for a run refused before sending; a results file
// that cannot be created says which flag moves it.
func runConfigErr(err error) error {
	var ce *attack.ConfigError
	if errors.As(err, &ce) && ce.Field == "RunOptions.Out" {
		return usageErr("%v (choose another place with --out)", err)
	}
	return usageErr("%w", err)
}
