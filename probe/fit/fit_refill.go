package fit

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Token buckets refilled in clumps (refill=D): Rate·D tokens at once at
// every fill instant, on a grid anchored where the server started (older
// Envoy's tokens_per_fill every fill_interval, bucket4j's
// refillIntervally). Capacity comes back in clumps at a fixed period whose
// phase does not follow the client. The interval and its phase are two more
// free parameters, so they are searched only when the plain models leave
// decisions unexplained, seeded by the clumps the trace saw: their sizes
// (tokens per fill) and the time between their starts (the interval),
// besides the intervals people configure.

// CommonRefills are fill intervals people configure, tried whatever the
// trace suggests.
var CommonRefills = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute}

const (
	// refillPhases is the coarse phase grid per interval, refined
	// refillRefine times finer around the best refillSeeds coarse fits.
	refillPhases = 20
	refillRefine = 10
	refillSeeds  = 4
	// refillRateSpread is how far (relatively) a (tokens per fill,
	// interval) pair's rate may be from the rate the clumps show and
	// still be tried.
	refillRateSpread = 0.35
	// refillFillSeeds is how many of the most frequent clump sizes seed
	// the tokens per fill.
	refillFillSeeds = 3
	// minRefillInterval: shorter clump spacings are the trace's own
	// send interval, not a fill interval.
	minRefillInterval = 50 * time.Millisecond
)

// refillHypotheses are what the trace's clumps suggest.
type refillHypotheses struct {
	fills     []int           // tokens per fill: the clump sizes
	intervals []time.Duration // the time between clump starts, then commonRefills
	rate      float64         // tokens per second over whole clumps, 0 if fewer than two
}

// refillSeeds reads the clumps of the trace: runs of admissions between
// rejections.
func refillSeedsOf(o *observation.Observation) refillHypotheses {
	var h refillHypotheses
	sizes, starts := Clumps(o.Phase(observation.PhaseTrace))
	freq := map[int]int{}
	for _, s := range sizes {
		freq[s]++
	}
	for s := range freq {
		h.fills = append(h.fills, s)
	}
	sort.Slice(h.fills, func(i, j int) bool {
		a, b := h.fills[i], h.fills[j]
		return freq[a] > freq[b] || freq[a] == freq[b] && a > b
	})
	if len(h.fills) > refillFillSeeds {
		h.fills = h.fills[:refillFillSeeds]
	}
	if len(h.fills) > 0 {
		// A clump the trace caught a request late or early is one off.
		for _, d := range []int{-1, 1} {
			if f := h.fills[0] + d; f >= 1 && !slices.Contains(h.fills, f) {
				h.fills = append(h.fills, f)
			}
		}
	}
	for i := 1; i < len(starts); i++ {
		if d := (starts[i] - starts[i-1]).Round(windowResolution); d >= minRefillInterval && !slices.Contains(h.intervals, d) {
			h.intervals = append(h.intervals, d)
		}
	}
	for _, d := range CommonRefills {
		if !slices.Contains(h.intervals, d) {
			h.intervals = append(h.intervals, d)
		}
	}
	if n := len(starts); n >= 2 {
		total := 0
		for _, s := range sizes[:n-1] {
			total += s
		}
		h.rate = float64(total) / (starts[n-1] - starts[0]).Seconds()
	}
	return h
}

// Clumps are the sizes and first send times of the runs of admissions in
// rs, each ended by a rejection.
func Clumps(rs []results.Result) (sizes []int, starts []time.Duration) {
	in := false
	for i := range rs {
		switch r := &rs[i]; {
		case !observation.Decided(r):
		case r.Admitted() && in:
			sizes[len(sizes)-1]++
		case r.Admitted():
			sizes, starts, in = append(sizes, 1), append(starts, r.Sent), true
		default:
			in = false
		}
	}
	return sizes, starts
}

// FitIntervalRefill returns the best interval-refilled token buckets,
// their capacities seeded by the bursts and by plain, the continuous
// bucket's best candidates.
func FitIntervalRefill(evs []observation.Event, h Hypotheses, plain []Candidate, rtt time.Duration) []Candidate {
	rh := h.refill
	if len(rh.fills) == 0 || len(evs) == 0 {
		return nil
	}
	var bursts []int
	addBurst := func(b int) {
		if b >= 1 && !slices.Contains(bursts, b) {
			bursts = append(bursts, b)
		}
	}
	for _, c := range h.capacities {
		for d := -1; d <= 1; d++ {
			addBurst(c + d)
		}
	}
	for _, c := range Extremes(plain, RateOf) {
		addBurst(c.Config.Burst)
	}
	type pair struct {
		fill  int
		every time.Duration
	}
	// Fills of the whole capacity too: a clump the trace entered midway
	// is smaller than the fill.
	fills := slices.Clone(rh.fills)
	for _, c := range h.capacities {
		if c >= 1 && !slices.Contains(fills, c) {
			fills = append(fills, c)
		}
	}
	var pairs, unfiltered []pair
	for _, every := range rh.intervals {
		for _, f := range fills {
			p := pair{f, every}
			unfiltered = append(unfiltered, p)
			r := float64(f) / every.Seconds()
			if rh.rate == 0 || math.Abs(r-rh.rate) <= refillRateSpread*rh.rate {
				pairs = append(pairs, p)
			}
		}
	}
	if len(pairs) == 0 {
		pairs = unfiltered
	}
	// Origins from the run's first decision: an interval's length then
	// moves the fill instants inside the run by little, so the two are
	// fitted apart.
	ref := evs[0].At
	reopened := reopenings(evs)
	var cfgs []limiter.Config
	for _, p := range pairs {
		// The coarse grid, and phases that put a fill between a rejection
		// and the admission after it: where the trace located one.
		var phases []time.Duration
		for k := range refillPhases {
			phases = append(phases, (p.every * time.Duration(k) / refillPhases).Round(windowResolution))
		}
		for _, at := range reopened {
			if ph := at.Sub(ref) % p.every; !slices.Contains(phases, ph) {
				phases = append(phases, ph)
			}
		}
		for _, b := range bursts {
			if p.fill > b {
				continue // a fill beyond the capacity is the capacity: another pair
			}
			for _, ph := range phases {
				cfgs = append(cfgs, limiter.Config{Algo: limiter.TokenBucket, Rate: float64(p.fill) / p.every.Seconds(), Burst: b,
					RefillEvery: p.every, Origin: ref.Add(ph)})
			}
		}
	}
	best := FitFamily(evs, cfgs, rtt)
	// Finer phases around the best coarse ones: a fill instant is located
	// to the trace's resolution, far below a twentieth of an interval.
	best = finerPhases(evs, best, best[:min(len(best), refillSeeds)], refillPhases*refillRefine, refillRefine, ref, rtt)
	return Widen(evs, best, rtt, refillOf, withRefill)
}

// maxReopenings bounds the data-driven phases per interval.
const maxReopenings = 8

// reopenings are the instants midway between a rejection and the
// admission of the same key that followed it: where a fill may have
// landed. The first maxReopenings, in time order.
func reopenings(evs []observation.Event) []time.Time {
	var out []time.Time
	last := map[string]int{} // key → index of its previous event
	for i := range evs {
		if j, ok := last[evs[i].Key]; ok && evs[i].Admitted && !evs[j].Admitted {
			out = append(out, evs[j].At.Add(evs[i].At.Sub(evs[j].At)/2))
			if len(out) == maxReopenings {
				break
			}
		}
		last[evs[i].Key] = i
	}
	return out
}

func refillOf(c limiter.Config) float64 { return c.RefillEvery.Seconds() }

// withRefill scales an interval refill's interval by f, keeping the tokens
// per fill (so the rate scales by 1/f) and the origin: the fill instants
// inside the run move by little when the origin is at its start.
func withRefill(c limiter.Config, f float64) limiter.Config {
	per := c.Rate * c.RefillEvery.Seconds()
	c.RefillEvery = time.Duration(float64(c.RefillEvery) * f)
	c.Rate = per / c.RefillEvery.Seconds()
	return c
}

// gridPeriod is the period of c's grid: a start grid's window, an interval
// refill's interval; 0 for a model on no grid of its own.
func gridPeriod(c limiter.Config) time.Duration {
	switch {
	case c.RefillEvery > 0:
		return c.RefillEvery
	case c.Align == limiter.AlignStart:
		return c.Window
	}
	return 0
}

// FullFillWindows splits interval refills whose every fill brings the
// bucket back to capacity (Rate·RefillEvery ≥ Burst) from the others. Such
// a bucket holds Burst tokens at each fill instant whatever it held before:
// it is a fixed window of Burst per RefillEvery on a grid at the fill
// instants (sethvargo/go-limiter, an Envoy local_ratelimit whose
// tokens_per_fill is max_tokens), one function under two names. Fitted as
// a bucket it ties with its own window and halves the verdict's
// confidence, and a window search that missed its grid lets the bucket
// win. The windows are replayed as windows, not copied.
func FullFillWindows(evs []observation.Event, cs []Candidate, rtt time.Duration) (buckets, windows []Candidate) {
	var cfgs []limiter.Config
	for _, c := range cs {
		if !fillsToCapacity(c.Config) {
			buckets = append(buckets, c)
			continue
		}
		cfgs = append(cfgs, limiter.Config{Algo: limiter.FixedWindow, Limit: c.Config.Burst, Window: c.Config.RefillEvery,
			Align: limiter.AlignStart, Origin: c.Config.Origin})
	}
	return buckets, FitFamily(evs, cfgs, rtt)
}

// fillsToCapacity reports whether an interval refill's every fill reaches
// the bucket's capacity.
func fillsToCapacity(c limiter.Config) bool {
	return c.RefillEvery > 0 && c.Rate*c.RefillEvery.Seconds() >= float64(c.Burst)-1e-9
}
