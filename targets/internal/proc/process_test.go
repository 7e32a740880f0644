//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/internal/testenv"
)

// start runs a shell script as a server would run, stopping it at the end.
func start(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start(exec.Command("/bin/sh", "-c", script), "sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

func groupGone(pgid int) bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }

// The child leads a group of its own, and Stop leaves none of the group:
// here a grandchild that ignores SIGTERM outlives the leader and must be
// killed by the loop that waits for the group to empty.
func TestStopEmptiesTheGroup(t *testing.T) {
	p := start(t, `(trap "" TERM; exec sleep 60) & exec sleep 60`)
	if pgid, err := syscall.Getpgid(p.Pid); err != nil || pgid != p.Pid {
		t.Fatalf("child %d is in group %d (%v), want a group of its own", p.Pid, pgid, err)
	}
	// Wait (bounded) until the grandchild exists, so the test shows it
	// survives SIGTERM rather than racing its fork.
	deadline := time.Now().Add(5 * time.Second)
	for len(members(p.Pid)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("group %d never had two members: %v", p.Pid, members(p.Pid))
		}
		time.Sleep(time.Millisecond)
	}
	t0 := time.Now()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if !groupGone(p.Pid) {
		t.Errorf("group %d still has members after Stop: %v", p.Pid, members(p.Pid))
	}
	if d := time.Since(t0); d >= StopGrace {
		t.Errorf("Stop took %v: the leader dies of SIGTERM, no need to wait out the grace", d)
	}
	if !p.HasExited() {
		t.Error("HasExited false after Stop")
	}
	testenv.NoChildrenLeft(t)
}

// members lists the pids in process group pgid (Linux /proc; none elsewhere).
func members(pgid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == itoa(pgid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// Goroutines that exit with their thread locked end that thread
// (ratecheck's pacing threads do). If one of them had forked the child, its
// death signal would stop the child mid-run: it must survive any number
// of them.
func TestChildSurvivesRetiredThreads(t *testing.T) {
	p := start(t, `exec sleep 60`)
	testenv.RetireLockedThreads(200)
	// A retired thread's death signal is queued when the thread has
	// exited, a little after its goroutine is done; the child then dies
	// when next scheduled and is reaped at once. Watch for that a while
	// (the wait only bounds a negative: a correct Start always passes).
	watch := time.NewTimer(200 * time.Millisecond)
	defer watch.Stop()
	select {
	case <-p.Exited():
		t.Fatalf("child exited (%v) when threads of ratecheck retired", p.WaitErr())
	case <-watch.C:
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestAwaitReady(t *testing.T) {
	p := start(t, `exec sleep 60`)
	ctx := context.Background()
	calls := 0
	err := p.AwaitReady(ctx, 5*time.Second, func() (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("ready on the third try: err %v after %d calls", err, calls)
	}
	giveUp := errors.New("someone else's server")
	if err := p.AwaitReady(ctx, 5*time.Second, func() (bool, error) { return true, giveUp }); err != giveUp {
		t.Errorf("giving up: err %v, want %v", err, giveUp)
	}
	notYet := errors.New("connection refused")
	t0 := time.Now()
	if err := p.AwaitReady(ctx, 30*time.Millisecond, func() (bool, error) { return false, notYet }); err != notYet {
		t.Errorf("timeout: err %v, want the last try's %v", err, notYet)
	}
	if d := time.Since(t0); d < 30*time.Millisecond {
		t.Errorf("timed out after %v, before the 30ms bound", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.AwaitReady(cctx, 5*time.Second, func() (bool, error) { return false, nil }); err != context.Canceled {
		t.Errorf("cancelled: err %v", err)
	}

	dead := start(t, `exit 3`)
	<-dead.Exited()
	err = dead.AwaitReady(ctx, 5*time.Second, func() (bool, error) { return false, nil })
	if err == nil || err.Error() != "sh exited" {
		t.Errorf("exited child: err %v, want \"sh exited\"", err)
	}
	var ee *exec.ExitError
	if !errors.As(dead.WaitErr(), &ee) || ee.ExitCode() != 3 {
		t.Errorf("WaitErr %v, want exit status 3", dead.WaitErr())
	}
}

func TestStartFailure(t *testing.T) {
	_, err := Start(exec.Command(filepath.Join(t.TempDir(), "none")), "nginx")
	if err == nil || !strings.HasPrefix(err.Error(), "starting nginx: ") {
		t.Errorf("err %v, want it to say what could not start", err)
	}
}

// Run stops once, for Stop and cancellation alike, and removes its
// directory unless Keep.
func TestRun(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := t.TempDir()
		sub := filepath.Join(dir, "run")
		os.Mkdir(sub, 0o755)
		r := NewRun(sub, keep)
		r.Proc = start(t, `exec sleep 60`)
		b, err := StartBackend()
		if err != nil {
			t.Fatal(err)
		}
		r.Backend = b
		ctx, cancel := context.WithCancel(context.Background())
		r.StopOnCancel(ctx)
		cancel()
		select {
		case <-r.Done():
		case <-time.After(3 * StopGrace):
			t.Fatal("cancelling did not stop the run")
		}
		if !groupGone(r.Proc.Pid) {
			t.Errorf("group %d left after cancel", r.Proc.Pid)
		}
		if err := r.Stop(); err != nil {
			t.Errorf("Stop after cancel: %v", err)
		}
		if _, err := os.Stat(sub); errors.Is(err, os.ErrNotExist) == keep {
			t.Errorf("keep=%v: stat dir after Stop: %v", keep, err)
		}
		if _, err := ReadyClient().Get("http://" + b.Addr + "/"); err == nil {
			t.Errorf("backend %s still answers after Stop", b.Addr)
		}
	}
	testenv.NoChildrenLeft(t)
}
