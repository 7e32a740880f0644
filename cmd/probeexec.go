package cmd

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/runner"
)

// probing is how the request flags and budget say to probe a target.
func probing(rf *requestFlags, maxTime time.Duration) runner.Probing {
	eo := rf.options()
	// The probe's time budget is the engine's: its flag is --max-time.
	eo.Names = func(field string) string {
		if field == "Options.MaxDuration" {
			return "--max-time"
		}
		return flagName(field)
	}
	return runner.Probing{Request: rf.request, Options: probe.Options{MaxTime: maxTime, MaxRequests: rf.maxRequests,
		ScopeKey: rf.keyHeader != "", Engine: eo, NoBypass: rf.noBypass, BypassMethods: rf.bypassMethods}}
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

// exitOf gives a runner's error its exit code: a run refused before it
// could test anything 2, what was tested and found wrong 1, a target that
// could not be tested 3.
func exitOf(err error) error {
	var re *runner.RefusedError
	var fe *runner.FailedError
	var ue *runner.UntestedError
	switch {
	case errors.As(err, &re):
		return &exitError{code: ExitUsage, err: err}
	case errors.As(err, &fe):
		return &exitError{code: ExitFailed, err: err}
	case errors.As(err, &ue):
		return &exitError{code: ExitUntested, err: err}
	}
	return err
}
