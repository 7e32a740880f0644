//go:build linux

package attack

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// rawPair dials a loopback listener and returns the client end as a
// rawTCP and the server end as net's own connection.
func rawPair(t *testing.T) (*rawTCP, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	r, ok := wrapRawTCP(c.(*net.TCPConn))
	if !ok {
		t.Fatal("no raw access to a TCP connection")
	}
	return r, s.(*net.TCPConn)
}

// 8 MiB written in one call, far more than the socket buffers hold (the
// write waits for room), echoed back and read at the same time on another
// goroutine: every byte arrives, in order.
func TestRawTCPLargeWriteWithConcurrentRead(t *testing.T) {
	r, s := rawPair(t)
	go func() { _, _ = io.Copy(s, s) }()
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(data))
		_, err := io.ReadFull(r, b)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	if n, err := r.Write(data); n != len(data) || err != nil {
		t.Fatalf("write: %d bytes, %v", n, err)
	}
	if !bytes.Equal(<-got, data) {
		t.Fatal("the echo differs from what was written")
	}
}

// Errors read as net's own: EOF when the peer closes, a timeout that says
// so, and a reset named like net names it.
func TestRawTCPErrorsReadAsNets(t *testing.T) {
	r, s := rawPair(t)
	_ = r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var b [16]byte
	_, err := r.Read(b[:])
	want := "read tcp " + r.LocalAddr().String() + "->" + r.RemoteAddr().String() + ": i/o timeout"
	if !isTimeout(err) || err.Error() != want {
		t.Fatalf("past the deadline: %v, want %q (a timeout)", err, want)
	}
	_ = r.SetReadDeadline(time.Time{})

	_ = s.SetLinger(0) // close with a reset
	s.Close()
	_, err = r.Read(b[:])
	want = "read tcp " + r.LocalAddr().String() + "->" + r.RemoteAddr().String() + ": read: connection reset by peer"
	if err == nil || err.Error() != want {
		t.Fatalf("after a reset: %v, want %q", err, want)
	}

	r2, s2 := rawPair(t)
	s2.Close()
	if _, err := r2.Read(b[:]); !errors.Is(err, io.EOF) {
		t.Fatalf("after the peer closed: %v, want EOF", err)
	}
}
