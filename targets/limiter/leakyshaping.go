package limiter

import (
	"math"
	"time"
)

// leakyShaping is nginx limit_req without nodelay: each key carries an
// "excess" (requests beyond the one being served) that drains at Rate. A
// request sets it to max(0, excess − Rate·elapsed + 1); if that would exceed Burst the request is
// rejected and the state is left alone; otherwise it is admitted and held
// for (excess − DelayAfter)/Rate, so queued requests leave exactly 1/Rate
// apart. After idle, Burst+1 requests are admitted.
//
// With QueueUnbounded it is a pacer that never rejects (uber-go/ratelimit):
// the queue has no end, and the k-th request of a burst waits k/Rate.
//
// nginx keeps excess in integer thousandths and time in milliseconds; this
// model uses exact arithmetic, which the inference treats as within timing
// uncertainty.
type leakyShaping struct {
	cfg   Config
	clock clock
	keys  keyed[lsState]
}

type lsState struct {
	excess float64 // in requests
	last   instant
}

func newLeakyShaping(cfg Config) *leakyShaping {
	return &leakyShaping{cfg: cfg}
}

func (l *leakyShaping) Config() Config            { return l.cfg }
func (l *leakyShaping) Release(string, time.Time) {}

func (l *leakyShaping) Allow(key string, at time.Time) Decision {
	now := l.clock.at(at)
	r := l.cfg.Rate
	burst := float64(l.cfg.Burst)
	d := Decision{Limit: l.cfg.Burst + 1}
	s := l.keys.lookup(key)
	if s == nil {
		// A new key is served at once with nothing queued (nginx sets
		// excess to 0 for a fresh node).
		l.keys.add(key, &lsState{last: now})
		d.Allowed = true
		d.Remaining = l.cfg.Burst
		return d
	}
	elapsed := now.sub(s.last).Seconds()
	if elapsed < 0 {
		elapsed = 0
	}
	// As nginx: the drain is subtracted before the clamp, so a request
	// arriving 1/(2r) after an idle key's last one waits only the rest of
	// that slot.
	excess := math.Max(0, s.excess-r*elapsed+1)
	if excess > burst+1e-9 && !l.cfg.QueueUnbounded {
		d.RetryAfter = secondsToDuration((excess - burst) / r)
		d.Remaining = 0
		d.Reset = secondsToDuration(math.Max(0, excess-1) / r)
		return d
	}
	s.excess, s.last = excess, now
	d.Allowed = true
	if over := excess - float64(l.cfg.DelayAfter); over > 1e-9 {
		d.Delay = secondsToDuration(over / r)
	}
	d.Remaining = max(int(math.Floor(burst-excess+1e-9)), 0)
	d.Reset = secondsToDuration(excess / r)
	return d
}

// check is Allow without the charge (checker): the delay an admission
// would get, and the queue as it stands before this request.
func (l *leakyShaping) check(key string, at time.Time) Decision {
	now := l.clock.at(at)
	r, burst := l.cfg.Rate, float64(l.cfg.Burst)
	d := Decision{Limit: l.cfg.Burst + 1}
	s := l.keys.lookup(key)
	if s == nil {
		d.Allowed, d.Remaining = true, l.cfg.Burst+1
		return d
	}
	excess := math.Max(0, s.excess-r*max(now.sub(s.last).Seconds(), 0)+1)
	d.Allowed = excess <= burst+1e-9 || l.cfg.QueueUnbounded
	if !d.Allowed {
		d.RetryAfter = secondsToDuration((excess - burst) / r)
	} else if over := excess - float64(l.cfg.DelayAfter); over > 1e-9 {
		d.Delay = secondsToDuration(over / r)
	}
	d.Remaining = max(int(math.Floor(burst-excess+1+1e-9)), 0)
	d.Reset = secondsToDuration(math.Max(0, excess-1) / r)
	return d
}
