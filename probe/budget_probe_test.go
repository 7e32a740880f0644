package probe

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/plan"
)

// The budget a probe grows to (probe/plan's budget.go), on the simulator:
// a limit per minute is named with its numbers under the default flags, a
// short window's probe does not grow, a --max-time is never passed, and a
// window of an hour is not waited for.

// TestSimBudgetGrowsToNameAMinuteWindow: the commonest real limit, N per
// minute, named right with the default budget, which grew past the
// default and stayed under its ceiling, within two windows and 10 s
// (plan.NaturalSpan): its locks knocked on sparsely but at the returns the
// headers name (probe/plan's trace_guided.go), so that the probe spends a
// fraction of its request budget, and a limiter that counts denied
// attempts waited out in silence once its knocking is seen to keep it shut
// (probe/plan's waitOutKnocking).
func TestSimBudgetGrowsToNameAMinuteWindow(t *testing.T) {
	const window = time.Minute
	for _, tc := range []struct {
		builtin, family, align string
		limit                  int
	}{
		{"fixed_window?limit=60&window=1m&align=wall", "fixed_window", "wall", 60},
		{"fixed_window?limit=60&window=1m&align=first", "fixed_window", "first", 60},
		{"sliding_log?limit=50&window=1m", "sliding_log", "", 50},
		{"sliding_counter?limit=50&window=1m", "sliding_counter", "", 50},
		{"sliding_counter?limit=50&window=1m&count-rejected=on", "sliding_counter", "", 50},
	} {
		t.Run(tc.builtin, func(t *testing.T) {
			t.Parallel()
			res := probeSim(t, "builtin:"+tc.builtin, "", Options{})
			inf, b := res.Inference, res.Observation.Budget
			t.Logf("%s: %s at %.2f in %.0f s; budget %s", tc.builtin, inf.Summary(), inf.Confidence, res.Elapsed.Seconds(), b.Why)
			if inf.Family != tc.family || inf.Limit != tc.limit || math.Abs(inf.WindowS-60) > 1.5 {
				t.Fatalf("named %s (limit %d, window %.2f s), want %s %d per 60 s: %s", inf.Family, inf.Limit, inf.WindowS, tc.family, tc.limit, inf.Reason)
			}
			if tc.align != "" && !strings.Contains(inf.Alignment, tc.align) {
				t.Errorf("alignment %q, want %s", inf.Alignment, tc.align)
			}
			if b.GrewTo <= DefaultMaxTime || b.GrewTo > DefaultMaxTimeCeiling || b.Why == "" {
				t.Errorf("budget grew to %s (why %q), want past %s, at most %s, with a reason", b.GrewTo, b.Why, DefaultMaxTime, DefaultMaxTimeCeiling)
			}
			if res.Elapsed > b.GrewTo {
				t.Errorf("ran %s: want within the grown %s", res.Elapsed, b.GrewTo)
			}
			if !hasNote(res.Notes, "the time budget grew") {
				t.Errorf("no note of the growth in %q", res.Notes)
			}
			if most := plan.NaturalSpan(window); res.Elapsed > most {
				t.Errorf("ran %s: want within two windows and 10 s (%s)", res.Elapsed, most)
			}
			if sent, most := len(res.Observation.Results), DefaultMaxRequests/4; sent > most {
				t.Errorf("sent %d requests: want at most %d, a quarter of the budget", sent, most)
			}
		})
	}
}

// TestSimBudgetStaysForAShortWindow: a window of 2 s is traced within the
// default budget, which does not grow.
func TestSimBudgetStaysForAShortWindow(t *testing.T) {
	res := probeSim(t, "builtin:fixed_window?limit=20&window=2s", "", Options{})
	if b := res.Observation.Budget; b.GrewTo != 0 {
		t.Errorf("budget grew to %s for a 2 s window: %s", b.GrewTo, b.Why)
	}
	if res.Inference.Family != "fixed_window" || res.Elapsed > 20*time.Second {
		t.Errorf("named %s in %s, want fixed_window within 20 s", res.Inference.Summary(), res.Elapsed)
	}
}

// TestSimBudgetNeverPastMaxTime: a --max-time is a hard cap. The minute window
// it cannot hold is inconclusive, and the reason names a budget that would.
func TestSimBudgetNeverPastMaxTime(t *testing.T) {
	res := probeSim(t, "builtin:sliding_log?limit=50&window=1m", "", Options{MaxTime: time.Minute})
	if b := res.Observation.Budget; b.GrewTo != 0 || b.Ceiling != 0 {
		t.Errorf("a budget given grew: %+v", b)
	}
	if res.Elapsed > time.Minute {
		t.Errorf("ran %s past --max-time 1m", res.Elapsed)
	}
	if inf := res.Inference; inf.Family != Inconclusive || !strings.Contains(inf.Reason, "a --max-time of 3m0s or more") {
		t.Errorf("named %s, want inconclusive naming the budget that holds the window: %s", inf.Summary(), inf.Reason)
	}
}

// TestSimBudgetNotGrownForAnHour: a window of an hour, which the RateLimit
// policy names, is beyond any probe's ceiling: the run keeps its minute and
// says why.
func TestSimBudgetNotGrownForAnHour(t *testing.T) {
	res := probeSim(t, "builtin:fixed_window?limit=60&window=1h", "", Options{})
	if b := res.Observation.Budget; b.GrewTo != 0 {
		t.Errorf("budget grew to %s for an hour's window: %s", b.GrewTo, b.Why)
	}
	if res.Elapsed > DefaultMaxTime {
		t.Errorf("ran %s, past the default %s", res.Elapsed, DefaultMaxTime)
	}
	if !hasNote(res.Notes, "the window looks like 1h0m0s") || res.Inference.Family != Inconclusive {
		t.Errorf("named %s; notes %q", res.Inference.Summary(), res.Notes)
	}
}

func hasNote(notes []string, part string) bool {
	for _, n := range notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
