package probe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/observation"
)

// A quota of an hour, on the simulator with default options: no family is
// named, but what the run measured is the partial answer — the capacity
// admitted from idle, the remaining count counting it down, the status —
// and the window is the headers' declaration, never an observation.
func TestSimQuotaOfAnHourIsAPartialAnswer(t *testing.T) {
	res := probeSim(t, "builtin:fixed_window?limit=60&window=1h", "", Options{})
	inf, q := res.Inference, res.Inference.Quota
	if inf.Family != Inconclusive || q == nil {
		t.Fatalf("named %s, quota %+v: want inconclusive with the partial answer", inf.Summary(), q)
	}
	if q.Capacity != 60 || q.Status != 429 || q.Remaining == nil || !q.Remaining.CountedDown {
		t.Errorf("partial answer %+v (remaining %+v): want 60 admitted, 429, counted down", q, q.Remaining)
	}
	if q.DeclaredWindowS != 3600 || q.DeclaredLimit != 60 || q.LockedS <= 0 {
		t.Errorf("declared %d per %g s, locked %g s: want 60 per 3600 s declared and a lock measured", q.DeclaredLimit, q.DeclaredWindowS, q.LockedS)
	}
	if !strings.Contains(inf.Reason, "the headers declare a window of 1h0m0s") || strings.Contains(inf.Reason, "--max-time of") {
		t.Errorf("reason %q: want the declared hour, and no --max-time to wait it out", inf.Reason)
	}
	if res.Elapsed > DefaultMaxTime {
		t.Errorf("ran %s, want within a minute", res.Elapsed)
	}
}

// A declared quota the request budget cannot exhaust is refused after the
// calibration, naming the budget that would measure it; given that
// budget, the probe measures it. (A budget of 500 against 600 an hour:
// the default 2,000 against 5,000 is the same rule, at ten times the
// CPU.)
func TestSimQuotaTheBudgetCannotSpendIsRefused(t *testing.T) {
	const target = "builtin:fixed_window?limit=600&window=1h"
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), req, simOptions(t, target, simNetwork, Options{MaxRequests: 500}))
	var costly *QuotaCostError
	if !errors.As(err, &costly) || costly.Limit != 600 || costly.Need <= 500 {
		t.Fatalf("err %v: want a QuotaCostError for 600 per hour", err)
	}
	if n, cal := len(res.Observation.Results), len(res.Observation.Phase(observation.PhaseCalibrate)); n != cal || n == 0 {
		t.Errorf("%d requests sent before the refusal, want the %d of the calibration", n, cal)
	}
	res = probeSim(t, target, "", Options{MaxRequests: costly.Need})
	if q := res.Inference.Quota; q == nil || q.Capacity != 600 {
		t.Errorf("with --max-requests %d: %s, quota %+v; want 600 measured", costly.Need, res.Inference.Summary(), q)
	}
}
