package expect

import (
	"fmt"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

var gradeLetters = grade.Letters()

// Facts is what one probe established, as the expectations read it.
type Facts struct {
	Inference probe.Inference
	// Requests is how many requests the probe sent.
	Requests int
	// Rejections counts the rejected responses by status.
	Rejections map[int]int
	// RetryAfter counts the rejections that carried a Retry-After field.
	RetryAfter int
	// KeyTested says the scope trials named a scope (scope experiment).
	KeyTested bool
	// Grade is the response-contract letter; "" when not graded, and
	// grade.NotGraded when nothing was rejected.
	Grade string
	// Interrupted says the run was cut short: nothing it showed is a test,
	// but for what its data refutes outright (a rejection: a limit; a
	// burst admitting more than a stated capacity).
	Interrupted bool
	// Observation is the run itself, for what its data refutes outright
	// (stated.go); nil when only the inference is known.
	Observation *probe.Observation `json:"-"`
}

// FactsFrom gathers the facts of one probe: its observation, the inference
// and the grade letter ("" when the run was not graded).
func FactsFrom(obs *probe.Observation, inf probe.Inference, gradeLetter string) Facts {
	f := Facts{Inference: inf, Rejections: map[int]int{}, Grade: gradeLetter, Observation: obs}
	if obs == nil {
		return f
	}
	f.Requests = len(obs.Results)
	f.Interrupted = obs.Stopped == probe.StopInterrupted
	for i := range obs.Results {
		r := &obs.Results[i]
		if r.Error != "" || !r.Rejected() {
			continue
		}
		f.Rejections[r.Status]++
		if r.Headers["retry-after"] != "" {
			f.RetryAfter++
		}
	}
	f.KeyTested = inf.Scope != "" && inf.Scope != probe.ScopeUntested
	return f
}

func (f Facts) rejected() int {
	n := 0
	for _, c := range f.Rejections {
		n += c
	}
	return n
}

// Outcome is one expectation checked.
type Outcome struct {
	Expectation string `json:"expectation"` // as written, e.g. "rate=10/s±10%"
	Key         string `json:"key"`
	Expected    string `json:"expected"`
	Actual      string `json:"actual"`
	Result      string `json:"result"` // pass, fail or untested
	Note        string `json:"note,omitempty"`
}

// Message is the one-line account of an outcome: "rate=10/s±10%: expected
// 10/s ± 10% (9/s – 11/s), actual 12.5 ± 0.1/s".
func (o Outcome) Message() string {
	s := fmt.Sprintf("%s: expected %s, actual %s", o.Expectation, o.Expected, o.Actual)
	if o.Note != "" {
		s += " (" + o.Note + ")"
	}
	return s
}

// Evaluate checks every expectation against the facts, in the given order.
// A capacity a burst of the run exceeded fails whatever else the run
// showed, even cut short (stated.go).
func Evaluate(exps []Expectation, f Facts) []Outcome {
	out := make([]Outcome, 0, len(exps))
	refuted := refutations(exps, f.Observation)
	for i, e := range exps {
		o := Outcome{Expectation: e.Text, Key: e.Key, Expected: e.Expected()}
		if why, ok := refuted[i]; ok {
			o.Result, o.Actual, o.Note = Fail, why, "refuted by the burst: a limiter never admits more at once than its capacity"
		} else {
			o.Result, o.Actual, o.Note = evaluate(e, f)
		}
		out = append(out, o)
	}
	return out
}

// Tally counts the outcomes by result.
func Tally(outs []Outcome) (pass, fail, untested int) {
	for _, o := range outs {
		switch o.Result {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			untested++
		}
	}
	return pass, fail, untested
}

// Verdict is the overall result of a list of outcomes: fail when any
// failed, else untested when any was not exercised (or there were none),
// else pass.
func Verdict(outs []Outcome) string {
	_, fail, untested := Tally(outs)
	switch {
	case fail > 0:
		return Fail
	case untested > 0 || len(outs) == 0:
		return Untested
	}
	return Pass
}

// Overall combines the verdicts of several runs: fail if any failed, else
// untested if any was not (fully) tested or there were none, else pass.
func Overall(verdicts []string) string {
	out := Untested
	for i, v := range verdicts {
		switch {
		case v == Fail:
			return Fail
		case v == Untested:
			out = Untested
		case i == 0 || out == Pass:
			out = v
		}
	}
	return out
}

func evaluate(e Expectation, f Facts) (result, actual, note string) {
	inf := f.Inference
	if q := inf.Quota; q != nil && !f.Interrupted {
		if result, actual, note, ok := evalQuota(e, f, q); ok {
			return result, actual, note
		}
	}
	if e.Key == KeyBypass && !f.Interrupted {
		if result, actual, note, ok := evalBypass(f); ok {
			return result, actual, note
		}
	}
	// A cut-short or inconclusive probe tests nothing — except that a
	// rejection it saw refutes "no limit", and a bypass trial that got
	// around the limit refutes "bypass=none", whatever else it got wrong.
	if f.Interrupted || !inferred(inf) {
		if refutesNone(e, f) {
			return Fail, fmt.Sprintf("a limit (%d of %d requests rejected)", f.rejected(), f.Requests), "untested otherwise: " + whyUntested(f)
		}
		actual = "inconclusive"
		if f.Interrupted {
			actual = "not tested"
		}
		return Untested, actual, whyUntested(f)
	}
	switch e.Key {
	case KeyStatus:
		return evalStatus(e, f)
	case KeyRetryAfter:
		return evalRetryAfter(e, f)
	case KeyMinGrade:
		return evalGrade(e, f)
	case KeyScope:
		if !f.KeyTested {
			why := f.Inference.ScopeReason
			if why == "" {
				why = "the scope trials named no scope"
			}
			return Untested, "not tested", why
		}
		return is(inf.Scope == e.Words[0]), inf.Scope, ""
	}
	// Everything else reads the inference.
	if e.Key == KeyFamily {
		return evalFamily(e, inf)
	}
	return evalNumber(e, inf)
}

// evalQuota judges what the partial answer of a quota the run could not
// wait out measured (probe.Quota): the limit is the capacity admitted from
// idle, and the rejections' status and Retry-After are what they were. The
// window was never observed: an expectation on it is untested, whatever
// the headers declare. ok is false for the keys it cannot judge.
func evalQuota(e Expectation, f Facts, q *probe.Quota) (result, actual, note string, ok bool) {
	switch e.Key {
	case KeyLimit:
		m := around(float64(q.Capacity), 0)
		result, note = judge(e, m)
		return result, m.text(e) + " (admitted from idle before the key shut: the quota's partial answer)", note, true
	case KeyWindow, KeyRate:
		actual = "not observed"
		if q.DeclaredWindowS > 0 {
			actual = fmt.Sprintf("declared %g s by the headers, not observed", q.DeclaredWindowS)
		}
		return Untested, actual, fmt.Sprintf("capacity never came back in the %.1f s the key was watched: the window is longer, and only the headers speak of it", q.LockedS), true
	case KeyStatus:
		result, actual, note = evalStatus(e, f)
		return result, actual, note, true
	case KeyRetryAfter:
		result, actual, note = evalRetryAfter(e, f)
		return result, actual, note, true
	}
	return "", "", "", false
}

func is(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

// inferred reports whether the probe named a family (not inconclusive).
func inferred(inf probe.Inference) bool {
	return inf.Family != probe.Inconclusive && inf.Family != ""
}

// refutesNone reports whether e expects no limit and the run saw the
// limiter reject a request: certain even on a cut-short or inconclusive run.
func refutesNone(e Expectation, f Facts) bool {
	return e.Key == KeyFamily && e.Words[0] == limiter.None && f.rejected() > 0
}

// whyUntested says why a cut-short or inconclusive run tests nothing.
func whyUntested(f Facts) string {
	switch {
	case f.Interrupted:
		return "the probe was interrupted: a cut-short run tests nothing"
	case f.Inference.Reason != "":
		return f.Inference.Reason
	}
	return "no inference"
}

func evalFamily(e Expectation, inf probe.Inference) (string, string, string) {
	want := e.Words[0]
	if inf.Family == want {
		return Pass, inf.Family, ""
	}
	for _, a := range inf.Alternatives {
		if a.Family == want && a.Equivalent {
			return Pass, inf.Family, fmt.Sprintf("%s explains this run equally well: observationally equivalent here", want)
		}
	}
	actual := inf.Family
	if inf.Family == limiter.None {
		actual = "none (no request was rejected)"
	}
	for _, a := range inf.Alternatives {
		if a.Family == want && a.Explained >= inf.Explained && !a.AtMost {
			// Not named only because the simpler family was preferred (a
			// composition explaining no more than a single family is taken
			// for it): the run refutes neither.
			return Untested, actual, fmt.Sprintf("%s explains as many decisions (%d of %d) as %s: the run cannot tell them apart", want, a.Explained, inf.Decisions, inf.Family)
		}
		if a.Family == want {
			return Fail, actual, fmt.Sprintf("%s explains %s of %d decisions, %s %d", want, a.ExplainedText(), inf.Decisions, inf.Family, inf.Explained)
		}
	}
	return Fail, actual, ""
}

// param is the inferred value of a numeric key with the interval the
// inference allows; ok is false when the inferred family has no such
// parameter, and why says so.
func param(key string, inf probe.Inference) (m measure, ok bool, why string) {
	bucket := inf.Family == limiter.TokenBucket || inf.Family == limiter.LeakyShaping
	window := isWindow(inf.Family)
	switch {
	case key == KeyRate && bucket:
		return around(inf.RatePerS, inf.RateErr), true, ""
	case key == KeyRate && window && inf.WindowS > 0:
		return windowRate(inf), true, ""
	case key == KeyBurst && bucket:
		return around(float64(inf.Burst), float64(inf.BurstErr)), true, ""
	case key == KeyLimit && window:
		return around(float64(inf.Limit), float64(inf.LimitErr)), true, ""
	case key == KeyWindow && window:
		return around(inf.WindowS, inf.WindowErrS), true, ""
	case (key == KeyLimit || key == KeyMaxInflight) && inf.Family == limiter.Concurrency:
		return around(float64(inf.MaxInflight), 0), true, ""
	case inf.Family == limiter.None:
		return m, false, "no limit observed"
	}
	return m, false, fmt.Sprintf("%s has no %s (%s)", inf.Family, key, strings.TrimPrefix(inf.Summary(), inf.Family+": "))
}

func isWindow(family string) bool {
	return family == limiter.FixedWindow || family == limiter.SlidingLog || family == limiter.SlidingCounter
}

// paramNote says where a derived value came from.
func paramNote(key string, inf probe.Inference) string {
	switch {
	case key == KeyRate && isWindow(inf.Family):
		return fmt.Sprintf("(%s: %s per %s)", inf.Family, plusMinus(float64(inf.Limit), float64(inf.LimitErr), ""), plusMinus(inf.WindowS, inf.WindowErrS, "s"))
	case key == KeyLimit && inf.Family == limiter.Concurrency:
		return "(concurrency cap)"
	}
	return ""
}

func evalStatus(e Expectation, f Facts) (string, string, string) {
	if f.rejected() == 0 {
		return Untested, "no request was rejected", fmt.Sprintf("%d requests sent: the limit was never reached", f.Requests)
	}
	codes := make([]int, 0, len(f.Rejections))
	for c := range f.Rejections {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	ok := true
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d ×%d", c, f.Rejections[c])
		if !slices.Contains(e.Words, strconv.Itoa(c)) {
			ok = false
		}
	}
	return is(ok), strings.Join(parts, ", "), ""
}

func evalRetryAfter(e Expectation, f Facts) (string, string, string) {
	n := f.rejected()
	if n == 0 {
		return Untested, "no request was rejected", fmt.Sprintf("%d requests sent: the limit was never reached", f.Requests)
	}
	actual := fmt.Sprintf("Retry-After on %d of %d rejections", f.RetryAfter, n)
	if e.Words[0] == "present" {
		return is(f.RetryAfter == n), actual, ""
	}
	return is(f.RetryAfter == 0), actual, ""
}

func evalGrade(e Expectation, f Facts) (string, string, string) {
	switch f.Grade {
	case "":
		return Untested, "not graded", ""
	case grade.NotGraded:
		return Untested, grade.NotGraded, "no request was rejected: the response contract was not exercised"
	}
	want := slices.Index(gradeLetters, e.Words[0])
	got := slices.Index(gradeLetters, f.Grade)
	if got < 0 {
		return Fail, f.Grade, "not a letter of the rubric"
	}
	return is(got <= want), f.Grade, ""
}

// evalBypass judges bypass=none on the bypass suite (probe/bypass): a trial
// that got around the limit fails it on any run that was not cut short (the
// trial ran, whatever the family); a suite that did not run, or a trial
// that could not be told apart from the limit recovering, leaves it
// untested; otherwise it passes on an inferred run (ok false: the general
// rule for an inconclusive one).
func evalBypass(f Facts) (result, actual, note string, ok bool) {
	s := f.Inference.Bypass
	if s == nil {
		return Untested, "not tested", "the bypass suite did not run (--no-bypass, or the probe never exhausted its key)", true
	}
	if found := s.Found(); len(found) > 0 {
		r := found[0]
		return Fail, fmt.Sprintf("%s got around the limit (%s)", r.Trial, r.What), fmt.Sprintf("requests %v", r.Seqs), true
	}
	var unclear []string
	for _, r := range s.Trials {
		if r.Outcome == bypass.Unclear {
			unclear = append(unclear, r.Trial)
		}
	}
	if len(unclear) > 0 {
		return Untested, "not tested", "could not be told apart from the limit recovering: " + strings.Join(unclear, ", "), true
	}
	if !inferred(f.Inference) {
		return "", "", "", false
	}
	note = ""
	if len(s.NotRun) > 0 {
		note = fmt.Sprintf("%d trials not run: %s", len(s.NotRun), strings.Join(s.NotRun, ", "))
	}
	return Pass, fmt.Sprintf("none of %d trials got around the limit", len(s.Trials)), note, true
}
