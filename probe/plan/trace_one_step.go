package plan

import (
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// A trace stops at its second step (enough), but a lock long beside the
// budget leaves nothing after that step: HAProxy's http_req_rate (a
// sliding counter of 20 per 4 s that counts denied attempts) stays shut
// 7.4 s under the trace's knocking, so its two steps took 16 of a 20 s
// budget, and the fixed window of 15 per 7.5 s that explains those two
// locks as well as the truth could not be told from it: no schedule in the
// 1.5 s left separated them, and the verdict was a toss-up either way
// (named a fixed window at 0.48 in 2 of 8 simulated runs, in CI too). A
// second step as long as the first repeats what the first showed; the
// deciding experiment asks the models what they disagree on. So the trace
// stops after one step when a second, a lock's length on, would leave
// less than another lock's length of the budget.

// secondStepCrowdsOut says whether the trace tr, locked after its first
// step, should stop there, and the lock that step ended.
func (p *planner) secondStepCrowdsOut(tr []*results.Result) (time.Duration, bool) {
	if len(tr) == 0 || tr[len(tr)-1].Admitted() {
		return 0, false
	}
	lock, ok := firstStepLock(tr)
	if !ok {
		return 0, false
	}
	return lock, p.e.Now()+2*lock > p.end
}

// firstStepLock is how long the key stayed shut before the trace's one
// step (the trace's start, or its latest admission before the step, to the
// step's first admission), when the trace has taken exactly one step (an
// admissionGroup of at least stepSize).
func firstStepLock(tr []*results.Result) (time.Duration, bool) {
	steps, lock := 0, time.Duration(0)
	for _, g := range admissionGroups(tr) {
		if g.n >= stepSize {
			steps, lock = steps+1, g.first-g.before
		}
	}
	return lock, steps == 1
}
