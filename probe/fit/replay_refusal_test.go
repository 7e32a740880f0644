package fit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A replay that passes over the rejections a refusal covers answers every
// event as one that asks the model each time: on recorded runs (late
// answers, stalls, a lock knocked on, admissions re-asked at the instant
// capacity returned) and a simulated one, for every inert family on the
// grids their hypotheses give, at each clock offset.
func TestReplayPassesOverRefusalsUnchanged(t *testing.T) {
	runs := map[string]*observation.Observation{
		"simulated log": probetest.Simulated(t, limiter.Config{Algo: limiter.SlidingLog, Limit: 20, Window: 2 * time.Second},
			probetest.Epoch, 1030*time.Millisecond, 70*time.Millisecond),
	}
	for _, name := range []string{"fixed-start-knocked", "full-fill-bucket", "restart-knocked-shut", "tiers-pinned-rate", "fast-refill-bucket-of-one"} {
		runs[name] = probetest.Recorded(t, "../testdata/"+name+".jsonl")
	}
	for name, obs := range runs {
		evs := observation.KeyMajor(obs.Events())
		unc := observation.DecisionUncertainty(obs.RTT)
		replays := 0
		for _, c := range inertGrid(HypothesesOf(obs), evs[0].At) {
			if !c.RejectionsInert() {
				t.Fatalf("%+v: not inert", c)
			}
			for _, off := range replayOffsets(c, obs.RTT) {
				asked, passed := make([]answer, len(evs)), make([]answer, len(evs))
				ma := replayOn(mustModel(t, c), placeEvents(evs, off, unc), math.MaxInt32, asked, false)
				mp := replayOn(mustModel(t, c), placeEvents(evs, off, unc), math.MaxInt32, passed, true)
				if ma != mp || !slices.Equal(asked, passed) {
					t.Fatalf("%s: %+v at offset %v: %d mismatches asked, %d passing over refusals", name, c, off, ma, mp)
				}
				replays++
			}
		}
		if replays < 1000 {
			t.Fatalf("%s: only %d replays compared", name, replays)
		}
	}
}

// inertGrid is every inert family on every other limit and rate h holds,
// and its windows: windows on each grid (a start grid at five phases),
// logs, buckets continuous and refilled at intervals, shaping queues, two
// tiers.
func inertGrid(h Hypotheses, start time.Time) []limiter.Config {
	var out []limiter.Config
	for i, l := range h.Limits {
		if i%2 == 1 {
			continue
		}
		for _, w := range h.Windows {
			for _, algo := range []string{limiter.FixedWindow, limiter.SlidingCounter} {
				for _, align := range []string{limiter.AlignWall, limiter.AlignFirst} {
					out = append(out, limiter.Config{Algo: algo, Limit: l, Window: w, Align: align})
				}
				for k := range 5 {
					out = append(out, limiter.Config{Algo: algo, Limit: l, Window: w, Align: limiter.AlignStart, Origin: start.Add(w * time.Duration(k) / 5)})
				}
			}
			out = append(out, limiter.Config{Algo: limiter.SlidingLog, Limit: l, Window: w})
			out = append(out, limiter.Config{Algo: limiter.TokenBucket, Rate: float64(l) / w.Seconds(), Burst: l, RefillEvery: w, Origin: start})
		}
		for j, r := range h.Rates {
			if j%2 == 1 {
				continue
			}
			out = append(out, limiter.Config{Algo: limiter.TokenBucket, Rate: r, Burst: l})
			out = append(out, limiter.Config{Algo: limiter.LeakyShaping, Rate: r, Burst: l, DelayAfter: l / 2})
			out = append(out, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{
				{Algo: limiter.TokenBucket, Rate: r, Burst: max(1, l/2)}, {Algo: limiter.FixedWindow, Limit: l, Window: 10 * time.Second, Align: limiter.AlignWall}}})
		}
	}
	return out
}

func mustModel(t *testing.T, c limiter.Config) limiter.Limiter {
	t.Helper()
	lim, err := limiter.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}
