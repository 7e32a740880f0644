package observation

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// A bypass trial the limit held was decided by the key's counter and is
// replayed with the key's own traffic (a limiter counting denied attempts
// charged it); one that got around the limit was another counter's and is
// not.
func TestEventsReplayHeldTrialsOnly(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := &Observation{Start: start, RTT: time.Millisecond}
	add := func(phase string, at time.Duration, status int) {
		obs.Results = append(obs.Results, results.Result{Seq: len(obs.Results) + 1, Phase: phase,
			Scheduled: at, Sent: at, FirstByte: at + time.Millisecond, Done: at + time.Millisecond, Status: status})
	}
	add(PhaseBurst, 0, 200)
	add(PhaseBurst, 0, 429)
	add("bypass:doubled-slash", 100*time.Millisecond, 429) // held
	add("bypass:method-head", 200*time.Millisecond, 200)   // got around it
	add(PhaseTrace, 300*time.Millisecond, 429)
	var phases []string
	for _, ev := range obs.Events() {
		phases = append(phases, obs.Results[ev.Index].Phase)
	}
	want := []string{PhaseBurst, PhaseBurst, "bypass:doubled-slash", PhaseTrace}
	if len(phases) != len(want) {
		t.Fatalf("replayed %v, want %v", phases, want)
	}
	for i := range want {
		if phases[i] != want[i] {
			t.Fatalf("replayed %v, want %v", phases, want)
		}
	}
}
