//go:build unix

package testenv

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// GroupMembers and ProcsMentioning see a process in its own group, by its
// group and by a word of its command line, and not once it is reaped.
func TestGroupMembersAndProcsMentioning(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	mark := t.TempDir()
	// The shell waits on a read from a pipe: it starts no child, so it is
	// the group's only member and this test reaps it.
	cmd := exec.Command("/bin/sh", "-c", "read x; : "+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Skip("no shell:", err)
	}
	pid := cmd.Process.Pid
	if got := GroupMembers(pid); !slices.Contains(got, pid) {
		t.Errorf("GroupMembers(%d) = %v, want it to hold the leader", pid, got)
	}
	if got := ProcsMentioning(mark); len(got) != 1 || !strings.HasPrefix(got[0], strconv.Itoa(pid)+": /bin/sh -c read x; : "+mark) {
		t.Errorf("ProcsMentioning = %q, want the shell", got)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if got := GroupMembers(pid); len(got) != 0 {
		t.Errorf("after reaping, GroupMembers = %v", got)
	}
	if got := ProcsMentioning(mark); len(got) != 0 {
		t.Errorf("after reaping, ProcsMentioning = %q", got)
	}
}
