package probe

import (
	"strings"
	"testing"
	"time"
)

// A sliding counter that counts denied attempts stays shut while the probe
// knocks; the trace slows its knocking the longer the key stays shut, so
// the counter decays, reopens, and the fit names the variant with its
// numbers. Before the trace slowed down it knocked the whole budget away
// and named a fixed window of several times the true length.
func TestProbeNamesACountingSlidingCounter(t *testing.T) {
	res := probeBuiltin(t, "builtin:sliding_counter?limit=10&window=2s&count-rejected=on", Options{MaxTime: 30 * time.Second})
	inf := res.Inference
	if inf.Family != "sliding_counter" || inf.CountsRejected == nil || !*inf.CountsRejected {
		t.Fatalf("inferred %s (counts_rejected %v); evidence %q", inf.Summary(), inf.CountsRejected, inf.Evidence)
	}
	if inf.Limit < 9 || inf.Limit > 11 || inf.WindowS < 1.8 || inf.WindowS > 2.2 {
		t.Fatalf("parameters off: %s", inf.Summary())
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "every denied attempt counts") {
		t.Fatalf("no evidence of the counting: %q", inf.Evidence)
	}
	// A plain sliding counter is not called counting.
	plain := probeBuiltin(t, "builtin:sliding_counter?limit=10&window=2s", Options{MaxTime: 30 * time.Second}).Inference
	if plain.Family != "sliding_counter" || plain.CountsRejected == nil || *plain.CountsRejected {
		t.Fatalf("plain counter inferred %s (counts_rejected %v)", plain.Summary(), plain.CountsRejected)
	}
}

// A pacer that never rejects is named leaky_shaping with an unbounded
// queue and its rate, never none; before, the held-back burst made the
// probe inconclusive.
func TestProbeNamesAPacer(t *testing.T) {
	res := probeBuiltin(t, "builtin:leaky_shaping?rate=40/s&burst=unbounded", Options{MaxTime: 20 * time.Second})
	inf := res.Inference
	if inf.Family != "leaky_shaping" || inf.Queue != QueueUnbounded || inf.RatePerS < 36 || inf.RatePerS > 44 {
		t.Fatalf("inferred %s (queue %q): %s; evidence %q", inf.Summary(), inf.Queue, inf.Reason, inf.Evidence)
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "never rejects: requests are spaced 25 ms apart") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
	// It took one burst: no larger one, no sustained phase to wait out.
	if res.Elapsed > 10*time.Second {
		t.Fatalf("a pacer's probe took %s", res.Elapsed)
	}
}

// A pacer that lets idle time be caught up (uber-go/ratelimit's slack of
// ten requests) serves the first eleven of a burst at once: delay=10.
func TestProbeNamesAPacerWithSlack(t *testing.T) {
	res := probeBuiltin(t, "builtin:leaky_shaping?rate=40/s&burst=unbounded&delay=10", Options{MaxTime: 20 * time.Second})
	inf := res.Inference
	if inf.Family != "leaky_shaping" || inf.Queue != QueueUnbounded || inf.RatePerS < 36 || inf.RatePerS > 44 || inf.Delay < 9 || inf.Delay > 11 {
		t.Fatalf("inferred %s (queue %q, delay %d): %s; evidence %q", inf.Summary(), inf.Queue, inf.Delay, inf.Reason, inf.Evidence)
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "go at once") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
}

// A bucket of 20 refilled with 10 tokens at once every second, at a phase
// fixed when the server started: the probe names the interval refill with
// its numbers. Before, the clumps were read as a first-aligned fixed window
// of 10 per second that left the burst of 20 unexplained.
func TestProbeNamesAnIntervalRefilledBucket(t *testing.T) {
	res := probeBuiltin(t, "builtin:token_bucket?rate=10/s&burst=20&refill=1s", Options{MaxTime: 20 * time.Second})
	inf := res.Inference
	if inf.Family != "token_bucket" || inf.RefillS == 0 || inf.PhaseS == nil {
		t.Fatalf("inferred %s (refill_s %v): %s; evidence %q", inf.Summary(), inf.RefillS, inf.Reason, inf.Evidence)
	}
	// Bars of the accuracy harness: rate ±10%, burst ±max(1, 10%); the
	// interval to the resolution of the trace, which a 1 s fill_interval
	// is reported as.
	if inf.RatePerS < 9 || inf.RatePerS > 11 || inf.Burst < 18 || inf.Burst > 22 || inf.RefillS < 0.98 || inf.RefillS > 1.02 ||
		*inf.PhaseS < 0 || *inf.PhaseS >= inf.RefillS {
		t.Fatalf("parameters off: %s", inf.Summary())
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "capacity returns in clumps of 10 every ") {
		t.Fatalf("no evidence of the clumps: %q", inf.Evidence)
	}
}
