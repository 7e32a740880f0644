package probe

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

// countAdmitted counts the admitted results.
func countAdmitted[T resultRef](rs []T) int {
	n := 0
	for i := range rs {
		if deref(&rs[i]).Admitted() {
			n++
		}
	}
	return n
}

// admittedSent are the send times of the admitted results.
func admittedSent[T resultRef](rs []T) []time.Duration {
	var out []time.Duration
	for i := range rs {
		if r := deref(&rs[i]); r.Admitted() {
			out = append(out, r.Sent)
		}
	}
	return out
}

// admissionRuns are the lengths of the runs of consecutive admissions,
// requests that got no answer left out.
func admissionRuns[T resultRef](rs []T) []int {
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

// burstPhaseNames are the burst phases among rs ("burst", "burst-1", …), in
// order of appearance.
func burstPhaseNames[T resultRef](rs []T) []string {
	var names []string
	seen := map[string]bool{}
	for i := range rs {
		if r := deref(&rs[i]); strings.HasPrefix(r.Phase, phaseBurst) && !seen[r.Phase] {
			seen[r.Phase] = true
			names = append(names, r.Phase)
		}
	}
	return names
}
