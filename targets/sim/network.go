package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
)

// Network is a simulated run: an attack.Network on virtual time. Its
// methods are called from the plan's goroutine alone, as the plan calls
// the engine's; the clock moves only inside them, so a computation the
// plan waits for takes no virtual time.
type Network struct {
	cfg   Config
	req   *attack.Request
	opt   attack.Options
	sinks []func(*results.Result)
	rng   *rand.Rand
	// wake draws the order in which the requests a server stall held are
	// decided when it ends: a stream of its own, so the order takes no
	// draw from rng and a seed's other conditions stay what they were.
	wake  *rand.Rand
	epoch time.Time

	mu    sync.Mutex // now and notes, read by other goroutines (progress)
	now   time.Duration
	notes []string

	events  eventQueue
	flights int // requests sent and not yet answered
	seq     int
	sent    int

	server  *server
	client  *client
	run     context.Context
	end     context.CancelCauseFunc
	stopped bool // the run ended: nothing more is sent
}

// errTimeBudget ends a run at its time budget.
var errTimeBudget = errors.New("time budget reached")

// New builds the network of cfg: an attack.NetworkFunc once cfg is bound
// (see Func).
func New(cfg Config, req *attack.Request, opt attack.Options, sinks ...func(*results.Result)) *Network {
	if opt.Timeout <= 0 {
		opt.Timeout = attack.DefaultTimeout
	}
	if opt.MaxRequests <= 0 {
		opt.MaxRequests = attack.DefaultMaxRequests
	}
	if opt.MaxDuration <= 0 {
		opt.MaxDuration = attack.DefaultMaxDuration
	}
	n := &Network{cfg: cfg, req: req, opt: opt, sinks: sinks, rng: cfg.rng(), wake: cfg.wakeRNG()}
	n.epoch = epochBase.Add(time.Duration(n.rng.Int64N(int64(epochSpan))))
	n.cfg.FailAt = cfg.FailInstant()
	n.server = newServer(n, cfg)
	n.client = &client{n: n, idle: map[string][]*conn{}}
	return n
}

// Func binds cfg: the network a probe is given (probe.Options.Network).
func Func(cfg Config) attack.NetworkFunc {
	return func(req *attack.Request, opt attack.Options, sinks ...func(*results.Result)) attack.Network {
		return New(cfg, req, opt, sinks...)
	}
}

// Epoch is the simulated wall clock's start: an instant of an hour drawn
// from the seed.
func (n *Network) Epoch() time.Time { return n.epoch }

// Start is offset 0 on the simulated wall clock.
func (n *Network) Start() time.Time { return n.epoch }

// Now is the virtual offset.
func (n *Network) Now() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.now
}

func (n *Network) setNow(t time.Duration) {
	n.mu.Lock()
	n.now = max(n.now, t)
	n.mu.Unlock()
}

// BeginAt starts the run (start must be Epoch: the simulated clock is the
// stream's). The returned context ends with ctx, at the time budget, or
// when the request budget is spent.
func (n *Network) BeginAt(ctx context.Context, start time.Time) context.Context {
	if !start.Equal(n.epoch) {
		panic("sim: BeginAt must be given Epoch()")
	}
	n.run, n.end = context.WithCancelCause(ctx)
	n.push(n.opt.MaxDuration, evBudget, nil)
	if it := n.cfg.Interrupt; it != nil {
		n.push(it.At, evInterrupt, nil)
	}
	return n.run
}

// Extend raises the time budget to d from the start (attack.Network).
func (n *Network) Extend(d time.Duration) {
	if d <= n.opt.MaxDuration || n.stopped || n.run == nil {
		return
	}
	n.opt.MaxDuration = d
	n.push(d, evBudget, nil)
}

// Sleep moves the clock on by d.
func (n *Network) Sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	return n.advance(ctx, n.Now()+max(d, 0))
}

// After never fires while the plan waits on it: nothing moves the clock
// but the plan, so whatever the plan races it against (a background fit)
// always wins, as if computing took no time.
func (n *Network) After(time.Duration) <-chan time.Time { return nil }

// Stopwatch reads no time: computing costs none here.
func (n *Network) Stopwatch() func() time.Duration { return func() time.Duration { return 0 } }

// Do sends s now and runs the clock until its answer.
func (n *Network) Do(ctx context.Context, s attack.Shot) (*results.Result, bool) {
	if !n.mayTake(ctx) {
		return nil, false
	}
	f := n.client.send(s, n.Now(), false)
	for !f.done && n.step(-1) {
	}
	return f.r, true
}

// Schedule sends each shot at its At (or now, if that has passed).
func (n *Network) Schedule(ctx context.Context, count int, plan func(i int) attack.Shot) {
	for i := range count {
		s := plan(i)
		if !n.advance(ctx, max(s.At, n.Now())) {
			return
		}
		if !n.mayTake(ctx) {
			return
		}
		n.client.send(s, n.Now(), false)
	}
}

// Burst releases shots at one instant, on connections armed before it.
func (n *Network) Burst(ctx context.Context, at time.Duration, shots []attack.Shot) {
	if !n.advance(ctx, max(at, n.Now())) {
		return
	}
	for _, s := range shots {
		if !n.mayTake(ctx) {
			return
		}
		s.At = at
		n.client.send(s, n.Now(), true)
	}
}

// Wait runs the clock until every request sent is answered.
func (n *Network) Wait() {
	for n.flights > 0 && n.step(-1) {
	}
}

// Sent counts the requests sent.
func (n *Network) Sent() int { return n.sent }

// Finish ends the run once every answer is in.
func (n *Network) Finish() {
	n.Wait()
	n.stopped = true
	if n.end != nil {
		n.end(context.Canceled)
	}
}

// Notes are what the network said (budgets reached).
func (n *Network) Notes() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.notes...)
}

func (n *Network) note(format string, a ...any) {
	n.mu.Lock()
	n.notes = append(n.notes, fmt.Sprintf(format, a...))
	n.mu.Unlock()
}

// mayTake takes one request of the budget, false when the run or ctx
// has ended or the budget is spent (which ends the run, as the engine's).
func (n *Network) mayTake(ctx context.Context) bool {
	if n.stopped || ctx.Err() != nil || (n.run != nil && n.run.Err() != nil) {
		return false
	}
	if n.sent >= n.opt.MaxRequests {
		n.note("request budget reached: stopped after %d request(s) (raise %s)", n.opt.MaxRequests, n.name("Options.MaxRequests"))
		n.stop(context.Canceled)
		return false
	}
	n.sent++
	return true
}

// name is how messages call an option (attack.Options.Names).
func (n *Network) name(field string) string {
	if n.opt.Names != nil {
		if s := n.opt.Names(field); s != "" {
			return s
		}
	}
	return field
}

// stop ends the run: nothing more is sent.
func (n *Network) stop(cause error) {
	n.stopped = true
	if n.end != nil {
		n.end(cause)
	}
}

// advance runs every event due by t, then sets the clock to t; false, with
// the clock where it stopped, when ctx ended first (at the time budget, an
// interruption, a dead target's watch): a live sleep returns then too.
func (n *Network) advance(ctx context.Context, t time.Duration) bool {
	for ctx.Err() == nil && n.step(t) {
	}
	if ctx.Err() != nil {
		return false
	}
	n.setNow(t)
	return true
}

// step runs the next event due by t (any, when t < 0); false when there
// is none.
func (n *Network) step(t time.Duration) bool {
	if n.events.Len() == 0 || (t >= 0 && n.events.items[0].at > t) {
		return false
	}
	ev := heap.Pop(&n.events).(*event)
	n.setNow(ev.at)
	switch ev.kind {
	case evArrive:
		if !n.held(ev, &n.server.stallUntil, true) {
			n.server.arrive(ev.f)
		}
	case evWritten:
		n.server.written(ev.f)
	case evDeliver:
		if ev.f.done {
			break // the timeout of an answered request: nothing reaches the reader, no stall starts
		}
		if !n.held(ev, &n.client.stallUntil, false) {
			n.client.deliver(ev.f)
		}
	case evBudget:
		if ev.at < n.opt.MaxDuration {
			break // a budget Extend has moved on
		}
		if !n.stopped {
			n.note("time budget reached: stopped after %s (raise %s)", n.opt.MaxDuration, n.name("Options.MaxDuration"))
			n.stop(errTimeBudget)
			// As the engine's: an answer not in by the budget's end is
			// abandoned.
			n.client.abortAll(results.NoAnswerInBudget(n.req.URL.Host))
		}
	case evInterrupt:
		n.cfg.Interrupt.Cancel()
		n.stop(context.Canceled)
		n.client.abortAll("canceled")
	}
	return true
}

// push schedules an event.
func (n *Network) push(at time.Duration, kind eventKind, f *flight) {
	n.events.order++
	heap.Push(&n.events, &event{at: at, order: n.events.order, kind: kind, f: f})
}

// emit hands a finished result to the sinks.
func (n *Network) emit(r *results.Result) {
	for _, sink := range n.sinks {
		sink(r)
	}
}

// oneWay is a one-way trip: half the round trip plus the jitter's draw.
func (n *Network) oneWay() time.Duration {
	d := n.cfg.RTT / 2
	if n.cfg.Jitter > 0 {
		d += time.Duration(n.rng.ExpFloat64() * float64(n.cfg.Jitter))
	}
	return d
}

// stallShare is the share of events that start a stall.
func (n *Network) stallShare() float64 {
	if n.cfg.StallShare > 0 {
		return n.cfg.StallShare
	}
	return defaultStallShare
}

// held defers ev past a stall of the side whose stall ends at *until,
// perhaps starting one at ev: events that fall in a stall wait for its
// end and come out together — the reader's in their order, the server's
// (shuffled) in any: the handlers a stalled server wakes decide in the
// order its scheduler runs them, and a real one was seen deciding a
// trace's last requests newest first. It reports whether ev was deferred
// (and pushed again).
func (n *Network) held(ev *event, until *time.Duration, shuffled bool) bool {
	if n.cfg.Stall <= 0 || ev.drawn {
		return false
	}
	ev.drawn = true
	switch {
	case ev.at < *until:
	case n.rng.Float64() < n.stallShare():
		*until = ev.at + time.Duration(n.rng.Int64N(int64(n.cfg.Stall))+1)
	default:
		return false
	}
	ev.at = *until
	n.events.order++
	ev.order = n.events.order
	if shuffled {
		// After every event scheduled for that instant in the ordinary
		// way, among the held ones at random.
		ev.order = wokenOrder + n.wake.IntN(wokenOrder)
	}
	heap.Push(&n.events, ev)
	return true
}

// wokenOrder is far above any count of events a run schedules: a held
// arrival's order is drawn from [wokenOrder, 2·wokenOrder).
const wokenOrder = 1 << 40

// failing reports whether the fault is on at t.
func (n *Network) failing(kind string, t time.Duration) bool {
	return n.cfg.Fail == kind && t >= n.cfg.FailAt
}
