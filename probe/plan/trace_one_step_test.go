package plan

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// The trace stops after one step where a second would crowd the deciding
// experiment out of the budget — HAProxy's http_req_rate, a sliding
// counter of 20 per 4 s that counts denied attempts, stays shut about
// 7 s under the trace's knocking, in a 20 s budget — and the experiment
// then runs in the time it left. A window whose two steps leave room (a
// fixed window of 20 per 2 s, or of 20 per 6 s, in the same budget) is
// traced to its second step as before.
func TestTraceStopsAfterOneStepWhereTwoCrowdOutTheExperiment(t *testing.T) {
	const oneStep = "trace stopped after one step"
	for _, c := range []struct {
		builtin string
		one     bool
	}{
		{"builtin:sliding_counter?limit=20&window=4s&align=first&count-rejected=on&headers=none&retry-after=off&scope=ip", true},
		{"builtin:fixed_window?limit=20&window=2s&headers=none&retry-after=off", false},
		{"builtin:fixed_window?limit=20&window=6s&headers=none&retry-after=off", false},
	} {
		obs := planSim(t, c.builtin, "", Options{MaxTime: 20 * time.Second})
		stopped := slices.ContainsFunc(obs.Notes, func(n string) bool { return strings.HasPrefix(n, oneStep) })
		var tr []*results.Result
		for _, r := range obs.Phase(observation.PhaseTrace) {
			tr = append(tr, &r)
		}
		_, one := firstStepLock(tr)
		split := len(obs.Phase(observation.PhaseSplit))
		switch {
		case stopped != c.one:
			t.Errorf("%s: stopped after one step %v, want %v (notes %q)", c.builtin, stopped, c.one, obs.Notes)
		case c.one && !one:
			t.Errorf("%s: the note says one step, the trace took another", c.builtin)
		case c.one && split == 0:
			t.Errorf("%s: the trace left the deciding experiment its time, and none ran (notes %q)", c.builtin, obs.Notes)
		case !c.one && one:
			t.Errorf("%s: the trace ended with one step, want two (notes %q)", c.builtin, obs.Notes)
		}
	}
}
