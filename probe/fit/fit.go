// Package fit is the search for the limiter behind a recorded run, on the
// CPU alone: the replay of a model over an observation (replay.go), the
// hypotheses and the parallel search of one family (fit.go), the search
// over every family (fit_all.go) with one file per variant, and the rules
// that rank and settle its fits (fit_rules.go). It reads probe/observation
// and imports nothing else of probe; the verdict and the plan call it.
package fit

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Candidate is one model with parameters and how well it explains the run.
type Candidate struct {
	Config     limiter.Config
	Mismatches int // decisions (or delays) the model gets wrong
	Scored     int // decisions compared
	Offset     time.Duration
}

// minReplaysPerWorker is the smallest share of a grid worth a goroutine of
// its own: below it, starting one costs more than the replays it saves.
const minReplaysPerWorker = 64

// fitSlots bounds the replaying goroutines of every fit in the process to
// the CPUs: the deciding fit runs in the background while the probe sends,
// and several probes may fit at once (a test suite, a fleet). While a live
// probe sends, one slot is its (reserveSender): one CPU is left for the
// network poller, the pacer and in-process servers, whose goroutines would
// otherwise wait for a fit to be preempted (up to 10 ms) and send or
// answer late. Otherwise — a simulated probe, which sends nothing in real
// time, or the inference after the sending ended, or `report` — fits use
// them all.
var fitSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// senders counts the live probes sending now; the first takes a fit slot,
// the last gives it back.
var senders struct {
	sync.Mutex
	n atomic.Int32
}

// ReserveSender keeps a CPU from the fits while a live probe sends; the
// function it returns gives it back. It may wait for a fit's worker to
// finish its share of a grid.
func ReserveSender() (release func()) {
	senders.Lock()
	defer senders.Unlock()
	if senders.n.Add(1) == 1 && cap(fitSlots) > 1 {
		fitSlots <- struct{}{}
	}
	return func() {
		senders.Lock()
		defer senders.Unlock()
		if senders.n.Add(-1) == 0 && cap(fitSlots) > 1 {
			<-fitSlots
		}
	}
}

// fitCPUs is how many CPUs fits may use at once: all, but one while a
// live probe sends.
func fitCPUs() int {
	if senders.n.Load() > 0 {
		return max(1, runtime.GOMAXPROCS(0)-1)
	}
	return runtime.GOMAXPROCS(0)
}

// FitFamily replays every config (at each of its clock offsets) and returns
// the best ones (all that tie for the fewest mismatches), none if every one
// misses more than MostCounted.
func FitFamily(evs []observation.Event, cfgs []limiter.Config, rtt time.Duration) []Candidate {
	return fitFamilyWithin(evs, cfgs, rtt, 0)
}

// Abandoned says whether the fit of the time line evs was abandoned
// (event.stop).
func Abandoned(evs []observation.Event) bool {
	return len(evs) > 0 && evs[0].Stop != nil && evs[0].Stop.Load()
}

// fitFamilyWithin is fitFamily keeping every candidate within margin
// mismatches of the best, best first: a coarse grid's nearest point to the
// truth may miss a decision or two that a finer one explains. It keeps
// none that misses more than MostCounted: a grid of such candidates
// returns nothing.
func fitFamilyWithin(evs []observation.Event, cfgs []limiter.Config, rtt time.Duration, margin int) []Candidate {
	unc := observation.DecisionUncertainty(rtt)
	byKey := observation.KeyMajor(evs) // see keyMajor; the concurrency cap needs time order
	// Replays are independent: split the grid into contiguous chunks, one
	// per CPU, sharing the best mismatch count found so far as the bound,
	// and merge in grid order so the result is the same as a serial scan.
	workers := max(1, min(fitCPUs(), len(cfgs)/minReplaysPerWorker))
	grid := placeGrid(byKey, evs, cfgs, rtt, unc)
	// Counted only up to MostCounted. The model that limits nothing is one
	// replay, and the yardstick of the others (a pacer's confidence):
	// counted whole.
	ceiling := math.MaxInt32
	if len(cfgs) > 0 && cfgs[0].Algo != limiter.None {
		ceiling = mostCounted(len(evs))
	}
	var shared atomic.Int64
	shared.Store(int64(min(pilotBound(grid, cfgs, rtt), ceiling)))
	parts := make([][]Candidate, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(cfgs)/workers, (w+1)*len(cfgs)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			fitSlots <- struct{}{}
			defer func() { <-fitSlots }()
			best := math.MaxInt32
			var out []Candidate
			var offsets []time.Duration
			for i, c := range cfgs[lo:hi] {
				if Abandoned(evs) {
					break
				}
				// The offsets depend on the family and its grid (a
				// composition's on its tiers'): recomputed when they change.
				if p := cfgs[max(lo+i-1, 0)]; i == 0 || c.Algo != p.Algo || c.Align != p.Align || c.Algo == limiter.Tiers {
					offsets = replayOffsets(c, rtt)
				}
				for _, off := range offsets {
					m := grid.replay(c, off, min(best, int(shared.Load()))+margin)
					if m < best {
						best = m
						out = slices.DeleteFunc(out, func(c Candidate) bool { return c.Mismatches > m+margin })
						for cur := shared.Load(); int64(m) < cur && !shared.CompareAndSwap(cur, int64(m)); cur = shared.Load() {
						}
					}
					if m <= best+margin {
						out = append(out, Candidate{Config: c, Mismatches: m, Scored: len(evs), Offset: off})
					}
				}
			}
			parts[w] = out
		}()
	}
	wg.Wait()
	best := int(shared.Load())
	var out []Candidate
	for _, part := range parts {
		for _, c := range part {
			if c.Mismatches <= min(best+margin, ceiling) {
				out = append(out, c)
			}
		}
	}
	if margin > 0 {
		slices.SortStableFunc(out, func(a, b Candidate) int { return a.Mismatches - b.Mismatches })
	}
	return out
}

// pilotBound is the fewest mismatches of an even sample of the grid, a
// bound every replay of the whole grid can stop at from its first
// candidate: without it, each worker's first replays run unbounded to the
// end of the run. (Only a bound: the sample is replayed again in the
// grid, so the result is the same as without it.)
func pilotBound(grid gridPlacement, cfgs []limiter.Config, rtt time.Duration) int {
	best := math.MaxInt32
	if len(cfgs) < pilotMinGrid {
		return best
	}
	for i := 0; i < len(cfgs); i += len(cfgs) / pilotSamples {
		c := cfgs[i]
		for _, off := range replayOffsets(c, rtt) {
			best = min(best, grid.replay(c, off, best))
		}
	}
	return best
}

// gridPlacement is a grid's events, in key-major order (KeyMajor) and in
// time order (a concurrency cap's), and the key-major ones placed at each
// clock offset the grid is replayed at (replayOffsets), once for the grid.
type gridPlacement struct {
	byKey, evs []observation.Event
	unc        time.Duration
	byOffset   map[time.Duration]timeline
}

// placeGrid places byKey at the offsets cfgs are replayed at. A grid of
// a few candidates (a widening's step) is replayed unplaced: placing costs
// about as much as one replay.
func placeGrid(byKey, evs []observation.Event, cfgs []limiter.Config, rtt, unc time.Duration) gridPlacement {
	g := gridPlacement{byKey: byKey, evs: evs, unc: unc, byOffset: map[time.Duration]timeline{}}
	if len(cfgs) < minPlacedGrid {
		return g
	}
	for _, c := range cfgs {
		if c.Algo == limiter.Concurrency {
			continue
		}
		for _, off := range replayOffsets(c, rtt) {
			if _, ok := g.byOffset[off]; !ok {
				g.byOffset[off] = placeEvents(byKey, off, unc)
			}
		}
	}
	return g
}

// replay is ReplayEvents of c at offset, on the grid's placement when
// there is one.
func (g gridPlacement) replay(c limiter.Config, offset time.Duration, bound int) int {
	if c.Algo == limiter.Concurrency {
		return ReplayEvents(g.evs, c, offset, g.unc, bound, nil)
	}
	if tl, ok := g.byOffset[offset]; ok {
		return replayTimeline(tl, c, bound, nil)
	}
	return ReplayEvents(g.byKey, c, offset, g.unc, bound, nil)
}

// minPlacedGrid is the smallest grid whose events are placed once for all
// its candidates.
const minPlacedGrid = 8

// pilotSamples is how many of a grid's candidates pilotBound replays;
// pilotMinGrid the smallest grid worth it.
const (
	pilotSamples = 16
	pilotMinGrid = 4 * pilotSamples
)

// The grids the fit searches: each is centred on what the observation
// suggests, and sized to hold the truth despite a loaded machine's noise.
const (
	// limitSpread is how far either side of each count that suggests a
	// limit the grid reaches: late or early sends on a loaded machine move
	// a few admissions across a boundary.
	limitSpread = 3
	// minStepRun is the shortest run of admissions that counts as a
	// window's step (or a bucket's capacity) rather than refill trickling
	// in one at a time.
	minStepRun = 3
	// RateFineStep and rateFineSteps make a grid of ±3% in 0.1% steps
	// around each rate estimate: a shaping queue's replay is so sharp that
	// 1% off shifts every later decision.
	RateFineStep  = 0.001
	RateFineSteps = 30
	// RateCoarseSteps is the steps per octave of a coarse grid from half to
	// twice each estimate, for a trace that misled the estimate (a bucket
	// of 1 whose admissions drift later every cycle).
	RateCoarseSteps = 12
	// rateFineTolerance and rateCoarseTolerance: how near a rate already
	// in the grid makes another redundant. Half a fine step; a sixth of a
	// coarse one (1 %), so a coarse rate next to an estimate's fine grid
	// (±3 %) still extends it by a coarse step (6 %).
	rateFineTolerance   = RateFineStep / 2
	rateCoarseTolerance = 0.01
	// windowStep and windowSteps make a grid of ±2% in 0.5% steps around
	// each window seed: a step's start is known only to the trace's send
	// interval.
	windowStep  = 0.005
	windowSteps = 4
	// windowResolution is what window candidates are rounded to: configs
	// are written in whole milliseconds, and nearer seeds are one window.
	windowResolution = time.Millisecond
	// traceGapFactor is how many median send intervals apart two
	// admissions are in different steps.
	traceGapFactor = 3
	// wallSeedSpan is how far (relatively) from each window seed the round
	// windows a wall grid is searched at reach.
	wallSeedSpan = 0.1
	// defaultTraceGap is that gap for a trace too short to have an
	// interval: a tenth of a second, far below any window worth finding.
	defaultTraceGap = 100 * time.Millisecond
)

// commonWindows are windows people configure, tried whatever the trace
// suggests, so a window longer than the trace still gets its usual size.
var commonWindows = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute}

// The refinement of the best coarse fit.
const (
	// refineSpan is the steps either side of a best rate each refinement
	// covers: more than half the coarser grid's step, so a true rate
	// between two coarser points is inside it.
	refineSpan = 16
	// refineSeeds is how many distinct tied rates are refined around: ties
	// between rates are common before the grid is fine, and a few cover
	// them without multiplying the work.
	refineSeeds = 4
	// widenStep and widenSteps extend a tied parameter in 0.1% steps, finer
	// than any rate or window a probe resolves, up to 10% beyond the ties
	// found, which bounds the work where the parameter barely matters.
	widenStep  = 0.001
	widenSteps = 100
	// refineLimitSpan is how far from a tied best's capacity a refinement
	// after the first tries limits. The first, across every limit, is what
	// finds a capacity a coarse best of another one hid (a bucket of 10 at
	// 68.52/s in the sweep was found only so); after it, the finer steps
	// move the rate, not the capacity.
	refineLimitSpan = 2
)

// refineSteps are the relative steps of the successive refinements of a
// bucket's rate: 0.25%, then 0.02% — a long trace pins the rate to the
// timing uncertainty divided by the trace's length.
var refineSteps = []float64{0.0025, 0.0002}

// EquivalenceSlack is how many more mismatches (half a percent of the
// decisions, at least one) leave two explanations equally good: a loaded
// machine moves that many decisions across a boundary by itself.
func EquivalenceSlack(decisions int) int { return max(1, decisions/200) }

// Hypotheses are the parameter grids the plan's observations suggest.
type Hypotheses struct {
	Limits  []int
	Windows []time.Duration
	Rates   []float64
	delays  []int // nginx delay=N candidates
	// capacities are what the last burst admitted plus each number of the
	// calibration requests before it, none to all: the limits a penalty
	// search tries.
	capacities []int
	// wallWindows are the round windows (wallWindow) near the seeds: the
	// grid a wall-aligned model is searched on.
	wallWindows []time.Duration
	// refill is what the trace's clumps say about an interval refill
	// (fit_refill.go).
	refill refillHypotheses
}

func HypothesesOf(o *observation.Observation) Hypotheses {
	var h Hypotheses
	cal := observation.CountAdmitted(o.Phase(observation.PhaseCalibrate))
	burstAdm, allBursts := 0, 0
	for _, name := range o.BurstPhases() {
		burstAdm = observation.CountAdmitted(o.Phase(name))
		allBursts += burstAdm
	}
	if o.PerConnection() {
		// A burst's admissions are of many connections, each with its
		// own capacity: one connection's run before its first rejection
		// is the capacity (the calibration is in it).
		burstAdm, cal = ConnCapacity(o), 0
	}
	seen := map[int]bool{}
	// A burst that straddled a window boundary admits two windows' worth:
	// half of it, and the size of the steps in the trace, are limits too.
	bases := []int{burstAdm, burstAdm + cal, (burstAdm + cal) / 2}
	if o.PerConnection() {
		bases = append(bases, ConnDenseRun(o))
	}
	if allBursts > burstAdm {
		// A burst that admitted all it sent (the request budget capped
		// it) only bounds the capacity from below; the next, a second
		// later, took what a long window had left: the window's limit is
		// all of them. Two replicas of a log of 382 per 27 s admitted 400
		// and then 361, and were named a fixed window of 361.
		bases = append(bases, allBursts+cal)
	}
	// Any number of the calibration requests may have fallen in the window
	// before the burst's (a wall grid's boundary between them): every count
	// from none of them to all is the burst's window's capacity. A window of
	// 10 per 2 s restarted by every rejection, calibrated 3 then burst 8,
	// had its limit only between the two ends.
	for k := 0; k <= cal; k++ {
		h.capacities = append(h.capacities, burstAdm+k)
	}
	for _, g := range observation.AdmissionRuns(o.Phase(observation.PhaseTrace)) {
		if g >= minStepRun {
			bases = append(bases, g)
		}
	}
	for _, base := range bases {
		for d := -limitSpread; d <= limitSpread; d++ {
			if l := base + d; l >= 1 && !seen[l] {
				seen[l] = true
				h.Limits = append(h.Limits, l)
			}
		}
	}
	sort.Ints(h.Limits)

	tr := o.Phase(observation.PhaseTrace)
	// Rate from the trace. Two estimates: the spacing of admissions (a
	// bucket refilling) and the spacing of departures, send + latency
	// (a shaping queue releasing exactly 1/r apart, which is precise to a
	// fraction of a percent). A queue's replay is so sharp — 1% off and
	// every later decision shifts — that each estimate gets a fine grid,
	// plus a coarse one from half to twice for robustness.
	h.Rates = rateGrid(rateEstimates(o))
	// Windows: distances between the starts of admission steps, and from
	// the first requests to the first step.
	var seeds []time.Duration
	starts := GroupStarts(tr, TraceGap(o))
	if first := firstSent(o); len(starts) > 0 {
		seeds = append(seeds, starts[0]-first)
		// From every burst: of two a second apart, the first's
		// admissions are the ones a long window gives back first (a log
		// of 459 per 24 s, after bursts at 1.27 s and 2.27 s, reopened at
		// 25.27 s).
		for _, name := range o.BurstPhases() {
			if b := o.Phase(name); len(b) > 0 {
				seeds = append(seeds, starts[0]-b[0].Sent)
			}
		}
	}
	for i := 1; i < len(starts); i++ {
		seeds = append(seeds, starts[i]-starts[i-1])
	}
	// The windows the headers name, where the trace admitted nothing to
	// measure one from (fit_declared.go): a window grid of its own for
	// every run with fewer than two steps cost 13 % more CPU.
	if len(starts) == 0 {
		seeds = append(seeds, declaredWindows(o, seeds)...)
	}
	seenW, seenWall := map[time.Duration]bool{}, map[time.Duration]bool{}
	// A common window is tried as it is configured: only the trace's
	// seeds are uncertain enough to need a grid around them (±10 % of a
	// minute at wall resolution alone was 120 windows, half a fit's work).
	for _, w := range commonWindows {
		seenW[w], seenWall[w] = true, true
		h.Windows = append(h.Windows, w)
		h.wallWindows = append(h.wallWindows, w)
	}
	for _, s := range seeds {
		if s <= 0 {
			continue
		}
		for k := -windowSteps; k <= windowSteps; k++ {
			w := time.Duration(float64(s) * (1 + float64(k)*windowStep)).Round(windowResolution)
			if w > 0 && !seenW[w] {
				seenW[w] = true
				h.Windows = append(h.Windows, w)
			}
		}
		// The round windows near it: the only ones a wall grid is
		// searched at (wallWindow). Wider than the fine grid: a trace
		// that knocked ever more slowly sees a boundary late.
		for _, w := range wallWindowsNear(time.Duration(float64(s)*(1-wallSeedSpan)), time.Duration(float64(s)*(1+wallSeedSpan))) {
			if !seenWall[w] {
				seenWall[w] = true
				h.wallWindows = append(h.wallWindows, w)
			}
		}
	}
	for _, w := range h.Windows {
		if wallWindow(w) && !seenWall[w] {
			seenWall[w] = true
			h.wallWindows = append(h.wallWindows, w)
		}
	}
	h.delays = burstDelays(o)
	h.refill = refillSeedsOf(o)
	return h
}

// burstDelays are the nginx delay=N candidates: none, and the admitted
// requests of the last burst that were not queued, beyond the first.
// Not queued is answered within DelayTolerance of the round trip — or
// within that of the burst's slowest rejection, which no server queues:
// a client reader stalled while the answers came shows in both (the
// replay allows the same, observation's markClusters). Both counts are
// candidates, the fit decides: a stall of 66 ms on one of the five
// undelayed answers of a limit_req burst=10 delay=4 made it delay=3 at
// confidence 0.63.
func burstDelays(o *observation.Observation) []int {
	burst := o.Phase(o.LastBurstPhase())
	stall := time.Duration(0)
	for _, r := range burst {
		if r.Rejected() {
			stall = max(stall, r.Latency()-o.RTT)
		}
	}
	delays := []int{0}
	for _, allowance := range []time.Duration{0, stall} {
		undelayed := 0
		for _, r := range burst {
			if r.Admitted() && r.Latency()-o.RTT < allowance+DelayTolerance(0) {
				undelayed++
			}
		}
		if undelayed > 1 && !slices.Contains(delays, undelayed-1) {
			delays = append(delays, undelayed-1)
		}
	}
	return delays
}

// rateGrid is the fine and the coarse grid around each estimate, the
// first estimate's fine grid first (traceRate reads its middle).
// Estimates close together share their grids: a rate within half a fine
// step of one already there (rateFineTolerance), or a coarse rate within
// rateCoarseTolerance of one, adds nothing to them.
func rateGrid(ests []float64) []float64 {
	var rates []float64
	for _, est := range ests {
		for k := -RateFineSteps; k <= RateFineSteps; k++ {
			rates = withRate(rates, est*(1+float64(k)*RateFineStep), rateFineTolerance)
		}
		for k := -RateCoarseSteps; k <= RateCoarseSteps; k++ {
			rates = withRate(rates, est*math.Pow(2, float64(k)/RateCoarseSteps), rateCoarseTolerance)
		}
	}
	return rates
}

// withRate is rates with r added, unless one of them is within tol of it
// (relatively).
func withRate(rates []float64, r, tol float64) []float64 {
	for _, q := range rates {
		if math.Abs(q-r) <= tol*r {
			return rates
		}
	}
	return append(rates, r)
}

// rateEstimates are the refill rates the trace suggests: from the spacing
// of admissions and of departures.
func rateEstimates(o *observation.Observation) []float64 {
	tr := o.Phase(observation.PhaseTrace)
	service := o.ServiceTime()
	var arr, dep []time.Duration
	for i := range tr {
		if tr[i].Admitted() && tr[i].Error == "" {
			arr = append(arr, tr[i].Sent)
			dep = append(dep, tr[i].Sent+tr[i].Latency()-service)
		}
	}
	sort.Slice(dep, func(i, j int) bool { return dep[i] < dep[j] })
	var out []float64
	if o.PerConnection() {
		if r := ConnRate(o); r > 0 {
			out = append(out, r)
		}
	}
	for _, ts := range [][]time.Duration{arr, dep} {
		if len(ts) >= 3 {
			if span := (ts[len(ts)-1] - ts[0]).Seconds(); span > 0 {
				out = append(out, float64(len(ts)-1)/span)
			}
		}
	}
	if r := SaturatedRate(tr); r > 0 && !withinOctave(r, out) {
		out = append(out, r)
	}
	return out
}

// SaturatedRate is the admission rate where the trace outran the limit: the
// median spacing of consecutive admissions with a rejection sent between
// them. The trace's mean admission rate is only a lower bound on a refill
// faster than the trace sent for most of its length (a bucket of one
// refilled every 5 ms, traced at 6 ms then 3, 1.5 and 0.8 ms apart: 53
// admitted over 3 s is 18/s; where rejections came between admissions they
// were 5 ms apart). 0 when fewer than minSaturatedGaps such spacings.
func SaturatedRate(tr []results.Result) float64 {
	rs := slices.Clone(tr)
	slices.SortFunc(rs, func(a, b results.Result) int { return cmp.Compare(a.Sent, b.Sent) })
	var gaps []time.Duration
	last, rejectedSince := time.Duration(-1), false
	for i := range rs {
		switch r := &rs[i]; {
		case r.Error != "":
		case r.Admitted():
			if last >= 0 && rejectedSince {
				gaps = append(gaps, r.Sent-last)
			}
			last, rejectedSince = r.Sent, false
		case r.Rejected():
			rejectedSince = true
		}
	}
	if len(gaps) < minSaturatedGaps {
		return 0
	}
	slices.Sort(gaps)
	if med := gaps[len(gaps)/2]; med > 0 {
		return 1 / med.Seconds()
	}
	return 0
}

// minSaturatedGaps is how many admission spacings under saturation make a
// rate estimate: fewer are a window's steps or a stall's, not a refill.
const minSaturatedGaps = 5

// withinOctave says whether r is within the coarse grid (half to twice) of
// any estimate in ests: the grid around it holds r already.
func withinOctave(r float64, ests []float64) bool {
	for _, e := range ests {
		if r >= e/2 && r <= 2*e {
			return true
		}
	}
	return false
}

func TraceGap(o *observation.Observation) time.Duration {
	tr := o.Phase(observation.PhaseTrace)
	if len(tr) < 2 {
		return defaultTraceGap
	}
	var gaps []time.Duration
	for i := 1; i < len(tr); i++ {
		gaps = append(gaps, tr[i].Sent-tr[i-1].Sent)
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return traceGapFactor * gaps[len(gaps)/2]
}

func firstSent(o *observation.Observation) time.Duration {
	if len(o.Results) == 0 {
		return 0
	}
	return observation.SortedResults(o.Results)[0].Sent
}

// GroupStarts are the send times of the first admission of each run of
// minStepRun or more admissions: the steps a window limiter takes. A run
// ends at a rejection, or at a pause in the knocking: a send more than gap
// after the run's last, and more than traceGapFactor times the spacing of
// the sends just before it. The trace knocks sparsely through a long lock
// and densely where capacity should return, so its median spacing is the
// dense knocking's: measured against it alone, a recovered window's 278
// admissions 3 ms apart were cut into runs, and the step that named the
// window was lost.
func GroupStarts(rs []results.Result, gap time.Duration) []time.Duration {
	return groupStarts(rs, gap, false)
}

// DecidedStarts are GroupStarts with two runs counted as one step unless
// the rejections between them certainly came between (observation.Shut):
// the steps as the server may have decided them, for the evidence's
// words. (The fit seeds from GroupStarts: merged runs of a trace whose
// requests are in flight by the dozen seeded a window that explained a
// two-tier run wrongly, at 0.82.)
func DecidedStarts(rs []results.Result, gap time.Duration) []time.Duration {
	return groupStarts(rs, gap, true)
}

func groupStarts(rs []results.Result, gap time.Duration, decided bool) []time.Duration {
	var starts []time.Duration
	run, runStart, last, spacing := 0, time.Duration(0), time.Duration(0), time.Duration(0)
	var shut observation.Shut
	flush := func() {
		if run >= minStepRun {
			starts = append(starts, runStart)
		}
		run = 0
	}
	prev := time.Duration(-1) // the previous send, decided or not
	for i := range rs {
		r := &rs[i]
		if r.Error != "" {
			continue
		}
		if r.Admitted() {
			if run > 0 && (decided && shut.Before(r) || r.Sent-last > max(gap, traceGapFactor*spacing)) {
				flush()
			}
			shut = observation.Shut{}
			if run == 0 {
				runStart = r.Sent
			}
			run++
			last = r.Sent
		} else if !decided {
			flush()
		} else if run > 0 {
			shut.Reject(r)
		}
		if prev >= 0 {
			spacing = r.Sent - prev
		}
		prev = r.Sent
	}
	flush()
	return starts
}
