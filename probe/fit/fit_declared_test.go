package fit

import (
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A log of 10 per 100 s that counts denied attempts stays shut through the
// whole trace: no step to measure a window from, and no common window
// near 100 s. The first rejection's Retry-After (99 s, from the oldest
// entry at the run's first request) puts 100 s on the grid; without it
// nothing near 100 s is tried.
func TestDeclaredWindowSeedsTheGrid(t *testing.T) {
	log := limiter.Config{Algo: limiter.SlidingLog, Limit: 10, Window: 100 * time.Second, CountRejected: true}
	o := probetest.Simulated(t, log, probetest.Epoch, time.Second, 100*time.Millisecond)
	near := func(ws []time.Duration) bool {
		return slices.ContainsFunc(ws, func(w time.Duration) bool { return w > 99500*time.Millisecond && w < 100500*time.Millisecond })
	}
	if near(HypothesesOf(o).Windows) {
		t.Fatal("a window near 100 s without a header naming it: the test shows nothing")
	}
	for i := range o.Results {
		if r := &o.Results[i]; !r.Admitted() {
			r.Headers = map[string]string{"retry-after": "99"}
			break
		}
	}
	if ws := declaredWindows(o, nil); !near(ws) {
		t.Fatalf("declared windows %v", ws)
	}
	if !near(HypothesesOf(o).Windows) {
		t.Fatal("the declared window is not on the grid")
	}
	if ws := declaredWindows(o, []time.Duration{100 * time.Second, 99 * time.Second}); len(ws) != 0 {
		t.Fatalf("seeds at 99 s and 100 s cover it, yet %v", ws)
	}
}

// Two bursts a second apart, the first admitted whole: a long window's
// limit is all they and the calibration admitted (3 + 30 + 10), a limit
// no single burst shows.
func TestLimitOfTwoBurstsInOneWindow(t *testing.T) {
	o := &observation.Observation{Start: probetest.Epoch, RTT: time.Millisecond}
	add := func(phase string, at time.Duration, n, admitted int) {
		for i := range n {
			status := 429
			if i < admitted {
				status = 200
			}
			o.Results = append(o.Results, results.Result{Seq: len(o.Results) + 1, Phase: phase, Scheduled: at, Sent: at,
				FirstByte: at + time.Millisecond, Done: at + time.Millisecond, Status: status})
		}
	}
	add(observation.PhaseCalibrate, 0, 3, 3)
	add(observation.PhaseBurst, time.Second, 30, 30)
	add(observation.PhaseBurst+"-1", 2*time.Second, 60, 10)
	if names := o.BurstPhases(); len(names) != 2 {
		t.Fatalf("burst phases %v", names)
	}
	if limits := HypothesesOf(o).Limits; !slices.Contains(limits, 43) {
		t.Fatalf("limits %v lack 43", limits)
	}
}
