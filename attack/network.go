package attack

import (
	"context"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Network is the seam between an experiment (the probe's plan) and the
// wire: every request it sends and every clock it reads goes through it.
// The Engine is the live network, on real sockets and real time; the
// simulator (targets/sim) runs the same experiment on virtual time against
// the reference models, seeded and replayable. What is tested on the
// simulator is the plan that runs live.
type Network interface {
	// Epoch is the wall-clock instant a run begun now starts at: the
	// stream header's start.
	Epoch() time.Time
	// BeginAt starts the run's clock at start and returns the run's
	// context, ended by ctx or the time budget.
	BeginAt(ctx context.Context, start time.Time) context.Context
	// Start is offset 0 on the wall clock; Now the offset now.
	Start() time.Time
	Now() time.Duration
	// Sleep waits d, false when ctx ended first.
	Sleep(ctx context.Context, d time.Duration) bool
	// After fires once d has passed: a timer to race a background
	// computation against.
	After(d time.Duration) <-chan time.Time
	// Stopwatch times a computation (a background fit) on this network's
	// clock: real time live; none on the simulator, where computing
	// costs no virtual time, so an experiment's choices do not depend on
	// how fast the machine running the simulation is.
	Stopwatch() func() time.Duration
	// Do sends one shot now and waits for its result (ok false when the
	// budget or the run ended before it was sent).
	Do(ctx context.Context, s Shot) (*results.Result, bool)
	// Schedule sends n shots, each at its At, and returns once the last
	// is sent; Burst releases shots at one instant.
	Schedule(ctx context.Context, n int, plan func(i int) Shot)
	Burst(ctx context.Context, at time.Duration, shots []Shot)
	// Wait returns once every shot sent has its result.
	Wait()
	// Sent counts the shots sent (the request budget's use).
	Sent() int
	// Finish ends the run: nothing more is sent, every result is in.
	Finish()
	// Notes are what the network said on the way (budget reached).
	Notes() []string
	// Extend raises the time budget to d from the start (a probe that
	// grows its own budget to a long window); a d no longer than the
	// budget, or a run over already, changes nothing.
	Extend(d time.Duration)
}

// NetworkFunc builds a run's network from the request, the options (budget
// included) and the sinks that receive every result as it arrives.
type NetworkFunc func(req *Request, opt Options, sinks ...func(*results.Result)) Network

// Live is the network of real sockets and real time: an Engine.
func Live(req *Request, opt Options, sinks ...func(*results.Result)) Network {
	return New(req, opt, sinks...)
}

// Epoch is now: a live run starts when it begins.
func (e *Engine) Epoch() time.Time { return time.Now() }

// Sleep waits d on the real clock, false when ctx ended first.
func (e *Engine) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// After is time.After.
func (e *Engine) After(d time.Duration) <-chan time.Time { return time.After(max(d, 0)) }

// Stopwatch measures real time.
func (e *Engine) Stopwatch() func() time.Duration {
	began := time.Now()
	return func() time.Duration { return time.Since(began) }
}

// The engine is the live network.
var _ Network = (*Engine)(nil)
