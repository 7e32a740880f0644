package fit

import (
	"math"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Grids anchored where the server started (align=start): windows open at
// phase + k·W, a phase that follows neither the wall clock nor the client.
// It is one more free parameter, so it is searched only when the wall- and
// first-aligned models leave decisions unexplained, and only around what
// they found: their limits and windows, and phases that put a boundary
// just before an admission that followed a rejection.

// startSpread is how far (relatively) a window may be from the best plain
// fit's and still be tried on a start grid.
// startSpread is how far (relatively) a common window may be from the
// plain fits' windows and still be tried on a start grid.
const startSpread = 0.25

// startPhases is the coarse phase grid per window; the best startSeeds
// coarse phases are refined in steps of a startFineParts-th of the window,
// startRefine either way: half a coarse step, so the fine grids around
// neighbouring coarse points meet (widen then takes the phase to its
// interval); startWindowStep/Steps the grid of windows around each L/r.
const (
	// countingMinWindow and countingWindowStep make the geometric grid of
	// a counting sliding counter's windows: eight per octave, ±4.5%, which
	// the widening then refines.
	countingMinWindow  = 500 * time.Millisecond
	countingWindowStep = 1.0905
	startPhases        = 10
	startRefine        = 10
	startSeeds         = 24
	startFineParts     = 200
	// startCoarseMargin: coarse candidates this many mismatches behind the
	// best are refined too.
	startCoarseMargin = 2
	// startGridSteps: windows either side of each plain fit's, across
	// startSpread (2.5% apart).
	startGridSteps   = 10
	startWindowStep  = 0.01
	startWindowSteps = 6
)

// FitStartAligned returns the best start-aligned candidates of family
// (fixed_window or sliding_counter), seeded by plain, that family's and its
// neighbours' best plain candidates.
func FitStartAligned(evs []observation.Event, h Hypotheses, family string, plain []Candidate, rtt time.Duration) []Candidate {
	// Limits: the plain fits', and the burst's capacity (a plain model
	// that misplaced the boundaries may have fitted another); their
	// neighbours are tried with the finer phases, around the best.
	var limits []int
	addLimit := func(l int) {
		if l >= 1 && !slices.Contains(limits, l) {
			limits = append(limits, l)
		}
	}
	var near []time.Duration
	for _, c := range plain {
		addLimit(c.Config.Limit)
		if c.Config.Window > 0 && !slices.Contains(near, c.Config.Window) {
			near = append(near, c.Config.Window)
		}
	}
	for _, c := range h.capacities {
		addLimit(c)
	}
	// Windows: the plain fits', the common ones near them, and a grid
	// across the spread around each (a plain model fitted to a grid of
	// another phase misjudges the window as well).
	windows := slices.Clone(near)
	addWindow := func(w time.Duration) {
		if w = w.Round(windowResolution); w > 0 && !slices.Contains(windows, w) {
			windows = append(windows, w)
		}
	}
	for _, w := range commonWindows {
		for _, n := range near {
			if math.Abs(w.Seconds()-n.Seconds()) <= startSpread*n.Seconds() {
				addWindow(w)
				break
			}
		}
	}
	for _, w := range spreadGrid(near) {
		addWindow(w)
	}
	type pair struct {
		l int
		w time.Duration
	}
	var pairs []pair
	for _, l := range limits {
		for _, w := range windows {
			pairs = append(pairs, pair{l, w})
		}
		// Knocked on without pause, a sliding counter on any grid admits
		// about L per W, evenly: the trace's rate names W = L/r.
		for _, r := range traceRate(h) {
			for k := -startWindowSteps; k <= startWindowSteps; k++ {
				w := time.Duration(float64(l) / r * (1 + float64(k)*startWindowStep) * float64(time.Second)).Round(windowResolution)
				pairs = append(pairs, pair{l, w})
			}
		}
	}
	// A sliding counter that counts denied attempts hides its window: a
	// probe that knocked on it saw a lock whose length depends on how hard
	// it knocked, not a step of W. Its windows are searched on a
	// geometric grid up to twice the longest seed.
	var counting []pair
	if family == limiter.SlidingCounter {
		for _, w := range countingWindows(windows) {
			for _, l := range limits {
				counting = append(counting, pair{l, w})
			}
		}
	}
	// Origins just before the run: a window's length then moves the
	// boundaries inside the run by little, so the two are fitted apart.
	ref := evs[0].At.Add(-time.Minute)
	// Sized up front (see buckets in fitAll): the start grid is the largest.
	cfgs := make([]limiter.Config, 0, (2*len(pairs)+len(counting))*startPhases)
	for _, p := range pairs {
		if p.w <= 0 {
			continue
		}
		for k := range startPhases {
			ph := (p.w * time.Duration(k) / startPhases).Round(windowResolution)
			cfgs = append(cfgs, limiter.Config{Algo: family, Limit: p.l, Window: p.w, Align: limiter.AlignStart, Origin: ref.Add(ph)})
		}
	}
	// HAProxy's http_req_rate counts denied attempts on a grid anchored at
	// the entry's first request.
	for _, p := range append(pairs, counting...) {
		if family != limiter.SlidingCounter || p.w <= 0 {
			continue
		}
		for k := range startPhases {
			ph := (p.w * time.Duration(k) / startPhases).Round(windowResolution)
			cfgs = append(cfgs, limiter.Config{Algo: family, Limit: p.l, Window: p.w, Align: limiter.AlignStart, Origin: ref.Add(ph), CountRejected: true})
		}
	}
	coarse := fitFamilyWithin(evs, cfgs, rtt, startCoarseMargin)
	var best []Candidate
	for _, c := range coarse {
		if c.Mismatches == coarse[0].Mismatches {
			best = append(best, c)
		}
	}
	// Finer phases around the best coarse ones, and those a decision or
	// two behind: a boundary is located to the trace's resolution, far
	// below a tenth of a window, and the coarse point nearest the
	// truth may sit on the wrong side of one.
	best = finerPhases(evs, best, withNeighbourLimits(coarse[:min(len(coarse), startSeeds)]), startFineParts, startRefine, ref, rtt)
	return Widen(evs, best, rtt, windowOf, withWindow)
}

// withNeighbourLimits is seeds with each one's limit one lower and one
// higher beside it: a boundary misplaced by the coarse phase moves an
// admission or two between windows, which a neighbouring limit explains
// until the phase is found.
func withNeighbourLimits(seeds []Candidate) []Candidate {
	out := slices.Clone(seeds)
	for _, c := range seeds {
		for _, d := range []int{-1, 1} {
			n := c
			n.Config.Limit += d
			if n.Config.Limit >= 1 && !slices.ContainsFunc(out, func(o Candidate) bool { return o.Config == n.Config }) {
				out = append(out, n)
			}
		}
	}
	return out
}

// spreadGrid is the grid of windows across startSpread either side of
// each plain fit's window, in steps of startSpread/startGridSteps of it.
// Windows whose spreads overlap share one grid, stepped by the smallest's
// step from its low end to the largest's high end: five tied windows
// within 5 % of each other (a minute's window on a coarse trace) are 23
// windows to try, not 105.
func spreadGrid(near []time.Duration) []time.Duration {
	sorted := slices.Clone(near)
	slices.Sort(sorted)
	var out []time.Duration
	for i := 0; i < len(sorted); {
		first, last := sorted[i], sorted[i]
		for i++; i < len(sorted) && spreadLow(sorted[i]) <= spreadHigh(last); i++ {
			last = sorted[i]
		}
		for k := -startGridSteps; ; k++ {
			w := time.Duration(float64(first) * (1 + startSpread*float64(k)/startGridSteps))
			if k > startGridSteps && w > spreadHigh(last) {
				break
			}
			out = append(out, w)
		}
	}
	return out
}

// spreadLow and spreadHigh are the ends of the spread around w.
func spreadLow(w time.Duration) time.Duration {
	return time.Duration(float64(w) * (1 - startSpread))
}

func spreadHigh(w time.Duration) time.Duration {
	return time.Duration(float64(w) * (1 + startSpread))
}

// countingWindows is the geometric grid of windows a limiter that counts
// denied attempts is searched on, up to twice the longest seed: a probe
// that knocked on it saw a lock whose length depends on how hard it
// knocked, not a step of W.
func countingWindows(seeds []time.Duration) []time.Duration {
	top := time.Duration(0)
	for _, w := range seeds {
		top = max(top, w)
	}
	var out []time.Duration
	for w := countingMinWindow; w <= 2*top; w = time.Duration(float64(w) * countingWindowStep).Round(windowResolution) {
		out = append(out, w)
	}
	return out
}

// traceRate is the first rate estimate the hypotheses were built around
// (the middle of its fine grid), if any.
func traceRate(h Hypotheses) []float64 {
	if len(h.Rates) <= RateFineSteps {
		return nil
	}
	return []float64{h.Rates[RateFineSteps]}
}

// withPhase moves a grid's origin by (f − 1) of its period (widen's
// relative step becomes a step of 0.1% of the window, or of an interval
// refill's interval).
func withPhase(c limiter.Config, f float64) limiter.Config {
	c.Origin = c.Origin.Add(time.Duration((f - 1) * float64(gridPeriod(c))))
	return c
}

// PhaseOf is where the tied start grids put their boundaries (interval
// refills their fill instants): seconds after the probe's start to the
// first boundary (then every W), the middle of their range.
func PhaseOf(o *observation.Observation, cs []Candidate) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		w := gridPeriod(c.Config)
		if w <= 0 {
			continue
		}
		p := c.Config.Origin.Add(c.Offset).Sub(o.Start) % w
		if p < 0 {
			p += w
		}
		lo, hi = math.Min(lo, p.Seconds()), math.Max(hi, p.Seconds())
	}
	if lo > hi {
		return 0
	}
	return math.Round((lo+hi)/2*1000) / 1000
}

// finerPhases ends a grid's search (a start grid, an interval refill) on
// its phase: the configurations of seeds with their origin moved by up to
// refine steps either way, a step being the grid's period (gridPeriod)
// divided by parts, are fitted and kept over best where they do no worse;
// then the phase of what is kept is widened, in seconds from ref.
func finerPhases(evs []observation.Event, best, seeds []Candidate, parts, refine int, ref time.Time, rtt time.Duration) []Candidate {
	var fine []limiter.Config
	for _, c := range seeds {
		step := gridPeriod(c.Config) / time.Duration(parts)
		for k := -refine; k <= refine; k++ {
			f := c.Config
			f.Origin = f.Origin.Add(time.Duration(k) * step)
			fine = append(fine, f)
		}
	}
	if f := FitFamily(evs, fine, rtt); len(f) > 0 && (len(best) == 0 || f[0].Mismatches <= best[0].Mismatches) {
		best = f
	}
	return Widen(evs, best, rtt, func(c limiter.Config) float64 { return c.Origin.Sub(ref).Seconds() }, withPhase)
}
