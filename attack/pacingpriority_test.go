package attack

import (
	"testing"
	"time"
)

// fakeRealtime counts a pacingPriority's policy changes.
type fakeRealtime struct {
	allowed       bool
	enters, exits int
}

func (f *fakeRealtime) enter() (func(), bool) {
	f.enters++
	if !f.allowed {
		return func() {}, false
	}
	return func() { f.exits++ }, true
}

// The dispatcher takes real-time priority when it has something to wait
// for, keeps it without asking again, drops it after more than
// behindLimit consecutive shots that found nothing to wait for, takes it
// again once ahead, and gives it up at the end.
func TestPacingPriorityTransitions(t *testing.T) {
	f := &fakeRealtime{allowed: true}
	p := &pacingPriority{enter: f.enter}
	ahead, behind := time.Millisecond, time.Duration(0)
	for range 10 {
		p.before(ahead)
	}
	if !p.realtime() || f.enters != 1 {
		t.Fatalf("after 10 waits ahead: realtime %v, %d enters", p.realtime(), f.enters)
	}
	for range behindLimit {
		p.before(behind)
	}
	if !p.realtime() || f.exits != 0 {
		t.Fatalf("after %d shots behind: realtime %v, %d exits", behindLimit, p.realtime(), f.exits)
	}
	p.before(ahead) // one wait ahead starts the count again
	for range behindLimit {
		p.before(behind)
	}
	if !p.realtime() {
		t.Fatal("left real-time priority although the count restarted")
	}
	p.before(behind)
	if p.realtime() || f.exits != 1 {
		t.Fatalf("after %d shots behind: realtime %v, %d exits", behindLimit+1, p.realtime(), f.exits)
	}
	for range 100 {
		p.before(behind)
	}
	if f.enters != 1 || f.exits != 1 {
		t.Fatalf("while behind: %d enters, %d exits", f.enters, f.exits)
	}
	p.before(ahead)
	if !p.realtime() || f.enters != 2 {
		t.Fatalf("ahead again: realtime %v, %d enters", p.realtime(), f.enters)
	}
	p.end()
	p.end()
	if p.realtime() || f.exits != 2 {
		t.Fatalf("after end: realtime %v, %d exits", p.realtime(), f.exits)
	}
}

// A wait shorter than the wake-up lead is spun, not slept: it counts as
// nothing to wait for.
func TestPacingPrioritySpinIsNotAhead(t *testing.T) {
	f := &fakeRealtime{allowed: true}
	p := &pacingPriority{enter: f.enter}
	p.before(time.Duration(wakeLead.Load()))
	if p.realtime() || f.enters != 0 {
		t.Fatalf("a wait of the wake lead took real-time priority (%d enters)", f.enters)
	}
}

// Without the privilege the first attempt fails and no other is made (a
// system call per shot otherwise).
func TestPacingPriorityDeniedAsksOnce(t *testing.T) {
	f := &fakeRealtime{allowed: false}
	p := &pacingPriority{enter: f.enter}
	for i := range 200 {
		p.before(time.Duration(i%2) * time.Millisecond)
	}
	p.end()
	if f.enters != 1 || f.exits != 0 || p.realtime() {
		t.Fatalf("denied: %d enters, %d exits, realtime %v", f.enters, f.exits, p.realtime())
	}
}
