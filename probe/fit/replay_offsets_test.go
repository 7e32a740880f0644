package fit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A model whose windows open at a key's own requests decides by the time
// between requests alone: moved by a clock offset, every event of a run
// is answered as before. So it is replayed at one offset, and a wall grid
// at three (a first-aligned fixed window was replayed at three, to the
// same answers, until it was noticed). On recorded runs, every
// first-aligned variant — counting denied attempts, restarted by a
// rejection, shut by a block — and the other relative models.
func TestModelsOffTheWallGridIgnoreTheClockOffset(t *testing.T) {
	for _, name := range []string{"fixed-start-knocked", "restart-knocked-shut", "tiers-pinned-rate", "fast-refill-bucket-of-one"} {
		obs := probetest.Recorded(t, "../testdata/"+name+".jsonl")
		evs := observation.KeyMajor(obs.Events())
		unc := observation.DecisionUncertainty(obs.RTT)
		eps := observation.ArrivalUncertainty(obs.RTT)
		h := HypothesesOf(obs)
		compared := 0
		for _, c := range relativeGrid(h) {
			if offs := replayOffsets(c, obs.RTT); !slices.Equal(offs, []time.Duration{0}) {
				t.Fatalf("%+v is replayed at offsets %v: it reads no wall grid", c, offs)
			}
			at0 := make([]answer, len(evs))
			m0 := replayOn(mustModel(t, c), placeEvents(evs, 0, unc), math.MaxInt32, at0, c.RejectionsInert())
			for _, off := range []time.Duration{-eps, eps} {
				moved := make([]answer, len(evs))
				m := replayOn(mustModel(t, c), placeEvents(evs, off, unc), math.MaxInt32, moved, c.RejectionsInert())
				if m != m0 || !slices.Equal(moved, at0) {
					t.Fatalf("%s: %+v misses %d at offset %v, %d at none", name, c, m, off, m0)
				}
			}
			compared++
		}
		if compared < 100 {
			t.Fatalf("%s: only %d models compared", name, compared)
		}
	}
}

// relativeGrid is every model on every third of h's limits and every
// other of its windows and rates (the race detector runs this test) whose
// decisions depend on the time between requests only: first-aligned
// fixed windows (plain, counting, restarting, blocking) and sliding
// counters, logs, buckets and shaping queues.
func relativeGrid(h Hypotheses) []limiter.Config {
	var out []limiter.Config
	for _, l := range everyNth(h.Limits, 3) {
		for _, w := range everyNth(h.Windows, 2) {
			fw := limiter.Config{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignFirst}
			counting, restart, block := fw, fw, fw
			counting.CountRejected = true
			restart.Penalty = limiter.PenaltyRestart
			block.Block = w / 2
			out = append(out, fw, counting, restart, block,
				limiter.Config{Algo: limiter.SlidingCounter, Limit: l, Window: w, Align: limiter.AlignFirst},
				limiter.Config{Algo: limiter.SlidingLog, Limit: l, Window: w, CountRejected: l%2 == 0})
		}
		for _, r := range everyNth(h.Rates, 2) {
			out = append(out, limiter.Config{Algo: limiter.TokenBucket, Rate: r, Burst: l},
				limiter.Config{Algo: limiter.LeakyShaping, Rate: r, Burst: l, DelayAfter: l / 2})
		}
	}
	return out
}

// everyNth is every n-th of xs, from the first.
func everyNth[T any](xs []T, n int) []T {
	var out []T
	for i := 0; i < len(xs); i += n {
		out = append(out, xs[i])
	}
	return out
}
