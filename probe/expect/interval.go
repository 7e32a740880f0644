package expect

import (
	"fmt"
	"math"

	"github.com/ratecheck/ratecheck/probe"
)

// A measured value is an interval, not a point: the inference ties every
// value within its ±, so the run tells only as much as that interval does.
// An expectation passes when the whole measured interval lies inside the
// tolerated one, fails when the two are disjoint (the run shows the value
// is elsewhere), and is untested when they overlap: "32.5 s ± 27.5 s"
// neither confirms nor refutes "window=10s". An exact value (± 0) is a
// point, inside or outside.

// measure is an inferred value and the interval [lo, hi] the inference
// allows.
type measure struct {
	v, lo, hi float64
	// err is the ± of a symmetric interval (0: exact); < 0 for a derived,
	// asymmetric one.
	err float64
}

// around is v ± err; the parameters are never negative.
func around(v, err float64) measure {
	return measure{v: v, lo: math.Max(0, v-err), hi: v + err, err: err}
}

// windowRate is a window family's rate, L per W, over every L and W the
// inference allows: [L_lo / W_hi, L_hi / W_lo]. Deriving it from the same
// intervals as the limit and the window keeps their verdicts on one run
// from contradicting each other.
func windowRate(inf probe.Inference) measure {
	l, lErr := float64(inf.Limit), float64(inf.LimitErr)
	w, wErr := inf.WindowS, inf.WindowErrS
	m := measure{v: l / w, lo: math.Max(0, l-lErr) / (w + wErr), hi: math.Inf(1), err: -1}
	if w > wErr {
		m.hi = (l + lErr) / (w - wErr)
	}
	if lErr == 0 && wErr == 0 {
		m.err = 0
	}
	return m
}

// text is the measured value in e's unit, with its interval.
func (m measure) text(e Expectation) string {
	switch {
	case m.err >= 0:
		return plusMinus(m.v, m.err, e.unitSuffix())
	case math.IsInf(m.hi, 1):
		return fmt.Sprintf("%s (%s or more)", e.unit(m.v), e.unit(m.lo))
	}
	return fmt.Sprintf("%s (%s – %s)", e.unit(m.v), e.unit(m.lo), e.unit(m.hi))
}

// plusMinus writes "v unit", or "v ± err unit" when err > 0.
func plusMinus(v, err float64, unit string) string {
	if err > 0 {
		return fmt.Sprintf("%s ± %s%s", fnum(v), fnum(err), unit)
	}
	return fnum(v) + unit
}

// edgeSlack absorbs floating-point rounding at an interval's edge (10 %
// of 60 s is 6.000000000000001 s), relative to the expected value.
const edgeSlack = 1e-9

// judge compares the measured interval with e's tolerated one.
func judge(e Expectation, m measure) (result, note string) {
	tol, _ := e.tolerance()
	lo, hi := math.Max(0, e.Num-tol), e.Num+tol
	eps := edgeSlack * math.Max(1, e.Num)
	switch {
	case m.lo >= lo-eps && m.hi <= hi+eps:
		return Pass, ""
	case m.hi < lo-eps || m.lo > hi+eps:
		return Fail, ""
	}
	how := "reaches past the edge of"
	if m.hi-m.lo > hi-lo {
		how = "is wider than"
	}
	return Untested, fmt.Sprintf("measured %s %s the expected %s: the run cannot tell", m.text(e), how, e.Expected())
}

// evalNumber checks a numeric expectation (rate, burst, limit, window,
// max-inflight) against the inference.
func evalNumber(e Expectation, inf probe.Inference) (result, actual, note string) {
	m, ok, why := param(e.Key, inf)
	if !ok {
		return Fail, why, ""
	}
	actual = m.text(e)
	if extra := paramNote(e.Key, inf); extra != "" {
		actual += " " + extra
	}
	result, note = judge(e, m)
	return result, actual, note
}
