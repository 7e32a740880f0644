package expect

import (
	"math"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Stated capacities: an expectation of a limit, a burst or a concurrency
// cap says how much one burst after idle admits at most, which the probe
// can refute at once (probe.Stated). A family expectation beside it
// narrows what the number means; a window expectation says how likely a
// fixed window's boundary is to have fallen inside the burst.

// StatedBy are the capacities exps state, one per expectation that states
// one (in order), with the index of its expectation.
func StatedBy(exps []Expectation) (stated []probe.Stated, index []int) {
	family, window, rate := "", time.Duration(0), 0.0
	for _, e := range exps {
		tol, _ := e.tolerance()
		switch e.Key {
		case KeyFamily:
			family = e.Words[0]
		case KeyWindow:
			window = time.Duration(math.Max(0, e.Num-tol) * float64(time.Second))
		case KeyRate:
			rate = e.Num + tol
		}
	}
	for i, e := range exps {
		// A bucket refills while a burst arrives: without a stated
		// rate, how much is unknown, and nothing is refuted.
		if !statesCapacity(e.Key, family) || e.Key == KeyBurst && rate == 0 {
			continue
		}
		tol, _ := e.tolerance()
		s := probe.Stated{What: e.Text, AtOnce: int(math.Floor(e.Num+tol)) + 1}
		switch e.Key {
		case KeyLimit:
			s.Straddle = family == "" || family == limiter.FixedWindow
			s.Window = window
			s.MayRelease = family == "" || family == limiter.Concurrency
		case KeyBurst:
			s.RefillPerS = rate
		case KeyMaxInflight:
			s.MayRelease = true
		}
		stated, index = append(stated, s), append(index, i)
	}
	return stated, index
}

// statesCapacity says whether an expectation of key, with the family
// expected (or "" for none), bounds what a burst after idle admits.
func statesCapacity(key, family string) bool {
	switch key {
	case KeyLimit:
		return family == "" || isWindow(family) || family == limiter.Concurrency
	case KeyBurst:
		return family == "" || family == limiter.TokenBucket || family == limiter.LeakyShaping
	case KeyMaxInflight:
		return family == "" || family == limiter.Concurrency
	}
	return false
}

// refutations are the expectations of exps the run refutes outright, by
// index, with the evidence.
func refutations(exps []Expectation, obs *probe.Observation) map[int]string {
	if obs == nil {
		return nil
	}
	out := map[int]string{}
	stated, index := StatedBy(exps)
	for k, s := range stated {
		if why, ok := probe.Refutes(obs, s); ok {
			out[index[k]] = why
		}
	}
	return out
}
