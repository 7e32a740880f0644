package expect

import (
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
)

// OfRun checks exps against one probe run, graded g (nil when it was not),
// and gives the outcomes with the run's verdict: what 'check' does with a
// live probe and 'report --expect' with a recorded one. A run that failed
// (failed != nil: the target was unreachable, the probe could not run)
// decided nothing, so every expectation is untested, noted with why.
func OfRun(exps []Expectation, res *probe.Result, g *grade.Report, failed error) ([]Outcome, string) {
	if failed != nil {
		outs := make([]Outcome, 0, len(exps))
		for _, e := range exps {
			outs = append(outs, Outcome{Expectation: e.Text, Key: e.Key, Expected: e.Expected(),
				Actual: "not tested", Result: Untested, Note: failed.Error()})
		}
		return outs, Verdict(outs)
	}
	letter := ""
	if g != nil {
		letter = g.Letter
	}
	outs := Evaluate(exps, FactsFrom(res.Observation, res.Inference, letter))
	return outs, Verdict(outs)
}

// OfCheck is the outcome of a check of several runs (Overall), with the
// rule for one cut short: an interrupted check has no verdict but for a
// failure its data already refutes (Evaluate keeps those), so it is
// otherwise untested.
func OfCheck(verdicts []string, interrupted bool) string {
	out := Overall(verdicts)
	if interrupted && out != Fail {
		return Untested
	}
	return out
}
