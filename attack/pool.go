package attack

import (
	"context"
	"slices"
	"sync"
	"time"
)

// connPool keeps idle keep-alive connections and hands them out.
//
// A request that finds none idle starts a dial of its own and takes
// whichever comes first: that dial, or a connection another request returns
// (net/http does the same). Opening a connection can cost far more than a
// request on one — a TLS handshake is a millisecond or more of CPU, a
// loopback request tens of microseconds — and a paced run that dialled one
// connection per request waiting for one would, at thousands per second,
// snowball into hundreds of handshakes at once and fall a second behind
// (measured here at 5,000/s over https before this).
type connPool struct {
	newConn func() *h1conn
	mu      sync.Mutex
	idle    []*h1conn
	waiters []chan *h1conn // oldest first; each buffered for one hand-off
}

// get returns an idle connection or a new, undialled one: for a burst,
// whose requests each need a connection of their own, dialled in advance.
func (p *connPool) get() *h1conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	return p.newConn()
}

// acquire returns a connection ready for a request: an idle one, else the
// first of its own dial and one another request returns. failure describes
// its own dial's error, when that failed before any connection came.
func (p *connPool) acquire(ctx context.Context) (c *h1conn, failure string) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, ""
	}
	w := make(chan *h1conn, 1)
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()

	failed := make(chan string, 1)
	go func() {
		c := p.newConn()
		if err := c.dial(ctx); err != nil {
			failed <- describeNetErr(c.addr, c.explain(err))
			return
		}
		p.handOff(c, w)
	}()
	select {
	case c := <-w:
		return c, ""
	case msg := <-failed:
		if p.leave(w) {
			return nil, msg
		}
		return <-w, "" // a connection was handed over meanwhile
	}
}

// handOff gives a freshly dialled connection to the request that dialled it
// if that one still waits, else to the oldest waiting request, else to the
// idle list.
func (p *connPool) handOff(c *h1conn, w chan *h1conn) {
	p.mu.Lock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
		p.mu.Unlock()
		w <- c
		return
	}
	p.mu.Unlock()
	p.put(c)
}

// leave takes w off the waiting list; false if a connection was already
// handed to it.
func (p *connPool) leave(w chan *h1conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
		return true
	}
	return false
}

// put returns a connection after use: to the oldest waiting request, or
// to the idle list. A closed one is dropped.
func (p *connPool) put(c *h1conn) {
	if c.c == nil {
		return
	}
	p.mu.Lock()
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		w <- c
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// roundTrip sends one request on a pooled connection and returns it.
func (p *connPool) roundTrip(ctx context.Context, wire []byte, start time.Time, r *Result) {
	c, failure := p.acquire(ctx)
	if c == nil {
		r.Sent = time.Since(start)
		r.Done = r.Sent
		r.Error = failure
		return
	}
	c.roundTrip(ctx, wire, start, r)
	p.put(c)
}

func (p *connPool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.close()
	}
	p.idle = nil
}

// abort closes idle connections; busy ones end by their deadline or the
// context check in their owner.
func (p *connPool) abort() { p.closeIdle() }
