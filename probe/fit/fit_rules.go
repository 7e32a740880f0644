package fit

import (
	"math"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The rules the search ranks and settles its fits by: each family's free
// parameters and tie order, what explains too little, the wall grid, the
// twins a start grid is tried against, and how far a best fit is widened.

// paramCount is each family's number of free parameters, for the penalty
// that prefers the simpler of two equally good explanations.
var paramCount = map[string]int{
	limiter.None: 0, limiter.Concurrency: 1, limiter.TokenBucket: 2, limiter.LeakyShaping: 2,
	limiter.FixedWindow: 2, limiter.SlidingLog: 2, limiter.SlidingCounter: 2,
	limiter.Tiers: 5, // two tiers' parameters and how they compose
}

// familyOrder breaks exact ties: the simpler, more common family first.
var familyOrder = []string{limiter.None, limiter.Concurrency, limiter.TokenBucket, limiter.LeakyShaping,
	limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter, limiter.Tiers}

// FamilyFit is the best candidates one family (or variant) found.
type FamilyFit struct {
	Family string
	Best   []Candidate
	// AlsoAligned: another grid that explains the run within noise of
	// best (a start grid whose origin is the key's first request, and a
	// grid that request anchors, differ only after two idle periods).
	AlsoAligned string
	// FreeWindow: a window searched on the dense counting grid
	// (countingLogs), where no step of the run seeded it — one number
	// more to fit, as a start grid's phase is.
	FreeWindow bool
	// StartTried is the start grid the search fitted for this family
	// (fit_start.go), whether or not it took the plain fit's place: the
	// plan's deciding experiment weighs it without fitting it again.
	StartTried []Candidate
	// gridSearched: the family's grid held candidates (searched), so an
	// empty Best is TooLittle, not a family never tried.
	gridSearched bool
}

// TooLittle says whether the family was searched and every candidate left
// more than MostCounted decisions unexplained: how many more, the search
// did not count.
func (f FamilyFit) TooLittle() bool { return f.gridSearched && len(f.Best) == 0 }

// Params is the fit's number of free parameters: its family's, plus each
// number a variant adds (an interval refill's interval and phase, a start
// grid's phase, a block's length, nginx's delay=N, a window no step of the
// run seeded). A switch that changes
// the family's rule without a number to fit (counting denied attempts, a
// restarting window) adds none: a HAProxy http_req_rate, a counting sliding
// counter on a start grid that explains every decision, must not lose to a
// fixed window that gets two wrong.
func (f FamilyFit) Params() int {
	n := paramCount[f.Family]
	if len(f.Best) == 0 {
		return n
	}
	c := f.Best[0].Config
	if c.RefillEvery > 0 {
		n += 2
	}
	if c.Align == limiter.AlignStart {
		n++
	}
	if c.Block > 0 {
		n++
	}
	if c.DelayAfter > 0 {
		n++
	}
	if f.FreeWindow {
		n++
	}
	return n
}

// Rank orders fits for ties: fewer free parameters first, then by family
// (familyOrder). So an interval refill comes after every plain family — a
// fixed window anchored at the server's start is the same limiter as a
// bucket refilled whole every window, and the simpler name.
func (f FamilyFit) Rank() int { return f.Params()*len(familyOrder) + orderOf(f.Family) }

func (f FamilyFit) refills() bool { return len(f.Best) > 0 && f.Best[0].Config.RefillEvery > 0 }

func (f FamilyFit) Mismatches() int {
	if len(f.Best) == 0 {
		return math.MaxInt32
	}
	return f.Best[0].Mismatches
}

// maxUnexplainedShare: a model that leaves more than one decision in this
// many unexplained explains nothing. No verdict rests on it, and no tie
// between such models is worth an experiment.
const maxUnexplainedShare = 10

// ExplainsTooLittle says whether a model with this many mismatches leaves
// too many of the decisions unexplained (maxUnexplainedShare).
func ExplainsTooLittle(mismatches, decisions int) bool {
	return mismatches > MostUnexplained(decisions)
}

// MostUnexplained is the most mismatches of a model that still explains
// the decisions (ExplainsTooLittle).
func MostUnexplained(decisions int) int { return decisions / maxUnexplainedShare }

// countedPastUnexplained: the search counts a candidate's mismatches up to
// this many times MostUnexplained, and no further. Beyond a tenth, a
// model is no answer and no rival; the margin up to three tenths is for
// the grids a refinement starts from: the coarse best of a bucket beside
// a sliding log of 39 per 98 s missed more than a tenth of 259 decisions,
// and its refinement 6.
const countedPastUnexplained = 3

// MostCounted is the most mismatches the search counts: a replay stops
// past it, and a family none of whose candidates stays within it is
// TooLittle, how far beyond unknown (its candidates had been counted to
// exact miss counts no answer reads: 5 % of a simulated sweep's replays).
func MostCounted(decisions int) int {
	return countedPastUnexplained * decisions / maxUnexplainedShare
}

// mostCounted is MostCounted, which a test may lift to compare the search
// with one that counts every mismatch.
var mostCounted = MostCounted

// settle chooses between a family's first-aligned fits (HAProxy's sliding
// counter, a fixed window a knocking probe followed) and its start grids: the one that explains the run clearly better (by more than
// slack), else the better of the two with the other's alignment noted as
// not told apart (the twin on a tie: no phase to fit).
func (f *FamilyFit) settle(first, start []Candidate, slack int) {
	f.AlsoAligned = ""
	switch {
	case len(first) == 0 || len(start) == 0:
		if len(first) > 0 {
			f.Best = first
		} else if len(start) > 0 {
			f.Best = start
		}
	case first[0].Mismatches+slack < start[0].Mismatches:
		f.Best = first
	case start[0].Mismatches+slack < first[0].Mismatches:
		f.Best = start
	case first[0].Mismatches <= start[0].Mismatches:
		f.Best, f.AlsoAligned = first, limiter.AlignStart
	default:
		f.Best, f.AlsoAligned = start, limiter.AlignFirst
	}
}

// startTwins are the start grids of the first-aligned twins' limits and
// windows with their origin where the run's first request fell, or up to
// startTwinLead before it (a server started just before the probe), in
// 1 ms steps.
func startTwins(evs []observation.Event, twins []Candidate, rtt time.Duration) []Candidate {
	eps := observation.ArrivalUncertainty(rtt)
	first := evs[0].At
	for _, e := range evs {
		if e.At.Before(first) {
			first = e.At
		}
	}
	var cfgs []limiter.Config
	for _, c := range twins[:min(len(twins), firstTwinSeeds)] {
		for d := -startTwinLead; d <= eps; d += time.Millisecond {
			t := c.Config
			t.Align, t.Origin = limiter.AlignStart, first.Add(d)
			if !slices.Contains(cfgs, t) {
				cfgs = append(cfgs, t)
			}
		}
	}
	return FitFamily(evs, cfgs, rtt)
}

// firstTwins are the first-aligned models (HAProxy's freq_ctr) of the
// start grids' limits, fitted and widened. A start grid's phase trades
// against its window and limit, so the twins' are searched afresh over
// the start grids' range: their limits ±1, and the round windows from 10%
// below the shortest to 10% above the longest.
func firstTwins(evs []observation.Event, start []Candidate, rtt time.Duration) []Candidate {
	lo, hi := start[0].Config.Window, start[0].Config.Window
	type kind struct {
		limit    int
		counting bool
	}
	var kinds []kind
	for _, c := range start {
		lo, hi = min(lo, c.Config.Window), max(hi, c.Config.Window)
		for d := -1; d <= 1; d++ {
			k := kind{c.Config.Limit + d, c.Config.CountRejected}
			if k.limit >= 1 && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	// Only round windows (wallUnit): a grid each key anchors, at a free
	// window, fits coincidences as a wall grid at a free window would.
	windows := wallWindowsNear(time.Duration(0.9*float64(lo)), time.Duration(1.1*float64(hi)))
	var cfgs []limiter.Config
	for _, k := range kinds {
		for _, w := range windows {
			cfgs = append(cfgs, limiter.Config{Algo: start[0].Config.Algo, Limit: k.limit, Window: w, Align: limiter.AlignFirst, CountRejected: k.counting})
		}
	}
	return Widen(evs, simplest(FitFamily(evs, cfgs, rtt)), rtt, windowOf, withWindow)
}

// SeedsOf are the extremes of a family's tied candidates' windows.
func SeedsOf(cs []Candidate) []Candidate { return Extremes(cs, windowOf) }

// Extremes are the candidates of cs with the least and the most of the
// parameter param reads (the first of each where several tie): the two
// ends of a family's ties, what a wider search starts from; none when cs
// is empty.
func Extremes(cs []Candidate, param func(limiter.Config) float64) []Candidate {
	if len(cs) == 0 {
		return nil
	}
	lo, hi := cs[0], cs[0]
	for _, c := range cs {
		if param(c.Config) < param(lo.Config) {
			lo = c
		}
		if param(c.Config) > param(hi.Config) {
			hi = c
		}
	}
	return []Candidate{lo, hi}
}

// wallUnit: a grid on the wall clock is one people configure — a window of
// whole tenths of a second (Kong's second, minute, hour; a 2 s or 1.5 s
// window). Any other length on the wall grid is a phase in disguise: the
// grid of an arbitrary W lands its boundaries anywhere, and with a few
// boundaries to match some W always fits. Those are searched as a start
// grid, whose phase is a parameter that is counted.
const wallUnit = 100 * time.Millisecond

// wallWindow reports whether w may be searched on the wall grid.
func wallWindow(w time.Duration) bool { return w%wallUnit == 0 }

// longWallWindow and longWallUnit: from ten seconds on, a window on the
// wall clock is written in whole seconds (Kong's minute and hour, envoy's
// units, a Redis key's expiry): a tenth of a second is a hundredth of it
// or less, a phase in disguise as wallUnit says of finer lengths, and a
// grid of tenths ±10 % around a two-minute seed was 280 windows, a tenth
// of all the fits' work.
const (
	longWallWindow = 10 * time.Second
	longWallUnit   = time.Second
)

// wallWindowsNear are the round windows after lo up to hi.
func wallWindowsNear(lo, hi time.Duration) []time.Duration {
	var ws []time.Duration
	for w := nextWallWindow(lo); w <= hi; w = nextWallWindow(w) {
		ws = append(ws, w)
	}
	return ws
}

// nextWallWindow is the round window after w: the next tenth of a second,
// or whole second from longWallWindow on.
func nextWallWindow(w time.Duration) time.Duration {
	unit := wallUnit
	if w+wallUnit >= longWallWindow {
		unit = longWallUnit
	}
	return w.Truncate(unit) + unit
}

// onWallGrid reports whether c's windows follow the wall clock.
func onWallGrid(c limiter.Config) bool {
	return (c.Algo == limiter.FixedWindow && c.Align == limiter.AlignWall) ||
		(c.Algo == limiter.SlidingCounter && (c.Align == "" || c.Align == limiter.AlignWall))
}

// simplest keeps, among tied candidates, those without a variant the others
// do without: a limiter that counts denied attempts, or shuts a key after a
// rejection, is named so only when the plain one explains the run worse.
func simplest(cs []Candidate) []Candidate {
	plain := func(c limiter.Config) bool { return !c.CountRejected && c.Block == 0 }
	var out []Candidate
	for _, c := range cs {
		if plain(c.Config) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cs
	}
	return out
}

// Widen extends a family's tied best candidates to every value of one
// parameter (in 0.1% steps, up to 10% beyond the found ones) that explains
// the decisions as well. A trace pins a rate or a window only to its own
// resolution — a bucket of 1 probed every 30 ms admits on the same requests
// for any refill period between 480 and 510 ms — so the reported value and
// its ± must be that interval's middle and half-width, not the first ties a
// grid happened on.
func Widen(evs []observation.Event, best []Candidate, rtt time.Duration, value func(limiter.Config) float64, scaled func(limiter.Config, float64) limiter.Config) []Candidate {
	if len(best) == 0 {
		return best
	}
	ends := Extremes(best, value)
	lo, hi := ends[0], ends[1]
	m := best[0].Mismatches
	// Each step replays one candidate: the events are placed once for
	// them all, at each edge's offset (placeGrid's, for a grid of one).
	run := gridPlacement{byKey: evs, evs: evs, unc: observation.DecisionUncertainty(rtt), byOffset: map[time.Duration]timeline{}}
	for _, edge := range []struct {
		from Candidate
		step float64
	}{{lo, -widenStep}, {hi, widenStep}} {
		if _, ok := run.byOffset[edge.from.Offset]; !ok && edge.from.Config.Algo != limiter.Concurrency {
			run.byOffset[edge.from.Offset] = placeEvents(evs, edge.from.Offset, run.unc)
		}
		for k := 1; k <= widenSteps; k++ {
			c := scaled(edge.from.Config, 1+float64(k)*edge.step)
			if onWallGrid(c) && c.Window != edge.from.Config.Window {
				break // a wall grid's window is exact (wallWindow)
			}
			if run.replay(c, edge.from.Offset, m) > m {
				break
			}
			best = append(best, Candidate{Config: c, Mismatches: m, Scored: len(evs), Offset: edge.from.Offset})
		}
	}
	return best
}

func RateOf(c limiter.Config) float64 { return c.Rate }

func WithRate(c limiter.Config, f float64) limiter.Config { c.Rate *= f; return c }

func windowOf(c limiter.Config) float64 { return c.Window.Seconds() }

func withWindow(c limiter.Config, f float64) limiter.Config {
	c.Window = time.Duration(float64(c.Window) * f)
	return c
}

// orderOf is family's place in familyOrder.
func orderOf(family string) int {
	for i, f := range familyOrder {
		if f == family {
			return i
		}
	}
	return len(familyOrder)
}

// firstTwinSeeds: the twins a start grid at their anchor is tried for.
const firstTwinSeeds = 4

// startTwinLead: how long before the first request a start grid's origin
// is tried at by startTwins.
const startTwinLead = 100 * time.Millisecond

// SizeOf is the parameter a tied family spans most: its window or its rate
// (of two tiers, the second's: the first is pinned by the early regime).
func SizeOf(c limiter.Config) float64 {
	if c.Algo == limiter.Tiers {
		return SizeOf(c.Tiers[1].Config(c.Origin))
	}
	if c.Window > 0 {
		return c.Window.Seconds()
	}
	return c.Rate
}
