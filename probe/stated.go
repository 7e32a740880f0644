package probe

import (
	"fmt"
	"github.com/ratecheck/ratecheck/results"
	"math"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A model the user states (check's expectations) can be refuted before the
// probe ends: nothing makes a limiter admit more at one instant after idle
// than its capacity, so a burst that admits more refutes the stated
// capacity at once, whatever the rest of the run would show. (Fewer proves
// nothing: another client, or an earlier run, may have used some of it.)
// The plan stops there, and the expectation fails with the burst as its
// evidence.

// Stated is what an expectation says one burst after idle admits at most.
type Stated struct {
	// What is the expectation as written ("limit=80").
	What string
	// AtOnce is the most one burst after idle may admit: the capacity at
	// the top of the expectation's tolerance, plus one for a token that
	// comes back while the burst arrives.
	AtOnce int
	// Straddle: the limit may be a fixed window, which admits up to twice
	// its capacity to a burst a window boundary falls inside of. Window
	// is the stated window (0 when none was stated).
	Straddle bool
	Window   time.Duration
	// RefillPerS is the most a bucket may refill per second while the
	// burst arrives (the stated rate's top); MayRelease says the limit
	// may be a concurrency cap, which admits more once an answer has
	// freed a slot.
	RefillPerS float64
	MayRelease bool
}

// straddleChanceMax is the largest chance of a fixed window's boundary
// falling inside a burst's arrival that still refutes a stated capacity:
// one in a thousand.
const straddleChanceMax = 0.001

// Refutes returns the evidence when one of the run's bursts admitted more
// than s allows, and whether one did.
func Refutes(o *observation.Observation, s Stated) (string, bool) {
	for _, name := range o.BurstPhases() {
		rs := o.Phase(name)
		var sent []time.Duration
		for i := range rs {
			sent = append(sent, rs[i].Sent)
		}
		spread := slices.Max(sent) - slices.Min(sent) + o.RTT
		atOnce := s.AtOnce + int(math.Ceil(s.RefillPerS*spread.Seconds()))
		admitted := observation.CountAdmitted(rs)
		if admitted <= atOnce || s.MayRelease && answeredWhileSent(rs, slices.Max(sent)) {
			continue
		}
		what := fmt.Sprintf("the burst of %d released at once admitted %d, where %s admits at most %d", len(rs), admitted, s.What, atOnce)
		switch {
		case !s.Straddle:
			return what, true
		case admitted > 2*atOnce:
			return what + ", or twice that to a burst a fixed window's boundary falls inside of", true
		case s.Window > 0 && spread.Seconds()/s.Window.Seconds() <= straddleChanceMax:
			return what + fmt.Sprintf(" (a fixed window's boundary inside the %.1f ms the burst took to arrive, a chance of 1 in %.0f, would let up to twice through)",
				float64(spread)/1e6, s.Window.Seconds()/spread.Seconds()), true
		}
	}
	return "", false
}

// answeredWhileSent says whether an admitted request of the burst rs was
// answered before its last was sent (last): a concurrency cap may have
// freed a slot for the rest.
func answeredWhileSent(rs []results.Result, last time.Duration) bool {
	for i := range rs {
		if rs[i].Admitted() && rs[i].Done <= last {
			return true
		}
	}
	return false
}

// refutedBy is the plan's stop on what the user stated
// (plan.Options.Refuted): the first of stated the run so far refutes; nil
// when nothing is stated.
func refutedBy(stated []Stated) func(*observation.Observation) (string, bool) {
	if len(stated) == 0 {
		return nil
	}
	return func(o *observation.Observation) (string, bool) {
		for _, s := range stated {
			if why, ok := Refutes(o, s); ok {
				return why, true
			}
		}
		return "", false
	}
}
