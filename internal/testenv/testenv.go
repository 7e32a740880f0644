// Package testenv is what tests need from the machine: the real servers
// they start (nginx, haproxy, redis-server) and an account of the
// processes they leave behind (Children, GroupMembers, ProcsMentioning,
// and for the runners of real servers Started, AssertStopped,
// AssertEmptyDir, CheckPortRetry). A test that needs a server skips when it is
// missing on a developer's machine, but fails in CI (CI is set), where
// scripts/test installs every one of them: no test that needs a real
// server may skip there.
package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Binary finds a server's executable: on PATH, or in the sbin folders
// Debian installs daemons to (which a non-root PATH may lack).
func Binary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Need returns the path of a server's binary, skipping the test when it is
// not installed — except in CI, where that is a failure.
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := Binary(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, so the tests that need it cannot run in CI (scripts/test installs it)", name)
	}
	t.Skipf("%s is not installed; scripts/test installs it (Debian package) to run these tests", name)
	return ""
}

// NeedNginx is Need for nginx.
func NeedNginx(t testing.TB) string { return Need(t, "nginx") }

// NeedHAProxy is Need for haproxy.
func NeedHAProxy(t testing.TB) string { return Need(t, "haproxy") }

// Children lists the pids of the live processes whose parent is pid
// (Linux /proc; an error elsewhere).
func Children(pid int) ([]int, error) {
	var out []int
	err := scanProcs(func(p procStat) {
		if p.state != "Z" && p.ppid == pid { // a zombie is dead, only not yet reaped
			out = append(out, p.pid)
		}
	})
	return out, err
}

// ErrNoProc means the process table cannot be read here.
var ErrNoProc = errors.New("no /proc on this system")

// NoChildrenLeft fails the test if this test process still has a child
// process (an nginx, a redis-server, a ratecheck it started).
func NoChildrenLeft(t testing.TB) {
	t.Helper()
	kids, err := Children(os.Getpid())
	if err != nil {
		t.Logf("cannot account for child processes: %v", err)
		return
	}
	if len(kids) > 0 {
		t.Errorf("processes left running by the test: pids %v", kids)
	}
}
