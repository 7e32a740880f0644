package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// A recorded probe of a fixed window of 20 per 3 s on a grid anchored at
// the server's start (align=start), whose trace knocked without pause:
// each window opened at the first request after a grid boundary, which is
// what a first-aligned window does, and a first-aligned one of 2.925 s
// explains all 370 decisions. The accuracy harness saw it named
// first-aligned alone (confidence 0.75): a start grid, which explains the
// run as well, was searched only when no plain model did. Now the probe
// names both as not told apart, and the two are among the tied models the
// deciding experiment chooses its requests for, some of which split them.
func TestFirstAlignedWindowIsNotNamedAloneBesideAStartGrid(t *testing.T) {
	obs := recordedObservation(t, "testdata/fixed-start-knocked.jsonl")
	inf := Infer(obs)
	if inf.Family != limiter.FixedWindow || !strings.Contains(inf.Alignment, limiter.AlignStart) || !strings.Contains(inf.Alignment, limiter.AlignFirst) {
		t.Fatalf("named %s; a first-aligned window and a start grid explain the run alike", inf.Summary())
	}
	if inf.Limit != 20 || inf.WindowS < 2.7 || inf.WindowS > 3.3 {
		t.Errorf("named %s, truth 20 per 3 s", inf.Summary())
	}
	var start, first *fit.Candidate
	models := tiedModels(obs, nil)
	for i, m := range models {
		if m.Config.Algo == limiter.FixedWindow && m.Config.Align == limiter.AlignStart && start == nil {
			start = &models[i]
		}
		if m.Config.Algo == limiter.FixedWindow && m.Config.Align == limiter.AlignFirst && first == nil {
			first = &models[i]
		}
	}
	if start == nil || first == nil {
		t.Fatalf("the tied models lack a fixed window's start grid (%v) or the first-aligned window (%v): %d models", start != nil, first != nil, len(models))
	}
	// Two volleys a silence apart that is no multiple of the window: the
	// grid reopens at a boundary between them, the first-aligned window
	// a whole window after the first volley.
	from := obs.Results[len(obs.Results)-1].Sent
	best := 0
	for _, silence := range splitSilences[1:] {
		var sched []time.Duration
		for v := range 2 {
			for i := range 22 {
				sched = append(sched, splitLead+time.Duration(v+1)*silence+time.Duration(v*22+i)*splitVolleyGap)
			}
		}
		best = max(best, disagreement(obs, []fit.Candidate{*first, *start}, from, sched))
	}
	if best < splitMinDisagreement {
		t.Fatalf("no two volleys split the grids: at most %d requests decided differently", best)
	}
}
