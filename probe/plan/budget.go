package plan

import (
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A budget that fits the limit it meets. A probe given no --max-time starts
// with probe.DefaultMaxTime and grows its own budget, up to its ceiling
// (Options.Ceiling), to what the limit it met needs: a window's recovery shows only a window
// after the lock, and its second step a window later, so a limit of N per
// minute needs over two minutes, which a one-minute budget never holds.
// The evidence is what the run has seen of the window: the window a
// RateLimit policy names, the instant a rejection's Retry-After or reset
// names, and how long the key has stayed locked (a lower bound). A window
// the ceiling cannot show twice is not waited for at all: the budget stays,
// and the run says why. A --max-time the user gave is a hard cap the plan
// never grows past.

// GrowMargin is added to a grown budget beyond those windows: the last
// step's admissions and the rejection after them.
const GrowMargin = 5 * time.Second

// windowEvidence is the longest window the run so far has shown, from the
// key's latest admission at lastAdmit (offsets from the probe's start),
// what showed it, and whether that was the lock's length alone; 0 when
// nothing has.
func (p *planner) windowEvidence(lastAdmit time.Duration) (w time.Duration, why string, byLock bool) {
	consider := func(d time.Duration, what string) {
		if d > w {
			w, why = d, what
		}
	}
	if p.hintWindow > 0 {
		consider(p.hintWindow, "the RateLimit policy names a window of "+FormatSpan(p.hintWindow))
	}
	if r := p.latestOfKey(); r != nil && r.Rejected() {
		if at, ok := observation.RetryAfterOf(p.e.Start(), r); ok {
			consider(at.Sub(p.e.Start())-lastAdmit, "Retry-After says capacity returns "+FormatSpan(at.Sub(p.e.Start())-lastAdmit)+" after the lock began")
		}
		if at, ok := observation.ResetOf(p.e.Start(), r); ok {
			consider(at.Sub(p.e.Start())-lastAdmit, "the reset header says capacity returns "+FormatSpan(at.Sub(p.e.Start())-lastAdmit)+" after the lock began")
		}
	}
	if locked := p.e.Now() - lastAdmit; locked > lockedAfter && locked > w {
		w, why, byLock = locked, "nothing was admitted for "+FormatSpan(locked), true
	}
	return w, why, byLock
}

// growFor lengthens the budget so that the run, locked since lastAdmit,
// holds the natural span (NaturalSpan: the trace's two steps, and for a
// short window a silent wait after them) of what windowEvidence shows, and
// after them the time reserved for the phases after the trace (at least
// the scope trials'). It never shortens a budget, never passes the
// ceiling, and says once why it would not grow.
func (p *planner) growFor(lastAdmit time.Duration) {
	if p.ceiling <= p.end {
		return // a --max-time, or grown to the ceiling already
	}
	w, why, byLock := p.windowEvidence(lastAdmit)
	if w <= 0 {
		return
	}
	tail := max(p.end-p.deadline, p.scopeTime())
	want := lastAdmit + NaturalSpan(w) + GrowMargin + tail
	if want <= p.end {
		return
	}
	if want > p.ceiling {
		if !byLock {
			// A header's window does not change: one the ceiling cannot
			// hold its natural span of is not waited for.
			if !p.tooLongSaid {
				p.tooLongSaid = true
				p.note("the window looks like %s (%s): too long for a probe of at most %s to see it return; the budget stays %s",
					FormatSpan(w), why, FormatSpan(p.ceiling+answerGrace), FormatSpan(p.end+answerGrace))
			}
			return
		}
		// A lock that has lasted this long was given nearly the
		// ceiling already (its natural span): the rest may
		// still show its end.
		want = p.ceiling
	}
	p.deadline += want - p.end
	p.end = want
	p.e.Extend(p.end + answerGrace) // the engine's hard stop moves with it
	p.budget.GrewTo, p.budget.Why = p.end+answerGrace, fmt.Sprintf("the window looks like %s: %s", FormatSpan(w), why)
	if p.opt.OnBudget != nil {
		p.opt.OnBudget(p.budget.GrewTo, p.budget.Why)
	}
}

// FormatSpan writes a duration the way a person reads it: 1m0s as 60 s, long
// ones in minutes.
func FormatSpan(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// lastAdmitted is when the latest admitted request of the probe's own key
// was sent (0 when none was).
func (p *planner) lastAdmitted() time.Duration {
	last := time.Duration(0)
	for _, r := range p.col.Results() {
		if r.Phase != observation.PhaseScopeOther && r.Error == "" && r.Admitted() {
			last = max(last, r.Sent)
		}
	}
	return last
}
