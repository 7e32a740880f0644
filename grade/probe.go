package grade

import (
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// OfProbe grades a probe's result, or returns nil when the probe was
// interrupted or cut by errors (its target stopped answering, or a phase's
// requests went unanswered): a cut-short run shows no pass/fail verdict,
// and a grade is one.
func OfProbe(res *probe.Result) *Report {
	if res == nil || res.Observation == nil || res.Observation.Stopped == probe.StopInterrupted || res.Inference.Failures.Cut() {
		return nil
	}
	g := Grade(res.Observation, res.Inference)
	return &g
}

// OfAttack grades the answers of a run that was no probe (an attack
// profile's results from start), or returns nil when the run was
// interrupted: as with OfProbe, a cut-short run shows no pass/fail verdict.
// With no inference to compare the headers with, the checks that compare
// them with the behaviour are skipped. stopped is why the run was cut
// short, as its stream records it ("" when it was not).
func OfAttack(start time.Time, rs []*results.Result, stopped string) *Report {
	if stopped == results.Interrupted {
		return nil
	}
	answers := make([]results.Result, len(rs))
	for i, r := range rs {
		answers[i] = *r
	}
	g := Grade(probe.NewObservation(start, answers), probe.Inference{})
	return &g
}
