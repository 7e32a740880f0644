//go:build linux

package attack

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setFineTimerSlack asks the kernel to wake this thread's sleeps within
// 1 ns of their deadline instead of the default 50 µs.
func setFineTimerSlack() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }

// preciseSleep sleeps d on a high-resolution kernel timer.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// heldSleep is preciseSleep without giving up the goroutine's P: a raw
// system call, which the runtime does not know is blocking. preciseSleep's
// ordinary system call lets the runtime hand the P to other goroutines
// after 20 µs, and the sleeper, woken on time, then waits for one to come
// back — measured here with other load on the 2 CPUs: a real-time
// dispatcher's p99 lateness 0.09–43 ms with preciseSleep, 0.08–0.2 ms with
// heldSleep. It holds a P (and delays a stop-the-world) for d, so the
// dispatcher uses it only for short sleeps and only with a P to spare
// (pacingPriority.sleeper).
func heldSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&ts)), 0)
		if errno != unix.EINTR {
			return
		}
	}
}

// enterRealtime moves the calling thread, which must be locked to its
// goroutine, to SCHED_FIFO at the lowest real-time priority, so a target on
// the same machine woken by the first writes cannot preempt the rest. It
// needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0; ok is false (and nothing
// changed) otherwise. leave restores the normal policy, which never needs a
// privilege, and the thread's timer slack (a pacing thread's 1 ns).
func enterRealtime() (leave func(), ok bool) {
	slack, slackErr := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	fifo := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	if unix.SchedSetAttr(0, &fifo, 0) != nil {
		return func() {}, false
	}
	return func() {
		normal := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
		_ = unix.SchedSetAttr(0, &normal, 0)
		// The kernel zeroes a real-time thread's timer slack and gives it
		// the default 50 µs back when it leaves: a pacing thread needs its
		// 1 ns again.
		if slackErr == nil && slack > 0 {
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack), 0, 0, 0)
		}
	}, true
}

// pinToCPU restricts the calling thread, which must be locked to its
// goroutine, to the i-th CPU (modulo their count) of those it may run on,
// so a burst's releasing threads never queue behind each other on one CPU
// while another idles. restore puts back the previous mask.
func pinToCPU(i int) (restore func()) {
	var old unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil {
		return func() {}
	}
	var cpus []int
	for c, n := 0, old.Count(); len(cpus) < n; c++ {
		if old.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		return func() {}
	}
	var one unix.CPUSet
	one.Set(cpus[i%len(cpus)])
	if unix.SchedSetaffinity(0, &one) != nil {
		return func() {}
	}
	return func() { _ = unix.SchedSetaffinity(0, &old) }
}
