package probe

import (
	"strings"
	"testing"
	"time"
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
