package attack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratecheck/ratecheck/results"
)

// Source addresses (Options.Sources): the local addresses connections bind,
// so that a limiter keyed on the peer address sees several clients. On
// Linux all of 127.0.0.0/8 is local, so a client can bind 127.0.0.2 and
// reach a server on 127.0.0.1; elsewhere the addresses must be the
// machine's own.
//
// A storm or backoff client n binds Sources[(n-1) mod len]; a shot that
// names its own Source binds that one; every other connection takes the
// next address of the list in turn. Each result records the address its
// connection was bound to (Result.Source).

// MaxSources bounds a --source-addrs list: beyond a few thousand addresses
// a run measures the machine's port table, not the target.
const MaxSources = 4096

// ParseSources reads a comma-separated list of IP addresses and CIDR
// prefixes (127.0.0.0/28 is its 16 addresses, network and broadcast
// included: on loopback every one is usable). The message of an error
// names the item at fault and how to write it.
func ParseSources(list string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) error {
		if seen[a] {
			return nil
		}
		if len(out) == MaxSources {
			return fmt.Errorf("more than %d source addresses: name fewer (a /20 of IPv4 at most)", MaxSources)
		}
		seen[a] = true
		out = append(out, a)
		return nil
	}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("source %q is not a CIDR prefix: write it as 127.0.0.0/28", item)
			}
			p = p.Masked()
			if bits := p.Addr().BitLen() - p.Bits(); bits > 12 {
				return nil, fmt.Errorf("source %q holds 2^%d addresses, more than %d: use a longer prefix (/20 or more for IPv4)", item, bits, MaxSources)
			}
			for a := p.Addr(); a.IsValid() && p.Contains(a); a = a.Next() {
				if err := add(a); err != nil {
					return nil, err
				}
			}
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("source %q is not an IP address: write addresses like 127.0.0.2 or a prefix like 127.0.0.0/28, separated by commas", item)
		}
		if err := add(a.Unmap()); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("source list %q names no address: write addresses like 127.0.0.2 or a prefix like 127.0.0.0/28", list)
	}
	return out, nil
}

// LocalSources is ParseSources for addresses this machine can bind, each
// tried (a UDP socket on port 0, closed at once) before anything is sent:
// rather than every connection failing, or the failure hiding in a scope
// note, after. The error names the first address that cannot be bound.
func LocalSources(list string) ([]netip.Addr, error) {
	addrs, err := ParseSources(list)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			var se *os.SyscallError
			if errors.As(err, &se) {
				err = se.Err // the address is already in the message
			}
			return nil, fmt.Errorf("%s is not an address of this machine (binding it: %v): name local addresses (on Linux all of 127.0.0.0/8 is local)", a, err)
		}
		pc.Close()
	}
	return addrs, nil
}

// tcpLocal is the dialer's LocalAddr for a source: nil (the kernel picks)
// when none is set.
func tcpLocal(a netip.Addr) net.Addr {
	if !a.IsValid() {
		return nil
	}
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0))
}

// sourceRing hands out the sources in turn.
type sourceRing struct {
	addrs []netip.Addr
	next  atomic.Uint64
}

// pick is the next source, or the zero Addr (no binding) when there is none.
func (s *sourceRing) pick() netip.Addr {
	if len(s.addrs) == 0 {
		return netip.Addr{}
	}
	return s.addrs[(s.next.Add(1)-1)%uint64(len(s.addrs))]
}

// clientSource is the source of storm/backoff client n (1-based).
func (o *Options) clientSource(n int) netip.Addr {
	if len(o.Sources) == 0 || n <= 0 {
		return netip.Addr{}
	}
	return o.Sources[(n-1)%len(o.Sources)]
}

// sourcePools are the connections of shots that name their own source:
// one pool (or HTTP/2 client) per address, made on first use.
type sourcePools struct {
	mu  sync.Mutex
	h1  map[netip.Addr]*connPool
	h2  map[netip.Addr]*h2client
	all []*connPool
	// h2other are the HTTP/2 clients of an HTTP/1.1 run's
	// Shot.OtherProtocol, by source (otherproto.go).
	h2other map[netip.Addr]*h2client
}

// poolFor returns the pool the requests of a shot from src go through.
func (e *Engine) poolFor(src netip.Addr) *connPool {
	if !src.IsValid() {
		return &e.pool
	}
	sp := &e.srcPools
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if p, ok := sp.h1[src]; ok {
		return p
	}
	if sp.h1 == nil {
		sp.h1 = map[netip.Addr]*connPool{}
	}
	base := e.baseConn
	p := &connPool{newConn: func() *h1conn {
		c := base()
		c.local = src
		return c
	}}
	sp.h1[src] = p
	sp.all = append(sp.all, p)
	return p
}

// h2For returns the HTTP/2 client the requests of a shot from src go
// through.
func (e *Engine) h2For(src netip.Addr) *h2client {
	if !src.IsValid() {
		return e.h2
	}
	sp := &e.srcPools
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if c, ok := sp.h2[src]; ok {
		return c
	}
	if sp.h2 == nil {
		sp.h2 = map[netip.Addr]*h2client{}
	}
	c := newH2client(e.addr, e.req, e.opt)
	c.local = func() netip.Addr { return src }
	sp.h2[src] = c
	return c
}

// abort closes the per-source idle connections (Ctrl-C).
func (sp *sourcePools) abort() {
	sp.mu.Lock()
	pools := append([]*connPool(nil), sp.all...)
	sp.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
}

// closeIdle releases the per-source connections (Finish).
func (sp *sourcePools) closeIdle() {
	sp.mu.Lock()
	pools := append([]*connPool(nil), sp.all...)
	var h2s []*h2client
	for _, c := range sp.h2 {
		h2s = append(h2s, c)
	}
	for _, c := range sp.h2other {
		h2s = append(h2s, c)
	}
	sp.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
	for _, c := range h2s {
		c.close()
	}
}

// stamp records on r the source its connection is bound to and the
// connection's serial (0: none was made).
func stamp(r *results.Result, local netip.Addr, conn int64) {
	if local.IsValid() {
		r.Source = local.String()
	}
	r.Conn = conn
}

// connSerials numbers the connections the process opens, so a result says
// which one carried it: a limit that counts per connection (a fresh one
// has its own capacity) is replayed per connection (see probe/scope.go). A
// port would do only until the kernel reused it.
var connSerials atomic.Int64

func nextConnSerial() int64 { return connSerials.Add(1) }

// freshRoundTrip sends r on a connection opened for it alone (Shot.Fresh),
// bound to the shot's source src, and closes it after.
func (e *Engine) freshRoundTrip(ctx context.Context, wire []byte, r *results.Result, src netip.Addr) {
	c := e.baseConn()
	c.local = src
	defer c.close()
	c.roundTrip(ctx, wire, e.start, r)
}

// freshH2RoundTrip is freshRoundTrip for an HTTP/2 run: s's request on an
// HTTP/2 connection opened for it alone, closed after.
func (e *Engine) freshH2RoundTrip(ctx context.Context, r *results.Result, s Shot) {
	c := newH2client(e.addr, e.req, e.opt)
	if s.Source.IsValid() {
		c.local = func() netip.Addr { return s.Source }
	}
	defer c.close()
	c.roundTrip(ctx, e, r, s.Variation())
}
