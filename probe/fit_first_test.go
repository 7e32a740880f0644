package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// HAProxy's sliding counter (http_req_rate, gpc0_rate): a grid anchored at
// the key's first request, the previous period's share rounded down. On a
// virtual clock it is named with its grid, its numbers and whether denied
// attempts count. A start grid whose origin is the first request differs
// from it only after two idle periods and a second request after them,
// which this run does not have: the probe may say it could not tell them
// apart ("first or start"), but must name first among them.
func TestInferHAProxysFirstAlignedSlidingCounter(t *testing.T) {
	for _, counting := range []bool{false, true} {
		cfg := limiter.Config{Algo: limiter.SlidingCounter, Limit: 20, Window: 4 * time.Second, Align: limiter.AlignFirst, CountRejected: counting}
		// The first request 370 ms past a whole second: its grid is not
		// the wall's.
		// A trace of 7.5 s, then the plan's silent waits: volleys of 25
		// after 2 s and 9 s of silence (past two periods: re-anchored).
		obs := simulatedFromWithVolleys(t, cfg, epoch.Add(370*time.Millisecond), 1630*time.Millisecond, 150*time.Millisecond, 25, 2*time.Second, 9*time.Second)
		inf := Infer(obs)
		if inf.Family != limiter.SlidingCounter || !strings.Contains(inf.Alignment, limiter.AlignFirst) || !within(float64(inf.Limit), 20, true) || !within(inf.WindowS, 4, false) ||
			inf.CountsRejected == nil || *inf.CountsRejected != counting || inf.Explained != inf.Decisions {
			t.Errorf("counting=%v: inferred %s (%d of %d explained), alternatives %+v", counting, inf.Summary(), inf.Explained, inf.Decisions, inf.Alternatives)
		}
	}
}
