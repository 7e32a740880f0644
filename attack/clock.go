package attack

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Waiting for an instant precisely, without burning a core.
//
// Go's timers routinely wake ~1 ms late on Linux (measured here: a 200 µs
// sleep overshoots by 0.9 ms at p50), too coarse for sub-millisecond pacing.
// Spinning the last stretch fixes the precision but at 5,000 r/s it never
// stops spinning: a whole core, and on a 2-core machine the OS then stalls
// the other threads (the target's too) in time-slice-sized chunks — p99
// schedule error of ~5 ms at the sink (bench/README.md). So: a Go timer for
// the coarse part, a high-resolution nanosleep on this thread (timer slack
// set to 1 ns) for the last few milliseconds, aimed wakeLead ahead of the
// instant, and a spin for what is left of the lead. wakeLead follows how
// late the kernel actually wakes a nanosleep here (25 µs at p50 on a shared
// 2-core VM, 5–10 µs idle), so the spin covers only the error of that
// estimate — a fixed 25 µs window spun ~25 µs per shot on an idle machine,
// an eighth of a core at 5,000/s. Shots less than batchWindow apart go out
// back to back on one wake-up rather than with a sleep each.
const (
	coarseMargin = 3 * time.Millisecond   // below this, no Go timer
	minWakeLead  = 2 * time.Microsecond   // wakeLead's bounds
	maxWakeLead  = 100 * time.Microsecond //
	batchWindow  = 2 * time.Microsecond   // this close to due counts as due
)

// wakeLead is how far ahead of an instant a nanosleep aims (ns): the
// moving average of its observed lateness, shared by the pacing threads.
var wakeLead atomic.Int64

func init() { wakeLead.Store(int64(10 * time.Microsecond)) }

// waitUntil blocks until t (monotonic) or ctx ends; it reports whether t was
// reached. Callers that wait repeatedly (the dispatcher) should run on a
// pacing thread (onPacingThread) so the timer slack setting applies.
func waitUntil(ctx context.Context, t time.Time) bool { return waitUntilWith(ctx, t, preciseSleep) }

// waitUntilWith is waitUntil with the high-resolution sleep given (the
// dispatcher's, see pacingPriority.sleep).
func waitUntilWith(ctx context.Context, t time.Time, sleep func(time.Duration)) bool {
	for {
		d := time.Until(t)
		lead := time.Duration(wakeLead.Load())
		switch {
		case d <= batchWindow:
			return ctx.Err() == nil
		case ctx.Err() != nil:
			return false
		case d > coarseMargin:
			timer := time.NewTimer(d - coarseMargin)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return false
			}
		case d > lead:
			aim := t.Add(-lead)
			sleep(d - lead)
			// Follow the kernel's actual wake-up lateness (weight 1/8).
			late := min(max(time.Since(aim), minWakeLead), maxWakeLead)
			wakeLead.Store(int64(lead + (late-lead)/8))
		default:
			// A pure spin: on a locked thread (the pacers) Gosched would
			// hand the goroutine to another thread and back, costing more
			// than the window itself.
			for time.Until(t) > batchWindow {
			}
		}
	}
}

// lockPacingThread locks the calling goroutine to its OS thread for good and
// gives the thread fine-grained timers. The goroutine must then exit
// without unlocking: the runtime retires a thread whose goroutine exits
// locked, rather than hand other goroutines a thread whose timer slack (and,
// for a burst's writers, scheduling policy and CPU mask) this changed.
func lockPacingThread() {
	runtime.LockOSThread()
	setFineTimerSlack()
}

// onPacingThread runs fn on a pacing thread and waits for it. Pacing
// threads are kept for pacingIdle after their last job, so a caller that
// schedules one shot at a time (the probe's trace) does not create and
// retire a thread per shot; an idle one then exits locked, and the runtime
// retires it.
func onPacingThread(fn func()) {
	j := pacingJob{fn: fn, done: make(chan struct{})}
	if claimIdleWorker() {
		pacingJobs <- j
	} else {
		go pacingWorker(j)
	}
	<-j.done
}

// pacingIdle is how long an idle pacing thread waits for another job.
const pacingIdle = 100 * time.Millisecond

type pacingJob struct {
	fn   func()
	done chan struct{}
}

var (
	pacingJobs = make(chan pacingJob)
	// idleWorkers counts the idle pacing threads not yet promised a job:
	// a caller that takes one (claimIdleWorker) then sends its job, which
	// some idle thread receives.
	idleWorkers atomic.Int64
)

func claimIdleWorker() bool {
	for {
		n := idleWorkers.Load()
		if n == 0 {
			return false
		}
		if idleWorkers.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func pacingWorker(j pacingJob) {
	lockPacingThread()
	idle := time.NewTimer(pacingIdle)
	defer idle.Stop()
	for {
		j.fn()
		idleWorkers.Add(1) // before done: the caller's next job finds this thread
		close(j.done)
		idle.Reset(pacingIdle)
		select {
		case j = <-pacingJobs:
		case <-idle.C:
			if claimIdleWorker() {
				return // exits locked
			}
			j = <-pacingJobs // every idle thread was promised a job: take one
		}
	}
}
