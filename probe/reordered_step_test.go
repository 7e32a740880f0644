package probe

import (
	"context"
	"math"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A fixed window of 100 per minute behind a server that stalls (20 ms, on
// a tenth of the decisions) and then decides what it held in any order:
// the trace's step of 100, its last requests decided out of order, was
// read as two steps and ended the trace a window early — the window came
// out 56.0 ± 4.0 s (seed 2: `check --expect window=60s` untested) or, with
// a window of 0.58 s seeded from the split, a wrong 54.5 ± 0 s (seed 12).
// Counted as the server decided them, it is one step, the trace goes on to
// the next boundary, and the window is measured.
func TestSimStepDecidedOutOfOrderIsOneStep(t *testing.T) {
	for _, seed := range []string{"2", "12"} {
		t.Run("seed="+seed, func(t *testing.T) {
			t.Parallel()
			req, err := attack.NewRequest("GET", simTarget, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			network := "stall=20ms&stall-share=0.1&seed=" + seed
			res, err := Run(context.Background(), req, simOptions(t, "builtin:fixed_window?limit=100&window=1m", network, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			inf := res.Inference
			// The expectation's default tolerance is ±10 %: the measured
			// interval must lie inside it, around the truth.
			lo, hi := inf.WindowS-inf.WindowErrS, inf.WindowS+inf.WindowErrS
			if inf.Family != limiter.FixedWindow || inf.Limit != 100 || lo > 60 || hi < 60 || math.Max(60-lo, hi-60) > 6 {
				t.Fatalf("inferred %s (confidence %.2f), want fixed_window 100 per 60 s, the window to within 6 s", inf.Summary(), inf.Confidence)
			}
		})
	}
}
