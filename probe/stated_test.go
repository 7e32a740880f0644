package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A stated capacity a burst exceeds stops the probe after that burst, with
// the burst as the evidence; one the burst does not exceed lets it run on.
func TestSimStatedCapacityRefutedByTheBurst(t *testing.T) {
	const target = "builtin:fixed_window?limit=100&window=1m"
	wrong := Stated{What: "limit=80", AtOnce: 81, Straddle: true, Window: 54 * time.Second}
	res := probeSim(t, target, "", Options{Stated: []Stated{wrong}})
	if res.Elapsed > 15*time.Second || !hasNote(res.Notes, "the probe stopped after burst 1: the burst of 210 released at once admitted 97, where limit=80 admits at most 81") {
		t.Errorf("ran %s, notes %q: want a stop after the first burst, naming it", res.Elapsed, res.Notes)
	}
	right := Stated{What: "limit=100", AtOnce: 101, Straddle: true, Window: 54 * time.Second}
	res = probeSim(t, target, "", Options{Stated: []Stated{right}, MaxTime: 20 * time.Second})
	if hasNote(res.Notes, "the probe stopped after burst") || res.Elapsed < 15*time.Second {
		t.Errorf("a right capacity stopped the probe: ran %s, notes %q", res.Elapsed, res.Notes)
	}
}

// What can let a burst through beyond a capacity is not a refutation: a
// fixed window's boundary inside the burst (up to twice, unless the stated
// window makes that too unlikely), a bucket's refill while it arrives, a
// concurrency cap's slot freed by an early answer.
func TestStatedCapacityAllowsWhatCouldExplainIt(t *testing.T) {
	burst := func(admitted, n int, answered time.Duration) *observation.Observation {
		var rs []results.Result
		for i := range n {
			r := results.Result{Seq: i, Phase: observation.PhaseBurst, Sent: time.Second + time.Duration(i)*10*time.Microsecond, Status: 429}
			r.Done = r.Sent + time.Millisecond
			if i < admitted {
				r.Status, r.Done = 200, answered
			}
			rs = append(rs, r)
		}
		return &observation.Observation{Results: rs, RTT: time.Millisecond}
	}
	for _, tc := range []struct {
		name    string
		s       Stated
		obs     *observation.Observation
		refuted bool
	}{
		{"window unknown, within twice", Stated{What: "limit=80", AtOnce: 81, Straddle: true}, burst(97, 210, 2*time.Second), false},
		{"window unknown, beyond twice", Stated{What: "limit=40", AtOnce: 41, Straddle: true}, burst(97, 210, 2*time.Second), true},
		{"a minute's window", Stated{What: "limit=80", AtOnce: 81, Straddle: true, Window: time.Minute}, burst(97, 210, 2*time.Second), true},
		{"a 1 s window", Stated{What: "limit=80", AtOnce: 81, Straddle: true, Window: time.Second}, burst(97, 210, 2*time.Second), false},
		{"a bucket's refill", Stated{What: "burst=20", AtOnce: 21, RefillPerS: 2000}, burst(24, 100, 2*time.Second), false},
		{"a cap freed early", Stated{What: "max-inflight=4", AtOnce: 5, MayRelease: true}, burst(9, 50, time.Second), false},
		{"a cap held", Stated{What: "max-inflight=4", AtOnce: 5, MayRelease: true}, burst(9, 50, 2*time.Second), true},
	} {
		why, ok := Refutes(tc.obs, tc.s)
		if ok != tc.refuted {
			t.Errorf("%s: refuted %v (%s), want %v", tc.name, ok, why, tc.refuted)
		}
		if ok && !strings.Contains(why, tc.s.What) {
			t.Errorf("%s: evidence %q does not name %s", tc.name, why, tc.s.What)
		}
	}
}
