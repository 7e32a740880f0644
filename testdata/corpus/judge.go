package corpus

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratecheck/ratecheck/probe"
)

// Verdicts of one probe against the truth.
const (
	NamedRight   = "named right"
	Inconclusive = "inconclusive"
	WrongSure    = "WRONG, sure"   // named wrong with confidence ≥ SureConfidence
	WrongUnsure  = "wrong, unsure" // named wrong with lower confidence
	ParamsOff    = "family right, parameters off"
)

// SureConfidence is the confidence at and above which a wrong answer is a
// failure for every entry, inside the model space or not.
const SureConfidence = 0.8

// Judgement is a probe's inference scored against an entry's truth, with the
// bars of probe/selftest: rate and limit within ±10%, burst within
// ±max(1, 10%), window within ±10%; for a fixed window or a sliding counter
// (HAProxy's grid follows each key's first request) inside the model
// space, the alignment too.
type Judgement struct {
	FamilyOK  bool
	ParamErrs []string
	Verdict   string
}

// Judge scores inf against t.
func Judge(t Truth, inf probe.Inference) Judgement {
	var j Judgement
	j.FamilyOK = inf.Family == t.Family
	if j.FamilyOK {
		rel := func(name string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("%s %g, truth %g", name, got, want))
			}
		}
		switch t.Family {
		case "token_bucket":
			rel("rate", inf.RatePerS, t.Rate, 0.1*t.Rate)
			rel("burst", float64(inf.Burst), float64(t.Burst), math.Max(1, 0.1*float64(t.Burst)))
			// An interval refill must be named with its interval, unless
			// each fill is a single token: then it is a continuous
			// refill to within one tick, and either answer is right.
			switch {
			case t.Refill > 0 && inf.RefillS > 0:
				rel("refill", inf.RefillS, t.Refill.Seconds(), 0.1*t.Refill.Seconds())
			case t.Refill > 0 && t.Rate*t.Refill.Seconds() >= 2:
				j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("continuous refill, truth %g tokens at once every %s", t.Rate*t.Refill.Seconds(), t.Refill))
			case t.Refill == 0 && inf.RefillS > 0:
				j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("interval refill every %g s, truth continuous", inf.RefillS))
			}
		case "leaky_shaping":
			rel("rate", inf.RatePerS, t.Rate, 0.1*t.Rate)
			if t.Queue == "unbounded" && inf.Queue != "unbounded" {
				j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("queue %q, truth unbounded (a pacer that never rejects)", inf.Queue))
			}
		case "fixed_window", "sliding_log", "sliding_counter":
			rel("limit", float64(inf.Limit), float64(t.Limit), 0.1*float64(t.Limit))
			rel("window", inf.WindowS, t.Window.Seconds(), 0.1*t.Window.Seconds())
			// "wall or first (indistinguishable here)" is not wrong about
			// either: the probe says it could not tell.
			gridded := t.Family == "fixed_window" || t.Family == "sliding_counter" && t.Align != ""
			if gridded && t.Outside == "" && !alignmentAllows(inf.Alignment, t.Align) {
				j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("alignment %q, truth %q", inf.Alignment, t.Align))
			}
			// Whether denied attempts count is visible in admissions only
			// for the sliding families (a fixed window that counts them
			// shows it in Remaining alone), so only they are judged on it.
			if t.Family != "fixed_window" {
				if got := inf.CountsRejected != nil && *inf.CountsRejected; got != t.CountsRejected {
					j.ParamErrs = append(j.ParamErrs, fmt.Sprintf("counts_rejected %v, truth %v", got, t.CountsRejected))
				}
			}
		}
	}
	switch {
	case inf.Family == probe.Inconclusive:
		j.Verdict = Inconclusive
	case j.FamilyOK && len(j.ParamErrs) == 0:
		j.Verdict = NamedRight
	case j.FamilyOK:
		j.Verdict = ParamsOff
	case inf.Confidence >= SureConfidence:
		j.Verdict = WrongSure
	default:
		j.Verdict = WrongUnsure
	}
	if j.Verdict == ParamsOff && inf.Confidence >= SureConfidence {
		j.Verdict = WrongSure + " (parameters)"
	}
	return j
}

// alignmentAllows reports whether the probe's alignment names want, alone
// or as one of the alignments it could not tell apart.
func alignmentAllows(got, want string) bool {
	if got == want {
		return true
	}
	// A grid fixed when the key was created (its first request) and never
	// re-anchored is, to a client, a grid at a phase it cannot know (start)
	// — or, while the client keeps sending, one that opens at its first
	// request after each boundary (first).
	if want == "creation" {
		return alignmentAllows(got, "start") || alignmentAllows(got, "first")
	}
	head, _, _ := strings.Cut(got, " (")
	for _, a := range strings.Split(head, " or ") {
		if a == want {
			return true
		}
	}
	return false
}

// Sure reports a wrong answer given with confidence ≥ SureConfidence.
func (j Judgement) Sure() bool {
	return j.Verdict == WrongSure || j.Verdict == WrongSure+" (parameters)"
}

// Inferred is a one-line rendering of the inference's family and numbers.
func Inferred(inf probe.Inference) string {
	switch inf.Family {
	case "token_bucket":
		if inf.RefillS > 0 {
			return fmt.Sprintf("token_bucket %.3g/s b=%d refill=%gs", inf.RatePerS, inf.Burst, inf.RefillS)
		}
		return fmt.Sprintf("token_bucket %.3g/s b=%d", inf.RatePerS, inf.Burst)
	case "leaky_shaping":
		if inf.Queue == "unbounded" {
			return fmt.Sprintf("leaky_shaping %.3g/s queue=unbounded", inf.RatePerS)
		}
		return fmt.Sprintf("leaky_shaping %.3g/s burst=%d", inf.RatePerS, inf.Burst)
	case "fixed_window", "sliding_log", "sliding_counter":
		s := fmt.Sprintf("%s %d/%.3gs", inf.Family, inf.Limit, inf.WindowS)
		if inf.Alignment != "" {
			s += " " + inf.Alignment
		}
		if inf.CountsRejected != nil && *inf.CountsRejected {
			s += " counts-rejected"
		}
		return s
	case "concurrency":
		return fmt.Sprintf("concurrency %d", inf.MaxInflight)
	}
	return inf.Family
}
