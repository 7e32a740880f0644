package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

// The probes of this file check the plan and the inference against the
// reference limiters' own models: they run the real plan on the simulator
// (probeSim), seeded, in the fits' CPU time rather than the probe's wall
// time.

// A plain sliding counter is not called counting. (The counting one is a
// demo row: probe/selftest probes it and checks its flag and evidence.)
func TestSimProbeDoesNotCallAPlainCounterCounting(t *testing.T) {
	plain := probeSim(t, "builtin:sliding_counter?limit=10&window=2s", "", Options{MaxTime: 30 * time.Second}).Inference
	if plain.Family != "sliding_counter" || plain.CountsRejected == nil || *plain.CountsRejected {
		t.Fatalf("plain counter inferred %s (counts_rejected %v)", plain.Summary(), plain.CountsRejected)
	}
}

// A log of attempts, knocked on, shows no step of its window: the lock's
// length is set by the knocking. It is searched on the counting grid of
// windows as a counting counter is; before, its family's windows were only
// the run's steps (4.7-5.5 s), and the sweep's seed 799884292217936 named
// a counting sliding counter of 5.5 s at 0.82.
func TestSimProbeNamesACountingLogOfAWindowTheTraceHides(t *testing.T) {
	const builtin = "builtin:sliding_log?limit=16&window=7s&count-rejected=on"
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), req, simOptions(t, builtin, "rtt=12.04ms&jitter=2.54ms&seed=799884292217936", Options{}))
	if err != nil {
		t.Fatal(err)
	}
	inf := res.Inference
	if inf.Family != "sliding_log" || inf.CountsRejected == nil || !*inf.CountsRejected || !within(float64(inf.Limit), 16, true) || !within(inf.WindowS, 7, false) {
		t.Fatalf("inferred %s (confidence %.2f); evidence %q", inf.Summary(), inf.Confidence, inf.Evidence)
	}
}

// A pacer that never rejects is named leaky_shaping with an unbounded
// queue and its rate, never none; before, the held-back burst made the
// probe inconclusive.
func TestSimProbeNamesAPacer(t *testing.T) {
	res := probeSim(t, "builtin:leaky_shaping?rate=40/s&burst=unbounded", "", Options{MaxTime: 20 * time.Second})
	inf := res.Inference
	if inf.Family != "leaky_shaping" || inf.Queue != QueueUnbounded || inf.RatePerS < 36 || inf.RatePerS > 44 {
		t.Fatalf("inferred %s (queue %q): %s; evidence %q", inf.Summary(), inf.Queue, inf.Reason, inf.Evidence)
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "never rejects: requests are spaced 25 ms apart") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
	// It took one burst: no larger one, no sustained phase to wait out
	// (Elapsed is the simulated run's virtual time).
	if res.Elapsed > 10*time.Second {
		t.Fatalf("a pacer's probe took %s", res.Elapsed)
	}
}

// A pacer that lets idle time be caught up (uber-go/ratelimit's slack of
// ten requests) serves the first eleven of a burst at once: delay=10.
func TestSimProbeNamesAPacerWithSlack(t *testing.T) {
	res := probeSim(t, "builtin:leaky_shaping?rate=40/s&burst=unbounded&delay=10", "", Options{MaxTime: 20 * time.Second})
	inf := res.Inference
	if inf.Family != "leaky_shaping" || inf.Queue != QueueUnbounded || inf.RatePerS < 36 || inf.RatePerS > 44 || inf.Delay < 9 || inf.Delay > 11 {
		t.Fatalf("inferred %s (queue %q, delay %d): %s; evidence %q", inf.Summary(), inf.Queue, inf.Delay, inf.Reason, inf.Evidence)
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "go at once") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
}
