package fit

import (
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Fits is what one probe fitted last. Its plan fits the run to choose the
// next deciding experiment, and where that fit leaves nothing to decide
// the plan ends, and the verdict fits the very same run again: 5 of the 50
// searches of a 24-probe simulated sweep were such repeats. FitAll is a
// function of its arguments, so a repeat is answered from the last one.
// (One per probe, not one per process: a benchmark, or `report`, that
// infers one run again and again fits it each time.)
type Fits struct {
	mu   sync.Mutex
	last *fitted
}

// fitted is one FitAll: its arguments (the events without their Stop,
// which abandons a fit and changes nothing in it) and its result.
type fitted struct {
	evs  []observation.Event
	h    Hypotheses
	rtt  time.Duration
	fits []FamilyFit
}

// FitAll is the package's FitAll, answered from the last one when evs, h
// and rtt are the same. A nil *Fits fits every time.
func (f *Fits) FitAll(evs []observation.Event, h Hypotheses, rtt time.Duration) []FamilyFit {
	if f == nil {
		return FitAll(evs, h, rtt)
	}
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if last != nil && last.same(evs, h, rtt) {
		return cloneFits(last.fits)
	}
	fits := FitAll(evs, h, rtt)
	if Abandoned(evs) {
		return fits // partial: never an answer to a repeat
	}
	kept := &fitted{evs: slices.Clone(evs), h: h, rtt: rtt, fits: cloneFits(fits)}
	for i := range kept.evs {
		kept.evs[i].Stop = nil
	}
	f.mu.Lock()
	f.last = kept
	f.mu.Unlock()
	return fits
}

// same says whether a fit of evs, h and rtt is the one f holds.
func (f *fitted) same(evs []observation.Event, h Hypotheses, rtt time.Duration) bool {
	if rtt != f.rtt || len(evs) != len(f.evs) {
		return false
	}
	for i := range evs {
		ev := evs[i]
		ev.Stop = nil
		if ev != f.evs[i] {
			return false
		}
	}
	return reflect.DeepEqual(h, f.h)
}

// cloneFits is fits with lists of their own: a caller sorts and swaps the
// fits it is given.
func cloneFits(fits []FamilyFit) []FamilyFit {
	out := slices.Clone(fits)
	for i := range out {
		out[i].Best = slices.Clone(out[i].Best)
		out[i].StartTried = slices.Clone(out[i].StartTried)
	}
	return out
}
