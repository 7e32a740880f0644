package attack

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// slowHandshakeServer answers HTTP/1.1 over TLS, but every handshake starts
// only after delay: a server far away, or one slow to sign. It counts the
// connections it accepted.
func slowHandshakeServer(t *testing.T, conf *tls.Config, delay time.Duration, conns *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				time.Sleep(delay) // the slowness simulated, not a synchronisation
				tc := tls.Server(c, conf)
				var got []byte
				buf := make([]byte, 4096)
				for {
					n, err := tc.Read(buf)
					got = append(got, buf[:n]...)
					for {
						i := bytes.Index(got, []byte("\r\n\r\n"))
						if i < 0 {
							break
						}
						got = got[i+4:]
						if _, err := tc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return "https://" + ln.Addr().String() + "/"
}

// A paced run opens about as many connections as it has requests in
// flight, not one per request that found none idle. With handshakes that
// take 50 ms and requests that take microseconds, the first 50 ms of a run
// at 1,000/s find nothing idle: dialling for each would open ~50
// connections (and, where the handshake costs CPU rather than time, feed
// on itself: 93–154 were seen). Waiting for a returned connection once one
// exists needs the rounds of dials (at most minDialCap each) made before
// the first answer gives the pool its estimates: two or three, and a stall
// of a loaded machine (the race detector) can add a round or two.
func TestPacedRunDialsOnlyWhatItNeeds(t *testing.T) {
	pki := newTestPKI(t)
	var conns atomic.Int64
	url := slowHandshakeServer(t, pki.serverConfig(false), 50*time.Millisecond, &conns)
	rep, _, _ := runAgainst(t, url, Steady{Rate: 1000, Duration: 300 * time.Millisecond}, Options{TLS: TLSOptions{CACertFile: pki.caFile}})
	if rep.Summary.Admitted != 300 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if n := conns.Load(); n > int64(5*minDialCap) {
		t.Fatalf("%d connections for 300 requests at 1000/s (at most %d dials in flight)", n, minDialCap)
	}
	t.Logf("%d connections", conns.Load())
}

// A slow server needs many connections at once: waiting for returned ones
// must not starve it. At 200/s with 100 ms answers, about 20 requests are in
// flight; each still goes out on time (a loopback dial is ~0.1 ms; the
// bound allows a loaded machine's stalls), none waits for another's answer.
func TestPacedRunOpensWhatASlowServerNeeds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // the slow answer simulated
	}))
	defer srv.Close()
	rep, _, _ := runAgainst(t, srv.URL, Steady{Rate: 200, Duration: 300 * time.Millisecond}, Options{})
	if rep.Summary.Admitted != 60 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if late := rep.Summary.Lateness.Max; late > 30*time.Millisecond {
		t.Fatalf("a request went out %s late: it waited for a connection", late)
	}
}

// A paced run opens its first connections before its clock starts: with
// handshakes that take 100 ms, a run that dialled on demand would send its
// first requests 100 ms late (and queue the next ones behind them). The
// bound leaves half the handshake for a loaded machine's stalls.
func TestSteadyStartsOnWarmConnections(t *testing.T) {
	pki := newTestPKI(t)
	var conns atomic.Int64
	const handshake = 100 * time.Millisecond
	url := slowHandshakeServer(t, pki.serverConfig(false), handshake, &conns)
	p := Steady{Rate: 1000, Duration: 200 * time.Millisecond}
	rep, _, _ := runAgainst(t, url, p, Options{TLS: TLSOptions{CACertFile: pki.caFile}})
	if rep.Summary.Admitted != 200 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if late := rep.Summary.Lateness.Max; late > handshake/2 {
		t.Fatalf("a request went out %s late: it waited for a handshake (%d connections, %d warmed)", late, conns.Load(), p.WarmConns(Options{}))
	}
}

func TestSteadyWarmConns(t *testing.T) {
	for _, c := range []struct {
		p    Steady
		want int
	}{
		{Steady{Rate: 10}, 2},
		{Steady{Rate: 5000}, 6},
		{Steady{Rate: 5000, Shard: results.Shard{K: 1, N: 5}}, 2},
		{Steady{Rate: 1e6}, maxWarmConns},
		{Steady{Conns: 50}, 50},
		{Steady{Conns: 50, Shard: results.Shard{K: 1, N: 2}}, 25},
	} {
		if got := c.p.WarmConns(Options{}); got != c.want {
			t.Errorf("%+v: %d warm connections, want %d", c.p, got, c.want)
		}
	}
}

// The warm-up is on the time budget: against a server whose handshakes
// never finish in time, a run with a 1 s budget still ends after 1 s (the
// warm-up gives up after a tenth of it and the run's clock has the rest),
// not after the warm-up's wait (up to the 500 ms timeout) plus the budget.
// Requests in flight give up at the budget's end; the bound leaves a
// loaded machine 250 ms for it.
func TestWarmUpIsOnTheTimeBudget(t *testing.T) {
	pki := newTestPKI(t)
	var conns atomic.Int64
	url := slowHandshakeServer(t, pki.serverConfig(false), 5*time.Second, &conns)
	opt := Options{TLS: TLSOptions{CACertFile: pki.caFile}, MaxDuration: time.Second, Timeout: 500 * time.Millisecond}
	began := time.Now()
	rep, _, _ := runAgainst(t, url, Steady{Rate: 20, Duration: 3 * time.Second}, opt)
	took := time.Since(began)
	if took > opt.MaxDuration+250*time.Millisecond {
		t.Fatalf("a run with a %s budget took %s", opt.MaxDuration, took)
	}
	if rep.Summary.Admitted != 0 || rep.Summary.Errors == 0 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	t.Logf("took %s, %d errors", took, rep.Summary.Errors)
}

// A dial still in flight when the run ends — started for a request that a
// freed connection served first — must not leave its connection idle and
// open for good (TestPacedRunLeavesNoConnectionOpen saw one under load:
// 10 opened, 9 closed after Finish).
func TestConnectionDialedAfterTheRunEndsIsClosed(t *testing.T) {
	pki := newTestPKI(t)
	var conns atomic.Int64
	url := slowHandshakeServer(t, pki.serverConfig(false), 100*time.Millisecond, &conns)
	req, err := NewRequest("GET", url, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{TLS: TLSOptions{CACertFile: pki.caFile}})
	e.Begin(context.Background())
	e.pool.mu.Lock()
	e.pool.dialing++
	e.pool.mu.Unlock()
	dialed := make(chan struct{})
	go func() { e.pool.dial(context.Background()); close(dialed) }()
	e.Finish()
	<-dialed
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	if conns.Load() != 1 || len(e.pool.idle) != 0 {
		t.Fatalf("%d dialed; %d left idle after the run ended", conns.Load(), len(e.pool.idle))
	}
}
