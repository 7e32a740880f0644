package fit

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The start grid a search fitted stays with its family's fit, taken or not
// (the plan's deciding experiment weighs it from there): a window anchored
// at the server's start, which the plain grids leave decisions of, has it,
// explaining the run; a wall window they explain whole has none, no start
// grid having been searched.
func TestFamilyFitKeepsTheStartGridItTried(t *testing.T) {
	start := limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignStart,
		Origin: probetest.Epoch.Add(-time.Hour + 700*time.Millisecond)}
	wall := limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignWall}
	for _, c := range []struct {
		name  string
		truth limiter.Config
		tried bool
	}{{"start grid", start, true}, {"wall grid", wall, false}} {
		obs := probetest.Simulated(t, c.truth, probetest.Epoch, 1030*time.Millisecond, 50*time.Millisecond)
		fits := FitAll(obs.Events(), HypothesesOf(obs), obs.RTT)
		f := fits[familyIndex(fits, limiter.FixedWindow)]
		switch {
		case !c.tried && f.StartTried != nil:
			t.Errorf("%s: a start grid was searched though the plain fits explain the run (%d mismatches)", c.name, f.Mismatches())
		case c.tried && (len(f.StartTried) == 0 || f.StartTried[0].Mismatches != 0 || f.StartTried[0].Config.Align != limiter.AlignStart):
			t.Errorf("%s: the start grid tried is %+v", c.name, f.StartTried)
		}
	}
}
