package sim

import (
	"bufio"
	"bytes"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// client is the simulated load generator's side: connections kept alive
// and reused as the engine's pool does, one request on a connection at a
// time, a new one opened (a round trip's handshake) when none is idle.
type client struct {
	n          *Network
	idle       map[string][]*conn // by source address
	serials    int64
	stallUntil time.Duration // the reader is stalled until then
	inFlight   []*flight
}

// conn is one simulated TCP connection.
type conn struct {
	serial int64
	source netip.Addr // bound source; invalid: the kernel's choice
	fresh  bool       // opened for one request and closed after (Shot.Fresh)
}

// firstPort numbers the connections' local ports: a connection's port is
// firstPort plus its serial, so a limit per connection keys each alone.
const firstPort = 40000

// remoteAddr is the connection as the server sees it.
func (c *conn) remoteAddr() string {
	src := "127.0.0.1"
	if c.source.IsValid() {
		src = c.source.String()
	}
	return src + ":" + strconv.FormatInt(firstPort+c.serial, 10)
}

// flight is one request on its way.
type flight struct {
	r       *results.Result
	c       *conn
	req     *http.Request
	replica *refserver.Handler
	ans     refserver.Answer
	due     time.Duration // when the client gives up (the request timeout)
	decided time.Duration // when the server decided it
	done    bool
}

// send sends s at t: on an idle connection of its source, or a new one
// (armed: opened before t, as a burst's are).
func (cl *client) send(s attack.Shot, t time.Duration, armed bool) *flight {
	n := cl.n
	n.seq++
	if s.Key == "" && n.opt.Keys > 0 && n.req.KeyHeader != "" {
		s.Key = "key-" + strconv.Itoa(n.seq%n.opt.Keys)
	}
	if s.At == 0 && !armed {
		s.At = t // Do: now
	}
	r := &results.Result{Seq: n.seq, Phase: s.Phase, Client: s.Client, Key: s.Key, Scheduled: s.At, Sent: t}
	c := cl.take(s)
	if c == nil {
		c = cl.open(s)
		if !armed {
			r.Sent += n.oneWay() + n.oneWay() // the handshake
		}
	}
	r.Conn = c.serial
	if c.source.IsValid() {
		r.Source = c.source.String()
	}
	f := &flight{r: r, c: c, due: r.Sent + n.opt.Timeout}
	n.flights++
	cl.inFlight = append(cl.inFlight, f)
	if n.failing(FailDie, r.Sent) || n.failing(FailRefuse, r.Sent) {
		cl.fail(f, r.Sent, "connection refused to "+n.req.URL.Host+" — is the server running?")
		return f
	}
	f.req = cl.request(s, c)
	n.push(r.Sent+n.oneWay(), evArrive, f)
	n.push(f.due, evDeliver, f) // the timeout, unless the answer comes first
	return f
}

// request is what the server reads: the engine's own bytes, parsed.
func (cl *client) request(s attack.Shot, c *conn) *http.Request {
	wire := cl.n.req.Wire(s.Key, s.Variation())
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(wire)))
	if err != nil {
		panic("sim: the engine's request does not parse: " + err.Error())
	}
	req.RemoteAddr = c.remoteAddr()
	return req
}

// take is an idle connection for s (the most recently used), or nil.
func (cl *client) take(s attack.Shot) *conn {
	if s.Fresh {
		return nil
	}
	key := cl.source(s).String()
	idle := cl.idle[key]
	if len(idle) == 0 {
		return nil
	}
	c := idle[len(idle)-1]
	cl.idle[key] = idle[:len(idle)-1]
	return c
}

func (cl *client) open(s attack.Shot) *conn {
	cl.serials++
	return &conn{serial: cl.serials, source: cl.source(s), fresh: s.Fresh}
}

// source is the address s's connection binds.
func (cl *client) source(s attack.Shot) netip.Addr {
	if s.Source.IsValid() {
		return s.Source
	}
	return clientSource(cl.n.opt.Sources, s.Client)
}

// clientSource is the engine's: storm/backoff client k binds the k-th
// source; others the first (the probe's own), or none.
func clientSource(srcs []netip.Addr, k int) netip.Addr {
	switch {
	case len(srcs) == 0:
		return netip.Addr{}
	case k <= 0:
		return srcs[0]
	}
	return srcs[(k-1)%len(srcs)]
}

// answered schedules the answer's arrival at the client.
func (cl *client) answered(f *flight, at time.Duration) {
	cl.n.push(at+cl.n.oneWay(), evDeliver, f)
}

// deliver is an answer (or the timeout) reaching the reader.
func (cl *client) deliver(f *flight) {
	if f.done {
		return
	}
	now := cl.n.Now()
	if f.ans.Status == 0 {
		if now < f.due {
			return // a stale timeout event of an answered flight
		}
		cl.fail(f, f.due, "timeout waiting for "+cl.n.req.URL.Host)
		return
	}
	if now >= f.due {
		cl.fail(f, f.due, "timeout waiting for "+cl.n.req.URL.Host)
		return
	}
	h := f.ans.Header.Clone()
	h.Set("Date", cl.n.epoch.Add(f.decided).UTC().Format(http.TimeFormat))
	f.r.Record(f.ans.Status, h, f.ans.Body)
	f.r.FirstByte, f.r.Done = now, now
	cl.finish(f, true)
}

// fail ends f with an error at t.
func (cl *client) fail(f *flight, t time.Duration, msg string) {
	f.r.Error, f.r.Done = msg, t
	f.r.FirstByte = 0
	cl.finish(f, false)
}

// finish hands f's result over and its connection back (a failed or
// fresh one is closed).
func (cl *client) finish(f *flight, keep bool) {
	f.done = true
	cl.n.flights--
	for i, g := range cl.inFlight {
		if g == f {
			cl.inFlight = append(cl.inFlight[:i], cl.inFlight[i+1:]...)
			break
		}
	}
	if keep && !f.c.fresh {
		key := f.c.source.String()
		cl.idle[key] = append(cl.idle[key], f.c)
	}
	cl.n.emit(f.r)
}

// abortAll fails every request in flight with why: an interrupted run's,
// or one the time budget ended.
func (cl *client) abortAll(why string) {
	for len(cl.inFlight) > 0 {
		cl.fail(cl.inFlight[0], cl.n.Now(), why)
	}
}
