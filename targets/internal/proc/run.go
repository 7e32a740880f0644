package proc

import (
	"context"
	"os"
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
