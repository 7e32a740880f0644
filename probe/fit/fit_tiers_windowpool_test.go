package fit

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A fixed window of 4 per second beside a burst pool of 20 per 10 s, both
// opening at a key's first request, on a virtual clock: the burst takes
// both, then the trace (every 100 ms) shows the primary's clumps of 4,
// one each second, and nothing of the pool. The trace's first seconds fit
// no bucket's refill; the clumps seed the primary, the rest of the burst
// the pool, and the search explains every decision with them.
func TestTiersSeedAWindowPrimaryFromItsClumps(t *testing.T) {
	truth, o := windowPoolRun(t)
	evs := o.Events()
	r := earlyRegime(evs)
	var seeded bool
	for _, p := range tracePrimaries(evs, r, r.burstAdmitted) {
		seeded = seeded || p == truth.Tiers[0]
	}
	if !seeded {
		t.Fatalf("the trace's clumps did not seed %s: %v", truth.Tiers[0], tracePrimaries(evs, r, r.burstAdmitted))
	}
	best := FitTiers(evs, Hypotheses{}, o.RTT)
	if len(best) == 0 || best[0].Mismatches != 0 {
		t.Fatalf("best compositions %+v, want one explaining all %d decisions", best, len(evs))
	}
	if p := best[0].Config.Tiers[0]; p.Algo != limiter.FixedWindow || p.Limit != 4 || p.Window != time.Second {
		t.Fatalf("primary %s, want %s", p, truth.Tiers[0])
	}
}

// A window primary beside a burst pool decides every request of its run
// as two tiers do: alone, the primary rejects most of the burst and the
// pool admits the trace's every knock, so each tier decides part of it. A
// bucket beside a window it never fills is the bucket alone.
func TestTiersDecideOnlyWhenEachTierDoes(t *testing.T) {
	pool, o := windowPoolRun(t)
	evs := o.Events()
	unc := observation.DecisionUncertainty(o.RTT)
	if !TiersDecide(evs, Candidate{Config: pool}, unc, EquivalenceSlack(len(evs))) {
		t.Fatal("a primary and its pool: one tier explains the run alone")
	}
	idle := limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 20},
		{Algo: limiter.FixedWindow, Limit: 10000, Window: time.Minute},
	}}
	o = probetest.Simulated(t, idle.Tiers[0].Config(time.Time{}), probetest.Epoch, 1500*time.Millisecond, 100*time.Millisecond)
	evs = o.Events()
	if TiersDecide(evs, Candidate{Config: idle}, unc, EquivalenceSlack(len(evs))) {
		t.Fatal("a window of 10000 beside a bucket of 20 decided part of a run of a few hundred requests")
	}
	if TiersDecide(evs, Candidate{Config: idle.Tiers[0].Config(time.Time{})}, unc, 1) {
		t.Fatal("a single model is no composition")
	}
}

// windowPoolRun is a fixed window of 4 per second beside a burst pool of 20
// per 10 s, both opening at a key's first request, and its run on a
// virtual clock: a burst at 1.5 s, then the trace every 100 ms.
func windowPoolRun(t *testing.T) (limiter.Config, *observation.Observation) {
	c := limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{
		{Algo: limiter.FixedWindow, Limit: 4, Window: time.Second, Align: limiter.AlignFirst},
		{Algo: limiter.FixedWindow, Limit: 20, Window: 10 * time.Second, Align: limiter.AlignFirst},
	}}
	return c, probetest.Simulated(t, c, probetest.Epoch, 1500*time.Millisecond, 100*time.Millisecond)
}
