package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/refserver"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// The run the bad-input sweep recorded: a token bucket of 10/s burst 20
// whose server was killed 3 s into a probe. 373 of 505 requests got
// "connection refused", yet it was named a token bucket at 0.90, graded A,
// and the scope note said 250 refused requests "were all admitted".
func TestTargetKilledMidProbeIsNoAnswer(t *testing.T) {
	inf := Infer(recordedObservation(t, "testdata/target-killed-mid-probe.jsonl"))
	if inf.Family != Inconclusive || !strings.Contains(inf.Reason, "the target stopped answering") {
		t.Fatalf("named %s (reason %q), want inconclusive: the target stopped answering", inf.Summary(), inf.Reason)
	}
	f := inf.Failures
	if f == nil || f.Failed == 0 || f.LostAtS == nil || f.FirstError == "" {
		t.Fatalf("failures %+v, want the count, the first error and when the target was lost", f)
	}
	if *f.LostAtS < 2 || *f.LostAtS > 4 {
		t.Errorf("lost at %.2f s, want about 3 s (when the server was killed)", *f.LostAtS)
	}
}

func TestFailuresCutThePhasesTheyEmptied(t *testing.T) {
	burst := 1000 * ms
	limited := func() *obsBuilder {
		return newObs().calibrated().add(observation.PhaseBurst, 10, burst, ms, 0, 200, "").add(observation.PhaseBurst, 30, burst, ms, 0, 429, "").
			spaced(observation.PhaseTrace, 40, burst+10*ms, 25*ms, 429).spaced(observation.PhaseTrace, 1, burst+time.Second, 0, 200)
	}
	refused := "connection refused to 127.0.0.1:1"
	cases := []struct {
		name      string
		obs       *observation.Observation
		cut, lost bool
	}{
		{"answered throughout", limited().obs, false, false},
		{"one reset among the sequential requests", limited().add(observation.PhaseSequential, 4, burst+5*ms, ms, 0, 429, "").
			add(observation.PhaseSequential, 1, burst+6*ms, ms, 0, 0, "connection reset").obs, false, false},
		{"dead from some instant on", limited().spaced(observation.PhaseSplit, lostAfter, 3*time.Second, 10*ms, 0).obs, true, true},
		// A server error is no decision either (503 is a rejection).
		{"500s from some instant on", limited().spaced(observation.PhaseSplit, lostAfter, 3*time.Second, 10*ms, 500).obs, true, true},
		{"503s are rejections", limited().spaced(observation.PhaseSplit, lostAfter, 3*time.Second, 10*ms, 503).obs, false, false},
		{"one phase failing, the target alive after it", limited().add(observation.PhaseScopeRef, 5, 2*time.Second, ms, 0, 0, refused).
			spaced(observation.PhaseRetryWait, 3, 3*time.Second, 10*ms, 200).obs, true, false},
		// Answers the run's own time budget abandoned are its cut, not
		// the target's failure (a queue holding the last trace requests).
		{"abandoned at the time budget's end", limited().add(observation.PhaseTrace, 2*lostAfter, 50*time.Second, 9*time.Second, 0, 0, results.NoAnswerInBudget("127.0.0.1:1")).obs, false, false},
		// A pacer may hold a burst past the timeout: the burst's rule judges those.
		{"a burst's own failures", limited().add(observation.PhaseBurst+"-1", lostAfter*2, 4*time.Second, 10*time.Second, 0, 0, "timeout after 10s").obs, false, false},
	}
	for _, c := range cases {
		for i := range c.obs.Results {
			if r := &c.obs.Results[i]; r.Status == 0 && r.Error == "" {
				r.Error = refused
			}
		}
		inf := Infer(c.obs)
		f := inf.Failures
		if f.Cut() != c.cut || (f != nil && f.LostAtS != nil) != c.lost {
			t.Errorf("%s: failures %+v, want cut %v, lost %v", c.name, f, c.cut, c.lost)
		}
		if c.cut && inf.Family != Inconclusive {
			t.Errorf("%s: named %s from a run cut by errors", c.name, inf.Summary())
		}
	}
}

func TestLostWatchStopsOnAStreakOutsideBursts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lostWatch{}
	w.watch(cancel)
	fail := func(phase string, n int) {
		for range n {
			w.add(&results.Result{Phase: phase, Error: "connection refused"})
		}
	}
	fail(observation.PhaseBurst, 3*lostAfter)
	fail(observation.PhaseTrace, lostAfter-1)
	w.add(&results.Result{Phase: observation.PhaseTrace, Status: 429})
	fail(observation.PhaseTrace, lostAfter-1)
	if w.stopped() || ctx.Err() != nil {
		t.Fatal("stopped before lostAfter failures in a row outside a burst")
	}
	fail(observation.PhaseScopeRef, 1)
	if !w.stopped() || ctx.Err() == nil {
		t.Fatal("not stopped after lostAfter failures in a row")
	}
}

// A real server closed mid-probe: the plan stops soon after (it does not
// knock on a dead port for the rest of its budget) and names nothing.
func TestProbeOfATargetThatDiesStopsAndNamesNothing(t *testing.T) {
	t.Parallel() // live probes mostly wait on their servers: side by side
	srv, err := refserver.StartBuiltin("builtin:token_bucket?rate=10/s&burst=20")
	if err != nil {
		t.Fatal(err)
	}
	const killAt = 2500 * time.Millisecond // inside the trace: the burst comes at about 1 s
	time.AfterFunc(killAt, func() { srv.Close() })
	req, _ := attack.NewRequest("GET", srv.URL, nil, "")
	res, err := Run(context.Background(), req, Options{MaxTime: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inf := res.Inference
	if inf.Family != Inconclusive || !inf.Failures.Cut() {
		t.Fatalf("named %s (failures %+v), want inconclusive, cut by errors", inf.Summary(), inf.Failures)
	}
	for _, r := range res.Observation.Results {
		if r.Error != "" && r.Admitted() {
			t.Fatalf("a failed request counted as admitted: %+v", r)
		}
	}
	failedAfterLoss := 0
	for _, r := range res.Observation.Results {
		if r.Error != "" && !releasedAtOnce(r.Phase) {
			failedAfterLoss++
		}
	}
	// The watch stops the plan at lostAfter; requests already in flight
	// or scheduled at that instant may add a few.
	if failedAfterLoss > 3*lostAfter {
		t.Errorf("%d requests failed outside bursts: the plan kept knocking on a dead target", failedAfterLoss)
	}
}

// A burst interrupted before its answers came back is no burst the limiter
// decided: its evidence says no request got an answer, and nothing about
// queueing.
func TestBurstWithoutAnswersSaysSo(t *testing.T) {
	o := newObs().calibrated().add(observation.PhaseBurst, 50, time.Second, ms, 0, 0, "interrupted before the answer").obs
	o.Stopped = observation.StopInterrupted
	inf := Infer(o)
	want := "burst of 50 released at once: 0 admitted, 0 rejected, 50 got no answer (interrupted before the answer)"
	for _, e := range inf.Evidence {
		if strings.HasPrefix(e, "burst of") {
			if e != want {
				t.Fatalf("evidence %q, want %q", e, want)
			}
			return
		}
	}
	t.Fatalf("no burst in the evidence %q", inf.Evidence)
}
