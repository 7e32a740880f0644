//go:build linux

package nginx

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to the nginx master if
// ratecheck dies without stopping it (SIGKILL, crash); the master then shuts
// its workers down. (The signal is tied to the thread that started nginx;
// the Go runtime does not end threads of ordinary goroutines.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
