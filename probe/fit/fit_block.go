package fit

import (
	"slices"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Penalties: a key shut for a fixed time after a rejection (block=D), or a
// fixed window every over-limit request restarts (penalty=restart). Like a
// start grid they are searched only when no plain model explains the run,
// on the plain fits' own parameters: what a penalty changes is when
// capacity comes back, not how much there is.

// blockSteps are the relative steps below each observed lockout a block's
// length is tried at: the key reopens at the first request after it ends.
var blockSteps = []float64{0, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2}

// minBlock: a shorter lockout is a refill's ordinary wait, not a penalty.
const minBlock = 200 * time.Millisecond

// commonBlocks are penalty periods people configure.
var commonBlocks = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute}

// FitPenalties returns a family's best candidates with a penalty, seeded by
// its best plain ones.
func FitPenalties(evs []observation.Event, h Hypotheses, plain []Candidate, rtt time.Duration) []Candidate {
	seeds := penaltySeeds(h, plain)
	var cfgs []limiter.Config
	for _, d := range BlockCandidates(evs) {
		for _, s := range seeds {
			c := s.Config
			c.Block = d
			cfgs = append(cfgs, c)
		}
	}
	cfgs = append(cfgs, restartConfigs(seeds)...)
	best := FitFamily(evs, cfgs, rtt)
	if len(best) > 0 && best[0].Config.Block > 0 {
		best = Widen(evs, best, rtt, func(c limiter.Config) float64 { return c.Block.Seconds() },
			func(c limiter.Config, f float64) limiter.Config {
				c.Block = time.Duration(float64(c.Block) * f)
				return c
			})
	}
	return best
}

// fitRestarts returns a fixed window's best candidates with penalty=restart
// alone. A restart adds no parameter to the window (the same limit, window
// and alignment, only a rule for when the window ends), so it is weighed
// against the plain fit decision for decision — unlike a block length or a
// phase, which buy ties. A run the probe's knocking kept shut is where the
// plain fit bends its window to explain the lockout and misses by one.
func fitRestarts(evs []observation.Event, h Hypotheses, plain []Candidate, rtt time.Duration) []Candidate {
	return FitFamily(evs, restartConfigs(penaltySeeds(h, plain)), rtt)
}

// penaltySeeds are the plain fit's best and, for a windowed family, the
// burst's capacities on the usual windows: the plain fit's window and limit
// bent to explain lockouts they cannot.
func penaltySeeds(h Hypotheses, plain []Candidate) []Candidate {
	if len(plain) == 0 {
		return nil
	}
	if plain[0].Config.Window == 0 {
		return plain[:1]
	}
	seeds := SeedsOf(plain)
	for _, l := range h.capacities {
		for _, w := range commonWindows {
			c := seeds[0].Config
			c.Limit, c.Window = l, w
			seeds = append(seeds, Candidate{Config: c})
		}
	}
	return seeds
}

// restartConfigs are the fixed-window seeds with penalty=restart, on the
// wall grid and on the first request's.
func restartConfigs(seeds []Candidate) []limiter.Config {
	var cfgs []limiter.Config
	for _, s := range seeds {
		if s.Config.Algo != limiter.FixedWindow {
			continue
		}
		for _, align := range []string{limiter.AlignWall, limiter.AlignFirst} {
			c := s.Config
			c.Penalty, c.Align = limiter.PenaltyRestart, align
			cfgs = append(cfgs, c)
		}
	}
	return cfgs
}

// BlockCandidates are block lengths the run suggests: just under each of
// its longest lockouts (from a rejection run's first rejection to the
// admission that ended it), and the common periods up to the longest.
func BlockCandidates(evs []observation.Event) []time.Duration {
	var locks []time.Duration
	first := -1
	for i := range evs {
		switch {
		case !evs[i].Admitted && first < 0:
			first = i
		case evs[i].Admitted && first >= 0:
			locks = append(locks, evs[i].At.Sub(evs[first].At))
			first = -1
		}
	}
	sort.Slice(locks, func(i, j int) bool { return locks[i] > locks[j] })
	// One lockout is any behaviour that changed once (a target that stopped
	// limiting): a block is a penalty only when it came back.
	if len(locks) < 2 || locks[1] < minBlock {
		return nil
	}
	const most = 3
	var out []time.Duration
	for _, l := range locks[:min(len(locks), most)] {
		for _, s := range blockSteps {
			if d := time.Duration(float64(l) * (1 - s)).Round(time.Millisecond); d > 0 && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	if len(locks) > 0 {
		for _, d := range commonBlocks {
			if d <= locks[0]+locks[0]/10 && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}
