package grade

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// A probe whose target stopped answering, or interrupted, shows no grade:
// a grade is a pass/fail verdict, and the run that would earn one did not
// happen. A run with a failure that cut nothing is graded.
func TestRunsCutShortAreNotGraded(t *testing.T) {
	lost := 3.0
	cases := []struct {
		name   string
		res    probe.Result
		graded bool
	}{
		{"complete", probe.Result{Observation: &probe.Observation{}}, true},
		{"one failure, nothing cut", probe.Result{Observation: &probe.Observation{},
			Inference: probe.Inference{Failures: &probe.Failures{Failed: 1, Of: 300, FirstError: "connection reset"}}}, true},
		{"interrupted", probe.Result{Observation: &probe.Observation{Stopped: probe.StopInterrupted}}, false},
		{"target lost", probe.Result{Observation: &probe.Observation{},
			Inference: probe.Inference{Failures: &probe.Failures{Failed: 373, Of: 505, LostAtS: &lost}}}, false},
		{"a phase cut", probe.Result{Observation: &probe.Observation{},
			Inference: probe.Inference{Failures: &probe.Failures{Failed: 5, Of: 300, CutPhases: []string{"scope-ref"}}}}, false},
	}
	for _, c := range cases {
		if g := OfProbe(&c.res); (g != nil) != c.graded {
			t.Errorf("%s: graded %v, want %v", c.name, g != nil, c.graded)
		}
	}
}

// An attack profile's run is graded on its answers unless it was
// interrupted: cut short, it shows no pass/fail verdict (compare's table).
func TestAttacksCutShortAreNotGraded(t *testing.T) {
	rs := []*results.Result{{Seq: 1, Status: 200}, {Seq: 2, Status: 429, Headers: map[string]string{"retry-after": "1"}}}
	for _, c := range []struct {
		stopped attack.StopReason
		graded  bool
	}{{"", true}, {attack.StopRequestBudget, true}, {attack.StopTimeBudget, true}, {attack.StopInterrupted, false}} {
		if g := OfAttack(time.Now(), rs, string(c.stopped)); (g != nil) != c.graded {
			t.Errorf("stopped %q: graded %v, want %v", c.stopped, g != nil, c.graded)
		}
	}
}

// A burst that was sent but got no limiter decision is no absent burst:
// the skip says what its requests got (a server answering 500 to all).
func TestBurstWithoutDecisionsIsNamed(t *testing.T) {
	b := newBuilder()
	for range 100 {
		b.add("burst", 1000, 500)
	}
	c := check(t, b.grade(probe.Inference{Family: probe.Inconclusive}), "burst.over-admission", Skip)
	if want := "none of the 100 burst requests got a limiter decision (100 × 500)"; c.Actual != want {
		t.Errorf("skip reason %q, want %q", c.Actual, want)
	}
}

// An unsure inference says nothing of the refill: a burst of a bucket that
// got one refill during it (11 against an advertised 10) is not called an
// over-admission because the inference, at 0.3, named a window.
func TestUnsureInferenceGrantsABurstOneRefill(t *testing.T) {
	b := newBuilder()
	for i := range 11 {
		b.add("burst", 1000+0.01*float64(i), 200, xq(10, 10-1-min(i, 9), resetAt)...)
	}
	unsure := probe.Inference{Family: "fixed_window", Limit: 10, WindowS: 1, Confidence: 0.3}
	check(t, b.grade(unsure), "burst.over-admission", Pass)
	sure := unsure
	sure.Confidence = 0.9
	check(t, b.grade(sure), "burst.over-admission", Fail)
}
