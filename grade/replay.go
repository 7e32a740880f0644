package grade

import (
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The inference names one capacity, but a nearby one may explain the run
// about as well (the inference picks by a small margin, and on a loaded
// machine its numbers wobble). limit.agrees therefore asks the question
// directly: replayed through the inferred model with the advertised limit
// in place of the inferred one, are the decisions still explained? Only if
// they are clearly not does the advertised limit disagree with the
// behaviour.

// inferredConfig is the reference model the inference names, and whether
// limit.agrees replays it (a concurrency cap and two tiers are compared by
// number only: withCapacity resizes neither).
func (v *view) inferredConfig() (limiter.Config, bool) {
	c, err := v.inf.Model()
	return c, err == nil && c.Algo != limiter.Concurrency && c.Algo != limiter.None && c.Algo != limiter.Tiers
}

// withCapacity returns c admitting n at one instant from full.
func withCapacity(c limiter.Config, n int) limiter.Config {
	switch c.Algo {
	case limiter.TokenBucket:
		c.Burst = n
	case limiter.LeakyShaping:
		c.Burst = n - 1
		c.DelayAfter = min(c.DelayAfter, max(c.Burst, 0))
	default:
		c.Limit = n
	}
	return c
}

// replayMismatches replays every decided request through c, as the
// inference's fit does (probe.Replay), and counts the decisions it gets
// wrong; -1 when c cannot be built. A fixed window whose alignment the
// inference could not tell is replayed both ways, keeping the better.
func (v *view) replayMismatches(c limiter.Config) int {
	aligns := []string{c.Align}
	if c.Algo == limiter.FixedWindow && v.inf.Alignment != limiter.AlignWall && v.inf.Alignment != limiter.AlignFirst {
		aligns = []string{limiter.AlignWall, limiter.AlignFirst} // the inference could not tell
	}
	best := -1
	for _, al := range aligns {
		c.Align = al
		if r, err := probe.Replay(v.obs, c); err == nil && (best < 0 || r.Mismatches < best) {
			best = r.Mismatches
		}
	}
	return best
}
