package limiter

import (
	"strings"
	"testing"
	"time"
)

// A sliding counter that counts denied attempts stays shut while a client
// knocks above the limit, and reopens only after enough silence: the
// HAProxy http_req_rate lockout. Without count-rejected the same knocking
// is admitted again soon after the next boundary.
func TestSlidingCounterCountRejectedLocksOutAKnocker(t *testing.T) {
	for _, counting := range []bool{false, true} {
		l := mustNew(t, Config{Algo: SlidingCounter, Limit: 10, Window: 10 * time.Second, CountRejected: counting})
		if got := volley(l, "k", t0, 10); got != 10 {
			t.Fatalf("counting=%v: first volley admitted %d", counting, got)
		}
		// Knock 5/s (above 10 per 10 s) for 20 s.
		admitted := 0
		for i := 1; i <= 100; i++ {
			if l.Allow("k", t0.Add(time.Duration(i)*200*time.Millisecond)).Allowed {
				admitted++
			}
		}
		if counting && admitted != 0 {
			t.Fatalf("counting: a knocker was admitted %d times", admitted)
		}
		if !counting && admitted == 0 {
			t.Fatalf("plain: nothing admitted in 20 s of knocking")
		}
	}
	// Counting: the last knock is at 20 s, alone in window [20, 30) (curr
	// 1); prev [10, 20) holds the 50 knocks from 10 s to 19.8 s. A silent
	// client is admitted when 1 + 50·(1 − e/10) + 1 ≤ 10: e = 8.4 s, at
	// 28.4 s, and the rejection at 20 s says so.
	l := mustNew(t, Config{Algo: SlidingCounter, Limit: 10, Window: 10 * time.Second, CountRejected: true})
	volley(l, "k", t0, 10)
	var last Decision
	for i := 1; i <= 100; i++ {
		last = l.Allow("k", t0.Add(time.Duration(i)*200*time.Millisecond))
	}
	want := 8400 * time.Millisecond
	if last.Allowed || (last.RetryAfter-want).Abs() > time.Microsecond {
		t.Fatalf("last knock: %+v, want rejected with RetryAfter %s", last, want)
	}
	if d := l.Allow("k", t0.Add(20*time.Second+want-time.Millisecond)); d.Allowed {
		t.Fatalf("admitted 1 ms before the promised instant: %+v", d)
	}
}

// The promise of a counting sliding counter's Retry-After holds for a
// client that is silent until then: admitted exactly at it, not before.
func TestSlidingCounterCountRejectedRetryAfterIsExact(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingCounter, Limit: 4, Window: 2 * time.Second, CountRejected: true})
	volley(l, "k", t0.Add(500*time.Millisecond), 10) // 4 admitted, 6 counted: curr 10
	d := l.Allow("k", t0.Add(1500*time.Millisecond)) // curr 11
	// Next window: 11·(1 − e/2) ≤ 3 → e = 2·(8/11) s.
	w := float64(2 * time.Second)
	want := 500*time.Millisecond + time.Duration(w*8/11)
	if d.Allowed || (d.RetryAfter-want).Abs() > time.Microsecond {
		t.Fatalf("RetryAfter %s, want %s", d.RetryAfter, want)
	}
	at := t0.Add(1500 * time.Millisecond).Add(d.RetryAfter)
	if l2 := mustNew(t, l.Config()); l2 != nil {
		volley(l2, "k", t0.Add(500*time.Millisecond), 10)
		l2.Allow("k", t0.Add(1500*time.Millisecond))
		if e := l2.Allow("k", at.Add(-time.Millisecond)); e.Allowed {
			t.Fatalf("admitted before Retry-After: %+v", e)
		}
	}
	if e := l.Allow("k", at); !e.Allowed {
		t.Fatalf("not admitted at Retry-After: %+v", e)
	}
}

// A sliding log that logs denied attempts admits a request only when fewer
// than L attempts lie in the trailing window.
func TestSlidingLogCountRejected(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingLog, Limit: 3, Window: time.Second, CountRejected: true})
	if got := volley(l, "k", t0, 3); got != 3 {
		t.Fatalf("admitted %d of the first 3", got)
	}
	d := l.Allow("k", t0.Add(600*time.Millisecond)) // logged: t0×3, 0.6
	// Two must leave for the count to drop to 2: the third t0 entry, at 1 s.
	if d.Allowed || d.RetryAfter != 400*time.Millisecond {
		t.Fatalf("rejection: %+v, want RetryAfter 400ms", d)
	}
	// At 1 s the three t0 entries have left; 0.6 remains: admitted.
	if d := l.Allow("k", t0.Add(time.Second)); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("at 1 s: %+v", d)
	}
	// Knocking every 300 ms (above 3 per second) is never admitted again
	// once the log is full of attempts.
	l = mustNew(t, Config{Algo: SlidingLog, Limit: 3, Window: time.Second, CountRejected: true})
	volley(l, "k", t0, 3)
	for i := 1; i <= 40; i++ {
		if l.Allow("k", t0.Add(time.Duration(i)*300*time.Millisecond)).Allowed && i > 4 {
			t.Fatalf("knock %d admitted", i)
		}
	}
	// The plain log, on the same schedule, rejects the first three knocks
	// and then admits three of every four (an admission returns 1 s later,
	// the fourth knock is 1.2 s on): 28 of 40.
	p := mustNew(t, Config{Algo: SlidingLog, Limit: 3, Window: time.Second})
	volley(p, "k", t0, 3)
	if got := func() (n int) {
		for i := 1; i <= 40; i++ {
			if p.Allow("k", t0.Add(time.Duration(i)*300*time.Millisecond)).Allowed {
				n++
			}
		}
		return n
	}(); got != 28 {
		t.Fatalf("plain log admitted %d of 40 knocks, want 28", got)
	}
}

// count-rejected on a fixed window shows only in Remaining: the window
// resets at its boundary whatever the count.
func TestFixedWindowCountRejected(t *testing.T) {
	l := mustNew(t, Config{Algo: FixedWindow, Limit: 2, Window: time.Second, Align: AlignWall, CountRejected: true})
	if got := volley(l, "k", t0.Add(100*time.Millisecond), 5); got != 2 {
		t.Fatalf("admitted %d", got)
	}
	if got := volley(l, "k", t0.Add(time.Second), 5); got != 2 {
		t.Fatalf("next window admitted %d", got)
	}
}

// block=D shuts the key for D after the first rejection, whatever the
// algorithm; knocking during the block neither counts nor extends it.
func TestBlockShutsTheKey(t *testing.T) {
	l := mustNew(t, Config{Algo: TokenBucket, Rate: 10, Burst: 2, Block: 3 * time.Second})
	if got := volley(l, "k", t0, 3); got != 2 {
		t.Fatalf("admitted %d of 3", got)
	}
	// The bucket refills in 0.2 s, but the key is shut until t0+3s.
	for i := 1; i < 30; i++ {
		d := l.Allow("k", t0.Add(time.Duration(i)*100*time.Millisecond))
		if want := 3*time.Second - time.Duration(i)*100*time.Millisecond; d.Allowed || d.RetryAfter != want {
			t.Fatalf("knock at %d00 ms: %+v, want rejected with RetryAfter %s", i, d, want)
		}
	}
	if got := volley(l, "k", t0.Add(3*time.Second), 2); got != 2 {
		t.Fatalf("after the block admitted %d, want the full bucket of 2", got)
	}
	// The block is at least the algorithm's own wait: a 10 s window with a
	// 1 s block reopens at the boundary.
	w := mustNew(t, Config{Algo: FixedWindow, Limit: 1, Window: 10 * time.Second, Align: AlignWall, Block: time.Second})
	w.Allow("k", t0)
	if d := w.Allow("k", t0.Add(time.Second)); d.Allowed || d.RetryAfter != 9*time.Second {
		t.Fatalf("block shorter than the window: %+v, want RetryAfter 9s", d)
	}
	if d := w.Allow("k", t0.Add(5*time.Second)); d.Allowed || d.RetryAfter != 5*time.Second {
		t.Fatalf("during the block: %+v", d)
	}
	if d := w.Allow("k", t0.Add(10*time.Second)); !d.Allowed {
		t.Fatalf("at the boundary: %+v", d)
	}
}

// A pacer never rejects; the k-th request of a burst waits k/r.
func TestLeakyShapingUnboundedNeverRejects(t *testing.T) {
	l := mustNew(t, Config{Algo: LeakyShaping, Rate: 20, QueueUnbounded: true})
	for k := 0; k < 500; k++ {
		d := l.Allow("k", t0)
		if want := time.Duration(k) * 50 * time.Millisecond; !d.Allowed || d.Delay != want {
			t.Fatalf("request %d: %+v, want admitted after %s", k, d, want)
		}
	}
	// The backlog drains at r: 10 s later 300 of the 500 are gone.
	if d := l.Allow("k", t0.Add(10*time.Second)); !d.Allowed || d.Delay != 15*time.Second {
		t.Fatalf("after 10 s: %+v, want a delay of 15 s", d)
	}
}

// align=start anchors the grid at its origin: a fixed window and a sliding
// counter of 1 s whose origin is at .3 s (before or after the requests) open
// windows at .3 s, not on the second.
func TestAlignStartPhase(t *testing.T) {
	fw := mustNew(t, Config{Algo: FixedWindow, Limit: 2, Window: time.Second, Align: AlignStart, Origin: t0.Add(-4700 * time.Millisecond)})
	if got := volley(fw, "k", t0.Add(200*time.Millisecond), 3); got != 2 {
		t.Fatalf("admitted %d", got)
	}
	if d := fw.Allow("k", t0.Add(299*time.Millisecond)); d.Allowed || d.RetryAfter != time.Millisecond {
		t.Fatalf("1 ms before the shifted boundary: %+v", d)
	}
	if got := volley(fw, "k", t0.Add(300*time.Millisecond), 3); got != 2 {
		t.Fatalf("at the shifted boundary admitted %d", got)
	}
	sc := mustNew(t, Config{Algo: SlidingCounter, Limit: 2, Window: time.Second, Align: AlignStart, Origin: t0.Add(5300 * time.Millisecond)})
	volley(sc, "k", t0.Add(200*time.Millisecond), 2) // window [-0.7, 0.3): curr 2
	// In [0.3, 1.3) prev = 2 weighs 2·(1 − e): one more fits from e = 0.5,
	// at 0.8 s (on the wall grid it would be 1.5 s).
	if d := sc.Allow("k", t0.Add(799*time.Millisecond)); d.Allowed {
		t.Fatalf("before half the shifted window: %+v", d)
	}
	if d := sc.Allow("k", t0.Add(800*time.Millisecond)); !d.Allowed {
		t.Fatalf("at half the shifted window: %+v", d)
	}
}

func TestVariantParameters(t *testing.T) {
	c := Defaults()
	for _, kv := range [][2]string{{"algo", "sliding_counter"}, {"limit", "30"}, {"window", "10s"}, {"count-rejected", "on"}, {"block", "5s"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil || !c.CountRejected || c.Block != 5*time.Second || c.PenaltyKind() != PenaltyBlock {
		t.Fatalf("%+v: %v", c, err)
	}
	p := Defaults()
	_ = p.Set("algo", "leaky_shaping")
	if err := p.Set("burst", "unbounded"); err != nil || !p.QueueUnbounded || p.Validate() != nil {
		t.Fatalf("burst=unbounded: %+v %v", p, err)
	}
	bad := []struct {
		cfg Config
		msg string
	}{
		{Config{Algo: TokenBucket, Rate: 1, Burst: 1, CountRejected: true}, "count-rejected=on applies to"},
		{Config{Algo: TokenBucket, Rate: 1, Burst: 1, QueueUnbounded: true}, "burst=unbounded applies to leaky_shaping"},
		{Config{Algo: None, Block: time.Second}, "none never does"},
		{Config{Algo: SlidingCounter, Limit: 1, Window: time.Second, Align: "midnight"}, "sliding_counter align"},
	}
	for _, b := range bad {
		if err := b.cfg.Validate(); err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%+v: %v, want %q", b.cfg, err, b.msg)
		}
	}
	if err := c.Set("count-rejected", "maybe"); err == nil || !strings.Contains(err.Error(), "use on or off") {
		t.Errorf("count-rejected=maybe: %v", err)
	}
}

// HAProxy's freq_ctr (align=first): a key's grid is anchored at its first
// request, not at the wall clock; it advances one period at a time while
// requests come, and re-anchors at the next request after two idle
// periods. Limit 4 per 1 s, first request 300 ms past a whole second.
func TestSlidingCounterFirstAlignedIsHAProxysGrid(t *testing.T) {
	l := mustNew(t, Config{Algo: SlidingCounter, Limit: 4, Window: time.Second, Align: AlignFirst})
	a := t0.Add(300 * time.Millisecond) // the anchor
	at := func(d time.Duration) time.Time { return a.Add(d) }
	if got := volley(l, "k", at(0), 6); got != 4 {
		t.Fatalf("first volley admitted %d, want 4", got)
	}
	// The wall second turns at +700 ms; this grid does not: still full.
	if l.Allow("k", at(800*time.Millisecond)).Allowed {
		t.Fatal("admitted at +800 ms: the grid turned at the wall second, not one period after the first request")
	}
	// At +1.5 s the previous period (4) weighs 0.5: estimate 2, room for 2.
	if got := volley(l, "k", at(1500*time.Millisecond), 3); got != 2 {
		t.Fatalf("+1.5 s admitted %d, want 2 (4 × 0.5 + 2 = 4)", got)
	}
	// The grid is at [+1 s, +2 s); a request at +3.9 s is two or more
	// periods on (a wall grid would be at [+3.7 s, +4.7 s) with an empty
	// previous window): both counters are stale and the grid re-anchors at
	// the request.
	if got := volley(l, "k", at(3900*time.Millisecond), 5); got != 4 {
		t.Fatalf("after two idle periods admitted %d, want 4", got)
	}
	// Re-anchored at +3.9 s: full until +4.9 s, and at +5.4 s half of it
	// weighs on the new period.
	if l.Allow("k", at(4800*time.Millisecond)).Allowed {
		t.Fatal("admitted at +4.8 s: the grid did not re-anchor at +3.9 s")
	}
	if got := volley(l, "k", at(5400*time.Millisecond), 3); got != 2 {
		t.Fatalf("+5.4 s admitted %d, want 2", got)
	}
	// Within two periods the grid moves on by exactly one: from
	// [+4.9, +5.9) a request at +6.8 s falls in [+5.9, +6.9), whose
	// previous period holds the 2 admitted at +5.4 s (weight 0.1). The
	// share is rounded down, as HAProxy's integer arithmetic does:
	// ⌊2 × 0.1⌋ = 0, so 3 are left after it, not 2.
	d := l.Allow("k", at(6800*time.Millisecond))
	if !d.Allowed || d.Remaining != 3 {
		t.Fatalf("+6.8 s: %+v, want admitted with 3 left (⌊2 × 0.1⌋ + 1 = 1)", d)
	}
}

// The Retry-After of HAProxy's rounded-down share is exact: a silent
// client is admitted at it and not a nanosecond before.
func TestSlidingCounterFirstAlignedRetryAfterIsExact(t *testing.T) {
	for _, counting := range []bool{false, true} {
		afters := []time.Duration{700 * time.Millisecond} // in the volley's period
		if counting {
			afters = append(afters, 2300*time.Millisecond) // in the next: 14 counted weigh on it
		}
		for _, after := range afters {
			l := mustNew(t, Config{Algo: SlidingCounter, Limit: 10, Window: 2 * time.Second, Align: AlignFirst, CountRejected: counting}).(checker)
			volley(l, "k", t0, 14)
			d := l.Allow("k", t0.Add(after))
			if d.Allowed || d.RetryAfter <= 0 {
				t.Fatalf("counting=%v, +%v: %+v, want rejected with a Retry-After", counting, after, d)
			}
			open := t0.Add(after + d.RetryAfter)
			if l.check("k", open.Add(-time.Nanosecond)).Allowed {
				t.Errorf("counting=%v, +%v: admitted before Retry-After %v", counting, after, d.RetryAfter)
			}
			if !l.check("k", open).Allowed {
				t.Errorf("counting=%v, +%v: rejected at Retry-After %v", counting, after, d.RetryAfter)
			}
		}
	}
}
