package probe

import (
	"fmt"
	"github.com/ratecheck/ratecheck/results"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/attack"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/probe/plan"
)

// An answer is earned only when the experiment that tells it from the
// others ran. These are the bars.
const (
	// noneMinBurst: "no limit" needs a burst at least this large released
	// at one instant and all admitted without queueing …
	noneMinBurst = plan.FirstBurstSize
	// noneMinSustained: … and at least this many more sent in the
	// sustained phase, all admitted.
	noneMinSustained = 100
	// maxFailedShare: a phase whose requests got no answer (errors,
	// timeouts, cancellations) beyond this share did not run.
	maxFailedShare = 0.1
	// minTraceDecisions: a recovery trace with fewer decided requests did
	// not run.
	minTraceDecisions = 10
)

// push is how hard the plan pushed a target that rejected nothing.
type push struct {
	bursts    []int         // sizes of the bursts released at one instant, all admitted
	sustained int           // requests of the sustained phase, all admitted
	span      time.Duration // the sustained phase's length
	total     int           // every admitted request of those phases
	over      time.Duration // from the first burst to the end of the sustained phase
}

func (p push) largest() int {
	n := 0
	for _, b := range p.bursts {
		n = max(n, b)
	}
	return n
}

// unearned says why this observation supports no family at all ("" when
// the experiments a family needs all ran): an interrupted run, a burst that
// never ran or got no answers, a target that rejected nothing but was not
// pushed hard enough to say so, or a limit reached whose recovery was
// never traced.
func unearned(o *observation.Observation, rejections int) string {
	if o.Stopped == observation.StopInterrupted {
		return fmt.Sprintf("the probe was interrupted (%s): a cut-short probe names no family; run it again to the end", progress(o))
	}
	bursts := o.BurstPhases()
	if len(bursts) == 0 || len(o.Phase(bursts[0])) == 0 {
		return "the burst phase did not run" + budgetNote(o, plan.FirstBurstSize+plan.AfterBurstReserve)
	}
	for _, b := range bursts {
		rs := o.Phase(b)
		if failed, n, first := failures(rs); float64(failed) > maxFailedShare*float64(n) {
			// A pacer holds a large burst longer than the per-request
			// timeout: those answers are its fingerprint, not a failure,
			// when the answered ones leave in its staircase.
			if held, _, _ := observation.PacedBurst(rs, o.ServiceTime()); held > 0 && rejections == 0 && failed-observation.Timeouts(rs) <= int(maxFailedShare*float64(n)) {
				continue
			}
			return fmt.Sprintf("%d of the %d requests of the burst got no answer (%s): its capacity could not be measured", failed, n, first)
		}
	}
	if rejections == 0 {
		if held, _, _ := heldBack(o); held > 0 {
			return "" // a queue that never rejected: the pacer fit (pacer.go) decides
		}
		p := pushOf(o)
		if failed, n, first := failures(o.Phase(observation.PhaseSustain)); n > 0 && float64(failed) > maxFailedShare*float64(n) {
			return fmt.Sprintf("%d of the %d requests of the sustained phase got no answer (%s)", failed, n, first)
		}
		var short []string
		if p.largest() < noneMinBurst {
			short = append(short, fmt.Sprintf("the largest burst was %d at one instant (at least %d needed)", p.largest(), noneMinBurst))
		}
		if p.sustained < noneMinSustained {
			short = append(short, fmt.Sprintf("%d requests were sustained after the bursts (at least %d needed)", p.sustained, noneMinSustained))
		}
		if len(short) > 0 {
			return "nothing was rejected, but the probe could not push hard enough to rule a limit out: " + strings.Join(short, " and ") +
				budgetNote(o, noneMinBurst*plan.BurstGrowth+plan.AfterBurstReserve)
		}
		return ""
	}
	decidedTrace := 0
	for _, r := range o.Phase(observation.PhaseTrace) {
		if observation.Decided(&r) {
			decidedTrace++
		}
	}
	if decidedTrace < minTraceDecisions {
		return fmt.Sprintf("the limit was reached, but the recovery trace that shows how capacity returns did not run (%d decided requests, at least %d needed)", decidedTrace, minTraceDecisions) +
			budgetNote(o, plan.AfterBurstReserve)
	}
	if n, span := unrecovered(o); n > 0 {
		s := fmt.Sprintf("the limit was reached and capacity never came back: nothing was admitted in the %d requests of the %.1f s that followed, so how it returns (the window, the rate) was not measured; ", n, span.Seconds())
		if w := declaredWindow(o); w > span && enoughFor(w) > longestUsefulProbe {
			s += fmt.Sprintf("the headers declare a window of %s, longer than a probe should wait (the quota's partial answer says what was measured)", plan.FormatSpan(w))
		} else {
			s += fmt.Sprintf("the window is longer than that, and a --max-time of %s or more would hold two of it", enoughFor(max(span, w)))
		}
		return s + budgetNote(o, 0)
	}
	return ""
}

// enoughFor is a time budget that holds a probe's natural span of a window
// span (plan.NaturalSpan) and the phases after the trace, rounded up to a
// whole minute.
func enoughFor(span time.Duration) time.Duration {
	need := plan.NaturalSpan(span) + plan.GrowMargin + afterTraceTime
	return (need + time.Minute - 1).Truncate(time.Minute)
}

// afterTraceTime is about what the phases after the trace take: the scope
// trials and a deciding experiment's volley.
const afterTraceTime = 15 * time.Second

// longestUsefulProbe: a window that needs a longer probe than this to see
// twice is not worth suggesting one for (an hour's quota).
const longestUsefulProbe = 30 * time.Minute

// declaredWindow is the window the run's quota headers declare (a RateLimit
// policy's w=), 0 when none does.
func declaredWindow(o *observation.Observation) time.Duration {
	for i := range o.Results {
		if _, w := attack.QuotaHints(o.Results[i].Headers); w > 0 {
			return w
		}
	}
	return 0
}

// unrecovered counts the requests sent to the probe's key after the limit
// was reached, and over how long, when none of them was admitted (0
// otherwise): the trace, the silent waits and the deciding experiments
// then saw no capacity return, and a window or rate fitted to that run
// is any window longer than the run (a 5 s probe of a 10 s sliding log
// was named a fixed window of 31.5 s ± 28.5 s at confidence 0.5).
func unrecovered(o *observation.Observation) (int, time.Duration) {
	recovery := []string{observation.PhaseTrace, observation.PhaseRetryWait, observation.PhaseResetWait, observation.PhaseSplit}
	var first, last time.Duration
	n := 0
	for _, r := range o.Results {
		if !slices.Contains(recovery, r.Phase) || !observation.Decided(&r) {
			continue
		}
		if r.Admitted() {
			return 0, 0
		}
		if n == 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.Sent)
		n++
	}
	return n, last - first
}

// failures counts the results that got no limiter decision because of a
// transport problem, and names the first.
func failures(rs []results.Result) (failed, n int, first string) {
	for _, r := range rs {
		n++
		if r.Error != "" {
			if failed == 0 {
				first = r.Error
			}
			failed++
		}
	}
	return failed, n, first
}

// queueGrowth: a sustained phase whose delays grow by more than this from
// its start to its end is being paced below its send rate (a burst's
// queue: observation.PacedBurst).
const queueGrowth = 100 * time.Millisecond

// heldBack counts the admissions a queue held back in the bursts and the
// sustained phase of a run that rejected nothing, out of all of their
// requests, and the longest such delay. Latency a flood adds by load alone
// does not count (queueGrowth, and observation.PacedBurst's bars).
func heldBack(o *observation.Observation) (held, n int, most time.Duration) {
	service := o.ServiceTime()
	for _, b := range o.BurstPhases() {
		rs := o.Phase(b)
		n += len(rs)
		h, _, m := observation.PacedBurst(rs, service)
		held += h
		most = max(most, m)
	}
	s := o.Phase(observation.PhaseSustain)
	n += len(s)
	if k := len(s) / 10; k >= 3 {
		head, tail := medianLatency(s[:k]), medianLatency(s[len(s)-k:])
		if tail-head > queueGrowth {
			for _, r := range s {
				if d := r.Latency() - service; r.Admitted() && d > queueGrowth {
					held++
					most = max(most, d)
				}
			}
		}
	}
	return held, n, most
}

func medianLatency(rs []results.Result) time.Duration {
	var ls []time.Duration
	for _, r := range rs {
		if r.Error == "" {
			ls = append(ls, r.Latency())
		}
	}
	if len(ls) == 0 {
		return 0
	}
	slices.Sort(ls)
	return ls[len(ls)/2]
}

// push measures the bursts and the sustained phase of a run that rejected
// nothing.
func pushOf(o *observation.Observation) push {
	var p push
	var first, last time.Duration = -1, 0
	for _, b := range o.BurstPhases() {
		rs := o.Phase(b)
		p.bursts = append(p.bursts, observation.CountAdmitted(rs))
		p.total += observation.CountAdmitted(rs)
		for _, r := range rs {
			if first < 0 || r.Sent < first {
				first = r.Sent
			}
			last = max(last, r.Sent)
		}
	}
	if s := o.Phase(observation.PhaseSustain); len(s) > 0 {
		p.sustained = observation.CountAdmitted(s)
		p.total += p.sustained
		p.span = s[len(s)-1].Sent - s[0].Sent
		last = max(last, s[len(s)-1].Sent)
	}
	if first >= 0 {
		p.over = last - first
	}
	return p
}

// noneConfidence grows with how hard the plan pushed: "no limit" is never
// proven, only not refuted — a limit a little larger than the largest burst
// is always possible, so it never reaches the 0.8 of a confident answer. A
// burst of 100 earns 0.5; each doubling 0.05 more, to at most 0.75.
func noneConfidence(p push) float64 {
	c := 0.5 + 0.05*math.Log2(float64(p.largest())/float64(noneMinBurst))
	return math.Round(math.Min(0.75, math.Max(0.5, c))*100) / 100
}

// pushFact is the evidence line of an answer of none: how hard it pushed.
func (p push) fact() string {
	sizes := make([]string, len(p.bursts))
	for i, b := range p.bursts {
		sizes[i] = fmt.Sprint(b)
	}
	return fmt.Sprintf("nothing rejected or held back: bursts of %s at one instant, then %d requests sustained over %.1f s (%.0f/s); any limit here admits more than %d at once and more than %d in %.1f s",
		strings.Join(sizes, ", "), p.sustained, p.span.Seconds(), float64(p.sustained)/math.Max(p.span.Seconds(), 1e-3), p.largest(), p.total, p.over.Seconds())
}

// progress says how far a run got: its last phase, requests and time.
func progress(o *observation.Observation) string {
	if len(o.Results) == 0 {
		return "before the first request"
	}
	rs := observation.SortedResults(o.Results)
	last := rs[len(rs)-1]
	return fmt.Sprintf("during the %s phase, after %d requests in %.1f s", strings.SplitN(last.Phase, "-", 2)[0], len(rs), last.Sent.Seconds())
}

// budgetNote says what the budget was and roughly what would have held the
// missing phase (needed more requests than the run had left).
func budgetNote(o *observation.Observation, needed int) string {
	b := o.Budget
	if b.MaxRequests == 0 {
		return ""
	}
	s := fmt.Sprintf(" (budget %d requests and %s", b.MaxRequests, b.MaxTime)
	switch {
	case b.GrewTo > 0:
		s += fmt.Sprintf(", grown to %s", b.GrewTo.Round(time.Second))
	case b.Ceiling > 0:
		s += fmt.Sprintf(", which could grow to %s", b.Ceiling)
	}
	s += fmt.Sprintf("; %d sent", len(o.Results))
	if want := len(o.Results) + needed; want > b.MaxRequests {
		s += fmt.Sprintf("; about %d requests would hold it", max(want, MinRequests))
	}
	for _, n := range o.Notes {
		if strings.Contains(n, "time budget could not hold") {
			s += "; " + n
			break
		}
	}
	return s + ")"
}
