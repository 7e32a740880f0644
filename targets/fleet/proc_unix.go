//go:build unix

package fleet

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttrs puts redis-server in a process group of its own (a Ctrl-C
// in the terminal reaches ratecheck, which stops it in order) and, on
// Linux, asks the kernel to end it if ratecheck dies first.
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

func signalTerm(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
