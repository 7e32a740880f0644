package fit

import (
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A probe's Fits answers a repeat of its last fit from memory, whatever
// the caller did to the fits it was given, and fits anew what differs or
// was abandoned. (An abandoned fit stops at once: a memory answers a fit
// whose events carry a stop already set; a fresh fit would return less.)
func TestFitsAnswerARepeatOfTheLastFit(t *testing.T) {
	truth := limiter.Config{Algo: limiter.SlidingLog, Limit: 20, Window: 2 * time.Second}
	obs := probetest.Simulated(t, truth, probetest.Epoch, 1030*time.Millisecond, 70*time.Millisecond)
	evs, h := obs.Events(), HypothesesOf(obs)
	want := FitAll(evs, h, obs.RTT)
	stopped := func(evs []observation.Event) []observation.Event {
		out := slices.Clone(evs)
		stop := new(atomic.Bool)
		stop.Store(true)
		for i := range out {
			out[i].Stop = stop
		}
		return out
	}
	if reflect.DeepEqual(FitAll(stopped(evs), h, obs.RTT), want) {
		t.Fatal("an abandoned fit is the whole one: the test cannot tell memory from fitting")
	}

	var made Fits
	made.FitAll(stopped(evs), h, obs.RTT) // abandoned: not kept
	if got := made.FitAll(evs, h, obs.RTT); !reflect.DeepEqual(got, want) {
		t.Fatal("a fit after an abandoned one was answered from it")
	}
	got := made.FitAll(stopped(evs), h, obs.RTT)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("a repeat was fitted again, not answered from memory")
	}
	got[0], got[1] = got[1], got[0]
	got[1].Best[0].Mismatches = -1 // none's, counted whole
	if again := made.FitAll(stopped(evs), h, obs.RTT); !reflect.DeepEqual(again, want) {
		t.Fatal("what a caller did to its fits changed the memory")
	}
	other := slices.Clone(evs)
	other[len(other)-1].Admitted = !other[len(other)-1].Admitted
	if reflect.DeepEqual(made.FitAll(stopped(other), h, obs.RTT), want) {
		t.Fatal("other events were answered from memory")
	}
}
