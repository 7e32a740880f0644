package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// A burst holds one connection per request, so the plan never releases a
// burst larger than the engine's connection limit, and says so. The cap is
// the plan's (it sizes the burst from Options.Engine.MaxConns), so it runs
// on the simulator, which does not enforce MaxConns itself: a burst of
// more than 150 would show. The engine's own limit is attack's test.
func TestBurstsRespectTheConnectionLimit(t *testing.T) {
	obs := planSim(t, "builtin:none", "", Options{MaxTime: MinTime * 2, Engine: attack.Options{MaxConns: 150}})
	largest := 0
	for _, b := range obs.BurstPhases() {
		largest = max(largest, len(obs.Phase(b)))
	}
	if largest != 150 {
		t.Errorf("largest burst %d, want the connection limit 150", largest)
	}
	capped := false
	for _, n := range obs.Notes {
		capped = capped || strings.Contains(n, "capped at the connection limit of 150")
	}
	if !capped {
		t.Errorf("no note says the burst was capped: %q", obs.Notes)
	}
}

// The burst instant sits just after a whole wall second, and at least
// 150 ms from every half second after the first calibration request (where
// windows aligned to that request have their boundaries).
func TestBurstInstantAvoidsBoundaries(t *testing.T) {
	req, err := attack.NewRequest("GET", "http://127.0.0.1:9/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := attack.New(req, attack.Options{})
	e.Begin(t.Context())
	defer e.Finish()
	for _, calAt := range []time.Duration{0, 30 * time.Millisecond, 280 * time.Millisecond, 510 * time.Millisecond, 930 * time.Millisecond} {
		col := attack.NewCollector(true)
		col.Add(&results.Result{Phase: observation.PhaseCalibrate, Sent: calAt - 10*time.Second, Done: calAt - 10*time.Second + time.Millisecond, Status: 200})
		p := &planner{e: e, col: col}
		wall := e.Start().Add(p.burstInstant())
		sub := wall.Sub(wall.Truncate(time.Second))
		if sub < 20*time.Millisecond || sub > 350*time.Millisecond {
			t.Errorf("calibration at %s: burst %s after a whole second", calAt, sub)
		}
		first := e.Start().Add(calAt - 10*time.Second)
		if f := wall.Sub(first) % (500 * time.Millisecond); f < 150*time.Millisecond || f > 350*time.Millisecond {
			t.Errorf("calibration at %s: burst %s past a half second after it", calAt, f)
		}
		if d := wall.Sub(time.Now()); d <= 0 || d > 1400*time.Millisecond {
			t.Errorf("calibration at %s: burst in %s", calAt, d)
		}
	}
}
