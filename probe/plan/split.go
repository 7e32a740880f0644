package plan

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// Splitting ties: when several models explain the run so far equally well
// (a counting sliding counter and a fixed window of an odd length, a grid
// anchored at an unknown phase and one on the wall clock), more of the
// same experiment rarely separates them. The plan simulates each tied
// model on a few proposed schedules — the replay runs a model over
// hypothetical requests as well as observed ones — and sends the one on
// which they disagree most for the time it costs, within the budget.
const (
	// splitRounds bounds the experiments: each is chosen from a fresh fit.
	splitRounds = 3
	// splitMinDisagreement: a schedule on which the models differ on fewer
	// requests than this tells nothing a loaded machine's noise could not.
	splitMinDisagreement = 2
	// splitMaxModels bounds the simulations per round.
	splitMaxModels = 8
	// splitVolleyGap spaces a volley's requests, so the server sees them in
	// the order the simulation does.
	splitVolleyGap = 3 * time.Millisecond
	splitSingleGap = 200 * time.Millisecond
	splitSingles   = 10
	splitLead      = 50 * time.Millisecond
)

// splitKnockGaps space the knocking trains a proposed schedule may be, for
// splitKnockSpan: 40, 20 and 10 requests per second.
var splitKnockGaps = []time.Duration{25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

const splitKnockSpan = 2 * time.Second

// splitSilences are the quiet periods a proposed schedule starts with.
var splitSilences = []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// tieFit is a fit of the run so far for the deciding experiments: the tied
// models, and how long finding them took.
type tieFit struct {
	models []fit.Candidate
	took   time.Duration
}

// pendingFit is a fit running in the background, read by whichever phase
// needs it first and kept for the others.
type pendingFit struct {
	ch  <-chan tieFit
	fit *tieFit
}

// await returns the fit, or false when ctx ends or until fires first.
func (f *pendingFit) await(ctx context.Context, until <-chan time.Time) (tieFit, bool) {
	if f.fit != nil {
		return *f.fit, true
	}
	select {
	case fit := <-f.ch:
		f.fit = &fit
		return fit, true
	case <-until:
	case <-ctx.Done():
	}
	return tieFit{}, false
}

// fitTies finds the tied models of the run so far in the background; the
// fit is abandoned when ctx ends (the plan's end: nobody will read it, and
// the final inference must not share the CPUs with it — a probe of a limit
// per connection, whose first fit saw the run as one client's, spent 14 s
// inferring beside it).
func (p *planner) fitTies(ctx context.Context) <-chan tieFit {
	p.e.Wait()
	obs := p.snapshot()
	out := make(chan tieFit, 1)
	stop := new(atomic.Bool)
	context.AfterFunc(ctx, func() { stop.Store(true) })
	go func() {
		took := p.e.Stopwatch()
		models := tiedModels(obs, stop, p.opt.Fits)
		out <- tieFit{models, took()}
	}()
	return out
}

// splitTies runs up to splitRounds deciding experiments, the first between
// the models of first.
func (p *planner) splitTies(ctx context.Context, first *pendingFit) {
	if p.snapshot().PerConnection() {
		return // no experiment to choose (tiedModels): the first fit is not awaited
	}
	fit, ok := first.await(ctx, nil)
	if !ok {
		return
	}
	for round := 0; round < splitRounds && ctx.Err() == nil; round++ {
		p.e.Wait()
		if round > 0 {
			if kept, ok := afterExperiment(p.snapshot(), fit.models); ok {
				fit.models = kept
			} else {
				// Another round only if the fit that chooses it leaves
				// time to send within the probe's natural length (the
				// last round's models say how long): waiting for a fit
				// whose experiment could not be sent made a probe of a
				// 10 s window take 30.2 s.
				end, _ := p.naturalEnd(fit.models)
				if p.e.Now()+2*fit.took > min(p.deadline, end-answerGrace) {
					return
				}
				fit = <-p.fitTies(ctx)
			}
		}
		obs := p.snapshot()
		if obs.PerConnection() {
			return // the first fit ran before the scope trials found it (tiedModels)
		}
		if round == 0 {
			// The first fit saw the run before the scope trials and the
			// silent waits: a model what they showed refutes needs no
			// experiment.
			fit.models = withoutRefutedPool(obs, stillTied(obs, fit.models))
		}
		if len(fit.models) < 2 {
			return
		}
		sched, score := p.bestSplit(obs, fit.models)
		if score < splitMinDisagreement {
			if round == 0 {
				// Said of the run so far: the phases after the trace
				// may still tell them apart in the final inference.
				p.note("no deciding experiment: after the trace %d models explained the run about equally well, and no schedule within the budget separates them", len(fit.models))
			}
			return
		}
		begin := p.e.Now()
		p.e.Schedule(ctx, len(sched), func(i int) attack.Shot {
			return attack.Shot{At: begin + sched[i], Phase: observation.PhaseSplit}
		})
	}
	p.e.Wait()
}

// contention is how many more decisions than the best's (best) a model may
// miss and still be in contention for a deciding experiment: noise
// (slack), or as many as leave the best's margin too thin for a sure
// verdict — the confidence being 1 − (best+1)/(runner-up+1), a runner-up
// within sureMargin·(best+1) − 1 leaves it under 0.9. A loaded CI machine
// made an honest bucket of 10/s burst 10 miss 2 of 160 decisions and a
// sliding counter 4, and the clumps of 5 every 0.5 s of juju's interval
// bucket, the first 0.2 s after the burst, were missed by 3 of 203 by a
// sliding counter that counts denied attempts at 20 per 0.2 s — the
// trace's own pace, so its every decision sits on its limit. Neither was a
// tie by noise, so no experiment ran, and the verdicts stayed at 0.35 and
// 0.75 with most of the budget unspent (in one CI run of the juju bucket
// the counting sliding log won, at 0.78). One knocking train or a volley
// after a silence separates them by dozens of decisions.
func contention(best, slack int) int { return max(slack, (sureMargin-1)*(best+1)) }

// nearTie is how many more decisions than the best's a model may miss and
// still be tied with it in the narrow sense: within noise, or leaving the
// best a verdict of at most 0.5 (a runner-up within 2·best+1).
func nearTie(best, slack int) int { return max(slack, best+1) }

// sureMargin: a verdict of confidence 0.9 needs a runner-up missing
// sureMargin times as many decisions (each plus one) as the best.
const sureMargin = 10

// stillTied is the models that still explain obs within contention of
// the best of them.
func stillTied(obs *observation.Observation, models []fit.Candidate) []fit.Candidate {
	evs := obs.Events()
	unc := observation.DecisionUncertainty(obs.RTT)
	mis := make([]int, len(models))
	best := math.MaxInt32
	for i, m := range models {
		mis[i] = fit.ReplayEvents(evs, m.Config, m.Offset, unc, math.MaxInt32, nil)
		best = min(best, mis[i])
	}
	var out []fit.Candidate
	for i, m := range models {
		if mis[i] <= best+contention(best, fit.EquivalenceSlack(len(evs))) {
			m.Mismatches = mis[i]
			out = append(out, m)
		}
	}
	return out
}

// afterExperiment is the models of the last round that a deciding
// experiment left in contention, when the best of them explains the run
// with it as well as it did before: a model's misses only grow as the run
// does, so nothing the last fit left out of contention can have come
// into it, and the next round chooses between these without a fresh fit
// (a fit of the whole model space costs seconds: the three rounds of a
// simulated probe of nginx delay=2 took 18.3 s of its 22.3 s of CPU). When
// the experiment refuted the
// best (ok false), a fresh fit looks for what explains the run now.
func afterExperiment(obs *observation.Observation, models []fit.Candidate) (tied []fit.Candidate, ok bool) {
	if len(models) == 0 {
		return nil, false
	}
	best := 0
	for i, m := range models {
		if m.Mismatches < models[best].Mismatches {
			best = i
		}
	}
	unc := observation.DecisionUncertainty(obs.RTT)
	evs := obs.Events()
	if fit.ReplayEvents(evs, models[best].Config, models[best].Offset, unc, math.MaxInt32, nil) > models[best].Mismatches {
		return nil, false
	}
	return stillTied(obs, models), true
}

// snapshot is the observation so far, as Run builds it at the end.
func (p *planner) snapshot() *observation.Observation {
	obs := &observation.Observation{Start: p.e.Start()}
	for _, r := range p.col.Results() {
		obs.Results = append(obs.Results, *r)
	}
	obs.Results = observation.SortedResults(obs.Results)
	obs.RTT = observation.MinRTT(obs.Results)
	return obs
}

// naturalEnd is when a probe deciding between models is over: it costs
// at most the natural span (NaturalSpan) of the largest window in
// contention, plus the quiet periods a counting limiter forces — only when
// the models tied within noise of the best (nearTie) are two or more and
// all need them (a plain limiter's probe does not pay for the quiet
// periods of a counting twin, nor a clear best for those of its rivals
// whose margin is only thin), and then it may take the budget. A counting
// sliding counter of 50 per minute, named at 0.88 with rivals 2 to 12
// decisions behind, spent 70 s more on a silence its rivals asked for,
// 219 s in all, past its natural 130 s.
//
// knock says whether steady knocking asks them anything: whether denied
// attempts keep the key shut, only when the models answer it differently.
// Otherwise its many decisions near a limit (a sliding counter's estimate
// crossing it) split models by timing noise, not by what they are.
func (p *planner) naturalEnd(models []fit.Candidate) (end time.Duration, knock bool) {
	best := math.MaxInt
	for _, m := range models {
		best = min(best, m.Mismatches)
	}
	slack := fit.EquivalenceSlack(p.col.Len())
	end, near, nearCounting, allCounting, anyCounting := naturalMin, 0, true, true, false
	for _, m := range models {
		end = max(end, NaturalSpan(longestWindow(m.Config)))
		c := forcesQuiet(m.Config)
		allCounting, anyCounting = allCounting && c, anyCounting || c
		if m.Mismatches <= best+nearTie(best, slack) {
			near, nearCounting = near+1, nearCounting && c
		}
	}
	if nearCounting && near > 1 {
		end = p.deadline
	}
	return end, anyCounting && !allCounting
}

// longestWindow is a model's window, or the longest of its tiers': a burst
// pool beside a bucket has its window in its tier.
func longestWindow(c limiter.Config) time.Duration {
	w := c.Window
	if c.Algo == limiter.Tiers {
		for _, t := range c.Tiers {
			w = max(w, t.Window)
		}
	}
	return w
}

// forcesQuiet says whether a model keeps a knocking client shut: it counts
// denied attempts, blocks, or restarts its window — or one of its tiers
// does.
func forcesQuiet(c limiter.Config) bool {
	if c.Algo == limiter.Tiers {
		for _, t := range c.Tiers {
			if forcesQuiet(t.Config(c.Origin)) {
				return true
			}
		}
		return false
	}
	return c.CountRejected || c.Block > 0 || c.Restarts()
}

// bestSplit proposes schedules (offsets from now) — a silence, then a
// volley of a little more than the capacity (or two, each after the same
// silence), or single requests; or two seconds of steady knocking — and
// returns the one with the most disagreement among the models, counted up
// to what a sure verdict needs (settling), and of those the one with the
// most per second. Ranked by the rate alone, a volley sent at once that
// two models answer differently on 2 requests beat two volleys a second
// apart that split them on 14: three rounds of the cheap kind left an
// honest bucket's stall-made misses standing against a refitted sliding
// counter's, at confidence 0.36.
func (p *planner) bestSplit(obs *observation.Observation, models []fit.Candidate) ([]time.Duration, int) {
	capacity := max(p.capacity(), 1)
	volley := min(capacity+2, 60)
	var best []time.Duration
	bestScore, bestValue, bestRate := 0, 0, 0.0
	now := p.e.Now() + splitLead
	bar, knock := p.naturalEnd(models)
	enough := settling(models)
	// A hidden pool still tied with the best (tiedModels) is asked about
	// first: a schedule that sets it apart wins over any that does not —
	// the others tied a bucket of 41 with the windows' extremes, and two
	// volleys 2 s apart left the pool, which a silence of 5 s refutes,
	// standing at 0.94. Not one the run set apart already, in contention
	// by the margin alone (withoutRefutedPool).
	pool := slices.IndexFunc(models, func(m fit.Candidate) bool { return fit.IsHiddenPool(m.Config) })
	if pool >= 0 && models[pool].Mismatches > bestOf(models)+fit.EquivalenceSlack(len(obs.Results)) {
		pool = -1
	}
	// consider scores a proposed schedule: its disagreements, up to
	// enough, and their rate per second of what it costs (its length and
	// half a second to read the answers).
	consider := func(sched []time.Duration) {
		end := p.e.Now() + sched[len(sched)-1]
		if end > p.deadline || end > bar-answerGrace || len(sched) > p.left()-traceMinReserve {
			return
		}
		score, apart := disagreement(obs, models, now-splitLead, sched)
		value := min(score, enough)
		rate := float64(score) / (sched[len(sched)-1] + 500*time.Millisecond).Seconds()
		if pool >= 0 && apart[pool] >= splitMinDisagreement {
			value += enough // asks the pool: before any schedule that does not
		}
		if score >= splitMinDisagreement && (value > bestValue || value == bestValue && rate > bestRate) {
			best, bestScore, bestValue, bestRate = sched, score, value, rate
		}
	}
	volleyLen := time.Duration(volley) * splitVolleyGap
	silences := append(slices.Clone(splitSilences), reopenSilences(obs, models, now-splitLead, volleyLen)...)
	for _, silence := range silences {
		consider(volleyAfter(silence, volley))
		consider(singlesAfter(silence))
		if silence > 0 {
			consider(twoVolleysAfter(silence, volley))
		}
	}
	// Steady knocking faster than the capacity returns: a limiter that
	// counts denied attempts (or restarts its window on them) stays shut,
	// one that refills does not.
	for _, gap := range splitKnockGaps {
		if !knock {
			break
		}
		consider(knockTrain(gap))
	}
	return best, bestScore
}

// withoutRefutedPool is models less a hidden pool the run set apart from
// the best after the first fit (a volley after a silent wait gave more
// than the primary): by the margin alone it stays in contention, and it
// made the experiment on an honest bucket of 10/s one its stalls missed
// 4 decisions of, at confidence 0.41.
func withoutRefutedPool(obs *observation.Observation, models []fit.Candidate) []fit.Candidate {
	best, slack := bestOf(models), fit.EquivalenceSlack(len(obs.Results))
	return slices.DeleteFunc(models, func(m fit.Candidate) bool {
		return fit.IsHiddenPool(m.Config) && m.Mismatches > best+slack
	})
}

// bestOf is the fewest decisions any of models misses.
func bestOf(models []fit.Candidate) int {
	best := math.MaxInt
	for _, m := range models {
		best = min(best, m.Mismatches)
	}
	return best
}

// settling is how many decisions a deciding experiment must add to a
// rival's mismatches for the best of models to be named with confidence
// 0.9 (contention's margin), were the rival as good as the best so far.
func settling(models []fit.Candidate) int {
	best := bestOf(models)
	if best == math.MaxInt {
		return splitMinDisagreement
	}
	return max(splitMinDisagreement, (sureMargin-1)*(best+1))
}

// volleyAfter is a volley of n requests after a silence.
func volleyAfter(silence time.Duration, n int) []time.Duration {
	var sched []time.Duration
	for i := range n {
		sched = append(sched, splitLead+silence+time.Duration(i)*splitVolleyGap)
	}
	return sched
}

// singlesAfter is splitSingles spaced requests after a silence.
func singlesAfter(silence time.Duration) []time.Duration {
	var sched []time.Duration
	for i := range splitSingles {
		sched = append(sched, splitLead+silence+time.Duration(i)*splitSingleGap)
	}
	return sched
}

// twoVolleysAfter is two volleys of n the same silence apart: a pool that
// came back for the first (its boundary fell in the silence) is spent for
// the second, where a bucket refills alike.
func twoVolleysAfter(silence time.Duration, n int) []time.Duration {
	var sched []time.Duration
	for v := range 2 {
		for i := range n {
			sched = append(sched, splitLead+time.Duration(v+1)*silence+time.Duration(v*n+i)*splitVolleyGap)
		}
	}
	return sched
}

// reopenSilences are silences that end between two tied models' instants
// of a whole quota, each model replayed over the run so far and asked once
// at the end of the lead. The fixed silences may all end on the same side
// of both where a grid's boundary and a window's end are close: a start
// grid of 3.2 s and a first-aligned window of 3 s, whose last window the
// run's last admission opened, agree after 0.5, 1, 2, 4 and 8 s alike, and
// a volley 3.1 s on splits them. Only gaps wider than a volley (and the
// timing uncertainty either side) are offered.
func reopenSilences(obs *observation.Observation, models []fit.Candidate, from, volleyLen time.Duration) []time.Duration {
	evs := obs.Events()
	unc := observation.DecisionUncertainty(obs.RTT)
	key := ""
	if len(evs) > 0 {
		key = evs[len(evs)-1].Key
	}
	var whole []time.Duration // after from + splitLead
	for _, m := range models {
		lim, err := limiter.New(m.Config)
		if err != nil {
			continue
		}
		fit.ReplayOn(lim, evs, m.Offset, unc, len(evs)+1, nil)
		d := lim.Allow(key, obs.Start.Add(from+splitLead+obs.RTT/2).Add(m.Offset))
		w := max(d.Reset, d.RetryAfter)
		if w > 0 && !slices.Contains(whole, w) {
			whole = append(whole, w)
		}
	}
	slices.Sort(whole)
	var out []time.Duration
	for i := 1; i < len(whole); i++ {
		if whole[i]-whole[i-1] > volleyLen+4*unc {
			// The volley starts after the earlier instant and ends before
			// the later one.
			out = append(out, (whole[i-1]+whole[i]-volleyLen)/2)
		}
	}
	return out
}

// knockTrain is splitKnockSpan of requests gap apart, after splitLead.
func knockTrain(gap time.Duration) []time.Duration {
	var train []time.Duration
	for i := range int(splitKnockSpan / gap) {
		train = append(train, splitLead+time.Duration(i)*gap)
	}
	return train
}

// disagreement counts the proposed requests on which the models do not
// all decide alike (n), each model replayed over the run so far first, and
// for each model those on which it decides unlike the best (apart, in the
// order of models; 0 for one that cannot be built).
func disagreement(obs *observation.Observation, models []fit.Candidate, from time.Duration, sched []time.Duration) (n int, apart []int) {
	evs := obs.Events()
	unc := observation.DecisionUncertainty(obs.RTT)
	key := ""
	if len(evs) > 0 {
		key = evs[len(evs)-1].Key
	}
	decisions := make([][]bool, len(models))
	best := -1
	for j, m := range models {
		lim, err := limiter.New(m.Config)
		if err != nil {
			continue
		}
		if best < 0 || m.Mismatches < models[best].Mismatches {
			best = j
		}
		fit.ReplayOn(lim, evs, m.Offset, unc, len(evs)+1, nil)
		ds := make([]bool, len(sched))
		for i, at := range sched {
			t := obs.Start.Add(from + at + obs.RTT/2).Add(m.Offset)
			ds[i] = lim.Allow(key, t).Allowed
		}
		decisions[j] = ds
	}
	apart = make([]int, len(models))
	if best < 0 {
		return 0, apart
	}
	for i := range sched {
		differ := false
		for j, ds := range decisions {
			if ds != nil && ds[i] != decisions[best][i] {
				apart[j]++
				differ = true
			}
		}
		if differ {
			n++
		}
	}
	return n, apart
}

// tiedModels are the models that explain the run within noise of the best:
// the best of every family that ties, and within a family its distinct
// variants and the extremes of its window or rate.
func tiedModels(o *observation.Observation, stop *atomic.Bool, made *fit.Fits) []fit.Candidate {
	evs := o.Events()
	for i := range evs {
		evs[i].Stop = stop
	}
	if len(evs) == 0 || observation.RejectedEvents(evs) == 0 {
		return nil
	}
	if o.PerConnection() {
		// Each connection is a client of its own, and a schedule's
		// requests spread over the pool's connections: the simulation
		// follows one key and would choose requests that split nothing
		// (a bucket per connection was named a start-aligned sliding
		// counter after such an experiment in 2 of 4 package runs).
		return nil
	}
	fits := made.FitAll(evs, fit.HypothesesOf(o), o.RTT)
	if fit.Abandoned(evs) {
		return nil // abandoned: the fits are partial
	}
	best := len(evs) + 1
	for _, f := range fits {
		best = min(best, f.Mismatches())
	}
	slack := fit.EquivalenceSlack(len(evs))
	if fit.ExplainsTooLittle(best, len(evs)) {
		// No model comes near the run (replicas, a per-connection limit,
		// a store that went away): a deciding experiment between models
		// that are all wrong decides nothing, and fitting them again each
		// round costs seconds of a probe's time on a long run.
		return nil
	}
	// Nearest rivals first: splitMaxModels keeps the ones whose margin is
	// thinnest when more are in contention.
	byMisses := slices.Clone(fits)
	slices.SortStableFunc(byMisses, func(a, b fit.FamilyFit) int { return a.Mismatches() - b.Mismatches() })
	var out []fit.Candidate
	for _, f := range byMisses {
		if f.Family == limiter.None || f.Family == limiter.Concurrency || f.Mismatches() > best+contention(best, slack) {
			continue
		}
		seen := map[string]bool{}
		for _, c := range f.Best {
			k := variantKey(c.Config)
			if !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
		out = append(out, fit.Extremes(f.Best, fit.SizeOf)...)
	}
	// Nothing explains the run: a grid anchored at an unknown phase may,
	// on evidence the plan has not gathered yet. Its best try joins the
	// contest even if it is not better yet (probe/fit's fit_start.go). So
	// does a start grid beside a leading first-aligned fixed window, which
	// a knocking probe cannot tell from one (probe's inference.go).
	startFamilies := []string{limiter.SlidingCounter, limiter.FixedWindow}
	if best <= slack {
		startFamilies = nil
		for _, f := range fits {
			if f.Family == limiter.FixedWindow && f.Mismatches() <= best+slack && f.Best[0].Config.Align == limiter.AlignFirst && !f.Best[0].Config.Restarts() {
				startFamilies = []string{limiter.FixedWindow}
			}
		}
	}
	for _, fam := range startFamilies {
		if start := startGrid(o, evs, fits, fam); len(start) > 0 && start[0].Mismatches <= best+slack+splitStartSlack {
			out = append([]fit.Candidate{start[0]}, out...)
		}
	}
	if len(o.Phase(observation.PhaseSplit)) == 0 {
		// A bucket's capacity may be two tiers, a primary and a burst
		// pool that has not come back yet: once per probe, the deciding
		// experiment asks (probe/fit's fit_tiers.go).
		// Only while the run has not refuted it already (a silence
		// long enough for the primary to come back past half, and the
		// volley after it, may have).
		// It goes next to the best: last, it fell past splitMaxModels
		// behind the window families' extremes.
		unc := observation.DecisionUncertainty(o.RTT)
		for _, h := range fit.HiddenPools(out) {
			if m := fit.ReplayEvents(evs, h.Config, h.Offset, unc, best+slack, nil); m <= best+slack {
				h.Mismatches = m
				out = slices.Insert(out, min(1, len(out)), h)
			}
		}
	}
	// A family of one candidate gave it three times (a variant, its
	// smallest and its largest): the note then said "3 models explain the
	// run equally well" of one, and the copies took the places of rivals.
	out = distinctModels(out)
	if len(out) > splitMaxModels {
		out = out[:splitMaxModels]
	}
	return out
}

// startGrid is the start grid of family that the fits tried (every
// search that leaves decisions unexplained tries one), or, where they did
// not, one fitted from the window families' fits: a fresh search of tens
// of thousands of replays was a fifth of a simulated probe's CPU, and
// repeated the fits' own.
func startGrid(o *observation.Observation, evs []observation.Event, fits []fit.FamilyFit, family string) []fit.Candidate {
	var seeds []fit.Candidate
	for _, f := range fits {
		if f.Family == family && f.StartTried != nil {
			return f.StartTried
		}
		if f.Family == limiter.FixedWindow || f.Family == limiter.SlidingCounter || f.Family == limiter.SlidingLog {
			seeds = append(seeds, fit.SeedsOf(f.Best)...)
		}
	}
	return fit.FitStartAligned(evs, fit.HypothesesOf(o), family, seeds, o.RTT)
}

// distinctModels is models without repeats (the same configuration at the
// same offset), in their order.
func distinctModels(models []fit.Candidate) []fit.Candidate {
	type id struct {
		cfg limiter.Config
		off time.Duration
	}
	seen := map[id]bool{}
	out := models[:0:0]
	for _, m := range models {
		if k := (id{m.Config, m.Offset}); !seen[k] {
			seen[k] = true
			out = append(out, m)
		}
	}
	return out
}

// splitStartSlack: a start-aligned model this many mismatches behind the
// best still takes part in the deciding experiments.
const splitStartSlack = 3

// variantKey names a candidate's variant (alignment, counting, penalty).
func variantKey(c limiter.Config) string {
	k := c.Algo + "/" + c.Align
	if c.CountRejected {
		k += "/counting"
	}
	if c.Block > 0 {
		k += "/block"
	}
	if c.QueueUnbounded {
		k += "/unbounded"
	}
	if c.RefillEvery > 0 {
		k += "/refill"
	}
	return k
}
