package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// obsBuilder records results on a virtual clock.
type obsBuilder struct{ obs *observation.Observation }

func newObs() *obsBuilder {
	return &obsBuilder{obs: &observation.Observation{Start: epoch, RTT: time.Millisecond,
		Budget: observation.Budget{MaxRequests: DefaultMaxRequests, MaxTime: DefaultMaxTime}}}
}

// add records n results of phase sent at at, each answered after latency
// (plus i·spacing for the i-th) with status (0 with err for a failure).
func (b *obsBuilder) add(phase string, n int, at, latency, spacing time.Duration, status int, err string) *obsBuilder {
	for i := range n {
		done := at + latency + time.Duration(i)*spacing
		b.obs.Results = append(b.obs.Results, results.Result{Seq: len(b.obs.Results) + 1, Phase: phase, Scheduled: at, Sent: at,
			FirstByte: done, Done: done, Status: status, Error: err})
	}
	return b
}

// spaced records n results sent gap apart.
func (b *obsBuilder) spaced(phase string, n int, at, gap time.Duration, status int) *obsBuilder {
	for i := range n {
		b.add(phase, 1, at+time.Duration(i)*gap, time.Millisecond, 0, status, "")
	}
	return b
}

func (b *obsBuilder) calibrated() *obsBuilder {
	return b.spaced(observation.PhaseCalibrate, 3, 0, 200*time.Millisecond, 200)
}

const ms = time.Millisecond

func TestEarnedAnswers(t *testing.T) {
	burst := 1000 * ms
	cases := []struct {
		name   string
		obs    *observation.Observation
		family string
		reason string // a substring of the reason when inconclusive
	}{
		{"interrupted in the burst", func() *observation.Observation {
			o := newObs().calibrated().add(observation.PhaseBurst, 40, burst, ms, 0, 200, "").obs
			o.Stopped = observation.StopInterrupted
			return o
		}(), Inconclusive, "interrupted (during the burst phase, after 43 requests"},
		{"no burst", newObs().calibrated().obs, Inconclusive, "the burst phase did not run"},
		{"a burst that timed out", newObs().calibrated().add(observation.PhaseBurst, 60, burst, ms, 0, 200, "").
			add(observation.PhaseBurst, 40, burst, 10*time.Second, 0, 0, "timeout after 10s").obs, Inconclusive, "40 of the 100 requests of the burst got no answer (timeout after 10s)"},
		{"nothing rejected, not pushed", newObs().calibrated().add(observation.PhaseBurst, 100, burst, ms, 0, 200, "").obs,
			Inconclusive, "push hard enough to rule a limit out: 0 requests were sustained after the bursts (at least 100 needed)"},
		{"nothing rejected, pushed", newObs().calibrated().add(observation.PhaseBurst, 100, burst, ms, 0, 200, "").
			add(observation.PhaseBurst+"-1", 400, 2*time.Second, ms, 0, 200, "").spaced(observation.PhaseSustain, 200, 3*time.Second, 10*ms, 200).obs,
			limiter.None, ""},
		{"a pacer: admits all, one every 50 ms", newObs().calibrated().add(observation.PhaseBurst, 100, burst, ms, 50*ms, 200, "").obs,
			limiter.LeakyShaping, ""},
		{"a pacer holding half a burst beyond the timeout", newObs().calibrated().add(observation.PhaseBurst, 50, burst, ms, 100*ms, 200, "").
			add(observation.PhaseBurst, 50, burst, 10*time.Second, 0, 0, "timeout waiting for 127.0.0.1:1").obs,
			limiter.LeakyShaping, ""},
		{"held back, but in no pacer's staircase", newObs().calibrated().add(observation.PhaseBurst, 100, burst, ms, 50*ms, 200, "").
			spaced(observation.PhaseSustain, 200, 30*time.Second, 10*ms, 200).obs,
			Inconclusive, "no pacer's rate explains the delays"},
		{"limited, never traced", newObs().calibrated().add(observation.PhaseBurst, 10, burst, ms, 0, 200, "").add(observation.PhaseBurst, 30, burst, ms, 0, 429, "").obs,
			Inconclusive, "the recovery trace that shows how capacity returns did not run (0 decided requests"},
		// A window longer than the run: the trace knocks, nothing returns.
		{"limited, traced, never recovered", newObs().calibrated().add(observation.PhaseBurst, 10, burst, ms, 0, 200, "").add(observation.PhaseBurst, 30, burst, ms, 0, 429, "").
			spaced(observation.PhaseTrace, 40, burst+10*ms, 25*ms, 429).obs,
			Inconclusive, "capacity never came back: nothing was admitted in the 40 requests of the 1.0 s"},
		// One admission in the trace is a return of capacity to fit.
		{"limited, traced, recovered", newObs().calibrated().add(observation.PhaseBurst, 10, burst, ms, 0, 200, "").add(observation.PhaseBurst, 30, burst, ms, 0, 429, "").
			spaced(observation.PhaseTrace, 40, burst+10*ms, 25*ms, 429).spaced(observation.PhaseTrace, 1, burst+time.Second, 0, 200).obs,
			"", ""},
	}
	for _, c := range cases {
		inf := Infer(c.obs)
		if c.family == "" { // any finding, but not this reason
			if strings.Contains(inf.Reason, "never came back") {
				t.Errorf("%s: %s (reason %q)", c.name, inf.Summary(), inf.Reason)
			}
			continue
		}
		if inf.Family != c.family || !strings.Contains(inf.Reason, c.reason) {
			t.Errorf("%s: %s (reason %q); want %s %q", c.name, inf.Summary(), inf.Reason, c.family, c.reason)
		}
	}
}

// "none" says how hard it pushed, and its confidence grows with the push
// but never reaches that of a confident answer.
func TestNoneConfidenceGrowsWithThePush(t *testing.T) {
	small := newObs().calibrated().add(observation.PhaseBurst, 100, time.Second, ms, 0, 200, "").spaced(observation.PhaseSustain, 100, 2*time.Second, 10*ms, 200).obs
	big := newObs().calibrated().add(observation.PhaseBurst, 100, time.Second, ms, 0, 200, "").add(observation.PhaseBurst+"-1", 1600, 2*time.Second, ms, 0, 200, "").
		spaced(observation.PhaseSustain, 200, 3*time.Second, 10*ms, 200).obs
	a, b := Infer(small), Infer(big)
	if a.Family != limiter.None || b.Family != limiter.None {
		t.Fatalf("families %s, %s", a.Summary(), b.Summary())
	}
	if !(a.Confidence == 0.5 && b.Confidence > a.Confidence && b.Confidence <= 0.75) {
		t.Errorf("confidence %.2f (burst 100) and %.2f (burst 1600); want 0.5 < second ≤ 0.75", a.Confidence, b.Confidence)
	}
	if b.Push == nil || b.Push.LargestBurst != 1600 || b.Push.Admitted != 1900 || !strings.Contains(b.Summary(), "up to 1600 at once and 1900 in") {
		t.Errorf("push %+v, summary %q", b.Push, b.Summary())
	}
}

// The starvation reason names the budget and what would hold the plan.
func TestUnearnedReasonNamesTheBudget(t *testing.T) {
	o := newObs().calibrated().add(observation.PhaseBurst, 100, time.Second, ms, 0, 200, "").obs
	o.Budget = observation.Budget{MaxRequests: 310, MaxTime: 20 * time.Second}
	inf := Infer(o)
	if !strings.Contains(inf.Reason, "budget 310 requests and 20s; 103 sent; about 703 requests would hold it") {
		t.Errorf("reason %q", inf.Reason)
	}
}
