//go:build !linux || race

package attack

import "net"

// newRawTCP is Linux-only, and off under the race detector
// (rawtcp_linux.go): here the connection is net's own.
func newRawTCP(c *net.TCPConn) net.Conn { return c }
