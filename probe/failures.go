package probe

import (
	"context"
	"fmt"
	"github.com/ratecheck/ratecheck/results"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A request that got no answer (refused, reset, timed out), or a server
// error (500, 502, 504: 503 is a rejection), is no limiter decision: it is
// never admitted, never rejected. A probe whose target dies
// or stops answering mid-run must not turn the answers it did get into a
// clean verdict: the phases the errors cut did not run, and what they were
// to show is not known. The same rule reads a live run and a recorded one.
const (
	// lostAfter requests in a row outside a burst that got no answer mean
	// the target has stopped answering: one-at-a-time and paced requests
	// to a live server do not fail ten times running (a burst's own
	// failures are judged by the burst's rule in earned.go: a pacer may
	// hold a large one beyond the request timeout).
	lostAfter = 10
	// minCutFailures: a phase is cut by errors only when at least this
	// many of its requests failed (and more than maxFailedShare of them):
	// one reset among the five sequential requests is no lost phase.
	minCutFailures = 3
)

// Failures says how many of a run's requests failed (no answer, or a
// server error) and what that cut (Inference.Failures; absent when every request was answered).
type Failures struct {
	Failed     int     `json:"failed"`      // requests with no answer or a server error
	Of         int     `json:"of"`          // requests sent
	FirstError string  `json:"first_error"` // the first failure's error
	FirstAtS   float64 `json:"first_at_s"`  // when it was sent, from the run's start
	// CutPhases are the plan's phases whose requests failed beyond
	// maxFailedShare: what they were to show was not measured.
	CutPhases []string `json:"cut_phases,omitempty"`
	// LostAtS, when set, is when the target stopped answering: the run
	// ends with at least lostAfter failures in a row outside a burst.
	LostAtS *float64 `json:"lost_at_s,omitempty"`
}

// Cut reports whether the failures cut any phase of the plan short.
func (f *Failures) Cut() bool { return f != nil && (len(f.CutPhases) > 0 || f.LostAtS != nil) }

// Summary is the failures in one line.
func (f *Failures) Summary() string {
	s := fmt.Sprintf("%d of %d requests failed (first at %.2f s: %s)", f.Failed, f.Of, f.FirstAtS, f.FirstError)
	if f.LostAtS != nil {
		s += fmt.Sprintf("; the target stopped answering at %.2f s", *f.LostAtS)
	}
	if len(f.CutPhases) > 0 {
		s += "; phases cut: " + strings.Join(f.CutPhases, ", ")
	}
	return s
}

// failure is why r got no limiter decision from a server that failed ("":
// it got one, or an answer that is no failure of the server).
func failure(r *results.Result) string {
	switch {
	case r.AbandonedAtBudget():
		return "" // the run's own time budget cut it, not the target
	case r.Error != "":
		return r.Error
	case r.Status >= 500 && r.Status != 503:
		return fmt.Sprintf("status %d from the server", r.Status)
	}
	return ""
}

// releasedAtOnce reports whether a phase's requests leave together: its
// failures may be a pacer's held answers, not a dead target.
func releasedAtOnce(phase string) bool {
	return phase == observation.PhaseBurst || strings.HasPrefix(phase, observation.PhaseBurst+"-") || phase == observation.PhaseSilentBurst
}

// failures reads o's failed requests; nil when there are none. A run cut
// short by an interruption fails its in-flight requests itself: those are
// the interruption's, said elsewhere, so an interrupted run's phases are
// not called cut by errors.
func failuresOf(o *observation.Observation) *Failures {
	rs := observation.SortedResults(o.Results)
	var f Failures
	perPhase := map[string][2]int{} // failed, sent
	var phases []string
	for _, r := range rs {
		c, seen := perPhase[r.Phase]
		if !seen {
			phases = append(phases, r.Phase)
		}
		c[1]++
		if why := failure(&r); why != "" {
			if f.Failed == 0 {
				f.FirstError, f.FirstAtS = why, round2(r.Sent.Seconds())
			}
			f.Failed++
			c[0]++
		}
		perPhase[r.Phase] = c
	}
	if f.Failed == 0 {
		return nil
	}
	f.Of = len(rs)
	if o.Stopped == observation.StopInterrupted {
		return &f
	}
	for _, ph := range phases {
		c := perPhase[ph]
		if c[0] >= minCutFailures && float64(c[0]) > maxFailedShare*float64(c[1]) && !releasedAtOnce(ph) {
			f.CutPhases = append(f.CutPhases, ph)
		}
	}
	if at, ok := lostAt(rs); ok {
		s := round2(at.Seconds())
		f.LostAtS = &s
	}
	return &f
}

// lostAt is when the target stopped answering: the first of the failures
// outside a burst that run, lostAfter or more in a row, to the end of rs
// (in send order).
func lostAt(rs []results.Result) (time.Duration, bool) {
	n := 0
	var first time.Duration
	for i := len(rs) - 1; i >= 0; i-- {
		r := &rs[i]
		if releasedAtOnce(r.Phase) {
			continue
		}
		if failure(r) == "" {
			break
		}
		n, first = n+1, r.Sent
	}
	return first, n >= lostAfter
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// cutReason says why a run cut by errors supports no verdict ("" when no
// phase was cut).
func (f *Failures) cutReason() string {
	if !f.Cut() {
		return ""
	}
	counts := fmt.Sprintf("%d of %d requests failed, with no answer or a server error; the first, at %.2f s: %s", f.Failed, f.Of, f.FirstAtS, f.FirstError)
	if f.LostAtS != nil {
		return fmt.Sprintf("the target stopped answering %.2f s into the probe (%s), so what the probe was to show from then on was not measured; run it again against a target that stays up", *f.LostAtS, counts)
	}
	return fmt.Sprintf("the phases %s were cut by errors (%s), so what they were to show was not measured", strings.Join(f.CutPhases, ", "), counts)
}

// lostWatch stops a live plan once its target has stopped answering
// (lostAfter failures in a row outside a burst, in the order they come
// back), so the rest of the budget is not spent on a dead server. Its add
// is an engine sink, called from many goroutines.
type lostWatch struct {
	mu     sync.Mutex
	streak int
	lost   bool
	stop   context.CancelFunc
}

func (w *lostWatch) add(r *results.Result) {
	if releasedAtOnce(r.Phase) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if failure(r) == "" {
		w.streak = 0
		return
	}
	w.streak++
	if w.streak >= lostAfter && !w.lost {
		w.lost = true
		if w.stop != nil {
			w.stop()
		}
	}
}

// watch gives the watch the plan's cancel: set before the plan sends.
func (w *lostWatch) watch(stop context.CancelFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop = stop
}

func (w *lostWatch) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}
