//go:build unix && !linux

package nginx

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
