package limiter

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestTokenBucketAsksAllowNOnlyToAdmit replays random arrivals (some
// going back in time, as a replay's rejections do) through the bucket and
// through rate.Limiter asked the plain way — AllowN, then TokensAt — and
// requires the same decision, tokens and headers every time: Allow's
// shortcut for rejections must be AllowN's answer.
func TestTokenBucketAsksAllowNOnlyToAdmit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for trial := range 200 {
		r := math.Exp(rng.Float64()*math.Log(1000)) / 2 // 0.5 – 500 /s
		burst := 1 + rng.IntN(50)
		b := newTokenBucket(Config{Algo: TokenBucket, Rate: r, Burst: burst})
		ref := rate.NewLimiter(rate.Limit(r), burst)
		at := epoch
		for i := range 500 {
			// Mostly forward by up to two refill times, sometimes back a
			// little, sometimes at the same instant.
			step := time.Duration(rng.Float64() * 2 / r * float64(time.Second))
			switch rng.IntN(6) {
			case 0:
				step = -step / 10
			case 1:
				step = 0
			}
			at = at.Add(step)
			got := b.Allow("k", at)
			allowed := ref.AllowN(at, 1)
			tokens := ref.TokensAt(at)
			if got.Allowed != allowed || got.Remaining != max(int(math.Floor(tokens)), 0) ||
				got.Reset != secondsToDuration((float64(burst)-tokens)/r) ||
				!allowed && got.RetryAfter != secondsToDuration((1-tokens)/r) {
				t.Fatalf("trial %d (rate %g, burst %d), request %d: got %+v, rate.Limiter admits %v with %g tokens left",
					trial, r, burst, i, got, allowed, tokens)
			}
		}
	}
}

// BenchmarkTokenBucketAllow knocks at twice the rate: half the requests
// are rejected, as in a replay of a probe's trace.
func BenchmarkTokenBucketAllow(b *testing.B) {
	tb := newTokenBucket(Config{Algo: TokenBucket, Rate: 100, Burst: 20})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		at = at.Add(5 * time.Millisecond)
		tb.Allow("k", at)
	}
}
