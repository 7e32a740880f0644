package fit

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Two limits on one key (limiter.Tiers): two nginx zones that must both
// admit, or a steady limit with a burst pool beside it. No single family
// explains such a run: the burst shows the smaller capacity (all must
// admit) or the sum of both (either admits), and the trace shows two
// regimes — the first tier's refill, which stops when the second tier is
// spent (a silence), or is interrupted by the pool's return (a clump). The
// search runs whenever a decision is unexplained, and it is seeded rather
// than exhaustive: the first tier by single fits of the early part of the
// run (the trace's first seconds, up to the first silence or clump), the
// second by what was admitted in each window up to the silence, the
// silence's length and the wall windows a boundary of which ended it; a
// pool's capacity is what the burst admitted beyond the primary's. The
// best compositions are refined one tier at a time and widened, so each
// reported ± is what the run pins.

const (
	// tiersGapFactor: an admission that follows a gap this many times the
	// early admissions' median spacing starts a new regime.
	tiersGapFactor = 3
	// tiersMinGap: shorter gaps are the first tier's own refill.
	tiersMinGap = 300 * time.Millisecond
	// tiersSeeds bounds the early fits a second tier is searched with.
	tiersSeeds = 3
	// tiersPrimaryCaps bounds the capacities a pool's primary is tried at.
	tiersPrimaryCaps = 8
	// tiersSpacingGaps is how many of the first gaps between admissions
	// after the burst give the first tier's spacing.
	tiersSpacingGaps = 3
	// TiersSeedSpan is how much of the trace after the burst the first
	// tier is fitted on; the plan's trace lasts at least this
	// (probe/plan's continuousSpan).
	TiersSeedSpan = 2 * time.Second
	// tiersMaxEvents bounds the runs searched: the search's replays grow
	// with the run, and a run this long came from escalating bursts and a
	// sustained phase (a large capacity), where the plan's own tie
	// splitting has already spent seconds fitting; its inference must not
	// take much longer for a search seeded by a trace it hardly has.
	tiersMaxEvents = 1000
	// tiersLimitSpread is how far either side of the count admitted before
	// the silence the second tier's capacity is tried.
	tiersLimitSpread = 3
)

// tierEarlyFamilies are the families a first tier is seeded from.
var tierEarlyFamilies = []string{limiter.TokenBucket, limiter.LeakyShaping, limiter.FixedWindow, limiter.SlidingLog}

// FitTiers returns the best two-tier compositions (all tied), or nil.
func FitTiers(evs []observation.Event, h Hypotheses, rtt time.Duration) []Candidate {
	if len(evs) > tiersMaxEvents {
		return nil
	}
	r := earlyRegime(evs)
	if r.end < 2 || r.burstAdmitted < 2 {
		return nil
	}
	variants, seeds := earlySeeds(evs[:r.seedEnd], r, h, rtt)
	if len(variants) == 0 {
		return nil
	}
	windows, wallWs := tierWindows(evs, r)
	var cfgs []limiter.Config
	for _, v := range variants {
		cfgs = append(cfgs, allCandidates(v, evs, r, windows, wallWs)...)
		cfgs = append(cfgs, zonePairs(v)...)
		cfgs = append(cfgs, eitherCandidates(v, windows, wallWs)...)
	}
	cfgs = append(cfgs, windowPoolCandidates(evs, r, windows, wallWs)...)
	cfgs = withCountingTiers(cfgs)
	best := FitFamily(evs, cfgs, rtt)
	if len(best) == 0 {
		return nil
	}
	// Refine the first tier (every seed, capacity ±1, rate ±3% in 1%
	// steps) with the best second tiers, then the second tier (capacity
	// ±1, window ±2% in 0.5% steps) with the best first tiers.
	best = refineTiers(evs, best, rtt, func(c limiter.Config) []limiter.Config {
		firsts := []limiter.Tier{c.Tiers[0]}
		for _, s := range seeds {
			t := limiter.TierOf(s)
			setCapacity(&t, capacity(c.Tiers[0]))
			firsts = append(firsts, t)
		}
		var out []limiter.Config
		for _, f := range firsts {
			for d := -1; d <= 1; d++ {
				for k := -3; k <= 3; k++ {
					t := f
					setCapacity(&t, capacity(f)+d)
					if t.Rate == 0 && k != 0 {
						continue
					}
					t.Rate *= 1 + float64(k)*0.01
					n := c
					n.Tiers[0] = t
					out = append(out, n)
				}
			}
		}
		return out
	})
	best = refineTiers(evs, best, rtt, func(c limiter.Config) []limiter.Config {
		var out []limiter.Config
		for d := -1; d <= 1; d++ {
			for k := -windowSteps; k <= windowSteps; k++ {
				s := c.Tiers[1]
				setCapacity(&s, capacity(s)+d)
				switch {
				case s.Algo == limiter.TokenBucket || s.Algo == limiter.LeakyShaping:
					s.Rate *= 1 + float64(k)*windowStep
				case s.Algo == limiter.FixedWindow && s.Align == limiter.AlignWall:
					if k != 0 {
						continue
					}
				default:
					s.Window = time.Duration(float64(s.Window) * (1 + float64(k)*windowStep)).Round(windowResolution)
				}
				n := c
				n.Tiers[1] = s
				out = append(out, n)
			}
		}
		return out
	})
	return widenTiers(evs, simplestTiers(best), rtt)
}

// widenTiers extends the tied compositions to every value of each tier's
// capacity (in steps of one) and rate or window (in 0.5% steps, up to 10%)
// that explains the run as well, so the reported ± is the interval the
// run pins each parameter to, not the grid's ties.
func widenTiers(evs []observation.Event, best []Candidate, rtt time.Duration) []Candidate {
	if len(best) == 0 {
		return best
	}
	m := best[0].Mismatches
	type param struct {
		get func(limiter.Tier) float64
		set func(*limiter.Tier, int) bool // the k-th step from the value; false: not a parameter of this tier
		n   int
	}
	params := []param{
		{func(t limiter.Tier) float64 { return float64(capacity(t)) }, func(t *limiter.Tier, k int) bool {
			if capacity(*t)+k < 1 {
				return false
			}
			setCapacity(t, capacity(*t)+k)
			return true
		}, 2 * capacity(best[0].Config.Tiers[1])},
		{func(t limiter.Tier) float64 { return t.Rate + t.Window.Seconds() }, func(t *limiter.Tier, k int) bool {
			f := 1 + float64(k)*0.005
			switch {
			case t.Rate > 0:
				t.Rate *= f
			case t.Algo == limiter.FixedWindow && t.Align == limiter.AlignWall:
				return false // a wall grid's window is exact (wallWindow)
			default:
				t.Window = time.Duration(float64(t.Window) * f).Round(windowResolution)
			}
			return true
		}, 20},
	}
	for i := range 2 {
		for _, p := range params {
			for _, dir := range []int{-1, 1} {
				from := best[0]
				for _, c := range best {
					if float64(dir)*(p.get(c.Config.Tiers[i])-p.get(from.Config.Tiers[i])) > 0 {
						from = c
					}
				}
				for k := 1; k <= p.n; k++ {
					c := from.Config
					if !p.set(&c.Tiers[i], dir*k) || c.Validate() != nil {
						break
					}
					got := FitFamily(evs, []limiter.Config{c}, rtt)
					if len(got) == 0 || got[0].Mismatches > m {
						break
					}
					best = append(best, got[0])
				}
			}
		}
	}
	return best
}

// tiersRefineFrom is how many distinct tied compositions a refinement
// starts from.
const tiersRefineFrom = 3

// refineTiers replays the variations of the first few best candidates and
// keeps every composition within noise (equivalenceSlack) of the best seen:
// a late answer on a loaded machine can cost the true composition a
// decision against a look-alike (a first-aligned window that fits one
// boundary as well as the wall grid), and simplestTiers must still see it.
func refineTiers(evs []observation.Event, best []Candidate, rtt time.Duration, vary func(limiter.Config) []limiter.Config) []Candidate {
	var cfgs []limiter.Config
	seen := map[limiter.Config]bool{}
	var from []limiter.Config // distinct: one composition at three offsets is one start
	for _, b := range best {
		if len(from) == tiersRefineFrom {
			break
		}
		if !slices.Contains(from, b.Config) {
			from = append(from, b.Config)
		}
	}
	for _, b := range from {
		for _, c := range vary(b) {
			if !seen[c] && c.Validate() == nil {
				seen[c] = true
				cfgs = append(cfgs, c)
			}
		}
	}
	margin := EquivalenceSlack(len(evs))
	all := append(append([]Candidate(nil), best...), fitFamilyWithin(evs, cfgs, rtt, margin)...)
	if len(all) == 0 {
		return best
	}
	slices.SortStableFunc(all, func(a, b Candidate) int { return a.Mismatches - b.Mismatches })
	type key struct {
		c   limiter.Config
		off time.Duration
	}
	kept, top := map[key]bool{}, all[0].Mismatches
	return slices.DeleteFunc(all, func(c Candidate) bool {
		k := key{c.Config, c.Offset}
		drop := c.Mismatches > top+margin || kept[k]
		kept[k] = true
		return drop
	})
}

// regime is the early part of a run: the events up to the last admission
// before the admissions after the last burst first fell silent.
type regime struct {
	end           int       // events in the early part
	seedEnd       int       // events the first tier is fitted on: the early part's first tiersSeedSpan after the burst
	admitted      int       // admitted in it, from the run's start
	burstAdmitted int       // admitted by the last burst
	burstAt       time.Time // when the last burst arrived
	firstAt       time.Time // the run's first admission
	lockEnd       time.Time // the first admission after the silence; zero if none
	lockFrom      time.Time // the decision just before it: a boundary that ended the silence lies between the two
	rates         []float64 // the refill the early admissions after the burst show
}

// earlyRegime finds where the admissions after the last burst first fall
// silent (a gap of tiersGapFactor times their median spacing, at least
// tiersMinGap). Without a silence the early part is the whole run.
func earlyRegime(evs []observation.Event) regime {
	var r regime
	last := ""
	for _, e := range evs {
		if e.Burst != "" {
			last = e.Burst
		}
	}
	start := 0
	for i, e := range evs {
		if e.Admitted && r.firstAt.IsZero() {
			r.firstAt = e.At
		}
		if e.Burst == last && last != "" {
			start = i + 1
			r.burstAt = e.At
			if e.Admitted {
				r.burstAdmitted++
			}
		}
	}
	var adm []int
	for i := start; i < len(evs); i++ {
		if evs[i].Admitted {
			adm = append(adm, i)
		}
	}
	r.end = len(evs)
	early := adm
	if len(adm) >= 3 {
		// The first tier's spacing: the median of the first few gaps, few
		// enough that a pool coming back soon after does not set it.
		var gaps []time.Duration
		for k := 1; k < len(adm) && k <= tiersSpacingGaps; k++ {
			gaps = append(gaps, evs[adm[k]].At.Sub(evs[adm[k-1]].At))
		}
		sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
		m := gaps[len(gaps)/2]
		r.rates = append(r.rates, 1/m.Seconds())
		gap := func(k int) time.Duration { return evs[adm[k]].At.Sub(evs[adm[k-1]].At) }
		for k := 1; k < len(adm); k++ {
			switch {
			case gap(k) > max(tiersGapFactor*m, tiersMinGap):
				// A silence: the second tier is spent.
				r.end, r.lockEnd, r.lockFrom, early = adm[k-1]+1, evs[adm[k]].At, evs[max(adm[k]-1, 0)].At, adm[:k]
			case tiersGapFactor*gap(k) < m:
				// A clump: capacity came back at once (a pool's
				// boundary) where the first tier gives it back singly.
				// Its first admission may be the first tier's: the
				// boundary lies before the second.
				r.end, r.lockEnd, r.lockFrom, early = adm[k-1], evs[adm[k]].At, evs[max(adm[k-1]-1, 0)].At, adm[:k-1]
			default:
				continue
			}
			break
		}
	}
	for _, e := range evs[:r.end] {
		if e.Admitted {
			r.admitted++
		}
	}
	// The first tier is fitted on the early part's first seconds only: a
	// change of regime the silence or clump rules missed (a pool coming
	// back under requests spaced wider than a clump) is then mostly
	// outside it.
	r.seedEnd = r.end
	for i := start; i < r.end; i++ {
		if evs[i].At.Sub(r.burstAt) > TiersSeedSpan {
			r.seedEnd = i
			break
		}
	}
	for len(early) > 0 && early[len(early)-1] >= r.seedEnd {
		early = early[:len(early)-1]
	}
	// The early refill: admissions after the burst per second, counted
	// from the burst and from the first of them.
	if n := len(early); n >= 2 {
		lastAt := evs[early[n-1]].At
		if d := lastAt.Sub(r.burstAt).Seconds(); d > 0 {
			r.rates = append(r.rates, float64(n)/d)
		}
		if d := lastAt.Sub(evs[early[0]].At).Seconds(); d > 0 {
			r.rates = append(r.rates, float64(n-1)/d)
		}
	}
	return r
}

// earlySeeds are the best single models of the early regime: a few, the
// best first, of the families a first tier may be, at about the burst's
// capacity and the early refill.
//
// variants are the best family's lowest, middle and highest tied
// candidates (by rate or window): the first tier's refill decides every
// later decision, so the search starts from each; others are the best of
// the other families that do as well.
func earlySeeds(evs []observation.Event, r regime, h Hypotheses, rtt time.Duration) (variants, others []limiter.Config) {
	var caps []int
	for d := -2; d <= 2; d++ {
		if c := r.burstAdmitted + d; c >= 1 {
			caps = append(caps, c)
		}
	}
	var rates []float64
	for _, est := range r.rates {
		for k := -6; k <= 6; k++ {
			rates = append(rates, est*(1+float64(k)*0.005), est*math.Pow(2, float64(k)/24))
		}
	}
	span := evs[len(evs)-1].At.Sub(r.burstAt)
	var windows []time.Duration
	for _, w := range append(append([]time.Duration(nil), commonWindows...), h.Windows...) {
		if w <= span && !slices.Contains(windows, w) {
			windows = append(windows, w)
		}
	}
	var fams [][]Candidate
	for _, family := range tierEarlyFamilies {
		var cfgs []limiter.Config
		for _, b := range caps {
			switch family {
			case limiter.TokenBucket, limiter.LeakyShaping:
				for _, rate := range rates {
					if family == limiter.TokenBucket {
						cfgs = append(cfgs, limiter.Config{Algo: family, Rate: rate, Burst: b})
						continue
					}
					for _, d := range h.delays {
						if b >= 2 && d < b-1 {
							cfgs = append(cfgs, limiter.Config{Algo: family, Rate: rate, Burst: b - 1, DelayAfter: d})
						}
					}
				}
			case limiter.FixedWindow, limiter.SlidingLog:
				for _, w := range windows {
					if family == limiter.SlidingLog {
						cfgs = append(cfgs, limiter.Config{Algo: family, Limit: b, Window: w},
							limiter.Config{Algo: family, Limit: b, Window: w, CountRejected: true})
						continue
					}
					if wallWindow(w) {
						cfgs = append(cfgs, limiter.Config{Algo: family, Limit: b, Window: w, Align: limiter.AlignWall})
					}
					cfgs = append(cfgs, limiter.Config{Algo: family, Limit: b, Window: w, Align: limiter.AlignFirst})
				}
			}
		}
		if best := FitFamily(evs, cfgs, rtt); len(best) > 0 {
			fams = append(fams, best)
		}
	}
	sort.SliceStable(fams, func(i, j int) bool { return fams[i][0].Mismatches < fams[j][0].Mismatches })
	for i, f := range fams {
		if i == tiersSeeds || f[0].Mismatches > fams[0][0].Mismatches+EquivalenceSlack(len(evs)) {
			break
		}
		if i == 0 {
			variants = spread(f)
			// The spacing's own estimate, when it ties: a long run pins
			// the first tier's rate to within a percent or so, finer than
			// the refinement's steps from the ends of the early tie.
			if c, ok := nearestRate(f, r.rates); ok && !slices.Contains(variants, c) {
				variants = append(variants, c)
			}
			continue
		}
		others = append(others, middle(f))
	}
	return variants, others
}

// spread is the lowest, middle and highest of tied candidates by rate or
// window (distinct ones).
func spread(cs []Candidate) []limiter.Config {
	s := append([]Candidate(nil), cs...)
	sort.SliceStable(s, func(i, j int) bool { return SizeOf(s[i].Config) < SizeOf(s[j].Config) })
	var out []limiter.Config
	for _, c := range []limiter.Config{s[0].Config, s[len(s)/2].Config, s[len(s)-1].Config} {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// nearestRate is the tied candidate whose rate is nearest the median of
// the estimates, if the candidates have a rate.
func nearestRate(cs []Candidate, estimates []float64) (limiter.Config, bool) {
	if len(estimates) == 0 || cs[0].Config.Rate == 0 {
		return limiter.Config{}, false
	}
	est := slices.Sorted(slices.Values(estimates))[len(estimates)/2]
	best := cs[0].Config
	for _, c := range cs {
		if math.Abs(c.Config.Rate-est) < math.Abs(best.Rate-est) {
			best = c.Config
		}
	}
	return best, true
}

// middle is the tied candidate in the middle of the range of its rate or
// window: a seed the refinement reaches the truth from either side.
func middle(cs []Candidate) limiter.Config {
	s := append([]Candidate(nil), cs...)
	sort.SliceStable(s, func(i, j int) bool { return SizeOf(s[i].Config) < SizeOf(s[j].Config) })
	return s[len(s)/2].Config
}

// tierWindows are the windows a second tier is tried at: the time from
// the run's first admission, and from the last burst, to the end of the
// silence (±2% in 1% steps, and the round windows nearest), and the
// common windows between half and twice those. wall are the round windows
// (the common ones and whole seconds up to twice the longest anchor) of
// which a boundary ends the silence: between the decision before it and
// the admission that ended it.
func tierWindows(evs []observation.Event, r regime) (ws, wall []time.Duration) {
	var anchors []time.Duration
	if !r.lockEnd.IsZero() {
		for _, from := range []time.Time{r.firstAt, r.burstAt} {
			if d := r.lockEnd.Sub(from); d > 0 {
				anchors = append(anchors, d)
			}
		}
	} else if len(evs) > 0 {
		// No silence: the pool's window is anywhere up to the run's length.
		anchors = append(anchors, evs[len(evs)-1].At.Sub(r.burstAt))
	}
	longest := time.Duration(0)
	for _, a := range anchors {
		longest = max(longest, a)
		for k := -2; k <= 2; k++ {
			ws = append(ws, time.Duration(float64(a)*(1+float64(k)*0.01)).Round(windowResolution))
		}
		for _, w := range []time.Duration{a.Truncate(wallUnit), a.Truncate(wallUnit) + wallUnit} {
			ws = append(ws, w)
		}
		for _, w := range commonWindows {
			if w >= a/2 && w <= 2*a {
				ws = append(ws, w)
			}
		}
	}
	roundWs := append([]time.Duration(nil), commonWindows...)
	for w := time.Second; w <= 2*longest; w += time.Second {
		roundWs = append(roundWs, w)
	}
	for _, w := range append(roundWs, ws...) {
		if !wallWindow(w) || w <= 0 {
			continue
		}
		// Without a silence any wall grid may be the pool's.
		if r.lockEnd.IsZero() || r.lockEnd.Add(tiersBoundarySlack).Truncate(w).After(r.lockFrom.Add(-tiersBoundarySlack)) {
			wall = append(wall, w)
		}
	}
	slices.Sort(ws)
	slices.Sort(wall)
	return slices.Compact(ws), slices.Compact(wall)
}

// tiersBoundarySlack is how far a wall boundary may lie outside the gap
// that ended a silence: the arrival's uncertainty on a loaded machine.
const tiersBoundarySlack = 5 * time.Millisecond

// simplestTiers keeps, of tied compositions, those of the simplest kind:
// the more common families first (familyOrder), two windows of one family
// before a window beside another, then a wall grid before a
// first-aligned one (a wall grid is searched at round windows only, so it
// has fewer windows to tie with by chance). The reported ranges are then
// one kind's, not a mixture.
func simplestTiers(cs []Candidate) []Candidate {
	rank := func(c limiter.Config) int {
		second := orderOf(c.Tiers[1].Algo)
		if a := c.Tiers[0].Algo; a == c.Tiers[1].Algo && isWindowFamily(a) {
			// Two windows of one family: one library's two limits (5
			// per second and 30 per 20 s), before a mixture.
			second = -1
		}
		r := (orderOf(c.Tiers[0].Algo)*len(familyOrder) + second) * 4
		for _, t := range c.Tiers {
			if t.Algo == limiter.FixedWindow && t.Align == limiter.AlignFirst {
				r++
			}
		}
		if c.TierMode == limiter.TiersEither {
			r += 2 // the nginx composition first
		}
		return r
	}
	kind := func(c limiter.Config) string {
		return c.TierMode + "/" + c.Tiers[0].Algo + "/" + c.Tiers[0].Align + "/" + c.Tiers[1].Algo + "/" + c.Tiers[1].Align
	}
	if len(cs) == 0 {
		return cs
	}
	best := cs[0]
	for _, c := range cs {
		if rank(c.Config) < rank(best.Config) {
			best = c
		}
	}
	var out []Candidate
	for _, c := range cs {
		if kind(c.Config) == kind(best.Config) {
			out = append(out, c)
		}
	}
	return out
}

// secondTiers are the slow tiers of capacity l tried at each window: a
// fixed window first-aligned, a sliding log and a bucket refilling l per
// window at ws, and a wall-aligned fixed window at wall.
func secondTiers(l int, ws, wall []time.Duration) []limiter.Tier {
	var out []limiter.Tier
	if l < 1 {
		return nil
	}
	for _, w := range wall {
		out = append(out, limiter.Tier{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignWall})
	}
	for _, w := range ws {
		out = append(out,
			limiter.Tier{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignFirst},
			limiter.Tier{Algo: limiter.SlidingLog, Limit: l, Window: w},
			limiter.Tier{Algo: limiter.TokenBucket, Rate: float64(l) / w.Seconds(), Burst: l})
	}
	return out
}

// allCandidates pair the early fit with a slow tier that the admissions
// before the silence spent: at each window, about the count admitted in
// that window up to the silence (the wall window holding it for a wall
// grid, the trailing window otherwise — a boundary may have passed in the
// early regime), and the count since the run's start.
func allCandidates(first limiter.Config, evs []observation.Event, r regime, windows, wallWs []time.Duration) []limiter.Config {
	var out []limiter.Config
	pair := func(s limiter.Tier) {
		out = append(out, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{limiter.TierOf(first), s}})
	}
	last := r.end - 1 // the last admission before the silence
	spent := func(from time.Time) int {
		n := 0
		for _, e := range evs[:r.end] {
			if e.Admitted && !e.At.Before(from) {
				n++
			}
		}
		return n
	}
	for _, w := range windows {
		counts := []int{r.admitted}
		if !r.lockEnd.IsZero() && last >= 0 {
			counts = append(counts, spent(evs[last].At.Add(-w).Add(time.Nanosecond)))
		}
		for _, n := range counts {
			for d := -tiersLimitSpread; d <= tiersLimitSpread; d++ {
				for _, s := range secondTiers(n+d, []time.Duration{w}, nil) {
					pair(s)
				}
			}
		}
	}
	for _, w := range wallWs {
		spentW := spent(evs[max(last, 0)].At.Truncate(w))
		for d := -tiersLimitSpread; d <= tiersLimitSpread; d++ {
			if l := spentW + d; l >= 1 {
				pair(limiter.Tier{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignWall})
			}
		}
	}
	return out
}

// zonePairs are two buckets of the early fit's family that must both
// admit, as two nginx zones on one location: a faster one with the early
// capacity (it rejects a burst first) and one at the early rate with a
// deeper queue (it paces and, once full, rejects). The early fit sees the
// tight capacity and the slow rate together; the trace tells which is
// which.
func zonePairs(first limiter.Config) []limiter.Config {
	if first.Algo != limiter.TokenBucket && first.Algo != limiter.LeakyShaping {
		return nil
	}
	t := limiter.TierOf(first)
	c := capacity(t)
	var out []limiter.Config
	for _, f := range zoneRateFactors {
		fast := t
		fast.Rate *= f
		for deep := c + 1; deep <= zoneDepth*c; deep += max(1, c/2) {
			slow := t
			setCapacity(&slow, deep)
			out = append(out, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{fast, slow}})
		}
	}
	return out
}

// zoneRateFactors are how much faster than the early rate the tight zone
// is tried at, and zoneDepth how many times the early capacity the deep
// one's reaches.
var zoneRateFactors = []float64{1.5, 2, 2.5, 3, 4, 5}

const zoneDepth = 6

// eitherCandidates split the early fit's capacity between a primary of the
// early fit's family and refill and a pool that returns per window.
func eitherCandidates(first limiter.Config, windows, wallWs []time.Duration) []limiter.Config {
	t := limiter.TierOf(first)
	total := capacity(t)
	var caps []int
	for b := 1; b < total; b++ {
		caps = append(caps, b)
	}
	if len(caps) > tiersPrimaryCaps {
		// The small capacities one by one, the rest spread: the
		// refinement moves the best by one.
		spread := caps[tiersPrimaryCaps/2:]
		caps = caps[:tiersPrimaryCaps/2]
		for k := 1; k <= tiersPrimaryCaps/2; k++ {
			caps = append(caps, spread[k*(len(spread)-1)/(tiersPrimaryCaps/2)])
		}
	}
	var out []limiter.Config
	for _, b := range caps {
		p := t
		setCapacity(&p, b)
		for d := -1; d <= 1; d++ {
			for _, s := range secondTiers(total-b+d, windows, wallWs) {
				out = append(out, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{p, s}})
			}
		}
	}
	return out
}

// withCountingTiers adds to cfgs, for each composition with a sliding
// tier, the same composition whose sliding tiers count denied attempts
// (a Redis sliding window beside a burst pool, both counting every
// attempt). Only there does counting show: a fixed window forgets its
// denied attempts at its boundary, and in the either mode the pool is
// asked only once the primary denies.
func withCountingTiers(cfgs []limiter.Config) []limiter.Config {
	out := cfgs
	for _, c := range cfgs {
		counting, any := c, false
		for i, t := range c.Tiers {
			if t.Algo == limiter.SlidingLog || t.Algo == limiter.SlidingCounter {
				counting.Tiers[i].CountRejected, any = true, true
			}
		}
		if any {
			out = append(out, counting)
		}
	}
	return out
}

// capacity is what a tier admits at once after idle.
func capacity(t limiter.Tier) int { return t.Config(time.Time{}).Capacity() }

// setCapacity makes t admit c at once after idle.
func setCapacity(t *limiter.Tier, c int) {
	c = max(c, 1)
	switch t.Algo {
	case limiter.TokenBucket:
		t.Burst = c
	case limiter.LeakyShaping:
		t.Burst = c - 1
		t.DelayAfter = min(t.DelayAfter, max(t.Burst-1, 0))
	default:
		t.Limit = c
	}
}

// tiersOnWall reports whether a composition depends on absolute time: a tier
// on the wall grid (replayOffsets).
func tiersOnWall(c limiter.Config) bool {
	for _, t := range c.Tiers {
		if onWallGrid(t.Config(c.Origin)) {
			return true
		}
	}
	return false
}

// TierSpan is a tier's reported value: the middle of the tied candidates'
// range, ± half its width.
func TierSpan(cs []Candidate, i int, get func(limiter.Tier) float64) (mid, err float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		v := get(c.Config.Tiers[i])
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return (lo + hi) / 2, (hi - lo) / 2
}

// hiddenPoolWindow is the window of a hypothetical burst pool that has not
// come back within the probe: longer than any probe's budget.
const hiddenPoolWindow = 10 * time.Minute

// IsHiddenPool reports whether c is a composition HiddenPools made.
func IsHiddenPool(c limiter.Config) bool {
	return c.Algo == limiter.Tiers && c.TierMode == limiter.TiersEither && c.Tiers[1].Window == hiddenPoolWindow
}

// HiddenPools are the compositions a token bucket's fit cannot tell from
// itself until capacity has had time to come back beyond a few tokens: its
// capacity split into a primary of half at the same rate and a burst pool
// of the rest that has not returned. A silence long enough for the primary
// to refill past half, then a volley, separates them (probe/plan's
// split.go): the bucket gives back more than half, the composition only
// the primary.
func HiddenPools(models []Candidate) []Candidate {
	for _, m := range models {
		c := m.Config
		if c.Algo != limiter.TokenBucket || c.Burst < 4 || c.Block > 0 {
			continue
		}
		// A bucket refilled in clumps keeps its fills: the primary is
		// the same bucket at half the capacity, on the same grid.
		primary := limiter.Tier{Algo: limiter.TokenBucket, Rate: c.Rate, Burst: c.Burst / 2, RefillEvery: c.RefillEvery}
		pool := limiter.Tier{Algo: limiter.FixedWindow, Limit: c.Burst - c.Burst/2, Window: hiddenPoolWindow, Align: limiter.AlignFirst}
		return []Candidate{{Config: limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{primary, pool}, Origin: c.Origin}, Offset: m.Offset}}
	}
	return nil
}
