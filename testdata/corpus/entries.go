package corpus

import (
	"context"
	"fmt"
	"time"
)

// Truth is what a limiter is, read from its source code.
type Truth struct {
	Family string        // a targets/limiter family name
	Rate   float64       // token_bucket, leaky_shaping: per second
	Burst  int           // token_bucket: capacity
	Limit  int           // window families: L per Window
	Window time.Duration //
	Align  string        // fixed_window: "wall", "first"; "creation" for a grid fixed when the key was created
	Queue  string        // leaky_shaping: "unbounded" for a pacer that never rejects
	// CountsRejected: a denied attempt consumes quota.
	CountsRejected bool
	// Refill is the interval of a token bucket that refills in clumps.
	Refill time.Duration
	// Outside says which behaviour today's probe has no model for; empty
	// when the probe's model space holds the limiter exactly.
	Outside string
}

func (t Truth) String() string {
	var s string
	switch t.Family {
	case "token_bucket":
		s = fmt.Sprintf("token_bucket %g/s b=%d", t.Rate, t.Burst)
		if t.Refill > 0 {
			s += fmt.Sprintf(" refill=%s", t.Refill)
		}
	case "leaky_shaping":
		s = fmt.Sprintf("leaky_shaping %g/s queue=%s", t.Rate, t.Queue)
	default:
		s = fmt.Sprintf("%s %d/%s", t.Family, t.Limit, t.Window)
		if t.Align != "" {
			s += " " + t.Align
		}
	}
	if t.CountsRejected {
		s += " counts-rejected"
	}
	return s
}

// Entry is one limiter of the corpus.
type Entry struct {
	Name   string
	Source string // the module and version, or the server package
	Truth  Truth
	// MaxTime is the probe's budget: max(20 s, 3 windows), the bar.
	MaxTime time.Duration
	// Start serves the limiter on 127.0.0.1 and returns its URL.
	Start func(ctx context.Context) (url string, stop func() error, err error)
}

// budget is the time bar for a probe: max(20 s, 3 windows).
func budget(window time.Duration) time.Duration { return max(20*time.Second, 3*window) }

// Entries is the corpus, in the order it runs.
func Entries() []Entry {
	return []Entry{
		xTimeRate(),
		throttledGCRA(),
		tollboothBucket(),
		jujuRate(),
		jujuInterval(),
		uberPacer(),
		ululeFixedWindow(),
		sethvargoWindow(),
		haproxyReqRate(),
		haproxyGPCRate(),
		haproxyGPCFixed(),
	}
}
