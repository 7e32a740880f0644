package probe

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// A recorded probe of sethvargo/go-limiter (20 tokens, interval 2 s): its
// bucket is refilled to capacity at every interval from the key's first
// request, a fixed window of 20 per 2 s on that grid. A token bucket of
// 20 refilled by 20 every 2 s is the same function. Fitted as a bucket it
// tied with its own window (confidence 0.5), and in one CI run of six the
// window search missed the grid and the run was named the bucket alone,
// confidence 0.92. A bucket whose every fill reaches capacity is fitted as
// the window it is.
func TestBucketRefilledToCapacityIsNamedItsWindow(t *testing.T) {
	obs := recordedObservation(t, "testdata/full-fill-bucket.jsonl")
	inf := Infer(obs)
	if inf.Family != limiter.FixedWindow || inf.Alignment != limiter.AlignStart || inf.Limit != 20 || inf.WindowS < 1.95 || inf.WindowS > 2.05 {
		t.Fatalf("named %s; truth a fixed window of 20 per 2 s on a start grid", inf.Summary())
	}
	if inf.Explained != inf.Decisions {
		t.Errorf("explains %d of %d decisions; the window on the fill grid explains them all", inf.Explained, inf.Decisions)
	}
	for _, a := range inf.Alternatives {
		if a.Family == limiter.TokenBucket && a.Equivalent {
			t.Errorf("token_bucket offered as an equivalent alternative: it is the same function, not another explanation")
		}
	}
}

// fullFillWindows turns only the buckets whose fill reaches capacity into
// windows, and replays them as windows.
func TestFullFillWindowsSplitsByFill(t *testing.T) {
	origin := time.Unix(1000, 0)
	full := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20, RefillEvery: 2 * time.Second, Origin: origin}
	part := limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 30, RefillEvery: 2 * time.Second, Origin: origin}
	// 25 requests 10 ms apart from the origin, then 25 more a fill later:
	// 20 of each admitted by both models.
	var evs []observation.Event
	for w := range 2 {
		for i := range 25 {
			at := origin.Add(time.Duration(w)*2*time.Second + time.Duration(i)*10*time.Millisecond)
			evs = append(evs, observation.Event{At: at, Key: "k", Admitted: i < 20})
		}
	}
	buckets, windows := fit.FullFillWindows(evs, []fit.Candidate{{Config: full}, {Config: part}}, 0)
	if len(buckets) != 1 || buckets[0].Config != part {
		t.Fatalf("kept as buckets: %+v; want only the one whose fill (20) is below its capacity (30)", buckets)
	}
	if len(windows) != 1 {
		t.Fatalf("windows: %+v; want one", windows)
	}
	w := windows[0]
	if w.Config.Algo != limiter.FixedWindow || w.Config.Limit != 20 || w.Config.Window != 2*time.Second || w.Config.Align != limiter.AlignStart || !w.Config.Origin.Equal(origin) {
		t.Errorf("window %+v; want 20 per 2 s from the fill instants", w.Config)
	}
	if w.Mismatches != 0 || w.Scored != len(evs) {
		t.Errorf("the window replays %d of %d decisions wrong (%d scored)", w.Mismatches, len(evs), w.Scored)
	}
}
