package plan

import (
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// A step of the trace is a run of admissions after the key was shut —
// in the order the server decided them, which a stall may have shuffled
// (observation.Shut): counted in send order alone, the builtin fixed
// window of 100 per minute had one step read as two, and `check --expect
// window=60s` was untested at 101 s where the second step would have
// passed it.

// decidedSteps counts the trace's steps of at least stepSize admissions,
// two runs of admissions in send order counting as one step unless the
// rejections between them certainly came between (observation.Shut). tr
// is in send order; requests that got no answer are left out.
func decidedSteps(tr []*results.Result) int {
	steps, run := 0, 0
	var shut observation.Shut
	for _, r := range tr {
		switch {
		case r.Error != "":
		case !r.Admitted():
			if run > 0 {
				shut.Reject(r)
			}
		case shut.Before(r): // a new run
			if run >= stepSize {
				steps++
			}
			run, shut = 1, observation.Shut{}
		default: // the run goes on, or one the rejections since it cannot split
			run, shut = run+1, observation.Shut{}
		}
	}
	if run >= stepSize {
		steps++
	}
	return steps
}
