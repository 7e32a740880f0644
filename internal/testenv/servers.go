//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Stopper is a real server a test started (an nginx or haproxy Instance).
type Stopper interface{ Stop() error }

// Started fails the test if the server s did not start (err, for what),
// and otherwise registers a cleanup that stops it and runs gone, which
// checks that nothing of it is left.
func Started[S Stopper](t testing.TB, what string, s S, err error, gone func(testing.TB, S)) S {
	t.Helper()
	if err != nil {
		t.Fatalf("Start(%s): %v", what, err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		gone(t, s)
	})
	return s
}

// AssertStopped checks that nothing is left of a stopped server whose
// process led group pgid and ran from dir: no process of the group (nor
// the leader in /proc), none naming dir, and, unless kept, no dir.
func AssertStopped(t testing.TB, pgid int, dir string, kept bool) {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists after Stop (kill -0: %v); members: %v", pgid, err, GroupMembers(pgid))
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pgid))); err == nil && runtime.GOOS == "linux" {
		t.Errorf("process %d still in /proc after Stop", pgid)
	}
	if ps := ProcsMentioning(dir); len(ps) > 0 {
		t.Errorf("processes mentioning %s still running: %v", dir, ps)
	}
	if !kept {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temp dir %s not removed (stat: %v)", dir, err)
		}
	}
}

// CheckPortRetry tests a runner against a port taken between choosing it
// and the server binding it. pick is the runner's port chooser, replaced
// for the test. With the first port taken, up (which starts the server,
// stopping it at the end of the test, and returns its URL) must come up on
// a second port; with every port taken, fails (a start) must give up
// within giveUp with the bind error, leaving nothing behind.
func CheckPortRetry(t *testing.T, pick *func() (int, error), giveUp time.Duration, up func() string, fails func() error) {
	t.Helper()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	saved := *pick
	defer func() { *pick = saved }()

	calls := 0
	*pick = func() (int, error) {
		calls++
		if calls == 1 {
			return busyPort, nil
		}
		return saved()
	}
	if url := up(); strings.Contains(url, fmt.Sprintf(":%d/", busyPort)) || calls != 2 {
		t.Fatalf("URL %s after %d port choices; want a second port", url, calls)
	}

	tmp := IsolateTemp(t)
	*pick = func() (int, error) { return busyPort, nil }
	t0 := time.Now()
	if err := fails(); err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("err %v, want the bind failure", err)
	}
	if d := time.Since(t0); d > giveUp {
		t.Errorf("giving up took %v, more than %v", d, giveUp)
	}
	AssertEmptyDir(t, tmp)
}
