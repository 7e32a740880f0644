package probe

import (
	"testing"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// recordedObservation is probetest's, under the name these tests use.
var recordedObservation = probetest.Recorded

// A recorded 10 s probe of a fixed window of 10 per 2 s that every
// over-limit request restarts (penalty=restart), on a loaded machine: the
// budget cut the trace after 3.6 s of rejections, then two silent waits of
// the 2 s Retry-After were admitted. A plain first-aligned window of 13 per
// 5 s bends to explain all but one decision — within the equivalence slack,
// so the penalty search, which needs a run no plain model explains, never
// ran, and the run was named that window (and, in another run of the kind,
// a counting sliding counter of 14; graded B). The restart adds no number to
// fit, so it is weighed decision for decision and explains them all.
func TestRestartIsWeighedAgainstAWindowBentByOneDecision(t *testing.T) {
	inf := Infer(recordedObservation(t, "testdata/restart-knocked-shut.jsonl"))
	if inf.Family != limiter.FixedWindow || inf.Penalty == nil || inf.Penalty.Kind != limiter.PenaltyRestart || inf.Limit != 10 {
		t.Fatalf("named %s, want a fixed window of 10 that rejections restart", inf.Summary())
	}
	// The run pins the window only between the longest rejected gap and
	// the silent waits (about 2.01 s): the truth must be inside the ±.
	if lo, hi := inf.WindowS-inf.WindowErrS, inf.WindowS+inf.WindowErrS; 2 < lo || 2 > hi {
		t.Errorf("window %.3g ± %.3g s excludes the truth, 2 s", inf.WindowS, inf.WindowErrS)
	}
	if inf.Explained != inf.Decisions {
		t.Errorf("%s explains %d of %d decisions; the truth explains them all", inf.Summary(), inf.Explained, inf.Decisions)
	}
}

// A recorded probe of the same window (10 per 2 s on the wall grid, every
// over-limit request restarts it) whose three calibration requests
// straddled a grid boundary: the burst admitted 8, with the calibration 11,
// and the true 10 is neither. The penalty search tried only those two ends
// and named a first-aligned window of 11 at confidence 0.44 (153 of 155);
// the truth explains all 155.
func TestRestartLimitBetweenTheCalibrationsEnds(t *testing.T) {
	inf := Infer(recordedObservation(t, "testdata/restart-calibration-straddles.jsonl"))
	if inf.Family != limiter.FixedWindow || inf.Penalty == nil || inf.Penalty.Kind != limiter.PenaltyRestart || inf.Limit != 10 || inf.WindowS != 2 {
		t.Fatalf("named %s, want a fixed window of 10 per 2 s that rejections restart", inf.Summary())
	}
	if inf.Explained != inf.Decisions || inf.Confidence < 0.5 {
		t.Errorf("%s explains %d of %d decisions at confidence %.2f; the truth explains them all", inf.Summary(), inf.Explained, inf.Decisions, inf.Confidence)
	}
}
