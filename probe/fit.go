package probe

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"
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

// fitFamily replays every config (at each of its clock offsets) and returns
// the best ones (all that tie for the fewest mismatches).
func fitFamily(evs []event, cfgs []limiter.Config, rtt time.Duration) []Candidate {
	unc := decisionUncertainty(rtt)
	// Replays are independent: split the grid into contiguous chunks, one
	// per CPU, sharing the best mismatch count found so far as the bound,
	// and merge in grid order so the result is the same as a serial scan.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(cfgs)/minReplaysPerWorker))
	var shared atomic.Int64
	shared.Store(math.MaxInt32)
	parts := make([][]Candidate, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(cfgs)/workers, (w+1)*len(cfgs)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			best := math.MaxInt32
			var out []Candidate
			for _, c := range cfgs[lo:hi] {
				for _, off := range replayOffsets(c, rtt) {
					m := replay(evs, c, off, unc, min(best, int(shared.Load())), nil)
					if m < best {
						best, out = m, out[:0]
						for cur := shared.Load(); int64(m) < cur && !shared.CompareAndSwap(cur, int64(m)); cur = shared.Load() {
						}
					}
					if m == best {
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
			if c.Mismatches == best {
				out = append(out, c)
			}
		}
	}
	return out
}

// hypotheses are the parameter grids the plan's observations suggest.
type hypotheses struct {
	limits  []int
	windows []time.Duration
	rates   []float64
	delays  []int // nginx delay=N candidates
}

func (o *Observation) hypotheses() hypotheses {
	var h hypotheses
	cal := countAdmittedIn(o.phase(phaseCalibrate))
	burstAdm := 0
	for _, name := range o.burstPhases() {
		burstAdm = countAdmittedIn(o.phase(name))
	}
	seen := map[int]bool{}
	// A burst that straddled a window boundary admits two windows' worth:
	// half of it, and the size of the steps in the trace, are limits too.
	bases := []int{burstAdm, burstAdm + cal, (burstAdm + cal) / 2}
	for _, g := range admissionRuns(o.phase(phaseTrace)) {
		if g >= 3 {
			bases = append(bases, g)
		}
	}
	for _, base := range bases {
		for d := -3; d <= 3; d++ {
			if l := base + d; l >= 1 && !seen[l] {
				seen[l] = true
				h.limits = append(h.limits, l)
			}
		}
	}
	sort.Ints(h.limits)

	tr := o.phase(phaseTrace)
	// Rate from the trace. Two estimates: the spacing of admissions (a
	// bucket refilling) and the spacing of departures, send + latency
	// (a shaping queue releasing exactly 1/r apart, which is precise to a
	// fraction of a percent). A queue's replay is so sharp — 1% off and
	// every later decision shifts — that each estimate gets a fine grid,
	// plus a coarse one from half to twice for robustness.
	for _, est := range o.rateEstimates() {
		for k := -30; k <= 30; k++ {
			h.rates = append(h.rates, est*(1+float64(k)*0.001))
		}
		for k := -24; k <= 24; k += 2 {
			h.rates = append(h.rates, est*math.Pow(2, float64(k)/24))
		}
	}
	// Windows: distances between the starts of admission steps, and from
	// the first requests to the first step.
	var seeds []time.Duration
	starts := groupStarts(tr, o.traceGap())
	if first := o.firstSent(); len(starts) > 0 {
		seeds = append(seeds, starts[0]-first)
		if b := o.phase(o.lastBurstPhase()); len(b) > 0 {
			seeds = append(seeds, starts[0]-b[0].Sent)
		}
	}
	for i := 1; i < len(starts); i++ {
		seeds = append(seeds, starts[i]-starts[i-1])
	}
	for _, s := range []float64{0.5, 1, 2, 3, 5, 10, 15, 20, 30, 60} {
		seeds = append(seeds, time.Duration(s*float64(time.Second)))
	}
	seenW := map[time.Duration]bool{}
	for _, s := range seeds {
		if s <= 0 {
			continue
		}
		for k := -4; k <= 4; k++ {
			w := time.Duration(float64(s) * (1 + float64(k)*0.005)).Round(time.Millisecond)
			if w > 0 && !seenW[w] {
				seenW[w] = true
				h.windows = append(h.windows, w)
			}
		}
	}
	// nginx delay=N: the admitted requests of the burst that were not
	// queued, beyond the first.
	h.delays = []int{0}
	undelayed := 0
	for _, r := range o.phase(o.lastBurstPhase()) {
		if r.Admitted() && r.Latency()-o.RTT < delayTolerance(0) {
			undelayed++
		}
	}
	if undelayed > 1 {
		h.delays = append(h.delays, undelayed-1)
	}
	return h
}

// rateEstimates are the refill rates the trace suggests: from the spacing
// of admissions and of departures.
func (o *Observation) rateEstimates() []float64 {
	tr := o.phase(phaseTrace)
	service := o.serviceTime()
	var arr, dep []time.Duration
	for i := range tr {
		if tr[i].Admitted() && tr[i].Error == "" {
			arr = append(arr, tr[i].Sent)
			dep = append(dep, tr[i].Sent+tr[i].Latency()-service)
		}
	}
	sort.Slice(dep, func(i, j int) bool { return dep[i] < dep[j] })
	var out []float64
	for _, ts := range [][]time.Duration{arr, dep} {
		if len(ts) >= 3 {
			if span := (ts[len(ts)-1] - ts[0]).Seconds(); span > 0 {
				out = append(out, float64(len(ts)-1)/span)
			}
		}
	}
	return out
}

func (o *Observation) traceGap() time.Duration {
	tr := o.phase(phaseTrace)
	if len(tr) < 2 {
		return 100 * time.Millisecond
	}
	// three times the median send interval
	var gaps []time.Duration
	for i := 1; i < len(tr); i++ {
		gaps = append(gaps, tr[i].Sent-tr[i-1].Sent)
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return 3 * gaps[len(gaps)/2]
}

func (o *Observation) burstPhases() []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range o.Results {
		if (r.Phase == phaseBurst || len(r.Phase) > len(phaseBurst) && r.Phase[:len(phaseBurst)+1] == phaseBurst+"-") && !seen[r.Phase] {
			seen[r.Phase] = true
			names = append(names, r.Phase)
		}
	}
	return names
}

func (o *Observation) lastBurstPhase() string {
	names := o.burstPhases()
	if len(names) == 0 {
		return phaseBurst
	}
	return names[len(names)-1]
}

func (o *Observation) firstSent() time.Duration {
	if len(o.Results) == 0 {
		return 0
	}
	return sortedResults(o.Results)[0].Sent
}

func countAdmittedIn(rs []attack.Result) int {
	n := 0
	for i := range rs {
		if rs[i].Admitted() {
			n++
		}
	}
	return n
}

func admittedSent(rs []attack.Result) []time.Duration {
	var out []time.Duration
	for i := range rs {
		if rs[i].Admitted() {
			out = append(out, rs[i].Sent)
		}
	}
	return out
}

// groupStarts are the send times of the first admission of each run of
// three or more admissions: the steps a window limiter takes.
func groupStarts(rs []attack.Result, gap time.Duration) []time.Duration {
	var starts []time.Duration
	run, runStart, last := 0, time.Duration(0), time.Duration(0)
	flush := func() {
		if run >= 3 {
			starts = append(starts, runStart)
		}
		run = 0
	}
	for i := range rs {
		r := &rs[i]
		if r.Error != "" {
			continue
		}
		if r.Admitted() {
			if run > 0 && r.Sent-last > gap {
				flush()
			}
			if run == 0 {
				runStart = r.Sent
			}
			run++
			last = r.Sent
		} else {
			flush()
		}
	}
	flush()
	return starts
}

// admissionRuns are the lengths of the runs of consecutive admissions.
func admissionRuns(rs []attack.Result) []int {
	var runs []int
	in := false
	for i := range rs {
		switch {
		case rs[i].Error != "":
		case rs[i].Admitted() && in:
			runs[len(runs)-1]++
		case rs[i].Admitted():
			runs, in = append(runs, 1), true
		default:
			in = false
		}
	}
	return runs
}
