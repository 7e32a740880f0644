package probe

import (
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A bucket's capacity is a claim about time: emptied, it comes back
// continuously and is whole again after Burst/Rate. A burst pool beside a
// primary of part of it (a short limit beside an hourly quota, nginx's
// two zones, a bucket with a burst allowance) admits the same first burst
// and refills at the same rate, until the primary is whole — past that
// the bucket gives more, the composition only its primary until the
// pool's window ends. So the burst is earned only by a volley, after a
// silence the bucket had emptied before, that got more than half of it
// back, within a silence short enough that no pool's window ended in it.
const (
	// hiddenPoolCap is the most a bucket's verdict may claim while its
	// burst is not earned: one of two explanations the run cannot tell
	// apart.
	hiddenPoolCap = 0.5
	// poolSilenceSpan bounds the time from the key's emptying to the
	// volley that earns it, in refill times (Burst/Rate), but never
	// below poolSilenceFloor: a whole return after longer is also a pool
	// whose window ended in between (a pool of 25 per 2m30s on the wall
	// clock beside a bucket of 16 at 4/s came back 19 s after the key was
	// emptied in one probe, 47 s in another, and both were named a bucket
	// of 41 at 0.94). A pool of a shorter window comes back within the
	// run's other phases too, where the fits see it.
	poolSilenceSpan  = 1.5
	poolSilenceFloor = 10 * time.Second
	// minPoolBurst: a smaller bucket has no hidden half worth naming.
	minPoolBurst = 4
	// volleySpacing is the widest spacing inside a volley: requests a
	// round trip apart.
	volleySpacing = 50 * time.Millisecond
)

// hiddenPool says why a token bucket's burst is not earned yet, or "".
func hiddenPool(evs []observation.Event, best limiter.Config) string {
	if best.Algo != limiter.TokenBucket || best.Burst < minPoolBurst || best.Block > 0 || best.Rate <= 0 {
		return ""
	}
	refill := time.Duration(float64(best.Burst) / best.Rate * float64(time.Second))
	within := max(time.Duration(poolSilenceSpan*float64(refill)), poolSilenceFloor)
	half := best.Burst / 2
	if largestReturn(evs, within, best.Rate) > float64(half) {
		return ""
	}
	apart := time.Duration(float64(half) / best.Rate * float64(time.Second)).Round(10 * time.Millisecond)
	return fmt.Sprintf("the burst of %d was never seen to come back past %d within %s of the key being emptied: a bucket of %d at the same rate beside a pool of %d whose window did not end in that time explains the run as well, and a burst after a silence between %s and %s tells them apart (confidence at most %.1f)",
		best.Burst, half, within.Round(100*time.Millisecond), half, best.Burst-half, apart, within.Round(100*time.Millisecond), hiddenPoolCap)
}

// largestReturn is the most capacity a volley of the probe's own key
// found at its start, within the span within of the key's last rejection
// before it (the key was empty then): the admissions before its first
// rejection, less what a refill at rate added while they were sent.
// Admissions between the rejection and the volley took tokens the refill
// gave: the volley's count is a lower bound on what came back.
func largestReturn(evs []observation.Event, within time.Duration, rate float64) float64 {
	var own []observation.Event
	for _, e := range evs {
		if e.Key == evs[0].Key {
			own = append(own, e)
		}
	}
	most, rejected := 0.0, -1
	for i := 0; i < len(own); i++ {
		if !own[i].Admitted {
			rejected = i
			continue
		}
		if rejected < 0 || own[i].At.Sub(own[rejected].At) > within {
			continue
		}
		j := i + 1
		for j < len(own) && own[j].Admitted && own[j].At.Sub(own[j-1].At) <= volleySpacing {
			j++
		}
		span := own[j-1].At.Sub(own[i].At).Seconds()
		most = max(most, float64(j-i)-rate*span)
		i = j - 1
	}
	return most
}
