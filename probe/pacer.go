package probe

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// A pacer never rejects: it queues every request and lets them go 1/r
// apart, so a burst comes back as a staircase whose last step is n/r after
// the first (uber-go/ratelimit, leaky_shaping?burst=unbounded). heldBack
// (earned.go) has told that from a flood's load already; here the queue's
// rate is fitted to the delays, which are the only evidence.

// inferPacer fits an unbounded leaky bucket to a run that rejected nothing
// but held requests back, and compares it with no limiter at all.
func inferPacer(o *observation.Observation, evs []observation.Event, inf Inference) Inference {
	for i := range evs {
		// Queueing is established (heldBack): every delay is evidence.
		evs[i].JudgeDelay = true
	}
	var cfgs []limiter.Config
	delays := pacerSlacks(o)
	for _, est := range departureRates(o) {
		for _, d := range delays {
			for k := -fit.RateFineSteps; k <= fit.RateFineSteps; k++ {
				cfgs = append(cfgs, limiter.Config{Algo: limiter.LeakyShaping, Rate: est * (1 + float64(k)*fit.RateFineStep), QueueUnbounded: true, DelayAfter: d})
			}
			for k := -fit.RateCoarseSteps; k <= fit.RateCoarseSteps; k++ {
				cfgs = append(cfgs, limiter.Config{Algo: limiter.LeakyShaping, Rate: est * math.Pow(2, float64(k)/fit.RateCoarseSteps), QueueUnbounded: true, DelayAfter: d})
			}
		}
	}
	held, n, most := heldBack(o)
	noneMis := fit.ReplayEvents(evs, limiter.Config{Algo: limiter.None}, 0, observation.DecisionUncertainty(o.RTT), math.MaxInt32, nil)
	best := fit.Widen(evs, fit.FitFamily(evs, cfgs, o.RTT), o.RTT, fit.RateOf, fit.WithRate)
	if len(best) == 0 || fit.ExplainsTooLittle(best[0].Mismatches, len(evs)) {
		inf.Family = Inconclusive
		inf.Reason = fmt.Sprintf("nothing was rejected, but %d of %d burst requests were held back beyond the service time, up to %.0f ms, and no pacer's rate explains the delays", held, n, float64(most)/1e6)
		inf.Evidence = facts(o, inf)
		return inf
	}
	m := best[0].Mismatches
	inf.Family = limiter.LeakyShaping
	inf.Explained = len(evs) - m
	inf.setParams(best)
	inf.Alternatives = []Alternative{{Family: limiter.None, Explained: len(evs) - noneMis}}
	inf.Confidence = (1 - float64(m+1)/float64(noneMis+1)) * math.Max(0, 1-10*float64(m)/float64(len(evs)))
	inf.Confidence = math.Round(inf.Confidence*100) / 100
	inf.Evidence = facts(o, inf)
	inf.Evidence = append(inf.Evidence, pacerFact(o, inf, held, most))
	return inf
}

// departureRates estimates a queue's rate from each burst's answers: its
// admissions leave 1/r apart, at send + latency − service time. A pacer
// that lets idle time be caught up (uber-go/ratelimit's slack) serves the
// first few at once, so the rate over the later half of the departures is
// an estimate too.
func departureRates(o *observation.Observation) []float64 {
	var out []float64
	for _, dep := range burstDepartures(o) {
		if len(dep) >= 3 {
			if span := (dep[len(dep)-1] - dep[0]).Seconds(); span > 0 {
				out = append(out, float64(len(dep)-1)/span)
			}
		}
		if mid := len(dep) / 2; len(dep)-mid >= 3 {
			if span := (dep[len(dep)-1] - dep[mid]).Seconds(); span > 0 {
				out = append(out, float64(len(dep)-1-mid)/span)
			}
		}
	}
	return out
}

// burstDepartures are each burst's admissions, in order of departure.
func burstDepartures(o *observation.Observation) [][]time.Duration {
	service := o.ServiceTime()
	var out [][]time.Duration
	for _, b := range o.BurstPhases() {
		var dep []time.Duration
		for _, r := range o.Phase(b) {
			if r.Error == "" && r.Admitted() {
				dep = append(dep, r.Sent+r.Latency()-service)
			}
		}
		sort.Slice(dep, func(i, j int) bool { return dep[i] < dep[j] })
		out = append(out, dep)
	}
	return out
}

// pacerSlacks are the delay=N candidates of a pacer (nginx delay=, the
// slack uber-go/ratelimit lets idle time build): N+1 requests of a burst
// after idle go at once. Seeded by each burst's count of departures within
// half the spacing of its later half from the first (the queue's spacing
// is 1/r there), ±1 for the timing noise of the burst's release.
func pacerSlacks(o *observation.Observation) []int {
	out := []int{0}
	for _, dep := range burstDepartures(o) {
		mid := len(dep) / 2
		if len(dep)-mid < 3 || dep[len(dep)-1] <= dep[mid] {
			continue
		}
		half := (dep[len(dep)-1] - dep[mid]) / time.Duration(2*(len(dep)-1-mid))
		at := 0
		for at+1 < len(dep) && dep[at+1]-dep[0] < half {
			at++
		}
		for d := at - 1; d <= at+1; d++ {
			if d > 0 && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// pacerFact is the evidence a client can act on: the spacing, and how long
// the largest burst waited.
func pacerFact(o *observation.Observation, inf Inference, held int, most time.Duration) string {
	largest := 0
	for _, b := range o.BurstPhases() {
		largest = max(largest, len(o.Phase(b)))
	}
	s := fmt.Sprintf("never rejects: requests are spaced %.0f ms apart; a burst of %d waits up to %.1f s (%d held back)",
		1000/inf.RatePerS, largest, most.Seconds(), held)
	if inf.Delay > 0 {
		s += fmt.Sprintf("; after idle the first %d go at once (idle time is caught up: delay=%d)", inf.Delay+1, inf.Delay)
	}
	if t := timeoutsIn(o); t > 0 {
		s += fmt.Sprintf("; %d waited beyond the request timeout", t)
	}
	return s
}

func timeoutsIn(o *observation.Observation) int {
	n := 0
	for _, b := range o.BurstPhases() {
		n += observation.Timeouts(o.Phase(b))
	}
	return n
}
