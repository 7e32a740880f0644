package limiter

import "time"

// A rejection is inert when it leaves a model's decisions as they were:
// every later request of the key is decided the same whether the rejected
// one came or not, and every request of the key until the rejection's
// RetryAfter is refused as well. A replay of a long lock then need not ask
// the model about each knock it refused (probe/fit's hot loop).

// refusalGuard is taken off a RetryAfter before it is trusted as a
// refusal: the models compute it in float arithmetic, rounded to the
// nanosecond, and decide with a tolerance of 1e-9 of a request, which a
// sliding counter's estimate crosses within 3e-8 s of its instant over a
// window of an hour. The guard is far below the spacing of a probe's
// knocks, so almost nothing it leaves to be asked is worth it.
const refusalGuard = 100 * time.Microsecond

// RejectionsInert says whether cfg's rejections are inert. They are not
// where a rejection is charged (a restarting window; a
// log or a sliding counter that counts denied attempts, a tier that counts
// them, which an all-must-admit composition charges even when it had
// room), nor for a concurrency cap (what frees a slot is a release, not
// time). A first-aligned sliding counter steps its grid on a rejected
// request too, but a refusal of one that counts only admissions ends at
// the next step: the previous period's share, rounded down, is below the
// limit from the step's first nanosecond. A fixed
// window that counts denied attempts decides as one that does not: a
// window full is full until its boundary. A block (Block) is inert over an
// algorithm that is: knocking neither reaches it nor extends the block.
func (c Config) RejectionsInert() bool {
	switch c.Algo {
	case FixedWindow:
		return !c.Restarts()
	case SlidingLog:
		return !c.CountRejected
	case SlidingCounter:
		return !c.CountRejected
	case TokenBucket, LeakyShaping:
		return true
	case Tiers:
		for _, t := range c.Tiers {
			if t.CountRejected || !t.Config(c.Origin).RejectionsInert() {
				return false
			}
		}
		return true
	}
	return false
}

// RefusedUntil is the instant before which a model whose rejections are
// inert refuses every request of the key that d rejected at at: its
// RetryAfter less the guard; at itself when it promises nothing longer.
func RefusedUntil(at time.Time, d Decision) time.Time {
	if d.Allowed || d.RetryAfter <= refusalGuard {
		return at
	}
	return at.Add(d.RetryAfter - refusalGuard)
}
