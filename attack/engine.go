package attack

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Options bound and shape a run. Every run is bounded by default.
type Options struct {
	Timeout     time.Duration // per request (cut no earlier, and at most a thousandth later); default 10 s
	TLS         TLSOptions    // how https targets are verified (tls.go)
	HTTP2       bool          // speak HTTP/2 to an https target (h2.go)
	MaxRequests int           // request budget; default 20,000
	MaxDuration time.Duration // time budget; default 2 min
	MaxConns    int           // simultaneous connections (and requests in flight); default 1,000, at most ConnsCeiling
	Keys        int           // distinct key values to rotate through when a shot names none
	// Sources are the local addresses connections bind (source.go); none:
	// the kernel picks.
	Sources []netip.Addr
	// Names, when set, is how messages (errors, notes) name a field such
	// as "Options.MaxRequests" or "Burst.K": the command line passes its
	// flag names. Unset, messages use the Go names.
	Names func(field string) string
}

// Defaults for Options' zero fields.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxRequests = 20000
	DefaultMaxDuration = 2 * time.Minute
	DefaultMaxConns    = 1000
	// ConnsCeiling bounds MaxConns, and with it the largest burst: a burst
	// holds one connection per request open at once (two sockets each
	// against a builtin target, in this process), and far beyond 10,000
	// the run measures the machine's file-descriptor and memory limits
	// rather than the target.
	ConnsCeiling = 10000
)

// name is how messages call a field (see Options.Names).
func (o *Options) name(field string) string {
	if o.Names != nil {
		if n := o.Names(field); n != "" {
			return n
		}
	}
	return field
}

func (o *Options) fill() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
}

// Shot is one planned request.
type Shot struct {
	At     time.Duration // send instant, offset from the run's start
	Phase  string
	Client int
	Key    string
	// Source, when set, is the local address the request's connection
	// binds (source.go); a storm/backoff client's default is its own.
	Source netip.Addr
	// Extra are header lines ("Name: value") sent with this shot alone
	// (the probe's spoofed X-Forwarded-For), replacing the request's own
	// of the same name; Method, Target and Drop change its method, its
	// request-target and leave headers out (the probe's bypass trials).
	// Sent through Do only (see Variation).
	Extra  []string
	Method string
	Target string
	Drop   []string
	// Fresh sends the shot on a connection of its own, opened for it and
	// closed after (the probe's per-connection scope trial); Do only.
	Fresh bool
	// OtherProtocol sends the shot in the HTTP version the run does not
	// speak: HTTP/2 beside a run's HTTP/1.1 over TLS, HTTP/1.1 beside its
	// HTTP/2 (the probe's protocol bypass trial, otherproto.go); Do only.
	OtherProtocol bool
}

// Variation is how s's request differs from the run's own.
func (s Shot) Variation() Variation {
	return Variation{Method: s.Method, Target: s.Target, Extra: s.Extra, Drop: s.Drop}
}

// Engine sends shots and hands every result to its sinks.
type Engine struct {
	req   *Request
	opt   Options
	sinks []func(*results.Result)

	start  time.Time
	ctx    context.Context
	cancel context.CancelFunc
	// budgetTimer ends the run at the time budget (Extend moves it).
	budgetTimer *time.Timer

	addr     string // host:port the connections dial
	pool     connPool
	baseConn func() *h1conn // a new connection bound to no source
	srcPools sourcePools    // shots that name their source (source.go)
	h2       *h2client      // Options.HTTP2

	wiresMu sync.RWMutex
	wires   map[string][]byte
	wire0   atomic.Pointer[[]byte] // wires[""], read without the lock

	seq      atomic.Int64
	sent     atomic.Int64
	inflight chan struct{}
	wg       sync.WaitGroup

	realtimeRelease atomic.Bool  // the last burst's writes ran at real-time priority
	armedLate       atomic.Int64 // the last burst's connections were armed this long after its instant (ns)
	cpuAtBegin      CPUUsage     // the process's CPU use at Begin (cpu.go)

	warmed        time.Duration // spent in Warm before Begin: taken off the time budget
	budgetChecked chan struct{} // closed once the time-budget note is settled
	stopAfter     []func() bool // the AfterFuncs BeginAt registered, stopped by Finish

	// life guards cancel and stop, which Begin sets while budget checks
	// may already run (a Do before Begin).
	life sync.Mutex
	stop StopReason

	notesMu sync.Mutex
	notes   []string
}

// New prepares an engine. Sinks are called once per result, from many
// goroutines at once: each must be safe for concurrent use.
func New(req *Request, opt Options, sinks ...func(*results.Result)) *Engine {
	opt.fill()
	e := &Engine{req: req, opt: opt, sinks: sinks, wires: map[string][]byte{}, inflight: make(chan struct{}, opt.MaxConns)}
	e.addr, e.baseConn = leanClient(req.URL, opt)
	ring := &sourceRing{addrs: opt.Sources}
	e.pool.newConn = func() *h1conn {
		c := e.baseConn()
		c.local = ring.pick()
		return c
	}
	if opt.HTTP2 {
		e.h2 = newH2client(e.addr, req, opt)
		e.h2.local = ring.pick
	}
	return e
}

// StopReason says why a run ended before its plan did; "" when it did not.
type StopReason string

// The ways a run is cut short.
const (
	StopInterrupted   StopReason = results.Interrupted // the caller's context ended (Ctrl-C)
	StopTimeBudget    StopReason = "time budget"       // Options.MaxDuration
	StopRequestBudget StopReason = "request budget"    // Options.MaxRequests
)

// errTimeBudget is the run context's cause when MaxDuration ends it, so a
// deadline of the caller's own is not mistaken for the budget.
var errTimeBudget = errors.New("time budget reached")

// Begin fixes the run's zero instant and returns the run's context: it ends
// at the time budget, when the request budget is spent, or with parent.
// Cancelling parent (Ctrl-C) also aborts requests in flight.
func (e *Engine) Begin(parent context.Context) context.Context {
	return e.BeginAt(parent, time.Now())
}

// BeginAt is Begin with offset 0 at start (a time.Now reading taken just
// before, e.g. the one a results file's header records, so that the header's
// wall clock and the offsets agree exactly).
func (e *Engine) BeginAt(parent context.Context, start time.Time) context.Context {
	e.start = start
	e.markCPU()
	// The warm-up (Warm) ran before the clock started, but on the budget.
	ctx, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(context.Canceled) }
	// A timer, not a deadline: Extend moves it.
	e.budgetTimer = time.AfterFunc(max(e.opt.MaxDuration-e.warmed, 0), func() { cancelCause(errTimeBudget) })
	// The note is written on the AfterFunc's goroutine; Finish waits for it,
	// so a run the time budget ended always says so.
	e.budgetChecked = make(chan struct{})
	e.stopAfter = []func() bool{
		context.AfterFunc(parent, e.pool.abort),
		context.AfterFunc(parent, e.srcPools.abort),
		context.AfterFunc(ctx, func() {
			defer close(e.budgetChecked)
			switch {
			case context.Cause(ctx) == errTimeBudget:
				e.stopped(StopTimeBudget)
				e.note(fmt.Sprintf("time budget reached: stopped after %s (raise %s)", e.opt.MaxDuration, e.opt.name("Options.MaxDuration")))
			case parent.Err() != nil:
				e.stopped(StopInterrupted)
			}
		}),
	}
	e.life.Lock()
	e.ctx, e.cancel = ctx, cancel
	spent := e.stop == StopRequestBudget
	e.life.Unlock()
	if spent { // the budget ran out before Begin (Do without a run)
		cancel()
	}
	return ctx
}

// Extend raises the time budget to d from the start (Network.Extend).
func (e *Engine) Extend(d time.Duration) {
	e.life.Lock()
	defer e.life.Unlock()
	if d <= e.opt.MaxDuration || e.budgetTimer == nil || e.ctx.Err() != nil {
		return
	}
	e.opt.MaxDuration = d
	e.budgetTimer.Reset(max(d-e.warmed-time.Since(e.start), 0))
}

// stopped records the first reason the run was cut short.
func (e *Engine) stopped(why StopReason) {
	e.life.Lock()
	defer e.life.Unlock()
	if e.stop == "" {
		e.stop = why
	}
}

// Stopped says why the run ended before its plan (a budget, or the
// caller's context), or "" when nothing cut it short. Final after Finish.
func (e *Engine) Stopped() StopReason {
	e.life.Lock()
	defer e.life.Unlock()
	return e.stop
}

// Start is the wall-clock instant of offset 0.
func (e *Engine) Start() time.Time { return e.start }

// Now is the current offset from the run's start.
func (e *Engine) Now() time.Duration { return time.Since(e.start) }

// Notes are things the run wants its reader to know (budgets hit, ...).
func (e *Engine) Notes() []string {
	e.notesMu.Lock()
	defer e.notesMu.Unlock()
	return append([]string(nil), e.notes...)
}

func (e *Engine) note(s string) {
	e.notesMu.Lock()
	defer e.notesMu.Unlock()
	for _, n := range e.notes {
		if n == s {
			return
		}
	}
	e.notes = append(e.notes, s)
}

// Sent is how many requests have been sent (or started).
func (e *Engine) Sent() int { return int(e.sent.Load()) }

// take spends one request of the budget.
func (e *Engine) take() bool {
	if e.sent.Add(1) > int64(e.opt.MaxRequests) {
		e.sent.Add(-1)
		e.note(fmt.Sprintf("request budget reached: stopped after %d request(s) (raise %s)", e.opt.MaxRequests, e.opt.name("Options.MaxRequests")))
		e.stopped(StopRequestBudget)
		e.life.Lock()
		cancel := e.cancel // nil before Begin: BeginAt then ends the run at once
		e.life.Unlock()
		if cancel != nil {
			cancel()
		}
		return false
	}
	return true
}

// Finish waits for requests in flight and releases connections.
func (e *Engine) Finish() {
	e.wg.Wait()
	e.pool.closeIdle()
	e.srcPools.closeIdle()
	if e.h2 != nil {
		e.h2.close()
	}
	e.life.Lock()
	cancel := e.cancel
	if e.budgetTimer != nil {
		e.budgetTimer.Stop()
	}
	e.life.Unlock()
	if cancel != nil {
		cancel()
		<-e.budgetChecked
		// The parent may outlive the run by far (a library caller's
		// context): nothing of this engine stays registered with it.
		for _, stop := range e.stopAfter {
			stop()
		}
	}
}

// Wait blocks until every request sent so far has its result.
func (e *Engine) Wait() { e.wg.Wait() }

func (e *Engine) wire(key string) []byte {
	if key == "" { // a run without keys: every request, without the map's lock
		if w := e.wire0.Load(); w != nil {
			return *w
		}
		w := e.wireOf(key)
		e.wire0.Store(&w)
		return w
	}
	return e.wireOf(key)
}

func (e *Engine) wireOf(key string) []byte {
	e.wiresMu.RLock()
	w, ok := e.wires[key]
	e.wiresMu.RUnlock()
	if ok {
		return w
	}
	e.wiresMu.Lock()
	defer e.wiresMu.Unlock()
	if w, ok = e.wires[key]; !ok {
		w = e.req.wire(key, Variation{})
		e.wires[key] = w
	}
	return w
}

// newResult makes the result of shot s, and returns s as it is sent: with
// the key and the source the run gives a shot that names none.
func (e *Engine) newResult(s Shot) (*results.Result, Shot) {
	seq := int(e.seq.Add(1))
	if s.Key == "" && e.opt.Keys > 0 && e.req.KeyHeader != "" {
		s.Key = "key-" + strconv.Itoa(seq%e.opt.Keys)
	}
	if !s.Source.IsValid() {
		s.Source = e.opt.clientSource(s.Client)
	}
	return &results.Result{Seq: seq, Phase: s.Phase, Client: s.Client, Key: s.Key, Scheduled: s.At}, s
}

func (e *Engine) emit(r *results.Result) {
	for _, sink := range e.sinks {
		sink(r)
	}
}

// send performs shot s's request synchronously, recording it in r.
func (e *Engine) send(ctx context.Context, r *results.Result, s Shot) {
	if s.OtherProtocol {
		e.sendOtherProtocol(ctx, r, s)
		return
	}
	if e.h2 != nil && s.Fresh {
		e.freshH2RoundTrip(ctx, r, s) // source.go
		return
	}
	if e.h2 != nil {
		e.h2For(s.Source).roundTrip(ctx, e, r, s.Variation()) // h2.go
		return
	}
	wire := e.wire(r.Key)
	if v := s.Variation(); v.varies() {
		wire = e.req.wire(r.Key, v)
	}
	if s.Fresh {
		e.freshRoundTrip(ctx, wire, r, s.Source) // source.go
		return
	}
	e.poolFor(s.Source).roundTrip(ctx, wire, e.start, r) // pool.go
}

// Do sends one shot now and waits for its result: for closed-loop clients
// (storm, backoff) and calibration. ok is false when a budget ended the run.
func (e *Engine) Do(ctx context.Context, s Shot) (r *results.Result, ok bool) {
	if ctx.Err() != nil || !e.take() {
		return nil, false
	}
	s.At = e.Now()
	r, s = e.newResult(s)
	e.wg.Add(1)
	defer e.wg.Done()
	e.send(ctx, r, s)
	e.emit(r)
	return r, true
}

// loop is a closed-loop client: it sends shot s again and again, each as
// soon as the previous one's result is emitted, until more (which sees
// every result) says to stop or the run ends. It is Do in a loop, but on a
// connection of its own for its whole life: per request, Do takes a
// connection from the pool and gives it back (the pool's lock, twice) and
// counts itself in the engine's wait group (twice), shared state that the
// CPUs pass between them; at --rate max that was ~6 % of the process's CPU
// outside the system calls. The loop counts itself once, and its
// connection is the pool's again when it ends. HTTP/2 runs, and shots
// that take another way (a source of their own, a variation, a fresh
// connection, the other protocol), go through Do.
func (e *Engine) loop(ctx context.Context, s Shot, more func(*results.Result) bool) {
	if e.h2 != nil || s.Fresh || s.OtherProtocol || s.Source.IsValid() || e.opt.clientSource(s.Client).IsValid() || s.Variation().varies() {
		for {
			r, ok := e.Do(ctx, s)
			if !ok || !more(r) {
				return
			}
		}
	}
	e.wg.Add(1)
	defer e.wg.Done()
	c := e.pool.get()
	defer func() { e.pool.put(c) }() // a connection closed meanwhile is dropped
	for {
		if ctx.Err() != nil || !e.take() {
			return
		}
		shot := s
		shot.At = e.Now()
		r, _ := e.newResult(shot)
		c.roundTrip(ctx, e.wire(r.Key), e.start, r)
		e.emit(r)
		if !more(r) {
			return
		}
	}
}

// Warm opens n connections before the run begins (HTTP/2: one), so its
// first shots are not late by a handshake. It sends no request, so a limiter
// sees nothing. It takes at most a tenth of the time budget (and a second),
// after which the rest are opened on demand as without it; the time it took
// comes off the budget.
func (e *Engine) Warm(ctx context.Context, n int) {
	if n <= 0 {
		return
	}
	began := time.Now()
	defer func() { e.warmed += time.Since(began) }()
	ctx, cancel := context.WithTimeout(ctx, min(e.opt.Timeout, e.opt.MaxDuration/10, maxWarmTime))
	defer cancel()
	if e.h2 != nil {
		e.h2.warm(ctx)
		return
	}
	e.pool.prewarm(ctx, min(n, e.opt.MaxConns))
}

// maxWarmTime bounds the warm-up: a loopback or LAN handshake takes
// milliseconds; a server slower than this gets its connections on demand.
const maxWarmTime = time.Second

// WarmFor warms the connections p wants open before its first instant
// (a Warmer); call it before Begin.
func (e *Engine) WarmFor(ctx context.Context, p Profile) {
	if w, ok := p.(Warmer); ok {
		e.Warm(ctx, w.WarmConns(e.opt))
	}
}

// Schedule sends n shots, each at its planned instant, without waiting for
// any response (open model). plan must give non-decreasing instants. It
// returns once the last shot is sent or the run ends; use Wait for the
// results.
func (e *Engine) Schedule(ctx context.Context, n int, plan func(i int) Shot) {
	onPacingThread(func() { e.dispatch(ctx, n, plan) }) // pacer.go
}
