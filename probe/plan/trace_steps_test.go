package plan

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/results"
)

// stepThenStall is the live run's trace at the end of a fixed window's
// step (builtin fixed_window 100 per minute): 88 admissions, then 15
// rejections and 12 admissions sent 0.3 ms apart into a server that
// stalled and decided the 12 first, then rejections. rejectedAnswered is
// how long after its send each of the 15 was answered: 6 ms in the stall,
// 0.2 ms on a server that decided them as they came.
func stepThenStall(rejectedAnswered time.Duration) []results.Result {
	var tr []results.Result
	at := time.Second
	add := func(n, status int, answered time.Duration) {
		for range n {
			tr = append(tr, results.Result{Seq: len(tr) + 1, Sent: at, Done: at + answered, Status: status})
			at += 300 * time.Microsecond
		}
	}
	add(88, 200, 200*time.Microsecond)
	add(15, 429, rejectedAnswered)
	add(12, 200, 2*time.Millisecond)
	add(4, 429, 200*time.Microsecond)
	return tr
}

func pointers(rs []results.Result) []*results.Result {
	out := make([]*results.Result, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	return out
}

func TestRunsDecidedOutOfOrderAreOneStep(t *testing.T) {
	for _, c := range []struct {
		answered time.Duration
		steps    int
	}{
		{6 * time.Millisecond, 1},        // answered after the 12 were sent: one step, maybe out of order
		{200 * time.Microsecond, 2},      // answered before: the key was shut between
		{15*300*time.Microsecond + 1, 1}, // the first answered just after the 12's first send
		{15 * 300 * time.Microsecond, 2}, // the first answered as it was sent
	} {
		tr := stepThenStall(c.answered)
		if got := decidedSteps(pointers(tr)); got != c.steps {
			t.Errorf("rejections answered %v after their send: the trace's plan counts %d steps, want %d", c.answered, got, c.steps)
		}
		// The evidence's words count them so; the fit's seeds in send
		// order, the split runs too.
		if got := len(fit.DecidedStarts(tr, time.Second)); got != c.steps {
			t.Errorf("rejections answered %v after their send: the evidence sees %d steps, want %d", c.answered, got, c.steps)
		}
		if got := len(fit.GroupStarts(tr, time.Second)); got != 2 {
			t.Errorf("rejections answered %v after their send: the fit seeds from %d steps, want 2", c.answered, got)
		}
	}
}
