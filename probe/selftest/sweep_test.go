package selftest

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// sweepProbes is how many simulated probes the test sweep runs
// (RATECHECK_SWEEP overrides it): alone on an idle 2-core machine, 300
// take 114-117 s (219-223 s of CPU, under 1 s a probe). The test suite
// runs it in the background of the live tests once the race detector's
// phase is over, on the CPU they leave idle while they wait on real
// servers (scripts/test): 138 s there.
// `ratecheck selftest --sim 2000` is the large sweep.
const sweepProbes = 300

func TestSimulationSweep(t *testing.T) {
	n := sweepProbes
	if s := os.Getenv("RATECHECK_SWEEP"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rep, err := Sweep(context.Background(), SweepOptions{N: n, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	WriteSweep(os.Stdout, rep)
	if os.Getenv("RATECHECK_SWEEP_SLOW") != "" {
		for _, r := range rep.runs {
			t.Logf("%6.1fs %5d req %5.1fs virt  %s", r.took.Seconds(), r.Outcome.Requests, r.Outcome.ElapsedS, r.Spec)
		}
	}
	for _, r := range rep.Violations {
		t.Errorf("%v\n  replay: %s", r.Violations, r.Replay)
	}
	// Confidence means what it says: no wrong family at 0.8 or more.
	for _, r := range rep.WrongConfident {
		t.Errorf("%s named %s at %.2f\n  replay: %s", r.Outcome.TruthText, r.Outcome.Inference.Summary(), r.Outcome.Inference.Confidence, r.Replay)
	}
}
