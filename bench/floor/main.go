//go:build linux

// Command floor measures the machine's own timing floor: how late a bare
// thread at real-time priority wakes from a high-resolution nanosleep, on
// the same period a 5,000/s dispatcher sleeps. No load generator can put
// requests on the wire more precisely than its thread is woken, so the
// bench prints this beside the schedule errors: on a virtual machine the
// host's interruptions, not the tool, set the tail.
//
//	floor [-period 200us] [-duration 5s]
//
// prints p50_ns, p99_ns, p999_ns, max_ns and realtime (whether SCHED_FIFO
// was granted) as key=value lines.

package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	period := flag.Duration("period", 200*time.Microsecond, "sleep period")
	duration := flag.Duration("duration", 5*time.Second, "how long to measure")
	flag.Parse()
	if *period <= 0 || *duration < *period {
		fmt.Fprintln(os.Stderr, "floor: -period must be > 0 and -duration at least one period")
		os.Exit(2)
	}
	runtime.LockOSThread()
	// The dispatcher's settings (attack/clock_linux.go): 1 ns timer
	// slack, SCHED_FIFO at the lowest priority when allowed.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	fifo := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	realtime := unix.SchedSetAttr(0, &fifo, 0) == nil
	n := int(*duration / *period)
	late := make([]time.Duration, 0, n)
	next := time.Now()
	for range n {
		next = next.Add(*period)
		if d := time.Until(next); d > 0 {
			ts := unix.NsecToTimespec(int64(d))
			// A raw call, as the dispatcher's held sleep: no runtime
			// hand-off on the way back.
			unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		late = append(late, time.Since(next))
	}
	slices.Sort(late)
	q := func(f float64) int64 { return late[min(int(f*float64(n)), n-1)].Nanoseconds() }
	fmt.Printf("p50_ns=%d\np99_ns=%d\np999_ns=%d\nmax_ns=%d\nrealtime=%v\n", q(0.5), q(0.99), q(0.999), late[n-1].Nanoseconds(), realtime)
}
