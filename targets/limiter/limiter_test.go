package limiter

import (
	"testing"
	"time"
)

// t0 is 12:04:00 UTC, an exact multiple of a minute, so wall-clock windows
// of 1m open at t0, t0+1m, ...
var t0 = time.Date(2026, 1, 1, 12, 4, 0, 0, time.UTC)

func mustNew(t *testing.T, cfg Config) Limiter {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return l
}

// volley sends n requests of key at instant at and returns how many passed.
func volley(l Limiter, key string, at time.Time, n int) int {
	ok := 0
	for range n {
		if l.Allow(key, at).Allowed {
			ok++
		}
	}
	return ok
}

// The seeds' boundary exploit: 100/min, 100 requests at 12:04:59 and 100 at
// 12:05:01 — a fixed window admits all 200 within two seconds.
func TestFixedWindowBoundaryDouble(t *testing.T) {
	l := mustNew(t, Config{Algo: FixedWindow, Limit: 100, Window: time.Minute, Align: AlignWall})
	first := volley(l, "k", t0.Add(59*time.Second), 100)
	second := volley(l, "k", t0.Add(61*time.Second), 100)
	if first+second != 200 {
		t.Fatalf("admitted %d+%d across the boundary, want 100+100", first, second)
	}
	// and the window itself still holds: a 101st in the same window fails.
	d := l.Allow("k", t0.Add(62*time.Second))
	if d.Allowed || d.RetryAfter != 58*time.Second || d.Remaining != 0 {
		t.Fatalf("101st in window: %+v, want rejected with RetryAfter 58s", d)
	}
}

func TestFixedWindowFirstRequestAlignment(t *testing.T) {
	l := mustNew(t, Config{Algo: FixedWindow, Limit: 3, Window: 10 * time.Second, Align: AlignFirst})
	start := t0.Add(7 * time.Second) // not a multiple of 10 s
	if got := volley(l, "k", start, 5); got != 3 {
		t.Fatalf("first window admitted %d, want 3", got)
	}
	// The wall-clock boundary at t0+10s means nothing to this alignment.
	if d := l.Allow("k", t0.Add(10*time.Second)); d.Allowed {
		t.Fatalf("admitted at wall boundary: %+v", d)
	}
	d := l.Allow("k", start.Add(10*time.Second-time.Nanosecond))
	if d.Allowed || d.RetryAfter != time.Nanosecond {
		t.Fatalf("1ns before the window closes: %+v", d)
	}
	if got := volley(l, "k", start.Add(10*time.Second), 5); got != 3 {
		t.Fatalf("second window admitted %d, want 3", got)
	}
	// Other keys have their own windows.
	if got := volley(l, "other", start.Add(10*time.Second), 5); got != 3 {
		t.Fatalf("other key admitted %d, want 3", got)
	}
}

func TestFixedWindowHeaders(t *testing.T) {
	l := mustNew(t, Config{Algo: FixedWindow, Limit: 5, Window: 2 * time.Second, Align: AlignWall})
	now := t0.Add(500 * time.Millisecond)
	for i := 1; i <= 5; i++ {
		d := l.Allow("k", now)
		if !d.Allowed || d.Remaining != 5-i || d.Limit != 5 || d.Reset != 1500*time.Millisecond {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
}

// The sliding log catches the second volley completely.
func TestSlidingLogCatchesBoundaryVolley(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingLog, Limit: 100, Window: time.Minute})
	first := volley(l, "k", t0.Add(59*time.Second), 100)
	second := volley(l, "k", t0.Add(61*time.Second), 100)
	if first != 100 || second != 0 {
		t.Fatalf("admitted %d then %d, want 100 then 0", first, second)
	}
	d := l.Allow("k", t0.Add(61*time.Second))
	if d.RetryAfter != 58*time.Second {
		t.Fatalf("RetryAfter %v, want 58s (when the first admission leaves)", d.RetryAfter)
	}
}

// Each admission comes back exactly W after it happened, not before.
func TestSlidingLogExactReturn(t *testing.T) {
	W := 10 * time.Second
	l := mustNew(t, Config{Algo: SlidingLog, Limit: 4, Window: W})
	for i := range 4 {
		if !l.Allow("k", t0.Add(time.Duration(i)*time.Second)).Allowed {
			t.Fatalf("request %d rejected", i)
		}
	}
	for i := range 4 {
		at := t0.Add(time.Duration(i)*time.Second + W)
		if d := l.Allow("k", at.Add(-time.Nanosecond)); d.Allowed {
			t.Fatalf("slot %d came back 1ns early", i)
		}
		if d := l.Allow("k", at); !d.Allowed {
			t.Fatalf("slot %d not back at exactly W: %+v", i, d)
		}
	}
}

// The seeds' worked example: previous window 80, current 20, 30% into the
// current window ⇒ 20 + 80 × 0.7 = 76.
func TestSlidingCounterWorkedExample(t *testing.T) {
	l := newSlidingCounter(Config{Algo: SlidingCounter, Limit: 100, Window: time.Minute})
	volley(l, "k", t0.Add(10*time.Second), 80)
	volley(l, "k", t0.Add(61*time.Second), 20)
	at := t0.Add(time.Minute + 18*time.Second) // 30% into the window
	now := l.clock.at(at)
	s := l.roll("k", now)
	if got := l.estimate(s, now); got < 75.999999 || got > 76.000001 {
		t.Fatalf("estimate = %v, want 76", got)
	}
	d := l.Allow("k", at)
	if !d.Allowed || d.Remaining != 23 {
		t.Fatalf("decision %+v, want admitted with 23 remaining (100 − 77)", d)
	}
}

// The sliding counter lets at most one request of the second volley through.
func TestSlidingCounterCatchesBoundaryVolley(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingCounter, Limit: 100, Window: time.Minute})
	first := volley(l, "k", t0.Add(59*time.Second), 100)
	second := volley(l, "k", t0.Add(61*time.Second), 100)
	// estimate at 12:05:01 is 100 × 59/60 = 98.33: room for exactly one.
	if first != 100 || second != 1 {
		t.Fatalf("admitted %d then %d, want 100 then 1", first, second)
	}
	d := l.Allow("k", t0.Add(61*time.Second))
	// est+1 ≤ 100 again when 1 + 100(1−e/60) ≤ 99 ⇒ e = 1.2 s into the window.
	if d.Allowed || d.RetryAfter != 200*time.Millisecond {
		t.Fatalf("%+v, want rejected with RetryAfter 200ms", d)
	}
	if !l.Allow("k", t0.Add(61200*time.Millisecond)).Allowed {
		t.Fatal("not admitted at the RetryAfter instant")
	}
}

func TestSlidingCounterForgetsAfterTwoIdleWindows(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingCounter, Limit: 10, Window: time.Second})
	volley(l, "k", t0, 10)
	if got := volley(l, "k", t0.Add(2*time.Second), 20); got != 10 {
		t.Fatalf("after two idle windows admitted %d, want 10", got)
	}
}

// r=10/s, b=100: a client at exactly 10/s is never limited, and after idle
// all 100 of a burst pass and the 101st does not.
func TestTokenBucketSeedExample(t *testing.T) {
	l := mustNew(t, Config{Algo: TokenBucket, Rate: 10, Burst: 100})
	for i := range 600 { // a minute at 10/s
		if d := l.Allow("steady", t0.Add(time.Duration(i)*100*time.Millisecond)); !d.Allowed {
			t.Fatalf("steady 10/s client limited at request %d: %+v", i, d)
		}
	}
	idle := t0.Add(time.Hour)
	if got := volley(l, "bursty", idle, 100); got != 100 {
		t.Fatalf("burst after idle admitted %d, want 100", got)
	}
	d := l.Allow("bursty", idle)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("101st: %+v, want rejected, RetryAfter 100ms", d)
	}
	if l.Allow("bursty", idle.Add(99*time.Millisecond)).Allowed {
		t.Fatal("token came back early")
	}
	if !l.Allow("bursty", idle.Add(100*time.Millisecond)).Allowed {
		t.Fatal("token not back after 1/r")
	}
}

func TestTokenBucketRejectTakesNothing(t *testing.T) {
	l := mustNew(t, Config{Algo: TokenBucket, Rate: 2, Burst: 1})
	l.Allow("k", t0)
	for i := range 10 { // hammering while empty must not delay the refill
		l.Allow("k", t0.Add(time.Duration(i)*10*time.Millisecond))
	}
	if !l.Allow("k", t0.Add(500*time.Millisecond)).Allowed {
		t.Fatal("rejected requests consumed tokens")
	}
}

// Leaky shaping, nginx rate=10r/s burst=5: a burst of 20 at one instant has
// 6 admitted, delayed 0, 100, …, 500 ms — exactly 1/r apart — and 14
// rejected.
func TestLeakyShapingStaircase(t *testing.T) {
	l := mustNew(t, Config{Algo: LeakyShaping, Rate: 10, Burst: 5})
	var delays []time.Duration
	rejected := 0
	for range 20 {
		d := l.Allow("k", t0)
		if d.Allowed {
			delays = append(delays, d.Delay)
		} else {
			rejected++
		}
	}
	if len(delays) != 6 || rejected != 14 {
		t.Fatalf("admitted %d rejected %d, want 6 and 14", len(delays), rejected)
	}
	for i, d := range delays {
		if want := time.Duration(i) * 100 * time.Millisecond; d != want {
			t.Fatalf("delay[%d] = %v, want %v", i, d, want)
		}
	}
	// One slot drains every 100 ms.
	if l.Allow("k", t0.Add(99*time.Millisecond)).Allowed {
		t.Fatal("admitted before a slot drained")
	}
	d := l.Allow("k", t0.Add(100*time.Millisecond))
	if !d.Allowed || d.Delay != 500*time.Millisecond {
		t.Fatalf("after 100 ms: %+v, want admitted with 500ms delay", d)
	}
}

// A steady stream above the rate leaves the queue spaced exactly 1/r apart.
func TestLeakyShapingSpacesOutput(t *testing.T) {
	l := mustNew(t, Config{Algo: LeakyShaping, Rate: 4, Burst: 100})
	var departures []time.Time
	for i := range 40 { // 20/s arrivals into a 4/s drain
		at := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		d := l.Allow("k", at)
		if !d.Allowed {
			t.Fatalf("request %d rejected with a queue of 100", i)
		}
		departures = append(departures, at.Add(d.Delay))
	}
	for i := 1; i < len(departures); i++ {
		if gap := departures[i].Sub(departures[i-1]); gap != 250*time.Millisecond {
			t.Fatalf("gap %d = %v, want exactly 250ms", i, gap)
		}
	}
}

// nginx delay=N: the first N excess requests pass undelayed.
func TestLeakyShapingDelayAfter(t *testing.T) {
	l := mustNew(t, Config{Algo: LeakyShaping, Rate: 10, Burst: 10, DelayAfter: 4})
	var delays []time.Duration
	for range 15 {
		if d := l.Allow("k", t0); d.Allowed {
			delays = append(delays, d.Delay)
		}
	}
	want := []time.Duration{0, 0, 0, 0, 0, 100, 200, 300, 400, 500, 600}
	if len(delays) != len(want) {
		t.Fatalf("admitted %d, want %d", len(delays), len(want))
	}
	for i := range want {
		if delays[i] != want[i]*time.Millisecond && !(want[i] == 0 && delays[i] == 0) {
			t.Fatalf("delays = %v, want %v ms", delays, want)
		}
	}
}

func TestConcurrencyCap(t *testing.T) {
	l := mustNew(t, Config{Algo: Concurrency, MaxInflight: 2})
	// Sequential requests are never limited.
	for i := range 100 {
		if !l.Allow("k", t0).Allowed {
			t.Fatalf("sequential request %d rejected", i)
		}
		l.Release("k", t0)
	}
	a, b, c := l.Allow("k", t0), l.Allow("k", t0), l.Allow("k", t0)
	if !a.Allowed || !b.Allowed || c.Allowed {
		t.Fatalf("three in flight: %v %v %v, want admit admit reject", a.Allowed, b.Allowed, c.Allowed)
	}
	l.Release("k", t0)
	if !l.Allow("k", t0).Allowed {
		t.Fatal("slot not freed by Release")
	}
}

func TestNoneNeverLimits(t *testing.T) {
	l := mustNew(t, Config{Algo: None})
	if got := volley(l, "k", t0, 10000); got != 10000 {
		t.Fatalf("none admitted %d of 10000", got)
	}
}

// penalty=restart: every over-limit request restarts the window, so only a
// client silent for a whole window after its last rejection gets back in;
// one that keeps knocking stays out. Without the penalty the same knock is
// admitted at the wall boundary.
func TestFixedWindowPenaltyRestart(t *testing.T) {
	cfg := Config{Algo: FixedWindow, Limit: 3, Window: 2 * time.Second, Align: AlignWall, Penalty: PenaltyRestart}
	l := mustNew(t, cfg)
	if got := volley(l, "k", t0.Add(500*time.Millisecond), 3); got != 3 {
		t.Fatalf("admitted %d of the first 3", got)
	}
	d := l.Allow("k", t0.Add(time.Second))
	if d.Allowed || d.RetryAfter != 2*time.Second || d.Reset != 2*time.Second || d.Remaining != 0 {
		t.Fatalf("4th: %+v, want rejected, RetryAfter and Reset 2s", d)
	}
	// Past the wall boundary at t0+2s but inside the restarted window.
	d = l.Allow("k", t0.Add(2500*time.Millisecond))
	if d.Allowed || d.RetryAfter != 2*time.Second {
		t.Fatalf("knock at 2.5s: %+v, want rejected with RetryAfter 2s", d)
	}
	if d := l.Allow("k", t0.Add(4500*time.Millisecond-time.Nanosecond)); d.Allowed {
		t.Fatalf("1ns before the restarted window ends: %+v", d)
	}
	// That knock restarted it again: silence for its whole Retry-After.
	at := t0.Add(4500*time.Millisecond - time.Nanosecond).Add(2 * time.Second)
	d = l.Allow("k", at)
	// Back on wall windows: t0+6s..t0+8s holds at.
	if !d.Allowed || d.Remaining != 2 || d.Reset != t0.Add(8*time.Second).Sub(at) {
		t.Fatalf("after a silent Retry-After: %+v, want admitted, 2 left, reset at t0+8s", d)
	}
	// Another key is untouched.
	if !l.Allow("other", t0.Add(2500*time.Millisecond)).Allowed {
		t.Fatal("another key was blocked")
	}

	cfg.Penalty = PenaltyNone
	l = mustNew(t, cfg)
	volley(l, "k", t0.Add(500*time.Millisecond), 4)
	if d := l.Allow("k", t0.Add(2500*time.Millisecond)); !d.Allowed {
		t.Fatalf("without the penalty the knock at 2.5s is in a fresh window: %+v", d)
	}
}

func TestFixedWindowPenaltyRestartFirstAligned(t *testing.T) {
	l := mustNew(t, Config{Algo: FixedWindow, Limit: 2, Window: 2 * time.Second, Align: AlignFirst, Penalty: PenaltyRestart})
	start := t0.Add(700 * time.Millisecond)
	volley(l, "k", start, 2)
	if d := l.Allow("k", start.Add(time.Second)); d.Allowed || d.RetryAfter != 2*time.Second {
		t.Fatalf("3rd: %+v", d)
	}
	// The first window would have closed at start+2s; the restart holds to start+3s.
	if d := l.Allow("k", start.Add(2500*time.Millisecond)); d.Allowed {
		t.Fatalf("at start+2.5s: %+v", d)
	}
	at := start.Add(4500 * time.Millisecond)
	d := l.Allow("k", at)
	if !d.Allowed || d.Remaining != 1 || d.Reset != 2*time.Second {
		t.Fatalf("silent 2s after the last knock: %+v, want a fresh window opened now", d)
	}
}
