//go:build !linux

package attack

import (
	"runtime"
	"time"
)

func setFineTimerSlack() {}

// preciseSleep spins where no high-resolution sleep is at hand.
func preciseSleep(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		runtime.Gosched()
	}
}

// heldSleep is preciseSleep (Linux-only: see clock_linux.go).
func heldSleep(d time.Duration) { preciseSleep(d) }

// enterRealtime is Linux-only; elsewhere bursts are released at normal
// priority.
func enterRealtime() (leave func(), ok bool) { return func() {}, false }

// pinToCPU is Linux-only.
func pinToCPU(int) (restore func()) { return func() {} }
