//go:build linux

// Command floor measures the machine's own timing floor: how late a bare
// thread at real-time priority wakes from a high-resolution nanosleep, on
// the same period a 5,000/s dispatcher sleeps. No load generator can put
// requests on the wire more precisely than its thread is woken, so the
// bench prints this beside the schedule errors: on a virtual machine the
// host's interruptions, not the tool, set the tail.
//
// It then measures the same with one such thread pinned to each of the
// first two CPUs, both sleeping to the same absolute deadlines, and takes
// per period the earlier of the two wake-ups: the floor of a dispatcher
// hedged on two CPUs (whichever thread wakes first sends). The two figures
// together say whether the host interrupts one virtual CPU at a time (the
// pair's tail is far below one thread's: a hedge would help) or the whole
// machine (they are alike: nothing on it can help).
//
//	floor [-period 200us] [-duration 5s]
//
// prints p50_ns, p99_ns, p999_ns, max_ns, realtime (whether SCHED_FIFO was
// granted) and, on a machine with two CPUs or more, pair_p50_ns, pair_p99_ns,
// pair_p999_ns and pair_max_ns, as key=value lines.

package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	period := flag.Duration("period", 200*time.Microsecond, "sleep period")
	duration := flag.Duration("duration", 5*time.Second, "how long to measure each of the two")
	flag.Parse()
	if *period <= 0 || *duration < *period {
		fmt.Fprintln(os.Stderr, "floor: -period must be > 0 and -duration at least one period")
		os.Exit(2)
	}
	n := int(*duration / *period)
	late, realtime := single(n, *period)
	printQuantiles("", late)
	fmt.Printf("realtime=%v\n", realtime)
	if pair, ok := hedged(n, *period); ok {
		printQuantiles("pair_", pair)
	}
}

// realtimeThread locks the calling goroutine to its thread and gives the
// thread the dispatcher's settings (attack/clock_linux.go): 1 ns timer
// slack, SCHED_FIFO at the lowest priority when allowed. The goroutine must
// exit locked, so the runtime retires the thread.
func realtimeThread() bool {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	fifo := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	return unix.SchedSetAttr(0, &fifo, 0) == nil
}

// single is one thread sleeping n periods as the dispatcher does.
func single(n int, period time.Duration) (late []time.Duration, realtime bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		realtime = realtimeThread()
		late = make([]time.Duration, 0, n)
		next := time.Now()
		for range n {
			next = next.Add(period)
			if d := time.Until(next); d > 0 {
				ts := unix.NsecToTimespec(int64(d))
				// A raw call, as the dispatcher's held sleep: no
				// runtime hand-off on the way back.
				unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
			}
			late = append(late, time.Since(next))
		}
	}()
	<-done
	return late, realtime
}

// hedged is one thread on each of the first two CPUs sleeping to the same
// absolute deadlines; per period, the earlier wake-up's lateness. ok is
// false on a machine with fewer than two CPUs to pin to.
func hedged(n int, period time.Duration) (late []time.Duration, ok bool) {
	var mask unix.CPUSet
	if unix.SchedGetaffinity(0, &mask) != nil {
		return nil, false
	}
	var cpus []int
	for c := 0; len(cpus) < 2 && c < 1024; c++ {
		if mask.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		return nil, false
	}
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	first := now.Nano() + int64(10*time.Millisecond) // both threads set up before the first deadline
	wakes := [2][]int64{make([]int64, n), make([]int64, n)}
	var wg sync.WaitGroup
	for k, cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			realtimeThread()
			var one unix.CPUSet
			one.Set(cpu)
			_ = unix.SchedSetaffinity(0, &one)
			for i := range n {
				deadline := first + int64(i)*int64(period)
				ts := unix.NsecToTimespec(deadline)
				for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
				}
				var woke unix.Timespec
				_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &woke)
				wakes[k][i] = woke.Nano() - deadline
			}
		}()
	}
	wg.Wait()
	late = make([]time.Duration, n)
	for i := range late {
		late[i] = time.Duration(min(wakes[0][i], wakes[1][i]))
	}
	return late, true
}

func printQuantiles(prefix string, late []time.Duration) {
	slices.Sort(late)
	n := len(late)
	q := func(f float64) int64 { return late[min(int(f*float64(n)), n-1)].Nanoseconds() }
	fmt.Printf("%sp50_ns=%d\n%sp99_ns=%d\n%sp999_ns=%d\n%smax_ns=%d\n", prefix, q(0.5), prefix, q(0.99), prefix, q(0.999), prefix, late[n-1].Nanoseconds())
}
