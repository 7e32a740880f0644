//go:build !unix

package fleet

import (
	"os"
	"os/exec"
)

func setProcAttrs(*exec.Cmd) {}

func signalTerm(p *os.Process) error { return p.Kill() }
