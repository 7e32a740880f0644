package plan

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
)

// firstTraceWait is when the trace's rule first asks to wait a lockout out
// in silence, on a virtual clock: cfg is exhausted by a burst at 1 s, then
// knocked on at the plan's hinted rate, every answer a millisecond after
// its send and carrying the model's Retry-After; -1 if the trace's stop
// rule ends it first, or it never asks within 40 s.
func firstTraceWait(t *testing.T, cfg limiter.Config) time.Duration {
	t.Helper()
	lim, err := limiter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &planner{deadline: 60 * time.Second, hintLimit: cfg.Capacity(), hintWindow: cfg.Window}
	burstAt := time.Second
	for range cfg.Capacity() + 10 {
		lim.Allow("", probetest.Epoch.Add(burstAt))
	}
	rate := traceMinHinted
	if cfg.Window > 0 {
		rate = min(max(4*float64(cfg.Capacity())/cfg.Window.Seconds(), traceMinHinted), traceMaxHinted)
	}
	var tr []*results.Result
	var retryAt time.Duration
	lastAdmit := burstAt
	for i, at := 0, burstAt+10*time.Millisecond; at < 40*time.Second; i, at = i+1, at+time.Duration(float64(time.Second)/rate) {
		d := lim.Allow("", probetest.Epoch.Add(at))
		r := &results.Result{Seq: i + 1, Phase: observation.PhaseTrace, Sent: at, Done: at + time.Millisecond, Status: 429}
		if d.Allowed {
			r.Status, lastAdmit = 200, at
		} else {
			retryAt = r.Done + d.RetryAfter
		}
		tr = append(tr, r)
		if i%traceCheckEvery != traceCheckEvery-1 {
			continue
		}
		if p.enough(tr, at-tr[0].Sent) {
			return -1 // the plan checks its stop rule first
		}
		if locked(tr, lastAdmit, r.Done) && p.traceWaitWanted(tr, rate, r, retryAt, time.Millisecond) {
			return at
		}
	}
	return -1
}

// The trace waits a lockout out in silence only where a trace of two steps
// and a silent wait after it would not fit in the probe's natural length:
// a sliding log of 100 per 10 s (30 s; its probe took 31 s), in the
// lockout after its first step; not a sliding log of 20 per 4 s, a fixed
// window of 10 per 1 s or a token bucket, whose probes have room for both.
func TestTraceWaitsOutALongLockoutInSilence(t *testing.T) {
	for _, c := range []struct {
		cfg      limiter.Config
		from, to time.Duration // the lockout the wait must fall in; 0: none
	}{
		{limiter.Config{Algo: limiter.SlidingLog, Limit: 100, Window: 10 * time.Second}, 11*time.Second + lockedAfter, 21 * time.Second},
		{limiter.Config{Algo: limiter.SlidingLog, Limit: 20, Window: 4 * time.Second}, 0, 0},
		{limiter.Config{Algo: limiter.FixedWindow, Limit: 10, Window: time.Second, Align: limiter.AlignWall}, 0, 0},
		{limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20}, 0, 0},
	} {
		got := firstTraceWait(t, c.cfg)
		switch {
		case c.to == 0 && got >= 0:
			t.Errorf("%v: the trace waited in silence at %v; its probe has room to knock through", c.cfg, got)
		case c.to > 0 && (got < c.from || got > c.to):
			t.Errorf("%v: the trace waited in silence at %v, want in the lockout after the first step, %v–%v", c.cfg, got, c.from, c.to)
		}
	}
}
