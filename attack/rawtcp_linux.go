//go:build linux

package attack

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawTCP is a TCP connection whose reads and writes are raw system calls
// on its non-blocking socket, waiting in the runtime's poller only when
// the socket is not ready (EAGAIN), as net's own do.
//
// Why: a loopback write does the receiver's TCP work inline (tens of µs),
// and the runtime treats a thread in an ordinary system call that long as
// blocked — its monitor (sysmon, polling every 20 µs while this happens)
// hands the P to another thread, which the writer must get back. In a
// max-throughput run that churn was ~12 % of the CPU profile (sysmon's own
// wake-ups, scheduling, futex wake-ups). A raw call keeps the P; the CPU
// is busy on the caller's behalf anyway.
//
// Not used under the race detector (rawTCPOn, rawtcp_race.go): net's
// reads and writes tell it that a write happens before the read that
// receives it (so a test may read what its server recorded before
// answering), and raw calls cannot. Its own tests run there too.
type rawTCP struct {
	*net.TCPConn
	rc syscall.RawConn

	// The current read's and write's arguments and outcomes, for the
	// methods passed to rc (method values made once: no allocation per
	// call). A read and a write may run at once (a lane's reader and its
	// dispatcher, a burst's owner and releaser): each has its own.
	rd, wr  rawCall
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool

	// pending is a request to write inside the next Read (sendOnRead);
	// pendingFn is that Read's method. pendingErrno is the write's
	// failure; pendingFull, that it found the socket's buffer full.
	pending      []byte
	pendingErrno syscall.Errno
	pendingFull  bool
	pendingFn    func(fd uintptr) bool
}

type rawCall struct {
	buf   []byte
	n     int
	errno syscall.Errno
}

// newRawTCP is the connection the clients use for c: c wrapped, unless
// under the race detector or without raw access.
func newRawTCP(c *net.TCPConn) net.Conn {
	if !rawTCPOn {
		return c
	}
	if r, ok := wrapRawTCP(c); ok {
		return r
	}
	return c
}

// wrapRawTCP wraps c; ok is false when c gives no raw access.
func wrapRawTCP(c *net.TCPConn) (r *rawTCP, ok bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, false
	}
	r = &rawTCP{TCPConn: c, rc: rc}
	r.readFn, r.writeFn, r.pendingFn = r.read, r.write, r.writeThenRead
	return r, true
}

func (r *rawTCP) read(fd uintptr) bool {
	c := &r.rd
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.buf))), uintptr(len(c.buf)))
		switch errno {
		case unix.EAGAIN:
			return false // nothing yet: wait until readable
		case unix.EINTR:
			continue
		}
		c.n, c.errno = int(n), errno
		return true
	}
}

func (r *rawTCP) write(fd uintptr) bool {
	c := &r.wr
	for c.n < len(c.buf) {
		rest := c.buf[c.n:]
		n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch errno {
		case 0:
			c.n += int(n)
		case unix.EAGAIN:
			return false // the socket's buffer is full: wait until writable
		case unix.EINTR:
		default:
			c.errno = errno
			return true
		}
	}
	return true
}

// sendOnRead makes the next Read write b first, from inside the read's
// own wait: the write, then straight to waiting for the response, with no
// read before it. A read right after a request's write finds nothing on
// loopback (the server has not run yet) and costs a system call that
// fails with EAGAIN — a third of a closed loop's system calls, each
// dearer still on a virtual machine. The write cannot simply come before a
// Read that skips its first read: the Read's registration with the poller
// (prepareRead) forgets a readiness the poller saw before it, and a
// response that came in between would never wake the reader. Inside the
// Read the registration is already made when b goes out, so whatever
// arrives for it wakes the reader, as the pacer's lanes already rely on
// (their reader waits before the dispatcher writes).
//
// b must stay unchanged until that Read returns; flushPending writes it
// if the Read did not happen (the caller's reader had data buffered).
func (r *rawTCP) sendOnRead(b []byte) { r.pending = b }

// flushPending writes what sendOnRead left unwritten, if anything.
func (r *rawTCP) flushPending() error {
	b := r.pending
	if b == nil {
		return nil
	}
	r.pending = nil
	_, err := r.Write(b)
	return err
}

// dropPending forgets what sendOnRead left unwritten (the read failed
// before it: the connection is closed after).
func (r *rawTCP) dropPending() { r.pending = nil }

// writeThenRead is Read's method while a request is pending: the first
// call writes it (as write does) and waits for the response without
// reading; later calls read. A write that finds the socket's buffer full
// ends the Read with the rest still pending, for Read to write the
// ordinary way, waiting until writable.
func (r *rawTCP) writeThenRead(fd uintptr) bool {
	b := r.pending
	if b == nil {
		return r.read(fd)
	}
	for len(b) > 0 {
		n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		switch errno {
		case 0:
			b = b[n:]
		case unix.EAGAIN:
			r.pending, r.pendingFull = b, true
			return true
		case unix.EINTR:
		default:
			r.pending, r.pendingErrno = nil, errno
			return true
		}
	}
	r.pending = nil
	return false // the response cannot have come yet: wait for it
}

func (r *rawTCP) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.pending != nil {
		return r.writeAndRead(b)
	}
	return r.readWith(b, r.readFn)
}

// readWith is a Read through fn, the read method or writeThenRead.
func (r *rawTCP) readWith(b []byte, fn func(fd uintptr) bool) (int, error) {
	c := &r.rd
	c.buf, c.n, c.errno = b, 0, 0
	err := r.rc.Read(fn)
	c.buf = nil
	switch {
	case err != nil:
		return 0, r.opErr("read", err) // a deadline, or the connection closed
	case c.errno != 0:
		return 0, r.opErr("read", os.NewSyscallError("read", c.errno))
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// writeAndRead is Read with a request pending (sendOnRead). Its failures
// read as the write's or the read's, as they would from Write then Read.
func (r *rawTCP) writeAndRead(b []byte) (int, error) {
	r.pendingErrno, r.pendingFull = 0, false
	n, err := r.readWith(b, r.pendingFn)
	switch {
	case r.pendingErrno != 0:
		return 0, r.opErr("write", os.NewSyscallError("write", r.pendingErrno))
	case r.pendingFull:
		if err := r.flushPending(); err != nil {
			return 0, err
		}
		return r.readWith(b, r.readFn)
	case r.pending != nil:
		// The deadline passed, or the connection closed, before the write.
		r.pending = nil
		return 0, r.opErr("write", err)
	}
	return n, err
}

func (r *rawTCP) Write(b []byte) (int, error) {
	c := &r.wr
	c.buf, c.n, c.errno = b, 0, 0
	err := r.rc.Write(r.writeFn)
	n := c.n
	c.buf = nil
	switch {
	case err != nil:
		return n, r.opErr("write", err)
	case c.errno != 0:
		return n, r.opErr("write", os.NewSyscallError("write", c.errno))
	}
	return n, nil
}

// opErr wraps err as net's own methods would, so messages read the same.
func (r *rawTCP) opErr(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok { // from rc: "raw-read" and the like
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.LocalAddr(), Addr: r.RemoteAddr(), Err: err}
}
