package sim

import (
	"net/http"
	"time"

	"github.com/ratecheck/ratecheck/targets/refserver"
)

// server is the simulated server side: the reference server's handler (or
// a round-robin fleet of them, each counting alone) deciding on virtual
// time, and the faults the network can develop.
type server struct {
	n          *Network
	replicas   []*refserver.Handler
	next       int
	stallUntil time.Duration // the server is stalled until then
}

func newServer(n *Network, cfg Config) *server {
	s := &server{n: n}
	opt := cfg.Server
	if c := &opt.Limiter; (c.StartAligned() || c.RefillEvery > 0) && c.Origin.IsZero() {
		// The grid is anchored where the server started, some time
		// before the probe: a phase the client cannot know.
		c.Origin = n.epoch.Add(-time.Duration(n.rng.Int64N(int64(originSpan))))
	}
	for range max(cfg.Replicas, 1) {
		h, err := refserver.NewHandler(opt)
		if err != nil {
			panic("sim: " + err.Error()) // ParseSpec validated the options
		}
		s.replicas = append(s.replicas, h)
	}
	return s
}

// originSpan: a start-aligned grid began up to this long before the run.
const originSpan = 10 * time.Minute

// arrive is a request reaching the server: it is decided now, and its
// answer written once the handler's hold is over.
func (s *server) arrive(f *flight) {
	n := s.n
	now := n.Now()
	switch {
	case f.done:
		return // the client gave up first
	case n.failing(FailDie, now):
		n.client.fail(f, now, "server closed the connection without answering")
		return
	case n.failing(FailHang, now):
		return // no answer: the timeout event ends it
	case n.failing(Fail500, now):
		f.decided = now
		f.ans = refserver.Answer{Status: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("internal error\n")}
		n.client.answered(f, now)
		return
	}
	f.replica = s.replicas[s.next%len(s.replicas)]
	s.next++
	f.decided = now
	f.ans = f.replica.Decide(f.req, n.epoch.Add(now))
	n.push(now+f.ans.Hold, evWritten, f)
}

// written is the answer leaving the server: a concurrency slot is free,
// and the answer is on its way back.
func (s *server) written(f *flight) {
	now := s.n.Now()
	f.replica.Release(f.ans, s.n.epoch.Add(now))
	switch {
	case f.done:
		return
	case s.n.failing(FailDie, now):
		s.n.client.fail(f, now, "server closed the connection without answering")
		return
	}
	s.n.client.answered(f, now)
}
