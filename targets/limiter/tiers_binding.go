package limiter

import (
	"math"
	"time"
)

// A composition whose every tier must admit (TiersAll) charges a tier only
// when all admit, and no tier counts rejections: a tier that could never
// refuse what the other admits is unobservable, and the composition is the
// other tier alone — for every client and every schedule, not on average.
// A bucket of 1.31/s burst 2 beside 130 per 12 s is the bucket (it admits
// at most 17.7 in any 12 s); a sliding log of 27 per 102 s beside 51 per
// 1 s is the log (it admits at most 27 in any second).

// BindingTier is the one tier of an all-must-admit composition c that can
// bind, when the other never can; false when both can, or c is no such
// composition.
func BindingTier(c Config) (Config, bool) {
	if c.Algo != Tiers || c.TierMode != TiersAll {
		return c, false
	}
	for i := range 2 {
		keep, other := c.Tiers[i], c.Tiers[1-i]
		if neverBinds(other, keep) {
			return keep.Config(c.Origin), true
		}
	}
	return c, false
}

// neverBinds says whether tier t can never refuse a request that tier b
// admits: whatever b lets through in any span stays within what t allows
// in it.
func neverBinds(t, b Tier) bool {
	switch t.Algo {
	case FixedWindow, SlidingLog:
		// A window refuses only once its limit is admitted within one
		// window's span.
		return float64(t.Limit) > mostAdmitted(b, t.Window)
	case SlidingCounter:
		// Its estimate weighs the previous period's count: admissions
		// over up to two windows' span.
		return float64(t.Limit) > mostAdmitted(b, 2*t.Window)
	case TokenBucket:
		// A bucket refuses once more arrive than its burst and its refill
		// since: never, when b's most at once fits in the burst and b's
		// long-run rate in the refill.
		return float64(t.Burst) > mostAdmitted(b, 0) && t.Rate >= longRunRate(b)
	}
	// A shaping queue that never refuses still delays what comes faster
	// than its rate: it is observable.
	return false
}

// mostAdmitted bounds how many requests tier b admits in any span of length
// d: a bucket its burst and its refill over d; a sliding log its limit per
// window begun in d; a fixed window (and, conservatively, a sliding
// counter, whose estimate lets up to two windows' worth through across a
// boundary) one more window's limit than that.
func mostAdmitted(b Tier, d time.Duration) float64 {
	switch b.Algo {
	case TokenBucket:
		return float64(b.Burst) + b.Rate*d.Seconds()
	case LeakyShaping:
		// Its queue of burst behind the request in service.
		return float64(b.Burst) + 1 + b.Rate*d.Seconds()
	case SlidingLog:
		return float64(b.Limit) * (math.Floor(d.Seconds()/b.Window.Seconds()) + 1)
	case FixedWindow, SlidingCounter:
		return float64(b.Limit) * (math.Floor(d.Seconds()/b.Window.Seconds()) + 2)
	}
	return math.Inf(1)
}

// longRunRate is the most tier b admits per second over a long span.
func longRunRate(b Tier) float64 {
	switch b.Algo {
	case TokenBucket, LeakyShaping:
		return b.Rate
	case FixedWindow, SlidingLog, SlidingCounter:
		return float64(b.Limit) / b.Window.Seconds()
	}
	return math.Inf(1)
}
