package observation

import (
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Counting over results: an observation holds them by value, the plan's
// collector by pointer; one helper of each kind serves both.

// resultRef is a result by value or by pointer.
type resultRef interface {
	results.Result | *results.Result
}

// deref is the result r holds.
func deref[T resultRef](r *T) *results.Result {
	if p, ok := any(r).(*results.Result); ok {
		return p
	}
	return *any(r).(**results.Result)
}

// CountAdmitted counts the admitted results.
func CountAdmitted[T resultRef](rs []T) int {
	n := 0
	for i := range rs {
		if deref(&rs[i]).Admitted() {
			n++
		}
	}
	return n
}

// AdmittedSent are the send times of the admitted results.
func AdmittedSent[T resultRef](rs []T) []time.Duration {
	var out []time.Duration
	for i := range rs {
		if r := deref(&rs[i]); r.Admitted() {
			out = append(out, r.Sent)
		}
	}
	return out
}

// AdmissionRuns are the lengths of the runs of consecutive admissions,
// requests that got no answer left out.
func AdmissionRuns[T resultRef](rs []T) []int {
	var runs []int
	in := false
	for i := range rs {
		switch r := deref(&rs[i]); {
		case r.Error != "":
		case r.Admitted() && in:
			runs[len(runs)-1]++
		case r.Admitted():
			runs, in = append(runs, 1), true
		default:
			in = false
		}
	}
	return runs
}

// BurstPhaseNames are the burst phases among rs ("burst", "burst-1", …), in
// order of appearance.
func BurstPhaseNames[T resultRef](rs []T) []string {
	var names []string
	seen := map[string]bool{}
	for i := range rs {
		if r := deref(&rs[i]); strings.HasPrefix(r.Phase, PhaseBurst) && !seen[r.Phase] {
			seen[r.Phase] = true
			names = append(names, r.Phase)
		}
	}
	return names
}

// BurstPhases are the observation's burst phases, in order.
func (o *Observation) BurstPhases() []string { return BurstPhaseNames(o.Results) }

// LastBurstPhase is the last burst phase (phaseBurst when none ran).
func (o *Observation) LastBurstPhase() string {
	names := o.BurstPhases()
	if len(names) == 0 {
		return PhaseBurst
	}
	return names[len(names)-1]
}
