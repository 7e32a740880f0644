package probe

import (
	"context"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A dense trace is one chain of arrivals each within the timing
// uncertainty of the last, but its order is uncertain only between
// neighbours: an admission sent long after a run of rejections keeps its
// own instant, and a concurrency cap that the decisions fit exactly is
// not charged with the order of a burst.
func TestDenseTraceIsNotOneBurst(t *testing.T) {
	const (
		rtt     = 40 * time.Millisecond
		hold    = 150 * time.Millisecond // each admitted request stays in flight this long at the server
		cap     = 4
		spacing = 2 * time.Millisecond // far below the arrival uncertainty (rtt/2): one chain
	)
	o := &observation.Observation{Start: epoch, RTT: rtt}
	var inflight []time.Duration // departures of the admitted, at the server
	for i := range 200 {
		sent := time.Duration(i) * spacing
		arrival := sent + rtt/2
		busy := 0
		for _, d := range inflight {
			if d > arrival {
				busy++
			}
		}
		r := results.Result{Seq: i + 1, Phase: observation.PhaseTrace, Sent: sent, Status: 429, Done: sent + rtt}
		if busy < cap {
			r.Status, r.Done = 200, sent+rtt+hold
			inflight = append(inflight, arrival+hold)
		}
		r.FirstByte = r.Done
		o.Results = append(o.Results, r)
	}
	eps := observation.ArrivalUncertainty(rtt)
	for _, ev := range o.Events() {
		own := ev.Sent.Add(rtt / 2)
		if d := ev.At.Sub(own); d.Abs() > eps {
			t.Fatalf("request %d placed %v from its own arrival, beyond the uncertainty %v", ev.Index, d, eps)
		}
	}
	got, err := fit.Replay(o, limiter.Config{Algo: limiter.Concurrency, MaxInflight: cap})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mismatches != 0 {
		t.Errorf("the cap that made the decisions misses %d of them", got.Mismatches)
	}
}

// A window's recovered capacity comes back as one run of admissions
// however the trace's pace changed before it: knocking densely through
// the lock and more slowly once admitted does not cut the step.
func TestRecoveredStepSurvivesDenseKnocking(t *testing.T) {
	var rs []results.Result
	add := func(sentMs float64, admitted bool) {
		sent := time.Duration(sentMs * float64(time.Millisecond))
		status := 429
		if admitted {
			status = 200
		}
		rs = append(rs, results.Result{Seq: len(rs) + 1, Phase: observation.PhaseTrace, Sent: sent, Done: sent + time.Millisecond, Status: status})
	}
	for i := range 900 { // dense knocking through the lock: 1 ms apart
		add(float64(i), false)
	}
	for i := range 50 { // the window's capacity back, knocked 4 ms apart
		add(1000+4*float64(i), true)
	}
	starts := fit.GroupStarts(rs, 3*time.Millisecond) // three times the median spacing
	if len(starts) != 1 || starts[0] != time.Second {
		t.Errorf("steps start at %v, want one at 1s", starts)
	}
	// A pause in the knocking still ends a run.
	add(3000, true)
	for i := range 10 {
		add(3001+float64(i), true)
	}
	if starts := fit.GroupStarts(rs, 3*time.Millisecond); len(starts) != 2 || starts[1] != 3*time.Second {
		t.Errorf("after a 1.8 s pause, steps start at %v, want a second at 3s", starts)
	}
}

// A rejection "just after" one release is no concurrency cap's doing
// unless enough requests were still in flight to fill it: a token bucket's
// trace, whose requests the server holds for no time, is refuted by a cap
// of 4 however near each rejection falls to the last admission's release.
func TestOneReleaseDoesNotExcuseARejection(t *testing.T) {
	const rtt = 40 * time.Millisecond
	o := &observation.Observation{Start: epoch, RTT: rtt}
	bucket, _ := limiter.New(limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 1})
	rejected := 0
	for i := range 100 { // 50/s, five times the bucket's rate
		sent := time.Duration(i) * 20 * time.Millisecond
		r := results.Result{Seq: i + 1, Phase: observation.PhaseTrace, Sent: sent, Done: sent + rtt, FirstByte: sent + rtt, Status: 200}
		if !bucket.Allow("", epoch.Add(sent+rtt/2)).Allowed {
			r.Status = 429
			rejected++
		}
		o.Results = append(o.Results, r)
	}
	got, err := fit.Replay(o, limiter.Config{Algo: limiter.Concurrency, MaxInflight: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mismatches < rejected*9/10 {
		t.Errorf("a cap of 4 with at most one request in flight misses %d decisions; the %d rejections are its misses", got.Mismatches, rejected)
	}
}

// A cap on requests in flight is observed only through requests held in
// flight: on a link whose timing uncertainty (25 ms) exceeds how long the
// server holds anything, a token bucket beside a pool that a cap of 1
// "explains" (any order of arrivals and releases within the uncertainty
// will do) is named no better than not refuted. The sweep's seed that
// named it at 0.88.
func TestSimCapHoldingNothingIsNotConfident(t *testing.T) {
	const spec = "builtin:tiers?mode=either&t1=token_bucket:rate=182.21/s,burst=1&t2=fixed_window:limit=126,window=4s"
	opt := simOptions(t, spec, "jitter=3.84ms&rtt=25.01ms&seed=3334709453405464", Options{})
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), req, opt)
	if err != nil {
		t.Fatal(err)
	}
	inf := res.Inference
	if inf.Family == limiter.Concurrency && inf.Confidence > 0.5 {
		t.Errorf("named %s at %.2f: the server held its requests within the timing uncertainty", inf.Summary(), inf.Confidence)
	}
}
