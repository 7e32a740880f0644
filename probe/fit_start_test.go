package probe

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// A sliding counter on a grid anchored 700 ms off the wall clock: no wall
// grid explains the trace, so the fit searches a start grid and names it,
// with its phase to within the trace's resolution.
func TestInferStartAlignedSlidingCounter(t *testing.T) {
	truth := limiter.Config{Algo: limiter.SlidingCounter, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignStart, Origin: epoch.Add(-time.Hour + 700*time.Millisecond)}
	obs := simulated(t, truth, epoch, time.Second+30*time.Millisecond, 50*time.Millisecond)
	plain := Infer(obs)
	if plain.Family != limiter.SlidingCounter || plain.Alignment != limiter.AlignStart || plain.PhaseS == nil {
		t.Fatalf("inferred %s (alignment %q)", plain.Summary(), plain.Alignment)
	}
	// The simulated probe starts at epoch: the first boundary is 0.7 s in.
	if plain.Limit != 20 || plain.WindowS < 1.9 || plain.WindowS > 2.1 || *plain.PhaseS < 0.6 || *plain.PhaseS > 0.8 {
		t.Fatalf("parameters: %s", plain.Summary())
	}
	// The model the inference names replays the run as the fit scored it.
	cfg, err := plain.Model()
	if err != nil || cfg.Align != limiter.AlignStart {
		t.Fatalf("model %+v: %v", cfg, err)
	}
	if r, _ := fit.Replay(obs, cfg); r.Mismatches != plain.Decisions-plain.Explained {
		t.Fatalf("model replays %d mismatches, inference says %d", r.Mismatches, plain.Decisions-plain.Explained)
	}
	// The same counter on the wall grid is not called start-aligned: a free
	// phase is searched only when the wall grid fails.
	wall := truth
	wall.Align, wall.Origin = limiter.AlignWall, time.Time{}
	if inf := Infer(simulated(t, wall, epoch, time.Second+30*time.Millisecond, 50*time.Millisecond)); inf.Alignment == limiter.AlignStart {
		t.Fatalf("a wall-aligned counter inferred %s", inf.Summary())
	}
}

// Two models that explain a run alike disagree on a volley sent after a
// silence: the deciding experiment finds it, and finds nothing between a
// model and itself.
func TestDisagreementOfTiedModels(t *testing.T) {
	obs := simulated(t, limiter.Config{Algo: limiter.FixedWindow, Limit: 10, Window: 2 * time.Second, Align: limiter.AlignWall}, epoch, 2030*time.Millisecond, 100*time.Millisecond)
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
	if n := disagreement(obs, []fit.Candidate{wall, log}, last, volley); n < 2 {
		t.Fatalf("a fixed window and a sliding log disagree on %d of a volley after the boundary", n)
	}
	if n := disagreement(obs, []fit.Candidate{wall, wall}, last, volley); n != 0 {
		t.Fatalf("a model disagrees with itself on %d", n)
	}
}

// A key shut for 2 s after every rejection: seeded with the bucket's own
// numbers, the penalty search finds the block and its length, which
// explains every decision. (The whole inference may name a first-aligned
// fixed window instead: a block the bucket refills during makes every
// cycle a whole capacity and then a fixed wait — the same function on this
// run.)
func TestFitPenaltiesFindsTheBlock(t *testing.T) {
	truth := limiter.Config{Algo: limiter.TokenBucket, Rate: 2, Burst: 5, Block: 2 * time.Second}
	obs := simulated(t, truth, epoch, 700*time.Millisecond, 100*time.Millisecond)
	evs := obs.Events()
	plain := truth
	plain.Block = 0
	if m := fit.ReplayEvents(evs, plain, 0, observation.DecisionUncertainty(obs.RTT), 1000, nil); m < 5 {
		t.Fatalf("the bucket without its block explains all but %d decisions", m)
	}
	best := fit.FitPenalties(evs, fit.HypothesesOf(obs), []fit.Candidate{{Config: plain}}, obs.RTT)
	if len(best) == 0 || best[0].Mismatches != 0 {
		t.Fatalf("penalty search: %+v", best)
	}
	for _, c := range best {
		if c.Config.Block < 1800*time.Millisecond || c.Config.Block > 2050*time.Millisecond {
			t.Fatalf("block %s tied, truth 2s", c.Config.Block)
		}
	}
	// One lockout is no penalty (a target may simply have stopped
	// limiting): the run up to just after the first reopening gets no
	// block candidates, the whole run some.
	k := 0
	for k < len(evs) && evs[k].Admitted {
		k++
	}
	for k < len(evs) && !evs[k].Admitted {
		k++
	}
	if got := fit.BlockCandidates(evs[:k+2]); len(got) != 0 || len(fit.BlockCandidates(evs)) == 0 {
		t.Fatalf("block candidates from one lockout: %v", got)
	}
}

// A bucket refilled in clumps and a sliding counter that counts denied
// attempts can explain a short probe alike; steady knocking splits them: the
// bucket admits its 10 tokens every second however often it is asked, the
// counter, asked 40 times a second for a limit of 10, stays shut. A train
// slower than the refill (10/s) splits them far less.
func TestKnockingSplitsARefillFromACountingCounter(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20, RefillEvery: time.Second, Origin: epoch.Add(-time.Hour + 370*time.Millisecond)}
	obs := simulated(t, bucket, epoch, time.Second+30*time.Millisecond, 50*time.Millisecond)
	counting := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingCounter, Limit: 10, Window: time.Second, Align: limiter.AlignStart, Origin: epoch.Add(-time.Hour + 370*time.Millisecond), CountRejected: true}}
	last := obs.Results[len(obs.Results)-1].Sent
	fast := disagreement(obs, []fit.Candidate{{Config: bucket}, counting}, last, knockTrain(splitKnockGaps[0]))
	slow := disagreement(obs, []fit.Candidate{{Config: bucket}, counting}, last, knockTrain(splitKnockGaps[len(splitKnockGaps)-1]))
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
	obs := simulated(t, bucket, epoch, 2030*time.Millisecond, 50*time.Millisecond)
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

// A deciding probe's natural length is max(20 s, 3 W) of the largest window
// in contention; the whole budget only when every model counts denied
// attempts; knocking only when the models disagree on that.
func TestNaturalEndOfADecidingProbe(t *testing.T) {
	p := &planner{deadline: 59 * time.Second}
	plain := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 100, Window: 10 * time.Second}}
	counting := fit.Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 100, Window: 10 * time.Second, CountRejected: true}}
	bucket := fit.Candidate{Config: limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20}}
	for _, c := range []struct {
		models []fit.Candidate
		end    time.Duration
		knock  bool
	}{
		{[]fit.Candidate{bucket, bucket}, 20 * time.Second, false},
		{[]fit.Candidate{plain, bucket}, 30 * time.Second, false},
		{[]fit.Candidate{plain, counting}, 30 * time.Second, true},
		{[]fit.Candidate{counting, counting}, 59 * time.Second, false},
	} {
		if end, knock := p.naturalEnd(c.models); end != c.end || knock != c.knock {
			t.Errorf("%v: end %v knock %v, want %v %v", c.models, end, knock, c.end, c.knock)
		}
	}
}

// The deciding experiment's contest holds each model once: a family whose
// fit left one candidate gave it as its variant, its smallest and its
// largest, and the probe noted three models tied where there was one.
func TestTiedModelsAreDistinct(t *testing.T) {
	obs := simulated(t, limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 10}, epoch, 2030*time.Millisecond, 50*time.Millisecond)
	models := tiedModels(obs, nil)
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
