package attack

import (
	"context"
	"net/netip"

	"github.com/ratecheck/ratecheck/results"
)

// The other HTTP version (Shot.OtherProtocol): a limiter that counts only
// one of the versions a server speaks — a rule written before HTTP/2 was
// switched on, a frontend per protocol — is got around by the other one.

// sendOtherProtocol performs s's request in the HTTP version the run does
// not speak: HTTP/1.1 on the run's own pools beside an HTTP/2 run, HTTP/2
// on a client of its own beside an HTTP/1.1 one (it fails, as the answer's
// error says, on a plain-http target or a server that refuses h2 in ALPN).
func (e *Engine) sendOtherProtocol(ctx context.Context, r *results.Result, s Shot) {
	if e.h2 != nil {
		e.poolFor(s.Source).roundTrip(ctx, e.req.wire(r.Key, s.Variation()), e.start, r) // pool.go
		return
	}
	e.otherH2For(s.Source).roundTrip(ctx, e, r, s.Variation()) // h2.go
}

// otherH2For returns the HTTP/2 client an HTTP/1.1 run's other-protocol
// shots from src go through, made at its first use; Finish closes it.
func (e *Engine) otherH2For(src netip.Addr) *h2client {
	sp := &e.srcPools
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if c, ok := sp.h2other[src]; ok {
		return c
	}
	if sp.h2other == nil {
		sp.h2other = map[netip.Addr]*h2client{}
	}
	c := newH2client(e.addr, e.req, e.opt)
	if src.IsValid() {
		c.local = func() netip.Addr { return src }
	}
	sp.h2other[src] = c
	return c
}
