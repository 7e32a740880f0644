package limiter

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func mustTier(t *testing.T, s string) Tier {
	t.Helper()
	tr, err := ParseTier(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func tiersOf(t *testing.T, mode, t1, t2 string) Config {
	t.Helper()
	return Config{Algo: Tiers, TierMode: mode, Tiers: [2]Tier{mustTier(t, t1), mustTier(t, t2)}}
}

// Two nginx zones, 10 r/s burst 5 and 30 per minute: a burst passes the
// bucket's 5, the rejected ones are charged to neither tier, and once the
// minute's 30 are spent the bucket's refill is of no use until the window
// turns — when the bucket, never charged by the requests the window
// rejected, lets a whole burst of 5 through at once.
func TestTiersAllChargesOnlyWhenNoneRejects(t *testing.T) {
	l := mustNew(t, tiersOf(t, TiersAll, "token_bucket:rate=10/s,burst=5", "fixed_window:limit=30,window=1m"))
	if got := volley(l, "k", t0, 10); got != 5 {
		t.Fatalf("burst admitted %d, want the bucket's 5", got)
	}
	d := l.Allow("k", t0)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond || d.Remaining != 0 || d.Limit != 5 {
		t.Fatalf("after the burst: %+v, want rejected, retry in 100ms, limit 5", d)
	}
	// One every 100 ms: the window took 5 and (had the 6 rejected counted)
	// would close 6 requests early; it admits exactly 25 more.
	at := t0
	for i := range 25 {
		at = at.Add(100 * time.Millisecond)
		if d := l.Allow("k", at); !d.Allowed {
			t.Fatalf("request %d at %s rejected: %+v", i+1, at.Sub(t0), d)
		}
	}
	at = at.Add(100 * time.Millisecond)
	d = l.Allow("k", at)
	if d.Allowed || d.RetryAfter != t0.Add(time.Minute).Sub(at) {
		t.Fatalf("the 31st in the minute: %+v, want rejected until the window turns (%s)", d, t0.Add(time.Minute).Sub(at))
	}
	// Knock every 100 ms until the boundary: the window rejects them all,
	// so the bucket is charged nothing and is full when the window turns.
	for at = at.Add(100 * time.Millisecond); at.Before(t0.Add(time.Minute)); at = at.Add(100 * time.Millisecond) {
		if l.Allow("k", at).Allowed {
			t.Fatalf("admitted at %s with the window spent", at.Sub(t0))
		}
	}
	if got := volley(l, "k", t0.Add(time.Minute), 10); got != 5 {
		t.Fatalf("at the boundary the burst admitted %d, want 5 (the bucket was charged by rejected requests)", got)
	}
}

// Two shaping zones (testdata/nginx/two-zones.conf): 10 r/s burst 5 and
// 5 r/s burst 20. Of 20 at once the tighter queue admits 6, and each waits
// the larger of the two delays: the slower zone's k/5 s.
func TestTiersAllLargestDelay(t *testing.T) {
	l := mustNew(t, tiersOf(t, TiersAll, "leaky_shaping:rate=10/s,burst=5", "leaky_shaping:rate=5/s,burst=20"))
	var delays []time.Duration
	for range 20 {
		if d := l.Allow("k", t0); d.Allowed {
			delays = append(delays, d.Delay)
		}
	}
	want := []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond, 800 * time.Millisecond, time.Second}
	if len(delays) != len(want) {
		t.Fatalf("admitted %d (delays %v), want 6", len(delays), delays)
	}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", delays, want)
		}
	}
}

// 4 per second or a pool of 8 per 10 s: a burst takes the primary's 4
// then the pool's 8; after it the primary alone refills, 1 per 250 ms, and
// the pool comes back whole at its boundary. Requests the primary admits
// never touch the pool.
func TestTiersEitherPrimaryThenPool(t *testing.T) {
	l := mustNew(t, tiersOf(t, TiersEither, "token_bucket:rate=4/s,burst=4", "fixed_window:limit=8,window=10s"))
	// Three spaced requests the primary admits: the pool keeps its 8.
	for i := range 3 {
		if d := l.Allow("k", t0.Add(time.Duration(i)*time.Second)); !d.Allowed || d.Limit != 12 || d.Remaining != 11 {
			t.Fatalf("spaced request %d: %+v, want admitted, limit 12, remaining 11", i, d)
		}
	}
	at := t0.Add(3 * time.Second)
	for i := range 12 {
		d := l.Allow("k", at)
		if !d.Allowed || d.Remaining != 11-i {
			t.Fatalf("burst request %d: %+v, want admitted with %d remaining", i+1, d, 11-i)
		}
	}
	d := l.Allow("k", at)
	if d.Allowed || d.RetryAfter != 250*time.Millisecond || d.Remaining != 0 {
		t.Fatalf("after the burst: %+v, want rejected, retry in 250ms (the primary's refill)", d)
	}
	if d := l.Allow("k", at.Add(250*time.Millisecond)); !d.Allowed {
		t.Fatalf("the primary's token after 250ms: %+v", d)
	}
	// At the pool's boundary: the primary has refilled too.
	if got := volley(l, "k", t0.Add(10*time.Second), 20); got != 12 {
		t.Fatalf("at the boundary a burst admitted %d, want 4+8", got)
	}
}

// A short window with a burst pool beside it, both counting denied
// attempts: a client that keeps knocking after the burst is charged in
// the primary and then in the pool on every attempt, so neither comes back
// while it knocks faster than the primary's limit; once it falls silent,
// the primary returns after its window and the pool after its own.
func TestTiersEitherCountingKeepsAKnockerOut(t *testing.T) {
	c := tiersOf(t, TiersEither, "sliding_log:limit=4,window=1s,count-rejected=on", "sliding_log:limit=8,window=10s,count-rejected=on")
	l := mustNew(t, c)
	if got := volley(l, "k", t0, 20); got != 12 {
		t.Fatalf("burst admitted %d, want 4+8", got)
	}
	// Knocking every 100 ms for 12 s: the plain composition would admit
	// the primary's 4 every second; counting, every knock refills the
	// primary's log, and the pool's too.
	at := t0
	for range 120 {
		at = at.Add(100 * time.Millisecond)
		if d := l.Allow("k", at); d.Allowed {
			t.Fatalf("admitted at %s while knocking 10/s against 4/s counted", at.Sub(t0))
		}
	}
	// Silent for the primary's window: its 4 come back, not the pool's.
	at = at.Add(time.Second)
	if got := volley(l, "k", at, 12); got != 4 {
		t.Fatalf("after 1 s of silence %d admitted, want the primary's 4", got)
	}
	// Silent for the pool's window: both come back whole.
	at = at.Add(10 * time.Second)
	if got := volley(l, "k", at, 20); got != 12 {
		t.Fatalf("after 10 s of silence %d admitted, want 4+8", got)
	}
	plain := tiersOf(t, TiersEither, "sliding_log:limit=4,window=1s", "sliding_log:limit=8,window=10s")
	l = mustNew(t, plain)
	volley(l, "k", t0, 20)
	admitted := 0
	for at := t0.Add(100 * time.Millisecond); at.Before(t0.Add(12 * time.Second)); at = at.Add(100 * time.Millisecond) {
		if l.Allow("k", at).Allowed {
			admitted++
		}
	}
	if admitted < 40 {
		t.Fatalf("the plain composition admitted %d knocks in 12 s, want the primary's 4 a second", admitted)
	}
}

// Retry-After and Remaining of a composition tell the truth: after a
// rejection, a silent client is rejected just before RetryAfter and
// admitted at it; after any decision exactly Remaining requests at that
// instant are admitted. Checked on random traffic against copies of the
// model replayed to the same point.
func TestTiersRetryAfterAndRemainingAreTrue(t *testing.T) {
	for _, c := range []Config{
		tiersOf(t, TiersAll, "token_bucket:rate=10/s,burst=5", "fixed_window:limit=30,window=5s"),
		tiersOf(t, TiersAll, "token_bucket:rate=10/s,burst=5", "sliding_counter:limit=12,window=2s"),
		tiersOf(t, TiersAll, "leaky_shaping:rate=10/s,burst=4", "sliding_log:limit=9,window=3s"),
		tiersOf(t, TiersEither, "token_bucket:rate=4/s,burst=4", "fixed_window:limit=8,window=10s"),
		tiersOf(t, TiersEither, "sliding_log:limit=3,window=1s", "token_bucket:rate=0.5/s,burst=6"),
		tiersOf(t, TiersEither, "fixed_window:limit=4,window=1s,align=first", "sliding_counter:limit=10,window=4s"),
		tiersOf(t, TiersEither, "sliding_log:limit=3,window=1s,count-rejected=on", "sliding_log:limit=8,window=5s,count-rejected=on"),
		tiersOf(t, TiersEither, "sliding_counter:limit=4,window=1s,count-rejected=on", "sliding_counter:limit=10,window=4s,count-rejected=on"),
		tiersOf(t, TiersEither, "fixed_window:limit=4,window=1s,align=first,count-rejected=on", "sliding_log:limit=6,window=3s,count-rejected=on"),
		tiersOf(t, TiersAll, "token_bucket:rate=10/s,burst=5", "sliding_log:limit=12,window=2s,count-rejected=on"),
		tiersOf(t, TiersAll, "sliding_counter:limit=5,window=1s,count-rejected=on", "sliding_log:limit=12,window=3s"),
		tiersOf(t, TiersEither, "token_bucket:rate=4/s,burst=6,refill=1s", "fixed_window:limit=10,window=8s,align=first"),
		tiersOf(t, TiersAll, "fixed_window:limit=20,window=5s", "token_bucket:rate=4/s,burst=6,refill=1s"),
	} {
		t.Run(c.Tiers[0].String()+"|"+c.Tiers[1].String()+"|"+c.TierMode, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var history []time.Time
			replayTo := func() Limiter {
				l := mustNew(t, c)
				for _, at := range history {
					l.Allow("k", at)
				}
				return l
			}
			l := mustNew(t, c)
			at := t0.Add(123 * time.Millisecond)
			for range 300 {
				// Mostly volleys and short gaps, now and then a pause.
				switch rng.IntN(4) {
				case 0:
				case 3:
					at = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
				default:
					at = at.Add(time.Duration(rng.IntN(150)) * time.Millisecond)
				}
				d := l.Allow("k", at)
				history = append(history, at)
				if !d.Allowed {
					if d.RetryAfter <= time.Microsecond {
						t.Fatalf("rejected at %s with RetryAfter %s", at.Sub(t0), d.RetryAfter)
					}
					if replayTo().Allow("k", at.Add(d.RetryAfter-time.Microsecond)).Allowed {
						t.Fatalf("at %s: admitted before RetryAfter %s", at.Sub(t0), d.RetryAfter)
					}
					if !replayTo().Allow("k", at.Add(d.RetryAfter+time.Microsecond)).Allowed {
						t.Fatalf("at %s: rejected after RetryAfter %s", at.Sub(t0), d.RetryAfter)
					}
				}
				if got := volley(replayTo(), "k", at, d.Remaining+1); got != d.Remaining {
					t.Fatalf("at %s: Remaining %d but %d admitted at once (%+v)", at.Sub(t0), d.Remaining, got, d)
				}
			}
		})
	}
}

// check answers what Allow would, charging nothing: on random traffic each
// family's check agrees with the Allow that follows it, and the remaining
// it reports is the one before that request's charge (for a window that
// counts denied attempts, a denial's Retry-After is the one after it).
func TestCheckAgreesWithAllow(t *testing.T) {
	for _, c := range []Config{
		{Algo: TokenBucket, Rate: 7, Burst: 5},
		{Algo: TokenBucket, Rate: 6, Burst: 5, RefillEvery: 500 * time.Millisecond, Origin: t0.Add(77 * time.Millisecond)},
		{Algo: LeakyShaping, Rate: 10, Burst: 4, DelayAfter: 2},
		{Algo: FixedWindow, Limit: 5, Window: time.Second, Align: AlignWall},
		{Algo: FixedWindow, Limit: 5, Window: 700 * time.Millisecond, Align: AlignFirst},
		{Algo: FixedWindow, Limit: 5, Window: 900 * time.Millisecond, Align: AlignStart, Origin: t0.Add(333 * time.Millisecond)},
		{Algo: SlidingLog, Limit: 6, Window: time.Second},
		{Algo: SlidingCounter, Limit: 8, Window: time.Second},
		{Algo: SlidingLog, Limit: 6, Window: time.Second, CountRejected: true},
		{Algo: SlidingCounter, Limit: 8, Window: time.Second, CountRejected: true},
		{Algo: FixedWindow, Limit: 5, Window: time.Second, Align: AlignWall, CountRejected: true},
	} {
		t.Run(fmt.Sprintf("%s/%s/counting=%v/refill=%s", c.Algo, c.Align, c.CountRejected, c.RefillEvery), func(t *testing.T) {
			lim := mustNew(t, c)
			ch, ok := lim.(checker)
			if !ok {
				t.Fatalf("%s has no check", c.Algo)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			at := t0
			admitted := 0
			for i := range 2000 {
				at = at.Add(time.Duration(rng.IntN(120)) * time.Millisecond)
				want := ch.check("k", at)
				again := ch.check("k", at)
				got := lim.Allow("k", at)
				if want != again {
					t.Fatalf("request %d: check changed state: %+v then %+v", i, want, again)
				}
				if got.Allowed {
					admitted++
					want.Remaining--
					want.Reset = got.Reset // a charge moves the reset
				} else if c.CountRejected {
					// The denied attempt was charged: Allow's Retry-After
					// is the one after it, which check now gives.
					after := ch.check("k", at)
					if after.Allowed || after.RetryAfter != got.RetryAfter {
						t.Fatalf("request %d at %s: denied with %+v, then check says %+v", i, at.Sub(t0), got, after)
					}
					want.RetryAfter, want.Reset = got.RetryAfter, got.Reset
				}
				if want != got {
					t.Fatalf("request %d at %s: check %+v, Allow %+v", i, at.Sub(t0), want, got)
				}
			}
			if admitted == 0 || admitted == 2000 {
				t.Fatalf("%d of 2000 admitted: the traffic never tested both answers", admitted)
			}
		})
	}
}

func TestTiersSpelling(t *testing.T) {
	var c Config = Defaults()
	for _, kv := range [][2]string{{"algo", "tiers"}, {"mode", "all"}, {"t1", "token_bucket:rate=10/s,burst=5"}, {"t2", "fixed_window:limit=30,window=1m"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Tiers[0].String() + " " + c.Tiers[1].String(); got != "token_bucket:rate=10/s,burst=5 fixed_window:limit=30,window=1m0s" {
		t.Fatalf("tiers read back as %q", got)
	}
	for _, tr := range append(c.Tiers[:], mustTier(t, "sliding_log:limit=8,window=5s,count-rejected=on"), mustTier(t, "token_bucket:rate=3.5/s,burst=69,refill=2s")) {
		if back, err := ParseTier(tr.String()); err != nil || back != tr {
			t.Fatalf("%s read back as %+v, %v", tr, back, err)
		}
	}
	for _, bad := range []struct {
		set  [][2]string
		want string
	}{
		{[][2]string{{"algo", "tiers"}, {"t1", "token_bucket:rate=1/s"}, {"t2", "token_bucket:rate=2/s"}}, "mode=all"},
		{[][2]string{{"algo", "tiers"}, {"mode", "any"}}, `got "any"`},
		{[][2]string{{"algo", "tiers"}, {"mode", "all"}, {"t1", "token_bucket:rate=1/s"}}, "t2 is missing"},
		{[][2]string{{"t1", "concurrency:max-inflight=3"}}, "FAMILY one of token_bucket"},
		{[][2]string{{"t1", "fixed_window:limit=3,penalty=restart"}}, "not \"penalty\""},
		{[][2]string{{"t1", "token_bucket:rate=1/s,count-rejected=on"}}, "count-rejected=on applies to fixed_window"},
		{[][2]string{{"t1", "fixed_window:limit=3,limit=4"}}, "limit is given twice"},
		{[][2]string{{"t1", "fixed_window:limit"}}, "has no value"},
		{[][2]string{{"t1", "token_bucket:rate=fast"}}, "rate \"fast\""},
		{[][2]string{{"t2", "leaky_shaping:burst=unbounded"}}, "cannot be a tier"},
		{[][2]string{{"algo", "token_bucket"}, {"mode", "all"}}, "apply to algorithm tiers only"},
	} {
		c := Defaults()
		var err error
		for _, kv := range bad.set {
			if err = c.Set(kv[0], kv[1]); err != nil {
				break
			}
		}
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: error %v, want one saying %q", bad.set, err, bad.want)
		}
	}
}
