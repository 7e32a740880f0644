package grade

import "github.com/ratecheck/ratecheck/probe"

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

// OfAnswers grades the answers of a run that was no probe (an attack
// profile): with no inference to compare the headers with, the checks that
// compare them with the behaviour are skipped.
func OfAnswers(obs *probe.Observation) Report {
	return Grade(obs, probe.Inference{})
}
