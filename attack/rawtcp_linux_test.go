//go:build linux

package attack

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
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

// A request left to the next Read (sendOnRead) goes out from inside it,
// and the Read returns the response to it.
func TestRawTCPSendOnRead(t *testing.T) {
	r, s := rawPair(t)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := s.Read(buf)
			if err != nil {
				return
			}
			_, _ = s.Write(bytes.ToUpper(buf[:n]))
		}
	}()
	var b [64]byte
	for _, req := range []string{"ping", "pong", "again"} {
		r.sendOnRead([]byte(req))
		n, err := r.Read(b[:])
		if err != nil || string(b[:n]) != strings.ToUpper(req) {
			t.Fatalf("%s: read %q, %v", req, b[:n], err)
		}
		if r.pending != nil {
			t.Fatal("the request is still pending after its response")
		}
	}
	// Left pending by a reader that had no need to read: flushPending
	// writes it.
	r.sendOnRead([]byte("late"))
	if err := r.flushPending(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(b[:]); err != nil || string(b[:n]) != "LATE" {
		t.Fatalf("after flushPending: %q, %v", b[:n], err)
	}
}

// A request larger than the socket's buffers fills them from inside the
// Read, and the rest goes out the ordinary way before the response is
// read.
func TestRawTCPSendOnReadLargerThanTheBuffers(t *testing.T) {
	r, s := rawPair(t)
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	got := make(chan bool, 1)
	go func() {
		time.Sleep(20 * time.Millisecond) // the buffers fill first
		b := make([]byte, len(data))
		_, err := io.ReadFull(s, b)
		got <- err == nil && bytes.Equal(b, data)
		_, _ = s.Write([]byte("ok"))
	}()
	r.sendOnRead(data)
	var b [16]byte
	n, err := r.Read(b[:])
	if err != nil || string(b[:n]) != "ok" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if !<-got {
		t.Fatal("the server did not receive the request whole")
	}
}

// A request that cannot go out fails as a write would: past the deadline
// (and is not sent later), or on a connection the server reset.
func TestRawTCPSendOnReadFailsAsAWrite(t *testing.T) {
	r, s := rawPair(t)
	_ = r.SetDeadline(time.Unix(1, 0))
	r.sendOnRead([]byte("never"))
	var b [16]byte
	_, err := r.Read(b[:])
	want := "write tcp " + r.LocalAddr().String() + "->" + r.RemoteAddr().String() + ": i/o timeout"
	if !isTimeout(err) || err.Error() != want {
		t.Fatalf("past the deadline: %v, want %q", err, want)
	}
	if r.pending != nil {
		t.Fatal("a request that failed is still pending")
	}
	_ = r.SetDeadline(time.Time{})
	if err := r.flushPending(); err != nil {
		t.Fatal(err)
	}
	_ = s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if n, _ := s.Read(b[:]); n != 0 {
		t.Fatalf("the server received %q", b[:n])
	}

	r2, s2 := rawPair(t)
	_ = s2.SetLinger(0) // close with a reset
	s2.Close()
	time.Sleep(20 * time.Millisecond) // the reset arrives
	r2.sendOnRead([]byte("hello"))
	_, err = r2.Read(b[:])
	if err == nil || !strings.HasPrefix(err.Error(), "write tcp ") {
		t.Fatalf("after a reset: %v, want the write's error", err)
	}
}
