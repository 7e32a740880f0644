//go:build !linux

package attack

import "net"

// newRawTCP is Linux-only (rawtcp_linux.go): here the connection is net's
// own.
func newRawTCP(c *net.TCPConn) net.Conn { return c }
