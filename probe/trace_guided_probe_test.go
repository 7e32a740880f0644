package probe

import (
	"math"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/plan"
)

// TestSimGuidedTraceSurvivesWrongHeaders: the guided trace knocks sparsely
// until the return a rejection's headers name (probe/plan's
// trace_guided.go). A header that names it too late is caught by the
// sparse knocks, one too early by the knocking after it, one that never
// moves by the return drifting from it: each still names a minute window
// right, within two windows and 10 s.
func TestSimGuidedTraceSurvivesWrongHeaders(t *testing.T) {
	for _, fault := range []string{"long-retry-after", "short-retry-after", "frozen-reset", "early-reset"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			res := probeSim(t, "builtin:fixed_window?limit=60&window=1m&align=wall&fault="+fault, "", Options{})
			inf := res.Inference
			t.Logf("%s: %s at %.2f in %.0f s, %d requests", fault, inf.Summary(), inf.Confidence, res.Elapsed.Seconds(), len(res.Observation.Results))
			if inf.Family != "fixed_window" || inf.Limit != 60 || math.Abs(inf.WindowS-60) > 1.5 {
				t.Fatalf("named %s (limit %d, window %.2f s), want fixed_window 60 per 60 s: %s", inf.Family, inf.Limit, inf.WindowS, inf.Reason)
			}
			if most := plan.NaturalSpan(time.Minute); res.Elapsed > most {
				t.Errorf("ran %s, want within %s", res.Elapsed, most)
			}
		})
	}
}
