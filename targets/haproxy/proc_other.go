//go:build !unix

package haproxy

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
	return errors.New("haproxy targets need a Unix system (ratecheck manages haproxy through process groups)")
}

func setProcAttrs(*exec.Cmd)      {}
func killGroup(int, signal) error { return nil }
func groupAlive(int) bool         { return false }
