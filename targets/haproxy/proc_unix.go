//go:build unix

package haproxy

import (
	"errors"
	"os/exec"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func platformCheck() error { return nil }

// setProcAttrs puts haproxy in a process group of its own, so that Stop can
// signal everything it started together and a Ctrl-C in the terminal (sent
// to ratecheck's foreground group) does not reach it directly: ratecheck's
// context cancellation stops it in order instead.
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

func killGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process (zombies included) is still in the
// process group.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
