package limiter

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A composition BindingTier reduces to one tier decides (and delays) every
// request of a random schedule (bursts, knocking, silences) as that tier
// alone does;
// one it keeps whole has a schedule on which it does not. The truths: the
// sweep's (a bucket beside a window it never fills, a log beside a window
// of a second it never fills) and their binding twins.
func TestBindingTierDecidesAsTheComposition(t *testing.T) {
	for _, c := range []struct {
		t1, t2 string
		single bool
	}{
		{"token_bucket:rate=1.31/s,burst=2", "fixed_window:limit=130,window=12s", true},
		{"sliding_log:limit=27,window=1m42s", "fixed_window:limit=51,window=1s", true},
		{"fixed_window:limit=10,window=2s", "token_bucket:rate=6/s,burst=21", true},
		{"sliding_counter:limit=10,window=1s", "sliding_log:limit=41,window=2s", true},
		{"token_bucket:rate=12.68/s,burst=15", "fixed_window:limit=160,window=3m", false},
		{"sliding_log:limit=27,window=1m42s", "fixed_window:limit=20,window=1s", false},
		{"fixed_window:limit=10,window=2s", "token_bucket:rate=4/s,burst=21", false},
		// A shaping queue that never refuses still delays.
		{"fixed_window:limit=10,window=2s", "leaky_shaping:rate=10/s,burst=50", false},
		{"leaky_shaping:rate=2/s,burst=4", "fixed_window:limit=20,window=2s", true},
	} {
		comp := tiersOf(t, TiersAll, c.t1, c.t2)
		single, ok := BindingTier(comp)
		if ok != c.single {
			t.Errorf("%s + %s: reduced to one tier %v, want %v", c.t1, c.t2, ok, c.single)
			continue
		}
		if !ok {
			// Both tiers bind somewhere: the composition is neither alone.
			for _, tier := range comp.Tiers {
				if firstDifference(t, comp, tier.Config(comp.Origin), 1) < 0 {
					t.Errorf("%s + %s decides every request as %s alone, yet was kept whole", c.t1, c.t2, tier)
				}
			}
			continue
		}
		if differ := firstDifference(t, comp, single, 1); differ >= 0 {
			t.Errorf("%s + %s decides request %d unlike %s alone", c.t1, c.t2, differ, TierOf(single))
		}
	}
}

// firstDifference replays one random schedule through a and b and returns
// the first request they decide or delay differently, or -1.
func firstDifference(t *testing.T, a, b Config, seed uint64) int {
	t.Helper()
	la, lb := mustNew(t, a), mustNew(t, b)
	rng := rand.New(rand.NewPCG(seed, 0))
	at := t0
	for i := range 20000 {
		switch r := rng.IntN(100); {
		case r < 2: // a silence of up to two minutes
			at = at.Add(time.Duration(rng.Int64N(int64(2 * time.Minute))))
		case r < 40: // a burst's next request
		default: // knocking
			at = at.Add(time.Duration(rng.Int64N(int64(200 * time.Millisecond))))
		}
		if da, db := la.Allow("k", at), lb.Allow("k", at); da.Allowed != db.Allowed || da.Delay != db.Delay {
			return i
		}
	}
	return -1
}
