//go:build unix && !linux

package haproxy

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
