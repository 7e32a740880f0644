package probe

import (
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A recorded probe of a fixed window of 20 per 3 s on a grid anchored at
// the server's start (align=start), whose trace knocked without pause:
// each window opened at the first request after a grid boundary, which is
// what a first-aligned window does, and a first-aligned one of 2.925 s
// explains all 370 decisions. The accuracy harness saw it named
// first-aligned alone (confidence 0.75): a start grid, which explains the
// run as well, was searched only when no plain model did. Now the probe
// names both as not told apart, and the two are among the tied models the
// deciding experiment chooses its requests for, some of which split them
// (probe/plan's TestFirstAlignedWindowAndItsStartGridAreSplit).
func TestFirstAlignedWindowIsNotNamedAloneBesideAStartGrid(t *testing.T) {
	obs := recordedObservation(t, "testdata/fixed-start-knocked.jsonl")
	inf := Infer(obs)
	if inf.Family != limiter.FixedWindow || !strings.Contains(inf.Alignment, limiter.AlignStart) || !strings.Contains(inf.Alignment, limiter.AlignFirst) {
		t.Fatalf("named %s; a first-aligned window and a start grid explain the run alike", inf.Summary())
	}
	if inf.Limit != 20 || inf.WindowS < 2.7 || inf.WindowS > 3.3 {
		t.Errorf("named %s, truth 20 per 3 s", inf.Summary())
	}
}
