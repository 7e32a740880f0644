package fit

import (
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// unboundTiers moves each two-tier candidate one of whose tiers can never
// bind (limiter.BindingTier) to the fit of the family of the tier that
// does: it is that limiter, on a finer grid than the family's own fit may
// have tried. Left among the compositions it named a sliding log of 27 per
// 102 s "two tiers: 51 per 1 s and 27 per 102.01 s" at 0.86, where the
// log's own fit, a request off at 28 per 101.92 s, came second.
func unboundTiers(fits []FamilyFit) {
	ti := familyIndex(fits, limiter.Tiers)
	if ti < 0 {
		return
	}
	var kept []Candidate
	for _, c := range fits[ti].Best {
		single, ok := limiter.BindingTier(c.Config)
		j := familyIndex(fits, single.Algo)
		if !ok || j < 0 {
			kept = append(kept, c)
			continue
		}
		c.Config = single
		switch f := &fits[j]; {
		case c.Mismatches < f.Mismatches():
			f.Best = []Candidate{c}
		case c.Mismatches == f.Mismatches():
			f.Best = append(f.Best, c)
		}
	}
	fits[ti].Best = kept
}

// familyIndex is the index of family's fit in fits, or -1.
func familyIndex(fits []FamilyFit, family string) int {
	for i, f := range fits {
		if f.Family == family {
			return i
		}
	}
	return -1
}

// TiersDecide reports whether each tier of a two-tier candidate decides
// part of the run: alone, neither explains it within slack of the
// composition. Such a composition is another limiter, not a single one on
// a coarser grid: a short window beside a pool whose return the run never
// saw ties with a bucket refilled in clumps, and the tie is the answer.
func TiersDecide(evs []observation.Event, c Candidate, unc time.Duration, slack int) bool {
	if c.Config.Algo != limiter.Tiers {
		return false
	}
	for _, t := range c.Config.Tiers {
		bound := c.Mismatches + slack
		if ReplayEvents(evs, t.Config(c.Config.Origin), c.Offset, unc, bound+1, nil) <= bound {
			return false
		}
	}
	return true
}
