package proc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"time"
)

// StopGrace bounds each step of stopping a server: SIGTERM, SIGKILL, and
// the wait for the rest of its process group.
const StopGrace = 5 * time.Second

// Process is a server started by Start.
type Process struct {
	Pid     int // also its process group id
	name    string
	exited  chan struct{} // closed when the process has been reaped
	waitErr error
}

// Start starts cmd (its Stdout, Stderr and Dir set by the caller) in a
// process group of its own, so that Stop can signal everything it starts
// together and a Ctrl-C in the terminal (sent to ratecheck's foreground
// group) does not reach it directly: ratecheck's context cancellation stops
// it in order instead. On Linux the kernel sends it SIGTERM if ratecheck
// dies without stopping it. name ("nginx") is for messages.
//
// The death signal is tied to the thread that forks, and a thread ends
// when a goroutine that locked it exits locked (as ratecheck's pacing
// threads do): so Start forks from a goroutine that holds its thread for
// the child's whole life, and no other goroutine can ever run on, or end,
// it.
func Start(cmd *exec.Cmd, name string) (*Process, error) {
	if err := PlatformCheck(name); err != nil {
		return nil, err
	}
	setProcAttrs(cmd)
	p := &Process{name: name, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p.Pid = cmd.Process.Pid
	return p, nil
}

// Exited is closed once the process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// HasExited reports whether the process has exited by now.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitErr is how the process exited (cmd.Wait's error); valid once Exited
// is closed.
func (p *Process) WaitErr() error { return p.waitErr }

// AwaitReady calls try until it reports done, backing off from 2 ms to
// 50 ms between calls, bounded by timeout, the process exiting and ctx.
// try returns done with a nil error when the server is ready, done with an
// error to give up at once, and not done with what went wrong this time
// (returned if the time runs out).
func (p *Process) AwaitReady(ctx context.Context, timeout time.Duration, try func() (done bool, err error)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	interval := 2 * time.Millisecond
	var last error = errors.New("no answer yet")
	for {
		done, err := try()
		if done {
			return err
		}
		if err != nil {
			last = err
		}
		t := time.NewTimer(interval)
		select {
		case <-p.exited:
			t.Stop()
			return errors.New(p.name + " exited")
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-deadline.C:
			t.Stop()
			return last
		case <-t.C:
		}
		interval = min(interval*2, 50*time.Millisecond)
	}
}

// ReadyClient is an HTTP client for readiness probes: no proxy, no
// keep-alive, no redirects followed, one second a request, and the
// certificate not verified (it is the caller's to verify).
func ReadyClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
		Timeout:   time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Stop sends the process group SIGTERM, SIGKILL after StopGrace, and
// waits until no process of the group is left. A nil Process is stopped.
func (p *Process) Stop() error {
	if p == nil {
		return nil
	}
	pgid := p.Pid
	if !p.HasExited() {
		_ = killGroup(pgid, sigTerm)
		if !waitClosed(p.exited, StopGrace) {
			_ = killGroup(pgid, sigKill)
			if !waitClosed(p.exited, StopGrace) {
				return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
			}
		}
	}
	// The leader is reaped. What it started (nginx workers, say) normally
	// exits before it; if it was killed they may be left, still in the
	// group (so the group id cannot have been reused): kill and wait for
	// them.
	deadline := time.Now().Add(StopGrace)
	interval := time.Millisecond
	for groupAlive(pgid) {
		_ = killGroup(pgid, sigKill)
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of %s's group %d survived SIGKILL for %v", p.name, pgid, StopGrace)
		}
		t := time.NewTimer(interval)
		<-t.C
		interval = min(interval*2, 50*time.Millisecond)
	}
	return nil
}

func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
