package probe

import (
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// simulated is the observation a probe would record against cfg on a
// virtual clock: the plan's phases (three calibration requests 200 ms
// apart, a burst of 30 at burstAt, five sequential requests, 50 trace
// requests every traceEvery), each decided by the reference model half a millisecond after
// its send and answered a millisecond after it.
func simulated(t testing.TB, cfg limiter.Config, start time.Time, burstAt, traceEvery time.Duration) *observation.Observation {
	t.Helper()
	lim, err := limiter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const rtt = time.Millisecond
	obs := &observation.Observation{Start: start, RTT: rtt}
	send := func(phase string, at time.Duration) {
		d := lim.Allow("", start.Add(at+rtt/2))
		status := 429
		if d.Allowed {
			status = 200
		}
		obs.Results = append(obs.Results, results.Result{Seq: len(obs.Results) + 1, Phase: phase, Scheduled: at, Sent: at,
			FirstByte: at + rtt, Done: at + rtt, Status: status})
	}
	for i := range 3 {
		send(observation.PhaseCalibrate, time.Duration(i)*200*time.Millisecond)
	}
	for range 30 {
		send(observation.PhaseBurst, burstAt)
	}
	at := burstAt + 2*time.Millisecond
	for range 5 {
		send(observation.PhaseSequential, at)
		at += 2 * time.Millisecond
	}
	for range 50 {
		send(observation.PhaseTrace, at)
		at += traceEvery
	}
	return obs
}

// epoch is a wall instant that starts every whole-second window.
var epoch = time.Unix(1_800_000_000, 0)

// A bucket of 1 at 2/s: its admissions drift later by the probe's lateness
// each cycle, so the trace's spacing suggests a slower rate; the fit still
// names the bucket (its capacity-1 twins, a first-aligned window and a
// sliding log of 1, are listed as equivalent), and its rate as the
// interval the trace's resolution allows, which holds the truth.
func TestInferBucketOfOne(t *testing.T) {
	obs := simulated(t, limiter.Config{Algo: limiter.TokenBucket, Rate: 2, Burst: 1}, epoch, 700*time.Millisecond, 30*time.Millisecond)
	inf := Infer(obs)
	// Probed every 30 ms, any refill period in (480, 510] ms admits the
	// same requests: the rate is known to [1.96, 2.08) and no better.
	lo, hi := inf.RatePerS-inf.RateErr, inf.RatePerS+inf.RateErr
	if inf.Family != limiter.TokenBucket || inf.Burst != 1 || lo > 2 || hi < 2 || lo < 1.95 || hi > 2.1 || inf.Explained != inf.Decisions {
		t.Fatalf("inferred %s (%d of %d explained)", inf.Summary(), inf.Explained, inf.Decisions)
	}
}

// A sliding counter bursted at the start of its window gives nothing back
// until the next boundary; a token bucket would refill at once. The probe
// releases its burst just after a whole second for this reason.
func TestInferSlidingCounterFromAWindowStartBurst(t *testing.T) {
	obs := simulated(t, limiter.Config{Algo: limiter.SlidingCounter, Limit: 20, Window: 2 * time.Second}, epoch, 2*time.Second+30*time.Millisecond, 100*time.Millisecond)
	inf := Infer(obs)
	if inf.Family != limiter.SlidingCounter || inf.Limit != 20 || inf.WindowS != 2 || inf.Confidence < 0.8 {
		t.Fatalf("inferred %s, confidence %.2f, alternatives %+v", inf.Summary(), inf.Confidence, inf.Alternatives)
	}
}

// The grid is searched in parallel; the result must be what a serial scan
// finds, in the same order (later refinements take the first few ties).
func TestFitAllSameOnOneCPUAndMany(t *testing.T) {
	obs := simulated(t, limiter.Config{Algo: limiter.SlidingLog, Limit: 10, Window: time.Second}, epoch, 650*time.Millisecond, 100*time.Millisecond)
	evs, h := obs.Events(), fit.HypothesesOf(obs)
	prev := runtime.GOMAXPROCS(1)
	serial := fit.FitAll(evs, h, obs.RTT)
	runtime.GOMAXPROCS(max(prev, 4))
	parallel := fit.FitAll(evs, h, obs.RTT)
	runtime.GOMAXPROCS(prev)
	if !reflect.DeepEqual(serial, parallel) {
		t.Fatal("fitAll differs between one CPU and several")
	}
	for _, f := range serial {
		if f.Family == limiter.SlidingLog && f.Mismatches() != 0 {
			t.Fatalf("the true model misfits %d decisions", f.Mismatches())
		}
	}
}

// A response read late by a busy client makes its release look later than
// it was: an admission right after the true release is excused for up to
// maxReadLag of that lateness, and no further.
func TestConcurrencyReplayExcusesLateReads(t *testing.T) {
	const hold = 50 * time.Millisecond
	misfits := func(readLate time.Duration) int {
		evs := []observation.Event{
			{At: epoch, Admitted: true, Hold: hold},
			{At: epoch.Add(200 * time.Millisecond), Admitted: true, Hold: hold + readLate},
			// the server freed its one slot at 250 ms
			{At: epoch.Add(251 * time.Millisecond), Admitted: true, Hold: hold},
		}
		lim, err := limiter.New(limiter.Config{Algo: limiter.Concurrency, MaxInflight: 1})
		if err != nil {
			t.Fatal(err)
		}
		return fit.ReplayConcurrency(evs, lim, 0, 2*time.Millisecond, math.MaxInt, nil)
	}
	if m := misfits(4 * time.Millisecond); m != 0 {
		t.Errorf("read 4 ms late: %d misfits, want 0", m)
	}
	if m := misfits(20 * time.Millisecond); m != 1 {
		t.Errorf("read 20 ms late: %d misfits, want 1 (beyond what a loaded client explains)", m)
	}
}

// The burst instant sits just after a whole wall second, and at least
// 150 ms from every half second after the first calibration request (where
// windows aligned to that request have their boundaries).
func TestBurstInstantAvoidsBoundaries(t *testing.T) {
	req, err := attack.NewRequest("GET", "http://127.0.0.1:9/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := attack.New(req, attack.Options{})
	e.Begin(t.Context())
	defer e.Finish()
	for _, calAt := range []time.Duration{0, 30 * time.Millisecond, 280 * time.Millisecond, 510 * time.Millisecond, 930 * time.Millisecond} {
		col := attack.NewCollector(true)
		col.Add(&results.Result{Phase: observation.PhaseCalibrate, Sent: calAt - 10*time.Second, Done: calAt - 10*time.Second + time.Millisecond, Status: 200})
		p := &planner{e: e, col: col}
		wall := e.Start().Add(p.burstInstant())
		sub := wall.Sub(wall.Truncate(time.Second))
		if sub < 20*time.Millisecond || sub > 350*time.Millisecond {
			t.Errorf("calibration at %s: burst %s after a whole second", calAt, sub)
		}
		first := e.Start().Add(calAt - 10*time.Second)
		if f := wall.Sub(first) % (500 * time.Millisecond); f < 150*time.Millisecond || f > 350*time.Millisecond {
			t.Errorf("calibration at %s: burst %s past a half second after it", calAt, f)
		}
		if d := wall.Sub(time.Now()); d <= 0 || d > 1400*time.Millisecond {
			t.Errorf("calibration at %s: burst in %s", calAt, d)
		}
	}
}

// The window's ± spans every window that explains the decisions: probed
// every 230 ms, a first-aligned window of 1.5 s is known only to that
// resolution (the grid's own ties said 1.596 ± 0.046 s), and the interval
// reported must hold the truth.
func TestInferWindowIntervalHoldsTruth(t *testing.T) {
	cfg := limiter.Config{Algo: limiter.FixedWindow, Limit: 4, Window: 1500 * time.Millisecond, Align: limiter.AlignFirst}
	inf := Infer(simulated(t, cfg, epoch, 650*time.Millisecond, 230*time.Millisecond))
	if inf.Family != limiter.FixedWindow || inf.Limit != 4 || inf.WindowS-inf.WindowErrS > 1.5 || inf.WindowS+inf.WindowErrS < 1.5 {
		t.Errorf("inferred %s", inf.Summary())
	}
}
