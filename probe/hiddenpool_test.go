package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A bucket's burst is earned only when a silence short enough gave more
// than half of it back: a burst and a trace (no silence at all) leave a
// bucket of half the capacity beside a pool explaining every decision,
// and the verdict says so and what would tell them apart.
func TestBurstNeverSeenToComeBackIsNotEarned(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 4, Burst: 40}
	obs := probetest.Simulated(t, bucket, probetest.Epoch, time.Second, 100*time.Millisecond)
	why := hiddenPool(obs.Events(), bucket)
	if !strings.Contains(why, "pool of 20") || !strings.Contains(why, "between 5s and 15s") {
		t.Fatalf("a burst of 40 seen only refilling one by one: %q", why)
	}
	// A bucket of 3 has no hidden half worth naming, and a window no
	// burst to hide one in.
	if why := hiddenPool(obs.Events(), limiter.Config{Algo: limiter.TokenBucket, Rate: 4, Burst: 3}); why != "" {
		t.Errorf("a bucket of 3: %q", why)
	}
	if why := hiddenPool(obs.Events(), limiter.Config{Algo: limiter.FixedWindow, Limit: 40, Window: 10 * time.Second}); why != "" {
		t.Errorf("a window: %q", why)
	}
}

// The same bucket emptied, then a volley after a silence: 12 s (over one
// refill) gives all 40 back and earns the burst; 45 s gives them
// back too, but a pool whose window ended in so long a silence would
// have as well.
func TestBurstThatCameBackSoonIsEarned(t *testing.T) {
	bucket := limiter.Config{Algo: limiter.TokenBucket, Rate: 4, Burst: 40}
	for _, c := range []struct {
		silence time.Duration
		earned  bool
	}{{12 * time.Second, true}, {45 * time.Second, false}} {
		obs := probetest.Simulated(t, bucket, probetest.Epoch, time.Second, 100*time.Millisecond)
		lim, err := limiter.New(bucket)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range obs.Results {
			lim.Allow("", obs.Start.Add(r.Sent))
		}
		add := func(at time.Duration) bool {
			r := obs.Results[len(obs.Results)-1]
			r.Seq, r.Sent, r.Phase, r.Status = r.Seq+1, at, observation.PhaseSplit, 429
			r.Done, r.FirstByte = at+time.Millisecond, at+time.Millisecond
			if lim.Allow("", obs.Start.Add(at)).Allowed {
				r.Status = 200
			}
			obs.Results = append(obs.Results, r)
			return r.Status == 200
		}
		at := obs.Results[len(obs.Results)-1].Sent
		for at += 5 * time.Millisecond; add(at); at += 5 * time.Millisecond {
		} // empty: the silence follows a rejection
		for i := range 45 {
			add(at + c.silence + time.Duration(i)*time.Millisecond)
		}
		if why := hiddenPool(obs.Events(), bucket); (why == "") != c.earned {
			t.Errorf("after a silence of %s: %q", c.silence, why)
		}
	}
}

// End to end on the simulator: a bucket of 4/s and 16 beside a pool of 25
// per 2m30s, which a 60 s probe never sees return, was named a bucket of
// 41 at 0.94 (sweep seed 2492877495056558); a bucket of 41 whose plan
// waited for its reset keeps its confidence.
func TestSimBurstPoolIsNoConfidentBucket(t *testing.T) {
	res := probeSim(t, "builtin:tiers?mode=either&t1=token_bucket:rate=4.02/s,burst=16&t2=fixed_window:limit=25,window=2m30s", "", Options{})
	if inf := res.Inference; inf.Family == limiter.TokenBucket && inf.Confidence >= 0.8 {
		t.Fatalf("a burst pool named a bucket of %d at %.2f", inf.Burst, inf.Confidence)
	}
	res = probeSim(t, "builtin:token_bucket?rate=4.02/s&burst=41", "", Options{})
	if inf := res.Inference; inf.Family != limiter.TokenBucket || inf.Confidence < 0.8 {
		t.Fatalf("a bucket of 41 named %s at %.2f: %v", inf.Family, inf.Confidence, inf.Evidence)
	}
}
