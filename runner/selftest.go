package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/selftest"
	"github.com/ratecheck/ratecheck/report"
)

// DemoOutcome is one entry of demo's JSON: a limiter's outcome, marked
// when the demo was interrupted while probing it (it is then not scored).
type DemoOutcome struct {
	selftest.Outcome
	Interrupted bool `json:"interrupted,omitempty"`
}

// Demo probes every demo target in turn (selftest.DemoTargets), saying
// each on progress (nil: nothing). Interrupted, it returns the outcomes so
// far, the cut-short one last and marked, with an *UntestedError; so is a
// limiter that could not be probed.
func Demo(ctx context.Context, progress io.Writer) ([]DemoOutcome, error) {
	targets := selftest.DemoTargets()
	outs := []DemoOutcome{}
	for _, spec := range targets {
		if progress != nil {
			fmt.Fprintf(progress, "probing %s ...\n", spec)
		}
		o, err := selftest.ProbeBuiltin(ctx, spec, probe.Options{})
		if ctx.Err() != nil {
			done := len(outs)
			if o.Spec != "" {
				o.FamilyOK, o.ParamsOK, o.ParamErrs, o.Equivalent = false, false, nil, false
				outs = append(outs, DemoOutcome{Outcome: o, Interrupted: true})
			}
			return outs, untested(fmt.Errorf("demo interrupted while probing %s (%d of %d limiters done): nothing was scored", spec, done, len(targets)))
		}
		if err != nil {
			return outs, untested(fmt.Errorf("%s: %w", spec, err))
		}
		outs = append(outs, DemoOutcome{Outcome: o})
	}
	return outs, nil
}

// Outcomes are the limiters' outcomes without the demo's marks, as
// report.Demo shows them.
func Outcomes(outs []DemoOutcome) []selftest.Outcome {
	plain := make([]selftest.Outcome, len(outs))
	for i, o := range outs {
		plain[i] = o.Outcome
	}
	return plain
}

// Misidentified is a *FailedError when a limiter's family or parameters
// came out wrong, beyond the bars; nil when each was named right.
func Misidentified(outs []DemoOutcome) error {
	wrong := 0
	for _, o := range outs {
		if !o.FamilyOK || !o.ParamsOK {
			wrong++
		}
	}
	if wrong == 0 {
		return nil
	}
	return &FailedError{fmt.Errorf("%d of %d built-in limiters were not identified within the bars", wrong, len(outs))}
}

// Sweep runs the simulation sweep (selftest.Sweep) of n probes drawn from
// seed, counting them on stderr when it is a terminal and saying there how
// long the sweep took: the machine's time, kept off stdout so that the same
// seed prints the same. A sweep that cannot finish is an *UntestedError.
func Sweep(ctx context.Context, n int, seed uint64, stderr io.Writer) (*selftest.SweepReport, error) {
	began, counting := time.Now(), report.OnTerminal(stderr)
	progress := func(done, n int) {
		if counting {
			fmt.Fprintf(stderr, "\r%d of %d simulated probes", done, n)
		}
	}
	rep, err := selftest.Sweep(ctx, selftest.SweepOptions{N: n, Seed: seed, Progress: progress})
	if counting {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, untested(errors.New("selftest interrupted: no figures"))
		}
		return nil, untested(err)
	}
	fmt.Fprintf(stderr, "%d simulated probes in %.1f s\n", rep.N, time.Since(began).Seconds())
	return rep, nil
}

// SweepErr is a *FailedError when a run of the sweep broke an invariant or
// named a wrong family at confidence >= 0.8; nil otherwise.
func SweepErr(rep *selftest.SweepReport) error {
	if n, w := len(rep.Violations), len(rep.WrongConfident); n+w > 0 {
		return &FailedError{fmt.Errorf("selftest failed: %d runs broke an invariant, %d were wrong at confidence >= 0.8 (each listed above with the command that replays it)", n, w)}
	}
	return nil
}
