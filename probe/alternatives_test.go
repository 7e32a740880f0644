package probe

import (
	"math"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// A family whose every model misses more than fit.MostCounted decisions was
// not counted further: it is listed as explaining at most what that
// leaves, and as the runner-up it counts as missing no more than that, so
// the confidence is never above what such a runner-up allows. (A shaping
// queue whose every rival misses more than three tenths of the decisions.)
func TestSimUncountedFamilyIsABoundNeverAConfidence(t *testing.T) {
	inf := probeSim(t, "builtin:leaky_shaping?rate=5.31/s&burst=31", "", Options{}).Inference
	if inf.Family != "leaky_shaping" {
		t.Fatalf("inferred %s", inf.Summary())
	}
	least := fit.MostCounted(inf.Decisions) + 1
	runnerUp, bounded := math.MaxInt, 0
	for _, a := range inf.Alternatives {
		if a.Equivalent {
			continue
		}
		missed := inf.Decisions - a.Explained
		if a.AtMost {
			bounded++
			if missed != least || !strings.HasPrefix(a.ExplainedText(), "at most ") {
				t.Errorf("%s: explains %s of %d, want at most %d", a.Family, a.ExplainedText(), inf.Decisions, inf.Decisions-least)
			}
		}
		runnerUp = min(runnerUp, missed)
	}
	if bounded == 0 || runnerUp != least {
		t.Fatalf("the nearest rival misses %d, not the uncounted bound %d: alternatives %+v", runnerUp, least, inf.Alternatives)
	}
	m1 := inf.Decisions - inf.Explained
	if most := 1 - float64(m1+1)/float64(runnerUp+1); inf.Confidence > math.Round(most*100)/100 {
		t.Errorf("confidence %.2f, above %.2f: a runner-up missing %d allows no more", inf.Confidence, most, runnerUp)
	}
}
