package grade

import (
	"time"

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
// it can be replayed (a concurrency cap needs release times; it is compared
// by number only).
func (v *view) inferredConfig() (limiter.Config, bool) {
	c, err := v.inf.Model()
	return c, err == nil && c.Algo != limiter.Concurrency && c.Algo != limiter.None
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

// replayMismatches replays every decided request through c and counts the
// decisions it gets wrong, at the best of a few clock offsets (wall-aligned
// windows depend on absolute time, known to about half a round trip). The
// requests of one near-simultaneous cluster are compared by how many were
// admitted, since their order at the server is unknowable.
func (v *view) replayMismatches(c limiter.Config) int {
	best := -1
	eps := v.obs.RTT/2 + time.Millisecond
	offsets := []time.Duration{0}
	if c.Algo == limiter.FixedWindow && c.Align == limiter.AlignWall || c.Algo == limiter.SlidingCounter {
		offsets = []time.Duration{-eps, 0, eps}
	}
	aligns := []string{c.Align}
	if c.Algo == limiter.FixedWindow && v.inf.Alignment != limiter.AlignWall && v.inf.Alignment != limiter.AlignFirst {
		aligns = []string{limiter.AlignWall, limiter.AlignFirst} // the inference could not tell
	}
	for _, al := range aligns {
		c.Align = al
		for _, off := range offsets {
			if m := v.replayOnce(c, off, eps); m >= 0 && (best < 0 || m < best) {
				best = m
			}
		}
	}
	return best
}

func (v *view) replayOnce(c limiter.Config, offset, eps time.Duration) int {
	lim, err := limiter.New(c)
	if err != nil {
		return -1
	}
	mis := 0
	for i := 0; i < len(v.rs); {
		j := i + 1
		for j < len(v.rs) && v.rs[j].Sent-v.rs[i].Sent <= eps {
			j++
		}
		// A bucket refills while the server works through a cluster: on a
		// loaded machine it may decide the last of them well after they
		// arrived. That much disagreement is timing, not capacity.
		noise := 0
		if c.Algo == limiter.TokenBucket || c.Algo == limiter.LeakyShaping {
			lo, hi := v.rs[i].Sent, v.rs[i].Sent
			for _, r := range v.rs[i:j] {
				// A shaper's admitted answers wait out their queue
				// delay on purpose: only its rejections time the work.
				if r.Rejected() || c.Algo == limiter.TokenBucket {
					hi = max(hi, r.FirstByte)
				}
			}
			noise = int(c.Rate * (hi - lo).Seconds())
		}
		observed, model := map[string]int{}, map[string]int{}
		for _, r := range v.rs[i:j] {
			at := v.obs.Start.Add(r.Sent + v.obs.RTT/2 + offset)
			if lim.Allow(r.Key, at).Allowed {
				model[r.Key]++
			}
			if r.Admitted() {
				observed[r.Key]++
			}
		}
		for k := range merge(observed, model) {
			mis += max(abs(observed[k]-model[k])-noise, 0)
		}
		i = j
	}
	return mis
}

func merge(a, b map[string]int) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
