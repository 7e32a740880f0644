//go:build linux

package main

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// stampedReader reads a TCP connection with recvmsg and SO_TIMESTAMPNS, so
// every read also returns the kernel's receive timestamp of the last segment
// it consumed: the moment the request's final byte reached this host's TCP
// stack, before this process was scheduled to read it. That separates the
// load generator's release precision from the sink's own wake-up and
// response work, which the user-space arrival instant includes.
type stampedReader struct {
	rc  syscall.RawConn
	oob []byte
	// one read's in- and outputs, kept here so the closure handed to
	// rc.Read is made once rather than allocated per read
	buf    []byte
	n      int
	oobn   int
	err    error
	recvFn func(fd uintptr) bool
}

func newStampedReader(c net.Conn) *stampedReader {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	s := &stampedReader{rc: rc, oob: make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{})))*2)}
	s.recvFn = func(fd uintptr) bool {
		s.n, s.oobn, _, _, s.err = syscall.Recvmsg(int(fd), s.buf, s.oob, 0)
		return s.err != syscall.EAGAIN
	}
	return s
}

// keepTimestampsOn holds a socket with SO_TIMESTAMPNS open for the life of
// the process. Linux switches receive timestamping on for the whole stack
// only while some socket asks for it, and switches it on lazily (from a work
// queue): without a keeper, every burst that follows a moment with no
// connection open could lose the stamps of its first packets.
func keepTimestampsOn() {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return
	}
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) // never closed
}

// read returns the bytes read and their kernel receive time (Unix ns; 0 if
// the kernel attached none).
func (s *stampedReader) read(buf []byte) (n int, unixNs int64, err error) {
	s.buf = buf
	if err := s.rc.Read(s.recvFn); err != nil {
		return 0, 0, err
	}
	if s.err != nil {
		return 0, 0, s.err
	}
	if s.n <= 0 {
		return 0, 0, io.EOF
	}
	return s.n, timestampNs(s.oob[:s.oobn]), nil
}

// timestampNs finds the SCM_TIMESTAMPNS message in a control buffer without
// allocating (syscall.ParseSocketControlMessage allocates per message).
func timestampNs(oob []byte) int64 {
	hdr := syscall.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS &&
			l-syscall.CmsgLen(0) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			return (*syscall.Timespec)(unsafe.Pointer(&oob[syscall.CmsgLen(0)])).Nano()
		}
		oob = oob[min(syscall.CmsgSpace(l-syscall.CmsgLen(0)), len(oob)):]
	}
	return 0
}
