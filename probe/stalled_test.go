package probe

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// stalledVolley is a volley to a full bucket of 2 on a machine that stalled
// for 11 ms (a split volley of a CI run, in miniature): seq 1, sent first,
// was held and answered together with the three sent after it, which the
// server decided first — 2 and 4 admitted, 3 and 1 rejected. late is how
// long seq 1's answer took; a rejection answered at once (late 0.1 ms) is
// a plain misfit instead.
func stalledVolley(late time.Duration) *observation.Observation {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	r := func(seq int, sent, done time.Duration, status int) results.Result {
		return results.Result{Seq: seq, Phase: observation.PhaseSplit, Sent: sent, FirstByte: done, Done: done, Status: status}
	}
	return observation.New(epoch, []results.Result{
		r(1, ms(100), ms(100)+late, 429),
		r(2, ms(110.9), ms(111.05), 200),
		r(3, ms(110.95), ms(111.03), 429),
		r(4, ms(111), ms(111.06), 200),
	})
}

// A rejection answered late together with requests sent after it was
// decided when the machine resumed, in an order nobody saw: the replay
// puts it there, in their cluster, and the bucket explains every
// decision. Answered at once, the same rejection stays at its send, where
// the bucket would have admitted it — the misfit is real.
func TestStalledRejectionIsReplayedWhereItWasDecided(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 2}
	for _, c := range []struct {
		late       time.Duration
		mismatches int
	}{
		{11 * time.Millisecond, 0},
		{100 * time.Microsecond, 2},
	} {
		o := stalledVolley(c.late)
		got, err := fit.Replay(o, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if got.Mismatches != c.mismatches {
			t.Errorf("seq 1 answered after %v: the bucket misses %d decisions, want %d", c.late, got.Mismatches, c.mismatches)
		}
	}
}

// A rejection held long but answered alone (a limiter that delays its
// rejections, or a slow answer nothing else came out with) keeps its
// place: only answers that came out together show a stall.
func TestLateRejectionAloneKeepsItsPlace(t *testing.T) {
	o := stalledVolley(11 * time.Millisecond)
	o.Results = o.Results[:1]
	evs := o.Events()
	if want := o.Start.Add(o.Results[0].Sent + o.RTT/2); !evs[0].At.Equal(want) {
		t.Errorf("a late rejection answered alone placed at %v, want its send + RTT/2, %v", evs[0].At.Sub(o.Start), want.Sub(o.Start))
	}
}
