package observation

import (
	"net/http"
	"time"

	"github.com/ratecheck/ratecheck/headers"
	"github.com/ratecheck/ratecheck/results"
)

// When a rejection says capacity returns: the instant its Retry-After or
// its quota fields name, which the plan waits for (in silence, or knocking
// densely around it) and the verdict states as declared, never observed.

// RetryAfterOf is the instant r's Retry-After names, read as leniently as a
// forgiving client would: a date as itself (the target is on this machine,
// its clock is ours), a delay from when the answer arrived (start is the
// wall clock of the run's offset 0).
func RetryAfterOf(start time.Time, r *results.Result) (time.Time, bool) {
	v, ok := r.Headers["retry-after"]
	if !ok {
		return time.Time{}, false
	}
	ra, _, ok := headers.ReadRetryAfterLeniently(v, time.Time{})
	switch {
	case !ok:
		return time.Time{}, false
	case ra.Form == headers.RetryAfterDate:
		return ra.At, true
	}
	return start.Add(r.Done).Add(ra.Delay), true
}

// ResetOf is the earliest instant r's quota fields say capacity is back.
func ResetOf(start time.Time, r *results.Result) (time.Time, bool) {
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	var at time.Time
	earliest := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if x, _ := headers.ParseXRateLimit(h, time.Time{}); x.Reset.Present && x.Reset.Err == nil {
		switch {
		case !x.ResetAt.IsZero():
			earliest(x.ResetAt)
		case x.ResetUnit == headers.ResetDeltaSeconds:
			earliest(start.Add(r.Done).Add(x.ResetIn))
		}
	}
	if ietf, _ := headers.ParseIETF(h); len(ietf.Current) > 0 && ietf.Current[0].HasReset {
		earliest(start.Add(r.Done).Add(time.Duration(ietf.Current[0].ResetSeconds) * time.Second))
	}
	return at, !at.IsZero()
}
