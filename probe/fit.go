package probe

import (
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// event is one observed decision, placed on the server's time line.
type event struct {
	at       time.Time
	key      string
	admitted bool
	delay    time.Duration // observed added latency of an admitted request
	hold     time.Duration // how long the server kept it in flight (concurrency)

	cluster    int           // index of the first event of its near-simultaneous group
	size       int           // that group's size
	judgeDelay bool          // whether its delay is evidence (see markClusters)
	noise      time.Duration // delay the machine adds by itself here (see markClusters)

	rejectLatency time.Duration // a rejection's latency above the RTT
	burst         string        // the burst phase it was released in, if any
}

// Candidate is one model with parameters and how well it explains the run.
type Candidate struct {
	Config     limiter.Config
	Mismatches int // decisions (or delays) the model gets wrong
	Scored     int // decisions compared
	Offset     time.Duration
}

// singletonNoise is the delay a lone request may pick up from a loaded
// machine before it counts as queueing (a stall of a few scheduler slices).
const singletonNoise = 25 * time.Millisecond

// delayTolerance is how far an observed queueing delay may be from the
// model's before it counts as a mismatch: timer slack and scheduling noise
// on a loaded machine, and a fifth of the delay for rate error.
func delayTolerance(pred time.Duration) time.Duration {
	return max(25*time.Millisecond, pred/5)
}

// events builds the time line from the observation.
func (o *Observation) events() []event {
	rs := sortedResults(o.Results)
	service := o.serviceTime()
	var out []event
	for i := range rs {
		r := &rs[i]
		if !decided(r) {
			continue
		}
		ev := event{at: o.arrival(r), key: r.Key, admitted: r.Admitted()}
		if strings.HasPrefix(r.Phase, phaseBurst) {
			// Released together by design: one cluster however long the
			// sends took on a loaded machine.
			ev.burst = r.Phase
		}
		if ev.admitted {
			ev.delay = max(r.Latency()-service, 0)
		} else {
			ev.rejectLatency = max(r.Latency()-o.RTT, 0)
		}
		// How long the server held it. A request the model admits but the
		// server rejected would have been held like an admitted one: the
		// service time.
		ev.hold = max(service-o.RTT, 0)
		if ev.admitted {
			ev.hold = max(r.Latency()-o.RTT, 0)
		}
		out = append(out, ev)
	}
	markClusters(out, o.RTT/2+time.Millisecond)
	reorderClusters(out)
	return out
}

// serviceTime is the fastest admitted request's latency: the time the
// backend takes without any queueing. Delays are measured above it.
func (o *Observation) serviceTime() time.Duration {
	best := time.Duration(-1)
	for i := range o.Results {
		r := &o.Results[i]
		if r.Error == "" && r.Admitted() && (best < 0 || r.Latency() < best) {
			best = r.Latency()
		}
	}
	return max(best, 0)
}

// markClusters groups near-simultaneous arrivals (a burst) and records
// whether a cluster's delays can be judged: only when it also holds
// rejections, which are answered at once and so show the machine's own
// latency noise. A cluster of admissions alone (a flood of a server with no
// limit) grows latency from sheer load, which is not queueing by a limiter.
func markClusters(evs []event, eps time.Duration) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && (evs[j].at.Sub(evs[j-1].at) <= eps || (evs[j].burst != "" && evs[j].burst == evs[i].burst)) {
			j++
		}
		rejected := false
		// The slowest rejection shows how late this machine answers
		// without any queueing (a loaded CPU delays every answer); a lone
		// request gets a fixed allowance for the same.
		noise := singletonNoise
		if j-i > 1 {
			noise = 0
		}
		for k := i; k < j; k++ {
			if !evs[k].admitted {
				rejected = true
				noise = max(noise, evs[k].rejectLatency)
			}
		}
		for k := i; k < j; k++ {
			evs[k].cluster = i
			evs[k].size = j - i
			evs[k].judgeDelay = j-i == 1 || rejected
			evs[k].noise = noise
		}
		i = j
	}
}

// reorderClusters fixes the order within groups of near-simultaneous
// arrivals. Send order says nothing about the order a server handled
// requests that reached it within a timing uncertainty of each other (a
// burst): it admitted whichever it saw first. So within such a cluster the
// admitted go first, least delayed first (a shaping queue serves in arrival
// order), keeping the cluster's instants.
func reorderClusters(evs []event) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].cluster == evs[i].cluster {
			j++
		}
		if j-i > 1 {
			times := make([]time.Time, j-i)
			for k := range times {
				times[k] = evs[i+k].at
			}
			c := evs[i:j]
			sort.SliceStable(c, func(a, b int) bool {
				if c[a].admitted != c[b].admitted {
					return c[a].admitted
				}
				return c[a].delay < c[b].delay
			})
			for k := range c {
				c[k].at = times[k]
			}
		}
		i = j
	}
}

// replay runs the events through a fresh model and counts mismatches.
// eps is the timing uncertainty of an arrival (and of a concurrency
// release): a decision that the model makes differently only within eps of
// it is not a mismatch.
// It stops counting once mismatches exceed bound: the caller only keeps
// the best candidates, so the exact count of a worse one is never needed.
func replay(evs []event, cfg limiter.Config, offset, eps time.Duration, bound int) int {
	lim, err := limiter.New(cfg)
	if err != nil {
		return math.MaxInt32
	}
	if cfg.Algo == limiter.Concurrency {
		return replayConcurrency(evs, lim, offset, eps)
	}
	mis := 0
	var prev time.Time
	for _, ev := range evs {
		at := ev.at.Add(offset)
		var d limiter.Decision
		if ev.admitted {
			d = lim.Allow(ev.key, at)
			// Within timing uncertainty of the instant capacity returns:
			// the server's clock may have been that far ahead of our
			// estimate, so take the request as arriving then.
			if !d.Allowed && d.RetryAfter > 0 && d.RetryAfter <= eps {
				d = lim.Allow(ev.key, at.Add(d.RetryAfter))
			}
		} else {
			// A rejection is judged as early as the uncertainty allows
			// (capacity only grows with time between decisions), never
			// before the previous decision.
			d = lim.Allow(ev.key, later(at.Add(-eps), prev))
		}
		prev = later(prev, at)
		switch {
		case d.Allowed != ev.admitted:
			mis++
		case d.Allowed && d.Delay > 0 && (d.Delay-ev.delay).Abs() > delayTolerance(d.Delay):
			mis++ // the model queues it, and not by that much
		case d.Allowed && d.Delay == 0 && ev.judgeDelay && ev.delay > ev.noise+delayTolerance(0):
			mis++ // held back where the model serves at once
		}
		if mis > bound {
			return mis
		}
	}
	return mis
}

// replayConcurrency interleaves releases with arrivals. When a release and
// an arrival are closer than eps, their true order is unknown: a decision
// that the other order explains is not a mismatch, and the model follows
// the observed decision.
//
// A release instant is estimated from when we read the response, so a
// client busy elsewhere (a loaded machine) puts it late, never early: a
// request held longer than the fastest one may have been released up to
// that much earlier (up to maxReadLag), and an admission that such an
// earlier release explains is no mismatch either.
func replayConcurrency(evs []event, lim limiter.Limiter, offset, eps time.Duration) int {
	type rel struct {
		at  time.Time
		key string
		lag time.Duration // how much earlier it may really have been
	}
	fastest := time.Duration(-1)
	for _, ev := range evs {
		if ev.admitted && (fastest < 0 || ev.hold < fastest) {
			fastest = ev.hold
		}
	}
	var pending []rel
	released := map[string][]time.Time{} // recent release instants per key
	mis := 0
	for _, ev := range evs {
		at := ev.at.Add(offset)
		keep := pending[:0]
		for _, p := range pending {
			if !p.at.After(at) {
				lim.Release(p.key, p.at)
				released[p.key] = append(released[p.key], p.at)
			} else {
				keep = append(keep, p)
			}
		}
		pending = keep
		d := lim.Allow(ev.key, at)
		if d.Allowed != ev.admitted {
			excused := false
			if ev.admitted {
				// Would an imminent release have made room?
				for i, p := range pending {
					if p.key == ev.key && p.at.Sub(at) <= eps+p.lag {
						lim.Release(p.key, at)
						pending = append(pending[:i], pending[i+1:]...)
						d = lim.Allow(ev.key, at)
						excused = d.Allowed
						break
					}
				}
			} else {
				// Did a release just before take a slot it may not have
				// freed yet? Then follow the server: undo the admission.
				for _, t := range released[ev.key] {
					if at.Sub(t) <= eps {
						lim.Release(ev.key, at)
						d.Allowed, excused = false, true
						break
					}
				}
			}
			if !excused {
				mis++
			}
		}
		if d.Allowed {
			pending = append(pending, rel{at.Add(ev.hold), ev.key, min(max(ev.hold-fastest, 0), maxReadLag)})
			if ev.admitted && ev.judgeDelay && ev.delay > ev.noise+delayTolerance(0) {
				mis++ // a concurrency cap never queues
			}
		}
		// forget releases older than eps
		for k, ts := range released {
			i := 0
			for i < len(ts) && at.Sub(ts[i]) > eps {
				i++
			}
			released[k] = ts[i:]
		}
	}
	return mis
}

// maxReadLag bounds how late a loaded client may read a response and still
// have the release excused: a few scheduler time slices.
const maxReadLag = 5 * time.Millisecond

// fitFamily tries every config and returns the best ones (all that tie for
// the fewest mismatches).
func fitFamily(evs []event, cfgs []limiter.Config, offsets []time.Duration, eps time.Duration) []Candidate {
	// Replays are independent: split the grid into contiguous chunks, one
	// per CPU, sharing the best mismatch count found so far as the bound,
	// and merge in grid order so the result is the same as a serial scan.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(cfgs)/64))
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
				for _, off := range offsets {
					m := replay(evs, c, off, eps, min(best, int(shared.Load())))
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

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
