package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// simulatedWithVolleys is simulated's probe followed, after each of quiets,
// by a volley of n, as the plan's silent waits and deciding experiments
// send: a knocking trace alone, periodic on a virtual clock, lets a
// counting sliding log mimic clumps.
func simulatedWithVolleys(t *testing.T, cfg limiter.Config, burstAt, traceEvery time.Duration, n int, quiets ...time.Duration) *observation.Observation {
	t.Helper()
	return simulatedFromWithVolleys(t, cfg, epoch, burstAt, traceEvery, n, quiets...)
}

// volleyGap spaces a volley's requests as the plan's deciding experiments
// do.
const volleyGap = 3 * time.Millisecond

// simulatedFromWithVolleys is simulatedWithVolleys of a probe that starts
// at start.
func simulatedFromWithVolleys(t *testing.T, cfg limiter.Config, start time.Time, burstAt, traceEvery time.Duration, n int, quiets ...time.Duration) *observation.Observation {
	t.Helper()
	obs := simulated(t, cfg, start, burstAt, traceEvery)
	lim, err := limiter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range obs.Results { // the same decisions, to reach the same state
		lim.Allow("", start.Add(r.Sent+obs.RTT/2))
	}
	for _, quiet := range quiets {
		at := obs.Results[len(obs.Results)-1].Sent + quiet
		for range n {
			status := 429
			if lim.Allow("", start.Add(at+obs.RTT/2)).Allowed {
				status = 200
			}
			obs.Results = append(obs.Results, results.Result{Seq: len(obs.Results) + 1, Phase: observation.PhaseSplit, Scheduled: at, Sent: at,
				FirstByte: at + obs.RTT, Done: at + obs.RTT, Status: status})
			at += volleyGap
		}
	}
	return obs
}

// A bucket of 20 refilled with 10 tokens every second, at fill instants
// 370 ms past each of the probe's seconds: no continuous bucket or window
// explains the clumps, so the fit searches interval refills and names the
// interval, the tokens per fill and the phase.
func TestInferIntervalRefilledBucket(t *testing.T) {
	truth := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20, RefillEvery: time.Second, Origin: epoch.Add(-time.Hour + 370*time.Millisecond)}
	obs := simulatedWithVolleys(t, truth, time.Second+30*time.Millisecond, 50*time.Millisecond, 25, 2*time.Second)
	inf := Infer(obs)
	if inf.Family != limiter.TokenBucket || inf.RefillS != 1 || inf.PhaseS == nil || inf.Explained != inf.Decisions {
		t.Fatalf("inferred %s (refill_s %v, %d of %d explained)", inf.Summary(), inf.RefillS, inf.Explained, inf.Decisions)
	}
	if inf.Burst != 20 || inf.RatePerS < 9.5 || inf.RatePerS > 10.5 || *inf.PhaseS < 0.35 || *inf.PhaseS > 0.39 {
		t.Fatalf("parameters: %s", inf.Summary())
	}
	ev := strings.Join(inf.Evidence, "\n")
	if !strings.Contains(ev, "capacity returns in clumps of 10 every 1 s (interval refill at phase 0.3") || !strings.Contains(ev, "not continuously") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
	// The model the inference names replays the run as the fit scored it.
	cfg, err := inf.Model()
	if err != nil || cfg.RefillEvery <= 0 {
		t.Fatalf("model %+v: %v", cfg, err)
	}
	if r, _ := fit.Replay(obs, cfg); r.Mismatches != 0 {
		t.Fatalf("model replays %d mismatches", r.Mismatches)
	}
	// A continuous bucket at the same rate is not called interval-refilled:
	// the refill search runs only when the plain models fail.
	plain := truth
	plain.RefillEvery, plain.Origin = 0, time.Time{}
	if p := Infer(simulatedWithVolleys(t, plain, time.Second+30*time.Millisecond, 50*time.Millisecond, 25, 2*time.Second)); p.Family != limiter.TokenBucket || p.RefillS != 0 {
		t.Fatalf("a continuous bucket inferred %s", p.Summary())
	}
}

// When every fill is the whole capacity, a bucket refilled every W is a
// fixed window anchored at the server's start: either answer is right if
// its numbers are.
func TestInferWholeFillsAsEitherFamily(t *testing.T) {
	truth := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 10, RefillEvery: time.Second, Origin: epoch.Add(-time.Hour + 620*time.Millisecond)}
	// Two volleys 0.55 s apart, between two fills: a window of 10 per 0.5 s
	// would admit both.
	inf := Infer(simulatedWithVolleys(t, truth, time.Second+30*time.Millisecond, 50*time.Millisecond, 15, 1200*time.Millisecond, 550*time.Millisecond))
	switch inf.Family {
	case limiter.TokenBucket:
		if inf.RefillS != 1 || inf.Burst != 10 || inf.RatePerS < 9.5 || inf.RatePerS > 10.5 {
			t.Fatalf("inferred %s", inf.Summary())
		}
	case limiter.FixedWindow:
		if inf.Alignment != limiter.AlignStart || inf.Limit != 10 || inf.WindowS < 0.98 || inf.WindowS > 1.02 {
			t.Fatalf("inferred %s", inf.Summary())
		}
	default:
		t.Fatalf("inferred %s", inf.Summary())
	}
	if inf.PhaseS == nil || *inf.PhaseS < 0.6 || *inf.PhaseS > 0.64 {
		t.Fatalf("phase: %s", inf.Summary())
	}
}

// A fixed window anchored at the server's start is the same limiter as a
// bucket refilled whole every window: when both explain the run, the
// window is named (the simpler model), not the interval refill.
func TestStartAlignedWindowIsNotCalledAnIntervalRefill(t *testing.T) {
	truth := limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignStart, Origin: epoch.Add(-time.Hour + 300*time.Millisecond)}
	obs := simulatedWithVolleys(t, truth, time.Second+30*time.Millisecond, 50*time.Millisecond, 25, 1500*time.Millisecond)
	evs := obs.Events()
	h := fit.HypothesesOf(obs)
	var tb []fit.Candidate
	for _, f := range fit.FitAll(evs, h, obs.RTT) {
		if f.Family == limiter.TokenBucket {
			tb = f.Best
		}
	}
	// The refill search finds the twin …
	if iv := fit.FitIntervalRefill(evs, h, tb, obs.RTT); len(iv) == 0 || iv[0].Mismatches != 0 {
		t.Fatalf("no interval refill explains the start-aligned window (%d candidates)", len(iv))
	}
	// … and the inference still names the window, the bucket listed as
	// equivalent.
	if inf := Infer(obs); inf.Family != limiter.FixedWindow || inf.Alignment != limiter.AlignStart || inf.RefillS != 0 {
		t.Fatalf("inferred %s", inf.Summary())
	}
}

// A bucket of one refilled every 5.1 ms (196/s) behind a 16 ms round trip,
// simulated (sim:token_bucket?burst=1&rate=195.94/s&rtt=16.4ms&jitter=1.5ms
// &stall=11ms&scope=ip&seed=4047356740470257): the trace sent 6 ms apart,
// then 3, 1.5 and 0.8, and admitted 53 in 3 s, a mean of 18/s. The rate
// grid around that mean missed the truth by an octave and more: the best
// bucket explained 225 of 269 decisions, and a concurrency cap of one was
// named at 0.92. Where rejections came between admissions, the admissions
// were 5 ms apart: that rate is searched too.
func TestFastRefillIsSearchedAtItsSaturatedRate(t *testing.T) {
	obs := recordedObservation(t, "testdata/fast-refill-bucket-of-one.jsonl")
	tr := obs.Phase(observation.PhaseTrace)
	if r := fit.SaturatedRate(tr); r < 150 || r > 250 {
		t.Errorf("saturated rate %.1f/s, want about 196/s", r)
	}
	inf := Infer(obs)
	bucket := -1
	for _, a := range inf.Alternatives {
		if a.Family == limiter.TokenBucket {
			bucket = a.Explained
		}
	}
	if inf.Family == limiter.TokenBucket {
		bucket = inf.Explained
	}
	if bucket < inf.Decisions-10 {
		t.Errorf("the best token bucket explains %d of %d decisions, want all but 10 at most", bucket, inf.Decisions)
	}
	if inf.Family != limiter.TokenBucket && inf.Confidence >= 0.8 {
		t.Errorf("named %s at %.2f: confidence 0.8 or more is for a right answer", inf.Summary(), inf.Confidence)
	}
}
