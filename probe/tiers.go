package probe

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// TierFit is one tier of a two-tier composition (family "tiers"), with
// the parameters of its family as Inference reports a single family's.
type TierFit struct {
	Family     string  `json:"family"`
	RatePerS   float64 `json:"rate_per_s,omitempty"`
	RateErr    float64 `json:"rate_err_per_s,omitempty"`
	Burst      int     `json:"burst,omitempty"`
	BurstErr   int     `json:"burst_err,omitempty"`
	Delay      int     `json:"delay,omitempty"` // leaky_shaping: nginx delay=N
	Limit      int     `json:"limit,omitempty"`
	LimitErr   int     `json:"limit_err,omitempty"`
	WindowS    float64 `json:"window_s,omitempty"`
	WindowErrS float64 `json:"window_err_s,omitempty"`
	Alignment  string  `json:"alignment,omitempty"` // fixed_window: wall or first
	// CountsRejected: a sliding tier charges the attempts it denies too;
	// absent when the tied compositions disagree (the run cannot tell).
	CountsRejected *bool `json:"counts_rejected,omitempty"`
}

// setTiers reports a composition's tiers: each parameter the middle of the
// tied candidates' range, ± half its width.
func (inf *Inference) setTiers(cs []fit.Candidate) {
	round := func(v float64, digits int) float64 {
		p := math.Pow(10, float64(digits))
		return math.Round(v*p) / p
	}
	inf.TiersMode = cs[0].Config.TierMode
	inf.Tiers = nil
	for i, t := range cs[0].Config.Tiers {
		f := TierFit{Family: t.Algo}
		switch t.Algo {
		case limiter.TokenBucket, limiter.LeakyShaping:
			r, re := fit.TierSpan(cs, i, func(t limiter.Tier) float64 { return t.Rate })
			b, be := fit.TierSpan(cs, i, func(t limiter.Tier) float64 { return float64(t.Burst) })
			f.RatePerS, f.RateErr = round(r, 3), round(re, 3)
			f.Burst, f.BurstErr = int(math.Round(b)), int(math.Ceil(be))
			f.Delay = t.DelayAfter
		default:
			l, le := fit.TierSpan(cs, i, func(t limiter.Tier) float64 { return float64(t.Limit) })
			w, we := fit.TierSpan(cs, i, func(t limiter.Tier) float64 { return t.Window.Seconds() })
			f.Limit, f.LimitErr = int(math.Round(l)), int(math.Ceil(le))
			f.WindowS, f.WindowErrS = round(w, 3), round(we, 3)
			if t.Algo == limiter.FixedWindow {
				f.Alignment = t.Align
			}
			if t.Algo != limiter.FixedWindow { // a fixed window forgets its denied attempts at its boundary
				f.CountsRejected = tiersAgree(cs, i, func(t limiter.Tier) bool { return t.CountRejected })
			}
		}
		inf.Tiers = append(inf.Tiers, f)
	}
	// The model: the tied candidate nearest the reported values.
	best, bestD := cs[0].Config, math.Inf(1)
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-9) }
	for _, c := range cs {
		d := 0.0
		for i, t := range c.Config.Tiers {
			f := inf.Tiers[i]
			d += rel(t.Rate, f.RatePerS) + rel(float64(t.Burst), float64(f.Burst)) + rel(float64(t.Limit), float64(f.Limit)) + rel(t.Window.Seconds(), f.WindowS)
		}
		if d < bestD {
			best, bestD = c.Config, d
		}
	}
	inf.fitted = best
}

// tiersAgree is what every tied composition says of its tier i, or nil
// when they disagree.
func tiersAgree(cs []fit.Candidate, i int, get func(limiter.Tier) bool) *bool {
	v := get(cs[0].Config.Tiers[i])
	for _, c := range cs {
		if get(c.Config.Tiers[i]) != v {
			return nil
		}
	}
	return &v
}

// text is a tier in a summary: "token_bucket 10/s burst 5",
// "fixed_window 30 per 60 s".
func (f TierFit) text() string {
	switch f.Family {
	case limiter.TokenBucket, limiter.LeakyShaping:
		s := fmt.Sprintf("%s %s/s burst %d", f.Family, fnum(f.RatePerS), f.Burst)
		if f.RateErr > 0 || f.BurstErr > 0 {
			s = fmt.Sprintf("%s %s ± %s/s burst %d ± %d", f.Family, fnum(f.RatePerS), fnum(f.RateErr), f.Burst, f.BurstErr)
		}
		if f.Delay > 0 {
			s += fmt.Sprintf(" delay %d", f.Delay)
		}
		return s
	}
	s := fmt.Sprintf("%s %d per %s s", f.Family, f.Limit, fnum(f.WindowS))
	if f.LimitErr > 0 || f.WindowErrS > 0 {
		s = fmt.Sprintf("%s %d ± %d per %s ± %s s", f.Family, f.Limit, f.LimitErr, fnum(f.WindowS), fnum(f.WindowErrS))
	}
	if f.Alignment != "" {
		s += ", " + f.Alignment + "-aligned"
	}
	if f.CountsRejected != nil && *f.CountsRejected {
		s += ", counting denied attempts"
	}
	return s
}

// tiersSummary is the one-line statement of a composition.
func (inf Inference) tiersSummary() string {
	if len(inf.Tiers) != 2 {
		return "tiers"
	}
	if inf.TiersMode == limiter.TiersEither {
		return fmt.Sprintf("two tiers, either admits: %s, else a burst pool of %s", inf.Tiers[0].text(), inf.Tiers[1].text())
	}
	return fmt.Sprintf("two tiers, all must admit: %s, and %s", inf.Tiers[0].text(), inf.Tiers[1].text())
}

// tiersModel is the composition an inference read back from JSON names.
func (inf Inference) tiersModel() (limiter.Config, error) {
	c := limiter.Config{Algo: limiter.Tiers, TierMode: inf.TiersMode}
	if len(inf.Tiers) != 2 {
		return c, fmt.Errorf("family tiers needs two tiers, got %d", len(inf.Tiers))
	}
	for i, f := range inf.Tiers {
		c.Tiers[i] = limiter.Tier{Algo: f.Family, Rate: f.RatePerS, Burst: f.Burst, DelayAfter: f.Delay, Limit: f.Limit,
			Window: time.Duration(f.WindowS * float64(time.Second)), Align: f.Alignment,
			CountRejected: f.CountsRejected != nil && *f.CountsRejected}
		if f.Family == limiter.FixedWindow && f.Alignment == "" {
			c.Tiers[i].Align = limiter.AlignWall
		}
	}
	return c, c.Validate()
}

// tiersFact is the evidence a client can act on: what each tier holds it
// to, and what the single families got wrong.
func tiersFact(o *observation.Observation, inf Inference) string {
	if len(inf.Tiers) != 2 {
		return ""
	}
	a, b := inf.Tiers[0], inf.Tiers[1]
	var s string
	if inf.TiersMode == limiter.TiersEither {
		s = fmt.Sprintf("two limits on one key, either admits: a burst takes the primary's %d and then the pool's %d (%d at once); after that only the primary refills (%s), and the pool comes back %s",
			tierCapacity(a), tierCapacity(b), tierCapacity(a)+tierCapacity(b), tierRefill(a), tierReturn(b))
	} else {
		s = fmt.Sprintf("two limits on one key, every one must admit: at most %d at once and %s (%s), and at most %s (%s); a rejected request is charged to neither",
			min(tierCapacity(a), tierCapacity(b)), tierRefill(a), a.Family, tierBudget(b), b.Family)
	}
	var singles []string
	for _, alt := range inf.Alternatives {
		if alt.Family != limiter.None && alt.Family != limiter.Concurrency && len(singles) < 2 {
			singles = append(singles, fmt.Sprintf("%s %s", alt.Family, alt.ExplainedText()))
		}
	}
	if len(singles) > 0 {
		s += fmt.Sprintf("; no single limiter explains the run (of %d decisions: %s)", inf.Decisions, strings.Join(singles, ", "))
	}
	return s
}

func tierCapacity(f TierFit) int {
	if f.Family == limiter.LeakyShaping {
		return f.Burst + 1
	}
	if f.Family == limiter.TokenBucket {
		return f.Burst
	}
	return f.Limit
}

// tierRefill says how a tier gives capacity back.
func tierRefill(f TierFit) string {
	if f.RatePerS > 0 {
		return fmt.Sprintf("one every %.0f ms", 1000/f.RatePerS)
	}
	return fmt.Sprintf("%d per %s s", f.Limit, fnum(f.WindowS))
}

// tierReturn says when a pool is whole again.
func tierReturn(f TierFit) string {
	switch {
	case f.RatePerS > 0:
		return fmt.Sprintf("at %s/s", fnum(f.RatePerS))
	case f.Family == limiter.SlidingLog:
		return fmt.Sprintf("each admission %s s after it was taken", fnum(f.WindowS))
	}
	return fmt.Sprintf("whole every %s s", fnum(f.WindowS))
}

// tierBudget is a tier's long-run allowance.
func tierBudget(f TierFit) string {
	if f.RatePerS > 0 {
		return fmt.Sprintf("%s/s after a burst of %d", fnum(f.RatePerS), tierCapacity(f))
	}
	return fmt.Sprintf("%d per %s s", f.Limit, fnum(f.WindowS))
}
