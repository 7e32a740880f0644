package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A window restarted by every over-limit request never reopens while the
// probe knocks; the silent waits wait out its Retry-After and its Reset
// without sending anything on the key, and are then admitted (one wait
// serves both when the reset ends first). The plan's waits and the
// server's answers to them are the plan's and the reference contract's
// logic: it runs on the simulator (its waits are virtual time, not 12 s).
func TestSilentWaitsAreSilentAndAdmitted(t *testing.T) {
	obs := planSim(t, "builtin:fixed_window?limit=10&window=2s&penalty=restart", "", Options{MaxTime: 12 * time.Second})
	rs := obs.Results
	for _, phase := range []string{observation.PhaseRetryWait, observation.PhaseResetWait} {
		var wait *results.Result
		for i := range rs {
			if rs[i].Phase == phase {
				if wait != nil && phase == observation.PhaseResetWait {
					t.Fatalf("two %s requests", phase)
				}
				if wait == nil {
					wait = &rs[i] // the first: its own Retry-After's wait
				}
			}
		}
		if wait == nil && phase == observation.PhaseResetWait {
			// A reset that ended before the silent retry was sent was
			// tested by it: it was the key's next request in silence.
			for i := range rs {
				if rs[i].Phase == observation.PhaseRetryWait {
					wait = &rs[i]
					break
				}
			}
		}
		if wait == nil {
			t.Fatalf("no %s request; notes %q", phase, obs.Notes)
		}
		// The request before it on the key: a rejection, complete before
		// the wait began, with the whole Retry-After (or Reset) between.
		var prev *results.Result
		for i := range rs {
			if r := &rs[i]; r.Key == wait.Key && r.Sent < wait.Sent && (prev == nil || r.Sent > prev.Sent) {
				prev = r
			}
		}
		if prev == nil || !prev.Rejected() {
			t.Fatalf("%s: the request before it %+v is not a rejection", phase, prev)
		}
		var at time.Time
		var ok bool
		if phase == observation.PhaseRetryWait {
			at, ok = observation.RetryAfterOf(obs.Start, prev)
		} else {
			at, ok = observation.ResetOf(obs.Start, prev)
		}
		if !ok || obs.Start.Add(wait.Sent).Before(at) || wait.Sent < prev.Done {
			t.Fatalf("%s sent at %s, before seq %d's stated instant %s (ok %v)", phase, wait.Sent, prev.Seq, at.Sub(obs.Start), ok)
		}
		if !wait.Admitted() {
			t.Errorf("%s: status %d after a silent wait of %s (Retry-After %q)", phase, wait.Status, wait.Sent-prev.Done, prev.Headers["retry-after"])
		}
	}
}

// Without Retry-After or quota fields there is nothing to wait for: the
// probe says so and sends no wait request. (The plan's decision from the
// answers' headers: on the simulator.)
func TestSilentWaitsNeedHeaders(t *testing.T) {
	obs := planSim(t, "builtin:fixed_window?limit=10&window=1s&headers=none&retry-after=off", "", Options{MaxTime: MinTime})
	for _, r := range obs.Results {
		if r.Phase == observation.PhaseRetryWait || r.Phase == observation.PhaseResetWait {
			t.Fatalf("a %s request without a header to wait for", r.Phase)
		}
	}
	notes := strings.Join(obs.Notes, "\n")
	for _, want := range []string{"silent wait for Retry-After not run", "silent wait for Reset not run"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// Requests spread over several keys (--keys): no wait is silent on a key
// the plan can name, so none is run. (The plan's decision from its own
// options: on the simulator, which rotates the keys as the engine does.)
func TestSilentWaitsNeedOneKey(t *testing.T) {
	obs := planSim(t, "builtin:fixed_window?limit=5&window=1s&scope=header:X-Key", "X-Key", Options{MaxTime: MinTime, Engine: attack.Options{Keys: 3}})
	keys := map[string]bool{}
	for _, r := range obs.Results {
		keys[r.Key] = true
		if r.Phase == observation.PhaseRetryWait || r.Phase == observation.PhaseResetWait || r.Phase == observation.PhaseSilentExhaust {
			t.Fatalf("a %s request although the keys rotate", r.Phase)
		}
	}
	if len(keys) != 3 {
		t.Errorf("the requests went to keys %v, want 3", keys)
	}
	if notes := strings.Join(obs.Notes, "\n"); !strings.Contains(notes, "silent waits not run: the requests went to several keys") {
		t.Errorf("notes %q", notes)
	}
}
