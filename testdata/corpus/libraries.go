package corpus

import (
	"context"
	"net/http"
	"time"

	"github.com/didip/tollbooth/v7"
	"github.com/juju/ratelimit"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	"github.com/ulule/limiter/v3"
	ulstdlib "github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	uber "go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// golang.org/x/time/rate, rate.go: (*Limiter).Allow → reserveN, which
// advances the tokens continuously (advance: tokens + elapsed·limit, capped
// at burst) and takes one if there is one; a refused request takes nothing.
// The bucket starts full. The library has no HTTP layer: 429 without headers.
func xTimeRate() Entry {
	return Entry{
		Name: "x/time/rate", Source: "golang.org/x/time v0.16.0",
		Truth:   Truth{Family: "token_bucket", Rate: 10, Burst: 20},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			lim := rate.NewLimiter(10, 20)
			return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !lim.Allow() {
					reject(w)
					return
				}
				okHandler(w, r)
			}))
		},
	}
}

// github.com/throttled/throttled/v2, rate.go: NewGCRARateLimiterCtx sets
// the emission interval T to the period of MaxRate and the delay variation
// tolerance to T·(MaxBurst+1), so a fresh key admits MaxBurst+1 at once
// (RateLimitCtx: allowAt = newTAT − tolerance); a limited request does not
// store its TAT. GCRA is a continuous token bucket of capacity MaxBurst+1.
// http.go: HTTPRateLimiterCtx.RateLimit answers 429 (DefaultDeniedHandler)
// with X-RateLimit-Limit/Remaining/Reset and Retry-After.
func throttledGCRA() Entry {
	return Entry{
		Name: "throttled GCRA", Source: "github.com/throttled/throttled/v2 v2.15.0",
		Truth:   Truth{Family: "token_bucket", Rate: 10, Burst: 20},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			st, err := memstore.NewCtx(65536)
			if err != nil {
				return "", nil, err
			}
			rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{MaxRate: throttled.PerSec(10), MaxBurst: 19})
			if err != nil {
				return "", nil, err
			}
			h := &throttled.HTTPRateLimiterCtx{RateLimiter: rl, VaryBy: &throttled.VaryBy{RemoteAddr: true}}
			return serve(h.RateLimit(okHandler))
		},
	}
}

// github.com/didip/tollbooth/v7, tollbooth.go: NewLimiter(max, nil) sets
// the burst to max(1, max); limiter/limiter.go limitReachedWithTokenBucketTTL
// keeps one golang.org/x/time/rate limiter (rate max/s, that burst) per key
// (remote IP and path here) and asks Allow. LimitHandler answers 429
// ("You have reached maximum request limit.") with X-Rate-Limit-* headers.
func tollboothBucket() Entry {
	return Entry{
		Name: "tollbooth", Source: "github.com/didip/tollbooth/v7 v7.0.2",
		Truth:   Truth{Family: "token_bucket", Rate: 8, Burst: 8},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			return serve(tollbooth.LimitHandler(tollbooth.NewLimiter(8, nil), okHandler))
		},
	}
}

// github.com/juju/ratelimit, ratelimit.go: NewBucketWithRate(10, 15) finds
// quantum 1 with a fill interval of 100 ms (within rateMargin 1%);
// adjustavailableTokens adds quantum tokens per whole tick counted from
// startTime (the server's start), capped at capacity; TakeAvailable takes
// one if there is one. A token bucket of 10/s and capacity 15 whose tokens
// arrive on a 100 ms grid fixed at start-up: the first token after
// exhaustion comes 0–100 ms later, not 1/r later as in a continuous bucket
// (interval refill with a one-token quantum). 429 without headers.
func jujuRate() Entry {
	return Entry{
		Name: "juju rate", Source: "github.com/juju/ratelimit v1.0.2",
		Truth:   Truth{Family: "token_bucket", Rate: 10, Burst: 15, Refill: 100 * time.Millisecond},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			b := ratelimit.NewBucketWithRate(10, 15)
			return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if b.TakeAvailable(1) == 0 {
					reject(w)
					return
				}
				okHandler(w, r)
			}))
		},
	}
}

// github.com/juju/ratelimit, ratelimit.go: NewBucketWithQuantum(500 ms, 20,
// 5): adjustavailableTokens adds 5 tokens at each 500 ms tick counted from
// startTime (the server's start), capped at 20 — 10/s on average, but in
// clumps of 5 at a phase fixed at start-up, as older Envoy local rate limits
// do.
func jujuInterval() Entry {
	return Entry{
		Name: "juju interval", Source: "github.com/juju/ratelimit v1.0.2",
		Truth:   Truth{Family: "token_bucket", Rate: 10, Burst: 20, Refill: 500 * time.Millisecond},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			b := ratelimit.NewBucketWithQuantum(500*time.Millisecond, 20, 5)
			return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if b.TakeAvailable(1) == 0 {
					reject(w)
					return
				}
				okHandler(w, r)
			}))
		},
	}
}

// go.uber.org/ratelimit, limiter_atomic_int64.go: Take never refuses; it
// moves the next permission time perRequest (1/rate) further and sleeps
// until then, letting at most slack (default 10) requests' worth of idle
// time be caught up. Every request is served, later and later.
func uberPacer() Entry {
	return Entry{
		Name: "uber pacer", Source: "go.uber.org/ratelimit v0.3.1",
		Truth:   Truth{Family: "leaky_shaping", Rate: 20, Queue: "unbounded"},
		MaxTime: budget(0),
		Start: func(context.Context) (string, func() error, error) {
			rl := uber.New(20)
			return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rl.Take()
				okHandler(w, r)
			}))
		},
	}
}

// github.com/ulule/limiter/v3, drivers/store/memory/cache.go:
// (*Counter).Increment restarts the count at the first request after the
// expiration (now + period, set by that request) and otherwise adds to it;
// common.GetContextFromState marks the limit reached when count > limit.
// A fixed window anchored at the key's first request. Every request is
// counted, rejected ones too — invisible in admissions, since the window
// does not move. stdlib middleware: 429 "Limit exceeded" with
// X-RateLimit-Limit/Remaining/Reset.
func ululeFixedWindow() Entry {
	return Entry{
		Name: "ulule limiter", Source: "github.com/ulule/limiter/v3 v3.11.2",
		Truth:   Truth{Family: "fixed_window", Limit: 20, Window: 2 * time.Second, Align: "first", CountsRejected: true},
		MaxTime: budget(2 * time.Second),
		Start: func(context.Context) (string, func() error, error) {
			lim := limiter.New(ulmemory.NewStore(), limiter.Rate{Period: 2 * time.Second, Limit: 20})
			return serve(ulstdlib.NewMiddleware(lim).Handler(okHandler))
		},
	}
}

// github.com/sethvargo/go-limiter, memorystore/store.go: a key's bucket is
// created at its first request (newBucket: startTime = now); take computes
// the tick (now − startTime)/interval and, on a new tick, sets the tokens
// to availableTokens(...), which caps at maxTokens — every interval the
// bucket is refilled fully. A fixed window on a grid anchored at the key's
// creation and never re-anchored, however long the key idles. httplimit:
// 429 with X-RateLimit-Limit/Remaining/Reset and Retry-After.
func sethvargoWindow() Entry {
	return Entry{
		Name: "sethvargo go-limiter", Source: "github.com/sethvargo/go-limiter v0.7.1",
		Truth:   Truth{Family: "fixed_window", Limit: 20, Window: 2 * time.Second, Align: "creation"},
		MaxTime: budget(2 * time.Second),
		Start: func(context.Context) (string, func() error, error) {
			st, err := memorystore.New(&memorystore.Config{Tokens: 20, Interval: 2 * time.Second})
			if err != nil {
				return "", nil, err
			}
			mw, err := httplimit.NewMiddleware(st, httplimit.IPKeyFunc())
			if err != nil {
				return "", nil, err
			}
			url, stop, err := serve(mw.Handle(okHandler))
			if err != nil {
				return "", nil, err
			}
			return url, func() error {
				err := stop()
				st.Close(context.Background())
				return err
			}, nil
		},
	}
}
