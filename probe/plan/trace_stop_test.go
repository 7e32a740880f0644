package plan

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
)

// traceAgainst is the recovery trace a probe would record against cfg on a
// virtual clock: a burst of 30 at burstAt exhausts it, then single requests
// every `every`, except that the sender stalls for `stall` after the
// request at stallAt (zero: never). Each is decided on arrival, half a
// millisecond after its send, and answered after any delay the model
// imposes.
func traceAgainst(t *testing.T, cfg limiter.Config, burstAt, every time.Duration, n int, stallAt, stall time.Duration) []*results.Result {
	t.Helper()
	lim, err := limiter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		lim.Allow("", probetest.Epoch.Add(burstAt))
	}
	var tr []*results.Result
	at := burstAt + 10*time.Millisecond
	for i := range n {
		status := 429
		d := lim.Allow("", probetest.Epoch.Add(at+time.Millisecond/2))
		if d.Allowed {
			status = 200
		}
		done := at + time.Millisecond + d.Delay
		tr = append(tr, &results.Result{Seq: i + 1, Phase: observation.PhaseTrace, Scheduled: at, Sent: at, FirstByte: done, Done: done, Status: status})
		at += every
		if stall > 0 && at >= stallAt && at < stallAt+every {
			at += stall
		}
	}
	return tr
}

// stopAt is when the trace's stop rule, evaluated as the plan does (every
// traceCheckEvery sends, on the answers that have arrived, in their order
// of arrival), ends the trace: the send time of the last request, or -1
// if it never does.
func stopAt(tr []*results.Result) time.Duration {
	p := &planner{}
	start := tr[0].Sent
	for i := traceCheckEvery - 1; i < len(tr); i += traceCheckEvery {
		now := tr[i].Sent + time.Millisecond
		var answered []*results.Result
		for _, r := range tr[:i+1] {
			if r.Done <= now {
				answered = append(answered, r)
			}
		}
		slices.SortStableFunc(answered, func(a, b *results.Result) int { return cmp.Compare(a.Done, b.Done) })
		if p.enough(answered, now-start) {
			return tr[i].Sent
		}
	}
	return -1
}

// A bucket's trace is a continuous refill: it stops after continuousSpan,
// and a stall of the sender (which sends nothing, and whose next request
// the bucket admits) does not make it look locked. Nor does a queue
// (nginx burst=5 without nodelay), whose admissions are answered up to
// half a second after rejections sent later: the trace took the end of
// the trace for a lock and ran to the budget.
func TestTraceStopsOnAContinuousRefill(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 5}
	queue := limiter.Config{Algo: limiter.LeakyShaping, Rate: 10, Burst: 5}
	for _, c := range []struct {
		cfg   limiter.Config
		stall time.Duration
	}{{bucket, 0}, {bucket, 400 * time.Millisecond}, {queue, 0}} {
		stall := c.stall
		tr := traceAgainst(t, c.cfg, 4*time.Second, 10*time.Millisecond, 1000, 5*time.Second, stall)
		if since, locked := sinceLastLock(tr[:300]); len(since) != 300 || locked {
			t.Errorf("%s, stall %v: the trace looks locked", c.cfg.Algo, stall)
		}
		got := stopAt(tr) - tr[0].Sent
		if got < continuousSpan || got > continuousSpan+stall+100*time.Millisecond {
			t.Errorf("%s, stall %v: the trace stopped after %v, want just past %v", c.cfg.Algo, stall, got, continuousSpan)
		}
	}
}

// A bucket behind a window (two tiers, all must admit) admits singles at
// the bucket's rate until the window binds, then nothing until the next
// boundary. Its first 2 s look like a continuous refill; the trace must
// not stop there, but go on until it has seen the window's steps: the
// probe that stopped at 2 s named a first-aligned window of the wrong
// length (TestSimProbeNamesTwoTiers/all, about 1 run in 4 under load).
func TestTraceDoesNotStopOnABucketBehindAWindow(t *testing.T) {
	tiers := limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll}
	tiers.Tiers[0] = limiter.Tier{Algo: limiter.TokenBucket, Rate: 10, Burst: 5}
	tiers.Tiers[1] = limiter.Tier{Algo: limiter.FixedWindow, Limit: 12, Window: 5 * time.Second, Align: limiter.AlignWall}
	tr := traceAgainst(t, tiers, 4*time.Second, 10*time.Millisecond, 2000, 0, 0)
	if got := stopAt(tr); got < 10*time.Second {
		t.Fatalf("the trace stopped at %v, before the window's second boundary (10 s)", got)
	}
}
