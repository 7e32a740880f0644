package probe

import (
	"fmt"
	"github.com/ratecheck/ratecheck/results"
	"math"
	"net/http"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/headers"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/probe/plan"
)

// A quota longer than a probe can wait (an hour's, a day's) never shows
// its capacity coming back, so no window can be fitted and no family named.
// What the run did measure is still an answer: how much it admitted from
// idle before the key shut, for how long it stayed shut, whether the
// remaining count went down with the admissions, and how the rejections
// were made. The window is what the headers declare — stated as declared,
// never as observed, so an expectation on it stays untested.

// Quota is that partial answer.
type Quota struct {
	// Capacity is what the run admitted before the key shut (measured).
	Capacity int `json:"capacity"`
	// LockedS is how long the key then stayed shut, sent to throughout
	// (measured): the window is longer.
	LockedS float64 `json:"locked_s"`
	// Status is the rejections' status (the first one's).
	Status int `json:"status"`
	// Remaining is what the remaining-count header said over the
	// admissions; absent when none carried one.
	Remaining *RemainingCount `json:"remaining,omitempty"`
	// Declared are what the headers say and the run could not observe.
	DeclaredLimit   int     `json:"declared_limit,omitempty"`
	DeclaredWindowS float64 `json:"declared_window_s,omitempty"`
	// DeclaredBackS is how long after the first rejection its Retry-After
	// or reset said capacity would return.
	DeclaredBackS float64 `json:"declared_back_s,omitempty"`
}

// RemainingCount is the remaining-count header over the admissions.
type RemainingCount struct {
	From        int64 `json:"from"`
	To          int64 `json:"to"`
	CountedDown bool  `json:"counted_down"` // by about one per admission, to about 0
}

// quota is the partial answer of a run whose capacity never came back
// (unrecovered); nil otherwise.
func quota(o *observation.Observation) *Quota {
	n, locked := unrecovered(o)
	if n == 0 {
		return nil
	}
	q := &Quota{LockedS: math.Round(locked.Seconds()*10) / 10}
	var first *results.Result
	var rem []int64
	for _, r := range observation.SortedResults(o.Results) {
		if r.Phase == observation.PhaseScopeOther || !observation.Decided(&r) {
			continue
		}
		if r.Admitted() {
			q.Capacity++
			if v, ok := remainingOf(r.Headers); ok {
				rem = append(rem, v)
			}
		} else if first == nil {
			first = &r
		}
		if l, w := attack.QuotaHints(r.Headers); l > 0 {
			q.DeclaredLimit = l
			if w > 0 {
				q.DeclaredWindowS = w.Seconds()
			}
		}
	}
	if first != nil {
		q.Status = first.Status
		done := o.Start.Add(first.Done)
		if at, ok := observation.RetryAfterOf(o.Start, first); ok {
			q.DeclaredBackS = math.Round(at.Sub(done).Seconds())
		} else if at, ok := observation.ResetOf(o.Start, first); ok {
			q.DeclaredBackS = math.Round(at.Sub(done).Seconds())
		}
	}
	q.Remaining = countdown(rem, q.Capacity)
	return q
}

// countdown summarises the remaining counts of the admissions: it counted
// down when it fell by about one per admission (a request's answer may
// race another's) to about nothing.
func countdown(rem []int64, admitted int) *RemainingCount {
	if len(rem) == 0 {
		return nil
	}
	c := &RemainingCount{From: rem[0], To: rem[0]}
	for _, v := range rem {
		c.From, c.To = max(c.From, v), min(c.To, v)
	}
	c.CountedDown = c.To <= 1 && c.From-c.To >= int64(admitted)-countdownSlack
	return c
}

// countdownSlack is how many admissions the remaining count may miss and
// still have counted them: the first's answer may show its own count, or
// the one before.
const countdownSlack = 2

// remainingOf is the remaining count an answer's headers carry: the IETF
// field's, else X-RateLimit-Remaining.
func remainingOf(hdr map[string]string) (int64, bool) {
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	if ietf, _ := headers.ParseIETF(h); len(ietf.Current) > 0 && ietf.Current[0].HasRemaining {
		return ietf.Current[0].Remaining, true
	}
	if x, _ := headers.ParseXRateLimit(h, time.Time{}); x.Remaining.Present && x.Remaining.Err == nil {
		return x.Remaining.Value, true
	}
	return 0, false
}

// Text is the partial answer in a sentence or two, measured first.
func (q *Quota) Text() string {
	s := fmt.Sprintf("measured: %d admitted from idle, then the key stayed shut for %.1f s (status %d)", q.Capacity, q.LockedS, q.Status)
	if r := q.Remaining; r != nil {
		verb := "counted down"
		if !r.CountedDown {
			verb = "did not count down"
		}
		s += fmt.Sprintf("; the remaining count %s (%d to %d)", verb, r.From, r.To)
	}
	var declared []string
	if q.DeclaredLimit > 0 {
		declared = append(declared, fmt.Sprintf("a limit of %d", q.DeclaredLimit))
	}
	if q.DeclaredWindowS > 0 {
		declared = append(declared, fmt.Sprintf("a window of %s", plan.FormatSpan(time.Duration(q.DeclaredWindowS*float64(time.Second)))))
	}
	if q.DeclaredBackS > 0 {
		declared = append(declared, fmt.Sprintf("capacity back %s after the first rejection", plan.FormatSpan(time.Duration(q.DeclaredBackS*float64(time.Second)))))
	}
	if len(declared) > 0 {
		s += "; declared by the headers, not observed: " + joinAnd(declared)
	}
	return s
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	s := parts[0]
	for _, p := range parts[1 : len(parts)-1] {
		s += ", " + p
	}
	return s + " and " + parts[len(parts)-1]
}
