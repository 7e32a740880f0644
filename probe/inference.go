package probe

import (
	"fmt"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// Inference is the probe's verdict: the family, its parameters with their
// uncertainty, how sure, and the facts that decided it. Fields that do not
// apply to the family are omitted from JSON.
type Inference struct {
	Family   string  `json:"family"` // a targets family, or "inconclusive"
	RatePerS float64 `json:"rate_per_s,omitempty"`
	RateErr  float64 `json:"rate_err_per_s,omitempty"`
	Burst    int     `json:"burst,omitempty"`
	BurstErr int     `json:"burst_err,omitempty"`
	Delay    int     `json:"delay,omitempty"` // nginx delay=N (leaky_shaping)
	// RefillS is a token_bucket's fill interval when it refills in clumps
	// (rate × refill_s tokens at once, the first fill phase_s after the
	// probe's start); absent for a continuous refill.
	RefillS    float64  `json:"refill_s,omitempty"`
	RefillErrS float64  `json:"refill_err_s,omitempty"`
	Limit      int      `json:"limit,omitempty"`
	LimitErr   int      `json:"limit_err,omitempty"`
	WindowS    float64  `json:"window_s,omitempty"`
	WindowErrS float64  `json:"window_err_s,omitempty"`
	Alignment  string   `json:"alignment,omitempty"`
	PhaseS     *float64 `json:"phase_s,omitempty"` // alignment "start" (or refill_s): the first boundary (fill) is phase_s after the probe's start, then every W (refill_s)
	// CountsRejected says whether denied attempts consume quota (sliding
	// log and counter, where a probe that knocks above the limit can tell).
	CountsRejected *bool    `json:"counts_rejected,omitempty"`
	Penalty        *Penalty `json:"penalty,omitempty"`
	Queue          string   `json:"queue,omitempty"` // leaky_shaping: "unbounded" for a pacer that never rejects
	MaxInflight    int      `json:"max_inflight,omitempty"`
	// Tiers and TiersMode describe family "tiers", two limits on one key
	// (tiers.go): "all" (every tier must admit) or "either" (the first
	// admits, else the second, a burst pool).
	Tiers     []TierFit `json:"tiers,omitempty"`
	TiersMode string    `json:"tiers_mode,omitempty"`
	Scope     string    `json:"scope"`
	// ScopeReason says why Scope is untested; ScopeTrials what each other
	// identity showed; Spoofable the forged headers that brought capacity
	// back (scope.go).
	ScopeReason string                   `json:"scope_reason,omitempty"`
	ScopeTrials []observation.ScopeTrial `json:"scope_trials,omitempty"`
	Spoofable   []string                 `json:"spoofable,omitempty"`
	SpoofTested bool                     `json:"spoof_tested,omitempty"`
	// Bypass is what the bypass suite tried while the key was exhausted
	// (probe/bypass); nil when it did not run.
	Bypass *bypass.Suite `json:"bypass,omitempty"`
	// Replicas counting alone behind a balancer, the limit each advertised
	// and what they admit together (replicas.go); 0 when not seen.
	Replicas        int `json:"replicas,omitempty"`
	AdvertisedLimit int `json:"advertised_limit,omitempty"`
	EffectiveLimit  int `json:"effective_limit,omitempty"`
	// StoreFailure is "open" or "closed" when the end of the run shows the
	// limiter admitting or rejecting everything (storefail.go).
	StoreFailure string        `json:"store_failure,omitempty"`
	Confidence   float64       `json:"confidence"`
	Explained    int           `json:"explained"` // decisions the model reproduces
	Decisions    int           `json:"decisions"`
	Alternatives []Alternative `json:"alternatives,omitempty"`
	Evidence     []string      `json:"evidence"`
	Reason       string        `json:"reason,omitempty"` // why inconclusive
	// Failures counts the requests that got no answer and the phases
	// they cut (failures.go); absent when every request was answered.
	Failures *Failures `json:"failures,omitempty"`
	// Push says how hard the plan pushed a target that rejected nothing
	// (family none): what "no limit" was tested up to.
	Push *Push `json:"push,omitempty"`
	// Quota is the partial answer of an inconclusive run whose capacity
	// never came back (quota.go): what it measured, and what the headers
	// declare of the window without the run observing it.
	Quota *Quota `json:"quota,omitempty"`

	// fitted is the tied best candidate nearest the reported values: the
	// model Model returns, which explains exactly Explained decisions (the
	// midpoint of the tied range need not be a tied candidate itself).
	fitted limiter.Config
}

// Penalty is what a rejection does to later requests: "restart" (the
// window restarts at every over-limit request) or "block" (the key is shut
// for DurationS after a rejection).
type Penalty struct {
	Kind      string  `json:"kind"`
	DurationS float64 `json:"duration_s,omitempty"`
}

// Push is what a target with no observed limit admitted.
type Push struct {
	LargestBurst int     `json:"largest_burst"` // all admitted at one instant
	Admitted     int     `json:"admitted"`      // in the bursts and the sustained phase …
	OverS        float64 `json:"over_s"`        // … within this many seconds
}

// Alternative is another family and how well it did.
type Alternative struct {
	Family     string `json:"family"`
	Explained  int    `json:"explained"`
	Equivalent bool   `json:"equivalent"` // explains the run as well as the winner
	// AtMost: Explained is a bound. The family's every model left more
	// than three tenths of the decisions unexplained, and the search
	// stopped counting there (fit.MostCounted).
	AtMost bool `json:"at_most,omitempty"`
}

// ExplainedText is how many decisions the alternative explains, "at most"
// where that is a bound.
func (a Alternative) ExplainedText() string {
	if a.AtMost {
		return fmt.Sprintf("at most %d", a.Explained)
	}
	return strconv.Itoa(a.Explained)
}

// QueueUnbounded is Inference.Queue for a pacer: a leaky bucket that queues
// every request and never rejects.
const QueueUnbounded = "unbounded"

// Inconclusive is the family when no model explains the run.
const Inconclusive = "inconclusive"

// Infer fits every family to the observation and names the best, with the
// store failure the end of the run shows.
func Infer(o *observation.Observation) Inference {
	return inferFrom(o, nil)
}

// inferFrom is Infer with the fits its probe made already (nil: none).
func inferFrom(o *observation.Observation, fits *fit.Fits) Inference {
	inf := infer(o, fits)
	inf.StoreFailure, _ = storeFailure(o, inf)
	return inf
}

// infer fits every family to the observation and names the best (Infer,
// storefail.go, adds what the end of the run shows), answered from made
// where its plan fitted the same run last (fit.Fits).
func infer(o *observation.Observation, made *fit.Fits) Inference {
	evs := o.Events()
	inf := Inference{Decisions: len(evs)}
	inf.setScope(o.ScopeFindings())     // scope.go
	inf.Bypass = bypassSuite(o)         // bypass.go
	inf.setReplicas(replicaFindings(o)) // replicas.go
	inf.Failures = failuresOf(o)        // failures.go
	if o.Stopped == observation.StopInterrupted {
		inf.Family, inf.Reason = Inconclusive, unearned(o, observation.RejectedEvents(evs))
		inf.Evidence = facts(o, inf)
		return inf
	}
	if why := inf.Failures.cutReason(); why != "" {
		inf.Family, inf.Reason = Inconclusive, why
		inf.Evidence = facts(o, inf)
		return inf
	}
	if len(evs) == 0 {
		inf.Family, inf.Reason = Inconclusive, "no request got a limiter decision: "+undecidedReason(o)
		return inf
	}
	if observation.RejectedEvents(evs) == len(evs) {
		inf.Family = Inconclusive
		inf.Reason = fmt.Sprintf("every one of %d requests was rejected, from the first: the client is blocked (a penalty, a ban, or a limit of 0), so there is no capacity to measure", len(evs))
		inf.Evidence = facts(o, inf)
		return inf
	}
	if why := unearned(o, observation.RejectedEvents(evs)); why != "" {
		inf.Family, inf.Reason = Inconclusive, why
		inf.Evidence = facts(o, inf)
		if inf.Quota = quota(o); inf.Quota != nil { // quota.go: what was measured all the same
			inf.Evidence = append(inf.Evidence, "partial answer, "+inf.Quota.Text())
		}
		return inf
	}
	if observation.RejectedEvents(evs) == 0 {
		if held, _, _ := heldBack(o); held > 0 {
			return inferPacer(o, evs, inf) // pacer.go
		}
		inf.Family = limiter.None
		inf.Explained = len(evs)
		// Never proven, only not refuted: confidence grows with how hard
		// the plan pushed.
		p := pushOf(o)
		inf.Confidence = noneConfidence(p)
		inf.Push = &Push{LargestBurst: p.largest(), Admitted: p.total, OverS: math.Round(p.over.Seconds()*10) / 10}
		inf.Evidence = facts(o, inf)
		return inf
	}
	h := fit.HypothesesOf(o)
	fits := made.FitAll(evs, h, o.RTT)
	sort.SliceStable(fits, func(i, j int) bool {
		return fits[i].Mismatches()+fits[i].Params() < fits[j].Mismatches()+fits[j].Params()
	})
	// Among families whose decisions are within noise of the best's,
	// prefer the simpler and more common one (a token bucket of capacity 1
	// and a first-aligned fixed window of 1 are the same limiter); the
	// others are listed as equivalent. (Noise moves decisions, not
	// parameters: the parameter penalty is in the order already.)
	slack := fit.EquivalenceSlack(len(evs))
	top := fits[0].Mismatches()
	for i, f := range fits {
		if f.Mismatches() <= top+slack && f.Rank() < fits[0].Rank() {
			fits[0], fits[i] = fits[i], fits[0]
		}
	}
	best := fits[0]
	m1 := best.Mismatches()
	inf.Explained = len(evs) - m1
	// Families that do as well (within noise) are observationally
	// equivalent on this run: say so instead of guessing.
	runnerUp, runnerUpParams := math.MaxInt32, 0
	unc := observation.DecisionUncertainty(o.RTT)
	for _, f := range fits[1:] {
		if f.TooLittle() {
			// Searched, and no model of it came within fit.MostCounted
			// mismatches: how many more it misses the search did not
			// count. As a runner-up it counts as missing no more, so the
			// confidence is never above what the run earns.
			least := fit.MostCounted(len(evs)) + 1
			inf.Alternatives = append(inf.Alternatives, Alternative{Family: f.Family, Explained: len(evs) - least, AtMost: true})
			if least < runnerUp {
				runnerUp, runnerUpParams = least, f.Params()
			}
			continue
		}
		if f.Mismatches() == math.MaxInt32 {
			continue
		}
		// Two tiers can be any single model (a second tier that never
		// binds): a composition explaining no more than the best single
		// model is that model fitted on a coarser grid, not a rival —
		// unless each of its tiers decides part of the run.
		degenerate := f.Family == limiter.Tiers && f.Mismatches() >= m1
		eq := f.Mismatches() <= m1+slack && (!degenerate || fit.TiersDecide(evs, f.Best[0], unc, slack))
		inf.Alternatives = append(inf.Alternatives, Alternative{Family: f.Family, Explained: len(evs) - f.Mismatches(), Equivalent: eq})
		if degenerate {
			continue
		}
		if !eq && f.Mismatches() < runnerUp {
			runnerUp, runnerUpParams = f.Mismatches(), f.Params()
		}
	}
	if fit.ExplainsTooLittle(m1, len(evs)) {
		inf.Family = Inconclusive
		inf.Reason = fmt.Sprintf("no model explains the decisions: the best, %s, gets %d of %d wrong", best.Family, m1, len(evs))
		inf.Evidence = facts(o, inf)
		return inf
	}
	inf.Family = best.Family
	inf.setParams(best.Best)
	if best.AlsoAligned != "" && inf.Alignment != "" && !strings.Contains(inf.Alignment, best.AlsoAligned) {
		var c []fit.Candidate
		for _, a := range []string{inf.Alignment, best.AlsoAligned} {
			c = append(c, fit.Candidate{Config: limiter.Config{Align: a}})
		}
		inf.Alignment = alignmentOf(c)
	}
	if inf.Alignment == limiter.AlignStart || inf.RefillS > 0 {
		p := fit.PhaseOf(o, samePeriod(best.Best, inf.fitted))
		inf.PhaseS = &p
	}
	if runnerUp == math.MaxInt32 {
		runnerUp, runnerUpParams = len(evs), best.Params()
	}
	// Confidence: the margin over the runner-up, discounted by misfit. A
	// best with more free parameters than the runner-up pays each extra
	// one as a decision it missed, as the ranking does (a composition of
	// two tiers fits noise a single bucket must miss: it beat an honest
	// bucket of 86/s by 6 decisions of 887, at 0.86).
	extra := max(0, best.Params()-runnerUpParams)
	inf.Confidence = (1 - float64(m1+extra+1)/float64(runnerUp+1)) * math.Max(0, 1-10*float64(m1)/float64(len(evs)))
	inf.Confidence = math.Max(0, inf.Confidence)
	inf.Confidence = math.Round(inf.Confidence*100) / 100
	for _, a := range inf.Alternatives {
		if a.Equivalent {
			inf.Confidence = math.Min(inf.Confidence, 0.5)
		}
	}
	inf.Evidence = facts(o, inf)
	if inf.Family == limiter.TokenBucket {
		if why := hiddenPool(evs, best.Best[0].Config); why != "" {
			inf.Confidence = math.Min(inf.Confidence, hiddenPoolCap)
			inf.Evidence = append(inf.Evidence, why)
		}
	}
	if inf.Family == limiter.Concurrency {
		if hold, unc := medianHold(evs), observation.DecisionUncertainty(o.RTT); hold <= unc {
			inf.Confidence = math.Min(inf.Confidence, 0.5)
			inf.Evidence = append(inf.Evidence, fmt.Sprintf("the server held admitted requests %s, within the %s timing uncertainty: how many were in flight at any instant is not observed, so a cap on them is only not refuted (confidence at most 0.5)", hold.Round(100*time.Microsecond), unc.Round(100*time.Microsecond)))
		}
	}
	return inf
}

// medianHold is how long the server held its admitted requests, the
// middle one: what makes a cap on requests in flight observable. Held
// no longer than the timing uncertainty, any order of arrivals and
// releases within it explains a decision, and a cap of 1 "explained" a
// token bucket's burst of 130 admissions as 130 requests served one
// after another in the same instant.
func medianHold(evs []observation.Event) time.Duration {
	var holds []time.Duration
	for i := range evs {
		if evs[i].Admitted {
			holds = append(holds, evs[i].Hold)
		}
	}
	if len(holds) == 0 {
		return 0
	}
	slices.Sort(holds)
	return holds[len(holds)/2]
}

// setParams reports the parameters of the best candidates: the middle of
// their range, ± half its width.
func (inf *Inference) setParams(cs []fit.Candidate) {
	c := cs[0].Config
	spanF := func(get func(limiter.Config) float64) (mid, err float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range cs {
			v := get(x.Config)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		return (lo + hi) / 2, (hi - lo) / 2
	}
	round := func(v float64, digits int) float64 {
		p := math.Pow(10, float64(digits))
		return math.Round(v*p) / p
	}
	switch c.Algo {
	case limiter.TokenBucket, limiter.LeakyShaping:
		r, re := spanF(func(c limiter.Config) float64 { return c.Rate })
		b, be := spanF(func(c limiter.Config) float64 { return float64(c.Burst) })
		inf.RatePerS, inf.RateErr = round(r, 3), round(re, 3)
		inf.Burst, inf.BurstErr = int(math.Round(b)), int(math.Ceil(be))
		inf.Delay = c.DelayAfter
		if c.RefillEvery > 0 {
			inf.setRefill(cs)
		}
		if c.QueueUnbounded {
			inf.Queue, inf.Burst, inf.BurstErr = QueueUnbounded, 0, 0
		}
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		l, le := spanF(func(c limiter.Config) float64 { return float64(c.Limit) })
		w, we := spanF(func(c limiter.Config) float64 { return c.Window.Seconds() })
		inf.Limit, inf.LimitErr = int(math.Round(l)), int(math.Ceil(le))
		inf.WindowS, inf.WindowErrS = round(w, 3), round(we, 3)
		if c.Algo == limiter.FixedWindow || c.Align == limiter.AlignStart || c.Align == limiter.AlignFirst {
			inf.Alignment = alignmentOf(cs)
		}

		if c.Algo == limiter.SlidingLog || c.Algo == limiter.SlidingCounter {
			counting := c.CountRejected
			inf.CountsRejected = &counting
		}
	case limiter.Concurrency:
		inf.MaxInflight = c.MaxInflight
	case limiter.Tiers:
		inf.setTiers(cs) // tiers.go
		return
	}
	switch c.PenaltyKind() {
	case limiter.PenaltyRestart:
		inf.Penalty = &Penalty{Kind: limiter.PenaltyRestart}
	case limiter.PenaltyBlock:
		b, _ := spanF(func(c limiter.Config) float64 { return c.Block.Seconds() })
		inf.Penalty = &Penalty{Kind: limiter.PenaltyBlock, DurationS: round(b, 2)}
	}
	inf.fitted = nearestCandidate(cs, *inf)
}

// setRefill reports an interval refill's interval: the middle of the tied
// range, or the interval people configure (commonRefills) when the range
// holds one — the trace pins a fill interval to a few milliseconds, and
// 1.006 ± 0.007 s is a 1 s fill_interval. The rate is then the tokens per
// fill over it, its ± still covering every tied rate.
func (inf *Inference) setRefill(cs []fit.Candidate) {
	lo, hi := math.Inf(1), math.Inf(-1)
	rlo, rhi := math.Inf(1), math.Inf(-1)
	for _, x := range cs {
		d := x.Config.RefillEvery.Seconds()
		lo, hi = math.Min(lo, d), math.Max(hi, d)
		rlo, rhi = math.Min(rlo, x.Config.Rate), math.Max(rhi, x.Config.Rate)
	}
	mid := (lo + hi) / 2
	for _, c := range fit.CommonRefills {
		if s := c.Seconds(); s >= lo && s <= hi {
			mid = s
			break
		}
	}
	round3 := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	inf.RefillS, inf.RefillErrS = round3(mid), round3(math.Max(hi-mid, mid-lo))
	if mid != (lo+hi)/2 {
		per := cs[0].Config.Rate * cs[0].Config.RefillEvery.Seconds()
		rate := math.Round(per*1e6) / 1e6 / mid
		inf.RatePerS, inf.RateErr = round3(rate), round3(math.Max(rhi-rate, rate-rlo))
	}
}

// nearestCandidate is the tied candidate closest to the reported values,
// each parameter's distance relative to its value.
func nearestCandidate(cs []fit.Candidate, inf Inference) limiter.Config {
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-9) }
	best, bestD := cs[0].Config, math.Inf(1)
	for _, x := range cs {
		c := x.Config
		var d float64
		switch c.Algo {
		case limiter.TokenBucket, limiter.LeakyShaping:
			d = rel(c.Rate, inf.RatePerS) + rel(float64(c.Burst), float64(inf.Burst)) + rel(c.RefillEvery.Seconds(), inf.RefillS)
		case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
			d = rel(float64(c.Limit), float64(inf.Limit)) + rel(c.Window.Seconds(), inf.WindowS)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func alignmentOf(cs []fit.Candidate) string {
	seen := map[string]bool{}
	for _, c := range cs {
		a := c.Config.Align
		if a == "" { // a sliding counter's default grid
			a = limiter.AlignWall
		}
		seen[a] = true
	}
	var names []string
	for _, a := range []string{limiter.AlignWall, limiter.AlignFirst, limiter.AlignStart} {
		if seen[a] {
			names = append(names, a)
		}
	}
	if len(names) > 1 {
		return strings.Join(names, " or ") + " (indistinguishable here)"
	}
	return strings.Join(names, "")
}

// Summary is the one-line statement of an inference.
func (inf Inference) Summary() string {
	if inf.Family != limiter.FixedWindow && inf.Family != limiter.SlidingLog && inf.Family != limiter.SlidingCounter {
		return inf.summary() + inf.penaltyText()
	}
	return inf.summary()
}

func (inf Inference) summary() string {
	switch inf.Family {
	case Inconclusive:
		return "inconclusive: " + inf.Reason
	case limiter.None:
		if p := inf.Push; p != nil {
			return fmt.Sprintf("no limit observed up to %d at once and %d in %s s", p.LargestBurst, p.Admitted, fnum(p.OverS))
		}
		return "no limit observed"
	case limiter.TokenBucket:
		s := fmt.Sprintf("token_bucket: rate %s ± %s/s, burst %d ± %d", fnum(inf.RatePerS), fnum(inf.RateErr), inf.Burst, inf.BurstErr)
		if inf.RefillS > 0 {
			s += fmt.Sprintf(", refilled %s at once every %s s ± %s s", fnum(inf.tokensPerFill()), fnum(inf.RefillS), fnum(inf.RefillErrS))
			if inf.PhaseS != nil {
				s += fmt.Sprintf(" (phase %s s)", fnum(*inf.PhaseS))
			}
		}
		return s
	case limiter.LeakyShaping:
		if inf.Queue == QueueUnbounded {
			return fmt.Sprintf("leaky_shaping: rate %s ± %s/s, queue unbounded (a pacer: never rejects, delays grow with the backlog)", fnum(inf.RatePerS), fnum(inf.RateErr))
		}
		s := fmt.Sprintf("leaky_shaping: rate %s ± %s/s, queue (burst) %d ± %d", fnum(inf.RatePerS), fnum(inf.RateErr), inf.Burst, inf.BurstErr)
		if inf.Delay > 0 {
			s += fmt.Sprintf(", first %d excess undelayed", inf.Delay)
		}
		return s
	case limiter.Concurrency:
		return fmt.Sprintf("concurrency: at most %d in flight", inf.MaxInflight)
	case limiter.Tiers:
		return inf.tiersSummary()
	}
	s := fmt.Sprintf("%s: limit %d ± %d per %ss ± %ss", inf.Family, inf.Limit, inf.LimitErr, fnum(inf.WindowS), fnum(inf.WindowErrS))
	if inf.Alignment != "" {
		s += ", " + inf.Alignment + "-aligned windows"
	}
	if inf.PhaseS != nil {
		s += fmt.Sprintf(" (phase %s s)", fnum(*inf.PhaseS))
	}
	if inf.CountsRejected != nil && *inf.CountsRejected {
		s += ", denied attempts count"
	}
	return s + inf.penaltyText()
}

// samePeriod keeps, of an interval refill's tied candidates, those with the
// fitted one's interval: a phase is only a phase of one interval (a start
// grid's candidates are kept whole, their windows a hair apart).
func samePeriod(cs []fit.Candidate, fitted limiter.Config) []fit.Candidate {
	if fitted.RefillEvery <= 0 {
		return cs
	}
	var out []fit.Candidate
	for _, c := range cs {
		if c.Config.RefillEvery == fitted.RefillEvery {
			out = append(out, c)
		}
	}
	return out
}

// tokensPerFill is what an interval refill adds at each fill (rate ×
// interval), to a tenth of a token.
func (inf Inference) tokensPerFill() float64 {
	return math.Round(inf.RatePerS*inf.RefillS*10) / 10
}

// penaltyText is the summary's words for a penalty, "" for none.
func (inf Inference) penaltyText() string {
	switch p := inf.Penalty; {
	case p == nil:
		return ""
	case p.Kind == limiter.PenaltyBlock:
		return fmt.Sprintf(", a rejection blocks the key for %s s", fnum(p.DurationS))
	}
	return ", every over-limit request restarts the window"
}

func fnum(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// undecidedReason says what the target answered instead of a decision.
func undecidedReason(o *observation.Observation) string {
	statuses := map[int]int{}
	errs := map[string]int{}
	for i := range o.Results {
		r := &o.Results[i]
		if r.Error != "" {
			errs[r.Error]++
		} else {
			statuses[r.Status]++
		}
	}
	var parts []string
	for code, n := range statuses {
		hint := ""
		if code >= 300 && code < 400 {
			hint = " (a redirect: point ratecheck at the final URL)"
		}
		parts = append(parts, fmt.Sprintf("%d × status %d%s", n, code, hint))
	}
	for e, n := range errs {
		parts = append(parts, fmt.Sprintf("%d × %s", n, e))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "no requests were sent"
	}
	return strings.Join(parts, "; ")
}

// Model is the reference limiter this inference names, as a config that
// limiter.New builds: what grading replays against and what reports draw.
func (inf Inference) Model() (limiter.Config, error) {
	if inf.fitted.Algo == inf.Family && inf.Family != "" {
		// The model the fit scored (an inference read back from JSON has
		// only the reported values, below).
		return inf.fitted, inf.fitted.Validate()
	}
	c := limiter.Config{Algo: inf.Family}
	switch inf.Family {
	case limiter.TokenBucket:
		c.Rate, c.Burst = inf.RatePerS, inf.Burst
		if inf.RefillS > 0 {
			// Its fill instants are relative to the probe's start, which
			// an inference read back alone does not carry.
			return c, fmt.Errorf("an interval refill's fill instants are relative to its probe: infer again from the results stream")
		}
	case limiter.LeakyShaping:
		c.Rate, c.Burst, c.DelayAfter = inf.RatePerS, inf.Burst, inf.Delay
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		c.Limit, c.Window = inf.Limit, time.Duration(inf.WindowS*float64(time.Second))
		c.Align = limiter.AlignWall
		switch {
		case inf.Alignment == limiter.AlignFirst && (inf.Family == limiter.FixedWindow || inf.Family == limiter.SlidingCounter):
			c.Align = limiter.AlignFirst
		case inf.Alignment == limiter.AlignStart:
			// Its phase is relative to the probe's start, which an
			// inference read back alone does not carry.
			return c, fmt.Errorf("a start-aligned grid's origin is relative to its probe: infer again from the results stream")
		}
		c.CountRejected = inf.CountsRejected != nil && *inf.CountsRejected
	case limiter.Concurrency:
		c.MaxInflight = inf.MaxInflight
	case limiter.Tiers:
		return inf.tiersModel()
	case limiter.None:
	default:
		return c, fmt.Errorf("no model for %q", inf.Family)
	}
	if inf.Queue == QueueUnbounded {
		c.QueueUnbounded = true
	}
	if p := inf.Penalty; p != nil && c.Algo != limiter.None {
		switch p.Kind {
		case limiter.PenaltyRestart:
			c.Penalty = limiter.PenaltyRestart
		case limiter.PenaltyBlock:
			c.Block = time.Duration(p.DurationS * float64(time.Second))
		}
	}
	return c, c.Validate()
}
