package attack

import (
	"runtime"
	"time"
)

// Real-time priority for the dispatcher while it is ahead of schedule.
//
// At 5,000/s the dispatcher sleeps most of the time; what makes its p99 is
// the wake-up: when its nanosleep expires, the CPU is often running the
// target's threads (or anyone's), and an ordinary thread waits for the
// scheduler to preempt them — measured here 0.1–1.2 ms of the tool's own
// p99 lateness, while send→arrival stayed ~0.15 ms. A SCHED_FIFO thread
// preempts every ordinary one the moment it is woken. So the dispatcher
// holds real-time priority while it has something to wait for; it only
// sleeps, spins for microseconds, and writes.
//
// A dispatcher that has nothing to wait for (a rate it cannot keep up with)
// would run a real-time thread flat out and starve everything else on its
// CPU, the target included: after behindLimit consecutive shots that found
// their instant already reached (or too close to sleep for), it drops back
// to the normal policy, and takes real-time priority again only when it is
// ahead once more. Each change is one system call, at transitions only.
// Without the privilege (no CAP_SYS_NICE, RLIMIT_RTPRIO 0) the first
// attempt fails and pacing goes on as before, without asking again.

// Woken on time, a real-time dispatcher can still wait: for a P, the
// runtime's right to run Go code, which an ordinary system call lets the
// runtime give to other goroutines while it sleeps — and their threads,
// ordinary ones, may be preempted by anything. So at real-time priority,
// with a P to spare (GOMAXPROCS ≥ 2), the dispatcher sleeps holding its P
// (heldSleep) for at most maxHeldSleep, the rest of a longer sleep the
// ordinary way.

// maxHeldSleep bounds a sleep that holds its P: it is how long the other
// goroutines make do with one P less, and how long a stop-the-world can
// wait for the sleeper.
const maxHeldSleep = 1 * time.Millisecond

// behindLimit is how many consecutive shots may find nothing to wait for
// before the dispatcher leaves real-time priority.
const behindLimit = 32

// pacingPriority is one dispatch loop's real-time state; it lives on the
// loop's locked pacing thread, whose scheduling policy it changes.
type pacingPriority struct {
	enter  func() (leave func(), ok bool) // enterRealtime; a test's stand-in
	leave  func()                         // set while at real-time priority
	denied bool                           // entering failed: never ask again
	behind int                            // consecutive shots with nothing to wait for
	spareP bool                           // GOMAXPROCS ≥ 2: a sleep may hold a P
}

func newPacingPriority() *pacingPriority {
	return &pacingPriority{enter: enterRealtime, spareP: runtime.GOMAXPROCS(0) >= 2}
}

// sleep is the dispatcher's high-resolution sleep (see waitUntilWith): at
// real-time priority with a P to spare, its last maxHeldSleep holds the P.
func (p *pacingPriority) sleep(d time.Duration) {
	if p.leave == nil || !p.spareP {
		preciseSleep(d)
		return
	}
	if d > maxHeldSleep {
		end := time.Now().Add(d)
		preciseSleep(d - maxHeldSleep)
		d = time.Until(end)
	}
	if d > 0 {
		heldSleep(d)
	}
}

// before is told, ahead of each shot's wait, how long that wait is.
func (p *pacingPriority) before(wait time.Duration) {
	if wait > time.Duration(wakeLead.Load()) { // the wait will sleep: ahead
		p.behind = 0
		if p.leave == nil && !p.denied {
			leave, ok := p.enter()
			if ok {
				p.leave = leave
			} else {
				p.denied = true
			}
		}
		return
	}
	p.behind++
	if p.behind > behindLimit {
		p.end()
	}
}

// realtime reports whether the thread is at real-time priority.
func (p *pacingPriority) realtime() bool { return p.leave != nil }

// end restores the normal policy; the loop calls it before its thread
// returns to the pacing pool (onPacingThread), which may hand it any job.
func (p *pacingPriority) end() {
	if p.leave != nil {
		p.leave()
		p.leave = nil
	}
}
