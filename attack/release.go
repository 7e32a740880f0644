package attack

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Releasing a burst at one instant.
//
// Every request of a burst is written in advance except its final byte, so
// at the instant only K one-byte writes remain. Who does those writes
// decides the spread. Waking K goroutines to write their own byte costs a
// scheduler hand-off each and lets the first responses' readers compete with
// the writers (measured here: ~1.7 ms for 100). Instead the owning goroutines
// are already parked in their reads, waiting for the responses, and a few
// locked OS threads — one per CPU the runtime may use — write the tails back
// to back, taking them from a shared list. What is left is the kernel's own
// cost per loopback write (~5–10 µs here), divided across the CPUs.
//
// On a shared machine the target wakes at the first write and the OS gives
// it a CPU by preempting a writer, which doubles the spread (measured here:
// 0.5–0.7 ms undisturbed, 1.1–1.7 ms preempted). So where permitted (root or
// CAP_SYS_NICE) the writers hold real-time priority for the writes alone —
// at most K one-byte writes, well under a millisecond for K=100.

// armed is one burst request waiting for the instant: its connection has all
// of the request but tail on the wire.
type armed struct {
	conn net.Conn // the TCP socket, as its owner had it when armed (below TLS for https)
	tail []byte   // the final byte, or under TLS the record that carries it
	r    *results.Result
	rs   []*results.Result // HTTP/2: the streams whose frames tail carries (r is nil)
	err  error             // why the tail was not written (set by the releasing thread)
}

// Burst releases shots together at instant at (an offset from the run's
// start; an instant already past means as soon as every connection is
// ready). It returns once every request is sent; use Wait for the results.
func (e *Engine) Burst(ctx context.Context, at time.Duration, shots []Shot) {
	k := 0
	for range shots {
		if !e.take() {
			break
		}
		k++
	}
	shots = shots[:k]
	if e.h2 != nil {
		e.burstH2(ctx, at, shots)
		return
	}
	slots := make([]*armed, len(shots))
	released := make(chan struct{})
	var prepared sync.WaitGroup
	prepared.Add(len(shots))
	for i, s := range shots {
		s.At = at
		r, _ := e.newResult(s) // a burst sends the run's own request
		a := &armed{r: r}
		slots[i] = a
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			c := e.pool.get()
			stamp(a.r, c.local, 0)
			sock, tail, err := c.prewrite(ctx, e.wire(a.r.Key))
			if err == nil {
				a.r.Conn = c.serial
				a.conn, a.tail = sock, tail
				// The answer is due Timeout after the release, however
				// long the idle before it.
				due := e.start.Add(at)
				if now := time.Now(); now.After(due) {
					due = now
				}
				_ = c.c.SetDeadline(due.Add(e.opt.Timeout))
				c.dl = time.Time{} // not arm's
			}
			prepared.Done()
			if err != nil {
				err = c.explain(err)
				c.close()
				e.pool.put(c) // counts it out of use
				<-released
				a.r.Sent = e.Now()
				a.r.Done, a.r.Error = a.r.Sent, describeNetErr(e.addr, err)
				e.emit(a.r)
				return
			}
			// Park in the read now, so the releasing threads have the CPUs
			// to themselves at the instant.
			stop := context.AfterFunc(ctx, func() { expire(a.conn) })
			rerr := c.await(e.start, a.r)
			stop()
			<-released // a.r.Sent and a.err are final
			if err := c.explain(releaseErr(a.err, rerr)); err != nil {
				c.close()
				a.r.Done = max(e.Now(), a.r.Sent)
				a.r.Error = describeNetErr(e.addr, err)
			}
			e.pool.put(c)
			e.emit(a.r)
		}()
	}
	prepared.Wait()
	e.noteArmed(at)
	rt := release(ctx, e.start, e.start.Add(at), slots)
	e.realtimeRelease.Store(rt)
	close(released)
}

// noteArmed records how long after the instant at the last burst's
// connections were armed (0 when they were ready before it).
func (e *Engine) noteArmed(at time.Duration) {
	e.armedLate.Store(int64(max(0, e.Now()-at)))
}

// ArmedLate is how long after its instant the last burst's connections
// were ready to release: 0 when they were ready in time. Unlike the first
// send's lateness it does not include the timer's wake-up, so it tells a
// burst that could not be ready from one the scheduler woke late.
func (e *Engine) ArmedLate() time.Duration { return time.Duration(e.armedLate.Load()) }

// RealtimeRelease reports whether the last burst's writes ran at real-time
// priority (see release.go).
func (e *Engine) RealtimeRelease() bool { return e.realtimeRelease.Load() }

// releaseErr is why a burst request failed: the tail's write error, unless
// the server explained itself in TLS terms (its alert then arrives on the
// read while the write only sees the closed connection).
func releaseErr(writeErr, readErr error) error {
	if _, isTLS := describeTLSErr("", readErr); isTLS && readErr != nil {
		return readErr
	}
	if writeErr != nil {
		return writeErr
	}
	return readErr
}

// releasers is how many OS threads share a burst's writes: one per CPU the
// runtime runs on, but no more than one per 8 requests (a thread's start-up
// costs more than a few writes).
func releasers(k int) int {
	return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU(), (k+7)/8))
}

// release writes every armed request's tail at instant t, shared among
// releasers(len(slots)) locked threads that take the next unwritten request
// from a common counter: a thread that starts late or is preempted holds up
// nothing but the one write it is in. It returns when all writes are done
// (or abandoned because ctx ended), and whether every thread wrote at
// real-time priority.
func release(ctx context.Context, start, t time.Time, slots []*armed) (realtime bool) {
	n := releasers(len(slots))
	var next atomic.Int64
	rt := make([]bool, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() { // exits locked: see lockPacingThread
			defer wg.Done()
			lockPacingThread()
			rt[w] = releaseShare(ctx, start, t, slots, &next, w)
		}()
	}
	wg.Wait()
	for _, ok := range rt {
		if !ok {
			return false
		}
	}
	return true
}

// releaseShare is releasing thread number w, on a locked pacing thread: it
// waits for t, then writes tails until none is left.
func releaseShare(ctx context.Context, start, t time.Time, slots []*armed, next *atomic.Int64, w int) (realtime bool) {
	// Real-time priority from the last few milliseconds on, so the final
	// high-resolution sleep also wakes on time: a real-time thread wakes
	// ahead of anything else on its CPU. Never earlier — it may then only
	// sleep, spin for microseconds, and write. Only a real-time thread is
	// pinned to a CPU of its own: it cannot be preempted there, while a
	// normal one must stay free to move when the target takes its CPU.
	reached := waitUntil(ctx, t.Add(-coarseMargin))
	leave, realtime := enterRealtime()
	defer leave()
	if realtime {
		defer pinToCPU(w)()
	}
	reached = reached && waitUntil(ctx, t)
	for {
		i := int(next.Add(1)) - 1
		if i >= len(slots) {
			return realtime
		}
		a := slots[i]
		if a.conn == nil {
			continue // preparing failed; its goroutine reports why
		}
		if !reached {
			a.stamp(time.Since(start))
			a.err = context.Canceled
			expire(a.conn)
			continue
		}
		a.stamp(time.Since(start))
		if _, err := a.conn.Write(a.tail); err != nil {
			a.err = err
			expire(a.conn)
		}
	}
}

// stamp records the send instant of a's request(s).
func (a *armed) stamp(t time.Duration) {
	if a.r != nil {
		a.r.Sent = t
	}
	for _, r := range a.rs {
		r.Sent = t
	}
}

// burstH2 is Burst for HTTP/2: a stream is reserved for every shot (more
// connections opened as SETTINGS_MAX_CONCURRENT_STREAMS requires), each
// connection's HEADERS frames are built in advance, and at the instant the
// release threads write each connection's frames in one write.
func (e *Engine) burstH2(ctx context.Context, at time.Duration, shots []Shot) {
	type group struct {
		h      *h2conn
		frames []byte
		rs     []*results.Result
	}
	var groups []*group
	byConn := map[*h2conn]*group{}
	var failed []*results.Result
	released := make(chan struct{})
	e.h2.watchRun(ctx)
	for _, s := range shots {
		s.At = at
		r, _ := e.newResult(s)
		e.wg.Add(1)
		h, err := e.h2.conn(ctx)
		if err != nil {
			r.Error = describeNetErr(e.addr, err)
			failed = append(failed, r)
			continue
		}
		g := byConn[h]
		if g == nil {
			g = &group{h: h}
			byConn[h] = g
			groups = append(groups, g)
		}
		stamp(r, h.local, h.serial)
		id := h.open(r, e.start, func() {
			go func() { // not on the connection's reader, which must go on reading
				<-released // Sent is final
				e.emit(r)
				e.wg.Done()
			}()
		})
		g.frames = append(g.frames, e.h2.frames(id, r.Key, Variation{})...)
		g.rs = append(g.rs, r)
	}
	slots := make([]*armed, len(groups))
	for i, g := range groups {
		slots[i] = &armed{conn: h2writer{Conn: g.h.tc, h: g.h}, tail: g.frames, rs: g.rs}
	}
	e.noteArmed(at)
	rt := release(ctx, e.start, e.start.Add(at), slots)
	e.realtimeRelease.Store(rt)
	for _, a := range slots {
		if a.err != nil {
			a.conn.(h2writer).h.fail(a.err)
		}
	}
	now := e.Now()
	for _, r := range failed {
		r.Sent, r.Done = now, now
		e.emit(r)
		e.wg.Done()
	}
	close(released)
}
