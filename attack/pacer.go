package attack

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Pacing: sending shots at their planned instants.
//
// The dispatcher runs on a pacing thread of its own (onPacingThread) and
// writes each request itself, the moment it is due, on a lane: a keep-alive
// connection whose goroutine is already parked in the read that will take
// the response. So between the wake-up and the write there is no scheduler
// hand-off (the write leaves when the dispatcher wakes, not when some other
// thread gets round to a goroutine), and a request costs one goroutine
// wake-up (the response's), not a goroutine started per request, a thread
// woken to run it and its stack grown. A shot that finds no lane free (the
// first ones, or more in flight than lanes) goes the ordinary way: a
// goroutine of its own that takes a connection from the pool; the
// connection becomes a lane once it is free.

// Lane states. The dispatcher claims an idle lane by moving it to busy;
// the lane's goroutine, woken with no request assigned (the server closed
// the idle connection, or the run is over), retires it.
const (
	laneIdle int32 = iota
	laneBusy
	laneDead
)

type lane struct {
	c     *h1conn
	conn  net.Conn // c's connection when the lane was made; a lane never changes it
	state atomic.Int32
	r     *results.Result // the request in flight, set before the write
	wire  []byte          // its bytes, for a retry on a fresh connection
	wrote chan error      // the dispatcher's write result, one per request
}

// pacer is one Schedule's set of lanes.
type pacer struct {
	e   *Engine
	ctx context.Context

	mu    sync.Mutex
	free  []*lane // idle lanes, most recently used last
	all   map[*lane]struct{}
	ended bool   // Schedule returned: lanes go back to the pool when free
	stop  func() // unregisters the Ctrl-C hook once no lane is left
}

// dispatch is Schedule's loop, on a pacing thread.
func (e *Engine) dispatch(ctx context.Context, n int, plan func(i int) Shot) {
	if e.h2 != nil {
		e.dispatchH2(ctx, n, plan)
		return
	}
	p := &pacer{e: e, ctx: ctx, all: map[*lane]struct{}{}}
	stop := context.AfterFunc(ctx, p.expireAll) // Ctrl-C must not wait out a slow server
	p.stop = func() { stop() }
	defer p.end()
	prio := newPacingPriority() // pacingpriority.go
	defer prio.end()
	for i := 0; i < n; i++ {
		s := plan(i)
		at := e.start.Add(s.At)
		prio.before(time.Until(at))
		if !waitUntilWith(ctx, at, prio.sleep) || !e.take() {
			return
		}
		select {
		case e.inflight <- struct{}{}:
		case <-ctx.Done():
			return
		}
		r, _ := e.newResult(s) // a paced HTTP/1.1 shot sends the run's own request
		e.wg.Add(1)
		if l := p.claim(); l != nil {
			p.send(l, r)
			continue
		}
		go func() {
			defer e.wg.Done()
			c, failure := e.pool.acquire(ctx)
			if c == nil {
				r.Sent, r.Error = e.Now(), failure
				r.Done = r.Sent
			} else {
				c.roundTrip(ctx, e.wire(r.Key), e.start, r)
				e.pool.noteUse(r.Done - r.Sent)
			}
			<-e.inflight
			e.emit(r)
			if c != nil && !p.adopt(c) {
				e.pool.put(c)
			}
		}()
	}
}

// claim returns an idle lane, or makes one of an idle pooled connection;
// nil when there is neither.
func (p *pacer) claim() *lane {
	p.mu.Lock()
	for len(p.free) > 0 {
		l := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		if l.state.CompareAndSwap(laneIdle, laneBusy) {
			p.mu.Unlock()
			return l
		}
	}
	p.mu.Unlock()
	c := p.e.pool.tryIdle()
	if c == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.newLaneLocked(c, laneBusy)
}

// adopt makes a connection that has just served a request a lane, unless
// Schedule has ended.
func (p *pacer) adopt(c *h1conn) bool {
	if c.c == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return false
	}
	p.free = append(p.free, p.newLaneLocked(c, laneIdle))
	return true
}

// newLaneLocked registers a lane for c in state and starts its goroutine,
// which the engine waits for like a request (Wait, Finish), so no
// connection is left behind when a run ends. A lane is offered (in free)
// before its goroutine can retire it. Called with mu held.
func (p *pacer) newLaneLocked(c *h1conn, state int32) *lane {
	l := &lane{c: c, conn: c.c, wrote: make(chan error, 1)}
	l.state.Store(state)
	p.all[l] = struct{}{}
	p.e.wg.Add(1)
	go p.run(l)
	return l
}

// send writes r's request on l, now.
func (p *pacer) send(l *lane, r *results.Result) {
	l.r, l.wire = r, p.e.wire(r.Key)
	stamp(r, l.c.local, l.c.serial)
	_ = l.conn.SetDeadline(time.Now().Add(l.c.timeout))
	l.c.dl = time.Time{} // not arm's
	r.Sent = p.e.Now()
	_, err := l.conn.Write(l.wire)
	l.wrote <- err
}

// run is l's goroutine: it waits in the read for each response, records
// it, and offers the lane again.
func (p *pacer) run(l *lane) {
	e := p.e
	defer e.wg.Done()
	for {
		h := l.c
		_, perr := h.br.Peek(1)
		if l.state.CompareAndSwap(laneIdle, laneDead) {
			// No request in flight: the server closed the idle
			// connection, or the run is over (see end).
			p.retire(l, perr)
			return
		}
		werr := <-l.wrote
		r := l.r
		reused := h.used
		switch {
		case werr == nil && perr == nil:
			if err := h.readAfterFirstByte(e.start, r); err != nil {
				h.close()
				r.Done, r.Error = max(e.Now(), r.Sent), describeNetErr(h.addr, h.explain(err))
			}
		default:
			h.close()
			// A reused connection the server had already closed fails
			// before any byte: retry once on a fresh one, as roundTrip does.
			if reused && p.ctx.Err() == nil {
				h.roundTrip(p.ctx, l.wire, e.start, r)
			} else {
				err := werr
				if err == nil {
					err = perr
				}
				r.Done, r.Error = max(e.Now(), r.Sent), p.describe(h, err)
			}
		}
		e.pool.noteUse(r.Done - r.Sent)
		<-e.inflight
		e.emit(r)
		e.wg.Done()
		if h.c != l.conn { // closed, or replaced by the retry's connection
			p.retire(l, nil)
			return
		}
		_ = l.conn.SetDeadline(time.Time{}) // idle lanes wait without a deadline
		h.dl = time.Time{}
		if !p.release(l) {
			return
		}
	}
}

func (p *pacer) describe(h *h1conn, err error) string {
	if p.ctx.Err() != nil {
		return "canceled"
	}
	return describeNetErr(h.addr, h.explain(err))
}

// release offers l, whose request is done, to the dispatcher again (only
// its own goroutine calls it); after Schedule has ended it hands its
// connection back to the pool instead and reports false.
func (p *pacer) release(l *lane) bool {
	p.mu.Lock()
	// A shot that found no lane free waits in the pool: serve it first
	// (it becomes a lane again once done), rather than let it dial.
	if p.ended || p.e.pool.waiting() {
		p.forgetLocked(l)
		p.mu.Unlock()
		p.e.pool.put(l.c)
		return false
	}
	l.state.Store(laneIdle)
	p.free = append(p.free, l)
	p.mu.Unlock()
	return true
}

// retire forgets a lane whose goroutine ends. Its connection goes back to
// the pool when it is sound — the run's end woke the lane, or a retry left
// a fresh one — and is closed otherwise (its server closed it).
func (p *pacer) retire(l *lane, readErr error) {
	p.mu.Lock()
	p.forgetLocked(l)
	ended := p.ended
	p.mu.Unlock()
	h := l.c
	woken := ended && readErr != nil && isTimeout(readErr) && p.ctx.Err() == nil
	switch {
	case h.c == l.conn && woken:
		_ = l.conn.SetDeadline(time.Time{})
		h.dl = time.Time{}
	case h.c == l.conn || readErr != nil:
		h.close()
	}
	p.e.pool.put(h) // counts it out of use; a closed one is dropped
}

// forgetLocked removes l; the Ctrl-C hook goes with the last lane of an
// ended Schedule. Called with mu held.
func (p *pacer) forgetLocked(l *lane) {
	delete(p.all, l)
	if p.ended && len(p.all) == 0 && p.stop != nil {
		p.stop()
		p.stop = nil
	}
}

// end is Schedule's return: busy lanes hand their connections back to the
// pool when their response is in, idle ones now (woken out of their read).
func (p *pacer) end() {
	p.mu.Lock()
	p.ended = true
	free := p.free
	p.free = nil
	if len(p.all) == 0 && p.stop != nil {
		p.stop()
		p.stop = nil
	}
	p.mu.Unlock()
	for _, l := range free {
		expire(l.conn) // its goroutine wakes with no request and retires it
	}
}

// expireAll makes every lane's read fail now (Ctrl-C).
func (p *pacer) expireAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.all {
		expire(l.conn)
	}
}

// dispatchH2 is dispatch for HTTP/2: the dispatcher writes each request's
// frames itself on a connection with a stream free; the connection's reader
// completes it.
func (e *Engine) dispatchH2(ctx context.Context, n int, plan func(i int) Shot) {
	e.h2.warm(ctx)
	prio := newPacingPriority()
	defer prio.end()
	for i := 0; i < n; i++ {
		s := plan(i)
		at := e.start.Add(s.At)
		prio.before(time.Until(at))
		if !waitUntilWith(ctx, at, prio.sleep) || !e.take() {
			return
		}
		select {
		case e.inflight <- struct{}{}:
		case <-ctx.Done():
			return
		}
		r, s := e.newResult(s)
		e.wg.Add(1)
		e.h2.send(ctx, e, r, s.Variation(), func() {
			<-e.inflight
			e.emit(r)
			e.wg.Done()
		})
	}
}
