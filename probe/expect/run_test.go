package expect

import (
	"errors"
	"testing"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
)

// A run that failed decided nothing: every expectation is untested, noted
// with why, whatever the result holds.
func TestOfRunFailedIsUntested(t *testing.T) {
	exps := []Expectation{mustParse(t, "family=none"), mustParse(t, "rate=10/s")}
	outs, verdict := OfRun(exps, nil, nil, errors.New("unreachable"))
	if verdict != Untested || len(outs) != 2 {
		t.Fatalf("verdict %s, %d outcomes", verdict, len(outs))
	}
	for _, o := range outs {
		if o.Result != Untested || o.Actual != "not tested" || o.Note != "unreachable" || o.Expected == "" {
			t.Errorf("%+v", o)
		}
	}
}

// A run that ran is evaluated on its facts, with the grade's letter.
func TestOfRunEvaluatesTheRun(t *testing.T) {
	res := &probe.Result{Observation: &probe.Observation{}, Inference: tb(10.02, 0.05, 20, 0)}
	exps := []Expectation{mustParse(t, "family=token_bucket"), mustParse(t, "min-grade=B")}
	outs, verdict := OfRun(exps, res, &grade.Report{Letter: "A"}, nil)
	if verdict != Pass || outs[0].Result != Pass || outs[1].Actual != "A" {
		t.Errorf("verdict %s: %+v", verdict, outs)
	}
	if outs, _ := OfRun(exps[1:], res, nil, nil); outs[0].Result != Untested || outs[0].Actual != "not graded" {
		t.Errorf("ungraded: %+v", outs)
	}
}

// An interrupted check is untested, but for a failure its data refutes.
func TestOfCheckInterrupted(t *testing.T) {
	for _, c := range []struct {
		verdicts    []string
		interrupted bool
		want        string
	}{
		{[]string{Pass, Pass}, false, Pass},
		{[]string{Pass, Pass}, true, Untested},
		{[]string{Pass, Fail}, true, Fail},
		{[]string{Pass, Untested}, false, Untested},
		{nil, false, Untested},
	} {
		if got := OfCheck(c.verdicts, c.interrupted); got != c.want {
			t.Errorf("%v interrupted %v: %s, want %s", c.verdicts, c.interrupted, got, c.want)
		}
	}
}
