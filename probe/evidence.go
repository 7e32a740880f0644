package probe

import (
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// facts are the 3–5 observations that decided the inference, phrased so a
// reader can check them against the results file.
func facts(o *observation.Observation, inf Inference) []string {
	var out []string
	if b := o.Phase(o.LastBurstPhase()); len(b) > 0 {
		adm, rej, delayed := 0, 0, 0
		var maxDelay time.Duration
		service := o.ServiceTime()
		for i := range b {
			switch {
			case b[i].Admitted():
				adm++
				if d := b[i].Latency() - service; d > fit.DelayTolerance(0) {
					delayed++
					maxDelay = max(maxDelay, d)
				}
			case b[i].Rejected():
				rej++
			}
		}
		s := fmt.Sprintf("burst of %d released at once: %d admitted, %d rejected", len(b), adm, rej)
		if o.PerConnection() {
			s = fmt.Sprintf("burst of %d released at once over as many connections, each a client of its own (the limit is per connection): %d admitted, %d rejected", len(b), adm, rej)
		}
		failed, _, first := failures(b)
		if failed > 0 {
			// No answer is neither: a cancelled or refused request
			// must not read as a burst the limiter decided.
			s += fmt.Sprintf(", %d got no answer (%s)", failed, first)
		}
		switch {
		case adm+rej == 0:
			// Nothing decided: no queueing to speak of.
		case delayed > 0 && rej == 0 && inf.Family != limiter.LeakyShaping:
			// Nothing rejected: added latency is the load of the flood
			// unless the inference says a queue (see heldBack).
			s += fmt.Sprintf("; latency grew up to %.0f ms above the %.0f ms service time under the load", float64(maxDelay)/1e6, float64(service)/1e6)
		case delayed > 0:
			s += fmt.Sprintf("; %d admitted ones were held back beyond the %.0f ms service time, up to %.0f ms more (queueing)", delayed, float64(service)/1e6, float64(maxDelay)/1e6)
		default:
			s += "; none held back (no queueing)"
		}
		out = append(out, s)
	}
	if seq := o.Phase(observation.PhaseSequential); len(seq) > 0 {
		out = append(out, fmt.Sprintf("%d sequential requests right after the burst: %d admitted%s",
			len(seq), observation.CountAdmitted(seq), map[bool]string{true: " (only concurrent requests are limited)", false: ""}[observation.CountAdmitted(seq) == len(seq)]))
	}
	if tr := o.Phase(observation.PhaseTrace); len(tr) > 0 {
		adm := observation.AdmittedSent(tr)
		span := (tr[len(tr)-1].Sent - tr[0].Sent).Seconds()
		switch {
		case len(adm) == 0:
			out = append(out, fmt.Sprintf("recovery trace: nothing admitted in %d requests over %.1f s", len(tr), span))
		default:
			steps := fit.DecidedStarts(tr, fit.TraceGap(o))
			first := adm[0] - tr[0].Sent
			s := fmt.Sprintf("recovery trace (%d requests over %.1f s): first admission %.0f ms after exhaustion, %d admitted",
				len(tr), span, float64(first)/1e6, len(adm))
			windowed := inf.Family == limiter.FixedWindow || inf.Family == limiter.SlidingLog || inf.Family == limiter.SlidingCounter
			if len(steps) >= 2 && windowed {
				s += fmt.Sprintf("; capacity came back in steps %.2f s apart (window boundaries)", (steps[1] - steps[0]).Seconds())
			} else if len(adm) >= 3 && inf.RefillS == 0 && (inf.Family == limiter.TokenBucket || inf.Family == limiter.LeakyShaping) {
				s += fmt.Sprintf(" one at a time at %.2f/s (continuous refill)", float64(len(adm)-1)/(adm[len(adm)-1]-adm[0]).Seconds())
			}
			out = append(out, s)
		}
	}
	if inf.CountsRejected != nil && *inf.CountsRejected {
		if f := lockoutFact(o); f != "" {
			out = append(out, f)
		}
	}
	if p := inf.Penalty; p != nil && p.Kind == limiter.PenaltyBlock {
		out = append(out, fmt.Sprintf("a penalty: each rejection shuts the key for %s s, whatever the client sends meanwhile; a client that waits that long after a rejection is admitted", fnum(p.DurationS)))
	}
	if inf.Family == limiter.None {
		out = append(out, pushOf(o).fact())
	}
	if inf.Family != Inconclusive && inf.Family != limiter.None && inf.Decisions > 0 {
		s := fmt.Sprintf("the %s model reproduces %d of %d decisions", inf.Family, inf.Explained, inf.Decisions)
		for _, a := range inf.Alternatives {
			if a.Equivalent {
				s += fmt.Sprintf("; %s does equally well (observationally equivalent here)", a.Family)
			}
		}
		if ru := runnerUp(inf); ru != nil {
			s += fmt.Sprintf("; next best %s: %s", ru.Family, ru.ExplainedText())
		}
		out = append(out, s)
	}
	switch inf.Family {
	case limiter.TokenBucket:
		if inf.RefillS > 0 {
			out = append(out, clumpFact(o, inf), fmt.Sprintf("older Envoy local_ratelimit (max_tokens %d, tokens_per_fill %s, fill_interval %ss) and bucket4j refillIntervally behave the same",
				inf.Burst, fnum(inf.tokensPerFill()), fnum(inf.RefillS)))
			break
		}
		out = append(out, fmt.Sprintf("nginx limit_req rate=%sr/s burst=%d nodelay behaves the same (GCRA ≡ token bucket of capacity burst+1)", fnum(inf.RatePerS), inf.Burst-1))
	case limiter.FixedWindow:
		if inf.Alignment == limiter.AlignStart && inf.Penalty == nil && (inf.CountsRejected == nil || !*inf.CountsRejected) {
			// fullFillWindows: the same function under a bucket's name.
			out = append(out, fmt.Sprintf("a token bucket of %d refilled to capacity every %s s behaves the same (sethvargo/go-limiter; Envoy local_ratelimit with tokens_per_fill ≥ max_tokens)",
				inf.Limit, fnum(inf.WindowS)))
		}
	case limiter.LeakyShaping:
		if inf.Queue == QueueUnbounded {
			break // a pacer: pacerFact says it
		}
		if inf.Delay > 0 {
			out = append(out, fmt.Sprintf("this is nginx limit_req rate=%sr/s burst=%d delay=%d: of a burst after idle the first %d pass at once, the next %d are queued 1/r apart", fnum(inf.RatePerS), inf.Burst, inf.Delay, inf.Delay+1, inf.Burst-inf.Delay))
			break
		}
		out = append(out, fmt.Sprintf("this is nginx limit_req rate=%sr/s burst=%d without nodelay: excess requests are queued 1/r apart", fnum(inf.RatePerS), inf.Burst))
	case limiter.Tiers:
		if f := tiersFact(o, inf); f != "" {
			out = append(out, f)
		}
	}
	out = append(out, replicaFacts(replicaFindings(o))...) // replicas.go
	if _, fact := storeFailure(o, inf); fact != "" {
		out = append(out, fact) // storefail.go
	}
	return append(out, scopeFacts(inf)...) // scope.go
}

// clumpFact says how an interval refill's capacity came back in the trace:
// in clumps at the fill instants, nothing in between.
func clumpFact(o *observation.Observation, inf Inference) string {
	s := fmt.Sprintf("capacity returns in clumps of %s every %s s", fnum(inf.tokensPerFill()), fnum(inf.RefillS))
	if inf.PhaseS != nil {
		s += fmt.Sprintf(" (interval refill at phase %s s)", fnum(*inf.PhaseS))
	}
	s += ", not continuously"
	if sizes, _ := fit.Clumps(o.Phase(observation.PhaseTrace)); len(sizes) > 0 {
		s += fmt.Sprintf(": the recovery trace was admitted in %d runs of %s, rejected in between; a client gains nothing by waiting less than the next fill", len(sizes), runsText(sizes))
	}
	return s
}

// runsText lists run sizes, "10, 10 and 9".
func runsText(sizes []int) string {
	s := ""
	for i, n := range sizes {
		switch {
		case i == 0:
		case i == len(sizes)-1:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(n)
	}
	return s
}

func runnerUp(inf Inference) *Alternative {
	var best *Alternative
	for i := range inf.Alternatives {
		a := &inf.Alternatives[i]
		if !a.Equivalent && (best == nil || a.Explained > best.Explained) {
			best = a
		}
	}
	return best
}

// lockoutFact describes the longest time the trace found the key shut
// before an admission, and the silence that reopened it: what a client that
// retries without pause would live through.
func lockoutFact(o *observation.Observation) string {
	tr := o.Phase(observation.PhaseTrace)
	var shutFrom, bestShut, bestQuiet time.Duration = -1, 0, 0
	knocks, bestKnocks := 0, 0
	for i := range tr {
		r := &tr[i]
		switch {
		case !observation.Decided(r):
		case r.Rejected():
			if shutFrom < 0 {
				shutFrom, knocks = r.Sent, 0
			}
			knocks++
		case shutFrom >= 0:
			if shut := r.Sent - shutFrom; shut > bestShut {
				bestShut, bestQuiet, bestKnocks = shut, r.Sent-tr[i-1].Sent, knocks
			}
			shutFrom = -1
		}
	}
	if bestShut == 0 {
		return ""
	}
	return fmt.Sprintf("every denied attempt counts: a client that retries without pause stays blocked (%d denied attempts over %.1f s kept it shut); %.1f s of silence reopened it",
		bestKnocks, bestShut.Seconds(), bestQuiet.Seconds())
}
