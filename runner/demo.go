package runner

import (
	"context"
	"fmt"
	"io"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/selftest"
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
