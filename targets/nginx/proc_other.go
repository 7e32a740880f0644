//go:build !unix

package nginx

import (
	"errors"
	"os/exec"
)

type signal int

var (
	sigTerm signal = 15
	sigKill signal = 9
)

func platformCheck() error {
	return errors.New("nginx targets need a Unix system (ratecheck manages nginx through process groups)")
}

func setProcAttrs(*exec.Cmd)          {}
func killGroup(int, signal) error     { return nil }
func groupAlive(int) bool             { return false }
func fileLimits() (nofile, conns int) { return 0, 512 }
