package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// Run is what a started server owns: its private directory, its process,
// the loopback backend, and a stop that happens once, whether called or
// caused by the context the server was started with.
type Run struct {
	Dir     string
	Keep    bool     // keep Dir after Stop, for debugging
	Proc    *Process // nil until launched, and after a failed launch
	Backend *Backend // nil when there is none

	mu        sync.Mutex
	stopAfter func() bool

	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
}

// NewRun is a Run for a server in dir.
func NewRun(dir string, keep bool) *Run {
	return &Run{Dir: dir, Keep: keep, done: make(chan struct{})}
}

// StopOnCancel makes the end of ctx stop the server, as Stop does.
func (r *Run) StopOnCancel(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { _ = r.Stop() })
	r.mu.Lock()
	r.stopAfter = stop
	r.mu.Unlock()
}

// Stop stops the process (see Process.Stop), then the backend, and removes
// Dir unless Keep. It is safe to call more than once and concurrently;
// every call returns the first call's result.
func (r *Run) Stop() error {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		stop := r.stopAfter
		r.mu.Unlock()
		if stop != nil {
			stop()
		}
		err := r.Proc.Stop()
		if r.Backend != nil {
			r.Backend.Close()
		}
		if !r.Keep {
			if e := os.RemoveAll(r.Dir); e != nil && err == nil {
				err = e
			}
		}
		r.stopErr = err
		close(r.done)
	})
	return r.stopErr
}

// Done is closed once Stop has finished.
func (r *Run) Done() <-chan struct{} { return r.done }

// Abort undoes a failed start: what runs is stopped, Dir removed unless
// Keep.
func (r *Run) Abort() {
	_ = r.Proc.Stop()
	if r.Backend != nil {
		r.Backend.Close()
	}
	if !r.Keep {
		os.RemoveAll(r.Dir)
	}
}

// Failed undoes a failed start (Abort) and returns err, saying where the
// directory is when it is kept: an error of type E (the runner's
// *ConfigError) gets the generated config's path through setKept, any
// other is wrapped with the directory.
func Failed[E error](r *Run, err error, generated string, setKept func(E, string)) error {
	r.Abort()
	if !r.Keep {
		return err
	}
	if e, ok := errors.AsType[E](err); ok {
		setKept(e, generated)
		return err
	}
	return fmt.Errorf("%w (generated config kept in %s)", err, r.Dir)
}

// LaunchFailure is a launch whose server did not become ready.
type LaunchFailure struct {
	Ready   error // what the wait for readiness ended with
	Exited  bool  // the server had exited by itself
	WaitErr error // how it exited, when Exited
}

// Launch starts cmd as the run's process (see Start) and waits with ready
// until it answers. When it does not, the process is stopped again and
// Launch says how it failed; err is a process that could not start, or ctx
// that ended.
func (r *Run) Launch(ctx context.Context, cmd *exec.Cmd, name string, ready func(*Process) error) (*LaunchFailure, error) {
	p, err := Start(cmd, name)
	if err != nil {
		return nil, err
	}
	r.Proc = p
	rerr := ready(p)
	if rerr == nil {
		return nil, nil
	}
	f := &LaunchFailure{Ready: rerr, Exited: p.HasExited()}
	_ = p.Stop()
	r.Proc = nil
	if f.Exited {
		f.WaitErr = p.WaitErr()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return f, nil
}
