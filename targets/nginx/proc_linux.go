//go:build linux

package nginx

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to the nginx master if
// ratecheck dies without stopping it (SIGKILL, crash); the master then shuts
// its workers down. (The signal is tied to the thread that started nginx:
// launch forks from a goroutine that keeps its thread locked until nginx
// has exited, so no other goroutine can end that thread.)
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
