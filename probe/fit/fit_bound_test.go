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

// The bounds a grid's search stops replays at (the pilot sample's best,
// the workers' shared best) only save work: the candidates it keeps are
// those an exhaustive scan, every replay run to the end, keeps — the same
// configs, offsets and counts, in grid order.
func TestFitFamilyKeepsWhatAnExhaustiveScanKeeps(t *testing.T) {
	// A log the grid does not hold: its best misses some decisions.
	truth := limiter.Config{Algo: limiter.SlidingLog, Limit: 20, Window: 2 * time.Second}
	obs := probetest.Simulated(t, truth, probetest.Epoch, 1030*time.Millisecond, 70*time.Millisecond)
	evs := obs.Events()
	var cfgs []limiter.Config
	for r := 8.0; r <= 12; r += 0.05 {
		for b := 15; b <= 25; b++ {
			cfgs = append(cfgs, limiter.Config{Algo: limiter.TokenBucket, Rate: r, Burst: b})
			cfgs = append(cfgs, limiter.Config{Algo: limiter.FixedWindow, Limit: b, Window: time.Duration(float64(b) / r * float64(time.Second)), Align: limiter.AlignWall})
		}
	}
	for _, margin := range []int{0, 2, 10} {
		got := fitFamilyWithin(evs, cfgs, obs.RTT, margin)
		want := exhaustive(evs, cfgs, obs.RTT, margin)
		if want[0].Mismatches == 0 {
			t.Fatal("the grid explains the run exactly: no bound is tested")
		}
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Fatalf("margin %d: the search kept %d candidates, an exhaustive scan %d (first %+v and %+v)", margin, len(got), len(want), first(got), first(want))
		}
	}
}

// exhaustive is fitFamilyWithin without bounds: every config at every
// offset replayed to the end, those within margin of the best kept, best
// first, in grid order among equals.
func exhaustive(evs []observation.Event, cfgs []limiter.Config, rtt time.Duration, margin int) []Candidate {
	unc := observation.DecisionUncertainty(rtt)
	byKey := observation.KeyMajor(evs)
	var all []Candidate
	best := math.MaxInt32
	for _, c := range cfgs {
		for _, off := range replayOffsets(c, rtt) {
			m := ReplayEvents(byKey, c, off, unc, math.MaxInt32, nil)
			best = min(best, m)
			all = append(all, Candidate{Config: c, Mismatches: m, Scored: len(evs), Offset: off})
		}
	}
	out := slices.DeleteFunc(all, func(c Candidate) bool { return c.Mismatches > best+margin })
	if margin > 0 {
		slices.SortStableFunc(out, func(a, b Candidate) int { return a.Mismatches - b.Mismatches })
	}
	return out
}

func first(cs []Candidate) Candidate {
	if len(cs) == 0 {
		return Candidate{}
	}
	return cs[0]
}
