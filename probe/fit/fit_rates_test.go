package fit

import (
	"math"
	"slices"
	"testing"
)

// Two estimates close together share one grid: as fine and as wide as
// their two grids, with no rate within half a fine step of another, and
// the first estimate in the middle of the first fine grid (traceRate).
func TestRateGridSharesCloseEstimates(t *testing.T) {
	for _, ests := range [][]float64{{100, 100.73}, {100, 98.2}, {10, 11.5}, {5, 40}} {
		got := rateGrid(ests)
		if got[RateFineSteps] != ests[0] {
			t.Errorf("%v: rate %d is %v, want the first estimate", ests, RateFineSteps, got[RateFineSteps])
		}
		var each []float64 // every estimate's grids, apart
		for _, e := range ests {
			each = append(each, rateGrid([]float64{e})...)
		}
		for _, r := range each {
			near := slices.IndexFunc(got, func(q float64) bool { return math.Abs(q-r) <= rateCoarseTolerance*r })
			fine := math.Abs(r/ests[0]-1) <= RateFineSteps*RateFineStep || math.Abs(r/ests[1]-1) <= RateFineSteps*RateFineStep
			if fine {
				near = slices.IndexFunc(got, func(q float64) bool { return math.Abs(q-r) <= rateFineTolerance*r*1.0001 })
			}
			if near < 0 {
				t.Errorf("%v: %v (fine %v) has no rate near it in the shared grid", ests, r, fine)
			}
		}
		sorted := slices.Sorted(slices.Values(got))
		for i := 1; i < len(sorted); i++ {
			if sorted[i]-sorted[i-1] <= rateFineTolerance*sorted[i] {
				t.Errorf("%v: %v and %v are within half a fine step", ests, sorted[i-1], sorted[i])
			}
		}
		if close := math.Abs(ests[1]/ests[0]-1) < 0.03; close && len(got) >= len(each)*3/4 {
			t.Errorf("%v: %d rates shared, %d apart", ests, len(got), len(each))
		}
	}
}
