package probe

import (
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/probe/internal/probetest"
)

// simulated and epoch: probetest's, under the names these tests use.
var (
	simulated = probetest.Simulated
	epoch     = probetest.Epoch
)

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
