package attack

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// connPool keeps idle keep-alive connections and hands them out.
//
// A request that finds none idle waits for whichever comes first: a
// connection another request returns, or a new one. Opening a connection
// can cost far more than a request on one — a TLS handshake is a
// millisecond or more of CPU, a loopback request tens of microseconds — so
// a waiting request asks for a dial only when it expects a returned
// connection to take longer than a dial (from the recent request and dial
// times and how many are in use and waiting), or when its expected wait is
// over; and dials in flight are capped, the cap growing with the
// connections in use (a slow server that needs many gets them in a few
// rounds). Dialling for every request that found none idle, as net/http
// does, snowballed here at 5,000/s over https: one stall, a few handshakes,
// whose CPU makes more requests wait, which dial — 2,000 handshakes and a
// run up to a second behind.
type connPool struct {
	newConn  func() *h1conn
	mu       sync.Mutex
	idle     []*h1conn
	waiters  []*waiter     // oldest first
	inUse    int           // connections carrying a request
	dialing  int           // dials in flight
	useTime  time.Duration // moving average: a request's time on its connection
	dialTime time.Duration // moving average: dial (and handshake)
	// closed: the run is over (closeIdle). A dial still in flight then —
	// started for a request a freed connection served first — closes its
	// connection rather than leave it idle and open for good.
	closed bool
}

// waiter is a request waiting for a connection.
type waiter struct {
	ch      chan *h1conn // buffered for one hand-off
	fail    chan string  // buffered: a dial's error, when the pool gives it this waiter
	overdue bool         // waited twice as long as expected: wants a dial of its own
}

// minDialCap is the least number of dials in flight allowed: enough to
// open connections in parallel on every CPU, few enough that handshakes
// cannot starve the requests of CPU.
var minDialCap = max(4, 2*runtime.GOMAXPROCS(0))

// ewma folds sample into avg (weight 1/8); the first sample is taken as is.
func ewma(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return avg + (sample-avg)/8
}

// get returns an idle connection or a new, undialled one: for a burst,
// whose requests each need a connection of their own, dialled in advance.
func (p *connPool) get() *h1conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse++
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	return p.newConn()
}

// tryIdle returns an idle connection, or nil when there is none.
func (p *connPool) tryIdle() *h1conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	c := p.idle[n-1]
	p.idle = p.idle[:n-1]
	p.inUse++
	return c
}

// waiting reports whether a request waits for a connection.
func (p *connPool) waiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters) > 0
}

// noteUse records how long a request kept its connection.
func (p *connPool) noteUse(d time.Duration) {
	p.mu.Lock()
	p.useTime = ewma(p.useTime, max(d, time.Microsecond))
	p.mu.Unlock()
}

// acquire returns a connection ready for a request (see connPool), or why
// none could be opened.
func (p *connPool) acquire(ctx context.Context) (c *h1conn, failure string) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.inUse++
		p.mu.Unlock()
		return c, ""
	}
	w := &waiter{ch: make(chan *h1conn, 1), fail: make(chan string, 1)}
	var overdue <-chan time.Time
	if p.inUse > 0 && p.useTime > 0 {
		// Ask for a dial regardless if nothing came back in twice the
		// expected wait (a stalled server, slow answers).
		wait := p.useTime * time.Duration(len(p.waiters)+1) / time.Duration(p.inUse)
		t := time.NewTimer(2*wait + 100*time.Microsecond)
		defer t.Stop()
		overdue = t.C
	}
	p.waiters = append(p.waiters, w)
	p.dialMore(ctx)
	p.mu.Unlock()
	for {
		select {
		case c := <-w.ch:
			return c, ""
		case msg := <-w.fail:
			return nil, msg
		case <-overdue:
			overdue = nil
			p.mu.Lock()
			if slices.Contains(p.waiters, w) {
				w.overdue = true
				p.dialMore(ctx)
			}
			p.mu.Unlock()
		}
	}
}

// dialMore starts dials while the waiting requests want more than are in
// flight, up to the cap: the waiters that the connections in use will not
// serve within a dial's time (all of them while there is no estimate yet),
// and any overdue one. Called with mu held.
func (p *connPool) dialMore(ctx context.Context) {
	served := 0
	if p.useTime > 0 && p.dialTime > 0 {
		served = int(int64(p.inUse) * int64(p.dialTime) / int64(p.useTime))
	}
	wanted := max(0, len(p.waiters)-served)
	for _, w := range p.waiters[:len(p.waiters)-wanted] {
		if w.overdue {
			wanted++
		}
	}
	limit := max(minDialCap, p.inUse/2)
	for p.dialing < min(wanted, limit) {
		p.dialing++
		go p.dial(ctx)
	}
}

// dial opens one connection and gives it to the oldest waiting request (or
// the idle list); a failure goes to the oldest request that wanted a dial.
func (p *connPool) dial(ctx context.Context) {
	began := time.Now()
	c := p.newConn()
	err := c.dial(ctx)
	p.mu.Lock()
	p.dialing--
	if err != nil {
		msg := describeNetErr(c.addr, c.explain(err))
		if len(p.waiters) > 0 { // the oldest waiter fails with it, as net/http's would
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.fail <- msg
		}
		p.dialMore(ctx)
		p.mu.Unlock()
		return
	}
	p.dialTime = ewma(p.dialTime, time.Since(began))
	p.giveLocked(c)
	p.dialMore(ctx)
	p.mu.Unlock()
}

// giveLocked passes an open connection to the oldest waiting request, or
// to the idle list. Called with mu held.
func (p *connPool) giveLocked(c *h1conn) {
	if len(p.waiters) == 0 {
		if p.closed {
			c.close()
			return
		}
		p.idle = append(p.idle, c)
		return
	}
	w := p.waiters[0]
	p.waiters = p.waiters[1:]
	p.inUse++
	w.ch <- c
}

// put returns a connection after a request; a closed one is dropped.
func (p *connPool) put(c *h1conn) {
	p.mu.Lock()
	p.inUse--
	if c.c != nil {
		p.giveLocked(c)
	}
	p.mu.Unlock()
}

// roundTrip sends one request on a pooled connection and returns it.
func (p *connPool) roundTrip(ctx context.Context, wire []byte, start time.Time, r *results.Result) {
	c, failure := p.acquire(ctx)
	if c == nil {
		r.Sent = time.Since(start)
		r.Done = r.Sent
		r.Error = failure
		return
	}
	c.roundTrip(ctx, wire, start, r)
	p.putUsed(c, r.Done-r.Sent)
}

// putUsed is noteUse and put under one lock: what a request does with its
// connection when its response is in.
func (p *connPool) putUsed(c *h1conn, d time.Duration) {
	p.mu.Lock()
	p.useTime = ewma(p.useTime, max(d, time.Microsecond))
	p.inUse--
	if c.c != nil {
		p.giveLocked(c)
	}
	p.mu.Unlock()
}

func (p *connPool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.close()
	}
	p.idle, p.closed = nil, true
}

// abort closes idle connections; busy ones end by their deadline or the
// context check in their owner.
func (p *connPool) abort() { p.closeIdle() }

// prewarm opens connections in parallel until n are idle, and waits for
// them: a paced run's first shots must not each wait for a dial (over https
// a handshake of a millisecond or more of CPU, 5 of them at 5,000/s, and
// the requests queued behind it make more dials). A dial that fails is
// dropped: the first request that needs it fails with the reason.
func (p *connPool) prewarm(ctx context.Context, n int) {
	p.mu.Lock()
	want := n - len(p.idle)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for range max(want, 0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			c := p.newConn()
			if c.dial(ctx) != nil {
				return
			}
			p.mu.Lock()
			p.dialTime = ewma(p.dialTime, time.Since(began))
			p.idle = append(p.idle, c)
			p.mu.Unlock()
		}()
	}
	wg.Wait()
}
