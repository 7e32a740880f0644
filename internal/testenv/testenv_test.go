package testenv

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestChildrenSeesAStartedProcessAndNotAReapedOne(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	kids, err := Children(os.Getpid())
	if err != nil || !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("Children = %v, %v; want it to hold %d", kids, err, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	kids, _ = Children(os.Getpid())
	if slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("a reaped child is still listed: %v", kids)
	}
}

func TestBinaryFindsAShellAndNotANonsenseName(t *testing.T) {
	if _, err := Binary("sh"); err != nil {
		t.Errorf("Binary(sh): %v", err)
	}
	if p, err := Binary("ratecheck-no-such-server"); err == nil {
		t.Errorf("Binary found %s", p)
	}
}
