package fit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The refinements of a bucket's rate find the capacity and the rate of
// buckets at rates no grid holds, with the later refinements only near the
// capacity the first found, and none around a rate the fine grid already
// brackets: the truth is among the tied best, at its capacity.
func TestRefinedBucketsFindCapacityAndRate(t *testing.T) {
	for _, truth := range []limiter.Config{
		{Algo: limiter.TokenBucket, Rate: 68.52, Burst: 10},
		{Algo: limiter.TokenBucket, Rate: 7.31, Burst: 23},
	} {
		obs := probetest.Simulated(t, truth, probetest.Epoch, 1030*time.Millisecond, time.Duration(float64(time.Second)/truth.Rate/1.5))
		s := search{evs: obs.Events(), h: HypothesesOf(obs), rtt: obs.RTT}
		tb, _ := s.bucketGrids(s.h.Rates, s.h.Limits)
		f := s.refined(truth.Algo, s.withBucketsOfOne(tb))
		if len(f.Best) == 0 || f.Mismatches() != 0 {
			t.Fatalf("%v: best %+v, want the run explained", truth, first(f.Best))
		}
		lo, hi := math.Inf(1), 0.0
		for _, c := range f.Best {
			lo, hi = min(lo, c.Config.Rate), max(hi, c.Config.Rate)
			if c.Config.Burst != truth.Burst {
				t.Errorf("%v: fitted burst %d", truth, c.Config.Burst)
			}
		}
		if truth.Rate < lo || truth.Rate > hi {
			t.Errorf("%v: fitted rates %.3f-%.3f/s", truth, lo, hi)
		}
	}
}

func TestBracketedNeedsARateWithinStepOnEachSide(t *testing.T) {
	rates := []float64{99.8, 100, 100.4}
	for _, c := range []struct {
		r, step float64
		want    bool
	}{{100, 0.005, true}, {100, 0.003, false}, {99.8, 0.01, false}, {100.1, 0.004, true}} {
		if got := bracketed(c.r, c.step, rates); got != c.want {
			t.Errorf("bracketed(%v, %v) = %v, want %v", c.r, c.step, got, c.want)
		}
	}
}

func TestLimitsNearTheTiedCapacities(t *testing.T) {
	best := []Candidate{
		{Config: limiter.Config{Algo: limiter.TokenBucket, Burst: 10}},
		{Config: limiter.Config{Algo: limiter.LeakyShaping, Burst: 29}}, // a queue of 29 serves 30
	}
	limits := []int{5, 7, 8, 9, 10, 11, 12, 13, 20, 27, 28, 31, 32, 33}
	want := []int{8, 9, 10, 11, 12, 28, 31, 32}
	if got := limitsNear(best, limits); !slices.Equal(got, want) {
		t.Errorf("limitsNear = %v, want %v", got, want)
	}
}
