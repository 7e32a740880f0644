//go:build linux

package main

import (
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// Once the kernel has switched receive timestamping on (lazily, after the
// first socket asks), every request gets a kernel stamp, taken before the
// sink's read returned and so no later than its user-space arrival.
// Over TLS too, the stamps being taken on the TCP socket below it.
func TestKernelStampPrecedesRead(t *testing.T) {
	t.Run("http", func(t *testing.T) { kernelStampPrecedesRead(t, false) })
	t.Run("https", func(t *testing.T) { kernelStampPrecedesRead(t, true) })
}

// stampOnWithin bounds the wait for the kernel's worker to turn receive
// stamping on; stampPoll spaces the requests that look for it.
const (
	stampOnWithin = 5 * time.Second
	stampPoll     = 10 * time.Millisecond
)

func kernelStampPrecedesRead(t *testing.T, useTLS bool) {
	const warmups, checked = 1000, 5
	r := &recorder{arrivals: make([]int64, warmups+checked), kernel: make([]int64, warmups+checked), start: time.Now()}
	keepTimestampsOn()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conf, err := selfSigned("")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if useTLS {
			r.serveTLS(c, conf)
		} else {
			r.serve(c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if useTLS {
		c = tls.Client(c, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the sink's own certificate
	}
	defer c.Close()
	request := func() {
		t.Helper()
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(response))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != string(response) {
			t.Fatalf("response: %q %v", buf, err)
		}
	}
	// The kernel turns stamping on from a work queue, whose worker a
	// loaded machine may not run for tens of ms (CI: 200 requests in
	// 20 ms went unstamped): the wait is bounded in time, a request every
	// stampPoll, not in requests.
	n := 0
	for deadline := time.Now().Add(stampOnWithin); n < warmups; n++ {
		request()
		if atomic.LoadInt64(&r.kernel[n]) != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kernel receive stamp in %d requests over %s", n+1, stampOnWithin)
		}
		time.Sleep(stampPoll)
	}
	if n == warmups {
		t.Fatalf("no kernel receive stamp in %d requests", warmups)
	}
	first := n + 1
	for range checked {
		request()
	}
	for i := first; i < first+checked; i++ {
		user, kern := atomic.LoadInt64(&r.arrivals[i]), atomic.LoadInt64(&r.kernel[i])
		// The kernel stamp is wall-clock, the user one monotonic: allow the
		// two clocks a millisecond of disagreement.
		if kern == 0 || kern > user+int64(time.Millisecond) || user-kern > int64(time.Second) {
			t.Errorf("arrival %d: kernel stamp %d ns, read at %d ns", i, kern, user)
		}
	}
}
