package limiter

import (
	"strings"
	"testing"
	"time"
)

// A bucket of 20 refilled with 10 tokens every second at a phase 370 ms
// past t0's second: drained, it gives nothing back until the next fill
// instant, then ten at once; Retry-After and Reset name fill instants.
func TestIntervalBucketRefillsInClumps(t *testing.T) {
	origin := t0.Add(370 * time.Millisecond)
	l := mustNew(t, Config{Algo: TokenBucket, Rate: 10, Burst: 20, RefillEvery: time.Second, Origin: origin.Add(-time.Hour)})
	at := t0.Add(100 * time.Millisecond)
	if got := volley(l, "k", at, 20); got != 20 {
		t.Fatalf("a new key admitted %d of 20, want a full bucket", got)
	}
	d := l.Allow("k", at)
	// The next fill is at t0+370ms; the bucket is whole two fills later.
	if d.Allowed || d.RetryAfter != 270*time.Millisecond || d.Reset != 1270*time.Millisecond || d.Remaining != 0 || d.Limit != 20 {
		t.Fatalf("drained: %+v, want rejected, RetryAfter 270ms, Reset 1.27s", d)
	}
	// A continuous bucket would have 2.6 tokens 1 ns before the fill.
	if d := l.Allow("k", origin.Add(-time.Nanosecond)); d.Allowed || d.RetryAfter != time.Nanosecond {
		t.Fatalf("1 ns before the fill: %+v", d)
	}
	if got := volley(l, "k", origin, 15); got != 10 {
		t.Fatalf("at the fill instant admitted %d, want the clump of 10", got)
	}
	// Rejected knocks between fills take nothing: the next clump is whole.
	for i := 1; i < 100; i++ {
		if d := l.Allow("k", origin.Add(time.Duration(i)*10*time.Millisecond)); d.Allowed {
			t.Fatalf("admitted between fills, %d ms after one", i*10)
		}
	}
	if got := volley(l, "k", origin.Add(time.Second), 15); got != 10 {
		t.Fatalf("second fill admitted %d, want 10", got)
	}
	// Idle, the bucket fills to its capacity and no further.
	if got := volley(l, "k", origin.Add(10*time.Second), 30); got != 20 {
		t.Fatalf("after idling admitted %d, want the capacity 20", got)
	}
	// Keys are apart.
	if got := volley(l, "other", origin.Add(10*time.Second), 30); got != 20 {
		t.Fatalf("another key admitted %d", got)
	}
}

// Rate × interval need not be whole: 2.5 tokens a fill give 2 then 3
// requests; a fill larger than the bucket is capped; a zero origin puts the
// fills on the wall clock's whole intervals.
func TestIntervalBucketFractionalFillsCapAndWallGrid(t *testing.T) {
	l := mustNew(t, Config{Algo: TokenBucket, Rate: 2.5, Burst: 5, RefillEvery: time.Second, Origin: t0})
	volley(l, "k", t0.Add(time.Millisecond), 5)
	var got []int
	for k := 1; k <= 4; k++ {
		got = append(got, volley(l, "k", t0.Add(time.Duration(k)*time.Second), 10))
	}
	if got[0] != 2 || got[1] != 3 || got[2] != 2 || got[3] != 3 {
		t.Fatalf("fills of 2.5 admitted %v, want [2 3 2 3]", got)
	}
	// After the fill that gave 2 the bucket holds half a token: one fill
	// away from the next request, two from a whole bucket (0.5 + 5 ≥ 5).
	l2 := mustNew(t, Config{Algo: TokenBucket, Rate: 2.5, Burst: 5, RefillEvery: time.Second, Origin: t0})
	volley(l2, "k", t0.Add(time.Millisecond), 5)
	volley(l2, "k", t0.Add(time.Second), 2)
	if d := l2.Allow("k", t0.Add(1500*time.Millisecond)); d.Allowed || d.RetryAfter != 500*time.Millisecond || d.Reset != 1500*time.Millisecond {
		t.Fatalf("half a token left: %+v", d)
	}

	capped := mustNew(t, Config{Algo: TokenBucket, Rate: 100, Burst: 20, RefillEvery: time.Second, Origin: t0})
	volley(capped, "k", t0.Add(time.Millisecond), 20)
	if got := volley(capped, "k", t0.Add(time.Second), 200); got != 20 {
		t.Fatalf("a fill of 100 into a bucket of 20 admitted %d", got)
	}

	wall := mustNew(t, Config{Algo: TokenBucket, Rate: 4, Burst: 2, RefillEvery: 500 * time.Millisecond})
	volley(wall, "k", t0.Add(1100*time.Millisecond), 2)
	if d := wall.Allow("k", t0.Add(1100*time.Millisecond)); d.Allowed || d.RetryAfter != 400*time.Millisecond {
		t.Fatalf("wall grid: %+v, want the fill at the next half second", d)
	}
	if got := volley(wall, "k", t0.Add(1500*time.Millisecond), 5); got != 2 {
		t.Fatalf("wall grid fill admitted %d", got)
	}
}

// refill= is parsed like block= (0s is off) and validated with a message
// that says how to fix it.
func TestRefillParameter(t *testing.T) {
	c := Defaults()
	for _, kv := range [][2]string{{"algo", "token_bucket"}, {"rate", "10/s"}, {"burst", "20"}, {"refill", "1s"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil || c.RefillEvery != time.Second {
		t.Fatalf("%+v: %v", c, err)
	}
	if err := c.Set("refill", "0s"); err != nil || c.RefillEvery != 0 {
		t.Fatalf("refill=0s: %v %s", err, c.RefillEvery)
	}
	if err := c.Set("refill", "-1s"); err == nil || !strings.Contains(err.Error(), "refill must be positive") {
		t.Fatalf("refill=-1s: %v", err)
	}
	if err := c.Set("refill", "soon"); err == nil || !strings.Contains(err.Error(), "is not a duration") {
		t.Fatalf("refill=soon: %v", err)
	}
	bad := []struct {
		cfg Config
		msg string
	}{
		{Config{Algo: SlidingLog, Limit: 1, Window: time.Second, RefillEvery: time.Second}, "refill=1s applies to token_bucket only"},
		{Config{Algo: LeakyShaping, Rate: 1, Burst: 1, RefillEvery: time.Second}, "refill=1s applies to token_bucket only"},
		{Config{Algo: TokenBucket, Rate: 5, Burst: 5, RefillEvery: 100 * time.Millisecond}, "adds 0.5 tokens per fill, less than one request: make rate × refill at least 1 token (e.g. refill=200ms)"},
		{Config{Algo: TokenBucket, Rate: 5, Burst: 5, RefillEvery: -time.Second}, "refill must be a positive duration"},
	}
	for _, b := range bad {
		if err := b.cfg.Validate(); err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%+v: %v, want %q", b.cfg, err, b.msg)
		}
	}
}
