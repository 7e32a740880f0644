package testenv

import (
	"runtime"
	"sync"
	"time"
)

// RetireLockedThreads ends OS threads of this process the way ratecheck's
// pacing and burst threads do: rounds times, 2×GOMAXPROCS goroutines lock
// their thread and exit locked, so the runtime ends it. A child whose
// parent-death signal was tied to one of those threads would be killed:
// a server started right survives this.
func RetireLockedThreads(rounds int) {
	for range rounds {
		var wg sync.WaitGroup
		for range 2 * runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread() // and exit locked: the runtime ends the thread
			}()
		}
		wg.Wait()
	}
}

// StallWatch measures how late a 2 ms timer fires in this process until
// stop is closed, and sends the worst lateness: how far a timing test's
// measurements may have been disturbed by the machine's load. It measures;
// it does not synchronise anything.
func StallWatch(stop <-chan struct{}) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	go func() {
		const tick = 2 * time.Millisecond
		var worst time.Duration
		for {
			t0 := time.Now()
			tm := time.NewTimer(tick)
			select {
			case <-stop:
				tm.Stop()
				out <- worst
				return
			case <-tm.C:
			}
			worst = max(worst, time.Since(t0)-tick)
		}
	}()
	return out
}
