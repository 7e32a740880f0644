//go:build linux

package haproxy

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to haproxy if ratecheck dies
// without stopping it (SIGKILL, crash). (The signal is tied to the thread
// that started haproxy; the Go runtime does not end threads of ordinary
// goroutines.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
