package observation

import (
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// A run of admissions in send order is not always one step of the
// limiter. A server that stalls decides the requests it held in any order
// when it wakes: the builtin fixed window of 100 per minute, stalled 6 ms
// at the end of a trace's step, admitted its last 12 after rejecting the 15
// sent before them, and that one step, read as two 0.58 s apart, ended the
// trace a window early. The rejections
// between two runs shut the key between them only when one of them was
// decided before the later run began: answered before its first request
// was sent. Otherwise the two runs may be one, decided out of order.
//
// Only the trace's stop rule counts steps so. Where requests are in flight
// together by the dozen (a 20 ms round trip, a trace knocking every 2 ms),
// every run is "maybe one" with the next: the fit's window seeds taken
// from such merged runs let a window of 1 per 8 ms restarted by every
// rejection explain a two-tier run whole, named at 0.82. The fit seeds
// from runs in send order, the split ones included (fit.GroupStarts).

// Shut gathers the rejections sent after a run of admissions, and says
// whether they certainly came between it and the next admission.
type Shut struct {
	firstAnswer time.Duration // the earliest answer among them
	any         bool
}

// Reject adds a rejection sent after the run.
func (s *Shut) Reject(r *results.Result) {
	if !s.any || r.Done < s.firstAnswer {
		s.firstAnswer, s.any = r.Done, true
	}
}

// Before reports whether one of the rejections was answered before next (an
// admission sent after them) was sent: then the key was shut between the
// run and next, and next starts a new step.
func (s Shut) Before(next *results.Result) bool {
	return s.any && s.firstAnswer <= next.Sent
}
