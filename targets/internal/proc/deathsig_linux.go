//go:build linux

package proc

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to the server if ratecheck
// dies without stopping it (SIGKILL, crash); the server then shuts down
// what it started. (The signal is tied to the forking thread: see Start.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
