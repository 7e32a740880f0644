package sim_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
)

// A stall holds the server's decisions and the reader's answers: they come
// out together, at its end. The requests a stalled server held are decided
// in an order the seed draws (a woken server runs its handlers in any
// order): of 8 sent in order to a bucket of 4, the 4 admitted are not
// always the first 4.
func TestStalledAnswersComeOutTogether(t *testing.T) {
	outOfOrder := 0
	for seed := range 5 {
		cfg := spec(t, "sim:token_bucket?rate=10/s&burst=4&rtt=20ms&stall=50ms&stall-share=1")
		cfg.Seed = uint64(seed)
		r := begin(t, t.Context(), cfg, attack.Options{})
		r.n.Burst(r.ctx, 100*ms, shots(8))
		r.n.Wait()
		if len(r.got) != 8 {
			t.Fatalf("seed %d: %d results, want 8", seed, len(r.got))
		}
		done := r.got[0].Done
		// The server's stall holds the decisions, the reader's the
		// answers: each at most 50ms, at least 1ns.
		if done <= 120*ms || done > 220*ms {
			t.Errorf("seed %d: answered at %v, want after 120ms (a stall) and by 220ms (two stalls)", seed, done)
		}
		var admitted []int
		for _, res := range r.got {
			if res.Done != done {
				t.Errorf("seed %d: seq %d answered at %v, want %v with the others", seed, res.Seq, res.Done, done)
			}
			if res.Status == 200 {
				admitted = append(admitted, res.Seq)
			}
		}
		slices.Sort(admitted)
		if len(admitted) != 4 {
			t.Errorf("seed %d: admitted seqs %v, want 4 of them", seed, admitted)
		}
		if !slices.Equal(admitted, []int{1, 2, 3, 4}) {
			outOfOrder++
		}
	}
	if outOfOrder == 0 {
		t.Error("in 5 seeds the stalled server decided every burst in the order it was sent")
	}
}

// script drives a run through every way of sending, on a jittery and
// stalling network, and returns its results.
func script(t *testing.T, seed string) []results.Result {
	r := run(t, "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&jitter=3ms&stall=15ms&stall-share=0.2&seed="+seed, attack.Options{})
	for range 3 {
		r.do(attack.Shot{})
	}
	r.n.Schedule(r.ctx, 40, every(200*ms, 7*ms))
	r.n.Burst(r.ctx, time.Second, shots(30))
	r.do(attack.Shot{Fresh: true})
	r.n.Finish()
	out := make([]results.Result, len(r.got))
	for i, res := range r.got {
		out[i] = *res
	}
	return out
}

func TestSameSeedSameResults(t *testing.T) {
	a, b := script(t, "42"), script(t, "42")
	if len(a) != 74 {
		t.Fatalf("%d results, want 74", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs of seed 42 gave different results")
	}
	if reflect.DeepEqual(a, script(t, "43")) {
		t.Error("seeds 42 and 43 gave the same results: the seed draws nothing")
	}
}

// stallBurst answers one request, sleeps 20s (past that request's 10s
// timeout, when timeout is the default) and returns a stalled burst's
// results.
func stallBurst(t *testing.T, timeout time.Duration) []results.Result {
	r := run(t, "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&stall=50ms&stall-share=1&seed=5", attack.Options{Timeout: timeout})
	r.do(attack.Shot{})
	r.sleepTo(20 * time.Second)
	r.n.Burst(r.ctx, r.n.Now(), shots(5))
	r.n.Wait()
	out := make([]results.Result, len(r.got))
	for i, res := range r.got {
		out[i] = *res
	}
	return out
}

// The timeout of a request already answered is no event of the network:
// it starts no stall and draws nothing, so whether it fell before the
// burst changes none of the burst's results.
func TestAnsweredRequestsTimeoutStartsNoStall(t *testing.T) {
	passed, pending := stallBurst(t, 0), stallBurst(t, time.Hour)
	if !reflect.DeepEqual(passed, pending) {
		t.Errorf("a burst after an answered request's timeout was answered at %v, before it at %v", passed[1].Done, pending[1].Done)
	}
}
