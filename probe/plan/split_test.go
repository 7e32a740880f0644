package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Two models that explain a run alike disagree on a volley sent after a
// silence: the deciding experiment finds it, and finds nothing between a
// model and itself.
func TestDisagreementOfTiedModels(t *testing.T) {
	obs := probetest.Simulated(t, limiter.Config{Algo: limiter.FixedWindow, Limit: 10, Window: 2 * time.Second, Align: limiter.AlignWall}, probetest.Epoch, 2030*time.Millisecond, 100*time.Millisecond)
	wall := fit.Candidate{Config: limiter.Config{Algo: limiter.FixedWindow, Limit: 10, Window: 2 * time.Second, Align: limiter.AlignWall}}
	log := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 10, Window: 2 * time.Second}}
	last := obs.Results[len(obs.Results)-1].Sent
	// Just after the next wall boundary (the trace ends at 7.03 s, the
	// boundary is at 8 s): the window gives all 10 back, the log only those
	// admitted 2 s before.
	var volley []time.Duration
	for i := range 12 {
		volley = append(volley, 8*time.Second+10*time.Millisecond-last+time.Duration(i)*splitVolleyGap)
	}
	if n, _ := disagreement(obs, []fit.Candidate{wall, log}, last, volley); n < 2 {
		t.Fatalf("a fixed window and a sliding log disagree on %d of a volley after the boundary", n)
	}
	if n, _ := disagreement(obs, []fit.Candidate{wall, wall}, last, volley); n != 0 {
		t.Fatalf("a model disagrees with itself on %d", n)
	}
}

// A bucket refilled in clumps and a sliding counter that counts denied
// attempts can explain a short probe alike; steady knocking splits them: the
// bucket admits its 10 tokens every second however often it is asked, the
// counter, asked 40 times a second for a limit of 10, stays shut. A train
// slower than the refill (10/s) splits them far less.
func TestKnockingSplitsARefillFromACountingCounter(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20, RefillEvery: time.Second, Origin: probetest.Epoch.Add(-time.Hour + 370*time.Millisecond)}
	obs := probetest.Simulated(t, bucket, probetest.Epoch, time.Second+30*time.Millisecond, 50*time.Millisecond)
	counting := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingCounter, Limit: 10, Window: time.Second, Align: limiter.AlignStart, Origin: probetest.Epoch.Add(-time.Hour + 370*time.Millisecond), CountRejected: true}}
	last := obs.Results[len(obs.Results)-1].Sent
	fast, _ := disagreement(obs, []fit.Candidate{{Config: bucket}, counting}, last, knockTrain(splitKnockGaps[0]))
	slow, _ := disagreement(obs, []fit.Candidate{{Config: bucket}, counting}, last, knockTrain(splitKnockGaps[len(splitKnockGaps)-1]))
	t.Logf("disagreements: %d knocking at 40/s, %d at 10/s", fast, slow)
	if fast < 10 || fast <= slow {
		t.Fatalf("knocking at 40/s: %d disagreements, at 10/s: %d", fast, slow)
	}
}

// The first deciding experiment's models were fitted before the scope
// trials and the silent waits: a model what the run showed since refutes
// is dropped before any experiment is spent on it. A bucket's run refutes a
// fixed window of the same capacity (its trace refills continuously), and
// keeps the bucket, however the candidates are ordered.
func TestStillTiedDropsWhatTheRunRefuted(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20}
	obs := probetest.Simulated(t, bucket, probetest.Epoch, 2030*time.Millisecond, 50*time.Millisecond)
	window := limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 10 * time.Second, Align: limiter.AlignFirst}
	for _, models := range [][]fit.Candidate{{{Config: bucket}, {Config: window}}, {{Config: window}, {Config: bucket}}} {
		got := stillTied(obs, models)
		if len(got) != 1 || got[0].Config.Algo != limiter.TokenBucket || got[0].Mismatches != 0 {
			t.Fatalf("still tied: %+v", got)
		}
	}
	if got := stillTied(obs, []fit.Candidate{{Config: bucket}, {Config: bucket}}); len(got) != 2 {
		t.Errorf("two models that both explain the run: %d kept", len(got))
	}
}

// After a deciding experiment, the last round's models are re-scored: a
// best that still explains the run keeps the round going between those
// still in contention, without a fresh fit; a best the run now refutes
// asks for one. A bucket's run keeps a bucket marked best and drops a
// window rival; with the window marked best (it missed nothing before),
// the run refutes it.
func TestAfterExperimentKeepsTheModelsUnlessTheBestIsRefuted(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20}
	obs := probetest.Simulated(t, bucket, probetest.Epoch, 2030*time.Millisecond, 50*time.Millisecond)
	window := limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 10 * time.Second, Align: limiter.AlignFirst}
	kept, ok := afterExperiment(obs, []fit.Candidate{{Config: bucket}, {Config: window, Mismatches: 1}})
	if !ok || len(kept) != 1 || kept[0].Config.Algo != limiter.TokenBucket {
		t.Fatalf("a best the run still fits: kept %+v, ok %v; want the bucket alone, no fresh fit", kept, ok)
	}
	kept, ok = afterExperiment(obs, []fit.Candidate{{Config: bucket, Mismatches: 1}, {Config: window}})
	if ok {
		t.Fatalf("a best the run refutes: kept %+v without a fresh fit", kept)
	}
	if _, ok := afterExperiment(obs, nil); ok {
		t.Fatal("no models: no fresh fit asked for")
	}
}

// A deciding probe's natural length is max(20 s, 3 W) of the largest window
// in contention (a composition's tiers' among them); the whole budget only
// when every model counts denied attempts; knocking only when the models
// disagree on that.
func TestNaturalEndOfADecidingProbe(t *testing.T) {
	p := &planner{deadline: 59 * time.Second, col: attack.NewCollector(true)}
	plain := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 100, Window: 10 * time.Second}}
	counting := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 100, Window: 10 * time.Second, CountRejected: true}}
	bucket := fit.Candidate{Config: limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20}}
	pool := fit.Candidate{Config: limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{
		{Algo: limiter.TokenBucket, Rate: 5, Burst: 5},
		{Algo: limiter.SlidingLog, Limit: 30, Window: 20 * time.Second, CountRejected: true}}}}
	for _, c := range []struct {
		models []fit.Candidate
		end    time.Duration
		knock  bool
	}{
		{[]fit.Candidate{bucket, bucket}, 20 * time.Second, false},
		{[]fit.Candidate{plain, bucket}, 30 * time.Second, false},
		{[]fit.Candidate{plain, counting}, 30 * time.Second, true},
		{[]fit.Candidate{counting, counting}, 59 * time.Second, false},
		// A clear best and a rival whose margin is only thin: no quiet
		// periods for the rival's sake.
		{[]fit.Candidate{counting, behind(counting, 3)}, 30 * time.Second, false},
		{[]fit.Candidate{counting, behind(bucket, 3)}, 30 * time.Second, true},
		// A burst pool's window is in its tier, and so is its counting:
		// 50 s for a pool of 20 s (2 W + 10 s); two such tied, the budget.
		{[]fit.Candidate{pool, bucket}, 50 * time.Second, true},
		{[]fit.Candidate{pool, pool}, 59 * time.Second, false},
	} {
		if end, knock := p.naturalEnd(c.models); end != c.end || knock != c.knock {
			t.Errorf("%v: end %v knock %v, want %v %v", c.models, end, knock, c.end, c.knock)
		}
	}
}

// behind is c missing n decisions.
func behind(c fit.Candidate, n int) fit.Candidate {
	c.Mismatches = n
	return c
}

// The deciding experiment's contest holds each model once: a family whose
// fit left one candidate gave it as its variant, its smallest and its
// largest, and the probe noted three models tied where there was one.
func TestTiedModelsAreDistinct(t *testing.T) {
	obs := probetest.Simulated(t, limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 10}, probetest.Epoch, 2030*time.Millisecond, 50*time.Millisecond)
	models := tiedModels(obs, nil, nil)
	seen := map[limiter.Config]bool{}
	for _, m := range models {
		if seen[m.Config] {
			t.Fatalf("%+v twice among %d tied models", m.Config, len(models))
		}
		seen[m.Config] = true
	}
	a := fit.Candidate{Config: limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 10}}
	b := a
	b.Offset = time.Millisecond
	if got := distinctModels([]fit.Candidate{a, a, b, a}); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("distinct %+v", got)
	}
}

// The recorded probe of a fixed window of 20 per 3 s on a grid anchored at
// the server's start, which a first-aligned window explains as well
// (probe's TestFirstAlignedWindowIsNotNamedAloneBesideAStartGrid): both
// are among the tied models the deciding experiment chooses its requests
// for, and two volleys a silence apart split them.
func TestFirstAlignedWindowAndItsStartGridAreSplit(t *testing.T) {
	obs := probetest.Recorded(t, "../testdata/fixed-start-knocked.jsonl")
	var start, first *fit.Candidate
	models := tiedModels(obs, nil, nil)
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
		n, _ := disagreement(obs, []fit.Candidate{*first, *start}, from, twoVolleysAfter(silence, 22))
		best = max(best, n)
	}
	if best < splitMinDisagreement {
		t.Fatalf("no two volleys split the grids: at most %d requests decided differently", best)
	}
}

// A bucket's capacity may be a primary and a burst pool that has not come
// back: the deciding experiment's contest holds that composition next to
// the best, whatever else ties (appended last, it fell past splitMaxModels
// behind the window families' extremes), and the experiment chosen
// between them is a volley after a silence the primary could not fill
// (more than half the capacity at the rate, 5 s for 40 at 4/s), which
// sets the pool apart from the bucket on more than noise.
func TestDecidingExperimentAsksForTheHiddenPool(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 4, Burst: 40}
	obs := probetest.Simulated(t, bucket, probetest.Epoch, time.Second, 100*time.Millisecond)
	models := tiedModels(obs, nil, nil)
	pool := slices.IndexFunc(models, func(m fit.Candidate) bool { return m.Config.Algo == limiter.Tiers })
	if pool < 0 || pool > 1 {
		t.Fatalf("the hidden pool is at %d of %d tied models", pool, len(models))
	}
	from := obs.Results[len(obs.Results)-1].Sent
	n, apart := disagreement(obs, []fit.Candidate{models[0], models[pool]}, from, volleyAfter(8*time.Second, 42))
	if n < splitMinDisagreement || apart[1] != n {
		t.Fatalf("a volley after 8 s: %d decided differently, %v apart from the best", n, apart)
	}
	if n, _ := disagreement(obs, []fit.Candidate{models[0], models[pool]}, from, volleyAfter(2*time.Second, 42)); n != 0 {
		t.Fatalf("a volley after 2 s, within the primary's half: %d decided differently", n)
	}
}
