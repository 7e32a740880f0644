//go:build linux

package attack

import (
	"syscall"
	"time"
	"unsafe"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// setFineTimerSlack asks the kernel to wake this thread's sleeps within
// 1 ns of their deadline instead of the default 50 µs.
func setFineTimerSlack() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}

// preciseSleep sleeps d on a high-resolution kernel timer.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// Scheduling policies and sched_setscheduler's parameter (linux/sched.h).
const (
	schedOther = 0
	schedFIFO  = 1
)

type schedParam struct{ priority int32 }

// enterRealtime moves the calling thread, which must be locked to its
// goroutine, to SCHED_FIFO at the lowest real-time priority, so a target on
// the same machine woken by the first writes cannot preempt the rest. It
// needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0; ok is false (and nothing
// changed) otherwise. leave restores the normal policy, which never needs a
// privilege.
func enterRealtime() (leave func(), ok bool) {
	tid := uintptr(syscall.Gettid())
	p := schedParam{priority: 1}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, tid, schedFIFO, uintptr(unsafe.Pointer(&p))); e != 0 {
		return func() {}, false
	}
	return func() {
		p := schedParam{}
		_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, tid, schedOther, uintptr(unsafe.Pointer(&p)))
	}, true
}

// cpuMask is the kernel's cpu_set_t for up to 1024 CPUs.
type cpuMask [16]uint64

// pinToCPU restricts the calling thread, which must be locked to its
// goroutine, to the i-th CPU (modulo their count) of those it may run on,
// so a burst's releasing threads never queue behind each other on one CPU
// while another idles. restore puts back the previous mask.
func pinToCPU(i int) (restore func()) {
	var old cpuMask
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(old), uintptr(unsafe.Pointer(&old))); e != 0 {
		return func() {}
	}
	var cpus []int
	for w, bits := range old {
		for b := 0; b < 64; b++ {
			if bits&(1<<b) != 0 {
				cpus = append(cpus, w*64+b)
			}
		}
	}
	if len(cpus) < 2 {
		return func() {}
	}
	cpu := cpus[i%len(cpus)]
	var one cpuMask
	one[cpu/64] = 1 << (cpu % 64)
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(one), uintptr(unsafe.Pointer(&one))); e != 0 {
		return func() {}
	}
	return func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(old), uintptr(unsafe.Pointer(&old)))
	}
}
