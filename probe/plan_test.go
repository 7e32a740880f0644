package probe

import (
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
)

// A burst holds one connection per request, so the plan never releases a
// burst larger than the engine's connection limit, and says so. The cap is
// the plan's (it sizes the burst from Options.Engine.MaxConns), so it runs
// on the simulator, which does not enforce MaxConns itself: a burst of
// more than 150 would show. The engine's own limit is attack's test.
func TestBurstsRespectTheConnectionLimit(t *testing.T) {
	res := probeSim(t, "builtin:none", "", Options{MaxTime: MinTime * 2, Engine: attack.Options{MaxConns: 150}})
	largest := 0
	for _, b := range res.Observation.BurstPhases() {
		largest = max(largest, len(res.Observation.Phase(b)))
	}
	if largest != 150 {
		t.Errorf("largest burst %d, want the connection limit 150", largest)
	}
	capped := false
	for _, n := range res.Notes {
		capped = capped || strings.Contains(n, "capped at the connection limit of 150")
	}
	if !capped {
		t.Errorf("no note says the burst was capped: %q", res.Notes)
	}
}
