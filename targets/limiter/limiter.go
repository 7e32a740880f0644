// Package limiter holds the reference rate-limiter algorithms. Each is a pure
// model: it never reads the clock, the caller passes the current time in. The
// same code runs behind `ratecheck serve` and inside the inference that fits
// observed traffic to a model, so what ratecheck serves and what it recognises
// can never drift apart.
package limiter

import (
	"fmt"
	"time"
)

// Decision is a limiter's answer to one request.
type Decision struct {
	Allowed bool
	// Delay is how long a shaping limiter holds an admitted request before
	// serving it (leaky bucket without nodelay); zero for every other family.
	Delay time.Duration
	// Limit is the quota the limiter would advertise: L for window
	// algorithms, the capacity for buckets, N for a concurrency cap.
	Limit int
	// Remaining is how many more requests would be admitted right now.
	Remaining int
	// Reset is the time until the quota is whole again if no request came.
	Reset time.Duration
	// RetryAfter, on a rejection, is the time until the same request would be
	// admitted (zero when nothing time-based would change the answer, as for
	// a concurrency cap).
	RetryAfter time.Duration
}

// Limiter is one algorithm with its state for every key. Implementations
// are not safe for concurrent use; the server serialises calls.
type Limiter interface {
	// Allow decides one request of key arriving at now and updates state.
	Allow(key string, now time.Time) Decision
	// Release tells the limiter a request of key admitted earlier finished.
	// Only the concurrency cap cares.
	Release(key string, now time.Time)
	// Config returns the parameters the limiter was built from.
	Config() Config
}

// Family names, as used on the command line, in builtin: targets and in
// inference output.
const (
	FixedWindow    = "fixed_window"
	SlidingLog     = "sliding_log"
	SlidingCounter = "sliding_counter"
	TokenBucket    = "token_bucket"
	LeakyShaping   = "leaky_shaping"
	Concurrency    = "concurrency"
	None           = "none"
)

// families lists every algorithm ratecheck knows, in a stable order.
var families = [...]string{None, FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyShaping, Concurrency, Tiers}

// Families lists the algorithms (a new slice each call).
func Families() []string { return append([]string(nil), families[:]...) }

// Window alignments for fixed_window.
const (
	AlignWall  = "wall"  // windows are epoch multiples of W (Kong, envoy ratelimit)
	AlignFirst = "first" // a window opens at the key's first request after the last one closed (express-rate-limit)
	AlignStart = "start" // windows open at Config.Origin + k·W: anchored where the server started
)

// New builds the limiter that cfg describes. cfg must be valid.
func New(cfg Config) (Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lim, err := newAlgo(cfg)
	if err != nil || cfg.Block <= 0 {
		return lim, err
	}
	return newBlocking(lim, cfg), nil
}

func newAlgo(cfg Config) (Limiter, error) {
	switch cfg.Algo {
	case None:
		return &none{cfg: cfg}, nil
	case FixedWindow:
		return newFixedWindow(cfg), nil
	case SlidingLog:
		return newSlidingLog(cfg), nil
	case SlidingCounter:
		return newSlidingCounter(cfg), nil
	case TokenBucket:
		if cfg.RefillEvery > 0 {
			return newIntervalBucket(cfg), nil
		}
		return newTokenBucket(cfg), nil
	case LeakyShaping:
		return newLeakyShaping(cfg), nil
	case Concurrency:
		return newConcurrency(cfg), nil
	case Tiers:
		return newTiered(cfg)
	}
	return nil, fmt.Errorf("unknown algorithm %q", cfg.Algo)
}

// none admits everything: the "no limiter" reference.
type none struct{ cfg Config }

func (n *none) Allow(string, time.Time) Decision { return Decision{Allowed: true, Remaining: -1} }
func (n *none) Release(string, time.Time)        {}
func (n *none) Config() Config                   { return n.cfg }
