package report

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// A probe's entry counts the statuses of the requests that got one.
func TestComparedProbe(t *testing.T) {
	obs := &probe.Observation{Start: time.Now(), Results: []results.Result{{Status: 200}, {Status: 429}, {Status: 429}, {Error: "timeout"}}}
	res := &probe.Result{Observation: obs, Inference: probe.Inference{Family: "none"}}
	ct := ComparedProbe("builtin:x", "http://u/", "r.jsonl", res, nil)
	if ct.Requests != 4 || ct.Statuses[429] != 2 || ct.Statuses[200] != 1 || len(ct.Statuses) != 2 || ct.Inference.Family != "none" || ct.Run == nil {
		t.Errorf("%+v", ct)
	}
}

// A burst's sustained-rate cell says the tail it was measured over.
func TestTailPlan(t *testing.T) {
	if got := TailPlan("20/s", 3*time.Second); got != "tail at 20/s for 3s" {
		t.Errorf("%q", got)
	}
}
