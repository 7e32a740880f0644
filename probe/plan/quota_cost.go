package plan

import (
	"fmt"
	"time"
)

// QuotaCostError refuses a probe whose calibration found a quota declared
// over a window longer than any probe waits, which the request budget
// cannot exhaust: the burst would spend the user's real quota, shut the
// client out for up to the window, and still measure nothing (a budget of
// 2,000 against 5,000 an hour ends "no limit observed"). Run returns it
// after the calibration, before the burst; a --max-requests of Need allows
// the probe.
type QuotaCostError struct {
	Limit  int
	Window time.Duration
	Have   int // the request budget
	Need   int // what measuring it takes
}

func (e *QuotaCostError) Error() string {
	return fmt.Sprintf("the target declares a quota of %d per %s: measuring it takes about %d requests, more than the budget of %d, and would shut this client out for up to %s; give --max-requests %d to spend that quota",
		e.Limit, FormatSpan(e.Window), e.Need, e.Have, FormatSpan(e.Window), e.Need)
}

// quotaCost is the QuotaCostError of the quota the calibration's headers
// declare, nil when the budget can measure it or no long one is declared.
func (p *planner) quotaCost() error {
	if p.hintLimit <= 0 || p.hintWindow <= p.ceiling+answerGrace {
		return nil
	}
	need := p.e.Sent() + p.hintLimit + AfterBurstReserve
	if need <= p.opt.MaxRequests {
		return nil
	}
	return &QuotaCostError{Limit: p.hintLimit, Window: p.hintWindow, Have: p.opt.MaxRequests, Need: need}
}
