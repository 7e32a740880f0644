package fit

import (
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// declaredCover: a declared window within this share of a seed is on the
// grid already (the fine grid around a seed spans ±2 %).
const declaredCover = 0.02

// declaredWindows are the windows the first rejection's Retry-After
// names, measured from the run's first admission (a log's oldest entry, a
// window opened by the first request) and from the last admission before
// it (a lock that began there), that the seeds do not cover yet. They seed the grid only: a limiter whose trace never saw
// capacity come back (a counting log of 47 per 102 s, knocked on for
// 112 s) has no step to measure, and a grid of common windows without
// 102 s named it a sliding counter of 81 s. The fit still earns it.
func declaredWindows(o *observation.Observation, seeds []time.Duration) []time.Duration {
	rs := observation.SortedResults(o.Results)
	first, last := time.Duration(-1), time.Duration(-1)
	for i := range rs {
		r := &rs[i]
		if !observation.Decided(r) {
			continue
		}
		if r.Admitted() {
			if first < 0 {
				first = r.Sent
			}
			last = r.Sent
			continue
		}
		if first < 0 {
			return nil
		}
		// Retry-After, not the reset: a bucket's reset is when it is
		// whole again (297 at 0.76/s: 390 s), no window, and a grid of
		// such windows cost a probe 6 s of CPU.
		at, ok := observation.RetryAfterOf(o.Start, r)
		if !ok {
			return nil
		}
		var out []time.Duration
		for _, from := range []time.Duration{first, last} {
			if w := at.Sub(o.Start) - from; w > 0 && !covered(w, seeds) {
				out = append(out, w)
			}
		}
		return out
	}
	return nil
}

// covered says whether a window within declaredCover of w is in ws.
func covered(w time.Duration, ws []time.Duration) bool {
	for _, x := range ws {
		if d := float64(x-w) / float64(w); d > -declaredCover && d < declaredCover {
			return true
		}
	}
	return false
}
