//go:build !unix

package proc

import (
	"fmt"
	"os/exec"
)

type signal int

var (
	sigTerm signal = 15
	sigKill signal = 9
)

// PlatformCheck says why a server cannot be run here: ratecheck manages
// servers through process groups, which only Unix has.
func PlatformCheck(name string) error {
	return fmt.Errorf("%s targets need a Unix system (ratecheck manages %s through process groups)", name, name)
}

func setProcAttrs(*exec.Cmd)      {}
func killGroup(int, signal) error { return nil }
func groupAlive(int) bool         { return false }
