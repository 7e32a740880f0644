package fit

import (
	"math"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The search stops counting a candidate past MostCounted mismatches, and
// that changes no fit within it: every family the search without the stop
// fits within MostCounted has the same best (and the same count) with it,
// and every other family is TooLittle, with no best.
func TestCountingStopsOnlyPastMostCounted(t *testing.T) {
	truths := []limiter.Config{
		{Algo: limiter.TokenBucket, Rate: 20, Burst: 10},
		{Algo: limiter.FixedWindow, Limit: 10, Window: time.Second, Align: limiter.AlignWall},
		{Algo: limiter.SlidingLog, Limit: 12, Window: 2 * time.Second},
		{Algo: limiter.SlidingCounter, Limit: 15, Window: 3 * time.Second, CountRejected: true},
		{Algo: limiter.LeakyShaping, Rate: 8, Burst: 5},
	}
	tooLittle := 0
	for _, truth := range truths {
		obs := probetest.Simulated(t, truth, probetest.Epoch, 1030*time.Millisecond, 40*time.Millisecond)
		evs, h := obs.Events(), HypothesesOf(obs)
		stopped := FitAll(evs, h, obs.RTT)
		mostCounted = func(int) int { return math.MaxInt32 }
		counted := FitAll(evs, h, obs.RTT)
		mostCounted = MostCounted
		if len(stopped) != len(counted) {
			t.Fatalf("%v: %d families with the stop, %d without", truth, len(stopped), len(counted))
		}
		for i, all := range counted {
			got := stopped[i]
			switch {
			case len(all.Best) == 0: // not searched (no grid): nothing to stop
				if len(got.Best) > 0 || got.TooLittle() {
					t.Errorf("%v: %s searched with the stop only", truth, all.Family)
				}
			case all.Mismatches() <= MostCounted(len(evs)) || all.Family == limiter.None:
				// (The model that limits nothing is counted whole.)
				if got.Mismatches() != all.Mismatches() || got.Best[0].Config != all.Best[0].Config {
					t.Errorf("%v: %s best %+v (%d), counting every mismatch %+v (%d)", truth, all.Family,
						first(got.Best).Config, got.Mismatches(), all.Best[0].Config, all.Mismatches())
				}
			case len(got.Best) > 0:
				t.Errorf("%v: %s fitted %+v, which misses %d, past %d", truth, all.Family, got.Best[0].Config, got.Mismatches(), MostCounted(len(evs)))
			case all.Family != limiter.Tiers && !got.TooLittle():
				t.Errorf("%v: %s misses %d of %d and has no best, but is not TooLittle", truth, all.Family, all.Mismatches(), len(evs))
			default:
				tooLittle++
			}
		}
	}
	if tooLittle == 0 {
		t.Error("no family missed more than MostCounted: the stop went untested")
	}
}
