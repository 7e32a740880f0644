//go:build unix && !linux

package fleet

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
