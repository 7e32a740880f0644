package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
)

// notesWith counts the notes that start with prefix.
func notesWith(notes []string, prefix string) int {
	k := 0
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			k++
		}
	}
	return k
}

func TestRequestBudgetIsNeverExceeded(t *testing.T) {
	r := run(t, bucket, attack.Options{MaxRequests: 5})
	r.do(attack.Shot{})
	r.do(attack.Shot{})
	r.n.Burst(r.ctx, r.n.Now(), shots(10)) // 3 of them fit
	r.n.Schedule(r.ctx, 4, every(r.n.Now(), ms))
	if res, ok := r.n.Do(r.ctx, attack.Shot{}); ok || res != nil {
		t.Errorf("Do past the budget: ok %v, result %v", ok, res)
	}
	r.n.Finish()
	if r.n.Sent() != 5 || len(r.got) != 5 {
		t.Errorf("a budget of 5 sent %d, %d results", r.n.Sent(), len(r.got))
	}
	if k := notesWith(r.n.Notes(), "request budget reached"); k != 1 {
		t.Errorf("notes %q: want one \"request budget reached\"", r.n.Notes())
	}
	if r.ctx.Err() == nil {
		t.Error("the run's context is still live after the request budget")
	}
}

// A time budget of 1s over shots every 100ms from 50ms: the one at 950ms
// is decided at 960ms, held 50ms, and still on its way at 1s.
func TestTimeBudgetStopsSendsAndAbandonsAnswers(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=100/s&burst=100&rtt=20ms&latency=50ms&seed=1", attack.Options{MaxDuration: 1e9})
	r.do(attack.Shot{}) // warm a connection: answered at 90ms
	r.n.Schedule(r.ctx, 20, every(150*ms, 100*ms))
	r.n.Wait()
	if r.n.Sent() != 10 {
		t.Errorf("sent %d, want 10 (the warm-up and 150ms … 950ms)", r.n.Sent())
	}
	for _, res := range r.got {
		if res.Sent >= 1e9 {
			t.Errorf("seq %d sent at %v, after the budget", res.Seq, res.Sent)
		}
	}
	last := r.got[len(r.got)-1]
	if want := "no answer from " + host + " before the time budget ended"; last.Error != want || last.Done != 1e9 || last.Status != 0 {
		t.Errorf("the shot of 950ms: status %d error %q done %v, want %q at 1s", last.Status, last.Error, last.Done, want)
	}
	if admitted(r.got) != 9 {
		t.Errorf("%d admitted, want 9 (all but the abandoned one)", admitted(r.got))
	}
	if k := notesWith(r.n.Notes(), "time budget reached"); k != 1 {
		t.Errorf("notes %q: want one \"time budget reached\"", r.n.Notes())
	}
	if c := context.Cause(r.ctx); c == nil || c.Error() != "time budget reached" {
		t.Errorf("the run's context ended with %v", c)
	}
	if _, ok := r.n.Do(context.Background(), attack.Shot{}); ok {
		t.Error("Do sent after the time budget")
	}
}

// A sleep the time budget ends returns then, as a live one does: the
// clock never runs past the budget.
func TestSleepStopsAtTheTimeBudget(t *testing.T) {
	r := begin(t, context.Background(), spec(t, "sim:none?seed=1"), attack.Options{MaxDuration: 1000 * ms})
	if r.n.Sleep(r.ctx, 5000*ms) {
		t.Fatal("a sleep past the time budget reported it slept")
	}
	if now := r.n.Now(); now != 1000*ms {
		t.Errorf("clock at %v after the budget of 1s ended the sleep", now)
	}
}

// Extend moves the time budget on: a budget of 1 s extended to 2 s at
// 500 ms lets a sleep of 1.5 s finish, and the run ends at 2 s, not 1 s;
// an extension to less changes nothing.
func TestExtendMovesTheTimeBudget(t *testing.T) {
	r := begin(t, context.Background(), spec(t, "sim:none?seed=1"), attack.Options{MaxDuration: 1000 * ms})
	if !r.n.Sleep(r.ctx, 500*ms) {
		t.Fatal("a sleep inside the budget was cut")
	}
	r.n.Extend(2000 * ms)
	r.n.Extend(1500 * ms) // less than the budget now: ignored
	if !r.n.Sleep(r.ctx, 1000*ms) {
		t.Fatalf("a sleep to 1.5 s was cut by the budget extended to 2 s (clock %v)", r.n.Now())
	}
	if r.n.Sleep(r.ctx, 5000*ms) {
		t.Fatal("a sleep past the extended budget reported it slept")
	}
	if now := r.n.Now(); now != 2000*ms {
		t.Errorf("clock at %v when the extended budget of 2 s ended the sleep", now)
	}
	if k := notesWith(r.n.Notes(), "time budget reached: stopped after 2s"); k != 1 {
		t.Errorf("notes %q: want one that the budget of 2s stopped the run", r.n.Notes())
	}
}
