package fit

import (
	"math"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// The search over every family: the plain families first, each on the grids
// the hypotheses suggest, then the variants (a penalty, an interval refill,
// a start grid, a restarting window, two tiers) where the plain fits leave
// decisions unexplained. Each config is replayed at the clock offsets its
// family needs (replayOffsets) with the timing uncertainty of the round
// trip.

// search is one fit of a time line: what every family's fit reads.
type search struct {
	evs []observation.Event
	h   Hypotheses
	rtt time.Duration
}

// FitAll fits every family to the time line.
func FitAll(evs []observation.Event, h Hypotheses, rtt time.Duration) []FamilyFit {
	s := search{evs: evs, h: h, rtt: rtt}
	fits := []FamilyFit{s.none(), s.concurrency()}
	tb, ls := s.bucketGrids(h.Rates, h.Limits)
	fits = append(fits, s.refined(limiter.TokenBucket, s.withBucketsOfOne(tb)), s.refined(limiter.LeakyShaping, ls))
	fits = append(fits, s.windows()...)
	top := math.MaxInt32
	for _, f := range fits {
		top = min(top, f.Mismatches())
	}
	if top > s.slack() {
		s.variants(fits)
	}
	if top > 0 {
		s.restarting(fits)
	}
	s.firstOrStart(fits, top)
	if top > 0 {
		s.countingLogs(fits)

		// Two limits on one key (fit_tiers.go), whenever a decision is
		// unexplained: a second tier may bind only once or twice in a
		// run, and a composition that explains that is an alternative
		// the verdict's confidence must own up to.
		fits = append(fits, FamilyFit{Family: limiter.Tiers, Best: FitTiers(evs, h, rtt)})
		unboundTiers(fits) // fit_unbound.go
	}
	return fits
}

// slack is the equivalence slack of this time line.
func (s search) slack() int { return EquivalenceSlack(len(s.evs)) }

// clearlyBetter says whether a variant's best explains the run better than
// the family's fit by more than one decision: a free parameter more ties
// with anything, so it must earn its place.
func clearlyBetter(variant []Candidate, f FamilyFit) bool {
	return len(variant) > 0 && variant[0].Mismatches+1 < f.Mismatches()
}

func (s search) none() FamilyFit {
	return FamilyFit{Family: limiter.None, Best: FitFamily(s.evs, []limiter.Config{{Algo: limiter.None}}, s.rtt)}
}

func (s search) concurrency() FamilyFit {
	var cfgs []limiter.Config
	for _, l := range s.h.Limits {
		cfgs = append(cfgs, limiter.Config{Algo: limiter.Concurrency, MaxInflight: l})
	}
	return familySearched(limiter.Concurrency, cfgs, FitFamily(s.evs, cfgs, s.rtt))
}

// familySearched is the fit of a family that searched the grid cfgs and found
// best (TooLittle where nothing in a grid of candidates explains the run).
func familySearched(family string, cfgs []limiter.Config, best []Candidate) FamilyFit {
	return FamilyFit{Family: family, Best: best, gridSearched: len(cfgs) > 0}
}

// bucketGrids are the token buckets and shaping queues at rates × the
// hypotheses' limits (and nginx delay=N values).
func (s search) bucketGrids(rates []float64, limits []int) (tb, ls []limiter.Config) {
	h := s.h
	// Sized up front: a config is some 300 bytes, and growing lists of
	// tens of thousands by append cost a quarter of a fit's CPU.
	tb = make([]limiter.Config, 0, len(rates)*len(limits)+len(h.Windows))
	ls = make([]limiter.Config, 0, len(rates)*len(limits)*len(h.delays))
	for _, r := range rates {
		for _, b := range limits {
			tb = append(tb, limiter.Config{Algo: limiter.TokenBucket, Rate: r, Burst: b})
			for _, d := range h.delays {
				// delay ≥ burst never queues: that is a token bucket.
				if b >= 2 && d < b-1 {
					ls = append(ls, limiter.Config{Algo: limiter.LeakyShaping, Rate: r, Burst: b - 1, DelayAfter: d})
				}
			}
		}
	}
	return tb, ls
}

// withBucketsOfOne adds a bucket of 1 at every window's rate. A bucket of
// capacity 1 is the same function as a first-aligned fixed window or a
// sliding log of 1 per 1/r: admit once 1/r has passed since the last
// admission, a probe's lateness carried into the next cycle. The trace's
// admission spacing is then 1/r plus that lateness, which the window grid
// covers and the rate grid may not. (Only of 1: for larger capacities the
// families differ, and extra bucket rates only buy a bucket spurious ties
// with the window families.)
func (s search) withBucketsOfOne(tb []limiter.Config) []limiter.Config {
	if slices.Contains(s.h.Limits, 1) {
		for _, w := range s.h.Windows {
			tb = append(tb, limiter.Config{Algo: limiter.TokenBucket, Rate: 1 / w.Seconds(), Burst: 1})
		}
	}
	return tb
}

// refined fits a bucket family coarse then fine: the trace's rate estimate
// is rough, the replay exact, so each refinement (refineSteps) searches
// around the best rates so far.
func (s search) refined(family string, coarse []limiter.Config) FamilyFit {
	best := FitFamily(s.evs, coarse, s.rtt)
	if len(best) == 0 {
		return familySearched(family, coarse, nil)
	}
	searched := slices.Clone(s.h.Rates)
	for i, step := range refineSteps {
		around := ratesAround(best, step, searched)
		if len(around) == 0 {
			continue
		}
		searched = append(searched, around...)
		limits := s.h.Limits
		if i > 0 {
			limits = limitsNear(best, s.h.Limits)
		}
		tb, ls := s.bucketGrids(around, limits)
		fine := ls
		if family == limiter.TokenBucket {
			fine = tb
		}
		if all := FitFamily(s.evs, fine, s.rtt); len(all) > 0 && all[0].Mismatches <= best[0].Mismatches {
			best = all
		}
	}
	return FamilyFit{Family: family, Best: Widen(s.evs, best, s.rtt, RateOf, WithRate)}
}

// ratesAround are the rates refineSpan steps either side of every distinct
// rate among the tied best (at most refineSeeds of them): ties between
// rates are common before the grid is fine. A rate the grid searched
// already brackets within step on both sides (one on the fine grid around
// an estimate, RateFineStep) is known to that step: refining it there
// would replay a grid no finer than the one that found it.
func ratesAround(best []Candidate, step float64, searched []float64) []float64 {
	var rates []float64
	seen := map[float64]bool{}
	for _, c := range best {
		if len(seen) == refineSeeds || seen[c.Config.Rate] {
			continue
		}
		seen[c.Config.Rate] = true
		if bracketed(c.Config.Rate, step, searched) {
			continue
		}
		for k := -refineSpan; k <= refineSpan; k++ {
			rates = append(rates, c.Config.Rate*(1+float64(k)*step))
		}
	}
	return rates
}

// limitsNear are the limits within refineLimitSpan of a tied best's
// capacity.
func limitsNear(best []Candidate, limits []int) []int {
	var near []int
	for _, l := range limits {
		for _, c := range best {
			if capacity := c.Config.Capacity(); l >= capacity-refineLimitSpan && l <= capacity+refineLimitSpan {
				near = append(near, l)
				break
			}
		}
	}
	return near
}

// bracketed says whether rates holds a rate within step of r (relatively)
// on each side of it.
func bracketed(r, step float64, rates []float64) bool {
	below, above := false, false
	for _, q := range rates {
		below = below || (q < r && q >= r*(1-step))
		above = above || (q > r && q <= r*(1+step))
	}
	return below && above
}

// windows fits the three window families on their plain grids.
func (s search) windows() []FamilyFit {
	var fixed, logs, counters []limiter.Config
	for _, w := range s.h.wallWindows {
		for _, l := range s.h.Limits {
			fixed = append(fixed, limiter.Config{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignWall})
			for _, counting := range []bool{false, true} {
				counters = append(counters, limiter.Config{Algo: limiter.SlidingCounter, Limit: l, Window: w, CountRejected: counting})
			}
		}
	}
	for _, w := range s.h.Windows {
		for _, l := range s.h.Limits {
			fixed = append(fixed, limiter.Config{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignFirst})
			// Each also as counting denied attempts (HAProxy, logs of
			// attempts): the same until a client knocks above the limit.
			for _, counting := range []bool{false, true} {
				logs = append(logs, limiter.Config{Algo: limiter.SlidingLog, Limit: l, Window: w, CountRejected: counting})
			}
		}
	}
	// HAProxy's freq_ctr: a sliding counter whose grid follows the key's
	// first request. Its trace shows no steps to seed the window with (the
	// capacity comes back gradually), so it is tried at the round windows
	// people configure (http_req_rate(10s)) near the seeds; any other
	// window is reached from a start grid (firstTwins). A counting counter
	// at an arbitrary window mimics too much else: a start-aligned fixed
	// window of 20 per 2 s was named a counting counter of 21 per 1.096 s.
	for _, w := range s.h.wallWindows {
		for _, l := range s.h.Limits {
			for _, counting := range []bool{false, true} {
				counters = append(counters, limiter.Config{Algo: limiter.SlidingCounter, Limit: l, Window: w, Align: limiter.AlignFirst, CountRejected: counting})
			}
		}
	}
	var fits []FamilyFit
	for _, w := range []struct {
		family string
		cfgs   []limiter.Config
	}{{limiter.FixedWindow, fixed}, {limiter.SlidingLog, logs}, {limiter.SlidingCounter, counters}} {
		best := Widen(s.evs, simplest(FitFamily(s.evs, w.cfgs, s.rtt)), s.rtt, windowOf, withWindow)
		f := familySearched(w.family, w.cfgs, best)
		// HAProxy's grid, or a start grid whose origin is where the
		// first request fell (a server started just before the probe)?
		if w.family == limiter.SlidingCounter && len(best) > 0 && best[0].Config.Align == limiter.AlignFirst {
			if st := startTwins(s.evs, best, s.rtt); len(st) > 0 {
				f.settle(best, st, s.slack())
			}
		}
		fits = append(fits, f)
	}
	return fits
}

// isWindowFamily: the families whose fits seed a start grid.
func isWindowFamily(family string) bool {
	return family == limiter.FixedWindow || family == limiter.SlidingCounter || family == limiter.SlidingLog
}

// variants replaces each rate-limiting family's fit with a variant that
// explains the run clearly better: a penalty (fit_block.go), a bucket
// refilled in clumps (fit_refill.go), a grid anchored at the server's start
// (fit_start.go), searched around what the plain fits found.
func (s search) variants(fits []FamilyFit) {
	var seeds []Candidate
	for _, f := range fits {
		if isWindowFamily(f.Family) {
			seeds = append(seeds, SeedsOf(f.Best)...)
		}
	}
	var refilledWindows []Candidate // token buckets refilled to capacity, as the windows they are
	for i, f := range fits {
		if f.Family == limiter.None || f.Family == limiter.Concurrency {
			continue
		}
		if pen := FitPenalties(s.evs, s.h, f.Best, s.rtt); clearlyBetter(pen, fits[i]) {
			fits[i].Best = pen
		}
		// A bucket whose every fill reaches its capacity is a fixed
		// window on a start grid (fullFillWindows): fitted as that, not
		// as a bucket tied with itself.
		if f.Family == limiter.TokenBucket {
			var iv []Candidate
			iv, refilledWindows = FullFillWindows(s.evs, FitIntervalRefill(s.evs, s.h, f.Best, s.rtt), s.rtt)
			if clearlyBetter(iv, fits[i]) {
				fits[i].Best = iv
			}
		}
		if f.Family == limiter.FixedWindow || f.Family == limiter.SlidingCounter {
			s.startGrid(&fits[i], seeds, refilledWindows)
		}
	}
}

// startGrid replaces f's best with a start grid that explains the run
// clearly better. A sliding counter's start grid whose phase is where the
// key's first request fell may be a grid that request anchors, with no
// phase to fit (HAProxy's): settle names the one that explains the run
// clearly better, or both as not told apart (they differ only after two
// idle periods).
func (s search) startGrid(f *FamilyFit, seeds, refilledWindows []Candidate) {
	start := FitStartAligned(s.evs, s.h, f.Family, seeds, s.rtt)
	f.StartTried = start
	if f.Family == limiter.FixedWindow && len(refilledWindows) > 0 && (len(start) == 0 || refilledWindows[0].Mismatches < start[0].Mismatches) {
		start = refilledWindows
	}
	if !clearlyBetter(start, *f) {
		return
	}
	f.Best = start
	if f.Family != limiter.SlidingCounter {
		return
	}
	twins := firstTwins(s.evs, start, s.rtt)
	if len(twins) > 0 {
		// The start grid at the twin's anchor, which the phase search
		// may step over.
		if st := startTwins(s.evs, twins, s.rtt); len(st) > 0 && st[0].Mismatches < start[0].Mismatches {
			start = st
			f.Best = st
		}
	}
	f.settle(twins, start, s.slack())
}

// restarting tries a fixed window the knocking restarts, weighed at equal
// freedom.
func (s search) restarting(fits []FamilyFit) {
	for i, f := range fits {
		if f.Family == limiter.FixedWindow && len(f.Best) > 0 && !f.Best[0].Config.Restarts() {
			if r := fitRestarts(s.evs, s.h, f.Best, s.rtt); len(r) > 0 && r[0].Mismatches < fits[i].Mismatches() {
				fits[i].Best = r
			}
		}
	}
}

// countingLogs tries a log of attempts on the counting grid of windows
// (countingWindows), which hides its window as a counting counter does: a
// counting log of 16 per 7 s, knocked on, showed no step of 7 s, and the
// logs of the run's steps (4.7-5.5 s) missed 6 decisions where a counting
// counter of 5.5 s missed 1. It replaces the log family's fit only where
// it explains the run clearly better, after the other families' variants
// were seeded from the plain fits (a seed at every window of the grid led
// the start grids away from a first-aligned counter the plain grid had),
// and with one parameter more (FreeWindow): a HAProxy counter of 20 per
// 4 s, first-aligned and counting, which explains all of a run, must not
// lose to a log of 3.9 s that misses one decision.
func (s search) countingLogs(fits []FamilyFit) {
	var cfgs []limiter.Config
	for _, w := range countingWindows(s.h.Windows) {
		for _, l := range s.h.Limits {
			cfgs = append(cfgs, limiter.Config{Algo: limiter.SlidingLog, Limit: l, Window: w, CountRejected: true})
		}
	}
	for i, f := range fits {
		if f.Family != limiter.SlidingLog || len(cfgs) == 0 {
			continue
		}
		if c := Widen(s.evs, simplest(FitFamily(s.evs, cfgs, s.rtt)), s.rtt, windowOf, withWindow); clearlyBetter(c, f) {
			fits[i].Best, fits[i].FreeWindow = c, true
		}
	}
}

// firstOrStart: a first-aligned fixed window that leads (within noise of
// the best fit, top) may be a start grid the probe's knocking followed,
// each window opened at the first request after a grid boundary. Unless a
// start grid is refuted (or clearly better), both are named as not told
// apart; the plan's deciding experiment (probe/plan's tiedModels) is what
// can tell them apart.
func (s search) firstOrStart(fits []FamilyFit, top int) {
	for i, f := range fits {
		if f.Family == limiter.FixedWindow && top <= s.slack() && len(f.Best) > 0 &&
			f.Best[0].Config.Align == limiter.AlignFirst && !f.Best[0].Config.Restarts() && f.Mismatches() <= top+s.slack() {
			start := FitStartAligned(s.evs, s.h, f.Family, SeedsOf(f.Best), s.rtt)
			fits[i].StartTried = start
			if len(start) > 0 {
				fits[i].settle(f.Best, start, s.slack())
			}
		}
	}
}
