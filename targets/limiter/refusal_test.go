package limiter

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A model whose rejections are inert decides a random schedule (bursts,
// knocking, silences, two keys) the same when the requests its refusals
// cover are left out, and refuses each of them; one whose rejections are
// charged, or move its grid, has a schedule on which leaving them out
// changes a later decision.
func TestRefusalsCoverWhatTheyClaim(t *testing.T) {
	origin := t0.Add(-1234567 * time.Microsecond)
	inert := []Config{
		{Algo: FixedWindow, Limit: 7, Window: 2 * time.Second, Align: AlignWall},
		{Algo: FixedWindow, Limit: 30, Window: 11 * time.Second, Align: AlignStart, Origin: origin},
		{Algo: FixedWindow, Limit: 5, Window: 3 * time.Second, Align: AlignFirst},
		{Algo: FixedWindow, Limit: 5, Window: 3 * time.Second, Align: AlignFirst, CountRejected: true},
		{Algo: SlidingLog, Limit: 9, Window: 4 * time.Second},
		{Algo: SlidingCounter, Limit: 10, Window: 5 * time.Second, Align: AlignWall},
		{Algo: SlidingCounter, Limit: 250, Window: 47 * time.Second, Align: AlignStart, Origin: origin},
		{Algo: SlidingCounter, Limit: 3, Window: time.Hour, Align: AlignWall},
		{Algo: SlidingCounter, Limit: 10, Window: 2 * time.Second, Align: AlignFirst},
		{Algo: SlidingCounter, Limit: 4, Window: 700 * time.Millisecond, Align: AlignFirst},
		{Algo: TokenBucket, Rate: 3.7, Burst: 12},
		{Algo: TokenBucket, Rate: 0.5, Burst: 1},
		{Algo: TokenBucket, Rate: 4, Burst: 10, RefillEvery: 2 * time.Second, Origin: origin},
		{Algo: LeakyShaping, Rate: 6, Burst: 8, DelayAfter: 3},
		{Algo: LeakyShaping, Rate: 480, Burst: 40},
		{Algo: TokenBucket, Rate: 3.7, Burst: 12, Block: 5 * time.Second},
		{Algo: SlidingLog, Limit: 4, Window: 2 * time.Second, Block: time.Second},
		tiersOf(t, TiersAll, "token_bucket:rate=2/s,burst=5", "fixed_window:limit=20,window=10s"),
		tiersOf(t, TiersEither, "sliding_counter:limit=5,window=1s", "sliding_log:limit=20,window=20s"),
	}
	for _, cfg := range inert {
		if !cfg.RejectionsInert() {
			t.Errorf("%+v: rejections not inert", cfg)
			continue
		}
		for seed := range uint64(4) {
			if i, why := refusalBreaks(t, cfg, seed); i >= 0 {
				t.Errorf("%s %s seed %d: request %d %s", cfg.Algo, cfg.Align, seed, i, why)
			}
		}
	}
	charged := []Config{
		{Algo: FixedWindow, Limit: 5, Window: 3 * time.Second, Align: AlignWall, Penalty: PenaltyRestart},
		{Algo: SlidingLog, Limit: 9, Window: 4 * time.Second, CountRejected: true},
		{Algo: SlidingCounter, Limit: 10, Window: 5 * time.Second, Align: AlignWall, CountRejected: true},
		tiersOf(t, TiersAll, "token_bucket:rate=2/s,burst=5", "sliding_log:limit=20,window=10s,count-rejected=on"),
	}
	for _, cfg := range charged {
		if cfg.RejectionsInert() {
			t.Errorf("%+v: said inert", cfg)
			continue
		}
		broke := false
		for seed := range uint64(4) {
			if i, _ := refusalBreaks(t, cfg, seed); i >= 0 {
				broke = true
			}
		}
		if !broke {
			t.Errorf("%s %s: leaving refused requests out changed nothing in 4 schedules", cfg.Algo, cfg.Align)
		}
	}
}

// refusalBreaks replays one random schedule through two copies of cfg:
// the first is asked every request, the second skips each request its
// last refusal of that key covers (RefusedUntil). It returns the first
// request the second skipped that the first admitted, or decided
// otherwise than the first, and why; -1 if none.
func refusalBreaks(t *testing.T, cfg Config, seed uint64) (int, string) {
	t.Helper()
	all, skipping := mustNew(t, cfg), mustNew(t, cfg)
	rng := rand.New(rand.NewPCG(seed, 7))
	refused := map[string][2]time.Time{} // per key: from, until
	at := t0
	for i := range 20000 {
		switch r := rng.IntN(100); {
		case r < 2: // a silence of up to a minute
			at = at.Add(time.Duration(rng.Int64N(int64(time.Minute))))
		case r < 5: // a pause of a few windows
			at = at.Add(time.Duration(rng.Int64N(int64(5 * time.Second))))
		case r < 40: // a burst's next request
		default: // knocking
			at = at.Add(time.Duration(rng.Int64N(int64(150 * time.Millisecond))))
		}
		key := [...]string{"a", "b"}[rng.IntN(2)]
		d := all.Allow(key, at)
		if span, ok := refused[key]; ok && !at.Before(span[0]) && at.Before(span[1]) {
			if d.Allowed {
				return i, "was skipped as refused, and admitted"
			}
			continue
		}
		s := skipping.Allow(key, at)
		if s.Allowed != d.Allowed || s.Delay != d.Delay {
			return i, "decided otherwise once refused requests were left out"
		}
		refused[key] = [2]time.Time{at, RefusedUntil(at, s)}
	}
	return -1, ""
}
