package probe

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// recordedProbe reads the probe a real run recorded against a built-in token
// bucket (report's fixture), as `ratecheck report` would.
func recordedProbe(tb testing.TB) *observation.Observation {
	return recordedObservation(tb, "../report/testdata/probe.jsonl")
}

// BenchmarkInfer times the whole inference — the grid search is nearly all
// of it — on a recorded probe and on simulated ones of the window and
// concurrency families, whose grids are the largest, and of two tiers,
// where every search runs (BenchmarkFitTiers: the tiers search's share).
func BenchmarkInfer(b *testing.B) {
	cases := []struct {
		name string
		obs  *observation.Observation
	}{
		{"recorded-token-bucket", recordedProbe(b)},
		{"sliding-log", simulated(b, limiter.Config{Algo: limiter.SlidingLog, Limit: 10, Window: time.Second}, epoch, 650*time.Millisecond, 100*time.Millisecond)},
		{"fixed-window", simulated(b, limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignWall}, epoch, 2030*time.Millisecond, 100*time.Millisecond)},
		// No single family explains it: the tiers search runs too.
		{"tiers-all", simulated(b, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{
			{Algo: limiter.TokenBucket, Rate: 10, Burst: 5}, {Algo: limiter.FixedWindow, Limit: 16, Window: 2 * time.Second, Align: limiter.AlignWall}}},
			epoch, 700*time.Millisecond, 50*time.Millisecond)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Infer(c.obs)
			}
		})
	}
}

// BenchmarkFitTiers times the two-tier search alone on the simulated run of
// BenchmarkInfer's tiers-all case.
func BenchmarkFitTiers(b *testing.B) {
	obs := simulated(b, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 5}, {Algo: limiter.FixedWindow, Limit: 16, Window: 2 * time.Second, Align: limiter.AlignWall}}},
		epoch, 700*time.Millisecond, 50*time.Millisecond)
	evs, h := obs.Events(), fit.HypothesesOf(obs)
	for b.Loop() {
		fit.FitTiers(evs, h, obs.RTT)
	}
}
