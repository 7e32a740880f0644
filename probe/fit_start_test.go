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
