//go:build unix

package nginx

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

// setProcAttrs puts nginx in a process group of its own, so that Stop can
// signal the master and its workers together and a Ctrl-C in the terminal
// (sent to ratecheck's foreground group) does not reach nginx directly:
// ratecheck's context cancellation stops it in order instead.
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

// fileLimits returns worker_rlimit_nofile and worker_connections for
// generated configs: enough descriptors for a load test when the hard limit
// allows, nginx's defaults otherwise.
func fileLimits() (nofile, workerConns int) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Max < 8192 {
		return 0, 512
	}
	n := min(uint64(rl.Max), 65536) // rl.Max is int64 on some BSDs
	return int(n), int(min(n/2, 16384))
}
